"""CRDs served at several versions (issue 17, class 4; issue 20): the server's answers recorded in
tests/conformance/multiversion agree with the engine — rejections with their message — and the
lab still gives them.

The server keeps Update entries per apiVersion and Apply entries per manager (the version is not
part of an applier's identity); it compares, prunes and reconciles each entry at its own version
(with conversion None the object converts by renaming its apiVersion, but each version has its own
schema: Multi's ``.spec.tags`` is atomic at v1 and a set at v2). Trio (three versions) shows the rest:
the endpoint's reset fields are left out at the request's version only (a status writer's entry at
another version conflicts with a main-resource apply carrying status); converting an object to a
version whose schema lacks one of its fields fails (500 ``failed to convert new object: .spec.extra:
field not declared in schema``, or inside the prune); the stored object (v1) drops such a field
while an entry may keep owning it.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import lab
import pytest

from .conformance_cases import differences, expected, load, predict
from .multiversion import CASE_DEFS, V1, V2, case_file, object_path, play, recorded, rules, write_case
from .scenarios import APPLY_CT, JSON_PATCH_CT, MERGE_CT, Api

RECORD_ENV = "FIELDOWN_RECORD_MULTIVERSION"
CASES = recorded()


def test_every_case_is_recorded() -> None:
    assert {p.stem for p in CASES} == set(CASE_DEFS)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
@pytest.mark.parametrize("forced", [False, True], ids=["expect", "expectForced"])
def test_prediction_matches_the_server(path: Path, forced: bool) -> None:
    case = load(path)
    answer = case["expectForced" if forced else "expect"]
    diffs = differences(expected(answer), predict(case, forced))
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("case_id", sorted(CASE_DEFS))
def test_the_server_still_answers_so(cluster: lab.Cluster, case_id: str) -> None:
    api = Api(str(cluster.kubeconfig))
    name = f"{case_id[:40]}-{uuid.uuid4().hex[:6]}"
    fresh = play(api, case_id, name)
    if os.environ.get(RECORD_ENV) == "1":
        write_case(fresh)
    old = load(case_file(case_id))
    for key in ("expect", "expectForced"):
        # a refusal's message names the object: the recorded one's name
        answer = {**fresh[key], "message": fresh[key].get("message", "").replace(
            name, old["live"]["metadata"]["name"])}
        diffs = differences(expected(old[key]), expected(answer))
        assert not diffs, f"{key}: " + "\n".join(diffs)


def test_an_update_that_records_an_entry_of_unknown_version_clears_managed_fields(
        cluster: lab.Cluster, namespace: str) -> None:
    """An entry at a version the CRD does not list (example.com/v9) cannot be converted to: the
    Update that brings it fails inside the field manager, and the server writes the object with no
    managedFields at all (``UpdateNoErrors``)."""
    from kubectl_fieldown.fieldmanager import simulate_update
    from kubectl_fieldown.fieldmanager.jsonpatch import apply_json_patch

    api = Api(str(cluster.kubeconfig))
    name = "ghost-entry"
    body = {"apiVersion": V1, "kind": "Multi", "metadata": {"name": name, "namespace": namespace},
            "spec": {"color": "red"}}
    made = api.request("PATCH", object_path(V1, name, namespace), body, APPLY_CT, [("fieldManager", "alice")])
    assert made.status == 201, made.body
    ghost = {"manager": "ghost", "operation": "Update", "apiVersion": "example.com/v9", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    # a known version first (the entry is kept), then the unknown one (everything goes)
    for entry, cleared in (({**ghost, "apiVersion": "example.com/v2"}, False), (ghost, True)):
        live = api.request("GET", object_path(V1, name, namespace)).body
        ops = [{"op": "add", "path": "/metadata/managedFields/-", "value": entry},
               {"op": "replace", "path": "/spec/color", "value": "blue" if cleared else "green"}]
        predicted = simulate_update(live, apply_json_patch(live, ops), "fixer", rules(V1), now=live["metadata"][
            "creationTimestamp"])
        got = api.request("PATCH", object_path(V1, name, namespace), ops, JSON_PATCH_CT, [("fieldManager", "fixer")])
        assert got.status == 200, got.body
        entries = got.body["metadata"].get("managedFields", [])
        server = {(e["manager"], e["operation"], e["apiVersion"]) for e in entries}
        assert {(e.manager, e.operation, e.api_version) for e in predicted.entries} == server
        assert (server == set()) is cleared


@pytest.mark.parametrize("first_version", [V1, V2], ids=["entry-at-v1", "entry-at-v2"])
def test_an_update_with_a_field_another_entrys_version_lacks(cluster: lab.Cluster, namespace: str,
                                                            first_version: str) -> None:
    """Trio's .spec.extra exists at v2 only. A merge patch at v2 that writes it: with an entry at v1
    the field manager cannot convert the new object to v1 and the server writes the object with no
    managedFields at all (UpdateNoErrors); with every entry at v2 the writer owns extra, which the
    stored object (at v1) does not keep. The engine predicts both."""
    from kubectl_fieldown.appliers.jsonmerge import apply_merge_patch
    from kubectl_fieldown.fieldmanager import simulate_update

    api = Api(str(cluster.kubeconfig))
    name = f"update-extra-{first_version[-2:]}"
    made = api.request("PATCH", object_path(first_version, name, namespace, "Trio"),
                       {"apiVersion": first_version, "kind": "Trio", "metadata": {"name": name, "namespace": namespace},
                        "spec": {"color": "red"}}, APPLY_CT, [("fieldManager", "alice")])
    assert made.status == 201, made.body
    live = api.request("GET", object_path(V2, name, namespace, "Trio")).body
    patch = {"spec": {"extra": "x", "replicas": 2}}
    predicted = simulate_update(live, apply_merge_patch(live, patch), "ctl", rules(V2, "Trio"),
                                now=live["metadata"]["creationTimestamp"])
    got = api.request("PATCH", object_path(V2, name, namespace, "Trio"), patch, MERGE_CT, [("fieldManager", "ctl")])
    assert got.status == 200, got.body
    entries = got.body["metadata"].get("managedFields", [])
    server = {(e["manager"], e["operation"], e["apiVersion"], json.dumps(e["fieldsV1"], sort_keys=True))
              for e in entries}
    assert {(e.manager, e.operation, e.api_version, json.dumps(e.to_dict()["fieldsV1"], sort_keys=True))
            for e in predicted.entries} == server
    assert (server == set()) is (first_version == V1)
    assert predicted.object["spec"] == got.body["spec"] == {"color": "red", "replicas": 2}


@pytest.mark.parametrize("entry_version", [V1, V2], ids=["entry-at-v1", "entry-at-v2"])
def test_an_update_loses_the_fields_its_version_does_not_declare(cluster: lab.Cluster, namespace: str,
                                                                 entry_version: str) -> None:
    """A merge patch at v1 with .spec.extra (v2 only) and .spec.bogus (no version): the decoder
    prunes both before the field manager sees the object, so nobody owns them and no conversion
    fails, whatever the version of the other entry."""
    from kubectl_fieldown.appliers.jsonmerge import apply_merge_patch
    from kubectl_fieldown.fieldmanager import simulate_update

    api = Api(str(cluster.kubeconfig))
    name = f"update-unknown-{entry_version[-2:]}"
    made = api.request("PATCH", object_path(entry_version, name, namespace, "Trio"),
                       {"apiVersion": entry_version, "kind": "Trio", "metadata": {"name": name, "namespace": namespace},
                        "spec": {"color": "red"}}, APPLY_CT, [("fieldManager", "alice")])
    assert made.status == 201, made.body
    live = api.request("GET", object_path(V1, name, namespace, "Trio")).body
    patch = {"spec": {"extra": "x", "bogus": 1, "replicas": 2}}
    predicted = simulate_update(live, apply_merge_patch(live, patch), "ctl", rules(V1, "Trio"),
                                now=live["metadata"]["creationTimestamp"])
    got = api.request("PATCH", object_path(V1, name, namespace, "Trio"), patch, MERGE_CT, [("fieldManager", "ctl")])
    assert got.status == 200, got.body
    server = {(e["manager"], e["apiVersion"], json.dumps(e["fieldsV1"], sort_keys=True))
              for e in got.body["metadata"]["managedFields"]}
    assert {(e.manager, e.api_version, json.dumps(e.to_dict()["fieldsV1"], sort_keys=True))
            for e in predicted.entries} == server
    assert ("ctl", V1, json.dumps({"f:spec": {"f:replicas": {}}})) in server
    assert predicted.object["spec"] == got.body["spec"] == {"color": "red", "replicas": 2}
