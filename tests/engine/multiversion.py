"""Cases of a CRD served at two versions (Multi, tests/conformance/multiversion): defined here,
played on a real API server, recorded in the format of tests/conformance/README.md.

Every step names the version it is sent at (``apiVersion`` of its body, or ``version`` for a
JSON patch); ``live`` is the object read at the final apply's version, so that its managedFields
hold entries recorded at both versions. ``test_multiversion.py`` replays the recorded answers
through the engine, and checks on the lab that the server still gives them.

To record again (after changing a case)::

    FIELDOWN_LAB_PREBUILT=1 .venv/bin/python -m pytest tests/engine/test_multiversion.py \
        -k still_answers --record-multiversion
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from kubectl_fieldown.fieldmanager import ResourceRules

from .scenarios import APPLY_CT, JSON_PATCH_CT, MERGE_CT, Api, Response, answer_of

CASES_DIR = Path(__file__).resolve().parent.parent / "conformance" / "multiversion"
CRD_FILE = CASES_DIR / "crd-multi.yaml"
V1, V2 = "example.com/v1", "example.com/v2"
NAMESPACE = "mv"


def _body(version: str, name: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": version, "kind": "Multi", "metadata": {"name": name, "namespace": NAMESPACE, **meta},
            "spec": spec}


def _apply(manager: str, version: str, spec: dict[str, Any], force: bool = False) -> dict[str, Any]:
    return {"op": "apply", "manager": manager, "force": force, "version": version, "spec": spec}


def _create(manager: str, version: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"op": "create", "manager": manager, "version": version, "spec": spec}


def _merge(manager: str, version: str, patch: dict[str, Any]) -> dict[str, Any]:
    return {"op": "merge-patch", "manager": manager, "version": version, "body": patch}


def _json_patch(manager: str, version: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {"op": "json-patch", "manager": manager, "version": version, "body": ops}


C_A = {"name": "a", "image": "a:1"}
C_B = {"name": "b", "image": "b:1"}

#: id → (note, steps, final apply: manager, version, spec)
CASE_DEFS: dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]] = {
    "mv-apply-moves-entry-to-new-version": (
        "an Apply entry is one per manager whatever its version: applied at v1, then at v2 without "
        "replicas, the entry moves to v2 and replicas is pruned",
        [_apply("alice", V1, {"color": "red", "replicas": 2})],
        _apply("alice", V2, {"color": "red"}),
    ),
    "mv-conflict-with-entry-of-other-version": (
        "bob's apply at v2 conflicts with alice's Apply entry recorded at v1",
        [_apply("alice", V1, {"color": "red", "replicas": 2})],
        _apply("bob", V2, {"color": "blue"}),
    ),
    "mv-update-entries-at-two-versions": (
        "Helm 3 wrote at v1 (create) and at v2 (an upgrade adding container b): two Update entries of "
        "one manager; an apply of the same name at v2 shares the fields with both",
        [_create("helm", V1, {"containers": [C_A], "color": "red"}),
         _merge("helm", V2, {"spec": {"containers": [C_A, C_B]}})],
        _apply("helm", V2, {"containers": [C_A], "color": "red"}),
    ),
    "mv-prune-keeps-field-of-updater-at-other-version": (
        "alice applies labels a and b at v1; ctl changes b at v2; alice drops b at v1: b stays, ctl's",
        [_apply("alice", V1, {"labels": {"a": "1", "b": "2"}}),
         _merge("ctl", V2, {"spec": {"labels": {"b": "3"}}})],
        _apply("alice", V1, {"labels": {"a": "1"}}),
    ),
    "mv-prune-after-apply-at-other-version": (
        "alice applied at v2 with container b; her apply at v1 without b prunes it (her previous set, "
        "recorded at v2, is converted)",
        [_apply("alice", V2, {"containers": [C_A, C_B]})],
        _apply("alice", V1, {"containers": [C_A]}),
    ),
    "mv-set-at-v2-atomic-at-v1": (
        "tags is a set at v2 and atomic at v1: alice owns items a and b (v2); bob's apply of [a] at v1 "
        "removes b, which alice loses as the server compares her set at v2",
        [_apply("alice", V2, {"tags": ["a", "b"]})],
        _apply("bob", V1, {"tags": ["a"]}),
    ),
    "mv-atomic-at-v1-set-at-v2": (
        "tags is atomic at v1 (alice owns the whole list) and a set at v2: bob's apply of [a, b, c] at "
        "v2 changes the list alice owns as one field",
        [_apply("alice", V1, {"tags": ["a", "b"]})],
        _apply("bob", V2, {"tags": ["a", "b", "c"]}),
    ),
    "mv-update-at-v1-then-apply-at-v2-conflict": (
        "a controller's Update entry at v1 owns the image; an apply at v2 that changes it conflicts",
        [_create("maker", V1, {"containers": [C_A]}),
         _merge("image-updater", V1, {"spec": {"containers": [{"name": "a", "image": "a:2"}]}})],
        _apply("ci", V2, {"containers": [C_A]}),
    ),
    "mv-prune-set-items-recorded-at-v2": (
        "alice applied tags as a set at v2; her apply at v1 without tags prunes the items she owned, "
        "read at v2",
        [_apply("alice", V2, {"tags": ["a", "b"], "color": "red"})],
        _apply("alice", V1, {"color": "red"}),
    ),
    "mv-prune-added-back-by-owner-at-other-version": (
        "alice applied tags [a, b] as a set at v2, bob the same list (atomic) at v1; alice drops tags: "
        "her items are pruned at v2, then added back because bob owns the whole list at v1",
        [_apply("alice", V2, {"tags": ["a", "b"], "color": "red"}),
         _apply("bob", V1, {"tags": ["a", "b"]})],
        _apply("alice", V2, {"color": "red"}),
    ),
    "mv-entry-of-unknown-version": (
        "a managedFields entry recorded at a version the CRD does not have (written by a JSON patch): "
        "the next apply fails to convert the object to it",
        [_apply("alice", V1, {"color": "red"}),
         _json_patch("fixer", V1, [{"op": "add", "path": "/metadata/managedFields/-", "value": {
             "manager": "ghost", "operation": "Update", "apiVersion": "example.com/v9", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}}])],
        _apply("bob", V1, {"replicas": 3}),
    ),
}


def object_path(version: str, name: str | None = None, namespace: str = NAMESPACE) -> str:
    base = f"/apis/{version}/namespaces/{namespace}/multis"
    return base + (f"/{name}" if name is not None else "")


def step_request(step: dict[str, Any], name: str) -> tuple[str, str, Any, str, list[tuple[str, str]]]:
    """(method, path, body, content type, query) of one step."""
    op, version, manager = step["op"], step["version"], step["manager"]
    if op == "apply":
        return ("PATCH", object_path(version, name), _body(version, name, step["spec"]), APPLY_CT,
                [("fieldManager", manager), ("force", str(step["force"]).lower())])
    if op == "create":
        return ("POST", object_path(version), _body(version, name, step["spec"]), "application/json",
                [("fieldManager", manager)])
    if op == "merge-patch":
        return ("PATCH", object_path(version, name), step["body"], MERGE_CT, [("fieldManager", manager)])
    if op == "json-patch":
        return ("PATCH", object_path(version, name), step["body"], JSON_PATCH_CT, [("fieldManager", manager)])
    raise ValueError(f"unknown op {op}")


def play(api: Api, case_id: str, name: str) -> dict[str, Any]:
    """Play one case's steps and its final apply on the server; the case in the conformance format
    (forced dry run first, then the real unforced apply, as tests/engine/scenarios.py does)."""
    note, steps, final = CASE_DEFS[case_id]
    played = []
    for step in steps:
        s = copy.deepcopy(step)
        method, path, body, ct, query = step_request(s, name)
        resp = api.request(method, path, body, ct, query)
        s["status"] = resp.status
        if resp.status >= 400:
            raise AssertionError(f"{case_id}: step {s} answered {resp.status}: {resp.body}")
        played.append(s)
    version = final["version"]
    got = api.request("GET", object_path(version, name))
    assert got.status == 200, got
    live = got.body
    manifest = _body(version, name, final["spec"])
    m = final["manager"]
    forced = api.request("PATCH", object_path(version, name), manifest, APPLY_CT,
                         [("fieldManager", m), ("force", "true"), ("dryRun", "All")])
    real = api.request("PATCH", object_path(version, name), manifest, APPLY_CT,
                       [("fieldManager", m), ("force", "false")])
    return {
        "id": case_id, "seed": None, "kind": "Multi", "note": note, "serverVersion": "v1.36.4",
        "schema": crd(), "steps": played, "live": live,
        "apply": {"manager": m, "manifest": manifest, "force": False},
        "expect": answer_of(real), "expectForced": answer_of(forced), "tags": ["multiversion"],
    }


def crd() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CRD_FILE.read_text())
    return data


def rules(version: str) -> ResourceRules:
    """The engine's rules for Multi at ``version``, with every version's schema."""
    from kubectl_fieldown.schema.crd import crd_subresources, kinds_from_crd
    from kubectl_fieldown.schema.types import GroupVersionKind

    c = crd()
    every = kinds_from_crd(c, include_unserved=True)
    gvk = GroupVersionKind.from_api_version(version, "Multi")
    return ResourceRules.for_kind(every[gvk], crd_subresources(c, gvk.version).status,
                                  versions={k.api_version: ks.root for k, ks in every.items()})


def case_file(case_id: str) -> Path:
    return CASES_DIR / f"{case_id}.json"


def write_case(case: dict[str, Any]) -> None:
    case_file(case["id"]).write_text(json.dumps(case, sort_keys=False) + "\n")


def recorded() -> list[Path]:
    return sorted(CASES_DIR.glob("*.json"))


__all__ = ["CASE_DEFS", "Response", "play", "recorded", "write_case"]
