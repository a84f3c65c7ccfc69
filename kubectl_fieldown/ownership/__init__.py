"""Who owns which field (pure, no I/O).

* :mod:`.managedfields` — ``metadata.managedFields`` entries: decoding, identities (kubectl's
  managers, the last-applied annotation), the server's entry order, encoding;
* :mod:`.tree` — the owner tree of an object: every owned path with all of its owners and its value.

The owner tree's names can also be imported from the package itself, as when ``ownership`` was one
module (``from kubectl_fieldown.ownership import build_owner_tree``); they are imported on first
use, so that :mod:`.managedfields`, which nearly every module imports, does not bring the tree along.
"""

from __future__ import annotations

import importlib

__all__ = ["OwnedField", "Owner", "OwnerTree", "build_owner_tree", "item_elements", "unowned_leaves"]

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

    from .tree import OwnedField, Owner, OwnerTree, build_owner_tree, item_elements, unowned_leaves


def __getattr__(name: str) -> Any:
    # import_module, not "from . import tree": that asks this module for "tree" first
    if not name.startswith("_") and name not in ("tree", "managedfields"):
        tree = importlib.import_module(f"{__name__}.tree")
        if hasattr(tree, name):
            return getattr(tree, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
