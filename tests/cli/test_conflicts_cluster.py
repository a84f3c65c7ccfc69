"""``kubectl fieldown conflicts`` against the real API server, compared with what the server and
the real kubectl (1.36) then do.

Every scenario is built with real kubectl (client-side ``kubectl apply``, ``kubectl apply
--server-side``), predicted with ``conflicts``, and then carried out for real: the prediction must
be what the server answers. One nuance is checked on purpose (see ``test_csa_to_ssa_trap``): the
prediction is the *apply request*; ``kubectl apply --server-side`` sends more requests after it
on objects with client-side-apply history, and the text output says what those do.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import Result, run

from kubectl_fieldown.fieldpath import FieldSet, decode_fields_v1, path_from_fields
from kubectl_fieldown.kube import ClusterClient, ClusterOptions

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "fieldown-cache"))
    yield


class Scenario:
    """One Widget in a fresh namespace, written with real kubectl and predicted with our CLI."""

    def __init__(self, cluster: lab.Cluster, namespace: str, tmp_path: Path, name: str = "w") -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.tmp = tmp_path
        self.name = name
        self.files = 0

    def manifest(self, spec: dict[str, Any], name: str | None = None, **metadata: Any) -> Path:
        self.files += 1
        doc = {"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": name or self.name, "namespace": self.namespace, **metadata}, "spec": spec}
        path = self.tmp / f"m{self.files}.yaml"
        path.write_text(yaml.safe_dump(doc))
        return path

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.cluster.kubectl(*args, check=check)

    def live(self, name: str | None = None) -> dict[str, Any]:
        obj: dict[str, Any] = self.cluster.kubectl_json("get", "widget", name or self.name, "-n", self.namespace,
                                                        "--show-managed-fields")
        return obj

    def conflicts(self, manifest: Path, manager: str, *args: str) -> Result:
        return run("conflicts", "-f", str(manifest), "--field-manager", manager,
                   "--kubeconfig", str(self.cluster.kubeconfig), *args)


@pytest.fixture
def sc(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> Scenario:
    return Scenario(cluster, namespace, tmp_path)


def entry_sets(obj_or_entries: Any) -> dict[tuple[str, str, str, str], FieldSet]:
    entries = obj_or_entries
    if isinstance(obj_or_entries, dict):
        entries = obj_or_entries["metadata"].get("managedFields") or []
    return {(e["manager"], e["operation"], e["apiVersion"], e.get("subresource", "")):
            decode_fields_v1(e["fieldsV1"]) for e in entries}


def view(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj["metadata"]
    return {"spec": obj.get("spec"), "labels": md.get("labels"), "annotations": md.get("annotations")}


def assert_same_result(predicted: dict[str, Any], server_obj: dict[str, Any]) -> None:
    """The prediction's managedFields (path sets; times ignored) and spec/labels/annotations."""
    assert entry_sets(predicted["managedFields"]) == entry_sets(server_obj)
    assert view(predicted["object"]) == view(server_obj)


_KUBECTL_CONFLICT = re.compile(r'conflicts? with "([^"]+)"[^:\n]*:\s*(\S+)?')


def kubectl_conflicts(stderr: str) -> set[tuple[str, str]]:
    """(manager, path) pairs from kubectl's "Apply failed with N conflicts: ..." error."""
    body = stderr.split("Apply failed with", 1)[1].split("\nPlease review", 1)[0]
    out: set[tuple[str, str]] = set()
    manager = ""
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("- "):
            out.add((manager, line[2:]))
            continue
        m = _KUBECTL_CONFLICT.search(line)
        if m:
            manager = m.group(1)
            if m.group(2):
                out.add((manager, m.group(2)))
    return out


def text(r: Result) -> str:
    return ANSI.sub("", r.out)


# --- conflicts ---------------------------------------------------------------------------------------


