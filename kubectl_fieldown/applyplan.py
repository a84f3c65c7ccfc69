"""``kubectl_fieldown.applyplan`` is now :mod:`kubectl_fieldown.conflicts.applyplan`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .conflicts.applyplan import *  # noqa: F403
