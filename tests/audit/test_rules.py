"""The audit rules (kubectl_fieldown.audit.rules) on crafted objects: pure table tests, no server.

Fixes are not asked for here (``fixes=False``): tests/audit/test_fixes.py checks them on engine-built
histories, where every fix is verified."""

from __future__ import annotations

import json
from typing import Any

import lab
import pytest

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.audit import (
    ANNOTATIONS_LIMIT,
    RULES,
    AuditContext,
    Finding,
    Severity,
    audit_object,
    object_key,
    object_ref,
    sort_findings,
    type_finding,
)
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.ownership.managedfields import LAST_APPLIED_ANNOTATION
from kubectl_fieldown.schema.crd import kinds_from_crd
from kubectl_fieldown.schema.types import GroupVersionKind

CTX = AuditContext(fixes=False)


def named(manager: str, **kw: Any) -> AuditContext:
    from kubectl_fieldown.appliers import applier_for_manager

    return AuditContext(applier=applier_for_manager(manager), fixes=False, **kw)
W = "example.com/v1"


def entry(manager: str, op: str = "Update", fields: dict[str, Any] | None = None, sub: str = "",
          api: str = W) -> dict[str, Any]:
    e: dict[str, Any] = {"manager": manager, "operation": op, "apiVersion": api, "fieldsType": "FieldsV1",
                         "fieldsV1": fields if fields is not None else {"f:spec": {"f:color": {}}}}
    if sub:
        e["subresource"] = sub
    return e


def widget(*entries: dict[str, Any], la: Any = None, spec: dict[str, Any] | None = None, name: str = "w",
           ns: str | None = "ns", kind: str = "Widget", api: str = W, **md: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **md}
    if ns:
        meta["namespace"] = ns
    if entries:
        meta["managedFields"] = list(entries)
    if la is not None:
        meta.setdefault("annotations", {})[LAST_APPLIED_ANNOTATION] = la if isinstance(la, str) else json.dumps(la)
    return {"apiVersion": api, "kind": kind, "metadata": meta,
            "spec": spec if spec is not None else {"color": "red", "replicas": 3}}


def manifest(spec: dict[str, Any], **md: Any) -> dict[str, Any]:
    return {"apiVersion": W, "kind": "Widget", "metadata": {"annotations": {}, "name": "w", "namespace": "ns", **md},
            "spec": spec}


def ids(obj: dict[str, Any], ctx: AuditContext = CTX) -> list[str]:
    return [f.id for f in audit_object(obj, ctx)]


def one(obj: dict[str, Any], rule_id: str, ctx: AuditContext = CTX) -> Finding:
    found = [f for f in audit_object(obj, ctx) if f.id == rule_id]
    assert len(found) == 1, [f.id for f in audit_object(obj, ctx)]
    return found[0]


CSA = entry("kubectl-client-side-apply", fields={"f:metadata": {"f:annotations": {
    ".": {}, f"f:{LAST_APPLIED_ANNOTATION}": {}}}, "f:spec": {".": {}, "f:color": {}, "f:replicas": {}}})
SPEC = {"color": "red", "replicas": 3}


# --- the catalogue --------------------------------------------------------------------------------


def test_catalogue_ids_and_severities() -> None:
    assert {r: RULES[r].severity.value for r in RULES} == {
        "predicted-conflict": "error",
        "values-at-risk": "error",
        "dropped-fields-stay": "error",
        "unclaimed-fields-stay": "error",
        "inferred-deletions": "error",
        "superseded-deletions": "error",
        "hpa-replicas-trap": "error",
        "secret-last-applied": "error",
        "last-applied-size": "warning",
        "mixed-appliers": "warning",
        "client-side-apply": "warning",
        "apply-and-update-same-manager": "warning",
        "stale-applier": "warning",
        "update-manager-keeps-fields": "warning",
        "imperative-writer": "warning",
        "before-first-apply": "warning",
        "last-applied-drift": "warning",
        "ancient-changes": "info",
        "untracked": "info",
        # an audit that could not list a type fails under the default --fail-on (issue 18, item 15)
        "type-forbidden": "error",
        "type-error": "error",
        "context-unreachable": "error",
    }
    assert all(r.rationale and r.title for r in RULES.values())
    assert Severity.info.rank < Severity.warning.rank < Severity.error.rank


