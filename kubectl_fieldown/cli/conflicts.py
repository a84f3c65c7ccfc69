"""``kubectl fieldown conflicts``: what a server-side apply of manifests would do, before doing it.

fetch (manifests; the live objects from the cluster, or ``--live`` files offline; schemas) →
decode (the manifest's identity and namespace, the resource's rules) → analyse
(:func:`kubectl_fieldown.applyplan.plan_apply`, co-owners, redaction, optionally the server's own
dry run compared with the prediction) → render (:mod:`kubectl_fieldown.render.conflicts`).

Exit codes differ from the other commands because scripts gate on them: 0 the apply goes
through (no conflicts, or ``--force-conflicts`` takes them over); 1 it would not (conflicts, or
a 400/422/500 the server would answer), or the server dry run disagrees with the prediction;
2 something could not be predicted (bad flags or input, unknown kind, RBAC, unreachable server).
A failing document gets one ``error:`` line and the others are still reported.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..kube.kindrules import KindRules, rules_for
from ..objects import is_secret
from ..value import escape_controls
from . import options
from .errors import UsageError, handle_errors, one_line, print_error

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..applyplan import ApplyPlan, PlannedConflict
    from ..fieldmanager import ResourceRules
    from ..fieldpath import FieldSet
    from ..kube.client import ClusterClient
    from ..kube.errors import ApiError
    from ..render.conflicts import ConflictReport, DryRunCheck, KubectlFollowup
    from ..schema.registry import SchemaRegistry
    from ..schema.types import GroupVersionKind, KindSchema
    from ..sources import InputDocument

__all__ = [
    "EXIT_CONFLICTS",
    "EXIT_ERROR",
    "EXIT_OK",
    "ConflictsOutput",
    "conflicts",
    "register",
]

EXIT_OK = 0
EXIT_CONFLICTS = 1
EXIT_ERROR = 2



class ConflictsOutput(str, enum.Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


HELP = """Predict a server-side apply: conflicts, shared fields, deletions and fields that stay.

\b
Reads manifests (-f FILE|DIR|-, several documents) and the live objects they name, from the
cluster (default) or offline from --live FILE (the output of
'kubectl get -o yaml --show-managed-fields'), and computes what the API server does with
'kubectl apply --server-side --field-manager NAME' of them.

\b
Exit codes: 0 no conflicts (or --force-conflicts takes them over); 1 conflicts predicted,
the server would reject the apply, or the server dry run disagrees; 2 errors."""

EPILOG = """\b
Examples:
  # Would my apply conflict with anyone? (the manager kubectl apply --server-side uses)
  kubectl fieldown conflicts -f deploy.yaml --field-manager kubectl
\b
  # As Argo CD would apply it, checked against the server's own dry run
  kubectl fieldown conflicts -f k8s/ -R --field-manager argocd-controller --server-dry-run
\b
  # What --force-conflicts would take over, and the resulting managedFields, as JSON
  kubectl fieldown conflicts -f w.yaml --field-manager ci --force-conflicts -o json
\b
  # Offline: saved live objects and the CRD that gives the merge rules
  kubectl get widget w -o yaml --show-managed-fields > live.yaml
  kubectl fieldown conflicts -f w.yaml --live live.yaml --schema crd.yaml --field-manager ci"""


# --- errors: every failure is exit 2 here -----------------------------------------------------------


class DocumentError(UsageError):
    """One manifest document (or ``--live`` object) that cannot be predicted; ``str()`` is one line."""


# --- decode: a manifest document's identity ----------------------------------------------------------

# Cluster-scoped built-in kinds (kube 1.36). Only consulted offline when neither the schema nor a
# --live object says whether a kind is namespaced: the offline built-in schemas do not record scope.
CLUSTER_SCOPED_BUILTINS = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass"), ("node.k8s.io", "RuntimeClass"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "ResourceSlice"),
    ("authentication.k8s.io", "TokenReview"), ("authorization.k8s.io", "SubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
})


@dataclass(frozen=True)
class Identity:
    """apiVersion, kind, namespace (None: cluster-scoped) and name: how a manifest document and a
    live object are matched (the way kubectl finds the object a document names)."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def title(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name} ({self.api_version})"


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else {}


