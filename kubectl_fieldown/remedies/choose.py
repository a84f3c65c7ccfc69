"""One verified fix per object, for the applier in use.

:func:`choose_fix` looks for the smallest remedy after which the applier's next apply keeps every
value the user did not ask to change, and after which the fields of its manifest are its own (so
that dropping one from the manifest later removes it). Candidates, in order:

* nothing at all — many appliers migrate by themselves (kubectl ``--server-side`` folds the
  client-side manager, Argo CD and Flux fold theirs) — with, where a scaler or autoscaler owns a
  field the manifest sets, the edit "drop it from the manifest" (the writer keeps it);
* for a server-side applier: ``migrate --to server-side`` folding every other owner of the
  manifest's fields (client-side manager, ``before-first-apply``, ``ancient-changes``, imperative
  writers, the applier's own Update entry, a previous applier) into the applier's Apply entry —
  only the fields its manifest sets move, so nothing else can be pruned;
* for client-side ``kubectl apply``: ``strip-last-applied`` of the fields a scaler owns, so that
  dropping them from the manifest does not delete them.

Each candidate is planned by the same code the command runs (:mod:`.commands`) and verified
(:func:`.verify.verify`); the first that keeps every value wins. When none does, the result says
why (its ``verification.problems()``), and no command is offered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..appliers import Applier, ApplierKind, ApplierRun, applier_for_manager
from ..base.globs import matches_any
from ..fieldmanager import ResourceRules
from ..fieldpath import FieldSet, Path, is_prefix, path_from_fields, path_string
from ..fieldpath.lookup import MISSING, Lookup, value_at
from ..ownership.managedfields import (
    APPLY,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
)
from ..typed.tofieldset import to_field_set
from .commands import (
    FixCommand,
    Handover,
    MigrateToClientSide,
    MigrateToServerSide,
    PlanContext,
    StripLastApplied,
    planned,
)
from .intent import Intent, annotation_is_its, configuration_fields, is_own_identity, manifest_fields
from .manifests import inferred_manifest, with_live_fields, without_paths
from .plans import LAST_APPLIED_PATH, MigrationError
from .unclaimed import entries as _entries
from .unclaimed import stays, unclaimed
from .verify import Checks, Verification

__all__ = ["AUTOSCALERS", "Fix", "choose_fix", "conflict_fix", "only_its_own", "scaled_fields", "stays", "unclaimed",
           "verify_command"]

#: Update managers that scale or size workloads without the scale subresource (writes through
#: ``/scale`` — the HorizontalPodAutoscaler — are recognised by their subresource)
AUTOSCALERS: tuple[str, ...] = ("horizontal-pod-autoscaler", "keda-operator*", "*autoscaler*", "vpa-*")

REPLICAS = path_from_fields("spec", "replicas")

#: the manager a fix hands values to when the applier's own migration would delete them (Flux folds
#: every ``kubectl*`` manager into itself): a name no applier folds
KEEPER = "manual-edits"


@dataclass
class Fix:
    """The remedy for one object: at most one command, and the fields to drop from the manifest
    (another writer owns them and keeps their values)."""

    applier: Applier
    command: FixCommand | None
    drop: tuple[Path, ...]
    verification: Verification
    retained: list[tuple[Path, tuple[str, ...]]] = field(default_factory=list)
    """Fields of the manifest still owned by others after the next apply (never pruned)."""
    refusal: str = ""
    """Why no fix can be offered for this applier (empty when one was verified)."""
    alone: Verification | None = None
    """The applier's next apply with no command run first (None when it was not a candidate)."""

    def unclaimed(self, live: Mapping[str, Any], manifest: Mapping[str, Any] | None,
                  rules: ResourceRules) -> list[tuple[Path, tuple[str, ...]]]:
        """:func:`unclaimed` after this fix and the next apply."""
        return unclaimed(live, self.verification, manifest, self.applier, rules)

    def stays(self) -> list[tuple[Path, tuple[str, ...]]]:
        """Fields only the applier's previous configuration set, dropped by the manifest, that stay after
        this fix and the next apply (with their owners afterwards): the apply does not do what the
        manifest asks."""
        return stays(self.verification)

    @property
    def ok(self) -> bool:
        return self.verification.ok and not self.refusal

    @property
    def needed(self) -> bool:
        return self.command is not None or bool(self.drop)

    def edits(self) -> list[str]:
        return [f"remove {path_string(p)} from your manifest (its writer keeps it)" for p in self.drop]


