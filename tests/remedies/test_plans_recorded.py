"""The remedy planners (kubectl_fieldown.remedies.plans) on an object recorded from the real API server
(kubectl 1.36 client-side apply of a Widget) and the Widget CRD schema.

The end-to-end behaviour is checked against the server in tests/cli/test_migrate_cluster.py; these
pin the planner details that those results depend on.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import lab
import pytest

from kubectl_fieldown.base.objects import ObjectRef
from kubectl_fieldown.fieldpath import FieldSet, parse_path, path_from_fields
from kubectl_fieldown.ownership.managedfields import ManagedFieldsEntry, decode_entries
from kubectl_fieldown.remedies.plans import (
    Migration,
    plan_reset,
    plan_strip_last_applied,
    plan_to_client_side,
    plan_to_server_side,
)
from kubectl_fieldown.remedies.requests import (
    RESOURCE_VERSION,
    ApplyRequest,
    JsonPatchRequest,
    requests_for,
    simulate_requests,
)
from kubectl_fieldown.schema.registry import SchemaRegistry
from kubectl_fieldown.schema.types import Type

from .states import RULES  # the same Widget CRD, with its status subresource

LA = "kubectl.kubernetes.io/last-applied-configuration"
PORT = '.spec.containers[name="a"].ports[containerPort=80,protocol="TCP"]'


@pytest.fixture(scope="module")
def root() -> Type:
    registry = SchemaRegistry()
    for crd in lab.conformance_crds():
        registry.add_crd(crd)
    return registry.lookup_api_version("example.com/v1", "Widget").root


def csa_widget() -> dict[str, Any]:
    """``kubectl apply`` (client-side) of a Widget whose port leaves the defaulted protocol out."""
    la = ('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{},"labels":{"app":"x"},'
          '"name":"w1","namespace":"t1"},"spec":{"color":"blue","containers":[{"image":"nginx","name":"a",'
          '"ports":[{"containerPort":80}]}],"replicas":3}}\n')
    port = {".": {}, "f:containerPort": {}, "f:protocol": {}}
    container = {".": {}, "f:image": {}, "f:name": {},
                 "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': port}}
    fields = {"f:metadata": {"f:annotations": {".": {}, f"f:{LA}": {}}, "f:labels": {".": {}, "f:app": {}}},
              "f:spec": {".": {}, "f:color": {}, "f:containers": {".": {}, 'k:{"name":"a"}': container},
                         "f:replicas": {}}}
    return {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "t1", "uid": "u1", "resourceVersion": "11", "labels": {"app": "x"},
                     "annotations": {LA: la},
                     "managedFields": [{"apiVersion": "example.com/v1", "fieldsType": "FieldsV1", "fieldsV1": fields,
                                        "manager": "kubectl-client-side-apply", "operation": "Update",
                                        "time": "2026-11-22T03:59:25Z"}]},
        "spec": {"color": "blue", "containers": [{"image": "nginx", "name": "a",
                                                  "ports": [{"containerPort": 80, "protocol": "TCP"}]}], "replicas": 3},
    }


def written(m: Migration, obj: dict[str, Any]) -> dict[str, Any]:
    """The object after the plan's requests, as the server would leave it (request by request)."""
    return simulate_requests(obj, requests_for(m), RULES, now="2026-11-22T05:00:00Z")


def entry(m: Migration, manager: str) -> ManagedFieldsEntry:
    return next(e for e in m.after if e.manager == manager)


# --- to server-side ---------------------------------------------------------------------------------------


def test_to_server_side_owns_what_an_apply_of_the_manifest_owns(root: Type) -> None:
    m = plan_to_server_side(csa_widget(), root)
    kubectl = entry(m, "kubectl")
    assert kubectl.operation == "Apply" and kubectl.time == "2026-11-22T03:59:25Z"
    assert kubectl.fields.has(parse_path(PORT + ".containerPort"))
    # defaulted by the server, never in the manifest: a re-apply would drop it and rewrite managedFields
    assert not kubectl.fields.has(parse_path(PORT + ".protocol"))
    assert not kubectl.fields.has(parse_path(".spec"))  # the "." markers of an update are not apply ownership
    assert entry(m, "kubectl-last-applied").fields == FieldSet([path_from_fields("metadata", "annotations", LA)])
    assert any("left 1 field(s) of kubectl-client-side-apply" in n for n in m.notes)
    assert "annotations" not in json.loads(m.last_applied_after or "")["metadata"]


def test_to_server_side_is_idempotent_and_leaves_unmanaged_objects_alone(root: Type) -> None:
    obj = csa_widget()
    m = plan_to_server_side(obj, root)
    after = written(m, obj)
    again = plan_to_server_side(after, root)
    assert not again.changed and requests_for(again) == []
    # an object without client-side entries is left as it is, whoever owns its annotation
    other = copy.deepcopy(after)
    for e in other["metadata"]["managedFields"]:
        e["manager"] = "deployer"
    assert not plan_to_server_side(other, root).changed


def test_to_server_side_other_manager_drops_the_annotation_in_one_patch(root: Type) -> None:
    m = plan_to_server_side(csa_widget(), root, target="flux")
    assert m.last_applied_after is None
    (req,) = requests_for(m)
    assert isinstance(req, JsonPatchRequest)
    assert [op["op"] for op in req.ops] == ["test", "remove", "add"]
    assert req.ops[0]["value"] == "11"
    assert req.ops[2]["path"] == "/metadata/managedFields"


