"""Pre-upgrade audit: what will hurt when a fleet switches appliers, and one verified fix per object.

:func:`audit_object` looks at one live object (a raw dict as a LIST returns it) and returns its
:class:`Finding` objects, each carrying the object's one fix (:class:`ObjectFix`); the shell
(``kubectl_fieldown.cli.audit``) streams objects through it. The catalogue of finding ids, their
severities and why is :data:`RULES` (docs/audit.md). Pure: no I/O.

* :mod:`.catalogue` — ids, severities, the managers the rules know;
* :mod:`.rules` — one function per finding, over the facts of one pass (:class:`.rules.ObjectFacts`);
* :mod:`.drift` — the last-applied annotation against the live object;
* :mod:`.fixes` — the object's applier and its verified fix.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..base.identitymemo import IdentityMemo
from ..base.objects import ObjectRef
from .catalogue import (
    ANNOTATIONS_LIMIT,
    AUTOSCALER_MANAGERS,
    IMPERATIVE_MANAGERS,
    ORDER,
    RULES,
    Rule,
    Severity,
)
from .context import AuditContext, ObjectKey, object_key, object_rules, same_object
from .drift import Drift, last_applied_drift
from .findings import Finding, ObjectFix, sort_findings, type_finding
from .rules import RULE_FUNCTIONS, ObjectFacts

__all__ = [
    "ANNOTATIONS_LIMIT",
    "AUTOSCALER_MANAGERS",
    "IMPERATIVE_MANAGERS",
    "RULES",
    "AuditContext",
    "Drift",
    "Finding",
    "ObjectFix",
    "ObjectKey",
    "Rule",
    "Severity",
    "audit_object",
    "import_fix_engine",
    "last_applied_drift",
    "object_key",
    "object_ref",
    "object_rules",
    "same_object",
    "sort_findings",
    "type_finding",
]

def object_ref(api_version: str, kind: str, name: str) -> str:
    """``widget.example.com/w1``, ``secret/s`` (kubectl resolves singular.group like the plural)."""
    return ObjectRef(api_version, kind, None, name).resource_name


def audit_object(obj: Mapping[str, Any], ctx: AuditContext) -> list[Finding]:
    """Every finding of one live object, in catalogue order (:data:`RULES`), each with the object's fix."""
    # type() checks, not isinstance(..., Mapping): objects come from JSON, and ABC checks cost more
    # than the rest of the fast path
    md = obj.get("metadata")
    if type(md) is not dict:
        return []
    facts = ObjectFacts(obj, md)
    if facts.quiet(ctx):
        return []
    # the engine reads the object, its manifest and their parts again for every candidate it plays,
    # and changes none of them in place (base/identitymemo.py)
    with IdentityMemo():
        return _findings(facts, obj, ctx)


def _findings(facts: ObjectFacts, obj: Mapping[str, Any], ctx: AuditContext) -> list[Finding]:
    out: list[Finding] = []
    for rule in RULE_FUNCTIONS:
        out.extend(rule(facts, ctx))
    if ctx.ignore:
        out = [f for f in out if f.id not in ctx.ignore]
    # an object of the -f manifests is always played: its next apply may keep what the manifest dropped
    # although no rule fires
    if not out and not (ctx.fixes and ctx.manifests and object_key(obj) in ctx.manifests):
        return out
    if len(out) > 1:
        out.sort(key=lambda f: ORDER[f.id])
    if ctx.fixes:
        fix = _fixes().object_fix(facts, out, ctx)
        if fix.at_risk and "values-at-risk" not in ctx.ignore:
            out.append(facts.finding("values-at-risk", f"no fix keeps every value for {fix.applier}: "
                                     + "; ".join(fix.at_risk), {"changes": list(fix.at_risk)}))
        if (fix.stays or fix.stays_alone) and "dropped-fields-stay" not in ctx.ignore:
            out.append(_dropped_fields_stay(facts, fix))
        if fix.inferred_deletions and "inferred-deletions" not in ctx.ignore:
            out.append(facts.finding(
                "inferred-deletions",
                f"{fix.applier}'s next apply deletes {len(fix.inferred_deletions)} field(s) the manifest no longer "
                f"sets: {', '.join(fix.inferred_deletions)}. They are taken as its own only on a record that may be "
                "another's: another writer's entry or the last-applied annotation that holds the same configuration as "
                "the manifest, or an annotation no managedFields entry records the writer of (after a reset); if "
                f"{fix.applier} is another applier next to that one, these are that one's values: apply with its "
                "manager instead, or hand them over first (kubectl fieldown handover --field PATH --to NAME)",
                {"fields": list(fix.inferred_deletions)}))
        if fix.superseded_deletions and "superseded-deletions" not in ctx.ignore:
            out.append(facts.finding(
                "superseded-deletions",
                f"{fix.applier}'s next apply deletes {len(fix.superseded_deletions)} field(s) that only an older "
                f"configuration of it set: {', '.join(fix.superseded_deletions)}. A later apply under another manager "
                "or tool, with the same configuration or part of it, no longer set them but could not prune them; "
                "the next manifest does not set them either. If they are still wanted, add them to the manifest",
                {"fields": list(fix.superseded_deletions)}))
        if fix.unclaimed and "unclaimed-fields-stay" not in ctx.ignore:
            shown = "; ".join(f"{p} ({', '.join(o) or 'no owner'})" for p, o in fix.unclaimed)
            out.append(facts.finding(
                "unclaimed-fields-stay",
                f"{fix.applier}'s next apply keeps {len(fix.unclaimed)} field(s) the manifest does not set, owned only "
                f"by an earlier configuration or by nobody: {shown}. If that was this applier (another name, another "
                "tool), the manifest dropped them and no apply will remove them: fold it (migrate --to server-side "
                "--from-manager NAME --all-fields) or delete them; if it is another writer, they keep its values",
                {"fields": [{"path": p, "owners": list(o)} for p, o in fix.unclaimed]}))
        out.sort(key=lambda f: ORDER[f.id])
        out = [f.with_fix(fix) for f in out]
    return out


def import_fix_engine() -> None:
    """Load the fixes' engine now: the shell calls this while the first pages of a LIST are on their
    way, so that the first object with a finding does not wait for it (it is ~20 ms of imports)."""
    _fixes()


@functools.cache
def _fixes() -> ModuleType:
    # the fixes (and the remedies under them) load on the first object that needs one: rendering a
    # report needs this package, not them; once loaded, no import statement runs per object
    from . import fixes

    return fixes


def _dropped_fields_stay(facts: ObjectFacts, fix: ObjectFix) -> Finding:
    """The manifest dropped fields that only the applier's previous configuration set, and its next
    apply keeps them: an error when no fix makes them go, else a warning that the fix must run first."""
    listed = fix.stays or fix.stays_alone
    shown = "; ".join(f"{p} (owned by {', '.join(o) or 'nobody'} afterwards)" for p, o in listed)
    details = {"fields": [{"path": p, "owners": list(o)} for p, o in listed], "fixed": not fix.stays}
    if fix.stays:
        return facts.finding("dropped-fields-stay", f"the manifest dropped {len(listed)} field(s) that "
                             f"{fix.applier}'s next apply keeps, and no fix makes them go: {shown}", details)
    return facts.finding("dropped-fields-stay", f"the manifest dropped {len(listed)} field(s) that {fix.applier}'s "
                         f"next apply alone keeps: {shown}; run the fix first", details, severity=Severity.warning)