def _type_and_name(obj: Mapping[str, Any], what: str) -> tuple[str, str, str]:
    """apiVersion, kind, metadata.name of a document, or why it names no object."""
    api_version, kind, name = obj.get("apiVersion"), obj.get("kind"), _metadata(obj).get("name")
    required = (("apiVersion", api_version), ("kind", kind), ("metadata.name", name))
    missing = [k for k, v in required if not isinstance(v, str) or not v]
    if missing:
        extra = " (server-side apply needs a name; generateName is not enough)" \
            if "metadata.name" in missing and _metadata(obj).get("generateName") else ""
        raise DocumentError(f"{what} has no {' and no '.join(missing)}{extra}")
    return str(api_version), str(kind), str(name)


def resolve_namespace(manifest_ns: Any, flag_ns: str | None, default_ns: str, namespaced: bool) -> str | None:
    """The namespace kubectl would use: the manifest's, else ``-n``, else the default; they must agree."""
    if not namespaced:
        return None
    if manifest_ns is not None and not isinstance(manifest_ns, str):
        raise DocumentError("metadata.namespace is not a string")
    if manifest_ns and flag_ns and manifest_ns != flag_ns:
        # kubectl's wording (resource.Builder: "the namespace from the provided object ...")
        raise DocumentError(
            f'the namespace from the provided object "{manifest_ns}" does not match the namespace "{flag_ns}". '
            f"You must pass '--namespace={manifest_ns}' to perform this operation."
        )
    return str(manifest_ns or flag_ns or default_ns)


def with_namespace(manifest: Mapping[str, Any], namespace: str | None) -> dict[str, Any]:
    """The body kubectl sends: the namespace filled in (or, for cluster-scoped kinds, left out; the
    server clears it anyway)."""
    out = dict(manifest)
    md = dict(_metadata(manifest))
    if namespace is None:
        md.pop("namespace", None)
    else:
        md["namespace"] = namespace
    out["metadata"] = md
    return out


# --- decode: schemas and the resource's rules -------------------------------------------------------


def make_rules(schema: KindSchema, status_subresource: bool, builtin: bool) -> ResourceRules:
    return rules_for(schema, status_subresource, builtin)


def _has_status_field(schema: KindSchema) -> bool:
    m = schema.root.map
    return m is not None and "status" in m.fields


def offline_status(schemas: KindRules, schema: KindSchema, builtin: bool) -> tuple[bool, str]:
    """Whether the kind has a status subresource, and why we think so, without a server to ask."""
    gvk = schema.gvk
    sub = schemas.registry.subresources(gvk)
    if sub is not None:
        return sub.status, "from the CRD in --schema"
    if builtin:
        if _has_status_field(schema):
            return True, "assumed: a built-in kind with a status field"
        return False, "assumed: a built-in kind without a status field"
    return False, "assumed: no CRD for this kind in --schema"


# --- analyse -----------------------------------------------------------------------------------------


def _identity_json(c: PlannedConflict) -> str:
    from ..managedfields import APPLY, ManagerIdentity

    return ManagerIdentity(c.manager, c.operation, "" if c.operation == APPLY else c.api_version,
                           c.subresource).json()


def server_order(conflicts: Sequence[PlannedConflict]) -> list[PlannedConflict]:
    """Managers sorted by identity JSON (as the 409 message groups them), each manager's paths in
    the server's field order (a stable sort keeps the engine's order within a manager)."""
    return sorted(conflicts, key=_identity_json)


def _redact_conflict(c: PlannedConflict) -> PlannedConflict:
    from ..redact import REDACTED, is_secret_value_path

    if not is_secret_value_path(c.path):
        return c

    def hide(v: Any) -> Any:
        return None if v is None else REDACTED

    return dataclasses.replace(c, live_value=hide(c.live_value), applied_value=hide(c.applied_value))


def analyse(
    plan: ApplyPlan,
    *,
    where: str,
    status_subresource: bool,
    status_source: str,
    show_secret_values: bool = False,
) -> ConflictReport:
    """The report of one plan: conflicts in the server's order, co-owners of shared fields, secrets
    redacted (unless asked), the result's managedFields as they appear in the object."""
    from ..managedfields import APPLY
    from ..redact import redact_secret
    from ..render.conflicts import ConflictReport, OwnedPath

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
    from ..applyplan import plan_apply
    from ..fieldpath import is_prefix, path_from_fields
    from ..managedfields import LAST_APPLIED_ANNOTATION, UPDATE
    from ..render.conflicts import KubectlFollowup

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


