"""The audit rules (kubectl_fieldown.audit) on crafted objects: pure table tests, no server."""

from __future__ import annotations

import json
from typing import Any

import lab
import pytest

from kubectl_fieldown.audit import (
    ANNOTATIONS_LIMIT,
    RULES,
    AuditContext,
    Finding,
    Severity,
    audit_object,
    last_applied_drift,
    object_key,
    object_ref,
    sort_findings,
    type_finding,
)
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.managedfields import LAST_APPLIED_ANNOTATION
from kubectl_fieldown.schema.crd import kinds_from_crd
from kubectl_fieldown.schema.types import GroupVersionKind

CTX = AuditContext()
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
        "hpa-replicas-trap": "error",
        "secret-last-applied": "error",
        "last-applied-size": "warning",
        "mixed-appliers": "warning",
        "client-side-apply": "warning",
        "apply-and-update-same-manager": "warning",
        "imperative-writer": "warning",
        "before-first-apply": "warning",
        "last-applied-drift": "warning",
        "ancient-changes": "info",
        "untracked": "info",
        "type-forbidden": "warning",
        "type-error": "warning",
    }
    assert all(r.rationale and r.title for r in RULES.values())
    assert Severity.info.rank < Severity.warning.rank < Severity.error.rank


def test_finding_json_is_the_documented_item() -> None:
    f = one(widget(CSA, la=manifest(SPEC)), "client-side-apply")
    assert list(f.to_json()) == ["id", "severity", "apiVersion", "kind", "namespace", "name", "resource", "message",
                                 "fix", "details"]
    assert f.to_json()["severity"] == "warning"
    assert f.resource == "widget.example.com"
    json.dumps(f.to_json())  # plain JSON values only


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
    assert f.fix == "kubectl fieldown migrate widget.example.com/w -n ns --to server-side"


def test_client_side_apply_fix_names_the_new_applier() -> None:
    f = one(widget(CSA, la=manifest(SPEC)), "client-side-apply", AuditContext(field_manager="flux"))
    assert f.fix == "kubectl fieldown migrate widget.example.com/w -n ns --to server-side --field-manager flux"


def test_mixed_appliers() -> None:
    obj = widget(CSA, entry("argocd-controller", "Apply", {"f:spec": {"f:size": {}}}), la=manifest(SPEC))
    assert ids(obj) == ["mixed-appliers", "client-side-apply"]
    f = one(obj, "mixed-appliers")
    assert f.message == ("client-side apply (kubectl-client-side-apply) and server-side apply (argocd-controller) "
                         "both manage this object")
    assert f.fix == ("kubectl fieldown migrate widget.example.com/w -n ns --to server-side "
                     "--field-manager argocd-controller")
    assert f.details == {"clientSide": ["kubectl-client-side-apply"], "serverSide": ["argocd-controller"]}


def test_kubectl_last_applied_is_not_a_server_side_applier() -> None:
    obj = widget(CSA, entry("kubectl-last-applied", "Apply", {"f:metadata": {}}), la=manifest(SPEC))
    assert ids(obj) == ["client-side-apply"]


# --- managers ----------------------------------------------------------------------------------------


def test_apply_and_update_same_manager() -> None:
    obj = widget(entry("helm", "Apply"), entry("helm", "Update", {"f:spec": {"f:size": {}}}))
    f = one(obj, "apply-and-update-same-manager")
    assert f.message == "helm is both an Apply and an Update manager"
    # helm's apply cannot take over its own Update entry (migrate moves other managers, handover refuses
    # an applier of other fields): what is left is giving every field to helm
    assert f.fix == "kubectl fieldown reset widget.example.com/w -n ns --to-manager helm"
    assert ids(obj) == ["apply-and-update-same-manager"]
    # with a new applier, it takes the Update entry's fields over
    g = one(obj, "apply-and-update-same-manager", AuditContext(field_manager="flux"))
    assert g.fix == "kubectl fieldown handover widget.example.com/w -n ns --field .spec.size --to flux"


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
    assert f.fix == (f"kubectl fieldown migrate widget.example.com/w -n ns --to server-side --from-manager {manager} "
                     "--field-manager argocd-controller")
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
    assert f.fix == (f"kubectl fieldown migrate widget.example.com/w -n ns --to server-side --from-manager {manager} "
                     "--field-manager argocd-controller")


