"""Undo: the backup document a write leaves, and the plan that puts its ownership back (pure).

A backup holds the object as it was before the write and the plan's target (the managedFields and
annotation the write left), with a SHA-256 of both, so ``undo`` can tell:

* that the file is the one the tool wrote (an edited backup is refused);
* that the live object is the one saved (same uid, name, namespace and kind: a backup of another
  object, or one whose uid was blanked, is refused);
* what changed since the write: writers that came later keep what they wrote. ``undo`` restores
  the difference the tool's write made — the entries it changed go back to what they were — and
  leaves the rest as it is now; by default it refuses when managers were added since the backup
  (``--force`` restores around them), and it never restores ownership of a field that is no
  longer set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..fieldpath import FieldSet
from ..fieldpath.lookup import MISSING, Lookup
from ..managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsEntry, ManagerIdentity, decode_entries
from ..objects import ObjectRef
from .plans import Migration, MigrationError

__all__ = [
    "BACKUP_FORMAT",
    "BackupContent",
    "BackupError",
    "backup_document",
    "plan_restore",
    "read_backup_document",
]

BACKUP_FORMAT = "fieldown.backup/v2"
_OLD_FORMAT = "fieldown.backup/v1"


class BackupError(ValueError):
    """A backup that cannot be used (the message says why, in one line)."""


@dataclass(frozen=True)
class BackupContent:
    """A backup as ``undo`` reads it."""

    object: dict[str, Any]
    """The object before the write."""
    after: list[ManagedFieldsEntry] | None
    """The entries the write left (None for a backup of the first format, which did not record them)."""
    last_applied_after: str | None
    resource: dict[str, Any]
    uid: str
    resource_version: str
    header: dict[str, Any]


def _digest(doc: Mapping[str, Any]) -> str:
    body = {k: doc.get(k) for k in ("resource", "uid", "resourceVersion", "object", "after")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def backup_document(obj: Mapping[str, Any], resource: Mapping[str, Any], header: Mapping[str, Any],
                    plan: Migration | None) -> dict[str, Any]:
    """What a backup file holds: the header (command, server, time...), the object, the plan's target,
    and the digest of those."""
    md = obj.get("metadata") or {}
    doc: dict[str, Any] = {
        "format": BACKUP_FORMAT,
        **header,
        "resource": dict(resource),
        "uid": str(md.get("uid") or ""),
        "resourceVersion": str(md.get("resourceVersion") or ""),
        "object": obj,
        "after": None if plan is None else {
            "managedFields": [e.to_dict() for e in plan.after] if not plan.reset else [],
            "lastApplied": plan.last_applied_after,
        },
    }
    doc["sha256"] = _digest(doc)
    return doc


def read_backup_document(doc: Any, where: str) -> BackupContent:
    """The content of a backup file's JSON document, checked (:class:`BackupError` otherwise)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("object"), dict):
        raise BackupError(f"{where}: not a fieldown backup (no object)")
    fmt = doc.get("format")
    if fmt not in (BACKUP_FORMAT, _OLD_FORMAT):
        raise BackupError(f"{where}: not a fieldown backup (format {fmt!r})")
    if fmt == BACKUP_FORMAT and doc.get("sha256") != _digest(doc):
        raise BackupError(f"{where}: the backup was changed after it was written (its SHA-256 does not match); "
                          "refusing to restore it")
    obj = doc["object"]
    uid = str(doc.get("uid") or "")
    if not uid or uid != str((obj.get("metadata") or {}).get("uid") or ""):
        raise BackupError(f"{where}: the backup names no uid of its object; refusing to restore it")
    after = doc.get("after") if isinstance(doc.get("after"), dict) else None
    entries = None
    la_after = None
    if after is not None:
        try:
            entries = decode_entries(after.get("managedFields") or [])
        except ValueError as e:
            raise BackupError(f"{where}: the recorded managedFields cannot be read: {e}") from None
        la = after.get("lastApplied")
        la_after = la if isinstance(la, str) else None
    resource: dict[str, Any] = doc["resource"] if isinstance(doc.get("resource"), dict) else {}
    header = {k: v for k, v in doc.items() if k not in ("object", "after", "resource", "uid", "resourceVersion",
                                                         "sha256")}
    return BackupContent(obj, entries, la_after, resource, uid, str(doc.get("resourceVersion") or ""), header)


