"""The conflicts analysis: what a server-side apply of one manifest does, as a report.

From an :class:`~kubectl_fieldown.conflicts.applyplan.ApplyPlan` (or each applier's request sequence) to a
:class:`ConflictReport`: conflicts in the server's order, co-owners of shared fields, a Secret's
values redacted, what ``kubectl apply --server-side`` does after the request, a checked way out of
the conflicts; and the comparison of a prediction with the server's own answer to the same apply
sent with ``dryRun=All`` (the answer comes in as data).

Pure: nothing here reads files or talks to a cluster. ``kubectl fieldown conflicts``
(:mod:`kubectl_fieldown.cli.conflicts`) fetches and decodes, :mod:`kubectl_fieldown.render.conflicts`
prints the reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..base.objects import ObjectRef, is_secret
from ..fieldpath import Path
from ..fieldpath.lookup import value_at

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..fieldmanager import ResourceRules
    from ..fieldpath import FieldSet
    from ..schema.types import KindSchema
    from .applyplan import ApplyPlan, PlannedConflict

__all__ = [
    "AGREES",
    "DEDUCED_NOTE",
    "DISAGREES",
    "UNCHECKED",
    "ConflictReport",
    "DryRunCheck",
    "KubectlFollowup",
    "OwnedPath",
    "PredictionSettings",
    "RefusalCause",
    "ServerRefusal",
    "compare_dry_run",
    "count_conflicts",
    "hinted_schema",
    "kubectl_followup",
    "predict",
    "report_from_plan",
    "server_order",
]

AGREES = "agrees"
DISAGREES = "disagrees"
UNCHECKED = "unchecked"

DEDUCED_NOTE = "schema: deduced — lists are atomic unless the live managedFields key them; pass --schema"

@dataclass(frozen=True)
class OwnedPath:
    """A path and the managers that own it, as the server prints them (``"helm" using v1``)."""

    path: Path
    owners: tuple[str, ...]


@dataclass(frozen=True)
class DryRunCheck:
    """What the server said to the same apply sent with ``dryRun=All``.

    ``outcome``: :data:`AGREES`, :data:`DISAGREES` (``detail`` says how: "predicted X, server said
    Y") or :data:`UNCHECKED` (the dry run itself failed, e.g. no patch permission; ``detail`` why)."""

    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class KubectlFollowup:
    """What ``kubectl apply --server-side`` does after the apply request on an object with
    client-side-apply history: ``managers`` (the Update managers owning the last-applied annotation)
    are merged into the applier's entry and the manifest is applied again, deleting ``deletes``;
    ``error`` is the server's message if that second apply would fail."""

    managers: tuple[str, ...]
    deletes: list[Path]
    error: str = ""


@dataclass
class ConflictReport:
    """One manifest document's predicted apply, ready to render.

    ``conflicts`` are in the server's order (managers sorted by identity JSON, each manager's paths
    in field order), with values already redacted where needed. ``result_object`` is None when the
    apply as requested fails (conflicts without force, or ``error``). ``error`` is the server's own
    message for a predicted 400/422/500 (``error_status``)."""

    api_version: str
    kind: str
    namespace: str | None
    name: str
    manager: str
    forced: bool
    creates: bool
    conflicts: list[PlannedConflict] = field(default_factory=list)
    shared: list[OwnedPath] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    retained: list[OwnedPath] = field(default_factory=list)
    result_object: dict[str, Any] | None = None
    result_managed_fields: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    error_status: int = 0
    error_reason: str = ""
    schema_source: str = ""
    schema_deduced: bool = False
    status_subresource: bool = False
    status_source: str = ""
    where: str = ""
    fold_command: list[str] = field(default_factory=list)
    """A checked way out of the conflicts (``migrate --to server-side`` folding their owners into the
    applier), as the words after ``kubectl fieldown``; empty when none is safe."""
    scaled: list[str] = field(default_factory=list)
    """Conflicting owners that are scalers: their fields belong out of the manifest."""
    dry_run: DryRunCheck | None = None
    kubectl_followup: KubectlFollowup | None = None
    """What ``kubectl apply --server-side`` does after the request (``followup`` in JSON)."""
    never_pruned: list[OwnedPath] = field(default_factory=list)
    """Fields the manifest does not set that only Update managers own: no apply removes them."""
    defaulted: list[tuple[Path, Any]] = field(default_factory=list)
    """Deleted fields the server's defaulting sets again in the same write, with the value they get
    (the schema's default)."""
    applier: str = ""
    """``--applier``: the applier whose whole request sequence this report predicts."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    runs: list[ConflictReport] = field(default_factory=list)
    """Further ``--applier`` runs of the same manifest, side by side."""

    @property
    def blocked(self) -> bool:
        return self.result_object is None

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)

    @property
    def title(self) -> str:
        return self.ref.title()

    def deletions(self) -> list[Path]:
        """Every field this run deletes: by the apply, and by kubectl's follow-up."""
        both = [*self.deleted, *(self.kubectl_followup.deletes if self.kubectl_followup is not None else ())]
        return list(dict.fromkeys(both))

    def summary(self) -> str:
        """One line: what the apply does, as a reader scanning many objects needs it."""
        n = len(self.conflicts)
        counted = count_conflicts(self.conflicts)
        if self.error:
            status = f"{self.error_status} {self.error_reason}".strip()
            text = (f"{counted} taken over, but " if n and self.forced else f"{counted}; " if n else "") + \
                f"the server would reject the apply ({status})"
        elif self.blocked:
            text = f"{counted}: the apply fails as it is"
        elif n:
            text = f"{counted}, taken over by --force-conflicts"
        else:
            text = "no conflicts"
        if self.creates:
            text = "create (not found live)" + ("" if text == "no conflicts" else f"; {text}")
        deleted = len(self.deletions())
        if deleted and not self.blocked:
            text += f"; deletes {deleted} field{'' if deleted == 1 else 's'}"
        if self.schema_deduced:
            text += f" ({DEDUCED_NOTE})"
        return text


def count_conflicts(conflicts: Sequence[PlannedConflict]) -> str:
    """``2 conflicts``; ``3 conflicts on 2 fields`` when several managers own one field (the
    server counts a conflict per manager and field, and so do we, but a reader counts fields)."""
    n = len(conflicts)
    fields = len({c.path for c in conflicts})
    counted = f"{n} conflict{'s' if n != 1 else ''}"
    return counted if fields == n else f"{counted} on {fields} field{'s' if fields != 1 else ''}"





def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else {}


# --- from a plan to a report -----------------------------------------------------------------------------------------


def _identity_json(c: PlannedConflict) -> str:
    from ..ownership.managedfields import APPLY, ManagerIdentity

    return ManagerIdentity(c.manager, c.operation, "" if c.operation == APPLY else c.api_version,
                           c.subresource).json()


def server_order(conflicts: Sequence[PlannedConflict]) -> list[PlannedConflict]:
    """Managers sorted by identity JSON (as the 409 message groups them), each manager's paths in
    the server's field order (a stable sort keeps the engine's order within a manager)."""
    return sorted(conflicts, key=_identity_json)


def _redact_conflict(c: PlannedConflict) -> PlannedConflict:
    from ..base.redact import REDACTED, is_secret_value_path

    if not is_secret_value_path(c.path):
        return c

    def hide(v: Any) -> Any:
        return None if v is None else REDACTED

    return c.replace(live_value=hide(c.live_value), applied_value=hide(c.applied_value))


def report_from_plan(
    plan: ApplyPlan,
    *,
    where: str,
    status_subresource: bool,
    status_source: str,
    show_secret_values: bool = False,
) -> ConflictReport:
    """The report of one plan: conflicts in the server's order, co-owners of shared fields, secrets
    redacted (unless asked), the result's managedFields as they appear in the object."""
    from ..base.redact import redact_secret
    from ..ownership.managedfields import APPLY

    redact = is_secret(plan.api_version, plan.kind) and not show_secret_values
    conflicts = server_order(plan.conflicts)
    if redact:
        conflicts = [_redact_conflict(c) for c in conflicts]

    shared: list[OwnedPath] = []
    result_object: dict[str, Any] | None = None
    managed: list[dict[str, Any]] = []
    if plan.result is not None:
        others = [e for e in plan.result.entries
                  if not (e.manager == plan.manager and e.operation == APPLY and not e.subresource)]
        for p in plan.shared:
            owners = tuple(sorted({e.identity.describe() for e in others if e.fields.has(p)}))
            shared.append(OwnedPath(p, owners))
        obj = plan.result.object
        mf = _metadata(obj).get("managedFields")
        managed = list(mf) if isinstance(mf, list) else []
        result_object = dict(redact_secret(obj)) if redact else obj

    err = plan.error
    return ConflictReport(
        api_version=plan.api_version,
        kind=plan.kind,
        namespace=plan.namespace,
        name=plan.name,
        manager=plan.manager,
        forced=plan.forced,
        creates=plan.creates,
        conflicts=conflicts,
        shared=shared,
        deleted=list(plan.deleted),
        retained=[OwnedPath(r.path, r.owners) for r in plan.retained],
        result_object=result_object,
        result_managed_fields=managed,
        error=err.message if err is not None else "",
        error_status=err.status if err is not None else 0,
        error_reason=(err.reason or "") if err is not None else "",
        schema_source=plan.schema_source,
        schema_deduced=plan.schema_deduced,
        status_subresource=status_subresource,
        status_source=status_source,
        where=where,
        never_pruned=[OwnedPath(r.path, r.owners) for r in plan.never_pruned],
        defaulted=[(p, value_at(result_object, p)) for p in plan.defaulted] if result_object is not None else [],
        applier=plan.applier,
        requests=[{"verb": r.verb, "manager": r.manager, "purpose": r.purpose, "status": r.status,
                   "message": r.message} for r in plan.requests],
    )


# --- analyse: what kubectl does after a successful apply --------------------------------------------


def kubectl_followup(plan: ApplyPlan, live: Mapping[str, Any] | None, manifest: Mapping[str, Any],
                     rules: ResourceRules, now: str) -> KubectlFollowup | None:
    """What ``kubectl apply --server-side`` does after a successful apply request on an object with
    client-side-apply history (``plan_apply(kubectl_flow=True)``): the ``Update`` managers that own
    the last-applied annotation are merged into the applier's entry (client-go csaupgrade) and the
    manifest is applied again, which deletes what only those managers kept. The plan itself stays
    the single apply request, which is what the server answers and what other SSA clients send.

    None when kubectl would do nothing more (no such managers, or the first apply fails)."""
    from ..fieldpath import is_prefix, path_from_fields
    from ..ownership.managedfields import LAST_APPLIED_ANNOTATION, UPDATE
    from .applyplan import plan_apply

    if plan.result is None:
        return None
    la_path = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)
    csa = sorted({e.manager for e in plan.result.entries if e.operation == UPDATE and e.fields.has(la_path)})
    if not csa:
        return None  # the common case: no second simulation
    flow = plan_apply(live, manifest, plan.manager, rules, now=now, force=plan.forced, kubectl_flow=True)
    if flow.error is not None:
        return KubectlFollowup(tuple(csa), [], error=flow.error.message)
    if not any(step.startswith("apply again") for step in flow.steps):
        return None  # csaupgrade changed nothing, so kubectl sends nothing more
    deletes = [p for p in flow.deleted if not any(is_prefix(d, p) for d in plan.deleted)]
    return KubectlFollowup(tuple(csa), deletes)


