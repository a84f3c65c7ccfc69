"""``kubectl_fieldown.safeyaml`` is now :mod:`kubectl_fieldown.manifests.safeyaml`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .manifests.safeyaml import *  # noqa: F403
