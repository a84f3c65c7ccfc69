"""The one fix of an audited object: for the applier the user names, or the one in use.

The fix is chosen and verified by :func:`kubectl_fieldown.remedies.choose.choose_fix` (the fix's
requests and then the applier's own request sequence, on the engine; nothing the user did not ask
to change may change). Objects of one pipeline tend to be alike, so a verified fix is remembered
for the next object whose content is the same but for its name (:func:`_shape`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..appliers import Applier, ApplierKind
from ..base.value import TOO_DEEP
from ..fieldpath import path_string
from ..ownership.managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsError
from ..remedies.choose import Fix, choose_fix, only_its_own, stays
from ..remedies.commands import MigrateFor, MigrateToServerSide, checked_applier
from ..remedies.intent import Intent
from ..remedies.manifests import detected_applier as detect
from ..remedies.manifests import without_paths
from .context import object_key, object_rules
from .findings import Finding, ObjectFix
from .rules import ObjectFacts

if TYPE_CHECKING:
    from ..fieldmanager import ResourceRules
    from . import AuditContext

__all__ = ["detected_applier", "object_fix"]

#: fixes remembered by object shape at most (the objects of one pipeline share one)
MEMO_LIMIT = 256

#: the memory's key of the fixes of objects only their applier wrote (:func:`_fix_of`)
_OWN = "only its own"

#: findings that need the last-applied annotation gone
_ANNOTATION_MUST_GO = frozenset({"secret-last-applied", "last-applied-size"})


def detected_applier(f: ObjectFacts) -> Applier | None:
    """The applier in use (:func:`kubectl_fieldown.remedies.manifests.detected_applier`)."""
    return detect(f.obj)


class _TooDeep(Exception):
    """The object is nested deeper than the engine analyses (:attr:`ObjectFacts.too_deep`)."""


def object_fix(f: ObjectFacts, findings: Sequence[Finding], ctx: AuditContext) -> ObjectFix:
    why: str | None = None
    try:
        fix = _fix_of(f, findings, ctx)
    except ManagedFieldsError as e:
        # anyone who may write the object can make its managedFields unreadable: that object gets no
        # fix, and the audit of the others goes on
        why = f"{e}: no fix can be checked"
    except _TooDeep:
        why = f"{TOO_DEEP}: no fix can be checked"
    if why is not None:
        return ObjectFix(f.resource, f.name, f.namespace, ctx.applier.describe() if ctx.applier else "",
                         ctx.applier is not None, command=None, verified=False, problems=(why,))
    if ctx.connection and fix.runnable:
        # run as printed, the command reaches the cluster this object was audited in
        return fix.replace(connection=ctx.connection)
    return fix


def _fix_of(f: ObjectFacts, findings: Sequence[Finding], ctx: AuditContext) -> ObjectFix:
    named = ctx.applier is not None
    applier = ctx.applier or detected_applier(f)

    def fix(**kw: Any) -> ObjectFix:
        return ObjectFix(f.resource, f.name, f.namespace, applier.describe() if applier else "", named, **kw)

    if applier is None:
        return fix(command=None, verified=False, problems=(
            "no applier manages this object (controllers only): name the one that will with --applier",))
    rules = object_rules(ctx, f.obj)
    if rules is None:
        return fix(command=None, verified=False, problems=(
            f"no schema is known for {f.kind} {f.api_version}: a fix cannot be checked",))
    manifest = ctx.manifests.get(object_key(f.obj)) if ctx.manifests else None
    drop_la = any(x.id in _ANNOTATION_MUST_GO for x in findings)
    key = None
    if manifest is None and not drop_la and only_its_own(f.obj, applier):
        # nothing to simulate (decided from the entries' names alone, at any depth): the fix says the
        # same of every such object of the applier but for whose it is, so it is made once
        own_key = (_OWN, applier, named, _suggests_applier(applier, named, findings))
        own = ctx.memo.get(own_key)
        if own is None:
            if len(ctx.memo) >= MEMO_LIMIT:
                ctx.memo.clear()
            own = ctx.memo[own_key] = _object_fix(f, applier, named, choose_fix(f.obj, rules, applier, now=ctx.now),
                                                  findings)
        return own if (own.resource, own.name, own.namespace) == (f.resource, f.name, f.namespace) else \
            own.replace(resource=f.resource, name=f.name, namespace=f.namespace)
    # what follows walks the whole object (its shape, the engine's simulations): a walk of its depth
    # first, here rather than for every object (a sixth of the audit of one that needs no simulation)
    if f.too_deep:
        raise _TooDeep
    if manifest is None:
        key = (applier, f.api_version, f.kind, drop_la, _shape(f.obj))
        remembered = ctx.memo.get(key)
        if remembered is not None:
            return _object_fix(f, applier, named, remembered, findings)
    manifest_file = ctx.manifest_files.get(object_key(f.obj)) if manifest is not None else None
    played = f.predicted
    alone_run = played[2] if played is not None and played[0] is applier and played[1] is manifest else None
    chosen = choose_fix(f.obj, rules, applier, now=ctx.now, manifest=manifest, drop_last_applied=drop_la,
                        reset_fields=rules.reset(""), autoscalers=ctx.autoscaler_managers,
                        manifest_in_command=manifest_file is not None, alone_run=alone_run)
    if key is not None:
        if len(ctx.memo) >= MEMO_LIMIT:
            # bounded: a shape is the whole object but for its identity, so objects that differ in
            # any value never hit, and a remembered fix holds its simulated objects (tens of KB)
            ctx.memo.clear()
        ctx.memo[key] = chosen
    return _object_fix(f, applier, named, chosen, findings, manifest, rules, manifest_file)


def _object_fix(f: ObjectFacts, applier: Applier, named: bool, chosen: Fix, findings: Sequence[Finding],
                manifest: Mapping[str, Any] | None = None, rules: ResourceRules | None = None,
                manifest_file: str | None = None) -> ObjectFix:
    notes: list[str] = []
    described = sys.intern(applier.describe())
    problems = tuple(chosen.verification.problems()) + ((chosen.refusal,) if chosen.refusal else ())
    v = chosen.verification
    inferred = tuple(path_string(p) for p in v.dropped_removed if v.intent is not None and v.intent.inferred_set(p))
    root = rules.root if rules is not None else None
    latest = _superseded_by(v.intent, chosen, f.obj, applier, manifest, root) \
        if v.intent is not None and v.dropped_removed else None
    superseded = tuple(path_string(p) for p in v.dropped_removed if latest is not None
                       and latest.superseded_set(p) and path_string(p) not in inferred)
    if chosen.ok and chosen.command is None and not chosen.stays():
        if manifest is not None and (inferred or superseded):
            # the deletions may not be what the user means: no word here may call them kept or asked
            notes.append(f"no command to run, but {described}'s next apply deletes "
                         f"{', '.join((*inferred, *superseded))}: add them to the manifest if they are still wanted")
        else:
            notes.append(sys.intern(f"nothing to run: {described} keeps every value on its own"
                                    + (" once the fields above leave the manifest" if chosen.drop else "")))
    if _suggests_applier(applier, named, findings):
        notes.append("to plan the switch to server-side apply, audit with --applier (kubectl, argocd, flux, helm, ssa)")
    for p, owners in chosen.retained:
        notes.append(f"{path_string(p)} stays co-owned by {', '.join(owners)}: dropping it from the manifest later "
                     "will not remove it")
    if chosen.ok:
        intent = chosen.verification.intent
        for p, owners in chosen.verification.dropped_kept:
            who = ", ".join(owners) or "nobody"
            if intent is not None and intent.others_set(p):
                notes.append(f"{path_string(p)} left the manifest and keeps its value: "
                             f"{', '.join(intent.other_owners(p)) or who} also set it (owned by {who} afterwards)")
            else:
                notes.append(f"{path_string(p)} left the manifest but stays, owned by {who}: the next apply does "
                             "not delete it, and no later apply will")
    after = tuple((path_string(p), owners) for p, owners in chosen.stays())
    unclaimed = tuple((path_string(p), owners) for p, owners in chosen.unclaimed(
        f.obj, without_paths(manifest, chosen.drop), rules)) if manifest is not None and rules is not None else ()
    alone: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if not after and chosen.ok and chosen.command is not None and chosen.alone is not None:
        alone = tuple((path_string(p), owners) for p, owners in stays(chosen.alone))
    args: tuple[str, ...] = ()
    if chosen.command is not None and chosen.ok:
        args = tuple(chosen.command.args())
        default = checked_applier(chosen.command, f.obj)
        if not isinstance(chosen.command, MigrateFor) and (default is None or default.spec() != applier.spec()):
            # run as printed, the command checks the next apply of the applier this fix was verified for
            args += ("--applier", applier.spec())
    return ObjectFix(
        f.resource, f.name, f.namespace, described, named,
        command=chosen.command.name if chosen.command is not None and chosen.ok else None,
        args=args,
        drop=tuple(path_string(p) for p in chosen.drop),
        verified=chosen.ok, problems=problems if not chosen.ok else (), notes=tuple(notes),
        at_risk=_at_risk(chosen, findings), stays=after, stays_alone=alone, unclaimed=unclaimed,
        inferred_deletions=inferred if manifest is not None else (),
        superseded_deletions=superseded if manifest is not None else (),
        manifest_file=manifest_file)


def _suggests_applier(applier: Applier, named: bool, findings: Sequence[Finding]) -> bool:
    """The fix of an object kubectl applies client-side, with no applier named, tells how to plan the
    switch to server-side apply (the audit's purpose)."""
    return not named and applier.kind is ApplierKind.kubectl_client_side and any(
        x.id in ("client-side-apply", "mixed-appliers", "secret-last-applied", "last-applied-size") for x in findings)


def _superseded_by(intent: Intent, chosen: Fix, live: Mapping[str, Any], applier: Applier,
                   manifest: Mapping[str, Any] | None, root: Any) -> Intent:
    """The intent whose latest configuration counts the Apply entries the fix folds into the applier:
    by folding them the fix takes their configuration as the applier's (a pipeline that moved from
    one manager to another), so what they did not set is what its latest manifest dropped."""
    cmd = chosen.command if chosen.ok else None
    folded = cmd.sources if isinstance(cmd, MigrateToServerSide) else ()
    if not folded or root is None:
        return intent
    return Intent.of(live, applier, manifest, root, also=folded)


def _at_risk(chosen: Fix, findings: Sequence[Finding]) -> tuple[str, ...]:
    """What the next apply changes that nobody asked for, when no candidate keeps every value (the
    best one is the applier's apply alone unless a command did better). A failing apply that
    ``predicted-conflict`` already reports is not repeated."""
    if chosen.ok or chosen.refusal:
        return ()
    v = chosen.verification
    if v.run is None and v.fix_error is None:
        return ()  # nothing was simulated (no manifest is known)
    out = tuple(v.problems())
    if any(x.id == "predicted-conflict" for x in findings) and v.apply_error is not None and not v.unexpected \
            and not v.fix_changes and v.fix_error is None:
        return ()
    return out


_VOLATILE = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "selfLink",
             "generateName")


def _shape(obj: Mapping[str, Any]) -> str:
    """The object as a key that ignores what differs between copies of one manifest: its identity,
    bookkeeping and times (the fix does not depend on them)."""
    md = obj.get("metadata") or {}
    meta = {k: v for k, v in md.items() if k not in _VOLATILE and k != "managedFields"}
    entries = [{k: v for k, v in e.items() if k != "time"} for e in md.get("managedFields") or ()
               if isinstance(e, Mapping)]
    ann = meta.get("annotations")
    if isinstance(ann, Mapping) and isinstance(ann.get(LAST_APPLIED_ANNOTATION), str):
        try:
            la = json.loads(ann[LAST_APPLIED_ANNOTATION])
            if isinstance(la, dict) and isinstance(la.get("metadata"), dict):
                la["metadata"] = {k: v for k, v in la["metadata"].items() if k not in ("name", "namespace")}
            meta["annotations"] = {**ann, LAST_APPLIED_ANNOTATION: la}
        except ValueError:
            pass
    body = {k: v for k, v in obj.items() if k != "metadata"}
    return json.dumps([body, meta, entries], sort_keys=True, default=str)
