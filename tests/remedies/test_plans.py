"""The remedy planners (kubectl_fieldown.remedies.plans) on engine-built objects: what each plan owns
afterwards, and that the server's record of its requests is the plan (simulated request by request)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_fieldown.fieldpath import FieldSet, parse_path, path_string
from kubectl_fieldown.ownership.managedfields import APPLY, UPDATE, decode_entries
from kubectl_fieldown.remedies.plans import (
    LAST_APPLIED_PATH,
    Migration,
    MigrationError,
    entries_differ,
    plan_drop_managers,
    plan_handover,
    plan_strip_last_applied,
    plan_to_client_side,
    plan_to_server_side,
    remove_paths,
)
from kubectl_fieldown.remedies.requests import ApplyRequest, JsonPatchRequest, requests_for, simulate_requests

from .states import (
    NOW,
    RULES,
    client_side_created,
    edited,
    labelled,
    manifest,
    scaled,
    server_side_applied,
    updated,
)

ROOT = RULES.root


def owned(obj_or_plan: Any, manager: str, operation: str | None = None, subresource: str = "") -> list[str]:
    if isinstance(obj_or_plan, Migration):
        es = obj_or_plan.after
    else:
        es = decode_entries(obj_or_plan["metadata"].get("managedFields"))
    for e in es:
        if e.manager == manager and (operation is None or e.operation == operation) and e.subresource == subresource:
            return [path_string(p) for p in e.fields.leaves().sorted_paths()]
    return []


def written(obj: dict[str, Any], m: Migration) -> dict[str, Any]:
    return simulate_requests(obj, requests_for(m), RULES, now=NOW)


def assert_recorded_as_planned(obj: dict[str, Any], m: Migration) -> dict[str, Any]:
    out = written(obj, m)
    got = decode_entries(out["metadata"].get("managedFields"))
    assert not entries_differ(got, [] if m.reset else m.after), (json.dumps([e.to_dict() for e in got]),
                                                                 json.dumps([e.to_dict() for e in m.after]))
    la = (out["metadata"].get("annotations") or {}).get("kubectl.kubernetes.io/last-applied-configuration")
    assert la == m.last_applied_after
    return out


# --- to server-side ------------------------------------------------------------------------------------


def test_client_side_fields_move_to_the_applier_and_the_scaler_keeps_replicas() -> None:
    obj = scaled(client_side_created(), 7)
    m = plan_to_server_side(obj, ROOT)
    assert owned(m, "kubectl", APPLY) == [".spec.color", ".spec.labels.a"]
    assert owned(m, "kubectl", UPDATE, "scale") == [".spec.replicas"]
    assert owned(m, "kubectl-client-side-apply") == []
    assert owned(m, "kubectl-last-applied", APPLY) == [path_string(LAST_APPLIED_PATH)]
    assert_recorded_as_planned(obj, m)


def test_a_subresource_entry_never_becomes_an_apply_entry() -> None:
    obj = scaled(server_side_applied(), 5)  # kubectl apply --server-side, then kubectl scale
    m = plan_to_server_side(obj, ROOT, source_managers=["kubectl"], target="argocd-controller")
    assert not any(e.subresource and e.operation == APPLY for e in m.after)
    assert owned(m, "kubectl", UPDATE, "scale") == [".spec.replicas"]
    assert any("left kubectl (subresource scale) alone" in n for n in m.notes)


def test_same_name_update_becomes_apply() -> None:
    # Helm 3 leaves an Update entry "helm"; Helm 4 applies as "helm": the Update entry folds into the Apply one
    obj = updated(client_side_created(), "helm", lambda o: o["spec"].update(color="green"))
    obj = server_side_applied("helm", manifest(color="green"), live=obj)
    m = plan_to_server_side(obj, ROOT, source_managers=["helm"], target="helm")
    assert owned(m, "helm", UPDATE) == []
    assert ".spec.color" in owned(m, "helm", APPLY)
    assert_recorded_as_planned(obj, m)


def test_a_previous_appliers_apply_entry_moves() -> None:
    # Flux Kustomization applied it, a HelmRelease (helm-controller) takes over
    obj = server_side_applied("kustomize-controller", manifest(color="red"), live=None)
    m = plan_to_server_side(obj, ROOT, source_managers=["kustomize-controller"], target="helm-controller")
    assert owned(m, "kustomize-controller") == []
    assert owned(m, "helm-controller", APPLY) == [".spec.color", ".spec.labels.a", ".spec.replicas"]
    assert_recorded_as_planned(obj, m)


def test_only_the_fields_of_the_targets_manifest_move() -> None:
    obj = server_side_applied("kustomize-controller", manifest(color="red"), live=None)
    fields = FieldSet([parse_path(".spec.color")])
    m = plan_to_server_side(obj, ROOT, source_managers=["kustomize-controller"], target="helm-controller",
                            manifest_fields=fields)
    assert owned(m, "helm-controller", APPLY) == [".spec.color"]
    assert owned(m, "kustomize-controller", APPLY) == [".spec.labels.a", ".spec.replicas"]
    assert any("left 2 field(s)" in n for n in m.notes)


def test_drop_last_applied_without_sources_removes_the_annotation() -> None:
    obj = client_side_created()
    obj = run_kubectl_ssa(obj)
    m = plan_to_server_side(obj, ROOT, keep_last_applied=False)
    assert m.last_applied_after is None
    out = assert_recorded_as_planned(obj, m)
    assert "annotations" not in out["metadata"]


def run_kubectl_ssa(obj: dict[str, Any]) -> dict[str, Any]:
    from kubectl_fieldown.appliers import Applier, run_applier

    run = run_applier(Applier.of("kubectl"), obj, manifest(), RULES, now=NOW)
    assert run.ok and run.result is not None
    return run.result


# --- the annotation keeps one owner, so an interrupted write is completed by the same plan ------------


SPECS = {
    "strip": lambda o: plan_strip_last_applied(o, [parse_path(".spec.replicas")]),
    "to-client-side": lambda o: plan_to_client_side(o, ROOT),
    "handover": lambda o: plan_handover(o, [parse_path(".spec.color")], "color-writer", ROOT),
    "to-server-side": lambda o: plan_to_server_side(o, ROOT),
}

STATES = {
    "client-side": lambda: labelled(client_side_created(), "team", "payments"),
    "kubectl-server-side": lambda: run_kubectl_ssa(client_side_created()),
    "server-side-only": lambda: server_side_applied(),
}


COMBINATIONS = [(spec, state) for spec in sorted(SPECS) for state in sorted(STATES)
                # only objects with a last-applied annotation can be stripped (below)
                if not (spec == "strip" and state == "server-side-only")]


@pytest.mark.parametrize(("spec", "state"), COMBINATIONS)
def test_every_plan_is_recorded_as_planned_and_converges_after_an_interruption(spec: str, state: str) -> None:
    obj = STATES[state]()
    m = SPECS[spec](obj)
    reqs = requests_for(m)
    full = assert_recorded_as_planned(obj, m)
    for cut in range(1, len(reqs)):
        # the run stops after `cut` requests; the command is run again: a new plan from what is there
        partial = simulate_requests(obj, reqs[:cut], RULES, now=NOW)
        again = SPECS[spec](partial)
        resumed = written(partial, again)
        assert not entries_differ(decode_entries(resumed["metadata"].get("managedFields")),
                                  decode_entries(full["metadata"].get("managedFields")))
        assert resumed["metadata"].get("annotations") == full["metadata"].get("annotations")
    # and a second run changes nothing
    assert not SPECS[spec](full).changed


def test_strip_refuses_an_object_without_the_annotation() -> None:
    with pytest.raises(MigrationError, match="no last-applied annotation"):
        plan_strip_last_applied(STATES["server-side-only"](), [parse_path(".spec.replicas")])


def test_writing_the_annotation_is_one_patch_as_its_client_side_owner() -> None:
    obj = client_side_created()
    m = plan_strip_last_applied(obj, [parse_path(".spec.replicas")])
    reqs = requests_for(m)
    assert len(reqs) == 1 and isinstance(reqs[0], JsonPatchRequest)
    assert reqs[0].field_manager == "kubectl-client-side-apply"
    assert reqs[0].ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "1"}


def test_an_annotation_kept_by_kubectl_is_applied_by_kubectl_last_applied() -> None:
    obj = run_kubectl_ssa(client_side_created())
    m = plan_strip_last_applied(obj, [parse_path(".spec.replicas")])
    reqs = requests_for(m)
    assert isinstance(reqs[0], ApplyRequest) and reqs[0].field_manager == "kubectl-last-applied"
    assert reqs[0].body["metadata"]["resourceVersion"] == "1"  # the apply's precondition


# --- handover, dropping managers ------------------------------------------------------------------------


def test_handover_to_an_applier_that_applies_other_fields_keeps_them() -> None:
    obj = edited(server_side_applied("argocd-controller"), color="green")
    m = plan_handover(obj, [parse_path(".spec.color")], "argocd-controller", ROOT)
    assert owned(m, "argocd-controller", APPLY) == [".spec.color", ".spec.labels.a", ".spec.replicas"]
    assert owned(m, "kubectl-edit") == []
    assert_recorded_as_planned(obj, m)


def test_handover_takes_the_field_from_the_managers_own_update_entry() -> None:
    obj = updated(server_side_applied("helm"), "helm", lambda o: o["spec"].update(color="green"))
    m = plan_handover(obj, [parse_path(".spec.color")], "helm", ROOT)
    assert owned(m, "helm", UPDATE) == []
    assert ".spec.color" in owned(m, "helm", APPLY)


def test_handover_of_a_field_that_is_not_set_is_refused() -> None:
    with pytest.raises(MigrationError, match="not set"):
        plan_handover(client_side_created(), [parse_path(".spec.tier")], "x", ROOT)


def test_dropping_a_stale_manager_keeps_its_values() -> None:
    obj = server_side_applied("kustomize-controller", manifest(color="red"))
    m = plan_drop_managers(obj, ["kustomize-controller"])
    assert m.after == []
    out = assert_recorded_as_planned(obj, m)
    assert out["spec"] == obj["spec"]


_ITEMS = {"spec": {"containers": [{"name": "main", "image": "a", "ports": [{"containerPort": 80}]},
                                  {"name": "side", "image": "b"}]}}


@pytest.mark.parametrize(("paths", "want", "outcome"), [
    # a key field alone stays: the item still sets other fields, and cannot exist without its key
    ([".spec.containers[name=\"main\"].name"], _ITEMS, ["key kept"]),
    # every field of the item, its key included: the item goes whole
    ([".spec.containers[name=\"side\"].name", ".spec.containers[name=\"side\"].image"],
     {"spec": {"containers": [_ITEMS["spec"]["containers"][0]]}}, ["removed", "removed"]),
    # the key before the other field, in any order
    ([".spec.containers[name=\"side\"].image", ".spec.containers[name=\"side\"].name"],
     {"spec": {"containers": [_ITEMS["spec"]["containers"][0]]}}, ["removed", "removed"]),
    # the item itself, then its key: both gone
    ([".spec.containers[name=\"side\"]", ".spec.containers[name=\"side\"].name"],
     {"spec": {"containers": [_ITEMS["spec"]["containers"][0]]}}, ["removed", "removed"]),
    # part of an item: its key stays with the rest
    ([".spec.containers[name=\"main\"].name", ".spec.containers[name=\"main\"].image"],
     {"spec": {"containers": [{"name": "main", "ports": [{"containerPort": 80}]}, {"name": "side", "image": "b"}]}},
     ["key kept", "removed"]),
    ([".spec.containers[name=\"gone\"].name", ".spec.color"], _ITEMS, ["absent", "absent"]),
])
def test_remove_paths_keeps_an_items_key_while_the_item_stays(paths: list[str], want: Any, outcome: list[str]) -> None:
    doc = json.loads(json.dumps(_ITEMS))
    got = remove_paths(doc, [parse_path(p) for p in paths])
    assert doc == want
    assert [got[parse_path(p)] for p in paths] == outcome