# --- clean objects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("obj", [
    widget(entry("argocd-controller", "Apply")),
    widget(entry("helm", "Update"), entry("kube-controller-manager", "Update", sub="status")),
    widget(entry("kubectl", "Apply"), entry("kubectl-last-applied", "Apply", fields={"f:metadata": {}}),
           la=manifest(SPEC)),  # migrated by kubectl apply --server-side: annotation kept alive on purpose
    {"apiVersion": "v1", "kind": "X"},  # no metadata at all
])
def test_clean_objects_have_no_findings(obj: dict[str, Any]) -> None:
    assert audit_object(obj, CTX) == []


# --- client-side apply -----------------------------------------------------------------------------


@pytest.mark.parametrize(("entries", "la", "how"), [
    ((CSA,), manifest(SPEC), "the last-applied annotation and manager kubectl-client-side-apply"),
    ((entry("helm"),), manifest(SPEC), "the last-applied annotation"),  # the manager was merged or reset away
    ((CSA,), None, "manager kubectl-client-side-apply"),
])
def test_client_side_apply(entries: tuple[dict[str, Any], ...], la: Any, how: str) -> None:
    f = one(widget(*entries, la=la), "client-side-apply")
    assert f.severity is Severity.warning
    assert f.message == f"managed by client-side kubectl apply ({how})"


def test_mixed_appliers() -> None:
    obj = widget(CSA, entry("argocd-controller", "Apply", {"f:spec": {"f:size": {}}}), la=manifest(SPEC))
    assert ids(obj) == ["mixed-appliers", "client-side-apply"]
    f = one(obj, "mixed-appliers")
    assert f.message == ("client-side apply (kubectl-client-side-apply) and server-side apply (argocd-controller) "
                         "both manage this object")
    assert f.details == {"clientSide": ["kubectl-client-side-apply"], "serverSide": ["argocd-controller"]}


def test_kubectl_last_applied_is_not_a_server_side_applier() -> None:
    obj = widget(CSA, entry("kubectl-last-applied", "Apply", {"f:metadata": {}}), la=manifest(SPEC))
    assert ids(obj) == ["client-side-apply"]


# --- managers ----------------------------------------------------------------------------------------


def test_apply_and_update_same_manager() -> None:
    obj = widget(entry("helm", "Apply"), entry("helm", "Update", {"f:spec": {"f:size": {}}}))
    f = one(obj, "apply-and-update-same-manager")
    assert f.message == "helm is both an Apply and an Update manager"
    assert ids(obj) == ["apply-and-update-same-manager"]
    assert f.details == {"managers": ["helm"]}


def test_a_named_applier_with_an_update_entry_becomes_both_only_if_it_applies_server_side() -> None:
    # an operator that starts applying, with its manifest named: its first apply makes it both; client-side
    # kubectl apply's next apply is an Update again (trying Helm-then-back-to-kubectl-apply on the lab, audit
    # said "kubectl-client-side-apply is both an Apply and an Update manager")
    obj = widget(entry("helm", "Apply", {"f:spec": {"f:size": {}}}), CSA, la=manifest(SPEC))
    nxt = manifest(SPEC)
    for kind, manager, both in (("ssa", "operator", False), ("kubectl-client-side", None, False)):
        ctx = AuditContext(applier=Applier.of(kind, manager), manifests={object_key(nxt): nxt}, fixes=False)
        assert ("apply-and-update-same-manager" in ids(obj, ctx)) is both, kind
    op = widget(entry("operator", "Update", {"f:spec": {"f:size": {}}}))
    ctx = AuditContext(applier=Applier.of("ssa", "operator"), manifests={object_key(nxt): nxt}, fixes=False)
    assert one(op, "apply-and-update-same-manager", ctx).details == {"managers": ["operator"]}


