"""``kubectl_fieldown.managedfields`` is now :mod:`kubectl_fieldown.ownership.managedfields`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .ownership.managedfields import *  # noqa: F403