def test_imperative_writer_fix_hands_over_to_a_new_applier() -> None:
    fields = {"f:spec": {"f:color": {}, "f:containers": {'k:{"name":"web"}': {".": {}, "f:name": {}, "f:image": {}}}}}
    obj = widget(entry("kubectl-edit", fields=fields))
    f = one(obj, "imperative-writer", AuditContext(field_manager="flux"))
    assert f.details["fields"] == [".spec.color", '.spec.containers[name="web"]']  # an item owned whole
    assert f.fix == ("kubectl fieldown handover widget.example.com/w -n ns --field .spec.color "
                     "--field '.spec.containers[name=\"web\"]' --to flux")
    # the default applier is kubectl: handover refuses it while the annotation exists, migrate keeps it
    assert one(obj, "imperative-writer").fix.startswith("kubectl fieldown handover ")
    with_la = widget(entry("kubectl-edit", fields=fields), CSA, la=manifest(SPEC))
    assert one(with_la, "imperative-writer").fix == (
        "kubectl fieldown migrate widget.example.com/w -n ns --to server-side --from-manager kubectl-edit")
    assert one(with_la, "imperative-writer", AuditContext(field_manager="flux")).fix == (
        "kubectl fieldown handover widget.example.com/w -n ns --field .spec.color "
        "--field '.spec.containers[name=\"web\"]' --to flux")


def test_imperative_writer_lists_at_most_three_fields_and_its_subresources() -> None:
    fields = {"f:spec": {f"f:f{i}": {} for i in range(5)}}
    f = one(widget(entry("kubectl-edit", fields=fields), entry("kubectl-edit", fields={"f:status": {"f:x": {}}},
                                                                sub="status")), "imperative-writer")
    assert f.message == "kubectl-edit (subresource status) owns .spec.f0, .spec.f1, .spec.f2 (+3 more)"
    assert len(f.details["fields"]) == 6


@pytest.mark.parametrize("manager", ["kubectl-client-side-apply", "kubectl-last-applied", "helm", "kubectlx",
                                     "argocd-controller"])
def test_not_imperative(manager: str) -> None:
    assert "imperative-writer" not in ids(widget(entry(manager)))


def test_imperative_globs_are_configurable() -> None:
    ctx = AuditContext(imperative_managers=("k9s", "Mozilla*"))
    assert ids(widget(entry("Mozilla/5.0")), ctx) == ["imperative-writer"]
    assert ids(widget(entry("kubectl-edit")), ctx) == []


def test_fix_commands_are_shell_quoted() -> None:
    f = one(widget(entry("kubectl-edit"), entry("my applier", "Apply")), "imperative-writer")
    assert f.fix == ("kubectl fieldown migrate widget.example.com/w -n ns --to server-side --from-manager kubectl-edit "
                     "--field-manager 'my applier'")
    g = one(widget(entry("kubectl-edit"), ns=None, kind="Gizmo"), "imperative-writer")
    assert g.fix == "kubectl fieldown handover gizmo.example.com/w --field .spec.color --to kubectl"
    assert object_ref("v1", "Secret", "s") == "secret/s"


# --- the HPA trap ------------------------------------------------------------------------------------

SCALE = entry("kubectl", fields={"f:spec": {"f:replicas": {}}}, sub="scale")
HPA = entry("kube-controller-manager", fields={"f:spec": {"f:replicas": {}}}, sub="scale")