def test_kubectl_apply_and_kubectl_scale_is_one_finding_not_two() -> None:
    # kubectl scale writes as manager "kubectl" (Update, scale): reported once, as the same-name pair
    obj = widget(entry("kubectl", "Apply"), entry("kubectl", "Update", {"f:spec": {"f:replicas": {}}}, sub="scale"))
    assert ids(obj) == ["apply-and-update-same-manager"]


@pytest.mark.parametrize(("manager", "rule_id", "count"), [
    ("before-first-apply", "before-first-apply", 2),
    ("ancient-changes", "ancient-changes", 2),
])
def test_server_written_managers(manager: str, rule_id: str, count: int) -> None:
    obj = widget(entry("argocd-controller", "Apply"),
                 entry(manager, fields={"f:spec": {".": {}, "f:color": {}, "f:replicas": {}}}))
    f = one(obj, rule_id)
    assert f.message.startswith(f"{manager} owns {count} fields: ")
    assert f.details == {"manager": manager, "fields": count}
    assert f.severity is RULES[rule_id].severity


@pytest.mark.parametrize("manager", ["kubectl-edit", "kubectl-patch", "kubectl-label", "kubectl-annotate",
                                     "kubectl-scale", "kubectl-set", "kubectl-create", "kubectl-replace", "kubectl"])