def scaled_fields(obj: Mapping[str, Any], manifest: Mapping[str, Any] | None,
                  autoscalers: Sequence[str] = AUTOSCALERS) -> list[Path]:
    """Fields a scaler owns: ``.spec.replicas`` written through ``/scale``, and whatever an
    autoscaler's Update entry owns (its ``.spec`` part). The manifest should leave them to it.

    ``replicas`` is listed even when the manifest read off the object does not set it: the applier
    lost its ownership to the scaler, which is how it disappears from the record, while the user's
    manifest most likely still sets it."""
    out: set[Path] = set()
    in_manifest = Lookup(manifest) if manifest is not None else None
    for e in _entries(obj):
        if e.subresource == "scale":
            if e.fields.has(REPLICAS):
                out.add(REPLICAS)
        elif e.operation != APPLY and matches_any(e.manager, autoscalers):
            out.update(p for p in e.fields.leaves().sorted_paths() if in_manifest is not None
                       and in_manifest.at(p) is not MISSING)
    in_obj = Lookup(obj)
    return sorted(p for p in out if p[:1] == path_from_fields("spec") and in_obj.at(p) is not MISSING)


def verify_command(
    command: FixCommand | None,
    live: Mapping[str, Any],
    rules: ResourceRules,
    ctx: PlanContext,
    applier: Applier | None,
    *,
    now: str,
    next_manifest: Mapping[str, Any] | None,
    previous_manifest: Mapping[str, Any] | None,
    keep: Sequence[Path] = (),
    played: ApplierRun | None = None,
    checks: Checks | None = None,
) -> Verification:
    """Plan ``command`` as the command would and verify it (None: no command, the apply alone;
    ``played``: that apply's run, when the caller has it; ``checks``: those made for ``live``)."""
    requests = []
    if command is not None:
        try:
            requests = planned(command, live, ctx)[1]
        except MigrationError as e:
            return Verification(None, fix_error=str(e))
    return Checks.of(checks, live, rules, now).verify(
        requests, applier=applier, next_manifest=next_manifest, previous_manifest=previous_manifest, keep=keep,
        played=played if command is None else None)