@pytest.mark.parametrize("scaler", [SCALE, HPA, entry("keda-operator", fields={"f:spec": {"f:replicas": {}}})])
def test_hpa_replicas_trap(scaler: dict[str, Any]) -> None:
    obj = widget(CSA, scaler, la=manifest({"color": "red", "replicas": 2}), spec={"color": "red", "replicas": 7})
    assert ids(obj) == ["hpa-replicas-trap", "client-side-apply"]  # no drift and no imperative writer for replicas
    f = one(obj, "hpa-replicas-trap")
    assert f.severity is Severity.error
    assert f.fix == "kubectl fieldown strip-last-applied widget.example.com/w -n ns --field .spec.replicas"
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
    custom = AuditContext(size_warning=1000, size_error=10**9)
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
    assert found[0].fix == "kubectl fieldown migrate secret/s -n ns --to server-side --drop-last-applied"
    drift = found[2]
    assert drift.details["fields"] == [".data.password"]  # stringData matches the decoded data
    text = json.dumps([f.to_json() for f in found])
    for secret in ("aHVudGVyMg==", "Y2hhbmdlZA==", "hunter2", "changed", "t0ps3cret"):
        assert secret not in text


# --- drift -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("la_spec", "live_spec", "drifted"), [
    ({"color": "red"}, {"color": "red"}, []),
    ({"color": "red"}, {"color": "blue"}, [".spec.color"]),
    ({"color": "red"}, {}, [".spec.color"]),  # removed by someone
    ({"color": None}, {"color": "blue"}, []),  # null: the applier does not set it
    ({"color": "red"}, {"color": "red", "size": 1, "strategy": {"type": "x"}}, []),  # defaults, other writers
    ({"replicas": 1}, {"replicas": 1.0}, []),
    ({"replicas": 1}, {"replicas": "1"}, []),  # an int-or-string / quantity stored as a string
    ({"cpu": "1000m"}, {"cpu": "1"}, []),
    ({"memory": "1Gi"}, {"memory": "1024Mi"}, []),
    ({"memory": "1G"}, {"memory": "1Gi"}, [".spec.memory"]),
    ({"replicas": 1}, {"replicas": 2}, [".spec.replicas"]),
    ({"flag": True}, {"flag": 1}, [".spec.flag"]),
    ({"config": {}}, {"config": {"a": 1}}, []),
    ({"config": {}}, {}, []),
    ({"config": {"a": 1}}, {"config": "x"}, [".spec.config"]),
    ({"args": ["a", "b"]}, {"args": ["a", "b"]}, []),
    ({"args": ["a", "b"]}, {"args": ["b", "a"]}, [".spec.args[0]", ".spec.args[1]"]),
    ({"args": ["a", "b"]}, {"args": ["a", "b", "c"]}, [".spec.args"]),  # positional lists must match in length
    ({"args": []}, {}, []),
    # lists of named items are matched by name: defaults inside items and extra live items are not drift
    ({"containers": [{"name": "web", "image": "nginx:1"}]},
     {"containers": [{"name": "sidecar", "image": "envoy"}, {"name": "web", "image": "nginx:1", "ports": []}]}, []),
    ({"containers": [{"name": "web", "image": "nginx:1"}]},
     {"containers": [{"name": "web", "image": "nginx:2"}]}, ['.spec.containers[name="web"].image']),
    ({"containers": [{"name": "web", "image": "nginx:1"}, {"name": "db", "image": "pg"}]},
     {"containers": [{"name": "web", "image": "nginx:1"}]}, ['.spec.containers[name="db"]']),  # an item is gone
    ({"ports": [{"containerPort": 80}]}, {"ports": [{"containerPort": 80, "protocol": "TCP"}]}, []),
])
def test_drift(la_spec: dict[str, Any], live_spec: dict[str, Any], drifted: list[str]) -> None:
    la = manifest(la_spec)
    live = widget(CSA, la=la, spec=live_spec)
    assert [d.path for d in last_applied_drift(la, live)] == drifted
    found = [f for f in audit_object(live, CTX) if f.id == "last-applied-drift"]
    assert [f.details["fields"] for f in found] == ([drifted] if drifted else [])