def test_csa_created_then_another_manager_changes_replicas(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red"})))
    m = sc.manifest({"replicas": 3, "color": "red"})

    r = sc.conflicts(m, "bob", "-o", "json")
    assert r.code == 1, r.err
    assert r.err == ""
    item = r.item()
    assert (item["apiVersion"], item["kind"], item["namespace"], item["name"]) == \
        ("example.com/v1", "Widget", sc.namespace, "w")
    assert item["conflicts"] == [{
        "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "example.com/v1",
        "subresource": "", "path": ".spec.replicas", "liveValue": 1, "appliedValue": 3,
    }]
    assert item["result"] is None
    assert (item["shared"], item["deleted"], item["retained"]) == ([], [], [])

    # the real thing fails with the same conflicts and changes nothing
    real = sc.kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(m), check=False)
    assert real.returncode != 0
    assert kubectl_conflicts(real.stderr) == {(c["manager"], c["path"]) for c in item["conflicts"]}
    assert sc.live()["spec"]["replicas"] == 1


def test_text_output_names_the_owner_values_and_ways_out(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1})))
    r = sc.conflicts(sc.manifest({"replicas": 3}), "bob", "-n", sc.namespace)
    assert r.code == 1, r.err
    out = text(r)
    assert f"Widget {sc.namespace}/w" in out
    assert ".spec.replicas  live: 1 → applied: 3" in out
    assert 'owned by "kubectl-client-side-apply" using example.com/v1' in out
    assert "remove .spec.replicas from your manifest" in out
    assert "--force-conflicts takes it from kubectl-client-side-apply" in out
    fold = (f"kubectl fieldown migrate widget.example.com/w -n {sc.namespace} --to server-side "
            "--field-manager bob")
    assert f"fold kubectl-client-side-apply into bob (checked): {fold}" in out
    # the way out runs as printed, and then bob's apply goes through
    assert run(*shlex.split(fold)[2:], "--kubeconfig", str(sc.cluster.kubeconfig)).code == 0
    assert sc.conflicts(sc.manifest({"replicas": 3}), "bob", "-n", sc.namespace).code == 0
    assert "→ 1 conflict: the apply fails as it is" in out
    assert "\x1b[" not in r.out, "no colour off a terminal"


def test_forced_prediction_is_what_the_server_does(sc: Scenario) -> None:
    # pure server-side history: kubectl sends exactly one request, so the real result is comparable
    sc.kubectl("apply", "--server-side", "--field-manager=alice", "-f",
               str(sc.manifest({"replicas": 1, "color": "red", "labels": {"a": "1"}})))
    m = sc.manifest({"replicas": 3, "color": "red"})

    r = sc.conflicts(m, "bob", "-o", "json", "--force-conflicts")
    assert r.code == 0, r.err
    item = r.item()
    assert [(c["manager"], c["operation"], c["path"]) for c in item["conflicts"]] == \
        [("alice", "Apply", ".spec.replicas")]
    assert item["shared"] == [".spec.color"]
    assert item["result"] is not None

    unforced = sc.conflicts(m, "bob", "-o", "json")
    assert unforced.code == 1 and unforced.item()["result"] is None

    real = sc.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=bob", "-f", str(m))
    assert "serverside-applied" in real.stdout
    assert_same_result(item["result"], sc.live())


def test_server_dry_run_agrees(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red"})))
    m = sc.manifest({"replicas": 3, "color": "red"})
    for args, code in (((), 1), (("--force-conflicts",), 0)):
        r = sc.conflicts(m, "bob", "--server-dry-run", *args)
        assert r.code == code, r.out + r.err
        assert "server dry-run: agrees" in text(r)
    assert sc.live()["spec"]["replicas"] == 1, "a dry run stores nothing"

    # the same single request by hand: the forced JSON result is the server's object
    r = sc.conflicts(m, "bob", "-o", "json", "--force-conflicts")
    client = ClusterClient(ClusterOptions(kubeconfig=str(sc.cluster.kubeconfig)))
    try:
        res = client.discovery.resolve("widgets")
        answer = client.patch(res, "w", sc.namespace, yaml.safe_load(m.read_text()), "apply",
                              field_manager="bob", force=True, dry_run=True)
    finally:
        client.close()
    assert_same_result(r.item()["result"], answer)


def test_create(sc: Scenario) -> None:
    m = sc.manifest({"replicas": 2, "containers": [{"name": "web", "image": "nginx",
                                                    "ports": [{"containerPort": 80}]}]}, name="fresh")
    r = sc.conflicts(m, "bob", "-o", "json", "--server-dry-run")
    assert r.code == 0, r.err
    item = r.item()
    assert item["conflicts"] == [] and item["deleted"] == [] and item["retained"] == []
    result = item["result"]
    assert result["object"]["metadata"]["name"] == "fresh"
    assert result["object"]["metadata"]["namespace"] == sc.namespace
    # the port's protocol is defaulted by the CRD schema, as the server does
    assert result["object"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "create (not found live)" in text(sc.conflicts(m, "bob"))

    sc.kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(m))
    assert_same_result(result, sc.live("fresh"))


# --- shared, deleted, retained -------------------------------------------------------------------


def test_shared(sc: Scenario) -> None:
    sc.kubectl("apply", "--server-side", "--field-manager=alice", "-f",
               str(sc.manifest({"color": "red", "replicas": 1})))
    m = sc.manifest({"color": "red"})
    r = sc.conflicts(m, "bob", "-o", "json")
    assert r.code == 0, r.err
    assert r.item()["shared"] == [".spec.color"]
    assert 'shared with "alice": .spec.color' in text(sc.conflicts(m, "bob"))
    sc.kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(m))
    sets = entry_sets(sc.live())
    color = path_from_fields("spec", "color")
    assert sets[("alice", "Apply", "example.com/v1", "")].has(color)
    assert sets[("bob", "Apply", "example.com/v1", "")].has(color)
    assert_same_result(r.item()["result"], sc.live())


