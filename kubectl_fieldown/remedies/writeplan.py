"""One write of one object, planned and checked before anything is sent (pure).

:func:`write_plan` is what every write command does to each object it reads: plan the command
(:mod:`.commands`), turn the plan into guarded requests (:mod:`.requests`), and — when the kind's
merge rules are known — play the requests and then the applier's next apply on the engine
(:mod:`.verify`). The result says what the server will record, and which values the write or the
next apply would lose: the executor refuses those unless the user allows value changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..appliers import Applier
from ..fieldmanager import ResourceRules
from ..fieldpath import FieldSet, Path, path_string
from ..fieldpath.lookup import MISSING, Lookup
from ..ownership.managedfields import APPLY, ManagedFieldsEntry, ManagedFieldsError, decode_entries
from .choose import Fix, choose_fix, scaled_fields
from .commands import (
    FixCommand,
    Handover,
    MigrateFor,
    MigrateToServerSide,
    PlanContext,
    StripLastApplied,
    planned,
)
from .forapplier import own_migration_notes
from .manifests import inferred_manifest, with_live_fields, without_paths
from .plans import Migration
from .requests import RequestFailed, WriteRequest, simulate_requests
from .verify import Checks, Verification

__all__ = ["OwnershipMove", "WritePlan", "command_plan", "handed_over", "ownership_changes", "ownership_moves",
           "write_plan"]


@dataclass
class WritePlan:
    """A plan for one object, its requests, and what the engine says of them."""

    migration: Migration
    requests: list[WriteRequest]
    verification: Verification | None = None
    """None when the kind's merge rules are not known (nothing could be simulated)."""
    applier: Applier | None = None
    problems: list[str] = field(default_factory=list)
    """Values the write or the applier's next apply would lose: the write is refused unless allowed."""
    edits: list[str] = field(default_factory=list)
    """What the user must change in the manifest for the check to hold (a scaler's field to leave out)."""
    alternative: Fix | None = None
    """For a refused ``migrate --for``: the fix that keeps every value for that applier (verified)."""

    @property
    def expected(self) -> dict[str, Any] | None:
        """The object the server should return after the requests (None: not simulated)."""
        return self.verification.fixed if self.verification is not None else None


def _has_apply_entry(obj: Mapping[str, Any], applier: Applier) -> bool:
    try:
        entries = decode_entries((obj.get("metadata") or {}).get("managedFields"))
    except ManagedFieldsError:
        return False
    return any(e.manager == applier.manager and e.operation == APPLY and not e.subresource for e in entries)


def write_plan(
    command: FixCommand,
    obj: Mapping[str, Any],
    ctx: PlanContext,
    rules: ResourceRules | None,
    *,
    now: str,
    applier: Applier | None,
    keep: Sequence[Path] = (),
    adds: Sequence[Path] = (),
    checks: Checks | None = None,
) -> WritePlan:
    """Plan ``command`` for ``obj`` and check it: the requests, then ``applier``'s next apply of the
    manifest given with ``-f`` (``ctx.manifest``) or of the one the object records for it, without
    the ``keep`` fields (handed to another writer: their values must stay), and with the ``adds`` fields
    at their live values (handed to the applier itself: its manifest sets them from now on)."""
    m, requests = planned(command, obj, ctx)
    wp = WritePlan(m, requests, applier=applier)
    if rules is None:
        return wp
    edits: list[str] = []
    previous = inferred_manifest(obj, applier, ctx.root, ctx.manifest) if applier is not None else None
    nxt = ctx.manifest if ctx.manifest is not None else previous
    if nxt is not None and ctx.manifest is None and applier is not None and isinstance(command, MigrateToServerSide) \
            and command.all_fields and command.target == applier.manager and not _has_apply_entry(obj, applier):
        # --all-fields into an applier with no configuration record of its own: the moved fields become
        # its only record, so without its manifest what it applies next is what it owns after the fold —
        # not the last-applied annotation the fold removes, which only stood in for a record it lacked
        # (else the check refuses what audit verified with the manifest). With a record of its own,
        # that record is its manifest, and the check refuses what its next apply would delete; with no
        # guess at all (no record, no annotation), there is no next apply to check, as before.
        try:
            folded = inferred_manifest(simulate_requests(obj, requests, rules, now=now), applier, ctx.root)
        except RequestFailed:
            folded = None
        if folded is not None:
            nxt = folded
    if applier is not None and nxt is not None:
        # what a scaler owns is left to it, as every fix the tool suggests says (choose_fix): the
        # next apply is checked without it, and its value must stay
        in_nxt, not_scaled = Lookup(nxt), {*adds, *keep}
        scaled = [p for p in scaled_fields(obj, nxt) if p not in not_scaled
                  and (applier.server_side or in_nxt.at(p) is not MISSING)]
        if scaled:
            keep = [*keep, *scaled]
            edits = [f"remove {path_string(p)} from your manifest (its writer keeps it)" for p in scaled]
    if nxt is not None and keep:
        nxt = without_paths(nxt, keep)
    if nxt is not None and adds:
        nxt = with_live_fields(nxt, obj, adds)
    v = Checks.of(checks, obj, rules, now).verify(requests, applier=applier if nxt is not None else None,
                                                  next_manifest=nxt, previous_manifest=previous, keep=keep)
    wp.verification = v
    wp.problems = v.problems()
    wp.edits = edits
    if isinstance(command, MigrateFor):
        m.notes.extend(own_migration_notes(obj, command.for_applier, nxt, rules, now=now, ours=v))
        if wp.problems:
            alt = choose_fix(obj, rules, command.for_applier, now=now, manifest=ctx.manifest,
                             reset_fields=ctx.reset_fields)
            if alt.ok and alt.needed and alt.command != command:
                wp.alternative = alt
    return wp


