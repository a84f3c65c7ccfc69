"""What ``kubectl fieldown conflicts`` predicts for each manifest document: its identity and namespace,
its kind's rules, the live object (from the cluster, or from ``--live`` files) and the prediction,
online (with the server's dry run when asked) or offline. :mod:`.conflicts` is the command over it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.objects import ObjectRef
from ..base.value import TOO_DEEP, too_deep
from ..kube.kindrules import KindRules, rules_for
from .errors import UsageError

if TYPE_CHECKING:
    from ..conflicts.report import ConflictReport, PredictionSettings
    from ..fieldmanager import ResourceRules
    from ..kube.client import ClusterClient
    from ..manifests.sources import InputDocument
    from ..schema.types import GroupVersionKind, KindSchema, Type

__all__ = ["DocumentError", "Outcome", "Request", "make_rules", "offline_status", "predict_offline", "predict_online",
           "resolve_namespace", "with_namespace"]


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
    from .files import load_sources

    docs: list[InputDocument] = []
    for path in paths:
        result = load_sources(path, recursive=recursive)
        docs.extend(result.documents)
        outcome.errors.extend(str(e) for e in result.errors)
    return docs


def _now() -> str:
    import time

    from ..ownership.managedfields import format_time

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
    from ..conflicts.report import compare_dry_run, hinted_schema, predict
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
            if live is not None and too_deep(live):
                # the server keeps up to 10,000 levels (preserve-unknown-fields); the engine walks them
                # recursively. Files were checked when read
                outcome.errors.append(f"{doc.where}: {_heading(ObjectRef(api_version, kind, ns, name))}: {TOO_DEEP}")
                continue
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
    from ..manifests.sources import stored_object_problem
    from ..ownership.managedfields import ManagedFieldsError, decode_entries

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
    from ..conflicts.report import hinted_schema, predict
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
