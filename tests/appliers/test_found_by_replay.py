"""What the replays of tests/appliers found, pinned as unit tests on the pure core.

Each answer below is the lab API server's (observed with the requests named; the curated replay
cases ``widget/*/*/invalid``, ``widget/flux-*``, ``widget/*/flux/if-not-present`` keep checking them
against the server itself):

* writes other than applies go through the custom resource decoder and the CRD validator: nulls of
  typed map fields are dropped (``PruneNonNullableNullsWithoutDefaults``), a null item of a typed
  list, a value or a set item of another type than the schema's, a scale subresource's replicas
  that are no integer, and a repeated item of a set or key of a list-map (after defaulting) are a
  422 (``widget/*/kubectl-client-side/wrong-type``, ``*/kubectl-client-side/wrong-set-item``);
* a client-side apply after ``kubectl replace -f`` of a file saved by ``kubectl get``: the
  annotation holds the resourceVersion, kubectl's three-way patch removes it, and the store refuses
  an update of a custom resource without one (``widget/csa-replaced/kubectl-client-side/*``);
* Flux's selectors are labels or annotations, compared case-insensitively, and
  ``kustomize.toolkit.fluxcd.io/ssa: Ignore`` or ``IfNotPresent`` mean no request at all.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from engine.conformance_cases import CASES, load, rules_for

from kubectl_fieldown.appliers import Applier, run_applier
from kubectl_fieldown.fieldmanager import FieldManagerError, simulate_update
from kubectl_fieldown.ownership.managedfields import LAST_APPLIED_ANNOTATION as LAST_APPLIED

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
    # kubectl apply (client-side) of replicas "two": the schema's type, then the scale subresource's path
    (WIDGET, {"replicas": "two"},
     '[spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", '
     '.spec.replicas: Invalid value: 0: .spec.replicas accessor error: two is of the type string, expected int64]'),
    # kubectl apply (client-side) of a set item of another type
    (WIDGET, {"finalizers": ["f1", 2]},
     'spec.finalizers[1]: Invalid value: "integer": spec.finalizers[1] in body must be of type string: "integer"'),
    (GIZMO, {"tags": [1, "two"]},
     'spec.tags[1]: Invalid value: "string": spec.tags[1] in body must be of type integer: "string"'),
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


def _flux(live: dict[str, Any] | None, manifest: dict[str, Any]) -> list[tuple[str, str]]:
    run = run_applier(Applier.of("flux"), live, manifest, rules_for(WIDGET), now=NOW)
    return [(r.verb, r.purpose) for r in run.requests]


def _with_meta(obj: dict[str, Any], where: str, key: str, value: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault(where, {})[key] = value
    return out


def _client_side_live() -> dict[str, Any]:
    manifest = WIDGET["apply"]["manifest"]
    run = run_applier(Applier.of("kubectl-client-side"), None, manifest, rules_for(WIDGET), now=NOW)
    assert run.result is not None
    return run.result


def test_flux_cleanup_exclusion_is_a_label_too_in_any_case() -> None:
    live = _client_side_live()
    manifest = _with_meta(WIDGET["apply"]["manifest"], "labels", "tier", "web")  # drifted: Flux applies
    assert [v for v, _ in _flux(live, manifest)] == ["json-patch", "apply"]
    # kubectl label ...kustomize.toolkit.fluxcd.io/ssa=merge: no cleanup patch
    labelled = _with_meta(live, "labels", "kustomize.toolkit.fluxcd.io/ssa", "merge")
    assert [v for v, _ in _flux(labelled, manifest)] == ["apply"]
    # nor with the annotation in the manifest
    annotated = _with_meta(manifest, "annotations", "kustomize.toolkit.fluxcd.io/ssa", "MERGE")
    assert [v for v, _ in _flux(live, annotated)] == ["apply"]


@pytest.mark.parametrize(("where", "key", "value"), [
    ("annotations", "kustomize.toolkit.fluxcd.io/ssa", "Ignore"),
    ("labels", "kustomize.toolkit.fluxcd.io/reconcile", "Disabled"),
])
def test_flux_exclusion_selector_sends_nothing(where: str, key: str, value: str) -> None:
    live = _client_side_live()
    manifest = WIDGET["apply"]["manifest"]
    assert _flux(_with_meta(live, where, key, value), manifest) == []
    assert _flux(live, _with_meta(manifest, where, key, value)) == []
    assert _flux(None, _with_meta(manifest, where, key, value)) == []


def test_flux_if_not_present_only_creates() -> None:
    manifest = _with_meta(WIDGET["apply"]["manifest"], "annotations", "kustomize.toolkit.fluxcd.io/ssa",
                          "IfNotPresent")
    assert _flux(_client_side_live(), manifest) == []
    assert [v for v, _ in _flux(None, manifest)] == ["apply"]


def test_client_side_apply_after_a_replace_of_a_saved_file_is_refused() -> None:
    live = _client_side_live()
    live["metadata"].update(resourceVersion="7", uid="0a7c4e52-9f3b-4d3e-8a0e-3f1d2c4b5a69")  # as the server sets
    # kubectl get -o json > f; kubectl replace -f f: kubectl rewrites the annotation it finds from the
    # object it sends, resourceVersion and uid included
    saved = copy.deepcopy(live)
    md = saved["metadata"]
    md.pop("managedFields", None)
    md["annotations"].pop(LAST_APPLIED, None)
    replaced = copy.deepcopy(live)
    replaced["metadata"]["annotations"][LAST_APPLIED] = json.dumps(saved)
    run = run_applier(Applier.of("kubectl-client-side"), replaced, WIDGET["apply"]["manifest"], rules_for(WIDGET),
                      now=NOW)
    (req,) = run.requests
    assert req.body["metadata"]["resourceVersion"] is None and req.body["metadata"]["uid"] is None
    assert (req.verb, req.status) == ("merge-patch", 422)
    assert req.message == (f'widgets.example.com "{md["name"]}" is invalid: metadata.resourceVersion: '
                           "Invalid value: 0: must be specified for an update")
    assert not run.ok and run.result == replaced
