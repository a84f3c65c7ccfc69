"""``kubectl_fieldown.files`` is now :mod:`kubectl_fieldown.cli.files`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .cli.files import *  # noqa: F403
