"""Undo: the backup document a write leaves, and the plan that puts its ownership back (pure).

A backup holds the object as it was before the write, the plan's target (the managedFields and
annotation the write was to leave) and, once the tool has written, the record of its writes: each
request's resourceVersion before and after, and the managedFields and annotation the server returned
after the last one. A SHA-256 covers all of it, so ``undo`` can tell:

* that the file is the one the tool wrote (an edited backup is refused);
* that the live object is the one saved (same uid, name, namespace and kind: a backup of another
  object, or one whose uid was blanked, is refused);
* whether anything wrote the object after the tool's write: the live resourceVersion is the one the
  tool's last write returned, or the writes in between are this tool's own (later backups of the same
  object, named in the same ``undo`` or found in the backup directory). Otherwise what changed is
  named — managedFields entries added, removed, or whose field set or time changed since the write,
  and the last-applied annotation — and ``undo`` refuses; ``--force`` restores around those writers:
  their entries stay as they are now, no field they hold goes back to another manager, and the
  annotation is not restored over fields they wrote.

When nothing else wrote the object, the original comes back whole: the managedFields entries and the
last-applied annotation of the oldest backup, whatever each write changed. Ownership is never
restored of a field that is no longer set, and field values are never touched.

A write interrupted between a request and its record (SIGKILL) leaves a record one request short; the
object is then taken to be as the tool left it when its ownership is the plan's target exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.objects import ObjectRef
from ..fieldpath import FieldSet, encode_fields_v1, path_from_fields, path_string
from ..fieldpath.lookup import MISSING, Lookup
from ..ownership.managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsEntry, ManagerIdentity, decode_entries
from .plans import LAST_APPLIED_PATH, Migration, MigrationError, entries_differ

__all__ = [
    "BACKUP_FORMAT",
    "NOT_RESTORED",
    "BackupContent",
    "BackupError",
    "Saved",
    "Written",
    "backup_document",
    "plan_restore",
    "plan_undo",
    "read_backup_document",
    "written_record",
]

BACKUP_FORMAT = "fieldown.backup/v2"
#: how a note of the plan starts when it says what the undo cannot put back (shown without -v)
NOT_RESTORED = "not restored: "
_OLD_FORMAT = "fieldown.backup/v1"


class BackupError(ValueError):
    """A backup that cannot be used (the message says why, in one line)."""


@dataclass(frozen=True)
class Written:
    """What the tool's write did, as recorded after each request it sent."""

    writes: tuple[tuple[str, str], ...]
    """Each request's resourceVersion: the one it tested and the one the server returned."""
    entries: list[ManagedFieldsEntry]
    """The managedFields the server returned after the last request (times included)."""
    last_applied: str | None
    complete: bool
    """Every request of the plan was sent (False: interrupted, or nothing sent)."""
    object: dict[str, Any] | None = None
    """The object the server returned after the last request, without managedFields (its values)."""

    @property
    def resource_version(self) -> str | None:
        return self.writes[-1][1] if self.writes else None

    def gap(self, before: str) -> tuple[str, str] | None:
        """A write by someone else between two of the tool's requests: (returned, next tested)."""
        prev = before
        for tested, returned in self.writes:
            if tested != prev:
                return prev, tested
            prev = returned
        return None


@dataclass(frozen=True)
class BackupContent:
    """A backup as ``undo`` reads it."""

    object: dict[str, Any]
    """The object before the write."""
    after: list[ManagedFieldsEntry] | None
    """The entries the write was to leave (None for a backup of the first format, which did not record them)."""
    last_applied_after: str | None
    resource: dict[str, Any]
    uid: str
    resource_version: str
    header: dict[str, Any]
    written: Written | None = None
    """The record of the write (None: a backup written before the tool kept one)."""

    @property
    def taken_at(self) -> str:
        return str(self.header.get("takenAt") or "")

    @property
    def command(self) -> str:
        return str(self.header.get("command") or "")


def _digest(doc: Mapping[str, Any]) -> str:
    keys = ["resource", "uid", "resourceVersion", "object", "after"]
    if "written" in doc:  # absent from backups written before the record existed: their digest stays
        keys.append("written")
    body = {k: doc.get(k) for k in keys}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _annotation(obj: Mapping[str, Any]) -> str | None:
    la = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    return la if isinstance(la, str) else None


