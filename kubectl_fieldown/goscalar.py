"""``kubectl_fieldown.goscalar`` is now :mod:`kubectl_fieldown.manifests.goscalar`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .manifests.goscalar import *  # noqa: F403