def test_deleted(sc: Scenario) -> None:
    sc.kubectl("apply", "--server-side", "--field-manager=alice", "-f",
               str(sc.manifest({"color": "red", "labels": {"a": "1", "b": "2"}})))
    m = sc.manifest({"color": "red", "labels": {"a": "1"}})
    r = sc.conflicts(m, "alice", "-o", "json")
    assert r.code == 0, r.err
    assert r.item()["deleted"] == [".spec.labels.b"]
    assert "deletes: .spec.labels.b" in text(sc.conflicts(m, "alice"))
    sc.kubectl("apply", "--server-side", "--field-manager=alice", "-f", str(m))
    live = sc.live()
    assert live["spec"]["labels"] == {"a": "1"}
    assert_same_result(r.item()["result"], live)


def test_csa_to_ssa_trap(sc: Scenario) -> None:
    """The classic trap: fields applied client-side, dropped from the manifest, applied server-side.

    The apply request keeps ``.spec.color`` (kubectl-client-side-apply still owns it): that is what
    ``retained`` reports and what the server does for one request — any SSA client but kubectl.
    kubectl >= 1.26 then moves the client-side owner's fields to its own manager and applies again,
    which deletes the field; the text output says so, and the real kubectl does exactly that."""
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red"})))
    m = sc.manifest({"replicas": 1})

    r = sc.conflicts(m, "kubectl", "-o", "json", "--server-dry-run")
    assert r.code == 0, r.err
    item = r.item()
    assert item["conflicts"] == []  # the last-applied waiver of the manager "kubectl"
    assert item["retained"] == [".spec.color"]
    assert item["deleted"] == []
    assert item["result"]["object"]["spec"] == {"replicas": 1, "color": "red"}

    t = text(sc.conflicts(m, "kubectl", "--server-dry-run"))
    assert 'stays (still owned by "kubectl-client-side-apply" using example.com/v1): .spec.color' in t
    assert ('with kubectl apply --server-side: kubectl then moves what "kubectl-client-side-apply" owns to '
            '"kubectl" and applies again, which deletes: .spec.color') in t
    assert "server dry-run: agrees" in t

    # one apply request, as Argo CD, Flux or a controller would send it: the field stays
    client = ClusterClient(ClusterOptions(kubeconfig=str(sc.cluster.kubeconfig)))
    try:
        res = client.discovery.resolve("widgets")
        answer = client.patch(res, "w", sc.namespace, yaml.safe_load(m.read_text()), "apply",
                              field_manager="kubectl", dry_run=True)
    finally:
        client.close()
    assert answer["spec"]["color"] == "red"
    assert_same_result(item["result"], answer)

    # the real kubectl: the follow-up requests delete it, as the text output said
    sc.kubectl("apply", "--server-side", "-f", str(m))
    assert sc.live()["spec"] == {"replicas": 1}