# --- analyse: the server's dry run compared with the prediction --------------------------------------


def _entry_sets(raw: Any) -> dict[tuple[str, str, str, str], FieldSet]:
    from ..managedfields import decode_entries

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
    from ..render.common import display_value

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
    from ..value import values_equal

    if a is not _ABSENT and b is not _ABSENT and values_equal(a, b):
        return None
    if a is _ABSENT and b is _ABSENT:
        return None

    def show(v: Any) -> str:
        return "nothing" if v is _ABSENT else display_value(v, 40)

    return f"{path} = {show(a)}, server {show(b)}"


_ABSENT: Any = object()


def _object_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    md = _metadata(obj)
    return {"spec": obj.get("spec", _ABSENT), "metadata.labels": md.get("labels", _ABSENT),
            "metadata.annotations": md.get("annotations", _ABSENT)}


def _owned_value_difference(predicted: Mapping[str, Any], server: Mapping[str, Any]) -> str | None:
    """Built-in kinds are defaulted by Go code we do not run: compare only the owned scalars."""
    from ..fieldpath import FieldSet, path_string
    from ..fieldpath.lookup import MISSING, value_at
    from ..render.common import display_value
    from ..value import values_equal

    owned = FieldSet()
    for fs in _entry_sets(_metadata(server).get("managedFields")).values():
        owned = owned.union(fs)
    for p in owned.leaves().sorted_paths():
        a, b = value_at(predicted, p), value_at(server, p)
        if isinstance(a, (Mapping, list)) and isinstance(b, (Mapping, list)):
            continue  # a container owned whole: its owned members are compared one by one
        if a is MISSING and b is MISSING:
            continue
        if a is MISSING or b is MISSING or not values_equal(a, b):
            def show(v: Any) -> str:
                return "nothing" if v is MISSING else display_value(v, 40)

            return f"{path_string(p)} = {show(a)}, server {show(b)}"
    return None


def _predicted_text(report: ConflictReport) -> str:
    from ..fieldpath import path_string

    if report.error:
        return f"a {report.error_status} {report.error_reason}".rstrip()
    if report.blocked:
        from ..render.conflicts import count_conflicts

        n = len(report.conflicts)
        shown = ", ".join(f"{path_string(c.path)} ({c.manager})" for c in report.conflicts[:3])
        more = f" and {n - 3} more" if n > 3 else ""
        return f"{count_conflicts(report.conflicts)}: {shown}{more}"
    return "success"


def compare_dry_run(
    report: ConflictReport,
    answer: Mapping[str, Any] | ApiError,
    builtin: bool,
    predicted_object: Mapping[str, Any] | None = None,
) -> DryRunCheck:
    """Does the server's answer to the same apply (``dryRun=All``) match the prediction?

    Conflicts are compared as (manager, path) sets; a success by the managedFields path sets of
    every entry and the object's spec, labels and annotations (times, resourceVersion and
    generation are ignored). ``predicted_object`` is the unredacted result (default: the report's)."""
    from ..kube.errors import Forbidden
    from ..render.conflicts import AGREES, DISAGREES, UNCHECKED, DryRunCheck

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

    if isinstance(answer, Forbidden):
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


