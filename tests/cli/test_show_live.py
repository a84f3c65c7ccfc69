"""``kubectl fieldown show`` end to end against the real API server of the lab (tests/lab.py).

Objects are written with the real kubectl (client-side apply, server-side apply as two managers,
``kubectl scale``, a status patch); our CLI runs as a subprocess with the cluster's environment,
and what it reports is compared with the managedFields the server itself returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.fieldpath import decode_fields_v1, path_string
from kubectl_fieldown.fieldpath.lookup import MISSING, value_at


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def fieldown(cluster: lab.Cluster, *args: str) -> Run:
    script = Path(sys.executable).parent / "kubectl-fieldown"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    env = cluster.env()
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        env.pop(var, None)
    proc = subprocess.run([*argv, *args], capture_output=True, text=True, env=env, timeout=180, check=False)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def widget(name: str, namespace: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md, "spec": spec}


def server_object(cluster: lab.Cluster, kind: str, name: str, namespace: str | None) -> dict[str, Any]:
    ns = ["-n", namespace] if namespace else []
    obj: dict[str, Any] = cluster.kubectl_json("get", kind, name, *ns, "--show-managed-fields")
    return obj


def expected_item(obj: dict[str, Any]) -> dict[str, Any]:
    """What ``show -o json`` must say about ``obj``, computed from the server's own managedFields."""
    entries = obj["metadata"].get("managedFields") or []
    fields: dict[str, dict[str, Any]] = {}
    for e in entries:
        for p in decode_fields_v1(e["fieldsV1"]):
            f = fields.setdefault(path_string(p), {"path": path_string(p), "owners": []})
            f["owners"].append({"manager": e["manager"], "operation": e["operation"],
                                "subresource": e.get("subresource", "")})
            v = value_at(obj, p)
            if v is not MISSING:
                f["value"] = v
    return {
        "apiVersion": obj["apiVersion"], "kind": obj["kind"], "namespace": obj["metadata"].get("namespace"),
        "name": obj["metadata"]["name"],
        "managers": [
            {"manager": e["manager"], "operation": e["operation"], "apiVersion": e["apiVersion"],
             "subresource": e.get("subresource", ""), "time": e.get("time"),
             "fieldCount": len(decode_fields_v1(e["fieldsV1"]))}
            for e in entries
        ],
        "fields": fields,
    }


def assert_matches_server(item: dict[str, Any], obj: dict[str, Any]) -> None:
    want = expected_item(obj)
    assert {k: item[k] for k in ("apiVersion", "kind", "namespace", "name", "managers")} == \
        {k: want[k] for k in ("apiVersion", "kind", "namespace", "name", "managers")}
    assert {f["path"]: f for f in item["fields"]} == want["fields"]
    assert len(item["fields"]) == len(want["fields"])


@pytest.fixture
def shop(cluster: lab.Cluster, namespace: str) -> dict[str, Any]:
    """w1 written by alice and bob (server-side), kubectl client-side apply, kubectl scale and a status
    patch; w2 and w3 (labelled like w1) and w-other (another label) by alice."""
    k = cluster.kubectl
    spec = {"replicas": 1, "color": "blue", "containers": [{"name": "app", "image": "nginx:1.25"}]}
    k("apply", "--server-side", "--field-manager=alice", "-f", "-",
      input=yaml.safe_dump(widget("w1", namespace, spec, {"app": "shop"})))
    k("apply", "--server-side", "--field-manager=bob", "-f", "-",
      input=yaml.safe_dump(widget("w1", namespace, {"color": "blue", "labels": {"tier": "web"}})))
    # client-side apply last: a later `kubectl apply --server-side` would fold its entry into the applier
    csa = widget("w1", namespace, {"args": ["--verbose"]}, {"app": "shop"})
    k("apply", "-f", "-", input=yaml.safe_dump(csa))
    k("scale", "widget/w1", "-n", namespace, "--replicas=3")
    k("patch", "widget", "w1", "-n", namespace, "--subresource=status", "--type=merge",
      "-p", json.dumps({"status": {"phase": "Ready", "replicas": 3}}))
    for name, labels in (("w2", {"app": "shop"}), ("w3", {"app": "shop"}), ("w-other", {"app": "other"})):
        k("apply", "--server-side", "--field-manager=alice", "-f", "-",
          input=yaml.safe_dump(widget(name, namespace, {"color": "red"}, labels)))
    return {"namespace": namespace, "csa_manifest": csa}


