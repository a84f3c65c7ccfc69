"""The conflicts analysis in the core (conflicts/report.py): the server's order, the report of a plan,
redaction, the count a reader sees, and the server dry run compared with the prediction."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_fieldown.conflicts.applyplan import PlannedConflict, plan_apply
from kubectl_fieldown.conflicts.report import (
    ConflictReport,
    PredictionSettings,
    compare_dry_run,
    count_conflicts,
    predict,
    report_from_plan,
    server_order,
)
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.fieldpath import parse_path, path_from_fields, path_string
from kubectl_fieldown.kube.errors import Conflict, Forbidden, Invalid, RequestContext
from kubectl_fieldown.schema.registry import SchemaRegistry

NOW = "2026-01-01T00:00:00Z"
LA = "kubectl.kubernetes.io/last-applied-configuration"


def _conflict(manager: str, path: str, operation: str = "Update", subresource: str = "") -> PlannedConflict:
    return PlannedConflict(manager, operation, "example.com/v1", subresource, parse_path(path), 1, 2,
                           f'"{manager}"')


def test_server_order_sorts_managers_by_identity_json_and_keeps_paths() -> None:
    cs = [_conflict("updater-11", ".spec.labels.u11"), _conflict("ancient-changes", ".spec.color"),
          _conflict("ancient-changes", ".spec.labels.u00"), _conflict("bob", ".spec.a", "Apply")]
    assert [(c.manager, c.path) for c in server_order(cs)] == [
        ("ancient-changes", parse_path(".spec.color")), ("ancient-changes", parse_path(".spec.labels.u00")),
        ("bob", parse_path(".spec.a")), ("updater-11", parse_path(".spec.labels.u11"))]


def _report(**kw: Any) -> ConflictReport:
    base: dict[str, Any] = {"api_version": "example.com/v1", "kind": "Widget", "namespace": "ns", "name": "w",
                            "manager": "bob", "forced": False, "creates": False}
    base.update(kw)
    return ConflictReport(**base)


CTX = RequestContext(verb="apply", server="https://x", path="/p", resource="widgets.example.com", name="w",
                     namespace="ns")


def _conflict_error(*pairs: tuple[str, str]) -> Conflict:
    status = {"kind": "Status", "code": 409, "reason": "Conflict", "message": "Apply failed",
              "details": {"causes": [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}"',
                                      "field": p} for m, p in pairs]}}
    return Conflict("apply failed", code=409, reason="Conflict", status=status, context=CTX)


def test_dry_run_conflicts_compared_as_sets() -> None:
    report = _report(conflicts=[_conflict("a", ".spec.x"), _conflict("b", ".spec.y")])
    assert compare_dry_run(report, _conflict_error(("b", ".spec.y"), ("a", ".spec.x")), False).outcome == "agrees"
    check = compare_dry_run(report, _conflict_error(("a", ".spec.x")), False)
    assert check.outcome == "disagrees"
    assert check.detail == "predicted 2 conflicts: .spec.x (a), .spec.y (b), server said 1 conflict: .spec.x (a)"


def test_dry_run_success_against_predicted_conflicts_disagrees() -> None:
    report = _report(conflicts=[_conflict("a", ".spec.x")])
    check = compare_dry_run(report, {"metadata": {}}, False)
    assert (check.outcome, check.detail) == ("disagrees", "predicted 1 conflict: .spec.x (a), server said the "
                                                          "apply succeeds")


def test_dry_run_compares_managed_fields_and_spec() -> None:
    mf = [{"manager": "bob", "operation": "Apply", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "managedFields": mf},
           "spec": {"replicas": 3}}
    report = _report(result_object=obj, result_managed_fields=mf)
    server = copy.deepcopy(obj)
    server["metadata"].update(resourceVersion="9", generation=4, uid="u")
    server["metadata"]["managedFields"][0]["time"] = "2026-01-01T00:00:00Z"
    assert compare_dry_run(report, server, False).outcome == "agrees", "times and server metadata are ignored"
    server["spec"]["replicas"] = 4
    check = compare_dry_run(report, server, False)
    assert check.outcome == "disagrees" and "spec.replicas = 3, server 4" in check.detail
    server = copy.deepcopy(obj)
    server["metadata"]["managedFields"][0]["fieldsV1"] = {"f:spec": {"f:replicas": {}, "f:color": {}}}
    check = compare_dry_run(report, server, False)
    assert check.outcome == "disagrees" and '"bob" (Apply example.com/v1) owning not .spec.color' in check.detail


def test_dry_run_builtin_ignores_unowned_defaults() -> None:
    mf = [{"manager": "bob", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "managedFields": mf},
           "spec": {"replicas": 3}}
    server = copy.deepcopy(obj)
    server["spec"]["revisionHistoryLimit"] = 10  # Go defaulting: nobody owns it
    report = _report(api_version="apps/v1", kind="Deployment", result_object=obj, result_managed_fields=mf)
    assert compare_dry_run(report, server, True).outcome == "agrees"
    assert compare_dry_run(report, server, False).outcome == "disagrees"


def test_dry_run_forbidden_is_a_clear_unchecked() -> None:
    status = {"kind": "Status", "code": 403, "reason": "Forbidden",
              "message": 'widgets.example.com "w" is forbidden: User "dev" cannot patch resource "widgets"'}
    err = Forbidden('forbidden to apply widgets.example.com "w" in namespace "ns": widgets.example.com "w" is '
                    'forbidden: User "dev" cannot patch resource "widgets"', code=403, reason="Forbidden",
                    status=status, context=CTX)
    check = compare_dry_run(_report(result_object={}, result_managed_fields=[]), err, False)
    assert check.outcome == "unchecked"
    assert check.detail.startswith("you may not patch this object (forbidden to apply widgets.example.com")
    assert "the prediction above does not need that permission" in check.detail


def test_dry_run_predicted_rejection() -> None:
    err = Invalid("apply of w rejected as invalid: spec.color: bad", code=422, reason="Invalid",
                  status={"message": "bad"}, context=CTX)
    assert compare_dry_run(_report(error="bad", error_status=422, error_reason="Invalid"), err, False).outcome \
        == "agrees"
    check = compare_dry_run(_report(result_object={}, result_managed_fields=[]), err, False)
    assert check.outcome == "disagrees" and check.detail.startswith("predicted success, server said 422 Invalid")


def test_conflicts_are_counted_per_manager_and_field_and_the_fields_are_said() -> None:
    def planned(manager: str, path: str) -> PlannedConflict:
        return PlannedConflict(manager=manager, operation="Update", api_version="example.com/v1", subresource="",
                               path=parse_path(path), live_value=1, applied_value=2, describe=f'"{manager}"')

    # the server's 409 says "3 conflicts" when two managers share one of two fields; so do we,
    # and we add how many fields that is
    three = [planned("a", ".spec.x"), planned("b", ".spec.x"), planned("a", ".spec.y")]
    assert count_conflicts(three) == "3 conflicts on 2 fields"
    assert count_conflicts(three[:2]) == "2 conflicts on 1 field"
    assert count_conflicts([three[0], three[2]]) == "2 conflicts"
    assert count_conflicts(three[:1]) == "1 conflict"
    report = ConflictReport(kind="Widget", api_version="example.com/v1", name="w", namespace="ns", manager="m",
                            forced=False, creates=False, conflicts=three)
    assert report.summary() == "3 conflicts on 2 fields: the apply fails as it is"


@pytest.mark.parametrize(("kw", "summary"), [
    ({}, "no conflicts"),
    ({"creates": True}, "create (not found live)"),
    ({"conflicts": "1"}, "1 conflict: the apply fails as it is"),
    ({"conflicts": "1", "forced": True, "result_object": {}}, "1 conflict, taken over by --force-conflicts"),
    ({"error": "bad", "error_status": 422, "error_reason": "Invalid"},
     "the server would reject the apply (422 Invalid)"),
    ({"conflicts": "1", "forced": True, "error": "bad", "error_status": 500, "error_reason": "InternalError"},
     "1 conflict taken over, but the server would reject the apply (500 InternalError)"),
    ({"creates": True, "schema_deduced": True},
     "create (not found live) (schema: deduced — lists are atomic unless the live managedFields key them; "
     "pass --schema)"),
])
def test_summary(kw: dict[str, Any], summary: str) -> None:
    if kw.get("conflicts") == "1":
        kw["conflicts"] = [_conflict("a", ".spec.x")]
    kw.setdefault("result_object", None if (kw.get("conflicts") and not kw.get("forced")) or kw.get("error") else {})
    assert _report(**kw).summary() == summary


def _secret_rules() -> ResourceRules:
    return ResourceRules.for_kind(SchemaRegistry().lookup_api_version("v1", "Secret"), False, custom_resource=False)


def _secret(data: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, "data": data}


@pytest.mark.parametrize(("show", "live_value", "applied_value", "data"), [
    (False, "<redacted>", "<redacted>", {"k": "<redacted>"}),
    (True, "b2xk", "bmV3", {"k": "bmV3"}),
])
def test_a_secrets_values_are_redacted_unless_asked(show: bool, live_value: str, applied_value: str,
                                                    data: dict[str, str]) -> None:
    rules = _secret_rules()
    live = plan_apply(None, _secret({"k": "b2xk"}), "old", rules, now=NOW).result
    assert live is not None
    forced = plan_apply(live.object, _secret({"k": "bmV3"}), "new", rules, now=NOW, force=True)
    report = report_from_plan(forced, where="s.yaml", status_subresource=False, status_source="x",
                              show_secret_values=show)
    assert [(c.manager, c.path, c.live_value, c.applied_value) for c in report.conflicts] == [
        ("old", path_from_fields("data", "k"), live_value, applied_value)]
    assert report.result_object is not None and report.result_object["data"] == data
    assert forced.result is not None and forced.result.object["data"] == {"k": "bmV3"}, "the plan keeps the values"


def test_predict_names_the_co_owners_and_keeps_the_server_order() -> None:
    rules = _secret_rules()
    first = plan_apply(None, _secret({"a": "YQ==", "b": "Yg=="}), "zed", rules, now=NOW).result
    assert first is not None
    second = plan_apply(first.object, _secret({"a": "YQ==", "b": "Yg=="}), "amy", rules, now=NOW).result
    assert second is not None
    report, plan = predict(second.object, _secret({"a": "YQ==", "b": "Yw=="}), rules,
                           PredictionSettings(manager="bob", force=False, now=NOW), where="s.yaml",
                           status_subresource=False, status_source="x")
    assert [(c.manager, path_string(c.path)) for c in report.conflicts] == [("amy", ".data.b"), ("zed", ".data.b")]
    assert report.summary() == "2 conflicts on 1 field: the apply fails as it is"
    assert report.blocked and plan.blocked
    ok, _ = predict(second.object, _secret({"a": "YQ==", "b": "Yg=="}), rules,
                    PredictionSettings(manager="bob", force=False, now=NOW), where="s.yaml",
                    status_subresource=False, status_source="x")
    assert [(path_string(s.path), s.owners) for s in ok.shared] == [(".data.a", ('"amy"', '"zed"')),
                                                                      (".data.b", ('"amy"', '"zed"'))]


def test_a_deleted_field_the_schema_defaults_again_is_said_so_and_not_never_pruned() -> None:
    """``mode: manual`` dropped by its only applier: the apply deletes it and the server's defaulting
    sets "auto" in the same write, owned by nobody — ``defaulted``, and no "never pruned" (the
    real server: tests/cli/test_audit_cluster.py)."""
    from engine.schemas import defaulting_rules, thing

    from kubectl_fieldown.fieldmanager import simulate_apply

    rules = defaulting_rules()
    live = simulate_apply(None, thing(image="i", mode="manual"), "deployer", rules, now=NOW).object
    plan = plan_apply(live, thing(image="i"), "deployer", rules, now=NOW)
    mode = path_from_fields("spec", "mode")
    assert plan.deleted == [mode] and plan.defaulted == [mode] and plan.never_pruned == []
    assert plan.result is not None and plan.result.object["spec"] == {"image": "i", "mode": "auto"}
    report = report_from_plan(plan, where="", status_subresource=False, status_source="")
    assert report.defaulted == [(mode, "auto")]
    # dropping another field the schema does not default deletes it, and nothing comes back
    plan = plan_apply(live, thing(mode="manual"), "deployer", rules, now=NOW)
    assert plan.deleted == [path_from_fields("spec", "image")] and plan.defaulted == []