# --- fetch -------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the run produced: reports in manifest order, and one-line errors."""

    reports: list[ConflictReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    disagreements: int = 0


def _documents(paths: Sequence[str], recursive: bool, outcome: Outcome) -> list[InputDocument]:
    from ..files import load_sources

    docs: list[InputDocument] = []
    for path in paths:
        result = load_sources(path, recursive=recursive)
        docs.extend(result.documents)
        outcome.errors.extend(str(e) for e in result.errors)
    return docs


def _now() -> str:
    import time

    from ..managedfields import format_time

    return format_time(time.time())


@dataclass(frozen=True)
class Request:
    """The flags that shape every prediction."""

    manager: str
    force: bool
    namespace: str | None
    server_dry_run: bool
    show_secret_values: bool
    now: str
    appliers: tuple[Applier, ...] = ()
    """``--applier``: predict these appliers' whole request sequences (the first is the report's)."""


def predict(
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    rules: ResourceRules,
    req: Request,
    *,
    where: str,
    status_subresource: bool,
    status_source: str,
) -> tuple[ConflictReport, ApplyPlan]:
    """One document: plan the apply (or each ``--applier``'s request sequence), explain it, add what
    kubectl does after a single apply, and a checked way out of its conflicts."""
    from ..appliers import applier_for_manager
    from ..applyplan import plan_apply, plan_run
    from ..remedies.choose import AUTOSCALERS, conflict_fix

    def glob_match(name: str, globs: Sequence[str]) -> bool:
        import fnmatch

        return any(fnmatch.fnmatchcase(name, g) for g in globs)

    def one(plan: ApplyPlan) -> ConflictReport:
        return analyse(plan, where=where, status_subresource=status_subresource, status_source=status_source,
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
                                if c.subresource == "scale" or glob_match(c.manager, AUTOSCALERS)})
        if not plan.forced:
            fold = conflict_fix(live, manifest, rules, applier, owners, now=req.now, reset_fields=rules.reset(""))
            if fold is not None:
                target = f"{plan.kind.lower()}.{plan.api_version.rpartition('/')[0]}".rstrip(".") + f"/{plan.name}"
                report.fold_command = [fold.name, target, *(["-n", plan.namespace] if plan.namespace else []),
                                       *fold.args()]
    return report, plan


def predict_online(docs: Sequence[InputDocument], req: Request, schemas: KindRules, client: ClusterClient,
                   outcome: Outcome) -> None:
    """Each document against the object the cluster has (NotFound: a create)."""
    from ..kube.errors import ApiError, KubeError, NotFound, is_fatal
    from ..schema.types import GroupVersionKind

    for doc in docs:
        try:
            api_version, kind, name = _type_and_name(doc.obj, "the document")
            res = client.discovery.resolve_kind(api_version, kind)
            ns = resolve_namespace(_metadata(doc.obj).get("namespace"), req.namespace, client.default_namespace,
                                   res.namespaced)
            manifest = with_namespace(doc.obj, ns)
            try:
                live: dict[str, Any] | None = client.get(res, name, ns)
            except NotFound:
                live = None
            gvk = GroupVersionKind.from_api_version(api_version, kind)
            schema = schemas.lookup(gvk, res)
            if live is not None:
                schema = _hinted(schema, live)
            builtin = schemas.is_builtin(gvk)
            status = "status" in res.subresources
            rules = make_rules(schema, status, builtin)
            report, plan = predict(live, manifest, rules, req, where=doc.where, status_subresource=status,
                                   status_source="from discovery")
            if req.server_dry_run:
                answer: Mapping[str, Any] | ApiError
                try:
                    answer = client.patch(res, name, ns, manifest, "apply", field_manager=req.manager,
                                          force=req.force, dry_run=True)
                except ApiError as e:
                    if is_fatal(e):
                        raise
                    answer = e
                report.dry_run = compare_dry_run(report, answer, builtin,
                                                 plan.result.object if plan.result is not None else None)
                if report.dry_run.outcome == "unchecked":
                    outcome.errors.append(f"{doc.where}: {Identity(api_version, kind, ns, name).title()}: "
                                          f"server dry-run: {report.dry_run.detail}")
                elif report.dry_run.outcome == "disagrees":
                    outcome.disagreements += 1
            outcome.reports.append(report)
        except KubeError as e:
            if is_fatal(e):
                raise
            outcome.errors.append(f"{doc.where}: {e}")
        except DocumentError as e:
            outcome.errors.append(f"{doc.where}: {e}")


@dataclass
class _LiveObject:
    obj: dict[str, Any]
    where: str
    used: bool = False
    problem: str | None = None  # why it cannot stand for a live object (reported once, for itself)


def _live_problem(obj: Mapping[str, Any]) -> str | None:
    """Why a ``--live`` object cannot be what the server returns: badly typed metadata, or
    managedFields that do not decode (strictly: a file is not the server's storage)."""
    from ..managedfields import ManagedFieldsError, decode_entries
    from ..sources import stored_object_problem

    problem = stored_object_problem(obj)
    if problem is None:
        try:
            decode_entries(_metadata(obj).get("managedFields"), strict=True)
        except ManagedFieldsError as e:
            problem = str(e)
    return problem