def _by_identity(entries: Sequence[ManagedFieldsEntry]) -> dict[ManagerIdentity, ManagedFieldsEntry]:
    return {e.identity: e for e in entries}


def _label(i: ManagerIdentity) -> str:
    out = f"{i.manager} ({i.operation})"
    return out + (f" (subresource {i.subresource})" if i.subresource else "")


def plan_restore(live: Mapping[str, Any], backup: BackupContent, *, force: bool = False) -> Migration:
    """From the live object back to the ownership before the write, keeping what others wrote since."""
    md = live.get("metadata") or {}
    saved_md = backup.object.get("metadata") or {}
    ref = ObjectRef.of(live)
    for what, a, b in (("uid", md.get("uid"), backup.uid), ("name", md.get("name"), saved_md.get("name")),
                       ("namespace", md.get("namespace") or None, saved_md.get("namespace") or None),
                       ("kind", live.get("kind"), backup.object.get("kind"))):
        if a != b:
            raise MigrationError(f"is not the object that was saved ({what} {a!r}, the backup's is {b!r}: deleted and "
                                 "created again, or another object or cluster); refusing to restore")
    current = decode_entries(md.get("managedFields"))
    before = decode_entries(saved_md.get("managedFields"))
    annotations = md.get("annotations") or {}
    la = annotations.get(LAST_APPLIED_ANNOTATION)
    la = la if isinstance(la, str) else None
    saved_la = (saved_md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    saved_la = saved_la if isinstance(saved_la, str) else None
    rv = str(md.get("resourceVersion") or "")
    notes: list[str] = []
    base = backup.after if backup.after is not None else before
    base_la = backup.last_applied_after if backup.after is not None else saved_la

    la_after = saved_la
    if la != base_la:
        la_after = la
        notes.append("the last-applied annotation was written again after the backup: it is kept as it is now")
    # the object as the restore leaves it: ownership is restored of what is set then
    restored = _with_annotation(live, la_after)
    cur_by, base_by, before_by = _by_identity(current), _by_identity(base), _by_identity(before)
    newer = sorted(i for i in cur_by if i not in base_by and i not in before_by)
    if newer and not force:
        raise MigrationError("managers wrote the object after the backup (" + ", ".join(_label(i) for i in newer)
                             + "): restoring the saved ownership would take their fields; use --force to restore "
                               "around them")
    result: list[ManagedFieldsEntry] = []
    for ident in sorted(set(cur_by) | set(before_by)):
        cur = cur_by.get(ident)
        old = before_by.get(ident)
        was = base_by.get(ident)
        gained = cur.fields.difference(was.fields) if cur is not None and was is not None else \
            (cur.fields if cur is not None else FieldSet())
        lost = was.fields.difference(cur.fields) if was is not None and cur is not None else \
            (was.fields if was is not None else FieldSet())
        fields = (old.fields if old is not None else FieldSet()).union(gained).difference(lost)
        # never the ownership of a field that is no longer set
        in_restored = Lookup(restored)
        fields = FieldSet([p for p in fields if in_restored.at(p) is not MISSING])
        if fields.is_empty():
            continue
        template = old if old is not None else cur
        assert template is not None
        if cur is not None and (was is None or cur.fields != was.fields):
            template = cur  # written since: its apiVersion and time are the newer ones
        result.append(template.with_fields(fields))
    if newer:
        notes.append("kept what was written after the backup by " + ", ".join(_label(i) for i in newer))
    if rv != backup.resource_version:
        notes.append(f"written since the backup (resourceVersion {backup.resource_version} -> {rv}): only ownership "
                     "is restored, the values stay as they are now")
    notes.insert(0, f"restore {len(result)} managedFields entr{'y' if len(result) == 1 else 'ies'}"
                 + (" and the last-applied annotation" if la_after is not None and la_after != la else ""))
    present = isinstance(annotations, Mapping) and bool(annotations)
    return Migration(ref, rv, current, result, la, la_after, reset=not result, notes=notes, annotations_present=present)


def _with_annotation(obj: Mapping[str, Any], la: str | None) -> dict[str, Any]:
    md = dict(obj.get("metadata") or {})
    annotations = {k: v for k, v in (md.get("annotations") or {}).items() if k != LAST_APPLIED_ANNOTATION}
    if la is not None:
        annotations[LAST_APPLIED_ANNOTATION] = la
    if annotations:
        md["annotations"] = annotations
    else:
        md.pop("annotations", None)
    return {**obj, "metadata": md}
