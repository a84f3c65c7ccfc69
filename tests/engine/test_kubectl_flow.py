"""``kubectl apply --server-side`` is more than one request; the modelled flow matches real kubectl.

tests/conformance/cur-real-kubectl-server-side-upgrade.json recorded real kubectl 1.36 on a
client-side-applied Widget: apply, apply of the annotation by kubectl-last-applied, csaupgrade
JSON patch, apply again. Its ``live`` is the state that sequence left.
"""

from __future__ import annotations

import json

from kubectl_fieldown.appliers.csaupgrade import upgrade_managed_fields
from kubectl_fieldown.conflicts.applyplan import plan_apply
from kubectl_fieldown.fieldmanager import simulate_update
from kubectl_fieldown.fieldpath import FieldSet, parse_path, path_string
from kubectl_fieldown.ownership.managedfields import APPLY, UPDATE, ManagedFieldsEntry

from .conformance_cases import CASES, entries_of, load, rules_for

CASE = load(CASES / "cur-real-kubectl-server-side-upgrade.json")
RULES = rules_for(CASE)


def client_side_created() -> dict:  # type: ignore[type-arg]
    body = CASE["steps"][0]["wire"][0]["body"]  # the POST kubectl apply sent
    obj = simulate_update(None, body, "kubectl-client-side-apply", RULES, now="2026-11-22T01:00:00Z").object
    obj["metadata"].update(uid="u", resourceVersion="1")
    return obj


def test_flow_reproduces_real_kubectl() -> None:
    manifest = CASE["steps"][1]["wire"][0]["body"]  # what kubectl apply --server-side sent
    plan = plan_apply(client_side_created(), manifest, "kubectl", RULES, now="2026-11-22T02:00:00Z", kubectl_flow=True)
    assert plan.result is not None
    assert plan.steps == [
        "apply of the last-applied annotation by kubectl-last-applied",
        "csaupgrade of kubectl-client-side-apply into kubectl (JSON patch of managedFields)",
        "apply again by kubectl",
    ]
    assert entries_of(plan.result.object) == entries_of(CASE["live"])
    assert plan.result.object["metadata"]["annotations"] == CASE["live"]["metadata"]["annotations"]
    assert plan.result.object["spec"] == CASE["live"]["spec"]


def test_flow_deletes_what_a_single_request_keeps() -> None:
    manifest = json.loads(json.dumps(CASE["steps"][1]["wire"][0]["body"]))
    del manifest["spec"]["color"]
    live = client_side_created()
    single = plan_apply(live, manifest, "kubectl", RULES, now="2026-11-22T02:00:00Z")
    flow = plan_apply(live, manifest, "kubectl", RULES, now="2026-11-22T02:00:00Z", kubectl_flow=True)
    assert [path_string(r.path) for r in single.retained] == [".spec.color"]
    assert [path_string(p) for p in flow.deleted] == [".spec.color"]
    assert flow.result is not None and "color" not in flow.result.object["spec"]


def test_csaupgrade_keeps_only_the_target_version() -> None:
    def fs(*paths: str) -> FieldSet:
        return FieldSet(parse_path(p) for p in paths)

    entries = [
        ManagedFieldsEntry("kubectl", APPLY, "v5", fs(".data.key")),
        ManagedFieldsEntry("kubectl-client-side-apply", UPDATE, "v5", fs(".data.key2")),
        ManagedFieldsEntry("kubectl-client-side-apply", UPDATE, "v2", fs(".data.key3")),
    ]
    out = upgrade_managed_fields(entries, ["kubectl-client-side-apply"], "kubectl")
    assert [(e.manager, e.operation, e.api_version) for e in out] == [("kubectl", "Apply", "v5")]
    assert [path_string(p) for p in out[0].fields.sorted_paths()] == [".data.key", ".data.key2"]