def _live_index(docs: Sequence[InputDocument], outcome: Outcome) -> dict[Identity, _LiveObject]:
    index: dict[Identity, _LiveObject] = {}
    for doc in docs:
        problem = _live_problem(doc.obj)
        try:
            api_version, kind, name = _type_and_name(doc.obj, "the --live object")
        except DocumentError as e:
            outcome.errors.append(f"{doc.where}: {problem or e}")
            continue
        ns = _metadata(doc.obj).get("namespace")
        ident = Identity(api_version, kind, str(ns) if ns else None, name)
        if ident in index:
            outcome.errors.append(f"{doc.where}: {ident.title()} is also {index[ident].where}: "
                                  "pass each live object once")
            continue
        index[ident] = _LiveObject(doc.obj, doc.where, problem=problem)
        if problem is not None:
            outcome.errors.append(f"{doc.where}: {ident.title()}: {problem}")
    return index


def _offline_namespaced(schema: KindSchema, gvk: GroupVersionKind, name: str,
                        index: Mapping[Identity, _LiveObject]) -> bool:
    if schema.namespaced is not None:
        return schema.namespaced
    same = [i for i in index if i.api_version == gvk.api_version and i.kind == gvk.kind]
    named = [i for i in same if i.name == name] or same
    if named:
        return named[0].namespace is not None
    return (gvk.group, gvk.kind) not in CLUSTER_SCOPED_BUILTINS


def _hinted(schema: KindSchema, live: Mapping[str, Any]) -> KindSchema:
    """No schema known: the list types the live managedFields show beat treating every list as
    atomic (the server that wrote them had the schema)."""
    from ..managedfields import decode_entries
    from ..schema.hinted import with_list_hints

    if not schema.deduced:
        return schema
    try:
        entries = decode_entries(_metadata(live).get("managedFields"))
    except ValueError:
        return schema  # reported where the live object's managedFields are decoded for the plan
    return with_list_hints(schema, (e.fields for e in entries), live)


def predict_offline(docs: Sequence[InputDocument], live_docs: Sequence[InputDocument], req: Request,
                    schemas: KindRules, outcome: Outcome) -> None:
    """Each document against the --live object with its apiVersion, kind, namespace and name."""
    from ..schema.types import GroupVersionKind

    index = _live_index(live_docs, outcome)
    manifests: list[Identity] = []
    for doc in docs:
        try:
            api_version, kind, name = _type_and_name(doc.obj, "the document")
            gvk = GroupVersionKind.from_api_version(api_version, kind)
            schema = schemas.lookup(gvk)
            namespaced = _offline_namespaced(schema, gvk, name, index)
            ns = resolve_namespace(_metadata(doc.obj).get("namespace"), req.namespace, "default", namespaced)
            ident = Identity(api_version, kind, ns, name)
            manifests.append(ident)
            manifest = with_namespace(doc.obj, ns)
            found = index.get(ident)
            if found is not None:
                found.used = True
                if found.problem is not None:
                    raise DocumentError(f"{ident.title()}: cannot predict against the --live object {found.where}")
            if found is not None:
                schema = _hinted(schema, found.obj)
            builtin = schemas.is_builtin(gvk)
            status, status_source = offline_status(schemas, schema, builtin)
            rules = make_rules(schema, status, builtin)
            report, _ = predict(found.obj if found is not None else None, manifest, rules, req, where=doc.where,
                                status_subresource=status, status_source=status_source)
            outcome.reports.append(report)
        except DocumentError as e:
            outcome.errors.append(f"{doc.where}: {e}")
    for ident, live in index.items():
        if live.used:
            continue
        hint = ""
        for m in manifests:
            if (m.kind, m.name) == (ident.kind, ident.name) and m.group == ident.group:
                if m.api_version != ident.api_version:
                    hint = f" (a manifest document names it with apiVersion {m.api_version})"
                elif m.namespace != ident.namespace:
                    hint = (f" (a manifest document names it in namespace {m.namespace!r}: "
                            f"pass -n {ident.namespace} or set metadata.namespace)" if ident.namespace else
                            f" (a manifest document names it in namespace {m.namespace!r})")
                break
        outcome.errors.append(f"{live.where}: {ident.title()} matches no manifest document "
                              f"(by apiVersion, kind, namespace and name){hint}")


