"""End-to-end tests of the real-API-server harness (tests/lab.py, tests/conftest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def widget(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def get_widget(cluster: lab.Cluster, name: str, namespace: str) -> dict[str, Any]:
    # kubectl >= 1.21 hides managedFields unless asked
    obj: dict[str, Any] = cluster.kubectl_json("get", "widget", name, "-n", namespace,
                                               "--show-managed-fields")
    return obj


def managers(obj: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(m["manager"], m["operation"], m.get("subresource")) for m in obj["metadata"]["managedFields"]]


def test_server_version(cluster: lab.Cluster) -> None:
    v = cluster.server_version()
    assert v["major"] == "1"
    assert v["gitVersion"].startswith("v1.")
    if not cluster.external:
        assert v["gitVersion"] == "v1.36.4"
        assert cluster.server.startswith("https://127.0.0.1:")
    client = cluster.kubectl_json("version", "--client")["clientVersion"]
    assert client["gitVersion"].startswith("v1.")


def test_test_crds_are_served(cluster: lab.Cluster) -> None:
    out = cluster.kubectl("api-resources", "--api-group=example.com", "-o", "wide").stdout
    rows = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert set(rows) >= {"widgets", "gadgets", "gizmos"}
    crds = {c["metadata"]["name"]: c for c in lab.conformance_crds()}
    assert set(crds) == {"widgets.example.com", "gadgets.example.com", "gizmos.example.com"}
    gizmo = cluster.kubectl_json("get", "crd", "gizmos.example.com")
    assert gizmo["spec"]["scope"] == "Cluster"
    established = {c["type"]: c["status"] for c in gizmo["status"]["conditions"]}
    assert established["Established"] == "True"
    served = cluster.kubectl_json("get", "crd", "widgets.example.com")
    want = crds["widgets.example.com"]["spec"]["versions"][0]["subresources"]
    assert served["spec"]["versions"][0]["subresources"] == want
    assert want["scale"]["specReplicasPath"] == ".spec.replicas"


def test_kubectl_check_raises_with_output(cluster: lab.Cluster, namespace: str) -> None:
    with pytest.raises(AssertionError, match=r"(?s)exit 1\): get widget does-not-exist.*stderr:.*NotFound"):
        cluster.kubectl("get", "widget", "does-not-exist", "-n", namespace)
    proc = cluster.kubectl("get", "gizmo", "does-not-exist", check=False)
    assert proc.returncode == 1
    assert 'gizmos.example.com "does-not-exist" not found' in proc.stderr


def test_client_side_apply_records_csa_manager(cluster: lab.Cluster, namespace: str) -> None:
    w = widget("w-csa", namespace, replicas=1, color="blue")
    out = cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(w)).stdout
    assert "widget.example.com/w-csa created" in out
    obj = get_widget(cluster, "w-csa", namespace)
    assert obj["spec"] == {"replicas": 1, "color": "blue"}
    assert ("kubectl-client-side-apply", "Update", None) in managers(obj)
    last = json.loads(obj["metadata"]["annotations"][LAST_APPLIED])
    assert last["spec"] == {"replicas": 1, "color": "blue"}
    (entry,) = [m for m in obj["metadata"]["managedFields"] if m["manager"] == "kubectl-client-side-apply"]
    assert "f:replicas" in entry["fieldsV1"]["f:spec"]


def test_server_side_apply_conflict_names_the_manager(cluster: lab.Cluster, namespace: str) -> None:
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(widget("w-ssa", namespace, replicas=1)))
    conflicting = yaml.safe_dump(widget("w-ssa", namespace, replicas=3))
    proc = cluster.kubectl("apply", "--server-side", "--field-manager=alice", "-f", "-", "-v=6",
                           input=conflicting, check=False)
    assert proc.returncode != 0
    # the -v=6 response line: status="409 Conflict" (1.36) or "PATCH <url> 409 Conflict in 4 ms" (older)
    assert re.search(r"PATCH.*widgets/w-ssa\?fieldManager=alice.*409 Conflict", proc.stderr, re.S)
    assert 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using example.com/v1: ' \
           ".spec.replicas" in proc.stderr
    assert get_widget(cluster, "w-ssa", namespace)["spec"]["replicas"] == 1  # nothing changed

    # a server-side dry run with force answers with the new owner but stores nothing
    dry = json.loads(cluster.kubectl("apply", "--server-side", "--field-manager=alice", "--force-conflicts",
                                     "--dry-run=server", "-o", "json", "-f", "-", input=conflicting).stdout)
    assert dry["spec"]["replicas"] == 3
    assert get_widget(cluster, "w-ssa", namespace)["spec"]["replicas"] == 1

    cluster.kubectl("apply", "--server-side", "--field-manager=alice", "--force-conflicts", "-f", "-",
                    input=conflicting)
    obj = get_widget(cluster, "w-ssa", namespace)
    assert obj["spec"]["replicas"] == 3
    assert ("alice", "Apply", None) in managers(obj)


def test_kubectl_scale_uses_the_scale_subresource(cluster: lab.Cluster, namespace: str) -> None:
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(widget("w-scale", namespace, replicas=1)))
    out = cluster.kubectl("scale", "widget/w-scale", "--replicas=5", "-n", namespace).stdout
    assert "scaled" in out
    obj = get_widget(cluster, "w-scale", namespace)
    assert obj["spec"]["replicas"] == 5
    # no fieldManager sent: the server names the manager after the User-Agent
    assert ("kubectl", "Update", "scale") in managers(obj)
    scale = json.loads(cluster.kubectl(
        "get", "--raw", f"/apis/example.com/v1/namespaces/{namespace}/widgets/w-scale/scale").stdout)
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 5


def test_python_client_with_cluster_kubeconfig(cluster: lab.Cluster, namespace: str) -> None:
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    cluster.kubectl("apply", "--server-side", "--field-manager=bob", "-f", "-",
                    input=yaml.safe_dump(widget("w-py", namespace, replicas=2, color="red")))
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))  # type: ignore[no-untyped-call]
    try:
        co = client.CustomObjectsApi(api)
        obj: Any = co.get_namespaced_custom_object("example.com", "v1", namespace, "widgets", "w-py")
        assert obj["spec"] == {"replicas": 2, "color": "red"}
        entries = obj["metadata"]["managedFields"]
        assert [(m["manager"], m["operation"]) for m in entries] == [("bob", "Apply")]
        with pytest.raises(ApiException) as exc:
            co.patch_namespaced_custom_object(
                "example.com", "v1", namespace, "widgets", "w-py", widget("w-py", namespace, color="green"),
                field_manager="carol", _content_type="application/apply-patch+yaml")
        assert exc.value.status == 409
        body = json.loads(str(exc.value.body))
        assert body["reason"] == "Conflict"
        assert [c["field"] for c in body["details"]["causes"]] == [".spec.color"]
        assert 'conflict with "bob"' in body["details"]["causes"][0]["message"]
    finally:
        api.close()


def test_cli_environment_points_at_cluster(cluster: lab.Cluster) -> None:
    env = cluster.env()
    assert env["KUBECONFIG"] == str(cluster.kubeconfig)
    kc = yaml.safe_load(Path(env["KUBECONFIG"]).read_text())
    assert cluster.server in [c["cluster"]["server"] for c in kc["clusters"]]


def test_namespace_is_unique_dns_label(namespace: str) -> None:
    assert len(namespace) <= 63
    assert namespace.replace("-", "").isalnum() and namespace == namespace.lower()
    assert namespace.startswith("test-namespace-is-unique")


def test_second_server_start_and_stop_by_pid(cluster: lab.Cluster, tmp_path: Path) -> None:
    if cluster.external:
        pytest.skip("the lab is not built when FIELDOWN_TEST_KUBECONFIG selects an external cluster")
    state = tmp_path / "second"
    c2 = lab.start(state, *lab.free_ports(3))
    try:
        pids = lab.recorded_pids(state)
        assert set(pids) == {"apiserver", "etcd"}
        assert all(lab.pid_alive(p) for p in pids.values())
        assert c2.server != cluster.server
        # a fresh etcd: no CRDs from the session server
        assert c2.kubectl_json("get", "crd")["items"] == []
        c2.apply_crd(lab.LAB_DIR / "examples" / "crd.yaml")
        out = c2.kubectl("apply", "-f", str(lab.LAB_DIR / "examples" / "cr.yaml")).stdout
        assert "widget.example.com/w1 created" in out
    finally:
        stopped = lab.stop(state)
    assert sorted(stopped) == sorted(pids.values())
    assert not any(lab.pid_alive(p) for p in pids.values())
    assert lab.recorded_pids(state) == {}
    # the session server is unaffected
    assert cluster.server_version()["major"] == "1"
