"""The requests that write a plan, and what the API server does with them (simulated).

A plan changes managedFields and perhaps the last-applied annotation. A write that changes a
field's value is recorded by the server for the request's field manager (an Update, or an Apply),
whatever managedFields the request carries; a write that changes no value records nothing and the
managedFields it carries become the object's. So:

* managedFields only, or removing the annotation (a removal records nothing): one JSON patch;
* setting the annotation, owned by an Update entry (``kubectl-client-side-apply``): one JSON patch
  sent *as* that manager, carrying the planned entries — the server's record is the plan's;
* setting the annotation, owned by ``kubectl-last-applied`` (Apply): a forced apply of the
  annotation alone by ``kubectl-last-applied`` (what kubectl itself sends), then the entries.

Every request is guarded by the resourceVersion (a ``test`` op, or the apply's precondition), and
the annotation owner is the one the plan names (:func:`.plans.canonical_last_applied_owner`): a
run interrupted between the two requests leaves the annotation where the plan wants it, and the
same plan made again writes the rest. Nothing is ever half-attributed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..base.record import Record
from ..fieldmanager import ApplyConflict, FieldManagerError, ResourceRules, simulate_apply, simulate_update
from ..fieldmanager.jsonpatch import JsonPatchError, apply_json_patch, pointer
from ..ownership.managedfields import APPLY, LAST_APPLIED_ANNOTATION, UPDATE
from .plans import LAST_APPLIED_PATH, Migration

__all__ = [
    "FIELDOWN_MANAGER",
    "RESOURCE_VERSION",
    "ApplyRequest",
    "JsonPatchRequest",
    "RequestFailed",
    "WriteRequest",
    "requests_for",
    "simulate_requests",
]

RESOURCE_VERSION = "$RESOURCE_VERSION"
"""Stands for the resourceVersion returned by the previous request of the same plan."""

FIELDOWN_MANAGER = "kubectl-fieldown"
"""The field manager of patches that change no value (managedFields, or removing the annotation):
the server records nothing for them; should it ever, the entry says who wrote."""


class JsonPatchRequest(Record):
    __slots__ = ("field_manager", "ops", "purpose")
    ops: Final[tuple[dict[str, Any], ...]]
    field_manager: Final[str]
    purpose: Final[str]

    def __init__(self, ops: tuple[dict[str, Any], ...], field_manager: str, purpose: str) -> None:
        self.ops = ops
        self.field_manager = field_manager
        self.purpose = purpose

    @property
    def tested_resource_version(self) -> str:
        first = self.ops[0]
        assert first["op"] == "test" and first["path"] == "/metadata/resourceVersion"
        return str(first["value"])

    def with_resource_version(self, rv: str) -> JsonPatchRequest:
        ops = [dict(op) for op in self.ops]
        if ops and ops[0]["op"] == "test" and ops[0]["value"] == RESOURCE_VERSION:
            ops[0]["value"] = rv
        return JsonPatchRequest(tuple(ops), self.field_manager, self.purpose)

    def to_json(self) -> dict[str, Any]:
        return {"type": "json-patch", "fieldManager": self.field_manager, "purpose": self.purpose,
                "patch": list(self.ops)}


class ApplyRequest(Record):
    __slots__ = ("body", "field_manager", "force", "purpose")
    body: Final[dict[str, Any]]
    field_manager: Final[str]
    force: Final[bool]
    purpose: Final[str]

    def __init__(self, body: dict[str, Any], field_manager: str, force: bool, purpose: str) -> None:
        self.body = body
        self.field_manager = field_manager
        self.force = force
        self.purpose = purpose

    def with_resource_version(self, rv: str) -> ApplyRequest:
        body = {**self.body, "metadata": {**self.body["metadata"], "resourceVersion": rv}}
        return ApplyRequest(body, self.field_manager, self.force, self.purpose)

    def to_json(self) -> dict[str, Any]:
        return {"type": "apply", "fieldManager": self.field_manager, "force": self.force, "purpose": self.purpose,
                "body": self.body}


WriteRequest = JsonPatchRequest | ApplyRequest


class RequestFailed(Exception):
    """A simulated request the server would refuse (``status``: the HTTP code)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _test(rv: str) -> dict[str, Any]:
    return {"op": "test", "path": "/metadata/resourceVersion", "value": rv}