def test_show_json_matches_the_servers_managed_fields(cluster: lab.Cluster, shop: dict[str, Any]) -> None:
    ns = shop["namespace"]
    obj = server_object(cluster, "widget", "w1", ns)
    r = fieldown(cluster, "show", "widget/w1", "-n", ns, "-o", "json")
    assert r.code == 0, r.err
    assert r.err == ""
    (item,) = r.json()["items"]
    assert_matches_server(item, obj)

    # the scenario produced what it is meant to show (checked against the server, not guessed)
    managers = {(m["manager"], m["operation"], m["subresource"]) for m in item["managers"]}
    assert {("alice", "Apply", ""), ("bob", "Apply", ""), ("kubectl-client-side-apply", "Update", "")} <= managers
    assert any(m["subresource"] == "scale" for m in item["managers"]), item["managers"]
    assert any(m["subresource"] == "status" for m in item["managers"]), item["managers"]
    fields = {f["path"]: f for f in item["fields"]}
    assert {o["manager"] for o in fields[".spec.color"]["owners"]} == {"alice", "bob"}  # co-owned
    replicas_owners = fields[".spec.replicas"]["owners"]
    assert [o["subresource"] for o in replicas_owners] == ["scale"]
    assert fields[".spec.replicas"]["value"] == 3
    assert [o["subresource"] for o in fields[".status.phase"]["owners"]] == ["status"]
    la = ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"
    assert [o["manager"] for o in fields[la]["owners"]] == ["kubectl-client-side-apply"]


@pytest.mark.parametrize("output", ["tree", "blame", "table", "yaml"])
def test_every_output_names_the_managers(cluster: lab.Cluster, shop: dict[str, Any], output: str) -> None:
    ns = shop["namespace"]
    r = fieldown(cluster, "show", "widget/w1", "-n", ns, "-o", output)
    assert r.code == 0, r.err
    obj = server_object(cluster, "widget", "w1", ns)
    for e in obj["metadata"]["managedFields"]:
        assert e["manager"] in r.out, (output, e["manager"])
    if output == "yaml":
        assert_matches_server(yaml.safe_load(r.out)["items"][0], obj)


def test_type_name_forms_and_discovery_names(cluster: lab.Cluster, shop: dict[str, Any]) -> None:
    ns = shop["namespace"]
    r = fieldown(cluster, "show", "widgets", "w1", "w2", "-n", ns, "-o", "json")
    assert r.code == 0, r.err
    assert [i["name"] for i in r.json()["items"]] == ["w1", "w2"]
    r = fieldown(cluster, "show", "widgets.example.com/w2", "Widget/w3", "-n", ns, "-o", "json")
    assert r.code == 0, r.err
    items = r.json()["items"]
    assert [i["name"] for i in items] == ["w2", "w3"]
    assert_matches_server(items[1], server_object(cluster, "widget", "w3", ns))


def test_label_selector_over_several_objects(cluster: lab.Cluster, shop: dict[str, Any]) -> None:
    ns = shop["namespace"]
    r = fieldown(cluster, "show", "widgets", "-l", "app=shop", "-n", ns, "-o", "json")
    assert r.code == 0, r.err
    items = r.json()["items"]
    assert sorted(i["name"] for i in items) == ["w1", "w2", "w3"]
    for item in items:
        assert_matches_server(item, server_object(cluster, "widget", item["name"], ns))
    r = fieldown(cluster, "show", "widgets", "-l", "app=nothing-has-this", "-n", ns, "-o", "json")
    assert r.code == 0
    assert r.json() == {"apiVersion": "fieldown.dev/v1", "kind": "FieldownShow", "version": 1, "items": []}