# --- the server's answer to the dry run ---------------------------------------------------------------


class RefusalCause(Protocol):
    """One ``details.causes`` entry of the server's Status (``FieldManagerConflict`` for SSA)."""

    @property
    def reason(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def manager(self) -> str | None: ...


class ServerRefusal(Protocol):
    """The server's error answer to the dry run, as data: HTTP ``code``, Status ``reason`` and
    ``message``, its causes; ``str()`` is the one line the tool prints for it
    (:class:`kubectl_fieldown.kube.errors.ApiError` is one)."""

    @property
    def code(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def server_message(self) -> str: ...
    @property
    def causes(self) -> Sequence[RefusalCause]: ...


# --- analyse: the server's dry run compared with the prediction --------------------------------------


def _entry_sets(raw: Any) -> dict[tuple[str, str, str, str], FieldSet]:
    from ..ownership.managedfields import decode_entries

    out: dict[tuple[str, str, str, str], FieldSet] = {}
    for e in decode_entries(raw):
        out[(e.manager, e.operation, e.api_version, e.subresource)] = e.fields
    return out


def _entry_label(key: tuple[str, str, str, str]) -> str:
    manager, operation, api_version, subresource = key
    sub = f", {subresource}" if subresource else ""
    return f'"{manager}" ({operation} {api_version}{sub})'


def _paths_text(paths: FieldSet, limit: int = 3) -> str:
    from ..fieldpath import path_string

    ps = [path_string(p) for p in paths.sorted_paths()]
    more = f" and {len(ps) - limit} more" if len(ps) > limit else ""
    return ", ".join(ps[:limit]) + more


def _managed_differences(predicted: Any, server: Any) -> list[str]:
    want, got = _entry_sets(predicted), _entry_sets(server)
    out: list[str] = []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            out.append(f"an entry {_entry_label(key)} the server does not write")
        elif key not in want:
            out.append(f"no entry {_entry_label(key)}, which the server writes")
        elif want[key] != got[key]:
            extra, missing = want[key].difference(got[key]), got[key].difference(want[key])
            parts = []
            if extra:
                parts.append(f"also {_paths_text(extra)}")
            if missing:
                parts.append(f"not {_paths_text(missing)}")
            out.append(f"{_entry_label(key)} owning {'; '.join(parts)}")
    return out


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    from ..base.value import value_on_one_line

    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in [*a, *(k for k in b if k not in a)]:
            d = _first_difference(a.get(k, _ABSENT), b.get(k, _ABSENT), f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    from ..base.value import values_equal

    if a is not _ABSENT and b is not _ABSENT and values_equal(a, b):
        return None
    if a is _ABSENT and b is _ABSENT:
        return None

    def show(v: Any) -> str:
        return "nothing" if v is _ABSENT else value_on_one_line(v, 40)

    return f"{path} = {show(a)}, server {show(b)}"


_ABSENT: Any = object()


def _object_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    md = _metadata(obj)
    return {"spec": obj.get("spec", _ABSENT), "metadata.labels": md.get("labels", _ABSENT),
            "metadata.annotations": md.get("annotations", _ABSENT)}


def _owned_value_difference(predicted: Mapping[str, Any], server: Mapping[str, Any]) -> str | None:
    """Built-in kinds are defaulted by Go code we do not run: compare only the owned scalars."""
    from ..base.value import value_on_one_line, values_equal
    from ..fieldpath import FieldSet, path_string
    from ..fieldpath.lookup import MISSING, Lookup

    owned = FieldSet()
    for fs in _entry_sets(_metadata(server).get("managedFields")).values():
        owned = owned.union(fs)
    in_predicted, in_server = Lookup(predicted), Lookup(server)
    for p in owned.leaves().sorted_paths():
        a, b = in_predicted.at(p), in_server.at(p)
        if isinstance(a, (Mapping, list)) and isinstance(b, (Mapping, list)):
            continue  # a container owned whole: its owned members are compared one by one
        if a is MISSING and b is MISSING:
            continue
        if a is MISSING or b is MISSING or not values_equal(a, b):
            def show(v: Any) -> str:
                return "nothing" if v is MISSING else value_on_one_line(v, 40)

            return f"{path_string(p)} = {show(a)}, server {show(b)}"
    return None


def _predicted_text(report: ConflictReport) -> str:
    from ..fieldpath import path_string

    if report.error:
        return f"a {report.error_status} {report.error_reason}".rstrip()
    if report.blocked:
        n = len(report.conflicts)
        shown = ", ".join(f"{path_string(c.path)} ({c.manager})" for c in report.conflicts[:3])
        more = f" and {n - 3} more" if n > 3 else ""
        return f"{count_conflicts(report.conflicts)}: {shown}{more}"
    return "success"


def compare_dry_run(
    report: ConflictReport,
    answer: Mapping[str, Any] | ServerRefusal,
    builtin: bool,
    predicted_object: Mapping[str, Any] | None = None,
) -> DryRunCheck:
    """Does the server's answer to the same apply (``dryRun=All``) match the prediction?

    Conflicts are compared as (manager, path) sets; a success by the managedFields path sets of
    every entry and the object's spec, labels and annotations (times, resourceVersion and
    generation are ignored). ``predicted_object`` is the unredacted result (default: the report's)."""

    predicted = _predicted_text(report)
    if isinstance(answer, Mapping):
        if report.result_object is None:
            return DryRunCheck(DISAGREES, f"predicted {predicted}, server said the apply succeeds")
        diffs = _managed_differences(report.result_managed_fields, _metadata(answer).get("managedFields"))
        mine = predicted_object if predicted_object is not None else report.result_object
        if builtin:
            obj_diff = _owned_value_difference(mine, answer)
        else:
            obj_diff = _first_difference(_object_view(mine), _object_view(answer), "")
        if obj_diff:
            diffs.append(f"predicted {obj_diff.lstrip('.')}")
        if diffs:
            return DryRunCheck(DISAGREES, f"both succeed, but the prediction has {diffs[0]}"
                                          + (f" (and {len(diffs) - 1} more differences)" if len(diffs) > 1 else ""))
        return DryRunCheck(AGREES)

    if answer.code == 403:  # Forbidden: the dry run needs the patch permission
        return DryRunCheck(UNCHECKED, f"you may not patch this object ({answer}); the prediction above "
                                      "does not need that permission, the dry run does")
    causes = [c for c in answer.causes if c.reason == "FieldManagerConflict"]
    if answer.code == 409 and causes:
        server = {(c.manager or c.message, c.field) for c in causes}
        n = len(causes)
        said = f"{n} conflict{'s' if n != 1 else ''}: " + ", ".join(f"{c.field} ({c.manager})" for c in causes[:3]) \
            + (f" and {n - 3} more" if n > 3 else "")
        from ..fieldpath import path_string

        predicted_set = {(c.manager, path_string(c.path)) for c in report.conflicts}
        if report.blocked and not report.error and predicted_set == server:
            return DryRunCheck(AGREES)
        return DryRunCheck(DISAGREES, f"predicted {predicted}, server said {said}")
    said = f"{answer.code} {answer.reason}".strip()
    if report.error and report.error_status == answer.code:
        return DryRunCheck(AGREES, f"the server fails it too: {said}")
    return DryRunCheck(DISAGREES, f"predicted {predicted}, server said {said}: {answer.server_message or answer}")


# --- one manifest document ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PredictionSettings:
    """What shapes every prediction: who applies (``manager``, with ``force``), whether a Secret's
    values may be shown, the time new entries get."""

    manager: str
    force: bool
    now: str
    show_secret_values: bool = False
    appliers: tuple[Applier, ...] = ()
    """``--applier``: predict these appliers' whole request sequences (the first is the report's)."""


def predict(
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    rules: ResourceRules,
    req: PredictionSettings,
    *,
    where: str,
    status_subresource: bool,
    status_source: str,
) -> tuple[ConflictReport, ApplyPlan]:
    """One document: plan the apply (or each ``--applier``'s request sequence), explain it, add what
    kubectl does after a single apply, and a checked way out of its conflicts."""
    from ..appliers import applier_for_manager
    from ..base.globs import matches_any
    from ..remedies.choose import AUTOSCALERS, conflict_fix
    from .applyplan import plan_apply, plan_run

    def one(plan: ApplyPlan) -> ConflictReport:
        return report_from_plan(plan, where=where, status_subresource=status_subresource, status_source=status_source,
                                show_secret_values=req.show_secret_values)

    if req.appliers:
        plans = [plan_run(a, live, manifest, rules, now=req.now) for a in req.appliers]
        plan = plans[0]
        report = one(plan)
        report.runs = [one(p) for p in plans[1:]]
        applier = req.appliers[0]
    else:
        plan = plan_apply(live, manifest, req.manager, rules, now=req.now, force=req.force)
        report = one(plan)
        report.kubectl_followup = kubectl_followup(plan, live, manifest, rules, req.now)
        applier = applier_for_manager(req.manager, force=req.force)
    if plan.conflicts and live is not None:
        owners = [c.manager for c in plan.conflicts]
        report.scaled = sorted({c.manager for c in plan.conflicts
                                if c.subresource == "scale" or matches_any(c.manager, AUTOSCALERS)})
        if not plan.forced:
            fold = conflict_fix(live, manifest, rules, applier, owners, now=req.now, reset_fields=rules.reset(""))
            if fold is not None:
                target = ObjectRef(plan.api_version, plan.kind, plan.namespace, plan.name).resource_name
                report.fold_command = [fold.name, target, *(["-n", plan.namespace] if plan.namespace else []),
                                       *fold.args()]
    return report, plan


def hinted_schema(schema: KindSchema, live: Mapping[str, Any]) -> KindSchema:
    """No schema known: the list types the live managedFields show beat treating every list as
    atomic (the server that wrote them had the schema)."""
    from ..ownership.managedfields import decode_entries
    from ..schema.hinted import with_list_hints

    if not schema.deduced:
        return schema
    try:
        entries = decode_entries(_metadata(live).get("managedFields"))
    except ValueError:
        return schema  # reported where the live object's managedFields are decoded for the plan
    return with_list_hints(schema, (e.fields for e in entries), live)
