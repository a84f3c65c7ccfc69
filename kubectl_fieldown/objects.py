"""``kubectl_fieldown.objects`` is now :mod:`kubectl_fieldown.base.objects`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .base.objects import *  # noqa: F403