def test_kubectl_followup_for_another_manager_drops_the_annotation(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red"})))
    m = sc.manifest({"replicas": 1})
    t = text(sc.conflicts(m, "bob"))
    assert "which deletes: .metadata.annotations, .spec.color" in t
    sc.kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(m))
    live = sc.live()
    assert live["spec"] == {"replicas": 1}
    assert "annotations" not in live["metadata"]


# --- offline reproduces the live answers ------------------------------------------------------------


def _strip_times(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _strip_times(v) for k, v in doc.items() if k not in ("time", "creationTimestamp")}
    if isinstance(doc, list):
        return [_strip_times(v) for v in doc]
    return doc


@pytest.mark.parametrize("force", [False, True])
def test_offline_with_live_and_schema_files_gives_the_same_answer(sc: Scenario, force: bool) -> None:
    # three writers: alice (server-side), kubectl-client-side-apply, and kubectl scale (subresource)
    sc.kubectl("apply", "--server-side", "--field-manager=alice", "-f",
               str(sc.manifest({"labels": {"b": "2"}, "containers": [{"name": "web", "image": "a"}]})))
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red", "labels": {"a": "1"}})))
    sc.kubectl("scale", "widget/w", "-n", sc.namespace, "--replicas=2")
    m = sc.manifest({"replicas": 3, "labels": {"a": "1"}, "containers": [{"name": "web", "image": "b"}]})
    extra = ["--force-conflicts"] if force else []
    online = sc.conflicts(m, "bob", "-o", "json", *extra)

    live = sc.tmp / "live.yaml"
    live.write_text(sc.kubectl("get", "widget", "w", "-n", sc.namespace, "-o", "yaml",
                               "--show-managed-fields").stdout)
    crd = sc.tmp / "crd.yaml"
    crd.write_text(sc.kubectl("get", "crd", "widgets.example.com", "-o", "yaml").stdout)
    offline = run("conflicts", "-f", str(m), "--live", str(live), "--schema", str(crd), "--field-manager", "bob",
                  "-o", "json", *extra)
    assert (offline.code, offline.err) == (online.code, online.err)
    assert _strip_times(offline.json()) == _strip_times(online.json())
    conflicts = {(c["manager"], c["path"]) for c in online.item()["conflicts"]}
    assert conflicts == {("kubectl", ".spec.replicas"), ("alice", '.spec.containers[name="web"].image')}
    scale = next(c for c in online.item()["conflicts"] if c["manager"] == "kubectl")
    assert (scale["operation"], scale["subresource"], scale["liveValue"]) == ("Update", "scale", 2)
    assert online.code == (0 if force else 1)


def test_yaml_output_is_the_json_contract(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "red"})))
    m = sc.manifest({"replicas": 3, "color": "red"})
    j = sc.conflicts(m, "bob", "-o", "json", "--force-conflicts")
    y = sc.conflicts(m, "bob", "-o", "yaml", "--force-conflicts")
    assert (j.code, y.code) == (0, 0)
    assert "&id" not in y.out, "no YAML anchors for the shared managedFields"
    assert _strip_times(yaml.safe_load(y.out)) == _strip_times(j.json())


# --- errors and partial results ----------------------------------------------------------------------


def test_unknown_kind_is_one_error_line_and_the_rest_is_still_reported(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1})))
    m = sc.tmp / "two.yaml"
    m.write_text("apiVersion: example.com/v1\nkind: Nope\nmetadata: {name: x}\n---\n" + sc.manifest(
        {"replicas": 3}).read_text())
    r = sc.conflicts(m, "bob", "-o", "json")
    assert r.code == 2
    assert r.err.splitlines() == [f"error: {m}: document 1: no matches for kind \"Nope\" in version "
                                  f"\"example.com/v1\" (the server doesn't have that type)"]
    (item,) = r.json()["items"]
    assert item["conflicts"][0]["path"] == ".spec.replicas"