def choose_fix(
    live: Mapping[str, Any],
    rules: ResourceRules,
    applier: Applier,
    *,
    now: str,
    manifest: Mapping[str, Any] | None = None,
    drop_last_applied: bool = False,
    reset_fields: FieldSet | None = None,
    autoscalers: Sequence[str] = AUTOSCALERS,
    manifest_in_command: bool = False,
    alone_run: ApplierRun | None = None,
) -> Fix:
    """The first remedy (see the module docstring) that keeps every value; or the best failing
    one, with its problems, when none does. ``manifest`` is the one the applier will apply (``-f``);
    without it the applier is assumed to apply what it applied last. ``drop_last_applied``: the
    annotation must go (a Secret's data in clear, the size limit). ``manifest_in_command``: the
    printed command will name the manifest (``--manifest``), so it checks itself with it; else it
    plans from the object alone, and a fix must hold that way too. ``alone_run``: the applier's run for
    ``manifest`` on ``live``, played already (audit's ``predicted-conflict``)."""
    if manifest is None and not drop_last_applied and only_its_own(live, applier):
        # the applier re-applying what it applied to an object nobody else wrote changes nothing:
        # no simulation needed (most objects of a fleet audit are like this)
        return Fix(applier, None, (), Verification(dict(live)))
    root = rules.root
    previous = inferred_manifest(live, applier, root, manifest)
    nxt = manifest if manifest is not None else previous
    in_nxt = Lookup(nxt) if nxt is not None else None
    drop = tuple(p for p in scaled_fields(live, nxt, autoscalers)
                 # client-side apply, and a manifest named with -f, only touch what the manifest sets
                 if (applier.server_side and manifest is None) or (in_nxt is not None and in_nxt.at(p) is not MISSING))
    nxt2 = without_paths(nxt, drop) if nxt is not None else None
    ctx = PlanContext(root, reset_fields, manifest)
    has_la = isinstance(((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION), str)

    candidates: list[FixCommand | None] = []
    if applier.kind is ApplierKind.kubectl_client_side:
        if drop_last_applied and has_la:
            return Fix(applier, None, drop, Verification(dict(live)), refusal=(
                "client-side kubectl apply needs the last-applied annotation: switch this object to server-side "
                "apply (plan it with --applier kubectl)"))
        candidates.append(None)
        # what a scaler owns leaves the annotation, so that the three-way patch never deletes it: the
        # fields the manifest sets (they also leave the manifest) and the ones it already dropped
        in_la = tuple(p for p in scaled_fields(live, previous, autoscalers)
                      if previous is not None and value_at(previous, p) is not MISSING)
        strip = tuple(dict.fromkeys((*drop, *in_la)))
        if strip and has_la:
            candidates.append(StripLastApplied(strip))
        appliers = sorted({e.manager for e in _entries(live) if e.operation == APPLY and not e.subresource
                           and e.manager != KUBECTL_LAST_APPLIED})
        if len(appliers) == 1:
            # back from server-side apply: the annotation is rebuilt from what that applier applied, so
            # that plain kubectl apply can prune what the manifest drops (without the annotation it
            # never prunes anything: that comes first)
            back = MigrateToClientSide(appliers[0])
            if has_la:
                candidates.append(back)
            else:
                candidates.insert(0, back)
    else:
        if not (drop_last_applied and has_la):
            candidates.append(None)
        sources = _co_owners(live, applier, nxt2, previous, root, autoscalers)
        keep_la: bool | None = False if drop_last_applied and has_la else None
        if sources or keep_la is False:
            candidates.append(MigrateToServerSide(tuple(sources) or (KUBECTL_CLIENT_SIDE_APPLY,), applier.manager,
                                                  keep_la))
        stale = [s for s in sources if _stale(s, applier)]
        if stale and stale != sources:
            candidates.append(MigrateToServerSide(tuple(stale), applier.manager, keep_la))
        own_sources = [s for s in sources if _only_own(live, s, applier, nxt2, root)]
        if own_sources and nxt2 is not None and not all(_only_own(live, s, applier, None, root) for s in own_sources):
            # the applier's old names, known as such only from the manifest it applies next: the printed
            # command, planned without -f, says it (--all-fields), so that it moves them whole too
            candidates.append(MigrateToServerSide(tuple(own_sources), applier.manager, keep_la, all_fields=True))

    best: Fix | None = None
    alone: Verification | None = None
    checks = Checks(live, rules, now)
    tried: list[FixCommand | None] = []
    queue = list(candidates)
    while queue:
        cand = queue.pop(0)
        if cand in tried:
            continue
        tried.append(cand)
        if cand is None and nxt2 is None:
            continue  # no manifest to play (the refusal below): "it keeps every value" would be a guess
        prev = previous
        if isinstance(cand, MigrateToClientSide):
            # the annotation it writes records what that applier applied: the manifest before the change
            prev = inferred_manifest(live, applier_for_manager(cand.manager), root) or previous
        v = verify_command(cand, live, rules, ctx, applier, now=now, next_manifest=nxt2, previous_manifest=prev,
                           keep=drop, played=alone_run if manifest is not None and not drop else None, checks=checks)
        if manifest is not None and cand is not None and v.ok:
            if manifest_in_command:
                # run as printed, the command checks itself with the same manifest, its own way
                from .writeplan import command_plan  # built on this module (migrate --for's alternative)

                own = command_plan(cand, live, ctx, rules, now=now, applier=applier, checks=checks).verification or v
                v = own if not own.ok else v
            else:
                # the printed command plans without -f: it must keep every value on its own terms, and
                # then the applier applies the manifest the user gave — which is what will happen, so
                # that run is the verdict
                # as the command checks itself: with the manifest it reads off the object
                bare_previous = inferred_manifest(live, applier, root)
                own_next = without_paths(bare_previous, drop) if bare_previous is not None else None
                own_keep: tuple[Path, ...] = drop
                if isinstance(cand, Handover) and own_next is not None:
                    if cand.to == applier.manager:
                        # as the handover command checks it: the applier's manifest sets them from now on
                        own_next = with_live_fields(own_next, live, cand.paths)
                    else:
                        # handed to another writer: the applier's manifest leaves them out, their values stay
                        own_keep = (*drop, *cand.paths)
                        own_next = without_paths(own_next, cand.paths)
                own = verify_command(cand, live, rules, PlanContext(root, reset_fields, None), applier, now=now,
                                     next_manifest=own_next, previous_manifest=bare_previous, keep=own_keep)
                if own.ok:
                    own = verify_command(cand, live, rules, PlanContext(root, reset_fields, None), applier,
                                         now=now, next_manifest=nxt2, previous_manifest=prev, keep=drop)
                v = own
            if not own.ok:
                if isinstance(cand, MigrateToServerSide) and nxt2 is not None:
                    # without -f the command moves only what the applier applied before, and the
                    # manifest sets more of the sources' fields: those fields are handed to the
                    # applier instead (its manifest sets them from now on)
                    # (and the fields of its own previous identities, so that what its manifest
                    # dropped is its own to delete)
                    wanted = sorted(set(_owned_and_set(live, cand.sources, nxt2))
                                    | set(_own_leaves(live, cand.sources, applier, nxt2, root)))
                    if wanted:
                        queue.insert(0, Handover(tuple(wanted), applier.manager))
        retained = _retained(v, nxt2, applier, root)
        if cand is None and alone is None:
            alone = v
        fix = Fix(applier, cand, drop, v, retained, alone=alone)
        if v.ok and not retained and not _stays(v):
            return fix
        if cand is None and nxt2 is not None:
            # values the applier's own sequence would delete although its manifest never set them (Flux
            # folds every kubectl* manager, kubectl label's included): a manager it leaves alone keeps them
            in_nxt2 = Lookup(nxt2)
            lost = _lost_leaves(live, [c.path for c in v.unexpected if c.kind == "deleted"
                                       and in_nxt2.at(c.path) is MISSING and not _under_any(c.path, drop)], root)
            if lost:
                # client-side apply's own remedy (strip-last-applied of a scaler's field) comes first
                queue.insert(len(queue) if applier.kind is ApplierKind.kubectl_client_side else 0,
                             Handover(tuple(lost), KEEPER))
        if best is None or (v.ok and (not best.ok or _left(fix) < _left(best))):
            best = fix
    if best is None:
        why = f"nothing on the object records what {applier.describe()} applied (it may never have applied it): " \
              "its next apply cannot be checked; name the manifest it will apply with -f" if nxt2 is None else ""
        return Fix(applier, None, drop, Verification(dict(live)), refusal=why)
    best.alone = alone
    return best


def _own_leaves(live: Mapping[str, Any], sources: Sequence[str], applier: Applier, nxt: Mapping[str, Any],
                root: Any) -> list[Path]:
    """The live leaves that sources which are the applier's own previous identities set (the
    client-side manager: its annotation's fields)."""
    own = [s for s in sources if _only_own(live, s, applier, nxt, root)]
    if not own:
        return []
    intent = Intent.of(live, applier, nxt, root)
    try:
        live_set = to_field_set(live, root)
    except ValueError:
        return []
    out: set[Path] = set()
    for e in _entries(live):
        if not e.subresource and matches_any(e.manager, own):
            out.update(p for p in e.fields.intersection(intent.own).intersection(live_set).leaves().sorted_paths()
                       if p[:1] != path_from_fields("metadata") or p[:2] in (
                           path_from_fields("metadata", "labels"), path_from_fields("metadata", "annotations")))
    return sorted(p for p in out if p != LAST_APPLIED_PATH and p != path_from_fields("metadata", "annotations"))


def _only_own(live: Mapping[str, Any], source: str, applier: Applier, nxt: Mapping[str, Any] | None,
              root: Any) -> bool:
    """Every main-resource entry of ``source`` is one of the applier's own previous identities
    (:mod:`.intent`), judged with the manifest it applies next (None: without one)."""
    its = annotation_is_its(live, applier, nxt, root)
    mine = manifest_fields(nxt, root)
    found = [e for e in _entries(live) if not e.subresource and matches_any(e.manager, (source,))]
    peers = _entries(live)
    return bool(found) and all(is_own_identity(e, applier, its, (), mine, peers) for e in found)


def _stays(v: Verification) -> list[Path]:
    return [p for p, _ in stays(v)]


def _left(fix: Fix) -> int:
    return len(fix.retained) + len(_stays(fix.verification))


#: appliers whose re-apply of their own manifest sends nothing but that apply (Flux's cleanup patch
#: may remove annotations and labels, so it is always simulated)
_PLAIN_REAPPLY = frozenset({ApplierKind.kubectl, ApplierKind.kubectl_client_side, ApplierKind.ssa,
                            ApplierKind.argocd, ApplierKind.helm})


def only_its_own(live: Mapping[str, Any], applier: Applier) -> bool:
    """Every managedFields entry is the applier's own record of its manifest: its Apply entry (and
    kubectl's annotation entry), or client-side apply's Update entry — nothing to migrate, nobody
    to conflict with, no field anyone else set. Reads only the entries' names (no FieldsV1)."""
    if applier.kind not in _PLAIN_REAPPLY:
        return False
    entries = (live.get("metadata") or {}).get("managedFields")
    if not isinstance(entries, list) or not entries:
        return False
    for e in entries:
        if not isinstance(e, Mapping) or e.get("subresource"):
            return False
        manager, operation = e.get("manager"), e.get("operation")
        if applier.kind is ApplierKind.kubectl_client_side:
            if not (manager == KUBECTL_CLIENT_SIDE_APPLY and operation == "Update"):
                return False
        elif operation != APPLY or (manager != applier.manager and not (
                applier.kind is ApplierKind.kubectl and manager == KUBECTL_LAST_APPLIED)):
            return False
    return True


def _owned_and_set(live: Mapping[str, Any], sources: Sequence[str], manifest: Mapping[str, Any]) -> list[Path]:
    """The leaves the source managers own on the main resource that the manifest sets."""
    out: set[Path] = set()
    look = Lookup(manifest)
    for e in _entries(live):
        if not e.subresource and matches_any(e.manager, sources):
            out.update(p for p in e.fields.leaves().sorted_paths() if look.at(p) is not MISSING)
    return sorted(out)


def _under_any(p: Path, prefixes: Sequence[Path]) -> bool:
    return any(is_prefix(q, p) or is_prefix(p, q) for q in prefixes)


def _lost_leaves(live: Mapping[str, Any], paths: Sequence[Path], root: Any) -> list[Path]:
    """The fields set at or below ``paths`` (a deleted map is handed over key by key)."""
    try:
        live_set = to_field_set(live, root)
    except ValueError:
        return list(paths)
    out: list[Path] = []
    for p in paths:
        below = [p + q for q in live_set.descend(p).leaves().sorted_paths()]
        out.extend(below or [p])
    return out


def _co_owners(live: Mapping[str, Any], applier: Applier, nxt: Mapping[str, Any] | None,
               previous: Mapping[str, Any] | None, root: Any, autoscalers: Sequence[str]) -> list[str]:
    """Managers (other than the applier's Apply entry, ``kubectl-last-applied`` and subresource
    writers) that own fields of the applier's manifest, before or after: folding them into the
    applier makes those fields its own."""
    fields: FieldSet | None = None  # built for the first entry that could be a co-owner (often none is)
    out: list[str] = []
    for e in _entries(live):
        if e.subresource or e.manager == KUBECTL_LAST_APPLIED:
            continue
        if e.manager == applier.manager and e.operation == APPLY:
            continue
        if matches_any(e.manager, autoscalers):
            continue
        if fields is None:
            fields = FieldSet()
            for doc in (nxt, previous):
                fs = configuration_fields(doc, root)
                if fs is not None:
                    fields = fields.union(fs)
        if not e.fields.intersects(fields):
            continue
        name = _glob_literal(e.manager)
        if name not in out:
            out.append(name)
    return out


def _glob_literal(name: str) -> str:
    if "*" not in name and "?" not in name and "[" not in name:
        return name  # a manager's name is almost never a pattern (nothing to escape)
    return re.sub(r"([*?\[])", r"[\1]", name)


_STALE = ("kubectl-client-side-apply", "before-first-apply", "ancient-changes", "kubectl", "kubectl-*")


def _stale(source: str, applier: Applier) -> bool:
    return source == applier.manager or matches_any(source, _STALE)


def _retained(v: Verification, nxt: Mapping[str, Any] | None, applier: Applier,
              root: Any) -> list[tuple[Path, tuple[str, ...]]]:
    """Fields the manifest sets that others still own after the next apply: dropping them from the
    manifest later would not remove them. Scalers' fields are not counted (they are dropped)."""
    final = v.final
    if final is None or nxt is None or applier.kind is ApplierKind.kubectl_client_side:
        return []
    fields = configuration_fields(nxt, root)
    if fields is None:
        return []
    leaves = fields.leaves()
    owners: dict[Path, set[str]] = {}
    for e in _entries(final):
        if not (e.manager == applier.manager and e.operation == APPLY):
            for p in leaves.intersection(e.fields).sorted_paths():
                owners.setdefault(p, set()).add(e.manager)
    # sorted paths are in document order (FieldSet.sorted_paths: element by element)
    return [(p, tuple(sorted(owners[p]))) for p in sorted(owners)]


def conflict_fix(live: Mapping[str, Any], manifest: Mapping[str, Any], rules: ResourceRules, applier: Applier,
                 owners: Sequence[str], *, now: str,
                 reset_fields: FieldSet | None = None) -> MigrateToServerSide | Handover | None:
    """A way out of conflicts with ``owners`` other than editing the manifest or forcing: fold the
    owners' entries into the applier (``migrate --to server-side``), else hand the manifest's fields
    they own to the applier (``handover``) — the first that is checked as the command checks itself
    when run (without ``-f``) and then keeps every value the manifest does not set and leaves the
    applier's apply of ``manifest`` without conflicts. Never for a scaler (its field belongs out of
    the manifest) or a writer through a subresource."""
    names = [o for o in dict.fromkeys(owners)
             if not matches_any(o, AUTOSCALERS)
             and not any(e.manager == o and e.subresource for e in _entries(live))]
    if not names or len(names) != len(set(owners)) or not applier.server_side:
        return None
    root = rules.root
    ctx = PlanContext(root, reset_fields, None)
    previous = inferred_manifest(live, applier, root, manifest)
    fold = MigrateToServerSide(tuple(_glob_literal(n) for n in names), applier.manager)
    wanted = _owned_and_set(live, [_glob_literal(n) for n in names], manifest)
    candidates: list[MigrateToServerSide | Handover] = [fold]
    if wanted:
        candidates.append(Handover(tuple(wanted), applier.manager))
    for cmd in candidates:
        own_next = previous
        if isinstance(cmd, Handover) and own_next is not None:
            own_next = with_live_fields(own_next, live, cmd.paths)
        own = verify_command(cmd, live, rules, ctx, applier, now=now, next_manifest=own_next,
                             previous_manifest=previous)
        if not own.ok:
            continue
        v = verify_command(cmd, live, rules, ctx, applier, now=now, next_manifest=manifest, previous_manifest=previous)
        if v.ok and v.run is not None and not v.run.conflicts and not v.run.taken_over:
            return cmd
    return None
