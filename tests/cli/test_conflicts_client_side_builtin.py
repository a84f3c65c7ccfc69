"""``conflicts --applier kubectl-client-side`` on built-in kinds, offline (``--live``), against the
recorded client-side applies of tests/conformance/builtin-csa (kubectl 1.36's strategic merge patch
and the server's answer): what the apply deletes, its request, the object it leaves and its
managedFields, and the server's rejection; Secrets stay redacted."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import run
from fieldsv1_oracle import oracle_entries

from kubectl_fieldown.ownership.managedfields import LAST_APPLIED_ANNOTATION

CASES = Path(__file__).resolve().parents[1] / "conformance" / "builtin-csa"


def _files(tmp: Path, name: str) -> tuple[dict[str, Any], list[str]]:
    case: dict[str, Any] = json.loads((CASES / f"{name}.json").read_text())
    (tmp / "live.yaml").write_text(yaml.safe_dump(case["live"]))
    manifest = case["apply"]["manifest"]
    manifest["metadata"].setdefault("namespace", case["object"]["namespace"])
    (tmp / "m.yaml").write_text(yaml.safe_dump(manifest))
    return case, ["conflicts", "-f", str(tmp / "m.yaml"), "--live", str(tmp / "live.yaml"),
                  "--applier", "kubectl-client-side"]


def _view(obj: dict[str, Any]) -> dict[str, Any]:
    md = dict(obj.get("metadata") or {})
    for k in ("uid", "creationTimestamp", "resourceVersion", "managedFields"):
        md.pop(k, None)
    return {**obj, "metadata": md}


def _item(args: list[str]) -> dict[str, Any]:
    r = run(*args, "-o", "json")
    assert r.code in (0, 1), r.err
    (item,) = r.json()["items"]
    assert isinstance(item, dict)
    return item


@pytest.mark.parametrize(("name", "deleted"), [
    ("cur-csa-drop-replicas-wipes-hpa", [".spec.replicas"]),            # Deployment: replicas: null
    ("cur-csa-drop-all-labels", [".metadata.labels"]),                  # ConfigMap: labels: null
    ("cur-csa-service-port-53-tcp-udp", [".spec.ports"]),               # Service: merge key port
    # Deployment: the dropped container goes ($patch: delete), the injected one stays
    ("cur-csa-injected-sidecar-survives", ['.spec.template.spec.containers[name="side"]']),
    ("cur-csa-env-drop-reorder", ['.spec.template.spec.containers[name="main"].env[name="B"]']),
    ("cur-csa-container-ports",
     ['.spec.template.spec.containers[name="main"].ports[containerPort=80,protocol="TCP"]']),
    # Pod: volumes are merge,retainKeys: emptyDir → configMap clears emptyDir
    ("cur-csa-volume-source-switch", ['.spec.volumes[name="data"].emptyDir']),
    ("cur-csa-manifest-patch-replace", []),                             # Pod: $patch: replace in a map
    # ConfigMap: $deleteFromPrimitiveList/finalizers; another writer's finalizer stays
    ("cur-csa-finalizers-primitive-list", ['.metadata.finalizers[="example.com/a"]']),
])
def test_the_recorded_result_per_kind(tmp_path: Path, name: str, deleted: list[str]) -> None:
    case, args = _files(tmp_path, name)
    item = _item(args)
    expect = case["expect"]
    assert item["conflicts"] == [], "a client-side apply is an Update: it never conflicts"
    assert [r["verb"] for r in item["requests"]] == ["strategic-patch"]
    assert [r["status"] for r in item["requests"]] == [expect["status"]]
    got = item["result"]["object"]
    assert _view(got) == _view(expect["object"])
    assert oracle_entries(got) == oracle_entries(expect["object"])
    assert item["deleted"] == deleted


def test_text_names_the_deletion_and_the_applier(tmp_path: Path) -> None:
    _, args = _files(tmp_path, "cur-csa-drop-replicas-wipes-hpa")
    r = run(*args)
    assert r.code == 0, r.err
    assert "with kubectl apply (client-side):" in r.out
    assert "deletes: .spec.replicas" in r.out
    assert "not modelled" not in r.out + r.err


def test_unchanged_sends_nothing(tmp_path: Path) -> None:
    _, args = _files(tmp_path, "cur-csa-unchanged-no-request")
    item = _item(args)
    assert item["requests"] == []
    assert item["deleted"] == [] and item["conflicts"] == []


def test_the_servers_500_is_reported(tmp_path: Path) -> None:
    # a $patch kept in the last-applied annotation, then dropped: kubectl sends "$patch": null, which
    # the server's strategic merge refuses (not an API status: a 500)
    case, args = _files(tmp_path, "cur-csa-patch-directive-dropped-500")
    r = run(*args)
    assert r.code == 1, r.err
    assert f"the server would reject this apply (500): {case['expect']['message']}" in r.out
    item = _item(args)
    assert item["requests"][0]["status"] == 500
    assert item["requests"][0]["message"] == case["expect"]["message"]


def test_custom_field_manager(tmp_path: Path) -> None:
    case, args = _files(tmp_path, "cur-csa-custom-field-manager")
    manager = case["apply"]["fieldManagerFlag"]
    args[-1] = f"kubectl-client-side:{manager}"
    item = _item(args)
    assert [r["manager"] for r in item["requests"]] == [manager]
    got = item["result"]["object"]
    assert oracle_entries(got) == oracle_entries(case["expect"]["object"])


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def test_secret_values_stay_redacted(tmp_path: Path) -> None:
    applied = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
               "metadata": {"name": "creds", "namespace": "app"},
               "data": {"password": _b64("old-secret"), "token": _b64("old-token")}}
    annotation = json.dumps({**applied, "metadata": {**applied["metadata"], "annotations": {}}},
                            sort_keys=True, separators=(",", ":")) + "\n"
    live = {**applied, "metadata": {**applied["metadata"], "uid": "u1",
                                    "annotations": {LAST_APPLIED_ANNOTATION: annotation},
                                    "managedFields": [{
                                        "manager": "kubectl-client-side-apply", "operation": "Update",
                                        "apiVersion": "v1", "time": "2026-11-26T12:00:00Z", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:data": {".": {}, "f:password": {}, "f:token": {}},
                                                     "f:metadata": {"f:annotations": {
                                                         ".": {}, f"f:{LAST_APPLIED_ANNOTATION}": {}}},
                                                     "f:type": {}}}]}}
    manifest = {**applied, "data": {"password": _b64("new-secret")}}
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(manifest))
    args = ["conflicts", "-f", str(tmp_path / "m.yaml"), "--live", str(tmp_path / "live.yaml"),
            "--applier", "kubectl-client-side"]
    r = run(*args)
    assert r.code == 0, r.err
    assert "deletes: .data.token" in r.out
    j = run(*args, "-o", "json")
    secrets = [_b64(s) for s in ("old-secret", "old-token", "new-secret")]
    for out in (r.out, j.out):
        assert not any(s in out for s in secrets), out
        assert "old-secret" not in out and "new-secret" not in out
    (item,) = j.json()["items"]
    assert item["result"]["object"]["data"] == {"password": "<redacted>"}
    shown = run(*args, "-o", "json", "--show-secret-values")
    assert shown.json()["items"][0]["result"]["object"]["data"] == {"password": _b64("new-secret")}