def test_drift_message_and_fix() -> None:
    obj = widget(CSA, la=manifest({"color": "red", "size": 1, "args": ["a"], "x": 1}),
                 spec={"color": "blue", "size": 2, "args": ["b"], "x": 2})
    f = one(obj, "last-applied-drift")
    assert f.message == ('4 fields differ from the last-applied annotation: .spec.args[0] (annotation "a", live "b"), '
                         ".spec.color, .spec.size (+1 more)")
    assert f.fix == ("kubectl fieldown strip-last-applied widget.example.com/w -n ns --field '.spec.args[0]' "
                     "--field .spec.color --field .spec.size --field .spec.x")


def test_drift_of_metadata_labels_and_annotations_only() -> None:
    la = manifest(SPEC, labels={"app": "a", "tier": "web"}, annotations={"note": "x"},
                  creationTimestamp=None, uid="other")
    obj = widget(CSA, la=la, spec=SPEC, labels={"app": "b"}, annotations={"note": "x", "added": "y"})
    assert [d.path for d in last_applied_drift(la, obj)] == [".metadata.labels.app", ".metadata.labels.tier"]


def test_drift_ignores_status_and_other_versions() -> None:
    la = {**manifest(SPEC), "status": {"phase": "x"}}
    assert last_applied_drift(la, widget(spec=SPEC)) == []
    old = {**manifest({"color": "green"}), "apiVersion": "example.com/v1beta1"}
    assert "last-applied-drift" not in ids(widget(CSA, la=old, spec=SPEC))


def test_invalid_annotation_is_reported() -> None:
    f = one(widget(CSA, la="{not json"), "last-applied-drift")
    assert f.details["invalid"] is True
    assert f.message == "the last-applied annotation is not a JSON object: kubectl apply cannot compute its patch"


# --- untracked, ignore, ordering ---------------------------------------------------------------------


@pytest.mark.parametrize("mf", [None, []])
def test_untracked(mf: list[Any] | None) -> None:
    obj = widget()
    if mf is not None:
        obj["metadata"]["managedFields"] = mf
    f = one(obj, "untracked")
    assert f.severity is Severity.info
    assert f.fix == "kubectl fieldown reset widget.example.com/w -n ns --to-manager kubectl"
    ctx = AuditContext(field_manager="argocd-controller")
    assert one(obj, "untracked", ctx).fix.endswith("--to-manager argocd-controller")


def test_ignore() -> None:
    obj = widget(CSA, SCALE, la=manifest({"color": "red", "replicas": 2}), spec={"color": "blue", "replicas": 7})
    assert ids(obj) == ["hpa-replicas-trap", "client-side-apply", "last-applied-drift"]
    assert ids(obj, AuditContext(ignore=frozenset({"client-side-apply", "last-applied-drift"}))) == \
        ["hpa-replicas-trap"]


def test_type_findings_and_sort_order() -> None:
    t = type_finding("type-forbidden", "example.com/v1", "Gadget", "gadgets.example.com", "ns", "forbidden")
    assert (t.name, t.severity, t.details) == (None, Severity.warning, {"resource": "gadgets.example.com"})
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
    ctx = AuditContext(field_manager="flux", manifests={object_key(new): new}, rules={(W, "Widget"): widget_rules})
    f = one(live, "predicted-conflict", ctx)
    assert f.severity is Severity.error
    assert f.message == ("an apply by flux would conflict on 2 fields: .spec.color (owned by kubectl-edit); "
                         ".spec.replicas (owned by kubectl)")
    assert f.fix == ("kubectl fieldown handover widget.example.com/w -n ns --field .spec.color "
                     "--field .spec.replicas --to flux")
    assert f.details["conflicts"] == [
        {"path": ".spec.color", "manager": "kubectl-edit", "operation": "Update", "subresource": ""},
        {"path": ".spec.replicas", "manager": "kubectl", "operation": "Update", "subresource": "scale"},
    ]
    # the same values are shared, not conflicting; other objects are not simulated
    same = {**new, "spec": {"color": "blue", "replicas": 7, "args": ["x"]}}
    ctx_same = AuditContext(field_manager="flux", manifests={object_key(same): same},
                            rules={(W, "Widget"): widget_rules})
    assert "predicted-conflict" not in ids(live, ctx_same)
    assert "predicted-conflict" not in ids(widget(entry("kubectl-edit"), name="other"), ctx)
