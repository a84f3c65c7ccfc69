"""What a server-side apply would do to one object, explained: the ``conflicts`` analysis.

:func:`plan_apply` runs the simulation (:mod:`kubectl_fieldown.fieldmanager`) without force to
find conflicts, then — when asked to force, or when there are none — the apply that the server
would carry out, and derives what a reader needs:

* ``conflicts``: (manager, path) pairs with the live and the applied value;
* ``shared``: fields the applier will co-own with another manager afterwards;
* ``deleted``: what the apply removes from the object (top-most paths only); ``defaulted``: those of
  them the server's defaulting sets again in the same write (the schema's default);
* ``retained``: fields the applier's manifest no longer sets (it applied them before, or they are
  in the last-applied annotation) that stay because another manager still owns them — the
  client-side → server-side apply trap, where a field can no longer be deleted by editing the
  manifest;
* ``never_pruned``: fields the manifest does not set that only Update managers own (the client-side
  manager, Helm 3, imperative writers, controllers): no apply of this applier will ever remove them.

:func:`plan_run` does the same for a whole applier's request sequence (:mod:`kubectl_fieldown.appliers`):
Argo CD's migration and forced apply, Flux's cleanup, kubectl's follow-up, client-side apply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..base.record import Record
from ..fieldmanager import (
    ApplyConflict,
    FieldConflict,
    FieldManagerError,
    ResourceRules,
    WriteResult,
    comes_back_defaulted,
    simulate_apply,
)
from ..fieldpath import FIELD, KEY, FieldSet, Path, is_prefix, path_from_fields
from ..fieldpath.lookup import MISSING, Lookup
from ..ownership.managedfields import (
    APPLY,
    KUBECTL,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
    ManagedFieldsError,
    ManagerIdentity,
    decode_entries,
)
from ..typed.tofieldset import leaf_path, to_field_set

if TYPE_CHECKING:
    from ..appliers import Applier, Request


class PlannedConflict(Record):
    __slots__ = ("api_version", "applied_value", "describe", "live_value", "manager", "operation", "path",
                 "subresource")
    manager: Final[str]
    operation: Final[str]
    api_version: Final[str]
    subresource: Final[str]
    path: Final[Path]
    live_value: Final[Any]
    applied_value: Final[Any]
    describe: Final[str]
    """The manager as the server prints it: ``"helm" using apps/v1``."""

    # (a record, not a frozen dataclass: a prediction makes one per conflicting path, and a frozen
    # dataclass sets each field through object.__setattr__)
    def __init__(self, manager: str, operation: str, api_version: str, subresource: str, path: Path,
                 live_value: Any, applied_value: Any, describe: str) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.subresource = subresource
        self.path = path
        self.live_value = live_value
        self.applied_value = applied_value
        self.describe = describe


@dataclass(frozen=True)
class RetainedField:
    path: Path
    owners: tuple[str, ...]


@dataclass
class ApplyPlan:
    api_version: str
    kind: str
    namespace: str | None
    name: str
    manager: str
    forced: bool
    creates: bool
    conflicts: list[PlannedConflict] = field(default_factory=list)
    shared: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    retained: list[RetainedField] = field(default_factory=list)
    result: WriteResult | None = None
    error: FieldManagerError | None = None
    server_message: str = ""
    """The 409 message the server would print for the unforced apply (empty without conflicts)."""
    schema_source: str = ""
    schema_deduced: bool = False
    steps: list[str] = field(default_factory=list)
    """With ``kubectl_flow``: the requests kubectl would send, in order (after the first apply)."""
    never_pruned: list[RetainedField] = field(default_factory=list)
    defaulted: list[Path] = field(default_factory=list)
    """Of ``deleted``, the fields the server's defaulting sets again in the same write (the schema's
    default: owned by nobody after a server-side apply, by the client-side manager after its patch's
    null): the applier's value goes, the field stays."""
    applier: str = ""
    """:func:`plan_run`: the applier, as a person reads it."""
    requests: list[Request] = field(default_factory=list)
    """:func:`plan_run`: every request the applier sends, with the server's answer."""

    @property
    def blocked(self) -> bool:
        """The apply as requested would fail (conflicts without force, or another error)."""
        return self.result is None


