"""``kubectl_fieldown.conflictreport`` is now :mod:`kubectl_fieldown.conflicts.report`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .conflicts.report import *  # noqa: F403
