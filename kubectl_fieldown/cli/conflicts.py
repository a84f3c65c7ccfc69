"""``kubectl fieldown conflicts``: what a server-side apply of manifests would do, before doing it.

fetch (manifests; the live objects from the cluster, or ``--live`` files offline; schemas) →
decode (the manifest's identity and namespace, the resource's rules) → analyse
(:mod:`kubectl_fieldown.conflictreport`: the plan, co-owners, redaction, optionally the server's own
dry run compared with the prediction) → render (:mod:`kubectl_fieldown.render.conflicts`).

Exit codes differ from the other commands because scripts gate on them: 0 the apply goes
through (no conflicts, or ``--force-conflicts`` takes them over); 1 it would not (conflicts, or
a 400/422/500 the server would answer), or the server dry run disagrees with the prediction;
2 something could not be predicted (bad flags or input, unknown kind, RBAC, unreachable server).
A failing document gets one ``error:`` line and the others are still reported.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..kube.kindrules import KindRules, rules_for
from ..objects import ObjectRef
from ..value import escape_controls
from . import options
from .errors import UsageError, handle_errors, one_line, print_error

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..conflictreport import ConflictReport, PredictionSettings
    from ..fieldmanager import ResourceRules
    from ..kube.client import ClusterClient
    from ..schema.registry import SchemaRegistry
    from ..schema.types import GroupVersionKind, KindSchema, Type
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
    sarif = "sarif"
    name = "name"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


#: kubectl's formats, printed from the -o json document (cli/outputformat.py)
_KUBE_OUTPUTS = (ConflictsOutput.name, ConflictsOutput.jsonpath, ConflictsOutput.custom_columns)


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


def _heading(ref: ObjectRef) -> str:
    """``Widget ns/w (example.com/v1)``: how errors name a manifest document's or --live object;
    the apiVersion is part of what must match."""
    return f"{ref.title()} ({ref.api_version})"


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


def make_rules(schema: KindSchema, status_subresource: bool, builtin: bool,
               versions: Mapping[str, Type] | None = None) -> ResourceRules:
    return rules_for(schema, status_subresource, builtin, versions)


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
    """The flags: what shapes every prediction, the namespace of documents that name none (``-n``),
    and whether to ask the server's own dry run too."""

    prediction: PredictionSettings
    namespace: str | None
    server_dry_run: bool


