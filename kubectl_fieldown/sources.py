"""``kubectl_fieldown.sources`` is now :mod:`kubectl_fieldown.manifests.sources`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .manifests.sources import *  # noqa: F403