def written_record(writes: Sequence[tuple[str, str]], returned: Mapping[str, Any] | None,
                   complete: bool) -> dict[str, Any]:
    """The ``written`` part of a backup: the requests' resourceVersions and what the last one returned."""
    md = (returned or {}).get("metadata") or {}
    values = None
    if returned is not None:
        values = {**returned, "metadata": {k: v for k, v in md.items() if k != "managedFields"}}
    return {"writes": [list(w) for w in writes], "managedFields": md.get("managedFields") or [],
            "lastApplied": _annotation(returned or {}), "complete": complete, "object": values}


def backup_document(obj: Mapping[str, Any], resource: Mapping[str, Any], header: Mapping[str, Any],
                    plan: Migration | None, written: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a backup file holds: the header (command, server, time...), the object, the plan's target,
    the record of the write (once there is one), and the digest of those."""
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
    if written is not None:
        doc["written"] = dict(written)
    doc["sha256"] = _digest(doc)
    return doc


def _read_written(raw: Any, where: str) -> Written | None:
    if not isinstance(raw, dict):
        return None
    writes = raw.get("writes")
    if not isinstance(writes, list) or not all(isinstance(w, list) and len(w) == 2 for w in writes):
        raise BackupError(f"{where}: the record of the write cannot be read")
    try:
        entries = decode_entries(raw.get("managedFields") or [])
    except ValueError as e:
        raise BackupError(f"{where}: the recorded managedFields cannot be read: {e}") from None
    la = raw.get("lastApplied")
    obj = raw.get("object")
    return Written(tuple((str(a), str(b)) for a, b in writes), entries, la if isinstance(la, str) else None,
                   bool(raw.get("complete")), obj if isinstance(obj, dict) else None)


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
                                                         "sha256", "written")}
    return BackupContent(obj, entries, la_after, resource, uid, str(doc.get("resourceVersion") or ""), header,
                         _read_written(doc.get("written"), where))


# --- the plan --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Saved:
    """One backup of the object: where it lies (for messages), its content, and whether this ``undo``
    names it (False: a later backup of the same object found in the backup directory)."""

    label: str
    content: BackupContent
    named: bool = True


@dataclass
class _Ownership:
    """The object's ownership at a point of its history (``times``: whether entry times are known)."""

    entries: list[ManagedFieldsEntry]
    last_applied: str | None
    times: bool
    resource_version: str | None
    values: Mapping[str, Any] | None = None
    """The object's values then (None: not known)."""


@dataclass
class _History:
    steps: list[Saved]
    end: _Ownership
    """The ownership after the last of the tool's writes the history could follow."""
    reached: bool
    """The live object is where the last step left it: nothing else wrote it since."""
    notes: list[str] = field(default_factory=list)
    unlinked: list[Saved] = field(default_factory=list)
    """Named backups the history could not reach (something else wrote the object before them)."""


def _label(i: ManagerIdentity) -> str:
    out = f"{i.manager} ({i.operation})"
    return out + (f" (subresource {i.subresource})" if i.subresource else "")


def _by_identity(entries: Sequence[ManagedFieldsEntry]) -> dict[ManagerIdentity, ManagedFieldsEntry]:
    return {e.identity: e for e in entries if not e.fields.is_empty()}


def _end_of(s: Saved) -> _Ownership:
    """The ownership the backup's write left, as far as it is known."""
    c = s.content
    w = c.written
    if w is not None and w.writes:
        return _Ownership(w.entries, w.last_applied, True, w.resource_version, w.object)
    if w is not None:  # nothing sent (yet): the object as saved
        return _Ownership(decode_entries((c.object.get("metadata") or {}).get("managedFields")),
                          _annotation(c.object), True, c.resource_version, c.object)
    # a backup without a record: only the plan's target is known, without times
    return _Ownership(c.after if c.after is not None else [], c.last_applied_after, False, None)


def _planned(s: Saved) -> _Ownership | None:
    c = s.content
    if c.after is None:
        return None
    return _Ownership(c.after, c.last_applied_after, False, None)


def _same_ownership(entries: Sequence[ManagedFieldsEntry], la: str | None, o: _Ownership) -> bool:
    return not entries_differ(entries, o.entries) and la == o.last_applied


def _history(live_rv: str, live_entries: Sequence[ManagedFieldsEntry], live_la: str | None,
             named: Sequence[Saved], found: Sequence[Saved]) -> _History:
    """The tool's writes from the oldest named backup on, followed by resourceVersion as far as they go."""
    ends = {_end_of(s).resource_version for s in named}
    # the oldest: the one no other named backup's write leads to (then the earliest taken)
    order = sorted(named, key=lambda s: (s.content.resource_version in ends, s.content.taken_at, s.label))
    steps = [order[0]]
    pool = [*order[1:], *found]
    notes: list[str] = []
    while True:
        last = steps[-1]
        w = last.content.written
        gap = w.gap(last.content.resource_version) if w is not None else None
        if gap is not None:
            raise MigrationError(f"another writer wrote the object while this tool was writing it (resourceVersion "
                                 f"{gap[0]} -> {gap[1]}, between two requests of {last.label}): its original "
                                 "ownership cannot be told from that writer's; restore it by hand from the backup")
        end = _end_of(last)
        if end.resource_version == live_rv:
            return _History(steps, end, True, notes)
        if end.resource_version is not None:
            nxt = next((s for s in pool if s.content.resource_version == end.resource_version), None)
            if nxt is not None:
                steps.append(nxt)
                pool.remove(nxt)
                continue
        planned = _planned(last)
        if (w is None or not w.complete) and planned is not None \
                and _partway(live_entries, live_la, _end_of_saved(last) if w is None else end, planned):
            # requests sent but not recorded (killed between a request and its record): the ownership is
            # part of the way from what the tool last recorded to the plan's target, and nothing else
            notes.append(f"the write of {last.label} was interrupted before its record was complete; the object's "
                         "ownership lies between the recorded state and the plan's target, taken as its write")
            return _History(steps, planned, True, notes)
        return _History(steps, end, False, notes, [s for s in pool if s.named])


def _end_of_saved(s: Saved) -> _Ownership:
    obj = s.content.object
    return _Ownership(decode_entries((obj.get("metadata") or {}).get("managedFields")), _annotation(obj), True,
                      s.content.resource_version, obj)


def _partway(entries: Sequence[ManagedFieldsEntry], la: str | None, start: _Ownership, target: _Ownership) -> bool:
    """Is every entry and the annotation either as at ``start`` or as at ``target`` (field sets)?"""
    if la not in (start.last_applied, target.last_applied):
        return False
    now, a, b = _by_identity(entries), _by_identity(start.entries), _by_identity(target.entries)
    for ident in set(now) | set(a) | set(b):
        cur = encode_fields_v1(now[ident].fields) if ident in now else None
        if cur not in (encode_fields_v1(a[ident].fields) if ident in a else None,
                       encode_fields_v1(b[ident].fields) if ident in b else None):
            return False
    return True


def _changes(live: Mapping[str, Any], live_entries: Sequence[ManagedFieldsEntry], live_la: str | None,
             since: _Ownership) -> tuple[list[str], dict[ManagerIdentity, ManagedFieldsEntry], set[ManagerIdentity],
                                         bool]:
    """What was written since ``since``: descriptions, the entries of the writers (as they are now),
    the identities whose entry is gone, and whether the annotation changed. Values that changed name
    their owners as writers too (an entry's time has whole seconds: a write in the same second as the
    tool's leaves it as it was)."""
    now, then = _by_identity(live_entries), _by_identity(since.entries)
    said: list[str] = []
    writers: dict[ManagerIdentity, ManagedFieldsEntry] = {}
    for ident in sorted(now):
        cur, old = now[ident], then.get(ident)
        if old is None:
            said.append(f"{_label(ident)} was added")
        elif encode_fields_v1(cur.fields) != encode_fields_v1(old.fields):
            said.append(f"{_label(ident)} changed its fields")
        elif since.times and cur.time != old.time:
            said.append(f"{_label(ident)} wrote at {cur.time}")
        else:
            continue
        writers[ident] = cur
    gone = {i for i in then if i not in now}
    said += [f"{_label(i)} was removed" for i in sorted(gone)]
    la_changed = live_la != since.last_applied
    if la_changed:
        # whoever holds the annotation now wrote it, even when its entry looks the same (times have whole
        # seconds: a write in the same second as the tool's keeps the time)
        by = [i for i in sorted(now) if now[i].fields.has(LAST_APPLIED_PATH)]
        said.append("the last-applied annotation changed" + (f" (held by {', '.join(_label(i) for i in by)})"
                                                             if by else ""))
        for i in by:
            writers.setdefault(i, now[i])
    if since.values is not None:
        by_path: dict[ManagerIdentity | None, list[str]] = {}
        for p in _changed_values(since.values, live):
            holders: list[ManagerIdentity | None] = [i for i in sorted(now) if now[i].fields.has_prefix(p)]
            for holder in holders or [None]:
                by_path.setdefault(holder, []).append(path_string(p))
        for holder, paths in by_path.items():
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            if holder is None:
                said.append(f"{shown} changed (held by no manager)")
                continue
            said.append(f"{_label(holder)} changed {shown}")
            writers.setdefault(holder, now[holder])
    return said, writers, gone, la_changed


#: metadata the server keeps by itself, not values a writer sets
_SERVER_METADATA = frozenset({"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp",
                              "selfLink"})


def _changed_values(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Any]:
    """The paths whose values differ between two versions of an object (maps walked, lists whole;
    the last-applied annotation aside: it is compared on its own)."""
    out: list[Any] = []

    def walk(x: Any, y: Any, path: tuple[Any, ...]) -> None:
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            for k in sorted(set(x) | set(y)):
                if path == () and k == "metadata":
                    xm, ym = x.get(k) or {}, y.get(k) or {}
                    for mk in sorted((set(xm) | set(ym)) - _SERVER_METADATA):
                        if mk == "annotations":
                            xa = {n: v for n, v in (xm.get(mk) or {}).items() if n != LAST_APPLIED_ANNOTATION}
                            ya = {n: v for n, v in (ym.get(mk) or {}).items() if n != LAST_APPLIED_ANNOTATION}
                            walk(xa, ya, (*path_from_fields("metadata", mk),))
                        else:
                            walk(xm.get(mk, MISSING), ym.get(mk, MISSING), path_from_fields("metadata", mk))
                    continue
                walk(x.get(k, MISSING), y.get(k, MISSING), (*path, *path_from_fields(k)))
        elif x != y or type(x) is not type(y):
            out.append(path)

    walk(a, b, ())
    return out


def plan_restore(live: Mapping[str, Any], backup: BackupContent, *, force: bool = False) -> Migration:
    """:func:`plan_undo` of one backup."""
    return plan_undo(live, [Saved("the backup", backup)], force=force)


def plan_undo(live: Mapping[str, Any], named: Sequence[Saved], found: Sequence[Saved] = (), *,
              force: bool = False) -> Migration:
    """From the live object back to the ownership before the oldest named backup's write (see the
    module docstring). ``found``: later backups of the same object that this undo does not name."""
    if not named:
        raise ValueError("plan_undo needs a backup")
    md = live.get("metadata") or {}
    for s in named:
        saved_md = s.content.object.get("metadata") or {}
        for what, a, b in (("uid", md.get("uid"), s.content.uid), ("name", md.get("name"), saved_md.get("name")),
                           ("namespace", md.get("namespace") or None, saved_md.get("namespace") or None),
                           ("kind", live.get("kind"), s.content.object.get("kind"))):
            if a != b:
                raise MigrationError(f"is not the object that was saved ({what} {a!r}, the backup's is {b!r}: deleted "
                                     "and created again, or another object or cluster); refusing to restore")
    ref = ObjectRef.of(live)
    rv = str(md.get("resourceVersion") or "")
    current = decode_entries(md.get("managedFields"))
    la = _annotation(live)
    annotations = md.get("annotations") or {}
    present = isinstance(annotations, Mapping) and bool(annotations)

    h = _history(rv, current, la, named, found)
    original = h.steps[0].content.object
    target = decode_entries((original.get("metadata") or {}).get("managedFields"))
    target_la = _annotation(original)
    notes = list(h.notes)
    if len(h.steps) > 1:
        notes.append(f"the object is put back as it was before {len(h.steps)} writes of this tool: "
                     + ", ".join(f"{s.content.command or '?'} ({s.label})" for s in h.steps))

    if _same_ownership(current, la, _Ownership(_present(target, live), target_la, False, None)):
        notes.insert(0, "the ownership is already as before the write")
        return Migration(ref, rv, current, current, la, la, notes=notes, annotations_present=present)

    later = [s for s in h.steps if not s.named]
    last_named = max(i for i, s in enumerate(h.steps) if s.named)
    if later and h.reached and all(not s.named for s in h.steps[last_named + 1:]) \
            and _same_ownership(current, la, _end_of(h.steps[last_named])):
        # the tool's later writes were undone since (their undo is among them): nothing of theirs is left
        notes.append("later writes of this tool were undone since: " + ", ".join(
            f"{s.content.command or '?'} ({s.label})" for s in later))
        later = []
    if later and not force:
        raise MigrationError("written after the backup by this tool: " + ", ".join(
            f"{s.content.command or '?'} ({s.label})" for s in later)
            + "; undo that first, or name both in one undo (--force restores past it)")

    writers: dict[ManagerIdentity, ManagedFieldsEntry] = {}
    gone: set[ManagerIdentity] = set()
    la_after = target_la
    if not h.reached:
        said, writers, gone, la_changed = _changes(live, current, la, h.end)
        where = f" (resourceVersion {h.end.resource_version} -> {rv})" if h.end.resource_version else ""
        if not said:
            said = ["no managedFields entry, value or last-applied annotation changed that this tool can see (a write "
                    "in the same second as the tool's, of values it does not record, or one that records no ownership)"]
        if h.unlinked:
            said.append("then this tool's " + ", ".join(f"{s.content.command or '?'} ({s.label})" for s in h.unlinked))
        if not force:
            raise MigrationError(f"written after the backup{where}: " + "; ".join(said)
                                 + "; restoring the saved ownership would take what was written since; use --force "
                                   "to restore around it")
        if writers or gone or la_changed:
            notes.append(f"{NOT_RESTORED}what was written after the backup{where} stays as it is: " + "; ".join(said))
        if la_changed:
            la_after = la
        elif la_after != la and writers:
            clash = _named_in(la_after, writers)
            if clash:
                la_after = la
                notes.append(f"{NOT_RESTORED}the last-applied annotation: it names "
                             + ", ".join(str(p) for p in clash[:3]) + " that "
                             + ", ".join(sorted({_label(i) for i in writers})) + " wrote since")
    # the object as the restore leaves it: ownership is restored of what is set then
    restored = _with_annotation(live, la_after)
    in_restored = Lookup(restored)  # one index per list: linear in the fields
    taken = FieldSet()
    for e in writers.values():
        taken = taken.union(e.fields)
    result: list[ManagedFieldsEntry] = list(writers.values())
    for e in target:
        if e.identity in writers or e.identity in gone:
            continue
        # neither a field a later writer holds nor a map or list above one (its "." would keep the node
        # when that writer's next apply drops what it holds)
        fields = FieldSet([p for p in e.fields.difference(taken) if not taken.has_prefix(p)
                           and in_restored.at(p) is not MISSING])
        if not fields.is_empty():
            result.append(e.with_fields(fields))
    lost = [e for e in target if e.identity not in writers and not e.fields.is_empty()
            and not any(r.identity == e.identity and r.fields == e.fields for r in result)]
    if lost and h.reached:
        notes.append(f"{NOT_RESTORED}ownership of fields no longer set (" + ", ".join(_label(e.identity) for e in lost)
                     + " owned fields whose values are gone)")
    if rv != h.steps[0].content.resource_version:
        notes.append(f"written since the backup (resourceVersion {h.steps[0].content.resource_version} -> {rv}): "
                     "only ownership is restored, the values stay as they are now")
    notes.insert(0, f"restore {len(result)} managedFields entr{'y' if len(result) == 1 else 'ies'}"
                 + (" and the last-applied annotation" if la_after != la else ""))
    return Migration(ref, rv, current, result, la, la_after, reset=not result, notes=notes, annotations_present=present)


def _present(entries: Sequence[ManagedFieldsEntry], obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    """The entries with only the fields ``obj`` sets."""
    in_obj = Lookup(obj)
    return [e.with_fields(FieldSet([p for p in e.fields if in_obj.at(p) is not MISSING])) for e in entries]


def _named_in(la: str | None, writers: Mapping[ManagerIdentity, ManagedFieldsEntry]) -> list[Any]:
    """The later writers' fields that the annotation sets (restoring it would let the client-side
    applier delete them)."""
    if la is None:
        return []
    try:
        doc = json.loads(la)
    except ValueError:
        return []
    out = []
    in_doc = Lookup(doc)
    for e in writers.values():
        out += [p for p in e.fields.leaves() if in_doc.at(p) is not MISSING]
    return out


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
