"""Which fields one write changed, and which managedFields entry made the change (pure, no I/O).

A watch sees an object before and after a write, both with their managedFields. The field changes
are the typed comparison of the two (``typed.compare``: the merge schema decides what is a leaf —
an atomic list is one value, a keyed list's items are compared by key), reduced to leaves. The
writer of the write is told by managedFields: the server stamps ``time`` on the entry of the
manager whose write changed the object (apimachinery's ``managedFieldsUpdater``: an Apply that
changed something, an Update that set a field) and adds what it set to that entry's field set.
So the entries of the new version that are new, whose ``time`` changed, or whose set grew are
this write's writers. An entry whose set only shrank, at the same time, lost fields to the writer
(a forced apply, an Update taking them): it is not a writer.

A change is attributed to the writers whose set holds it (after the write; for a removal, before
it). When no entry changed at all, yet a value did, the one entry that owns the changed field wrote
it (the writer always owns what it set): the server keeps no ``time`` for a ``/scale`` writer's
entry (seen on the lab's 1.36 server), and a manager writing a field it already owns within the
same second leaves its time as it was. Attribution is *ambiguous* — and says why — when several
entries could have written it, when none holds it (an Update that only deletes owns nothing after
it; the server then drops its entry), or when no entry changed and several or none own it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.objects import ObjectRef, is_secret_object
from ..base.redact import shown_value
from ..fieldpath import FIELD, FieldSet, Path, path_string
from ..fieldpath.lookup import MISSING, value_at
from ..ownership.managedfields import ManagedFieldsEntry, ManagerIdentity, decode_entries
from ..schema.types import Type
from ..typed.compare import compare

__all__ = [
    "ADDED",
    "CREATED",
    "DELETED",
    "MODIFIED",
    "REMOVED",
    "FieldChange",
    "Lifecycle",
    "ObjectVersion",
    "Write",
    "Writer",
    "attribute",
    "changed_entries",
    "created",
    "deleted",
    "object_version",
    "parsed_version",
]

ADDED = "added"
MODIFIED = "modified"
REMOVED = "removed"
CREATED = "created"
DELETED = "deleted"

# Bookkeeping the server changes on every write (or never): not field changes anyone made.
_BOOKKEEPING = ("managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink")
_STATUS: Path = ((FIELD, "status"),)


@dataclass(frozen=True, order=True)
class Writer:
    """A managedFields entry as a writer: manager, operation and subresource (``scale``, ``status``)."""

    manager: str
    operation: str
    subresource: str = ""

    @classmethod
    def of(cls, e: ManagedFieldsEntry) -> Writer:
        return cls(e.manager, e.operation, e.subresource)

    def label(self) -> str:
        """``kubectl (Update, /scale)``: the manager, its operation and subresource."""
        sub = f", /{self.subresource}" if self.subresource else ""
        return f"{self.manager or '<no manager>'} ({self.operation}{sub})"

    def to_json(self) -> dict[str, str]:
        out = {"manager": self.manager, "operation": self.operation}
        if self.subresource:
            out["subresource"] = self.subresource
        return out


@dataclass(frozen=True)
class ObjectVersion:
    """What the watch holds of one object between two writes: its identity, and its body and
    managedFields as compact JSON text, without the bookkeeping the server rewrites every time.
    Text, because a parsed object takes about six times the memory of its JSON and decoded
    managedFields more still; :attr:`body` and :attr:`entries` parse it again at each use (once per
    write in :func:`attribute`)."""

    ref: ObjectRef
    uid: str
    resource_version: str
    body_json: str
    managed_json: str
    secret: bool

    @property
    def body(self) -> dict[str, Any]:
        out = json.loads(self.body_json)
        assert isinstance(out, dict)
        return out

    @property
    def entries(self) -> list[ManagedFieldsEntry]:
        return decode_entries(json.loads(self.managed_json))


_IDENTITY = ("apiVersion", "kind")
_NAMES = ("name", "namespace")


def _compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def object_version(obj: Mapping[str, Any], keep: frozenset[str] | None = None) -> ObjectVersion:
    """An object as the server returned it, reduced to what attribution needs: ``keep`` names the
    top-level fields to hold (None: all; the others are never compared). Raises
    :class:`~kubectl_fieldown.ownership.managedfields.ManagedFieldsError` when its managedFields do not decode."""
    return parsed_version(obj, keep)[0]


Parsed = tuple[dict[str, Any], list[ManagedFieldsEntry]]
"""An :class:`ObjectVersion`'s body and entries as :attr:`ObjectVersion.body` and
:attr:`ObjectVersion.entries` give them, while they are at hand (not held: see ObjectVersion)."""


def parsed_version(obj: Mapping[str, Any], keep: frozenset[str] | None = None) -> tuple[ObjectVersion, Parsed]:
    """:func:`object_version` and its body and decoded entries, so that the write that brought it
    need not parse them again."""
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    managed = md.get("managedFields")
    entries = decode_entries(managed)  # refused now rather than at the next write
    if keep is None:
        body = dict(obj)
        body["metadata"] = {k: v for k, v in md.items() if k not in _BOOKKEEPING}
    else:
        body = {k: v for k, v in obj.items() if k in keep or k in _IDENTITY}
        body["metadata"] = {k: v for k, v in md.items()
                            if k not in _BOOKKEEPING and ("metadata" in keep or k in _NAMES)}
    v = ObjectVersion(ObjectRef.of(obj), str(md.get("uid") or ""), str(md.get("resourceVersion") or ""),
                      _compact(body), _compact(managed), is_secret_object(obj))
    return v, (body, entries)


@dataclass(frozen=True)
class FieldChange:
    """One leaf field a write changed. ``old``/``new`` are :data:`MISSING` when absent (added, removed);
    a Secret's values are already redacted. ``writers``: the changed entries held responsible;
    ``owners``: every entry that owns the field after the write (co-owners included); ``ambiguous``:
    why the writers are not one sure entry (None when they are)."""

    path: Path
    change: str
    old: Any
    new: Any
    writers: tuple[Writer, ...]
    owners: tuple[Writer, ...]
    ambiguous: str | None = None

    @property
    def path_text(self) -> str:
        return path_string(self.path)

    @property
    def writer(self) -> Writer | None:
        """The one sure writer, or None."""
        return self.writers[0] if len(self.writers) == 1 and self.ambiguous is None else None


@dataclass(frozen=True)
class Write:
    """What one observed write did to one object: its field changes (leaves, in path order) and the
    entries that changed. ``time`` is the newest ``time`` among the changed entries (the server's
    clock, whole seconds), None when no entry changed."""

    ref: ObjectRef
    resource_version: str
    changes: tuple[FieldChange, ...]
    writers: tuple[Writer, ...]
    time: str | None

    @property
    def quiet(self) -> bool:
        """No field changed outside ``.status``: a status-only or an ownership-only write."""
        return all(c.path[:1] == _STATUS for c in self.changes)


def changed_entries(old: Sequence[ManagedFieldsEntry], new: Sequence[ManagedFieldsEntry]) -> list[ManagedFieldsEntry]:
    """The entries of ``new`` that a write between ``old`` and ``new`` stamped: new entries, entries
    whose ``time`` changed and entries whose field set grew. One that only lost fields at the same
    time had them taken by another writer."""
    before: dict[ManagerIdentity, ManagedFieldsEntry] = {e.identity: e for e in old}
    out = []
    for e in new:
        # an applier's identity has no apiVersion: its entry moving to another version is the same entry
        prev = before.get(e.identity)
        if prev is None or prev.time != e.time or not (e.fields - prev.fields).is_empty():
            out.append(e)
    return out


def _leaves(paths: Iterable[Path]) -> list[Path]:
    """The paths of ``paths`` below which no other one lies (a container added with its items is
    its items; an empty container or an atomic value is itself), sorted."""
    ordered = sorted(set(paths))
    out = []
    for i, p in enumerate(ordered):
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        if nxt is not None and len(nxt) > len(p) and nxt[: len(p)] == p:
            continue
        out.append(p)
    return out


def _owned_by(entries: Sequence[ManagedFieldsEntry], path: Path) -> list[ManagedFieldsEntry]:
    return [e for e in entries if e.fields.has(path)]


def attribute(old: ObjectVersion, new: ObjectVersion, t: Type, *, prefixes: Sequence[Path] = (),
              path_texts: Sequence[str] = (), show_secret_values: bool = False, new_parsed: Parsed | None = None
              ) -> Write:
    """The field changes from ``old`` to ``new`` (one object, two versions) with their writers.
    ``t`` is the kind's merge schema; ``prefixes`` (or ``path_texts``, ``--path`` texts read with the
    new object's field names) keep only changes at or below one of them. ``new_parsed``: ``new``'s
    body and entries when they are at hand (:func:`parsed_version`)."""
    old_body, old_entries = old.body, old.entries
    new_body, new_entries = new_parsed if new_parsed is not None else (new.body, new.entries)
    if path_texts:
        prefixes = [*prefixes, *prefix_paths(path_texts, new_body)]
    comparison = compare(old_body, new_body, t)
    kinds: dict[Path, str] = {}
    for kind, fs in ((ADDED, comparison.added), (MODIFIED, comparison.modified), (REMOVED, comparison.removed)):
        for p in fs:
            kinds.setdefault(p, kind)
    stamped = changed_entries(old_entries, new_entries)
    writers = tuple(sorted({Writer.of(e) for e in stamped}))
    redact = new.secret and not show_secret_values
    changes = []
    for p in _leaves(kinds):
        if prefixes and not any(p[: len(q)] == q for q in prefixes):
            continue
        kind = kinds[p]
        before = value_at(old_body, p)
        after = value_at(new_body, p)
        if kind == REMOVED:
            # the remover owned it before and does not now (an applier dropping it from its manifest)
            cands = [e for e in stamped if not e.fields.has(p)
                     and any(o.identity == e.identity and o.fields.has(p) for o in old_entries)]
        else:
            cands = _owned_by(stamped, p)
        ambiguous: str | None = None
        owners_after = _owned_by(new_entries, p)
        if not stamped and kind != REMOVED and len({Writer.of(e) for e in owners_after}) == 1:
            # no entry changed, yet a value did: the writer owns what it set, so the one owner wrote it
            # (an entry the server keeps no time for, such as a /scale writer's, writing again)
            cands = owners_after
        elif not stamped:
            ambiguous = "no managedFields entry changed in this write"
            cands = owners_after
        elif not cands:
            ambiguous = "the field is in no changed managedFields entry"
            cands = list(stamped)
        elif len({Writer.of(e) for e in cands}) > 1:
            ambiguous = f"{len({Writer.of(e) for e in cands})} changed managedFields entries own it"
        owners = tuple(sorted({Writer.of(e) for e in owners_after}))
        if redact:
            before = before if before is MISSING else shown_value(p, before)
            after = after if after is MISSING else shown_value(p, after)
        changes.append(FieldChange(p, kind, before, after, tuple(sorted({Writer.of(e) for e in cands})),
                                   owners, ambiguous))
    times = [e.time for e in stamped if e.time]
    return Write(new.ref, new.resource_version, tuple(changes), writers, max(times) if times else None)


@dataclass(frozen=True)
class Lifecycle:
    """An object that came (:data:`CREATED`) or went (:data:`DELETED`) while it was watched.
    ``writers``: a created object's managedFields entries (the create stamped them all, unless later
    writes coalesced into it by a relist); a deletion leaves no trace in managedFields: none.
    ``time``: the newest entry time of a created object, None for a deletion."""

    ref: ObjectRef
    event: str
    resource_version: str
    writers: tuple[Writer, ...]
    time: str | None


def created(new: ObjectVersion) -> Lifecycle:
    entries = new.entries
    times = [e.time for e in entries if e.time]
    return Lifecycle(new.ref, CREATED, new.resource_version, tuple(sorted({Writer.of(e) for e in entries})),
                     max(times) if times else None)


def deleted(old: ObjectVersion, resource_version: str | None = None) -> Lifecycle:
    return Lifecycle(old.ref, DELETED, resource_version or old.resource_version, (), None)


def prefix_paths(texts: Sequence[str], body: Mapping[str, Any]) -> list[Path]:
    """``--path`` texts as paths of ``body`` (dotted names such as annotation keys grouped as the
    object has them)."""
    from ..fieldpath import parse_path
    from ..fieldpath.lookup import names_in

    names = names_in([body], FieldSet())
    return [parse_path(t, names) for t in texts]