def plan_apply(
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    *,
    now: str,
    force: bool = False,
    kubectl_flow: bool = False,
) -> ApplyPlan:
    """Plan one apply. With ``kubectl_flow``, predict ``kubectl apply --server-side`` (kubectl >= 1.26)
    instead of a single apply request: after a successful apply kubectl hands the last-applied
    annotation to ``kubectl-last-applied`` (manager ``kubectl`` only), moves the client-side
    manager's fields into the applier (client-go csaupgrade) and applies again — which deletes
    fields the manifest dropped that the client-side manager owned."""
    md = manifest.get("metadata") or {}
    plan = ApplyPlan(
        api_version=str(manifest.get("apiVersion", "")),
        kind=str(manifest.get("kind", "")),
        namespace=md.get("namespace") or None,
        name=str(md.get("name", "")),
        manager=manager,
        forced=force,
        creates=live is None,
        schema_source=rules.schema.source,
        schema_deduced=rules.schema.deduced,
    )
    try:
        result = simulate_apply(live, manifest, manager, rules, now=now, force=False)
    except ApplyConflict as e:
        plan.conflicts = _all_planned(e.conflicts, live, manifest)
        plan.server_message = e.message
        if not force:
            return plan
        try:
            result = simulate_apply(live, manifest, manager, rules, now=now, force=True)
        except FieldManagerError as e2:
            plan.error = e2
            return plan
    except FieldManagerError as e:
        plan.error = e
        return plan
    if kubectl_flow:
        try:
            result = _kubectl_flow(plan, live, result, manifest, manager, rules, now, force)
        except FieldManagerError as e:
            plan.error = e
            return plan
    plan.result = result
    _explain(plan, live, manifest, manager, rules, result)
    return plan


def plan_run(
    applier: Applier,
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    rules: ResourceRules,
    *,
    now: str,
) -> ApplyPlan:
    """What ``applier``'s whole request sequence does to ``live`` (see :func:`plan_apply`): the
    conflicts that stop it (or that a forced apply takes over), what it deletes, shares, leaves behind
    and never prunes, and each request it sends."""
    from ..appliers import run_applier
    from ..typed.compare import compare

    md = manifest.get("metadata") or {}
    plan = ApplyPlan(
        api_version=str(manifest.get("apiVersion", "")),
        kind=str(manifest.get("kind", "")),
        namespace=md.get("namespace") or None,
        name=str(md.get("name", "")),
        manager=applier.manager,
        forced=applier.forces,
        creates=live is None,
        schema_source=rules.schema.source,
        schema_deduced=rules.schema.deduced,
        applier=applier.describe(),
    )
    run = run_applier(applier, live, manifest, rules, now=now)
    plan.requests = list(run.requests)
    plan.steps = [r.purpose for r in run.requests]
    conflicts = run.conflicts if run.error is not None else run.taken_over
    plan.conflicts = _all_planned(conflicts, live, manifest)
    if run.error is not None:
        if run.conflicts:
            plan.server_message = run.error.message
            plan.forced = False
        else:
            err = FieldManagerError(run.error.message)
            err.status = run.error.status
            plan.error = err
        return plan
    failed = run.failure
    if failed is not None:
        err = FieldManagerError(run.failure_message)
        err.status = failed.status
        plan.error = err
        return plan
    final = run.result if run.result is not None else (dict(live) if live is not None else {})
    before = _without_mf(live) if live is not None else {}
    comparison = compare(before, _without_mf(final), rules.root)
    result = WriteResult(final, _entries(final), bool(run.writes), comparison)
    plan.result = result
    if applier.server_side:
        _explain(plan, live, manifest, applier.manager, rules, result)
    else:
        if live is not None:
            # the three-way patch's null for a field the manifest dropped: where the schema defaults the
            # field, the server sets it again in the same write, and the comparison sees a change
            in_manifest = Lookup(manifest)
            back = [p for p in comparison.modified.sorted_paths()
                    if in_manifest.at(p) is MISSING and comes_back_defaulted(final, p, rules)]
            plan.deleted = _topmost(comparison.removed.union(FieldSet(back)) if back else comparison.removed)
        plan.never_pruned = _never_pruned(result, manifest, applier.manager, rules, live)
        _defaults_back(plan, result, rules)
    return plan