def test_malformed_manifest(sc: Scenario) -> None:
    bad = sc.tmp / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: [\n")
    r = sc.conflicts(bad, "bob")
    assert r.code == 2
    assert len(r.err.splitlines()) == 1 and r.err.startswith(f"error: {bad}: document 1: invalid YAML")
    assert "Traceback" not in r.err


def test_unreachable_server_is_exit_2(sc: Scenario, tmp_path: Path) -> None:
    kc = yaml.safe_load(sc.cluster.kubeconfig.read_text())
    port = lab.free_ports(1)[0]
    for c in kc["clusters"]:
        c["cluster"]["server"] = f"https://127.0.0.1:{port}"
    bad = tmp_path / "kc"
    bad.write_text(yaml.safe_dump(kc))
    r = run("conflicts", "-f", str(sc.manifest({"replicas": 1})), "--field-manager", "bob", "--kubeconfig", str(bad))
    assert r.code == 2
    assert len(r.err.splitlines()) == 1 and "cannot reach the API server" in r.err


def test_as_a_kubectl_plugin(sc: Scenario) -> None:
    """What a new user types: ``kubectl fieldown conflicts`` (kubectl finds kubectl-fieldown on PATH)."""
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1})))
    m = sc.manifest({"replicas": 3})
    env = sc.cluster.env()  # KUBECONFIG: kubectl allows no flags before a plugin's name
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run([str(sc.cluster.kubectl_bin), "fieldown", "conflicts", "-f", str(m), "--field-manager",
                           "bob", "-o", "json"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout.startswith("{"), (proc.stdout, proc.stderr)
    assert json.loads(proc.stdout)["items"][0]["conflicts"][0]["manager"] == "kubectl-client-side-apply"


def _unprivileged_kubeconfig(cluster: lab.Cluster, tmp_path: Path) -> Path:
    """A kubeconfig for a user outside system:masters, signed by the lab's CA: the lab's authorizer
    lets such a user read discovery but nothing else."""
    if cluster.state_dir is None or not (cluster.state_dir / "pki" / "ca.key").is_file():
        pytest.skip("needs the lab's CA to make an unprivileged user (not available on an external cluster)")
    pki = cluster.state_dir / "pki"
    key, csr, crt = tmp_path / "u.key", tmp_path / "u.csr", tmp_path / "u.crt"
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
                    "-subj", "/CN=nobody"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(pki / "ca.crt"), "-CAkey",
                    str(pki / "ca.key"), "-CAcreateserial", "-CAserial", str(tmp_path / "ca.srl"), "-out", str(crt),
                    "-days", "1", "-extfile", str(pki / "client.ext")], check=True, capture_output=True)
    kc = yaml.safe_load(cluster.kubeconfig.read_text())
    for u in kc["users"]:
        u["user"] = {"client-certificate": str(crt), "client-key": str(key)}
    out = tmp_path / "nobody.kubeconfig"
    out.write_text(yaml.safe_dump(kc))
    return out


def test_rbac_denial_is_one_error_line_exit_2(sc: Scenario, tmp_path: Path) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1})))
    kc = _unprivileged_kubeconfig(sc.cluster, tmp_path)
    m = sc.manifest({"replicas": 3})
    args = ("conflicts", "-f", str(m), "--field-manager", "bob", "--kubeconfig", str(kc), "-o", "json")

    r = run(*args)  # nothing cached: even discovery is denied
    assert r.code == 2
    assert r.json() == {"apiVersion": "fieldown.dev/v1", "kind": "FieldownConflicts", "version": 2, "items": []}
    (line,) = r.err.splitlines()
    assert line.startswith(f"error: {m}: document 1: forbidden to get /api")

    assert sc.conflicts(m, "bob").code == 1  # an admin fills the discovery cache of this server
    r = run(*args)
    assert r.code == 2
    (line,) = r.err.splitlines()
    assert line.startswith(f'error: {m}: document 1: forbidden to get widgets.example.com "w" in namespace '
                           f'"{sc.namespace}": ')


# --- what stays forever, kubectl's follow-up, rejections, appliers side by side --------------------------


