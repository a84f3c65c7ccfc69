"""``kubectl_fieldown.jsonpatch`` is now :mod:`kubectl_fieldown.fieldmanager.jsonpatch`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .fieldmanager.jsonpatch import *  # noqa: F403
