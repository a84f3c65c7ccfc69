"""``kubectl_fieldown.yamlpos`` is now :mod:`kubectl_fieldown.manifests.yamlpos`: this module keeps the old
import path working for code outside the package (nothing inside imports it)."""

from .manifests.yamlpos import *  # noqa: F403
