"""Writers that fight over a field, and objects rewritten without a field change (pure, no I/O).

A *flip* is a change of a field by a writer other than the one that changed it last. A field that
flips at least ``threshold`` times between two or more writers is a fight, reported once (when it
crosses the threshold) with the writers, the value each one last wrote and how often each wrote it;
the summary gives the final counts. Only changes with one sure writer count (an ambiguous
attribution neither adds a flip nor breaks a run).

Objects whose writes change no field outside ``.status`` (status-only, ownership-only writes) are
counted apart: at ``churn_threshold`` such writes an object is listed in the summary.

Memory is bounded by the fields that changed: per (object, field) a few counters and the last value
of each writer.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from ..base.objects import ObjectRef
from ..fieldpath import Path, path_string
from ..ownership.managedfields import APPLY, KUBECTL_CLIENT_SIDE_APPLY, UPDATE
from .attribution import Write, Writer

__all__ = ["DEFAULT_CHURN", "DEFAULT_FIGHTS", "Churn", "Fight", "FightDetector", "FightWriter", "Remedy", "remedy"]

DEFAULT_FIGHTS = 3
DEFAULT_CHURN = 10


@dataclass(frozen=True)
class FightWriter:
    writer: Writer
    value: Any
    writes: int


@dataclass(frozen=True)
class Remedy:
    """What to do about a fight: ``commands`` (valid ``kubectl fieldown`` command lines) and the
    manual steps in ``text``."""

    text: str
    commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fight:
    ref: ObjectRef
    path: Path
    flips: int
    writers: tuple[FightWriter, ...]

    @property
    def path_text(self) -> str:
        return path_string(self.path)


@dataclass(frozen=True)
class Churn:
    """An object rewritten ``writes`` times with no field change outside ``.status``."""

    ref: ObjectRef
    writes: int
    status_only: int
    ownership_only: int
    writers: tuple[Writer, ...]


@dataclass
class _History:
    last: Writer | None = None
    flips: int = 0
    writes: dict[Writer, int] = field(default_factory=dict)
    values: dict[Writer, Any] = field(default_factory=dict)
    reported: bool = False


@dataclass
class _Quiet:
    status_only: int = 0
    ownership_only: int = 0
    writers: set[Writer] = field(default_factory=set)


class FightDetector:
    def __init__(self, threshold: int = DEFAULT_FIGHTS, churn_threshold: int = DEFAULT_CHURN) -> None:
        if threshold < 1:
            raise ValueError("the fight threshold is at least 1")
        self.threshold = threshold
        self.churn_threshold = churn_threshold
        self._fields: dict[tuple[ObjectRef, Path], _History] = {}
        self._quiet: dict[ObjectRef, _Quiet] = {}

    def observe(self, write: Write) -> list[Fight]:
        """Count ``write``; the fights it makes cross the threshold (each fight once)."""
        if write.quiet:
            q = self._quiet.setdefault(write.ref, _Quiet())
            if write.changes:
                q.status_only += 1
            else:
                q.ownership_only += 1
            q.writers.update(write.writers)
        found = []
        for c in write.changes:
            w = c.writer
            if w is None:
                continue
            h = self._fields.setdefault((write.ref, c.path), _History())
            if h.last is not None and h.last != w:
                h.flips += 1
            h.last = w
            h.writes[w] = h.writes.get(w, 0) + 1
            h.values[w] = c.new
            if not h.reported and h.flips >= self.threshold and len(h.writes) >= 2:
                h.reported = True
                found.append(self._fight(write.ref, c.path, h))
        return found

    def forget(self, ref: ObjectRef) -> None:
        """The object was deleted: a new one of the same name starts afresh."""
        for k in [k for k in self._fields if k[0] == ref]:
            del self._fields[k]
        self._quiet.pop(ref, None)

    @staticmethod
    def _fight(ref: ObjectRef, path: Path, h: _History) -> Fight:
        writers = tuple(FightWriter(w, h.values[w], n) for w, n in sorted(h.writes.items(), key=lambda x: x[0]))
        return Fight(ref, path, h.flips, writers)

    def fights(self) -> list[Fight]:
        """Every fight found, with its counts so far."""
        return [self._fight(ref, path, h) for (ref, path), h in self._fields.items() if h.reported]

    def churn(self) -> list[Churn]:
        out = []
        for ref, q in self._quiet.items():
            n = q.status_only + q.ownership_only
            if n >= self.churn_threshold:
                out.append(Churn(ref, n, q.status_only, q.ownership_only, tuple(sorted(q.writers))))
        return out


def _target(ref: ObjectRef) -> str:
    ns = f" -n {shlex.quote(ref.namespace)}" if ref.namespace else ""
    return f"{shlex.quote(ref.resource_name)}{ns}"


def remedy(fight: Fight) -> Remedy:
    """The way out of a fight, with the tool's command when it has one.

    * a client-side ``kubectl apply`` loop against any other writer: the loop sets the field back
      because its manifest and last-applied annotation hold it — forget it there
      (``strip-last-applied --field``) and drop it from the manifest;
    * a server-side applier (forced: an Apply takes a field from an Update writer only with force)
      against a subresource writer (``/scale``): drop the field from the manifest — the tool never
      moves a subresource's Update entry into an Apply entry (docs/cookbook.md);
    * a server-side applier against one controller (Update) of another name: give the field to the
      controller (``handover --field PATH --to CONTROLLER``) and drop it from the applier's manifest
      — dropped alone, the next apply deletes it whenever the applier alone owns it;
    * otherwise (imperative writers, several appliers): no ownership change ends it; one of the
      writers has to stop.
    """
    writers = [fw.writer for fw in fight.writers]
    path = shlex.quote(fight.path_text)
    csa = [w for w in writers if w.manager == KUBECTL_CLIENT_SIDE_APPLY and w.operation == UPDATE and not w.subresource]
    others = [w for w in writers if w not in csa]
    if csa and others:
        return Remedy(
            f"{csa[0].label()} sets {fight.path_text} back on every 'kubectl apply' (it is in the manifest and "
            f"the last-applied annotation): forget it there and drop it from the manifest, so that "
            f"{', '.join(w.label() for w in others)} keeps it",
            (f"kubectl fieldown strip-last-applied {_target(fight.ref)} --field {path}",))
    appliers = [w for w in writers if w.operation == APPLY]
    updaters = [w for w in writers if w.operation == UPDATE]
    if len(appliers) == 1 and updaters:
        applier = appliers[0]
        if any(u.subresource for u in updaters):
            # the tool never moves a /scale (or /status) Update entry into an Apply entry: the scaler
            # keeps the field by writing it; only the manifest can let go (docs/cookbook.md 9, 12)
            return Remedy(
                f"{applier.label()} applies {fight.path_text} with force against "
                f"{', '.join(w.label() for w in updaters)}: drop it from {applier.manager}'s manifest after the "
                "other writer's next write (dropped while the applier alone owns it, the next apply deletes it)")
        to = updaters[0].manager
        commands = (f"kubectl fieldown handover {_target(fight.ref)} --field {path} --to {shlex.quote(to)}",) \
            if len({u.manager for u in updaters}) == 1 and to and to != applier.manager else ()
        return Remedy(
            f"{applier.label()} applies {fight.path_text} with force against "
            f"{', '.join(w.label() for w in updaters)}: "
            + (f"hand the field over to {to} and drop it from {applier.manager}'s manifest (dropped alone, "
               "the next apply deletes it whenever the applier alone owns it)" if commands
               else f"drop it from {applier.manager}'s manifest after another writer's next write (dropped while "
                    "the applier alone owns it, the next apply deletes it)"),
            commands)
    return Remedy(f"{' and '.join(w.label() for w in writers)} keep setting {fight.path_text}: no ownership change "
                  "ends this, one of them has to stop writing it")
