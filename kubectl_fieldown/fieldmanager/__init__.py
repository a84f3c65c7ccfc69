"""The API server's field manager, simulated: server-side apply and updates with ownership.

This is apimachinery's ``pkg/util/managedfields`` pipeline around structured-merge-diff's
``Updater`` (see docs/ownership-model.md and the semantics notes §4, §7–§10):

* decode the live object's managedFields (Apply fails on undecodable entries; Update falls back);
* the ``kubectl`` last-applied conflict waiver and annotation sync;
* ``before-first-apply`` when an Apply meets an object whose managedFields are empty;
* SMD apply (merge, prune, conflicts, force) or update (take fields from others, record the writer);
* strip the 12 metadata paths, set ``time`` only on a real change, cap Update entries at 10
  (``ancient-changes``), sort and encode entries.

Everything here is pure: the caller passes the live object, the request and the time.

One module per upstream step:

* ``pipeline`` — :func:`simulate_apply`, :func:`simulate_update`: the steps below in the server's order;
* ``lastapplied`` — kubectl's last-applied annotation (``lastappliedmanager.go``, ``lastappliedupdater.go``);
* ``skipnonapplied`` — ``before-first-apply`` (``skipnonapplied.go``);
* ``structuredmerge`` — apply and update through SMD (``structuredmerge.go``, ``versioncheck.go``);
* ``capmanagers`` — at most 10 Update entries (``capmanagers.go``);
* ``managed`` — the managed set: decode, strip (``stripmeta.go``), encode;
* ``strategy`` — what the REST handler and strategy do around the field manager (ObjectMeta
  coercion, defaulting, reset fields, the CRD validator's 422);
* ``request`` — ``WriteRequest``: who writes, where, when (what the steps pass on);
* ``rules`` — :class:`ResourceRules`; ``errors`` — what the server answers when it refuses;
  ``jsondata`` — the one JSON copy.
"""

from .capmanagers import MAX_UPDATE_MANAGERS
from .errors import ApplyConflict, BadRequest, FieldConflict, FieldManagerError, Invalid, conflict_message
from .jsondata import copy_json
from .lastapplied import ANNOTATIONS_SIZE_LIMIT
from .pipeline import WriteResult, comes_back_defaulted, simulate_apply, simulate_update
from .rules import ConversionError, Converter, MissingVersion, ResourceRules, rename_version
from .strategy import coerce_object_meta, prepare_for_write

__all__ = [
    "ANNOTATIONS_SIZE_LIMIT",
    "MAX_UPDATE_MANAGERS",
    "ApplyConflict",
    "BadRequest",
    "ConversionError",
    "Converter",
    "FieldConflict",
    "FieldManagerError",
    "Invalid",
    "MissingVersion",
    "ResourceRules",
    "WriteResult",
    "coerce_object_meta",
    "comes_back_defaulted",
    "conflict_message",
    "copy_json",
    "prepare_for_write",
    "rename_version",
    "simulate_apply",
    "simulate_update",
]
