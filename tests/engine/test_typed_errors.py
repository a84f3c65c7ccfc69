"""Values of the wrong type in an applied manifest: the API server refuses them with 500 before any
ownership is computed (SMD's typed conversion), and the engine predicts the exact message — checked
against the real server with real ``kubectl apply --server-side``."""

from __future__ import annotations

import copy
import json
from typing import Any

import lab
import pytest

from kubectl_fieldown.fieldmanager import FieldManagerError, simulate_apply

from .conformance_cases import CASES, load, rules_for

RULES = rules_for(load(CASES / "cur-hpa-handover.json"))  # the Widget CRD

MANIFESTS: dict[str, dict[str, Any]] = {
    "one": {"replicas": "three"},
    "several": {"replicas": "three", "color": 5, "labels": [1, 2]},
    "bool-and-map": {"color": True, "containers": {"a": 1}},
    "nested": {"replicas": 1.5, "color": {"a": [1, "x", 2.5, True, None]}, "labels": "str",
               "containers": [{"name": "a", "image": 7, "ports": [{"containerPort": "80"}]}]},
}


def widget(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": namespace},
            "spec": copy.deepcopy(spec)}


def predicted(manifest: dict[str, Any]) -> str:
    with pytest.raises(FieldManagerError) as e:
        simulate_apply(None, manifest, "kubectl", RULES, now="2026-11-24T00:00:00Z")
    assert e.value.status == 500
    return e.value.message


def test_the_engine_names_the_first_wrong_value_as_the_server_does() -> None:
    assert predicted(widget("w", "ns", MANIFESTS["one"])) == (
        "failed to create typed patch object (ns/w; example.com/v1, Kind=Widget): "
        ".spec.replicas: expected numeric (int or float), got string")


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_type_errors_match_the_server(cluster: lab.Cluster, namespace: str, case: str) -> None:
    manifest = widget(f"typed-{case}", namespace, MANIFESTS[case])
    proc = cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(manifest), check=False)
    assert proc.returncode != 0
    got = proc.stderr.strip().removeprefix("Error from server: ").splitlines()
    want = predicted(manifest).splitlines()
    # several wrong values are listed in Go map order, which varies from one request to the next: the
    # prediction lists them sorted, and the lines must be the same
    assert got[0] == want[0]
    assert sorted(got[1:]) == want[1:]
