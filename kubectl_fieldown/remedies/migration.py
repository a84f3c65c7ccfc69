"""What every ownership plan is (:class:`Migration`, :class:`MigrationError`) and the steps the plans
share: reading the object's entries, matching manager globs, who owns the last-applied annotation
(:func:`canonical_last_applied_owner`), removing paths from entries. :mod:`.plans` re-exports the
public names."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..base.identitymemo import memo, remembered
from ..base.objects import ObjectRef
from ..base.record import Record
from ..fieldpath import FieldSet, Path, encode_fields_v1, path_from_fields
from ..ownership.managedfields import (
    APPLY,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
    ManagedFieldsEntry,
    decode_entries,
)

__all__ = ["ANNOTATIONS_PATH", "LAST_APPLIED_PATH", "Migration", "MigrationError", "canonical_last_applied_owner",
           "entries_differ", "parsed_annotation"]

LAST_APPLIED_PATH: Path = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)
ANNOTATIONS_PATH: Path = path_from_fields("metadata", "annotations")
_LAC = FieldSet([LAST_APPLIED_PATH])


class MigrationError(ValueError):
    """The object cannot be migrated as asked (the message says why, in one line)."""


class Migration(Record, mutable=True):
    """The managedFields and last-applied annotation an object should have, and why.

    ``after`` is the ownership the plan wants; the requests that write it may add what the server
    records by itself (the ``time`` of an entry that writes the annotation), which is no change of
    ownership (:func:`entries_differ` ignores times and order)."""

    __slots__ = ("after", "annotations_present", "before", "last_applied_after", "last_applied_before", "notes", "ref",
                 "reset", "resource_version")
    ref: ObjectRef
    resource_version: str
    before: list[ManagedFieldsEntry]
    after: list[ManagedFieldsEntry]
    last_applied_before: str | None
    last_applied_after: str | None
    reset: bool
    """True when the plan clears managedFields (``[{}]``): nothing is tracked until the next apply."""
    notes: list[str]
    annotations_present: bool
    """The object has a non-empty annotations map (an annotation is then added into it)."""

    def __init__(
        self,
        ref: ObjectRef,
        resource_version: str,
        before: list[ManagedFieldsEntry],
        after: list[ManagedFieldsEntry],
        last_applied_before: str | None,
        last_applied_after: str | None,
        reset: bool = False,
        notes: list[str] | None = None,
        annotations_present: bool = True,
    ) -> None:
        self.ref = ref
        self.resource_version = resource_version
        self.before = before
        self.after = after
        self.last_applied_before = last_applied_before
        self.last_applied_after = last_applied_after
        self.reset = reset
        self.notes = notes if notes is not None else []
        self.annotations_present = annotations_present

    @property
    def managed_fields_changed(self) -> bool:
        if self.reset:
            return bool(self.before)
        return entries_differ(self.before, self.after)

    @property
    def last_applied_changed(self) -> bool:
        return self.last_applied_before != self.last_applied_after

    @property
    def changed(self) -> bool:
        return self.managed_fields_changed or self.last_applied_changed


def entries_differ(a: Sequence[ManagedFieldsEntry], b: Sequence[ManagedFieldsEntry]) -> bool:
    """Are two lists of entries a different state for the server? Neither order (the server sorts
    entries on every write) nor times count: the API server ignores a write whose only change is
    managedFields timestamps (it keeps the stored ones; observed on 1.36), so a plan that differs
    only there would be a no-op that can never converge."""

    def named(entries: Sequence[ManagedFieldsEntry]) -> list[tuple[tuple[str, ...], FieldSet]]:
        return [((e.manager, e.operation, e.api_version, e.subresource), e.fields)
                for e in entries if not e.fields.is_empty()]

    pa, pb = named(a), named(b)
    na, nb = dict(pa), dict(pb)
    if len(na) == len(pa) and len(nb) == len(pb):
        # one entry per name on each side (as the server keeps them): paired by name, and a set a
        # plan left as it was (the same set) is not encoded to be compared
        return na.keys() != nb.keys() or any(
            fs is not nb[name] and encode_fields_v1(fs) != encode_fields_v1(nb[name]) for name, fs in na.items())
    return sorted((*n, encode_fields_v1(fs)) for n, fs in pa) != sorted((*n, encode_fields_v1(fs)) for n, fs in pb)


def _start(obj: Mapping[str, Any]) -> tuple[ObjectRef, str, list[ManagedFieldsEntry], str | None, bool]:
    md = obj.get("metadata") or {}
    entries = decode_entries(md.get("managedFields"))
    annotations = md.get("annotations")
    la = annotations.get(LAST_APPLIED_ANNOTATION) if isinstance(annotations, Mapping) else None
    present = isinstance(annotations, Mapping) and bool(annotations)
    return (ObjectRef.of(obj), str(md.get("resourceVersion") or ""), entries, la if isinstance(la, str) else None,
            present)


def _finish(obj: Mapping[str, Any], before: list[ManagedFieldsEntry], after: list[ManagedFieldsEntry],
            la_after: str | None, notes: list[str]) -> Migration:
    """A plan whose annotation ownership follows the one rule every plan keeps (see
    :func:`canonical_last_applied_owner`) when the plan writes the annotation."""
    ref, rv, _, la, present = _start(obj)
    api_version = ref.api_version
    before_annotations = (obj.get("metadata") or {}).get("annotations")
    if la_after is not None and la_after != la:
        after = _give_annotation(after, api_version, created=la is None and not present)
    elif la_after is None and la is not None and not _other_annotations(before_annotations):
        # the annotations map goes with its last key (an empty map is not stored), and so does any
        # ownership of the map itself
        after = _without_paths(after, FieldSet([ANNOTATIONS_PATH]), lambda e: True)
    after = [e for e in after if not e.fields.is_empty()]
    return Migration(ref, rv, before, after, la, la_after, notes=notes, annotations_present=present)


def _other_annotations(annotations: Any) -> bool:
    return bool(annotations) and any(k != LAST_APPLIED_ANNOTATION for k in annotations or {})


def canonical_last_applied_owner(entries: Sequence[ManagedFieldsEntry], api_version: str) -> ManagedFieldsEntry:
    """Who owns the annotation after a plan writes it: ``kubectl-last-applied`` (Apply) where kubectl
    keeps the annotation next to a server-side applier, else ``kubectl-client-side-apply`` (Update)
    at the object's apiVersion — the identities kubectl itself writes it with. Writing the annotation
    *as* that identity (:mod:`.requests`) attributes it to the owner the plan already names, so a
    run interrupted after that write is completed by the same plan, made again."""
    for e in entries:
        if e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY and not e.subresource:
            return e
    for e in entries:
        if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and not e.subresource \
                and e.api_version == api_version:
            return e
    return ManagedFieldsEntry(KUBECTL_CLIENT_SIDE_APPLY, UPDATE, api_version, FieldSet())


def _give_annotation(entries: list[ManagedFieldsEntry], api_version: str, *, created: bool) -> list[ManagedFieldsEntry]:
    owner = canonical_last_applied_owner(entries, api_version)
    give = FieldSet([LAST_APPLIED_PATH, ANNOTATIONS_PATH]) if created and owner.operation == UPDATE else _LAC
    out: list[ManagedFieldsEntry] = []
    found = False
    for e in entries:
        if e.identity == owner.identity:
            e = e.with_fields(e.fields.union(give))
            found = True
        elif e.fields.has(LAST_APPLIED_PATH):
            e = e.with_fields(e.fields.difference(_LAC))
        out.append(e)
    if not found:
        out.append(owner.with_fields(owner.fields.union(give)))
    return out


def _without_paths(
    entries: Sequence[ManagedFieldsEntry],
    paths: FieldSet,
    which: Callable[[ManagedFieldsEntry], bool],
    recursive: bool = False,
) -> list[ManagedFieldsEntry]:
    out = []
    for e in entries:
        if which(e):
            fs = e.fields.recursive_difference(paths) if recursive else e.fields.difference(paths)
            if fs.is_empty():
                continue
            e = e.with_fields(fs)
        out.append(e)
    return out


def parsed_annotation(la: str | None) -> Any:
    """The last-applied annotation's JSON value (None: absent or not JSON), parsed once per text within
    an object's audit (:mod:`kubectl_fieldown.base.identitymemo`): whoever changes it copies it first."""
    if la is None:
        return None
    try:
        return remembered(memo("parsed_annotation"), (la,), json.loads, la)
    except ValueError:
        return None
