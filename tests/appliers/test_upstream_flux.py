"""fluxcd/pkg's own tests of its cleanup and selectors, ported to the lab (a Widget for upstream's
Deployment and ConfigMap; the lab serves custom resources only).

The harness restates fluxcd/pkg's cleanup rules (tests/appliers/replay.py ``flux_cleanup_patch``;
no Go build of fluxcd/pkg is available offline), and the product models them
(kubectl_fieldown.appliers, ``--applier flux``). Neither may be checked against the other alone:
here both must meet the assertions of upstream's tests (fluxcd/pkg ``ssa/manager_apply_test.go``,
read at e2cfd1a), played on the real server:

* ``TestApply_Cleanup``: an object created by ``kubectl-client-side-apply`` with the last-applied
  annotation; Flux's apply removes the annotation and leaves no manager but ``before-first-apply``
  and its own; after a ``kubectl apply --server-side`` (manager ``kubectl``, Apply), Flux's next apply
  leaves its own manager only;
* ``TestApply_Cleanup_Exclusions``: with the cleanup exclusion on the object
  (kustomize-controller's is ``kustomize.toolkit.fluxcd.io/ssa: Merge``), the client-side manager
  stays;
* ``TestApply_Exclusions``: an object carrying the exclusion selector (kustomize-controller's
  ``kustomize.toolkit.fluxcd.io/reconcile: disabled``) is not applied: a value changed in the cluster
  stays.

kustomize-controller's options are the ones the product models (docs/appliers.md): the annotation
cleanup, the field managers ``kubectl`` (Apply and Update, prefix), ``before-first-apply`` (Update)
and its own Update entry.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import lab
import pytest
from engine.scenarios import JSON_CT, object_path

from kubectl_fieldown.appliers import Applier, run_applier

from .replay import Appliers, Target, Wire

LAC = "kubectl.kubernetes.io/last-applied-configuration"
FLUX = "kustomize-controller"
NOW = "2026-11-26T00:00:00Z"


@pytest.fixture
def wire(cluster: lab.Cluster) -> Iterator[Wire]:
    yield Wire(str(cluster.kubeconfig))


@pytest.fixture
def appliers(cluster: lab.Cluster, wire: Wire) -> Appliers:
    return Appliers(wire, cluster.kubectl)


def widget(ns: str, name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": ns, **meta},
            "spec": {"color": "blue", "replicas": 2, "labels": {"app": name}}}


def managers(obj: dict[str, Any] | None) -> set[str]:
    assert obj is not None
    return {e["manager"] for e in obj["metadata"].get("managedFields") or []}


def rules() -> Any:
    from engine.conformance_cases import CASES, load, rules_for

    return rules_for(load(CASES / "cur-hpa-handover.json"))


def play(appliers: Appliers, wire: Wire, ns: str, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """Flux's apply on the lab (the harness) and the product's prediction of it from the same live
    object; both final objects are returned checked to have the same managers."""
    target = Target("Widget", manifest["metadata"]["name"], ns)
    live = wire.get(target.path)
    predicted = run_applier(Applier.of("flux", FLUX), live, manifest, rules(), now=NOW)
    rep = appliers.play(Applier.of("flux", FLUX), target, manifest)
    if rep.final is not None and predicted.result is not None:
        assert managers(rep.final) == managers(predicted.result), (rep.final, predicted.result)
    return rep.final


def create_as(wire: Wire, ns: str, doc: dict[str, Any], manager: str) -> None:
    resp = wire.send("POST", object_path("Widget", ns), doc, JSON_CT, query=[("fieldManager", manager)])
    assert resp.status == 201, resp.body


def test_apply_cleanup(appliers: Appliers, wire: Wire, namespace: str) -> None:
    manifest = widget(namespace, "cleanup")
    created = copy.deepcopy(manifest)
    created["metadata"]["annotations"] = {LAC: "test"}
    create_as(wire, namespace, created, "kubectl-client-side-apply")

    # "removes kubectl client-side-apply manager and annotation"
    final = play(appliers, wire, namespace, manifest)
    assert final is not None
    assert LAC not in (final["metadata"].get("annotations") or {})
    assert managers(final) <= {"before-first-apply", FLUX}, managers(final)

    # "replaces kubectl server-side-apply manager"
    resp = wire.send("PATCH", object_path("Widget", namespace, "cleanup"), manifest, "application/apply-patch+yaml",
                     query=[("fieldManager", "kubectl")])
    assert resp.status == 200, resp.body
    final = play(appliers, wire, namespace, manifest)
    assert managers(final) == {FLUX}, managers(final)


def test_apply_cleanup_exclusions(appliers: Appliers, wire: Wire, namespace: str) -> None:
    create_as(wire, namespace, widget(namespace, "excluded"), "kubectl-client-side-apply")
    # "does not remove kubectl manager": the object to apply carries the cleanup exclusion
    manifest = widget(namespace, "excluded", annotations={"kustomize.toolkit.fluxcd.io/ssa": "Merge"})
    final = play(appliers, wire, namespace, manifest)
    assert "kubectl-client-side-apply" in managers(final)


def test_apply_exclusions(appliers: Appliers, wire: Wire, namespace: str) -> None:
    manifest = widget(namespace, "ignored")
    play(appliers, wire, namespace, manifest)  # "creates objects"
    # "skips apply": the in-cluster object is changed and annotated with the exclusion selector
    path = object_path("Widget", namespace, "ignored")
    resp = wire.send("PATCH", path, {"metadata": {"annotations": {"kustomize.toolkit.fluxcd.io/reconcile": "disabled"}},
                                     "spec": {"color": "val"}}, "application/merge-patch+json",
                     query=[("fieldManager", "editor")])
    assert resp.status == 200, resp.body
    final = play(appliers, wire, namespace, manifest)
    assert final is not None and final["spec"]["color"] == "val"
    # "applies changes" without the selector on the object: the manifest's value comes back
    resp = wire.send("PATCH", path, {"metadata": {"annotations": {"kustomize.toolkit.fluxcd.io/reconcile": None}}},
                     "application/merge-patch+json", query=[("fieldManager", "editor")])
    assert resp.status == 200, resp.body
    final = play(appliers, wire, namespace, manifest)
    assert final is not None and final["spec"]["color"] == "blue"