def test_never_pruned_fields_and_kubectls_followup_in_json(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "blue"})))
    dropped = sc.manifest({"replicas": 1})
    # a plain server-side applier: the client-side manager keeps .spec.color forever
    r = sc.conflicts(dropped, "flux", "-o", "json")
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["neverPruned"] == [{"path": ".spec.color",
                                    "owners": ['"kubectl-client-side-apply" using example.com/v1']}]
    assert item["deleted"] == []
    # (`kubectl apply --server-side --field-manager flux` would fold the client-side manager into flux, and
    # its second apply would delete the field and the annotation: kubernetes#125607)
    assert item["followup"] == {"migrated": ["kubectl-client-side-apply"],
                                "deleted": [".metadata.annotations", ".spec.color"], "error": None}
    text_out = text(sc.conflicts(dropped, "flux"))
    assert 'never pruned (not in the manifest, only "kubectl-client-side-apply" using example.com/v1 owns it): ' \
        ".spec.color" in text_out
    # kubectl apply --server-side migrates the client-side manager and applies again, which deletes it
    r = sc.conflicts(dropped, "kubectl", "-o", "json")
    (item,) = r.json()["items"]
    assert item["deleted"] == []  # the apply request itself keeps it
    assert item["followup"] == {"migrated": ["kubectl-client-side-apply"], "deleted": [".spec.color"], "error": None}
    sc.kubectl("apply", "--server-side", "-f", str(dropped))
    assert "color" not in sc.live()["spec"]


def test_rejections_are_in_the_json(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1})))
    r = sc.conflicts(sc.manifest({"replicas": "three"}), "flux", "-o", "json")
    (item,) = r.json()["items"]
    assert item["result"] is None
    rejected = item["rejected"]
    assert rejected["status"] == 500
    assert rejected["message"].endswith(".spec.replicas: expected numeric (int or float), got string")
    real = sc.kubectl("apply", "--server-side", "--field-manager=flux", "-f",
                      str(sc.manifest({"replicas": "three"})), check=False)
    assert real.returncode != 0 and rejected["message"] in real.stderr


def test_appliers_side_by_side(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest({"replicas": 1, "color": "blue"})))
    sc.kubectl("label", "widget", "w", "-n", sc.namespace, "team=payments")
    dropped = sc.manifest({"replicas": 1})
    r = run("conflicts", "-f", str(dropped), "--applier", "kubectl-client-side", "--applier", "flux",
            "--kubeconfig", str(sc.cluster.kubeconfig), "-o", "json")
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    csa, flux = item["runs"]
    assert csa["applier"] == "kubectl apply (client-side)"
    assert [q["verb"] for q in csa["requests"]] == ["merge-patch"]
    assert csa["deleted"] == [".spec.color"]  # the annotation had it, the manifest does not
    assert flux["applier"] == "Flux"
    assert [q["purpose"] for q in flux["requests"]] == [
        "cleanup: last-applied annotation and field managers", "forced apply"]
    # Flux removes the annotation (the only one here), and folds kubectl-label into itself, so its forced
    # apply deletes the label as well
    assert flux["deleted"] == [".metadata.annotations", ".metadata.labels", ".spec.color"]
    out = text(run("conflicts", "-f", str(dropped), "--applier", "kubectl-client-side", "--applier", "flux",
                   "--kubeconfig", str(sc.cluster.kubeconfig)))
    assert "with kubectl apply (client-side):" in out and "with Flux:" in out


def test_a_live_object_nested_beyond_the_limit_is_said_and_the_others_predicted(sc: Scenario) -> None:
    """The server keeps 10,000 levels under x-kubernetes-preserve-unknown-fields; the engine walks an
    object recursively, so such an object ended the prediction of every document with an internal
    RecursionError. It is named, and the other documents are predicted."""
    from kubectl_fieldown.base.value import MAX_DEPTH

    deep: Any = "x"
    for _ in range(400):
        deep = {"d": deep}
    live = {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "deep", "namespace": sc.namespace}, "spec": {"config": deep}}
    sc.cluster.kubectl("apply", "--server-side", "--field-manager", "tenant", "-f", "-", input=json.dumps(live))
    both = sc.tmp / "both.yaml"
    both.write_text(yaml.safe_dump_all([
        {"apiVersion": "example.com/v1", "kind": "Widget",
         "metadata": {"name": "deep", "namespace": sc.namespace}, "spec": {"color": "red"}},
        {"apiVersion": "example.com/v1", "kind": "Widget",
         "metadata": {"name": "shallow", "namespace": sc.namespace}, "spec": {"color": "blue"}},
    ]))
    r = sc.conflicts(both, "ci", "-o", "json")
    assert "internal error" not in r.err, r.err
    assert r.err.endswith(f"document 1: Widget {sc.namespace}/deep (example.com/v1): nested more than {MAX_DEPTH} "
                          "levels deep, more than the tool analyses\n"), r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert r.code != 0
    assert [i["name"] for i in r.json()["items"]] == ["shallow"]
