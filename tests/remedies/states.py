"""Object histories built on the engine (the simulated API server), for the remedy tests.

Each builder plays real request shapes — kubectl's client-side create and three-way patch, a
``kubectl scale`` Update of ``/scale``, ``kubectl label`` — through the engine, on the Widget CRD
of the conformance cases (status and scale subresources, ``containers`` a list-map)."""

from __future__ import annotations

import copy
from typing import Any

from engine.conformance_cases import CASES, load, rules_for

from kubectl_fieldown.appliers import Applier, run_applier
from kubectl_fieldown.fieldmanager import ResourceRules, simulate_apply, simulate_update

NOW = "2026-11-24T10:00:00Z"
RULES: ResourceRules = rules_for(load(CASES / "cur-hpa-handover.json"))


def manifest(name: str = "w", **spec: Any) -> dict[str, Any]:
    body = {"replicas": 2, "color": "blue", "labels": {"a": "x"}}
    body.update(spec)
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "shop"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def stored(obj: dict[str, Any], rv: int = 1) -> dict[str, Any]:
    obj["metadata"]["uid"] = "uid-1"
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


def client_side_created(m: dict[str, Any] | None = None) -> dict[str, Any]:
    run = run_applier(Applier.of("kubectl-client-side"), None, m or manifest(), RULES, now=NOW)
    assert run.ok and run.result is not None
    return stored(run.result)


def server_side_applied(manager: str = "kubectl", m: dict[str, Any] | None = None,
                        live: dict[str, Any] | None = None) -> dict[str, Any]:
    return stored(simulate_apply(live, m or manifest(), manager, RULES, now=NOW).object)


def updated(obj: dict[str, Any], manager: str, change: Any, subresource: str = "") -> dict[str, Any]:
    new = copy.deepcopy(obj)
    change(new)
    return simulate_update(obj, new, manager, RULES, now=NOW, subresource=subresource).object


def scaled(obj: dict[str, Any], replicas: int, manager: str = "kubectl") -> dict[str, Any]:
    def change(o: dict[str, Any]) -> None:
        o["spec"]["replicas"] = replicas
    return updated(obj, manager, change, "scale")


def labelled(obj: dict[str, Any], key: str, value: str, manager: str = "kubectl-label") -> dict[str, Any]:
    def change(o: dict[str, Any]) -> None:
        o["metadata"].setdefault("labels", {})[key] = value
    return updated(obj, manager, change)


def edited(obj: dict[str, Any], manager: str = "kubectl-edit", **spec: Any) -> dict[str, Any]:
    def change(o: dict[str, Any]) -> None:
        o["spec"].update(spec)
    return updated(obj, manager, change)


def entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """manager/operation/subresource -> FieldsV1 JSON (for readable assertions)."""
    import json

    return {(e["manager"], e["operation"], e.get("subresource", "")): json.dumps(e["fieldsV1"], sort_keys=True)
            for e in obj["metadata"].get("managedFields") or []}
