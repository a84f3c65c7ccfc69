"""``kubectl_fieldown.csaupgrade`` is now :mod:`kubectl_fieldown.appliers.csaupgrade`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .appliers.csaupgrade import *  # noqa: F403