def test_an_annotation_kept_by_kubectl_is_applied_by_its_owner_then_the_entries_follow(root: Type) -> None:
    m = plan_to_server_side(csa_widget(), root)
    first, second = requests_for(m)
    # the rewritten annotation is owned by kubectl-last-applied: written by an apply as that manager
    assert isinstance(first, ApplyRequest) and first.field_manager == "kubectl-last-applied" and first.force
    assert first.body["metadata"]["resourceVersion"] == "11"
    assert isinstance(second, JsonPatchRequest) and second.ops[0]["value"] == RESOURCE_VERSION
    out = written(m, csa_widget())
    assert {e.manager for e in decode_entries(out["metadata"]["managedFields"])} == {"kubectl", "kubectl-last-applied"}


def test_times_and_order_are_not_a_change() -> None:
    obj = csa_widget()
    entries = decode_entries(obj["metadata"]["managedFields"])
    retimed = [ManagedFieldsEntry(e.manager, e.operation, e.api_version, e.fields, None, e.subresource)
               for e in entries]
    m = Migration(ObjectRef.of(obj), "11", entries, retimed, None, None)
    assert not m.changed  # the API server ignores a write that only changes managedFields times


# --- to client-side ---------------------------------------------------------------------------------------


def test_round_trip_rebuilds_the_annotation_kubectl_wrote(root: Type) -> None:
    obj = csa_widget()
    ssa = written(plan_to_server_side(obj, root), obj)
    m = plan_to_client_side(ssa, root)
    # the defaulted key field the applier does not own is left out, as the user's manifest left it out
    assert m.last_applied_after == obj["metadata"]["annotations"][LA]
    back = written(m, ssa)
    (csa,) = decode_entries(back["metadata"]["managedFields"])
    assert (csa.manager, csa.operation) == ("kubectl-client-side-apply", "Update")
    assert csa.fields.has(path_from_fields("metadata", "annotations", LA))


# --- strip and reset ------------------------------------------------------------------------------------


def test_strip_removes_from_annotation_and_client_side_manager_and_is_idempotent(root: Type) -> None:
    obj = csa_widget()
    m = plan_strip_last_applied(obj, [parse_path(".spec.replicas")])
    assert "replicas" not in json.loads(m.last_applied_after or "")["spec"]
    assert not entry(m, "kubectl-client-side-apply").fields.has(parse_path(".spec.replicas"))
    after = written(m, obj)
    again = plan_strip_last_applied(after, [parse_path(".spec.replicas")])
    assert not again.changed
    assert again.notes == [".spec.replicas was not in the last-applied annotation"]


def test_reset_plans(root: Type) -> None:
    obj = csa_widget()
    m = plan_reset(obj, root)
    (req,) = requests_for(m)
    assert isinstance(req, JsonPatchRequest)
    assert req.ops[1] == {"op": "add", "path": "/metadata/managedFields", "value": [{}]}
    cleared = written(m, obj)
    assert "managedFields" not in cleared["metadata"]  # what the server does with [{}]
    assert not plan_reset(cleared, root).changed
    one = plan_reset(obj, root, to_manager="owner", reset_fields=FieldSet([path_from_fields("status")]))
    (owner,) = one.after
    assert (owner.manager, owner.operation) == ("owner", "Apply")
    assert owner.fields.has(parse_path(PORT + ".protocol")) and owner.fields.has(parse_path(".metadata.labels.app"))
    assert not plan_reset(written(one, obj), root, to_manager="owner").changed


def test_entries_differ_is_the_comparison_of_their_sorted_texts() -> None:
    # the model: entries with fields, as sorted (name, FieldsV1 text) tuples; times and order aside
    import random

    from kubectl_fieldown.fieldpath import encode_fields_v1
    from kubectl_fieldown.remedies.plans import entries_differ

    def model(entries: list[ManagedFieldsEntry]) -> list[tuple[str, ...]]:
        return sorted((e.manager, e.operation, e.api_version, e.subresource, encode_fields_v1(e.fields))
                      for e in entries if not e.fields.is_empty())

    sets = [FieldSet(), FieldSet([path_from_fields("spec", "a")]), FieldSet([path_from_fields("spec", "a")]),
            FieldSet([path_from_fields("spec", "b")]), FieldSet([parse_path(".spec.ports[port=80]")]),
            FieldSet([parse_path(".spec.ports[port=80.0]")])]  # equal sets, spelled otherwise
    rnd = random.Random(7)

    def entry() -> ManagedFieldsEntry:
        # few names, so that one name is often on both sides, or twice on one (a hand-made list)
        return ManagedFieldsEntry(rnd.choice(["a", "b"]), rnd.choice(["Apply", "Update"]), "v1",
                                  rnd.choice(sets), rnd.choice([None, "2026-01-01T00:00:00Z"]),
                                  rnd.choice(["", "", "status"]))

    seen = {True: 0, False: 0}
    for _ in range(3000):
        a = [entry() for _ in range(rnd.randrange(4))]
        b = rnd.choice([[entry() for _ in range(rnd.randrange(4))], list(reversed(a)),
                        [e.replace(fields=rnd.choice(sets)) if rnd.random() < 0.3 else e for e in a]])
        want = model(a) != model(b)
        assert entries_differ(a, b) == want, (a, b)
        seen[want] += 1
    assert min(seen.values()) > 300
