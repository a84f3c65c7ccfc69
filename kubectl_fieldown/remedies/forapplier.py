"""How ``migrate --for APPLIER`` differs from the applier's own migration at its first sync (pure).

The tool's migration moves only the fields the applier's manifest sets and never a subresource
entry; the applier's own (csaupgrade, Flux's field-manager cleanup) moves everything its sources
own. Both are played on the engine, each followed by the applier's sync, and the values and errors
that differ are told in the plan's notes, so the user sees why the tool's migration is not a
byte-for-byte copy of the applier's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..appliers import Applier, run_applier
from ..base.redact import scrub
from ..base.value import values_equal
from ..fieldmanager import ResourceRules
from ..fieldpath.lookup import MISSING, value_at
from .verify import ValueChange, Verification, value_changes

__all__ = ["own_migration_notes"]


def own_migration_notes(live: Mapping[str, Any], applier: Applier, manifest: Mapping[str, Any] | None,
                        rules: ResourceRules, *, now: str, ours: Verification) -> list[str]:
    """One line per way the applier's own first sync (its migration and apply of ``manifest``) ends
    differently from this migration followed by the same sync."""
    who = applier.describe()
    if manifest is None:
        return [f"no manifest of {applier.manager} is known (give it with -f) to compare with {who}'s own migration"]
    own = run_applier(applier, live, manifest, rules, now=now)
    mine = ours.final
    notes: list[str] = []
    if not own.ok and own.error is not None and ours.apply_error is None:
        notes.append(f"{who}'s own migration would fail at its first sync ({own.error.purpose}): "
                     f"{own.error.message}; after this one it does not")
    if own.result is None or mine is None:
        return [scrub(n, ours.hidden) for n in notes]
    theirs: list[ValueChange] = value_changes(live, own.result, rules)
    for ch in theirs:
        kept = value_at(mine, ch.path)
        if kept is MISSING and ch.after is MISSING:
            continue
        if kept is not MISSING and ch.after is not MISSING and values_equal(kept, ch.after):
            continue
        verb = "delete" if ch.after is MISSING else "change"
        mine_too = ValueChange(ch.path, ch.before, kept, ch.secret)
        ending = "this one keeps it" if kept is not MISSING and ch.before is not MISSING and \
            values_equal(kept, ch.before) else f"after this one: {mine_too.describe()}"
        notes.append(f"{who}'s own migration would {verb} {ch.describe()} at its first sync; {ending}")
    # and what this one changes that the applier's own keeps: a field its own migration leaves with no
    # owner (client-go's csaupgrade drops the source entries of other apiVersions) is never pruned
    for ch in value_changes(live, mine, rules):
        own_value = value_at(own.result, ch.path)
        if own_value is MISSING or ch.before is MISSING or not values_equal(own_value, ch.before):
            continue
        if any(t.path == ch.path for t in theirs):
            continue
        verb = "deletes" if ch.after is MISSING else "changes"
        notes.append(f"this migration {verb} {ch.describe()} at the first sync; {who}'s own migration would "
                     "keep it")
    if not notes:
        notes.append(f"values after the first sync are the same as with {who}'s own migration")
    return [scrub(n, ours.hidden) for n in notes]