def test_imperative_writers(manager: str) -> None:
    fields = {"f:metadata": {"f:labels": {"f:tier": {}}},
              "f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}}}, "f:color": {}}}
    f = one(widget(entry(manager, fields=fields), entry("argocd-controller", "Apply")), "imperative-writer")
    paths = ['.metadata.labels.tier', '.spec.color', '.spec.containers[name="web"]']  # the item is owned whole
    assert f.details == {"manager": manager, "subresources": [], "fields": paths}
    assert f.message == f"{manager} owns " + ", ".join(paths)
    # argocd-controller applies other fields, so handover would refuse it: its Apply entry takes the writer's


def test_imperative_writer_names_items_it_created_whole() -> None:
    fields = {"f:spec": {"f:color": {}, "f:containers": {'k:{"name":"web"}': {".": {}, "f:name": {}, "f:image": {}}}}}
    f = one(widget(entry("kubectl-edit", fields=fields)), "imperative-writer", named("flux"))
    assert f.details["fields"] == [".spec.color", '.spec.containers[name="web"]']


def test_imperative_writer_lists_at_most_three_fields_one_finding_per_subresource() -> None:
    fields = {"f:spec": {f"f:f{i}": {} for i in range(5)}}
    found = [f for f in audit_object(widget(entry("kubectl-edit", fields=fields),
                                            entry("kubectl-edit", fields={"f:status": {"f:x": {}}}, sub="status")),
                                     AuditContext(fixes=False)) if f.id == "imperative-writer"]
    assert [(f.message, f.details["subresources"], len(f.details["fields"])) for f in found] == [
        ("kubectl-edit owns .spec.f0, .spec.f1, .spec.f2 (+2 more)", [], 5),
        ("kubectl-edit (subresource status) owns .status.x", ["status"], 1),
    ]


@pytest.mark.parametrize("manager", ["kubectl-client-side-apply", "kubectl-last-applied", "helm", "kubectlx",
                                     "argocd-controller"])
def test_not_imperative(manager: str) -> None:
    assert "imperative-writer" not in ids(widget(entry(manager)))


def test_imperative_globs_are_configurable() -> None:
    ctx = AuditContext(imperative_managers=("k9s", "Mozilla*"), fixes=False)
    assert ids(widget(entry("Mozilla/5.0")), ctx) == ["imperative-writer"]
    assert ids(widget(entry("kubectl-edit")), ctx) == []


def test_object_ref() -> None:
    assert object_ref("v1", "Secret", "s") == "secret/s"
    assert object_ref(W, "Gizmo", "g") == "gizmo.example.com/g"


# --- the HPA trap ------------------------------------------------------------------------------------

SCALE = entry("kubectl", fields={"f:spec": {"f:replicas": {}}}, sub="scale")
HPA = entry("kube-controller-manager", fields={"f:spec": {"f:replicas": {}}}, sub="scale")


@pytest.mark.parametrize("scaler", [SCALE, HPA, entry("keda-operator", fields={"f:spec": {"f:replicas": {}}})])
def test_hpa_replicas_trap(scaler: dict[str, Any]) -> None:
    obj = widget(CSA, scaler, la=manifest({"color": "red", "replicas": 2}), spec={"color": "red", "replicas": 7})
    assert ids(obj) == ["hpa-replicas-trap", "client-side-apply"]  # no drift and no imperative writer for replicas
    f = one(obj, "hpa-replicas-trap")
    assert f.severity is Severity.error
    assert f.details["lastApplied"] == 2


def test_no_trap_without_replicas_in_the_annotation() -> None:
    obj = widget(CSA, SCALE, la=manifest({"color": "red"}), spec={"color": "red", "replicas": 7})
    assert ids(obj) == ["client-side-apply", "imperative-writer"]


def test_no_trap_when_only_appliers_own_replicas() -> None:
    obj = widget(entry("kubectl", "Apply", {"f:spec": {"f:replicas": {}}}), la=manifest(SPEC), spec=SPEC)
    assert ids(obj) == []


# --- annotation size and Secrets ---------------------------------------------------------------------


def test_last_applied_size() -> None:
    def sized(n: int) -> dict[str, Any]:
        la = manifest({"color": "x" * n})
        return widget(CSA, la=la, spec={"color": "x" * n})

    assert "last-applied-size" not in ids(sized(100_000))
    warn = one(sized(200_000), "last-applied-size")
    assert warn.severity is Severity.warning
    size = warn.details["bytes"]
    assert 200_000 < size < 200_300 and warn.details["limit"] == ANNOTATIONS_LIMIT
    assert warn.message == (f"the last-applied annotation is {size / 1024:.1f} KiB, "
                            f"{100 * size / ANNOTATIONS_LIMIT:.0f}% of the 256 KiB limit on annotations")
    assert one(sized(240_000), "last-applied-size").severity is Severity.error
    custom = AuditContext(size_warning=1000, size_error=10**9, fixes=False)
    assert one(sized(2000), "last-applied-size", custom).severity is Severity.warning


def test_secret_last_applied_never_shows_values() -> None:
    la = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
          "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "t0ps3cret"}}
    obj = {"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": "s", "namespace": "ns", "annotations": {LAST_APPLIED_ANNOTATION: json.dumps(la)},
                        "managedFields": [entry("kubectl-client-side-apply", api="v1")]},
           "data": {"password": "Y2hhbmdlZA==", "token": "dDBwczNjcmV0"}}
    found = audit_object(obj, CTX)
    assert [f.id for f in found] == ["secret-last-applied", "client-side-apply", "last-applied-drift"]
    assert found[0].severity is Severity.error
    drift = found[2]
    assert drift.details["fields"] == [".data.password"]  # stringData matches the decoded data
    text = json.dumps([{n: getattr(f, n) for n in f._fields} for f in found], default=str)
    for secret in ("aHVudGVyMg==", "Y2hhbmdlZA==", "hunter2", "changed", "t0ps3cret"):
        assert secret not in text


# --- untracked, ignore, ordering ---------------------------------------------------------------------


@pytest.mark.parametrize("mf", [None, []])
def test_untracked(mf: list[Any] | None) -> None:
    obj = widget()
    if mf is not None:
        obj["metadata"]["managedFields"] = mf
    f = one(obj, "untracked")
    assert f.severity is Severity.info
    assert f.message == "no managedFields: the first server-side apply will record every field as before-first-apply"


def test_ignore() -> None:
    obj = widget(CSA, SCALE, la=manifest({"color": "red", "replicas": 2}), spec={"color": "blue", "replicas": 7})
    assert ids(obj) == ["hpa-replicas-trap", "client-side-apply", "last-applied-drift"]
    assert ids(obj, AuditContext(ignore=frozenset({"client-side-apply", "last-applied-drift"}), fixes=False)) == \
        ["hpa-replicas-trap"]