def _kubectl_flow(
    plan: ApplyPlan,
    live: Mapping[str, Any] | None,
    first: WriteResult,
    manifest: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    now: str,
    force: bool,
) -> WriteResult:
    from ..appliers.csaupgrade import find_fields_owners, upgrade_managed_fields
    from ..fieldmanager import simulate_update
    from ..fieldpath import encode_fields_v1, path_from_fields
    from ..typed.compare import compare

    lac_path = FieldSet([path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)])
    obj = first.object
    md = obj.get("metadata") or {}
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if manager == KUBECTL and isinstance(la, str) and la:
        cfg_md: dict[str, Any] = {"name": md.get("name"), "annotations": {LAST_APPLIED_ANNOTATION: la}}
        if md.get("namespace"):
            cfg_md["namespace"] = md["namespace"]
        cfg = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": cfg_md}
        obj = simulate_apply(obj, cfg, KUBECTL_LAST_APPLIED, rules, now=now).object
        plan.steps.append(f"apply of the last-applied annotation by {KUBECTL_LAST_APPLIED}")
    entries = _entries(obj)
    owners = {e.manager for e in find_fields_owners(entries, UPDATE, lac_path)}
    upgraded = upgrade_managed_fields(entries, owners, manager)
    key = [(e.manager, e.operation, e.api_version, e.subresource, encode_fields_v1(e.fields)) for e in entries]
    if [(e.manager, e.operation, e.api_version, e.subresource, encode_fields_v1(e.fields)) for e in upgraded] == key:
        return WriteResult(obj, entries, first.changed, first.comparison, first.config_set)
    new = dict(obj)
    new["metadata"] = {**(obj.get("metadata") or {}), "managedFields": [e.to_dict() for e in upgraded]}
    # kubectl sends this JSON patch without a fieldManager; it changes no field, so nobody gains any
    obj = simulate_update(obj, new, KUBECTL, rules, now=now, compared=False).object
    plan.steps.append(f"csaupgrade of {', '.join(sorted(owners))} into {manager} (JSON patch of managedFields)")
    final = simulate_apply(obj, manifest, manager, rules, now=now, force=force)
    plan.steps.append(f"apply again by {manager}")
    before = _without_mf(live) if live is not None else {}
    return WriteResult(final.object, final.entries, True, compare(before, _without_mf(final.object), rules.root),
                       final.config_set)


