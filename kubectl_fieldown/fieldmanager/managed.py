"""The managed set: who owns which fields, decoded from and encoded back into managedFields.

:class:`Managed` is apimachinery's ``Managed`` (``internal/managedfields.go``): the decoded
entries by identity with their times. Decoding follows ``FieldManager.UpdateNoErrors`` (an
Update falls back to the live entries, or to none, where an Apply fails), :func:`strip` is
``stripmeta.go`` and :func:`encode` writes the sorted entries back into the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.record import Record
from ..fieldpath import UNSTRUCTURED, FieldSet
from ..ownership.managedfields import (
    APPLY,
    STRIPPED_METADATA,
    ManagedFieldsEntry,
    ManagedFieldsError,
    ManagerIdentity,
    decode_entries,
    sort_entries,
)
from ..typed.compare import Comparison
from .errors import FieldConflict


class Owned(Record, mutable=True):
    """One manager's fields, the version it wrote them at and whether it applied them."""

    __slots__ = ("api_version", "applied", "fields")
    fields: FieldSet
    api_version: str
    applied: bool

    def __init__(self, fields: FieldSet, api_version: str, applied: bool) -> None:
        self.fields = fields
        self.api_version = api_version
        self.applied = applied


class Managed:
    """Managers by identity, with their times (apimachinery ``Managed``)."""

    def __init__(self) -> None:
        self.fields: dict[ManagerIdentity, Owned] = {}
        self.times: dict[ManagerIdentity, str | None] = {}
        self.last_comparison: Comparison | None = None
        #: the set of the configuration the last apply sent, its ignored fields included (to_field_set
        #: of it): the apply's explanation needs it again
        self.config_set: FieldSet | None = None
        #: a forced apply's conflicts: the fields it took from other managers (what the same apply
        #: without force is refused for, in the order the 409 lists them)
        self.taken_over: list[FieldConflict] = []

    @classmethod
    def from_entries(cls, entries: list[ManagedFieldsEntry]) -> Managed:
        m = cls()
        for e in entries:
            ident = e.identity
            # the later of two entries with the same identity wins
            m.fields[ident] = Owned(e.fields, e.api_version, e.operation == APPLY)
            m.times[ident] = e.time
        return m

    def copy(self) -> Managed:
        m = Managed()
        m.fields = dict(self.fields)
        m.times = dict(self.times)
        m.last_comparison = self.last_comparison
        m.config_set = self.config_set
        return m

    def entries(self) -> list[ManagedFieldsEntry]:
        out = []
        for ident, owned in self.fields.items():
            if owned.fields.is_empty():
                continue
            out.append(
                ManagedFieldsEntry(
                    manager=ident.manager,
                    operation=ident.operation,
                    api_version=owned.api_version,
                    fields=owned.fields,
                    time=self.times.get(ident),
                    subresource=ident.subresource,
                )
            )
        return sort_entries(out)


def decode_live_or_new(live: dict[str, Any], new: dict[str, Any], ignore_new: bool) -> Managed:
    """An Update's managed set: the request's managedFields where they rewrite ownership, else the
    live object's; undecodable entries fall back rather than fail."""
    live_mf = (live.get("metadata") or {}).get("managedFields")
    if not ignore_new:
        md = new.get("metadata") or {}
        if "managedFields" in md:
            new_mf = md.get("managedFields")
            if isinstance(new_mf, list) and (len(new_mf) == 0 or (len(new_mf) == 1 and new_mf[0] == {})):
                # A non-nil empty list only resets when it survives decoding as non-nil; the
                # server's JSON path keeps [] non-nil but the public docs and our recorded cases
                # (cur-reset-with-empty-list-is-not-a-reset) show [] does not reset: only [{}] does.
                if len(new_mf) == 1:
                    return Managed()
            else:
                try:
                    decoded = decode_entries(new_mf)
                except ManagedFieldsError:
                    decoded = []
                if decoded:
                    return Managed.from_entries(decoded)
    try:
        return Managed.from_entries(decode_entries(live_mf))
    except ManagedFieldsError:
        return Managed()


def strip(m: Managed, ident: ManagerIdentity) -> None:
    """Drop the metadata paths no manager owns from ``ident``'s set (and the entry if that empties it)."""
    owned = m.fields.get(ident)
    if owned is None:
        return
    fs = owned.fields.difference(STRIPPED_METADATA)
    if fs.is_empty():
        del m.fields[ident]
    else:
        m.fields[ident] = Owned(fs, owned.api_version, owned.applied)


def encode(obj: dict[str, Any], managed: Managed, copy: bool = True) -> dict[str, Any]:
    """``obj`` with ``managed``'s entries as its managedFields (none: the key goes); with ``copy``, in a
    copy of ``obj`` and of its metadata, the only parts written here (the rest is shared: nobody
    changes a result or what it was made from)."""
    out: dict[str, Any] = obj
    if copy:
        out = dict(obj)
        md0 = out.get("metadata")
        if isinstance(md0, Mapping):
            out["metadata"] = dict(md0)
    entries = managed.entries()
    md = out.setdefault("metadata", {})
    if not isinstance(md, dict):
        return out
    if entries:
        # a custom resource's entries come back from the server as sorted maps
        md["managedFields"] = [e.to_dict(UNSTRUCTURED) for e in entries]
    else:
        md.pop("managedFields", None)
    return out


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without ``metadata.managedFields`` (a shallow copy where it had them)."""
    md = obj.get("metadata")
    if isinstance(md, dict) and "managedFields" in md:
        obj = dict(obj)
        md = dict(md)
        del md["managedFields"]
        obj["metadata"] = md
    return obj