def test_filename_names_live_objects(cluster: lab.Cluster, shop: dict[str, Any], tmp_path: Path) -> None:
    ns = shop["namespace"]
    manifest = tmp_path / "widgets.yaml"
    # the manifest's own spec is irrelevant: -f only names the objects, their live state is shown
    manifest.write_text(yaml.safe_dump_all([widget("w1", ns, {"color": "green"}), widget("w3", ns, {})]))
    r = fieldown(cluster, "show", "-f", str(manifest), "-o", "json")
    assert r.code == 0, r.err
    items = r.json()["items"]
    assert [i["name"] for i in items] == ["w1", "w3"]
    assert_matches_server(items[0], server_object(cluster, "widget", "w1", ns))
    # without a namespace in the manifest, -n decides
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}}))
    r = fieldown(cluster, "show", "-f", str(bare), "-n", ns, "-o", "json")
    assert r.code == 0, r.err
    assert r.json()["items"][0]["namespace"] == ns


def test_not_found_is_one_line_with_partial_results(cluster: lab.Cluster, shop: dict[str, Any]) -> None:
    ns = shop["namespace"]
    r = fieldown(cluster, "show", "widget/w1", "widget/does-not-exist", "widget/w2", "-n", ns, "-o", "json")
    assert r.code == 1
    lines = r.err.splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("error: ") and "does-not-exist" in lines[0] and "not found" in lines[0]
    assert "Traceback" not in r.err
    assert [i["name"] for i in r.json()["items"]] == ["w1", "w2"]


def test_unknown_type_exits_1(cluster: lab.Cluster, shop: dict[str, Any]) -> None:
    r = fieldown(cluster, "show", "doohickeys/x", "-n", shop["namespace"])
    assert r.code == 1
    assert r.err.count("\n") == 1 and r.err.startswith("error: ")
    assert 'the server doesn\'t have a resource type "doohickeys"' in r.err
    assert r.out == ""


def test_cluster_scoped_object(cluster: lab.Cluster) -> None:
    gizmo = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": f"g-{os.getpid()}"},
             "spec": {"rules": [{"id": 1, "action": "allow"}], "tags": [1, 2]}}
    cluster.kubectl("apply", "--server-side", "--field-manager=carol", "-f", "-", input=yaml.safe_dump(gizmo))
    try:
        name = gizmo["metadata"]["name"]
        # -n is ignored for cluster-scoped types, like kubectl
        r = fieldown(cluster, "show", f"gizmo/{name}", "-n", "ignored", "-o", "json")
        assert r.code == 0, r.err
        (item,) = r.json()["items"]
        assert item["namespace"] is None
        assert_matches_server(item, server_object(cluster, "gizmo", name, None))
        assert ".spec.rules[id=1].action" in {f["path"] for f in item["fields"]}
    finally:
        cluster.kubectl("delete", "gizmo", gizmo["metadata"]["name"], "--ignore-not-found", check=False)


def test_saved_output_shows_the_same_offline(cluster: lab.Cluster, shop: dict[str, Any], tmp_path: Path) -> None:
    ns = shop["namespace"]
    saved = tmp_path / "w1.yaml"
    saved.write_text(cluster.kubectl("get", "widget", "w1", "-n", ns, "-o", "yaml", "--show-managed-fields").stdout)
    live = fieldown(cluster, "show", "widget/w1", "-n", ns, "-o", "json")
    offline = fieldown(cluster, "show", "-i", str(saved), "-o", "json")
    assert offline.code == 0 and live.code == 0
    assert offline.json() == live.json()


def test_live_object_nested_beyond_the_limit(cluster: lab.Cluster, namespace: str) -> None:
    """The server keeps 10,000 levels under x-kubernetes-preserve-unknown-fields; anyone who may write
    such an object must not be able to crash show for the others (issue 9)."""
    from kubectl_fieldown.base.value import MAX_DEPTH

    deep: Any = "x"
    for _ in range(400):
        deep = {"d": deep}
    shallow = widget("shallow", namespace, {"color": "blue"})
    cluster.kubectl("apply", "--server-side", "--field-manager", "tenant", "-f", "-",
                    input=json.dumps(widget("deep", namespace, {"config": deep})) + "\n" + json.dumps(shallow))
    r = fieldown(cluster, "show", "widgets", "-n", namespace, "-o", "yaml")
    assert r.code == 1, r.err
    assert r.err == (f"error: widgets: Widget {namespace}/deep: nested more than {MAX_DEPTH} levels deep, "
                     "more than the tool analyses\n")
    assert [i["name"] for i in yaml.safe_load(r.out)["items"]] == ["shallow"]