def _without_mf(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    md = dict(out.get("metadata") or {})
    md.pop("managedFields", None)
    out["metadata"] = md
    return out


def _all_planned(conflicts: Sequence[FieldConflict], live: Mapping[str, Any] | None,
                 manifest: Mapping[str, Any]) -> list[PlannedConflict]:
    lives, manifests = (Lookup(live) if live is not None else None), Lookup(manifest)
    # a few managers with many paths each: each identity's version and words are found once
    who: dict[ManagerIdentity, tuple[str, str]] = {}
    out = []
    for c in conflicts:
        ident = c.identity
        known = who.get(ident)
        if known is None:
            known = who[ident] = (_entry_version(ident, live), ident.describe())
        lv = lives.at(c.path) if lives is not None else MISSING
        av = manifests.at(c.path)
        out.append(PlannedConflict(
            manager=ident.manager,
            operation=ident.operation,
            api_version=known[0],
            subresource=ident.subresource,
            path=c.path,
            live_value=None if lv is MISSING else lv,
            applied_value=None if av is MISSING else av,
            describe=known[1],
        ))
    return out


def _entry_version(ident: ManagerIdentity, live: Mapping[str, Any] | None) -> str:
    entry_version = ident.api_version
    if live is not None and not entry_version:
        # an Apply identity has no apiVersion: take the entry's, from the raw list (no decoding)
        for raw in (live.get("metadata") or {}).get("managedFields") or ():
            if (isinstance(raw, Mapping) and raw.get("manager") == ident.manager
                    and raw.get("operation") == ident.operation
                    and (raw.get("subresource") or "") == ident.subresource):
                entry_version = str(raw.get("apiVersion") or "")
                break
    return entry_version


def _entries(obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    return _decoded((obj.get("metadata") or {}).get("managedFields"))


def _decoded(raw: Any) -> list[ManagedFieldsEntry]:
    try:
        return decode_entries(raw)
    except ManagedFieldsError:
        return []


def _explain(
    plan: ApplyPlan,
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    result: WriteResult,
) -> None:
    mine = FieldSet()
    others: dict[str, FieldSet] = {}
    for e in result.entries:
        if e.manager == manager and e.operation == APPLY and not e.subresource:
            mine = mine.union(e.fields)
        else:
            who = e.identity.describe()
            others[who] = others.get(who, FieldSet()).union(e.fields)
    everyone_else = FieldSet()
    for s in others.values():
        everyone_else = everyone_else.union(s)
    plan.shared = list(mine.intersection(everyone_else).sorted_paths())

    if result.comparison is not None and live is not None:
        plan.deleted = _topmost(result.comparison.removed)

    before = FieldSet()
    live_entries: list[ManagedFieldsEntry] | None = None
    if live is not None:
        # decoded once, for the applier's own Apply entries here and everyone's in _never_pruned
        all_raw = (live.get("metadata") or {}).get("managedFields")
        live_entries = result.live_entries if result.live_entries is not None else _decoded(all_raw)
        if live_entries or not all_raw:
            own = [e for e in live_entries if e.manager == manager and e.operation == APPLY]
        else:  # some entry does not decode: the applier's own may still
            raw = [e for e in all_raw or () if isinstance(e, Mapping) and e.get("manager") == manager
                   and e.get("operation") == APPLY]
            own = _decoded(raw)
        for e in own:
            before = before.union(e.fields)
        la = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        # the annotation is this applier's previous manifest only for kubectl's own manager
        if manager == KUBECTL and isinstance(la, str) and la:
            try:
                la_obj = json.loads(la)
            except ValueError:
                la_obj = None
            if isinstance(la_obj, dict):
                # kubectl writes ``annotations: {}`` into the annotation; empty containers there are
                # not fields anyone set
                la_look = Lookup(la_obj)
                leaves = [p for p in to_field_set(la_obj, rules.root).leaves() if la_look.at(p) not in ({}, [])]
                before = before.union(FieldSet(leaves))
    # (a manifest applied again drops nothing: told without building the difference of two equal sets)
    dropped = FieldSet() if before.issubset(mine) else before.difference(mine).difference(STRIPPED_METADATA)
    retained = []
    deleted = set(plan.deleted)
    after = Lookup(result.object)
    for p in dropped.sorted_paths():
        if any(p[:i] in deleted for i in range(len(p) + 1)):  # under a deleted path (is_prefix of one)
            continue
        v = after.at(p)
        if v is MISSING or v == {} or _is_key_field(p):
            continue
        owners = tuple(sorted(m for m, s in others.items() if s.has(p)))
        if owners:
            retained.append(RetainedField(p, owners))
    plan.retained = retained
    listed = {r.path for r in retained}
    plan.never_pruned = [r for r in _never_pruned(result, manifest, manager, rules, live, live_entries)
                         if r.path not in listed]
    _defaults_back(plan, result, rules)


def _defaults_back(plan: ApplyPlan, result: WriteResult, rules: ResourceRules) -> None:
    """The deleted fields the server's defaulting sets again in the same write (``defaulted``): their
    schema default. A field at its default is not "never pruned" either, whoever owns it: no apply
    can remove it (the server would set it again), so there is nothing left that pruning could do."""
    plan.defaulted = [p for p in plan.deleted if comes_back_defaulted(result.object, p, rules)]
    plan.never_pruned = [r for r in plan.never_pruned if not comes_back_defaulted(result.object, r.path, rules)]


_STATUS = path_from_fields("status")


def _never_pruned(result: WriteResult, manifest: Mapping[str, Any], manager: str,
                  rules: ResourceRules, live: Mapping[str, Any] | None = None,
                  live_entries: list[ManagedFieldsEntry] | None = None) -> list[RetainedField]:
    """Fields of the result the manifest does not set that only Update managers own (main resource,
    the status aside) — ``manager``'s own Update entry included (an operator that starts applying under
    its name: its apply never prunes what its Update entry owns) — or that only an earlier applier owns
    whose Apply entry recorded this same configuration (the applier's old name, as after a switch from
    ``ci`` to ``kubectl``): no apply by ``manager`` removes them, whatever its manifest says. Fields that
    had an owner in ``live`` and have none afterwards are listed too, with no owners: the run
    dropped their owner's entry (client-go's csaupgrade drops the client-side manager's entries of
    every apiVersion but merges only those of the target's), and an unowned field is never pruned.

    ``result.config_set``, when there is one, is the set of ``manifest`` (``result`` is its apply)."""
    applied = ManagerIdentity(manager, APPLY, "", "")
    try:
        in_manifest = result.config_set
        if in_manifest is None:
            in_manifest = to_field_set(dict(manifest), rules.root)
        # what live's entries owned that the same entry no longer owns (a field no entry owns
        # afterwards was owned before only if it is in there)
        now = {e.identity: e.fields for e in result.entries}
        lost = FieldSet()
        if live is not None:
            for e in live_entries if live_entries is not None else _entries(live):
                if not e.subresource:
                    kept = now.get(e.identity)
                    if kept is None:
                        lost = lost.union(e.fields)
                    elif not e.fields.issubset(kept):  # (an entry that lost nothing: nothing to build)
                        lost = lost.union(e.fields.difference(kept))
        # every field listed had an owner, before or after: the owned paths the manifest does not set
        # are the candidates, each looked up in the result alone (a leaf there, as the set of the whole
        # object would have it, spelled as the object spells it)
        candidates = lost.difference(in_manifest)
        for e in result.entries:
            if result.config_set is not None and e.identity == applied:
                continue  # what this apply recorded: the manifest's own fields
            candidates = candidates.union(e.fields.difference(in_manifest))
        found = [p for q in candidates.sorted_paths() if (p := leaf_path(result.object, rules.root, q)) is not None]
    except ValueError:
        return []
    old_names: set[ManagerIdentity] | None = None  # decided on first need
    out: list[RetainedField] = []
    for p in found:
        if p[:1] == _STATUS or STRIPPED_METADATA.has(p) or _is_key_field(p):
            continue
        if p == _LAST_APPLIED:
            continue
        owners = [e for e in result.entries if e.fields.has(p) and not e.subresource]
        if not owners:
            if not any(e.fields.has(p) for e in result.entries) and lost.has(p):
                out.append(RetainedField(p, ()))
            continue
        if any(e.operation == APPLY for e in owners):
            if old_names is None:
                mine = in_manifest.difference(STRIPPED_METADATA).leaves()
                old_names = {e.identity for e in result.entries if e.operation == APPLY and not e.subresource
                             and e.manager not in (manager, KUBECTL_LAST_APPLIED)
                             and _same_configuration(e.fields.difference(STRIPPED_METADATA).leaves(), mine)}
            if any(e.operation == APPLY and e.identity not in old_names for e in owners):
                continue
        out.append(RetainedField(p, tuple(sorted({e.identity.describe() for e in owners}))))
    return out


_LAST_APPLIED = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)


def _same_configuration(theirs: FieldSet, mine: FieldSet) -> bool:
    """Each sets more than half of the other's fields (docs/ownership-model.md, "The user's intent")."""
    shared = len(theirs.intersection(mine))
    return shared * 2 > len(theirs) and shared * 2 > len(mine)


def _is_key_field(p: Path) -> bool:
    """``...[name="x"].name``: a key field restates its item's identity; report the item instead."""
    if len(p) < 2 or p[-1][0] != FIELD or p[-2][0] != KEY:
        return False
    return any(n == p[-1][1] for n, _ in p[-2][1])


def _topmost(paths: FieldSet) -> list[Path]:
    out: list[Path] = []
    for p in paths.sorted_paths():
        if out and is_prefix(out[-1], p):
            continue
        out.append(p)
    return out
