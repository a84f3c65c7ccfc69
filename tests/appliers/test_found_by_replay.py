"""What the replays of tests/appliers found, pinned as unit tests on the pure core.

Each answer below is the lab API server's (observed with the requests named; the curated replay
cases ``widget/*/*/invalid`` keep checking them against the server itself):

* writes other than applies go through the custom resource decoder and the CRD validator: nulls of
  typed map fields are dropped (``PruneNonNullableNullsWithoutDefaults``), a null item of a typed
  list and a repeated item of a set or key of a list-map (after defaulting) are a 422.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from engine.conformance_cases import CASES, load, rules_for

from kubectl_fieldown.fieldmanager import FieldManagerError, simulate_update

NOW = "2026-11-25T00:00:00Z"
WIDGET = load(CASES / "cur-ports-defaulted-protocol-key.json")
GIZMO = load(CASES / "cur-gizmo-cluster-scoped-int-key.json")


def _update(case: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    live = case["live"]
    new = copy.deepcopy(live)
    new["spec"] = {**new.get("spec", {}), **spec}
    return simulate_update(live, new, "editor", rules_for(case), now=NOW).object


@pytest.mark.parametrize(("case", "spec", "message"), [
    # kubectl create of a Gizmo: 'spec.tags[1]: Duplicate value: 1', 'spec.rules[1]: Duplicate value: {"id":1}'
    (GIZMO, {"tags": [1, 2, 1]}, 'spec.tags[2]: Duplicate value: 1'),
    (GIZMO, {"rules": [{"id": 1}, {"id": 1, "action": "a"}]}, 'spec.rules[1]: Duplicate value: {"id":1}'),
    # kubectl apply (client-side) of ports [{80}, {80, TCP}] (random/1100082): protocol is defaulted first
    (WIDGET, {"containers": [{"name": "main", "ports": [{"containerPort": 80},
                                                        {"containerPort": 80, "protocol": "TCP"}]}]},
     'spec.containers[0].ports[1]: Duplicate value: {"containerPort":80,"protocol":"TCP"}'),
    # kubectl patch --type=merge -p '{"spec":{"args":[null]}}'
    (WIDGET, {"args": [None]},
     'spec.args[0]: Invalid value: "null": spec.args[0] in body must be of type string: "null"'),
])
def test_the_crd_validator_refuses_updates(case: dict[str, Any], spec: dict[str, Any], message: str) -> None:
    with pytest.raises(FieldManagerError) as e:
        _update(case, spec)
    assert e.value.status == 422
    assert e.value.message.endswith(f" is invalid: {message}")


def test_the_decoder_drops_nulls_of_typed_fields() -> None:
    # kubectl patch --type=json -p '[{"op":"add","path":"/spec/replicas","value":null}]': "patched (no change)"
    out = _update(WIDGET, {"replicas": None, "labels": {"a": None, "b": "x"}, "config": {"k": None}})
    assert "replicas" not in out["spec"]
    assert out["spec"]["labels"] == {"b": "x"}
    assert out["spec"]["config"] == {"k": None}  # preserve-unknown-fields: kept
