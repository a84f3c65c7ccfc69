"""What the watch holds of each object, and which observed transitions are real (pure, no I/O).

A WATCH may deliver an event twice (a reconnect from an older version), and after ``410 Gone`` the
watch lists again: the list must be compared with what is held, so that an object that did not
change in between gives nothing (no phantom event), one that changed gives one transition from the
held version to the listed one (which may span several writes: ``coalesced``), one created meanwhile
is new and one missing was deleted. Objects are held per scope (one watched type, namespace and
selector) by uid, reduced to what attribution needs (:func:`~.attribution.object_version`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .attribution import ObjectVersion, Parsed, object_version, parsed_version

__all__ = ["Tracker", "Transition"]


@dataclass(frozen=True)
class Transition:
    """One object from ``old`` to ``new``: created (``old`` None), deleted (``new`` None) or written.
    ``coalesced``: seen by a relist, the writes in between were not watched one by one.
    ``deleted_at``: the version of a deletion seen as a watch event."""

    scope: int
    old: ObjectVersion | None
    new: ObjectVersion | None
    coalesced: bool = False
    deleted_at: str = ""
    #: ``new``'s body and entries as the event brought them (not held: for the one attribution)
    new_parsed: Parsed | None = field(default=None, compare=False, repr=False)


def _newer(rv: str, held: str) -> bool:
    """Is ``rv`` a later version than ``held``? resourceVersions are opaque, but etcd's are
    increasing integers: compare them as such when both are, else any other version is newer."""
    if rv.isdigit() and held.isdigit():
        return int(rv) > int(held)
    return rv != held


class Tracker:
    """``keep``: the top-level fields to hold of each object (None: all), for ``--path``."""

    def __init__(self, keep: frozenset[str] | None = None) -> None:
        self._held: dict[int, dict[str, ObjectVersion]] = {}
        self._keep = keep

    def __len__(self) -> int:
        return sum(len(v) for v in self._held.values())

    def snapshot(self, scope: int, items: Iterable[Mapping[str, Any]], relist: bool) -> list[Transition]:
        """A (re)list of ``scope``: the first one is held silently; a relist gives the transitions
        from what was held."""
        before = self._held.get(scope, {})
        now: dict[str, ObjectVersion] = {}
        out: list[Transition] = []
        for item in items:
            v = object_version(item, self._keep)
            key = v.uid or v.ref.resource_name
            now[key] = v
            if not relist:
                continue
            old = before.get(key)
            if old is None:
                out.append(Transition(scope, None, v, coalesced=True))
            elif _newer(v.resource_version, old.resource_version):
                out.append(Transition(scope, old, v, coalesced=True))
            elif _newer(old.resource_version, v.resource_version):
                now[key] = old  # the list is older than what we hold (a lagging cache): keep ours
        if relist:
            out.extend(Transition(scope, old, None, coalesced=True) for key, old in before.items() if key not in now)
        self._held[scope] = now
        return out

    def event(self, scope: int, typ: str, obj: Mapping[str, Any]) -> list[Transition]:
        """One WATCH event; nothing for one that says nothing new (delivered again)."""
        held = self._held.setdefault(scope, {})
        v, parsed = parsed_version(obj, self._keep)
        key = v.uid or v.ref.resource_name
        old = held.get(key)
        if typ == "DELETED":
            if old is None:
                return []
            del held[key]
            return [Transition(scope, old, None, deleted_at=v.resource_version)]
        if old is not None and not _newer(v.resource_version, old.resource_version):
            return []  # seen already
        held[key] = v
        return [Transition(scope, old, v, new_parsed=parsed)]