def test_type_findings_and_sort_order() -> None:
    t = type_finding("type-forbidden", "example.com/v1", "Gadget", "gadgets.example.com", "ns", "forbidden")
    assert (t.name, t.severity, t.details) == (None, Severity.error, {"resource": "gadgets.example.com"})
    a = one(widget(entry("kubectl-edit"), name="b"), "imperative-writer")
    b = one(widget(name="a"), "untracked")
    c = one(widget(CSA, name="a", la=manifest(SPEC)), "client-side-apply")
    assert sort_findings([a, t, b, c]) == [t, c, b, a]


def test_object_key() -> None:
    assert object_key(widget()) == (W, "Widget", "ns", "w")
    assert object_key(widget(ns=None), "default") == (W, "Widget", "default", "w")


# --- predicted conflicts (the engine) ------------------------------------------------------------------


@pytest.fixture(scope="module")
def widget_rules() -> ResourceRules:
    crd = next(c for c in lab.conformance_crds() if c["metadata"]["name"] == "widgets.example.com")
    schema = kinds_from_crd(crd)[GroupVersionKind("example.com", "v1", "Widget")]
    return ResourceRules.for_kind(schema, status_subresource=True)


def test_predicted_conflicts(widget_rules: ResourceRules) -> None:
    live = widget(entry("kubectl-edit", fields={"f:spec": {"f:color": {}}}),
                  entry("kubectl", fields={"f:spec": {"f:replicas": {}}}, sub="scale"),
                  entry("argocd-controller", "Apply", {"f:spec": {"f:args": {}}}),
                  spec={"color": "blue", "replicas": 7, "args": ["x"]})
    new = {"apiVersion": W, "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
           "spec": {"color": "red", "replicas": 2, "args": ["x"]}}

    def ctx(applier: Applier, manifest: dict[str, Any]) -> AuditContext:
        return AuditContext(applier=applier, manifests={object_key(manifest): manifest},
                            rules_for=lambda a, k: widget_rules if (a, k) == (W, "Widget") else None, fixes=False)

    f = one(live, "predicted-conflict", ctx(Applier.of("ssa", "flux"), new))
    assert f.severity is Severity.error
    assert f.message == ("a server-side apply as flux would conflict on 2 fields: .spec.color (owned by kubectl-edit); "
                         ".spec.replicas (owned by kubectl (subresource scale))")
    assert f.details["conflicts"] == [
        {"path": ".spec.color", "manager": "kubectl-edit", "operation": "Update", "subresource": ""},
        {"path": ".spec.replicas", "manager": "kubectl", "operation": "Update", "subresource": "scale"},
    ]
    assert f.details["forced"] is False
    # an applier that forces takes the fields over: a warning, not a failure
    g = one(live, "predicted-conflict", ctx(Applier.of("argocd"), new))
    assert g.severity is Severity.warning and g.details["forced"] is True
    assert g.message.startswith("Argo CD (ServerSideApply=true) forces: it would take over 2 fields: ")
    # the same values are shared, not conflicting; other objects are not simulated
    same = {**new, "spec": {"color": "blue", "replicas": 7, "args": ["x"]}}
    assert "predicted-conflict" not in ids(live, ctx(Applier.of("ssa", "flux"), same))
    assert "predicted-conflict" not in ids(widget(entry("kubectl-edit"), name="other"), ctx(Applier.of("ssa", "flux"),
                                                                                              new))