# --- render ------------------------------------------------------------------------------------------


def _render(outcome: Outcome, output: ConflictsOutput, verbose: bool, offline: bool) -> None:
    out = sys.stdout
    if output is ConflictsOutput.json:
        from ..render.conflicts import render_json

        render_json(outcome.reports, out)
    elif output is ConflictsOutput.yaml:
        from ..render.conflicts import render_yaml

        render_yaml(outcome.reports, out)
    else:
        from ..render.conflicts import render_text

        render_text(outcome.reports, out, verbose=verbose, details=offline, failed=len(outcome.errors))
    out.flush()


def exit_code(outcome: Outcome) -> int:
    if outcome.errors:
        return EXIT_ERROR
    if outcome.disagreements or any(r.blocked for r in outcome.reports):
        return EXIT_CONFLICTS
    return EXIT_OK


# --- the command -------------------------------------------------------------------------------------


def _schema_registry(files: Sequence[str], kube_version: str | None) -> SchemaRegistry:
    from ..schema.builtin import BuiltinSchemaError
    from ..schema.registry import SchemaFileError, SchemaRegistry

    try:
        registry = SchemaRegistry(kube_version=kube_version)
    except BuiltinSchemaError as e:
        raise UsageError(f"--kube-version: {e}") from None
    for f in files:
        try:
            registry.add_file(f)
        except SchemaFileError as e:
            raise DocumentError(f"--schema {e}") from None
        except OSError as e:
            raise DocumentError(f"--schema {f}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise DocumentError(f"--schema {f}: not UTF-8 text") from None
    return registry


@handle_errors(failures=EXIT_ERROR)
def conflicts(
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    field_manager: Annotated[
        str | None,
        options.field_manager_option(
            "The manager you will apply as ('kubectl apply --server-side' uses \"kubectl\", "
            "Argo CD \"argocd-controller\", Flux \"kustomize-controller\"); required without --applier."
        ),
    ] = None,
    applier: Annotated[
        list[str] | None,
        typer.Option(
            "--applier",
            metavar="KIND[:MANAGER]",
            help="Predict what this applier's next apply does — its whole sequence of requests: kubectl "
            "(apply --server-side with its follow-up), kubectl-client-side (kubectl apply), argocd, flux, helm "
            "or ssa, optionally with its manager (flux:helm-controller). Repeat it to compare appliers side "
            "by side (kubectl-client-side and kubectl: what changes if you switch).",
            show_default=False,
        ),
    ] = None,
    force_conflicts: Annotated[
        bool,
        typer.Option("--force-conflicts",
                     help="Predict the apply with force: conflicting fields are taken from their owners "
                          "(they are still listed). Exit 0 when that apply succeeds."),
    ] = False,
    server_dry_run: Annotated[
        bool,
        typer.Option("--server-dry-run",
                     help="Also send the apply with dryRun=All and report whether the server agrees with the "
                          "prediction (needs permission to patch the objects)."),
    ] = False,
    live: Annotated[
        list[str] | None,
        typer.Option("--live", metavar="FILE",
                     help="Offline: take the live objects from FILE or a directory ('-' is stdin; repeatable), "
                          "as 'kubectl get -o yaml --show-managed-fields' prints them, matched to the manifest "
                          "documents by apiVersion, kind, namespace and name. A document without a match is a "
                          "create.",
                     show_default=False),
    ] = None,
    schema: Annotated[
        list[str] | None,
        typer.Option("--schema", metavar="FILE",
                     help="Merge rules from FILE: a CustomResourceDefinition manifest or an OpenAPI v3 document "
                          "(repeatable). Wins over the cluster's OpenAPI and the offline built-in schemas.",
                     show_default=False),
    ] = None,
    kube_version: Annotated[
        str | None,
        typer.Option("--kube-version", metavar="VERSION",
                     help="Kubernetes version of the offline built-in schemas (e.g. 1.33; default: the newest "
                          "available). Used for built-in kinds that the cluster's OpenAPI does not describe.",
                     show_default=False),
    ] = None,
    output: Annotated[
        ConflictsOutput,
        options.output_option("Output format: text (default), json or yaml (the documented contract)."),
    ] = ConflictsOutput.text,
    verbose: Annotated[
        bool,
        typer.Option("-v", "--verbose", help="Say where each schema and status-subresource rule came from."),
    ] = False,
    show_secret_values: Annotated[
        bool,
        typer.Option("--show-secret-values",
                     help="Show the values of a Secret's data, stringData and last-applied annotation "
                          "instead of <redacted>."),
    ] = False,
    namespace: options.Namespace = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> None:
    paths = list(filename or ())
    live_paths = list(live or ())
    if not paths:
        raise UsageError("you must pass the manifests with -f/--filename (a file, a directory, or - for stdin)")
    appliers = tuple(_parse_applier(a, field_manager, force_conflicts) for a in applier or ())
    if not field_manager and not appliers:
        raise UsageError("--field-manager NAME is required: the manager you will apply as "
                         "('kubectl apply --server-side' uses \"kubectl\"), or name the applier with --applier")
    if appliers and server_dry_run:
        raise UsageError("--server-dry-run checks one apply request; it cannot replay an applier's sequence "
                         "(leave out --applier)")
    if [*paths, *live_paths].count("-") > 1:
        raise UsageError("only one of -f and --live can read stdin ('-')")
    offline = bool(live_paths)
    if offline and server_dry_run:
        raise UsageError("--server-dry-run asks the cluster; it cannot be used with --live (offline)")
    if offline and (kubeconfig is not None or context is not None):
        raise UsageError("--kubeconfig and --context select a cluster; --live works offline without one")

    registry = _schema_registry(list(schema or ()), kube_version)
    outcome = Outcome()
    docs = _documents(paths, recursive, outcome)
    req = Request(manager=field_manager or appliers[0].manager, force=force_conflicts, namespace=namespace,
                  server_dry_run=server_dry_run, show_secret_values=show_secret_values, now=_now(),
                  appliers=appliers)
    if offline:
        read_errors = len(outcome.errors)
        live_docs = _documents(live_paths, recursive, outcome)
        if len(outcome.errors) == read_errors:
            predict_offline(docs, live_docs, req, KindRules(registry), outcome)
        # else a --live file that cannot be read: which objects exist is unknown, and predicting
        # against what could be read would call the others "create"
    elif docs:
        from ..kube.client import ClusterClient

        client = ClusterClient(options.cluster_options(options.ClusterArgs(kubeconfig, context, namespace)))
        try:
            predict_online(docs, req, KindRules(registry, client), client, outcome)
        finally:
            client.close()

    if outcome.reports or output is not ConflictsOutput.text:
        # JSON and YAML always print a document, so that `| jq` sees {"items": []} rather than nothing
        _render(outcome, output, verbose, offline)
    if output is not ConflictsOutput.text:
        # the contract has no place for the server's reason; without it a null result is a riddle
        for r in outcome.reports:
            if r.error:
                note = (f"{r.where}: {r.title}: the server would reject this apply ({r.error_status} "
                        f"{r.error_reason}): {one_line(r.error)}")
                sys.stderr.write(f"note: {escape_controls(note)}\n")
    for message in dict.fromkeys(outcome.errors):  # a file given as both -f and --live fails once
        print_error(message)
    code = exit_code(outcome)
    if code:
        raise typer.Exit(code)


def _parse_applier(text: str, field_manager: str | None, force: bool) -> Applier:
    from ..appliers import APPLIER_KINDS, Applier, ApplierError

    kind, _, manager = text.partition(":")
    if kind not in APPLIER_KINDS:
        raise UsageError(f"--applier must be one of {', '.join(APPLIER_KINDS)} (optionally KIND:MANAGER), not "
                         f"{text!r}")
    try:
        if kind == "kubectl-client-side":
            return Applier.of(kind)
        return Applier.of(kind, manager or field_manager or None, force=force)
    except ApplierError as e:
        raise UsageError(f"--applier {text}: {e}") from None


def register(app: typer.Typer) -> None:
    app.command("conflicts", help=HELP, epilog=EPILOG, no_args_is_help=False)(conflicts)
