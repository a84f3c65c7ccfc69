"""``kubectl_fieldown.value`` is now :mod:`kubectl_fieldown.base.value`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .base.value import *  # noqa: F403