def test_stale_applier_and_update_manager_keeping_fields() -> None:
    obj = widget(entry("kustomize-controller", "Apply", {"f:spec": {"f:color": {}, "f:size": {}}}),
                 entry("helm-controller", "Apply", {"f:spec": {"f:color": {}}}),
                 entry("my-operator", "Update", {"f:spec": {"f:color": {}}}),
                 spec={"color": "red", "size": 1})
    found = audit_object(obj, named("helm-controller"))
    assert [f.id for f in found] == ["stale-applier", "update-manager-keeps-fields"]
    assert found[0].message == ("kustomize-controller (Apply) still owns 2 fields (.spec.color, .spec.size): "
                                "helm-controller can neither prune nor change them alone")
    assert found[1].details == {"manager": "my-operator", "fields": [".spec.color"]}
    # without a named applier, two appliers are not stale; controllers' own fields are not reported
    assert "stale-applier" not in ids(obj)
    assert ids(widget(entry("argocd-controller", "Apply", {"f:spec": {"f:color": {}}}),
                      entry("my-operator", "Update", {"f:status": {"f:phase": {}}})), named("argocd-controller")) == []


# --- one engine: audit and conflicts --applier on the same schema ----------------------------------


def test_a_kind_without_a_schema_is_played_on_the_hinted_schema_as_conflicts_plays_it() -> None:
    """No schema known for the kind (deduced: every list atomic). conflicts refines it with the list
    types the live managedFields show; audit played the applier on the bare deduced schema, so a
    conflict on one item of a list-map (another applier's container) went unreported (issue 17, 1)."""
    from dataclasses import replace

    from kubectl_fieldown.appliers import run_applier
    from kubectl_fieldown.conflicts.report import PredictionSettings, hinted_schema, predict
    from kubectl_fieldown.fieldmanager import simulate_apply

    gvk = GroupVersionKind("example.com", "v1", "Widget")
    real = next(s for s in (kinds_from_crd(c) for c in lab.conformance_crds()) if gvk in s)[gvk]
    real_rules = ResourceRules.for_kind(real, True)
    bare = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}
    deduced = ResourceRules.for_kind(kinds_from_crd(bare)[gvk], True)
    assert deduced.schema.deduced

    def doc(*containers: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": W, "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"},
                "spec": {"containers": list(containers)}}

    # the server (which has the schema) wrote two appliers' items
    live = simulate_apply(None, doc({"name": "x", "image": "1"}), "a", real_rules, now="2026-01-01T00:00:00Z").object
    live = simulate_apply(live, doc({"name": "y", "image": "2"}), "b", real_rules, now="2026-01-01T00:00:00Z").object
    nxt = doc({"name": "x", "image": "1"}, {"name": "y", "image": "9"})
    applier = Applier.of("ssa", "a")
    ctx = AuditContext(applier=applier, manifests={object_key(nxt): nxt}, rules_for=lambda av, k: deduced,
                       now="2026-01-01T00:00:01Z", fixes=False)
    found = [f for f in audit_object(live, ctx) if f.id == "predicted-conflict"]
    hinted = replace(deduced, schema=hinted_schema(deduced.schema, live))
    report, _ = predict(live, nxt, hinted, PredictionSettings("a", False, "2026-01-01T00:00:01Z", appliers=(applier,)),
                        where="-", status_subresource=True, status_source="-")
    assert report.blocked and run_applier(applier, live, nxt, real_rules, now="2026-01-01T00:00:01Z").conflicts
    assert [c["path"] for f in found for c in f.details["conflicts"]] == ['.spec.containers[name="y"].image']


def test_a_secret_is_audited_without_its_values() -> None:
    """Issue 18, item 1: the predicted-conflict error of a Secret (the server's 500 quotes a badly
    typed value) shows no value (the fix's problems go through ValueChange: tests/remedies/test_verify.py)."""
    from remedies.test_verify import RULES as SECRET_RULES
    from remedies.test_verify import TOKEN, edited_secret, secret_manifest

    live = edited_secret()
    bad = secret_manifest(token=[TOKEN])
    found = audit_object(live, AuditContext(applier=Applier.of("kubectl"), manifests={object_key(bad): bad},
                                            rules_for=lambda a, k: SECRET_RULES if k == "Secret" else None))
    text = json.dumps([f.to_json() if hasattr(f, "to_json") else repr(f) for f in found])
    assert "predicted-conflict" in text and "expected string" in text
    assert TOKEN[:6] not in text and "dXNlcg" not in text
