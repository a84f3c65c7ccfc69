"""``kubectl_fieldown.redact`` is now :mod:`kubectl_fieldown.base.redact`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .base.redact import *  # noqa: F403