def handed_over(command: FixCommand, applier: Applier | None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The fields ``command`` hands to a writer, as its check takes them: ``(keep, adds)`` — left out
    of the applier's next manifest with their values kept (another writer has them now), or set in it
    at their live values (the applier itself took them: its manifest sets them from now on)."""
    if isinstance(command, Handover):
        if applier is not None and applier.manager == command.to:
            return (), command.paths
        return command.paths, ()
    if isinstance(command, StripLastApplied):
        return command.paths, ()
    return (), ()


def command_plan(command: FixCommand, obj: Mapping[str, Any], ctx: PlanContext, rules: ResourceRules | None, *,
                 now: str, applier: Applier | None, checks: Checks | None = None) -> WritePlan:
    """:func:`write_plan` as the command line runs it (and as audit checks a fix it prints with the
    manifest it names): the fields the command hands over are its own (:func:`handed_over`).
    ``checks``: the verifications made for ``obj`` already (choosing the fix)."""
    keep, adds = handed_over(command, applier)
    return write_plan(command, obj, ctx, rules, now=now, applier=applier, keep=keep, adds=adds, checks=checks)


def ownership_changes(before: Sequence[ManagedFieldsEntry], after: Sequence[ManagedFieldsEntry],
                      limit: int = 3) -> list[str]:
    """Who gains and who loses which fields, one line per entry that changes (a dry run's summary)."""

    def label(e: ManagedFieldsEntry) -> str:
        out = f"{e.manager} ({e.operation}" + (f", {e.api_version}" if e.operation != APPLY else "")
        return out + (f", subresource {e.subresource})" if e.subresource else ")")

    def listed(fs: FieldSet) -> str:
        paths = [path_string(p) for p in fs.leaves().sorted_paths()]
        more = f" (+{len(paths) - limit} more)" if len(paths) > limit else ""
        return ", ".join(paths[:limit]) + more

    b = {(e.manager, e.operation, e.api_version if e.operation != APPLY else "", e.subresource): e for e in before}
    a = {(e.manager, e.operation, e.api_version if e.operation != APPLY else "", e.subresource): e for e in after}
    lines: list[str] = []
    for key in sorted(set(b) | set(a)):
        old, new = b.get(key), a.get(key)
        if old is None and new is not None:
            lines.append(f"+ {label(new)} owns {listed(new.fields)}")
        elif new is None and old is not None:
            lines.append(f"- {label(old)} (owned {listed(old.fields)})")
        elif old is not None and new is not None:
            gained, lost = new.fields.difference(old.fields), old.fields.difference(new.fields)
            if gained.is_empty() and lost.is_empty():
                continue
            parts = []
            if not gained.is_empty():
                parts.append(f"gains {listed(gained)}")
            if not lost.is_empty():
                parts.append(f"loses {listed(lost)}")
            lines.append(f"~ {label(new)} {'; '.join(parts)}")
    return lines


@dataclass(frozen=True)
class OwnershipMove:
    """One field whose owners a write changes: the owners before and after, each named like
    ``kubectl-client-side-apply (Update)`` or ``kubectl (Update, scale)``; empty: nobody."""

    path: Path
    before: tuple[str, ...]
    after: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": path_string(self.path), "before": list(self.before), "after": list(self.after)}


def owner_label(e: ManagedFieldsEntry) -> str:
    return f"{e.manager} ({e.operation}" + (f", {e.subresource})" if e.subresource else ")")


def ownership_moves(before: Sequence[ManagedFieldsEntry],
                    after: Sequence[ManagedFieldsEntry]) -> list[OwnershipMove]:
    """Every field (leaf) whose set of owners differs between ``before`` and ``after``, in path
    order: a dry run's before/after, field by field."""

    def owners(entries: Sequence[ManagedFieldsEntry]) -> dict[Path, tuple[str, ...]]:
        by: dict[Path, set[str]] = {}
        for e in entries:
            for p in e.fields.leaves():
                by.setdefault(p, set()).add(owner_label(e))
        return {p: tuple(sorted(names)) for p, names in by.items()}

    old, new = owners(before), owners(after)
    every = FieldSet(set(old) | set(new))
    return [OwnershipMove(p, old.get(p, ()), new.get(p, ())) for p in every.sorted_paths()
            if old.get(p, ()) != new.get(p, ())]
