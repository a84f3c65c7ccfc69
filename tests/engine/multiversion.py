"""Cases of CRDs served at several versions (tests/conformance/multiversion): Multi (two versions,
cases mv-*) and Trio (three versions, a field at one version only, a status subresource; cases
tv-*). Defined here, played on a real API server, recorded in the format of
tests/conformance/README.md.

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
TRIO_CRD_FILE = CASES_DIR / "crd-trio.yaml"
V1, V2, V3 = "example.com/v1", "example.com/v2", "example.com/v3"
NAMESPACE = "mv"
#: kind → (plural, CRD file)
KINDS = {"Multi": ("multis", CRD_FILE), "Trio": ("trios", TRIO_CRD_FILE)}


def kind_of(case_id: str) -> str:
    return "Trio" if case_id.startswith("tv-") else "Multi"


def _body(version: str, name: str, spec: dict[str, Any] | None, kind: str = "Multi",
          status: dict[str, Any] | None = None) -> dict[str, Any]:
    b: dict[str, Any] = {"apiVersion": version, "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE}}
    if spec is not None:
        b["spec"] = spec
    if status is not None:
        b["status"] = status
    return b


def _apply(manager: str, version: str, spec: dict[str, Any] | None, force: bool = False,
           status: dict[str, Any] | None = None, subresource: str = "") -> dict[str, Any]:
    step: dict[str, Any] = {"op": "apply", "manager": manager, "force": force, "version": version, "spec": spec}
    if status is not None:
        step["status"] = status
    if subresource:
        step["subresource"] = subresource
    return step


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
    # --- Trio: three versions, .spec.extra at v2 only, .status.note at v3 only ----------------------
    "tv-status-at-other-version-conflicts-with-status-writer": (
        "the status writer applied status.phase through /status at v1; bob's apply to the main resource "
        "at v2 carries status: the server compares the status writer's entry at v1, where nothing is "
        "reset, and conflicts (forced: the writer loses the field, the value stays, status is reset)",
        [_apply("alice", V1, {"color": "red"}),
         _apply("status-writer", V1, None, status={"phase": "Up"}, subresource="status")],
        _apply("bob", V2, {"color": "red"}, status={"phase": "Down"}),
    ),
    "tv-status-at-same-version-no-conflict": (
        "the same at the status writer's version: the main resource's reset fields (status) are left "
        "out of the comparison, no conflict, the writer keeps status.phase",
        [_apply("alice", V1, {"color": "red"}),
         _apply("status-writer", V1, None, status={"phase": "Up"}, subresource="status")],
        _apply("bob", V1, {"color": "red"}, status={"phase": "Down"}),
    ),
    "tv-status-writer-at-v3-main-apply-at-v1": (
        "the status writer applied status.phase at v3; an apply to the main resource at v1 carrying "
        "status.phase conflicts with it, compared at v3",
        [_apply("alice", V1, {"color": "red"}),
         _apply("status-writer", V3, None, status={"phase": "Up"}, subresource="status")],
        _apply("bob", V1, {"color": "red"}, status={"phase": "Down"}),
    ),
    "tv-status-apply-carrying-spec-at-other-version": (
        "a status apply at v2 that carries .spec.color, which alice owns at v1: the status endpoint "
        "resets spec at v2 only, so the comparison at alice's version conflicts (forced: alice loses "
        "color; the value stays, the status strategy resets spec)",
        [_apply("alice", V1, {"color": "red"})],
        _apply("status-writer", V2, {"color": "blue"}, status={"phase": "Up"}, subresource="status"),
    ),
    "tv-status-apply-carrying-spec-at-same-version": (
        "the same status apply at alice's version: spec is reset there, no conflict",
        [_apply("alice", V1, {"color": "red"})],
        _apply("status-writer", V1, {"color": "blue"}, status={"phase": "Up"}, subresource="status"),
    ),
    "tv-field-of-v2-with-entry-at-v1": (
        "alice's entry is at v1; bob applies .spec.extra (v2 only) at v2: comparing at v1 needs the new "
        "object at v1, which cannot hold extra: 500, failed to convert new object",
        [_apply("alice", V1, {"color": "red"})],
        _apply("bob", V2, {"extra": "x"}),
    ),
    "tv-status-field-of-v3-with-entry-at-v1": (
        "the status writer applies .status.note (v3 only) at v3 while alice's entry is at v1: failed to "
        "convert new object, on the status subresource too",
        [_apply("alice", V1, {"color": "red"}),
         _apply("status-writer", V3, None, status={"phase": "Up"}, subresource="status")],
        _apply("carol", V3, {"color": "red"}, status={"note": "n"}),
    ),
    "tv-manifest-field-not-at-its-version": (
        "a manifest at v1 with .spec.extra (v2 only): failed to create typed patch object",
        [_apply("alice", V1, {"color": "red"})],
        _apply("alice", V1, {"color": "red", "extra": "x"}),
    ),
    "tv-entry-owns-field-storage-dropped": (
        "bob applied extra at v2 alone (the stored object, at v1, drops it; bob's entry keeps owning "
        "it); alice's apply at v1 changes color, which bob owns at v2",
        [_apply("bob", V2, {"color": "red", "extra": "x"})],
        _apply("alice", V1, {"color": "blue"}),
    ),
    "tv-prune-adds-back-at-version-without-field": (
        "carol's entry is at v1; alice applied color at v2 and now applies extra instead: the prune "
        "adds owned items back at v1, converting the merged object (with extra) there, and fails",
        [_apply("carol", V1, {"replicas": 1}),
         _apply("alice", V2, {"color": "red"})],
        _apply("alice", V2, {"extra": "x"}),
    ),
    "tv-field-of-v2-alone-at-v2": (
        "extra applied at v2 with every entry at v2: no conversion, the apply succeeds (the stored "
        "object drops extra, the entry owns it)",
        [_apply("carol", V2, {"replicas": 1})],
        _apply("alice", V2, {"extra": "x", "color": "red"}),
    ),
    "tv-apply-at-v3-entries-at-v1-and-v2": (
        "entries at v1 and v2 (extra owned but not stored); an apply at v3 changing color compares each "
        "at its own version and conflicts with the v2 owner",
        [_apply("bob", V2, {"color": "red", "extra": "x"}),
         _apply("alice", V1, {"replicas": 2})],
        _apply("carol", V3, {"color": "blue"}),
    ),
}


def object_path(version: str, name: str | None = None, namespace: str = NAMESPACE, kind: str = "Multi") -> str:
    base = f"/apis/{version}/namespaces/{namespace}/{KINDS[kind][0]}"
    return base + (f"/{name}" if name is not None else "")


def step_request(step: dict[str, Any], name: str,
                 kind: str = "Multi") -> tuple[str, str, Any, str, list[tuple[str, str]]]:
    """(method, path, body, content type, query) of one step."""
    op, version, manager = step["op"], step["version"], step["manager"]
    if op == "apply":
        path = object_path(version, name, kind=kind)
        if step.get("subresource"):
            path += "/" + step["subresource"]
        return ("PATCH", path, _body(version, name, step["spec"], kind, step.get("status")), APPLY_CT,
                [("fieldManager", manager), ("force", str(step["force"]).lower())])
    if op == "create":
        return ("POST", object_path(version, kind=kind), _body(version, name, step["spec"], kind), "application/json",
                [("fieldManager", manager)])
    if op == "merge-patch":
        return ("PATCH", object_path(version, name, kind=kind), step["body"], MERGE_CT, [("fieldManager", manager)])
    if op == "json-patch":
        return ("PATCH", object_path(version, name, kind=kind), step["body"], JSON_PATCH_CT,
                [("fieldManager", manager)])
    raise ValueError(f"unknown op {op}")


def play(api: Api, case_id: str, name: str) -> dict[str, Any]:
    """Play one case's steps and its final apply on the server; the case in the conformance format
    (forced dry run first, then the real unforced apply, as tests/engine/scenarios.py does)."""
    note, steps, final = CASE_DEFS[case_id]
    kind = kind_of(case_id)
    played = []
    for step in steps:
        s = copy.deepcopy(step)
        method, path, body, ct, query = step_request(s, name, kind)
        resp = api.request(method, path, body, ct, query)
        s["status"] = resp.status
        if resp.status >= 400:
            raise AssertionError(f"{case_id}: step {s} answered {resp.status}: {resp.body}")
        played.append(s)
    version = final["version"]
    path = object_path(version, name, kind=kind)
    got = api.request("GET", path)
    assert got.status == 200, got
    live = got.body
    manifest = _body(version, name, final["spec"], kind, final.get("status"))
    m = final["manager"]
    sub = final.get("subresource", "")
    target = path + (f"/{sub}" if sub else "")
    forced = api.request("PATCH", target, manifest, APPLY_CT,
                         [("fieldManager", m), ("force", "true"), ("dryRun", "All")])
    real = api.request("PATCH", target, manifest, APPLY_CT, [("fieldManager", m), ("force", "false")])
    return {
        "id": case_id, "seed": None, "kind": kind, "note": note, "serverVersion": "v1.36.4",
        "schema": crd(kind), "steps": played, "live": live,
        "apply": {"manager": m, "manifest": manifest, "force": False, **({"subresource": sub} if sub else {})},
        "expect": answer_of(real), "expectForced": answer_of(forced), "tags": ["multiversion"],
    }


def crd(kind: str = "Multi") -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(KINDS[kind][1].read_text())
    return data


def rules(version: str, kind: str = "Multi") -> ResourceRules:
    """The engine's rules for ``kind`` at ``version``, with every version's schema."""
    from kubectl_fieldown.schema.crd import crd_storage_version, crd_subresources, kinds_from_crd
    from kubectl_fieldown.schema.types import GroupVersionKind

    c = crd(kind)
    every = kinds_from_crd(c, include_unserved=True)
    gvk = GroupVersionKind.from_api_version(version, kind)
    return ResourceRules.for_kind(every[gvk], crd_subresources(c, gvk.version).status,
                                  versions={k.api_version: ks.root for k, ks in every.items()},
                                  storage_version=crd_storage_version(c))


def case_file(case_id: str) -> Path:
    return CASES_DIR / f"{case_id}.json"


def write_case(case: dict[str, Any]) -> None:
    case_file(case["id"]).write_text(json.dumps(case, sort_keys=False) + "\n")


def recorded() -> list[Path]:
    """The recorded cases (the CRD files are YAML)."""
    return sorted(CASES_DIR.glob("*.json"))


__all__ = ["CASE_DEFS", "Response", "play", "recorded", "write_case"]
