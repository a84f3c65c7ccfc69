"""kubectl-fieldown: see, predict and repair Kubernetes field ownership.

The package root is the pure library (no I/O, no cluster access):

* :mod:`kubectl_fieldown.value` — JSON values with the API server's equality and order;
* :mod:`kubectl_fieldown.fieldpath` — paths, :class:`FieldSet`, the FieldsV1 codec, path strings;
* :mod:`kubectl_fieldown.managedfields` — :class:`ManagedFieldsEntry` and its bookkeeping;
* :mod:`kubectl_fieldown.ownership` — the per-field owner tree of an object;
* :mod:`kubectl_fieldown.schema` — how lists and maps merge;
* :mod:`kubectl_fieldown.fieldmanager`, :mod:`kubectl_fieldown.applyplan` — the apply simulation;
* :mod:`kubectl_fieldown.conflictreport` — a planned apply as the conflicts report, and the server's
  dry run compared with it;
* :mod:`kubectl_fieldown.appliers` — what kubectl, Argo CD, Flux and Helm send, played on the simulation;
* :mod:`kubectl_fieldown.remedies` — ownership plans, their requests, and the check that a fix keeps
  every value;
* :mod:`kubectl_fieldown.audit` — the pre-upgrade audit, one verified fix per object.

The names below are imported on first use, so that ``import kubectl_fieldown`` (and every start of
the command line, which imports this package) stays cheap. The shell (``kube``, ``render``,
``cli``) is imported only by the command-line tool.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "FieldSet": "fieldpath",
    "FieldsV1Error": "fieldpath",
    "Path": "fieldpath",
    "PathElement": "fieldpath",
    "decode_fields_v1": "fieldpath",
    "encode_fields_v1": "fieldpath",
    "parse_path": "fieldpath",
    "path_string": "fieldpath",
    "ManagedFieldsEntry": "managedfields",
    "ManagedFieldsError": "managedfields",
    "decode_entries": "managedfields",
    "OwnedField": "ownership",
    "OwnerTree": "ownership",
    "build_owner_tree": "ownership",
}

__all__ = [
    "FieldSet",
    "FieldsV1Error",
    "ManagedFieldsEntry",
    "ManagedFieldsError",
    "OwnedField",
    "OwnerTree",
    "Path",
    "PathElement",
    "__version__",
    "build_owner_tree",
    "decode_entries",
    "decode_fields_v1",
    "encode_fields_v1",
    "parse_path",
    "path_string",
]

if TYPE_CHECKING:
    from .fieldpath import (
        FieldSet,
        FieldsV1Error,
        Path,
        PathElement,
        decode_fields_v1,
        encode_fields_v1,
        parse_path,
        path_string,
    )
    from .managedfields import ManagedFieldsEntry, ManagedFieldsError, decode_entries
    from .ownership import OwnedField, OwnerTree, build_owner_tree


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kubectl_fieldown' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
