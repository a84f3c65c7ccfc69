"""``audit --context A --context B ...`` and ``--all-contexts`` on two real lab API servers at once,
plus a context whose server port is closed: one report with the context on every finding, a summary
per context, and the unreachable one a finding of its own that fails the run."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from fleet.helpers import cli, validate_sarif

W = "example.com/v1"


@pytest.fixture(scope="module")
def second(cluster: lab.Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[lab.Cluster]:
    """A second private lab server (its own etcd and ports) with the Widget CRD."""
    state = tmp_path_factory.mktemp("second-lab")
    other = lab.start(state, *lab.free_ports(3))
    try:
        widgets = next(c for c in lab.installed_crds() if c["metadata"]["name"] == "widgets.example.com")
        other.apply_crd(widgets)
        yield other
    finally:
        lab.stop(state)


@pytest.fixture(scope="module")
def fleet(cluster: lab.Cluster, second: lab.Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A merged kubeconfig with contexts one, two and closed (a port nothing listens on), and a namespace
    holding a client-side applied Widget on one and a kubectl-edited Widget on two."""
    tmp = tmp_path_factory.mktemp("fleet")
    ns = f"fleet-{uuid.uuid4().hex[:8]}"

    def widget(name: str) -> str:
        return yaml.safe_dump({"apiVersion": W, "kind": "Widget", "metadata": {"name": name, "namespace": ns},
                               "spec": {"color": "red"}})

    cluster.kubectl("apply", "-f", "-", input=widget("csa"))
    second.kubectl("apply", "--server-side", "-f", "-", input=widget("edited"))
    second.kubectl("patch", "widgets", "edited", "-n", ns, "--type=merge", "-p", '{"spec":{"color":"blue"}}',
                   "--field-manager=kubectl-edit")
    clusters, users, contexts = [], [], []
    for name, c in (("one", cluster), ("two", second)):
        cfg = yaml.safe_load(Path(c.kubeconfig).read_text())
        clusters.append({"name": name, "cluster": cfg["clusters"][0]["cluster"]})
        users.append({"name": name, "user": cfg["users"][0]["user"]})
        contexts.append({"name": name, "context": {"cluster": name, "user": name}})
    closed_port = lab.free_ports(1)[0]
    clusters.append({"name": "closed", "cluster": {**clusters[0]["cluster"],
                                                   "server": f"https://127.0.0.1:{closed_port}"}})
    contexts.append({"name": "closed", "context": {"cluster": "closed", "user": "one"}})
    path = tmp / "kubeconfig"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": clusters, "users": users,
                                    "contexts": contexts, "current-context": "one"}))
    path.chmod(0o600)
    env = cluster.env()
    env.pop("KUBECONFIG", None)
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        env.pop(var, None)
    env["FIELDOWN_CACHE_DIR"] = str(tmp / "cache")
    return {"kubeconfig": str(path), "ns": ns, "env": env, "tmp": tmp}


def _audit(fleet: dict[str, Any], *args: str) -> Any:
    return cli(fleet["env"], "audit", "--kubeconfig", fleet["kubeconfig"], "-n", fleet["ns"], "--kinds", "widgets",
               *args)


def test_two_clusters_and_a_closed_port(fleet: dict[str, Any]) -> None:
    metrics = fleet["tmp"] / "fieldown.prom"
    r = _audit(fleet, "--context", "one", "--context", "two", "--context", "closed", "-o", "json",
               "--metrics-file", str(metrics))
    assert r.code == 2, r.err  # a cluster nobody looked at fails the run, whatever was found elsewhere
    assert "error: context 'closed' was not audited: " in r.err
    doc = r.json()
    assert doc["failed"] is True and doc["complete"] is False
    got = [(i["context"], i["name"], i["id"]) for i in doc["items"]]
    assert ("one", "csa", "client-side-apply") in got
    assert ("two", "edited", "imperative-writer") in got
    assert ("closed", "closed", "context-unreachable") in got
    assert {c for c, _, _ in got} == {"one", "two", "closed"}
    assert not any(c == "one" and n == "edited" for c, n, _ in got)  # each object in its own cluster only
    unreachable = next(i for i in doc["items"] if i["id"] == "context-unreachable")
    assert unreachable["severity"] == "error" and unreachable["kind"] == "Context"
    summary = {c["context"]: c for c in doc["contexts"]}
    assert list(summary) == ["one", "two", "closed"]
    assert summary["one"]["reachable"] and summary["two"]["reachable"] and not summary["closed"]["reachable"]
    assert summary["one"]["objects"] == 1 and summary["two"]["objects"] == 1 and summary["closed"]["objects"] == 0
    assert summary["closed"]["error"] and summary["closed"]["complete"] is False
    assert summary["one"]["server"] != summary["two"]["server"]
    assert doc["summary"]["objects"] == 2

    fams = {f.name: f for f in text_string_to_metric_families(metrics.read_text())}
    reachable = {s.labels["context"]: s.value for s in fams["fieldown_context_reachable"].samples}
    assert reachable == {"one": 1, "two": 1, "closed": 0}
    counted = {(s.labels["context"], s.labels["id"]): s.value for s in fams["fieldown_findings"].samples}
    assert counted[("closed", "context-unreachable")] == 1
    assert counted[("two", "imperative-writer")] == 1


