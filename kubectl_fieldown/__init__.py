"""kubectl-fieldown: see, predict and repair Kubernetes field ownership.

The library is pure (no I/O, no cluster access), one idea per package:

* :mod:`kubectl_fieldown.base` — JSON values with the API server's equality and order (``value``),
  which object and whether it is a Secret (``objects``), a Secret's values hidden (``redact``);
* :mod:`kubectl_fieldown.fieldpath` — paths, :class:`FieldSet`, the FieldsV1 codec, path strings;
* :mod:`kubectl_fieldown.ownership` — :class:`ManagedFieldsEntry` and its bookkeeping
  (``managedfields``), the per-field owner tree of an object (``tree``);
* :mod:`kubectl_fieldown.manifests` — objects from YAML or JSON text, read as kubectl reads them;
* :mod:`kubectl_fieldown.schema`, :mod:`kubectl_fieldown.typed` — how lists and maps merge;
* :mod:`kubectl_fieldown.fieldmanager` — the apply simulation (and JSON patches as the server applies them);
* :mod:`kubectl_fieldown.conflicts` — a planned apply (``applyplan``) as the conflicts report
  (``report``), and the server's dry run compared with it;
* :mod:`kubectl_fieldown.appliers` — what kubectl, Argo CD, Flux and Helm send, played on the simulation;
* :mod:`kubectl_fieldown.remedies` — ownership plans, their requests, and the check that a fix keeps
  every value;
* :mod:`kubectl_fieldown.audit` — the pre-upgrade audit, one verified fix per object;
* :mod:`kubectl_fieldown.watch` — who changed which field, and the writers that fight.

The modules that sat here before they were grouped (``value``, ``objects``, ``redact``,
``managedfields``, ``sources``, ``safeyaml``, ``goscalar``, ``yamlpos``, ``files``, ``applyplan``,
``conflictreport``, ``csaupgrade``, ``jsonpatch``) still import from their old paths, for code
written against them: each is a compat module that re-exports its new home (``ownership`` is now
the package, which offers the owner tree's names). Nothing in the package imports them.

The names below are imported on first use, so that ``import kubectl_fieldown`` (and every start of
the command line, which imports this package) stays cheap. The shell (``kube``, ``render``,
``cli``) is imported only by the command-line tool.
"""

from __future__ import annotations

import importlib

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
    "ManagedFieldsEntry": "ownership.managedfields",
    "ManagedFieldsError": "ownership.managedfields",
    "decode_entries": "ownership.managedfields",
    "OwnedField": "ownership.tree",
    "OwnerTree": "ownership.tree",
    "build_owner_tree": "ownership.tree",
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

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

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
    from .ownership.managedfields import ManagedFieldsEntry, ManagedFieldsError, decode_entries
    from .ownership.tree import OwnedField, OwnerTree, build_owner_tree


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kubectl_fieldown' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
