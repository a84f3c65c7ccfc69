"""kubectl-fieldown: see, predict and repair Kubernetes field ownership.

The package root is the pure library (no I/O, no cluster access):

* :mod:`kubectl_fieldown.value` — JSON values with the API server's equality and order;
* :mod:`kubectl_fieldown.fieldpath` — paths, :class:`FieldSet`, the FieldsV1 codec, path strings;
* :mod:`kubectl_fieldown.managedfields` — :class:`ManagedFieldsEntry` and its bookkeeping;
* :mod:`kubectl_fieldown.ownership` — the per-field owner tree of an object;
* :mod:`kubectl_fieldown.schema` — how lists and maps merge.

The shell (``kube``, ``render``, ``cli``) is imported only by the command-line tool.
"""

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

__version__ = "0.1.0"

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