def predict_online(docs: Sequence[InputDocument], req: Request, schemas: KindRules, client: ClusterClient,
                   outcome: Outcome) -> None:
    """Each document against the object the cluster has (NotFound: a create)."""
    from ..conflictreport import compare_dry_run, hinted_schema, predict
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
                schema = hinted_schema(schema, live)
            builtin = schemas.is_builtin(gvk)
            status = "status" in res.subresources
            rules = make_rules(schema, status, builtin, schemas.versions(gvk))
            report, plan = predict(live, manifest, rules, req.prediction, where=doc.where, status_subresource=status,
                                   status_source="from discovery")
            if req.server_dry_run:
                answer: Mapping[str, Any] | ApiError
                try:
                    answer = client.patch(res, name, ns, manifest, "apply", field_manager=req.prediction.manager,
                                          force=req.prediction.force, dry_run=True)
                except ApiError as e:
                    if is_fatal(e):
                        raise
                    answer = e
                report.dry_run = compare_dry_run(report, answer, builtin,
                                                 plan.result.object if plan.result is not None else None)
                if report.dry_run.outcome == "unchecked":
                    outcome.errors.append(f"{doc.where}: {_heading(ObjectRef(api_version, kind, ns, name))}: "
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


def _live_index(docs: Sequence[InputDocument], outcome: Outcome) -> dict[ObjectRef, _LiveObject]:
    index: dict[ObjectRef, _LiveObject] = {}
    for doc in docs:
        problem = _live_problem(doc.obj)
        try:
            api_version, kind, name = _type_and_name(doc.obj, "the --live object")
        except DocumentError as e:
            outcome.errors.append(f"{doc.where}: {problem or e}")
            continue
        ns = _metadata(doc.obj).get("namespace")
        ident = ObjectRef(api_version, kind, str(ns) if ns else None, name)
        if ident in index:
            outcome.errors.append(f"{doc.where}: {_heading(ident)} is also {index[ident].where}: "
                                  "pass each live object once")
            continue
        index[ident] = _LiveObject(doc.obj, doc.where, problem=problem)
        if problem is not None:
            outcome.errors.append(f"{doc.where}: {_heading(ident)}: {problem}")
    return index


def _offline_namespaced(schema: KindSchema, gvk: GroupVersionKind, name: str,
                        index: Mapping[ObjectRef, _LiveObject]) -> bool:
    if schema.namespaced is not None:
        return schema.namespaced
    same = [i for i in index if i.api_version == gvk.api_version and i.kind == gvk.kind]
    named = [i for i in same if i.name == name] or same
    if named:
        return named[0].namespace is not None
    return (gvk.group, gvk.kind) not in CLUSTER_SCOPED_BUILTINS


def predict_offline(docs: Sequence[InputDocument], live_docs: Sequence[InputDocument], req: Request,
                    schemas: KindRules, outcome: Outcome) -> None:
    """Each document against the --live object with its apiVersion, kind, namespace and name."""
    from ..conflictreport import hinted_schema, predict
    from ..schema.types import GroupVersionKind

    index = _live_index(live_docs, outcome)
    manifests: list[ObjectRef] = []
    for doc in docs:
        try:
            api_version, kind, name = _type_and_name(doc.obj, "the document")
            gvk = GroupVersionKind.from_api_version(api_version, kind)
            schema = schemas.lookup(gvk)
            namespaced = _offline_namespaced(schema, gvk, name, index)
            ns = resolve_namespace(_metadata(doc.obj).get("namespace"), req.namespace, "default", namespaced)
            ident = ObjectRef(api_version, kind, ns, name)
            manifests.append(ident)
            manifest = with_namespace(doc.obj, ns)
            found = index.get(ident)
            if found is not None:
                found.used = True
                if found.problem is not None:
                    raise DocumentError(f"{_heading(ident)}: cannot predict against the --live object {found.where}")
            if found is not None:
                schema = hinted_schema(schema, found.obj)
            builtin = schemas.is_builtin(gvk)
            status, status_source = offline_status(schemas, schema, builtin)
            rules = make_rules(schema, status, builtin, schemas.versions(gvk))
            report, _ = predict(found.obj if found is not None else None, manifest, rules, req.prediction,
                                where=doc.where, status_subresource=status, status_source=status_source)
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
        outcome.errors.append(f"{live.where}: {_heading(ident)} matches no manifest document "
                              f"(by apiVersion, kind, namespace and name){hint}")


# --- render ------------------------------------------------------------------------------------------


def _render(outcome: Outcome, output: ConflictsOutput, verbose: bool, offline: bool) -> None:
    out = sys.stdout
    if output in _KUBE_OUTPUTS:
        from ..objects import ObjectRef
        from ..render.conflicts import to_document
        from .outputformat import print_kube

        names = [ObjectRef(r.api_version, r.kind, r.namespace, r.name).resource_name for r in outcome.reports]
        print_kube(output.value, to_document(outcome.reports), names, out)
    elif output is ConflictsOutput.json:
        from ..render.conflicts import render_json

        render_json(outcome.reports, out)
    elif output is ConflictsOutput.yaml:
        from ..render.conflicts import render_yaml

        render_yaml(outcome.reports, out)
    else:
        from ..render.conflicts import render_text

        render_text(outcome.reports, out, verbose=verbose, details=offline, failed=len(outcome.errors))
    out.flush()


class FailOn(str, enum.Enum):
    """What makes ``conflicts`` exit 1 besides errors."""

    conflicts = "conflicts"
    deletes = "deletes"


def exit_code(outcome: Outcome, fail_on_deletes: bool = False) -> int:
    if outcome.errors:
        return EXIT_ERROR
    if outcome.disagreements or any(r.blocked for r in outcome.reports):
        return EXIT_CONFLICTS
    if fail_on_deletes and any(run.deletions() for r in outcome.reports for run in (r, *r.runs)):
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
            "or ssa, optionally with its manager (flux:helm-controller: a HelmRelease) and, for Helm, the "
            "previous release's apply method (helm:previous=server-side; default client-side, the switch from "
            "Helm 3). Repeat it to compare appliers side by side (kubectl-client-side and kubectl: what changes "
            "if you switch).",
            show_default=False,
        ),
    ] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", case_sensitive=False,
                     help="Exit 1 on predicted conflicts (default), or also when the apply deletes fields "
                          "(deletes): CI stops before an apply that removes something."),
    ] = FailOn.conflicts,
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
        options.output_option("Output format: text (default), json or yaml (the documented contract), sarif "
                              "(SARIF 2.1.0, each result at its line of the manifest; docs/fleet.md), name "
                              "(kind.group/name), jsonpath=TEMPLATE or custom-columns=SPEC (kubectl's, over the json "
                              "document; docs/output.md)."),
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
    no_headers: options.NoHeaders = False,
    color: options.Color = options.ColorMode.auto,
) -> None:
    del no_headers, color  # read by the renderers (render/prefs.py), set when the flags are parsed
    from .outputformat import check

    check(output.value)
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
    from ..conflictreport import PredictionSettings

    prediction = PredictionSettings(manager=field_manager or appliers[0].manager, force=force_conflicts, now=_now(),
                                    show_secret_values=show_secret_values, appliers=appliers)
    req = Request(prediction, namespace=namespace, server_dry_run=server_dry_run)
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

    if outcome.reports or output not in (ConflictsOutput.text, ConflictsOutput.name, ConflictsOutput.custom_columns):
        # JSON and YAML always print a document, so that `| jq` sees {"items": []} rather than nothing
        if output is ConflictsOutput.sarif:
            from ..render.sarif import conflicts_sarif, render_sarif

            errors = list(dict.fromkeys(outcome.errors))
            render_sarif(conflicts_sarif(outcome.reports, {d.where: d for d in docs}, errors), sys.stdout)
            sys.stdout.flush()
        else:
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
    code = exit_code(outcome, fail_on is FailOn.deletes)
    if code:
        raise typer.Exit(code)


def _parse_applier(text: str, field_manager: str | None, force: bool) -> Applier:
    from ..appliers import ApplierError, parse_applier_spec

    try:
        return parse_applier_spec(text, manager=field_manager, force=force)
    except ApplierError as e:
        raise UsageError(f"--applier {e}") from None


def register(app: typer.Typer) -> None:
    app.command("conflicts", help=HELP, epilog=EPILOG, no_args_is_help=False)(conflicts)