_LAC_POINTER = pointer("metadata", "annotations", LAST_APPLIED_ANNOTATION)


def requests_for(m: Migration) -> list[WriteRequest]:
    """The guarded requests that write ``m`` (empty when nothing changes)."""
    if not m.changed:
        return []
    value: list[dict[str, Any]] = [{}] if m.reset or not m.after else [e.to_dict() for e in m.after]
    # "add" replaces a member that exists and creates one that does not: after a reset the object
    # has no managedFields, and "replace" would be rejected (422)
    entries_op = {"op": "add", "path": "/metadata/managedFields", "value": value}
    rv = m.resource_version
    if not m.last_applied_changed:
        return [JsonPatchRequest((_test(rv), entries_op), FIELDOWN_MANAGER, "managedFields")]
    if m.last_applied_after is None:
        return [JsonPatchRequest((_test(rv), {"op": "remove", "path": _LAC_POINTER}, entries_op), FIELDOWN_MANAGER,
                                 "remove the last-applied annotation; managedFields")]
    owner = next((e for e in m.after if e.fields.has(LAST_APPLIED_PATH)), None)
    annotation_op: dict[str, Any]
    if m.annotations_present:
        annotation_op = {"op": "add" if m.last_applied_before is None else "replace", "path": _LAC_POINTER,
                         "value": m.last_applied_after}
    else:
        annotation_op = {"op": "add", "path": "/metadata/annotations",
                         "value": {LAST_APPLIED_ANNOTATION: m.last_applied_after}}
    if owner is None:
        # nobody is to own it (a restored state): the write records a writer, the second patch takes it back
        return [JsonPatchRequest((_test(rv), annotation_op), FIELDOWN_MANAGER, "the last-applied annotation"),
                JsonPatchRequest((_test(RESOURCE_VERSION), entries_op), FIELDOWN_MANAGER, "managedFields")]
    if owner.operation == UPDATE:
        return [JsonPatchRequest((_test(rv), annotation_op, entries_op), owner.manager,
                                 f"the last-applied annotation (recorded for {owner.manager}) and managedFields")]
    assert owner.operation == APPLY
    meta: dict[str, Any] = {"name": m.ref.name, "annotations": {LAST_APPLIED_ANNOTATION: m.last_applied_after}}
    if m.ref.namespace:
        meta["namespace"] = m.ref.namespace
    body = {"apiVersion": m.ref.api_version, "kind": m.ref.kind, "metadata": {**meta, "resourceVersion": rv}}
    return [ApplyRequest(body, owner.manager, True, f"the last-applied annotation, applied by {owner.manager}"),
            JsonPatchRequest((_test(RESOURCE_VERSION), entries_op), FIELDOWN_MANAGER, "managedFields")]


def simulate_requests(
    obj: Mapping[str, Any], requests: Sequence[WriteRequest], rules: ResourceRules, *, now: str
) -> dict[str, Any]:
    """The object after ``requests``, as the API server would leave it (the resourceVersion is not
    advanced: the simulation has no storage). Raises :class:`RequestFailed` where the server refuses."""
    current: dict[str, Any] = dict(obj)
    for req in requests:
        rv = str((current.get("metadata") or {}).get("resourceVersion") or "")
        req = req.with_resource_version(rv)
        try:
            if isinstance(req, ApplyRequest):
                body = {**req.body, "metadata": {k: v for k, v in req.body["metadata"].items()
                                                 if k != "resourceVersion"}}
                current = simulate_apply(current, body, req.field_manager, rules, now=now, force=req.force).object
            else:
                new = apply_json_patch(current, req.ops)
                current = simulate_update(current, new, req.field_manager, rules, now=now, compared=False).object
        except ApplyConflict as e:
            raise RequestFailed(409, e.message) from None
        except FieldManagerError as e:
            raise RequestFailed(e.status, e.message) from None
        except JsonPatchError as e:
            raise RequestFailed(422, str(e)) from None
    return current