def test_text_has_a_summary_per_context(fleet: dict[str, Any]) -> None:
    r = _audit(fleet, "--context", "one", "--context", "two", "--context", "closed", "--context-concurrency", "1")
    assert r.code == 2
    lines = r.out.splitlines()
    one = next(line for line in lines if line.startswith("  context one: "))
    assert "1 object of 1 type" in one
    assert any(line.startswith("  context closed: not audited: ") for line in lines)
    # grouped text: each object named with its context
    assert any(line.strip() == f"1 object: [two] Widget edited -n {fleet['ns']}" for line in lines), r.out
    details = _audit(fleet, "--context", "one", "--context", "two", "--details")
    assert any(line.startswith("[two] Widget ") and "/edited" in line for line in details.out.splitlines()), details.out


def test_all_contexts_and_fail_on(fleet: dict[str, Any]) -> None:
    r = _audit(fleet, "--all-contexts", "-o", "json", "--fail-on", "none")
    assert r.code == 2  # --fail-on none does not pass a cluster nobody looked at
    assert [c["context"] for c in r.json()["contexts"]] == ["one", "two", "closed"]
    sarif = _audit(fleet, "--context", "one", "--context", "two", "-o", "sarif")
    assert sarif.code == 0, sarif.err
    validate_sarif(sarif.json())
    assert sorted((x["properties"]["context"], x["ruleId"]) for x in sarif.json()["runs"][0]["results"]) == [
        ("one", "client-side-apply"), ("two", "imperative-writer")]
    ok = _audit(fleet, "--context", "one", "--context", "two", "-o", "prometheus")
    assert ok.code == 0, ok.err  # warnings only
    fams = {f.name: f for f in text_string_to_metric_families(ok.out)}
    assert {s.labels["context"]: s.value for s in fams["fieldown_objects_audited"].samples} == {"one": 1, "two": 1}
    assert cli(fleet["env"], "audit", "--kubeconfig", fleet["kubeconfig"], "--context", "one", "--context", "two",
               "--kinds", "widgets").code == 2  # no -n / -A: each context has its own default namespace



def test_one_context_metrics_match_the_json_report(fleet: dict[str, Any]) -> None:
    metrics = fleet["tmp"] / "one.prom"
    r = _audit(fleet, "--context", "two", "-o", "json", "--metrics-file", str(metrics), "--fail-on", "warning")
    assert r.code == 1, r.err  # findings: the metrics are written all the same
    doc = r.json()
    assert "contexts" not in doc and all("context" not in i for i in doc["items"])  # the one-cluster document
    fams = {f.name: f for f in text_string_to_metric_families(metrics.read_text())}
    by_id: dict[str, float] = {}
    for s in fams["fieldown_findings"].samples:
        assert s.labels["context"] == "two" and s.labels["namespace"] == fleet["ns"]
        by_id[s.labels["id"]] = by_id.get(s.labels["id"], 0) + s.value
    assert by_id == doc["summary"]["byId"]
    assert [s.value for s in fams["fieldown_objects_audited"].samples] == [doc["summary"]["objects"]]
    assert [s.value for s in fams["fieldown_audit_complete"].samples] == [1]
    printed = _audit(fleet, "--context", "two", "-o", "prometheus")
    assert printed.code == 0
    assert {f.name for f in text_string_to_metric_families(printed.out)} == set(fams)
    nowhere = _audit(fleet, "--context", "two", "--metrics-file", str(fleet["tmp"] / "no" / "such.prom"))
    assert nowhere.code == 2 and "--metrics-file" in nowhere.err and nowhere.out == ""


def test_ctrl_c_prints_the_finished_contexts(fleet: dict[str, Any], tmp_path: Path) -> None:
    """Context one is audited, then (one context at a time) the run hangs on a server that accepts the
    connection and never answers; Ctrl-C then: exit 130, context one's findings printed, the other
    context not complete."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            held.append(listener.accept()[0])
            connected.set()

    threading.Thread(target=accept, daemon=True).start()
    cfg = yaml.safe_load(Path(fleet["kubeconfig"]).read_text())
    cfg["clusters"].append({"name": "silent", "cluster": {**cfg["clusters"][0]["cluster"],
                                                          "server": f"https://127.0.0.1:{listener.getsockname()[1]}"}})
    cfg["contexts"].append({"name": "silent", "context": {"cluster": "silent", "user": "one"}})
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(cfg))
    args = ["audit", "--kubeconfig", str(kubeconfig), "-n", fleet["ns"], "--kinds", "widgets", "--context", "one",
            "--context", "silent", "--context-concurrency", "1", "-o", "json"]
    # SIGINT with Python's default handler, as in a terminal
    code = ("import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from kubectl_fieldown.cli.main import main\nsys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=fleet["env"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert connected.wait(120), "the second context never connected"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for s in held:
            s.close()
        listener.close()
    assert proc.returncode == 130, err
    assert "interrupted: partial results (1 of 2 contexts complete)" in err and "Traceback" not in err
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["complete"] is False
    assert [(i["context"], i["name"], i["id"]) for i in doc["items"]] == [("one", "csa", "client-side-apply")]
    summary = {c["context"]: c for c in doc["contexts"]}
    assert summary["one"]["complete"] is True and summary["silent"]["complete"] is False
