"""Which objects a write command names (cli/select.py): like ``kubectl delete``, a write over every
object of every type must say ``--all`` (issue 18, item 16)."""

from __future__ import annotations

from pathlib import Path

import lab
import pytest
import yaml
from cli_helpers import run

from kubectl_fieldown.kube import ClusterClient, ClusterOptions

WRITES = [
    ["migrate", "--to", "server-side"],
    ["migrate", "--for", "argocd"],
    ["strip-last-applied", "--field", ".spec.replicas"],
    ["handover", "--field", ".spec.replicas", "--to", "hpa"],
    ["reset"],
    ["reset", "--to-manager", "kubectl"],
]


@pytest.fixture
def env(cluster: lab.Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))


def widgets(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> list[dict[str, object]]:
    """Two client-side applied widgets; returns them as the server has them."""
    for name in ("a", "b"):
        m = tmp_path / f"{name}.yaml"
        m.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                     "metadata": {"name": name, "namespace": namespace},
                                     "spec": {"replicas": 1, "color": "red"}}))
        cluster.kubectl("apply", "-f", str(m))
    return widgets_as_they_are(cluster, namespace)


@pytest.mark.parametrize("scope", [["-n", "NS"], ["-A"], []], ids=["namespace", "all-namespaces", "context"])
@pytest.mark.parametrize("command", WRITES, ids=lambda c: "-".join(c).replace("--", ""))
def test_a_write_over_everything_needs_all(cluster: lab.Cluster, namespace: str, tmp_path: Path, env: None,
                                           command: list[str], scope: list[str]) -> None:
    """``reset -n NS`` reset every object of every type in the namespace; now it is a usage error that
    names --all, and nothing is read or written."""
    before = widgets(cluster, namespace, tmp_path)
    scope = [namespace if a == "NS" else a for a in scope]
    r = run(*command, *scope)
    assert r.code == 2, r.out + r.err
    (line,) = r.err.splitlines()
    assert line.startswith("error: name the objects: TYPE/NAME, TYPE [NAME...], -f FILE or -l SELECTOR; to write "
                           "every object of every type in ") and line.endswith(", say --all"), line
    assert widgets(cluster, namespace, tmp_path) == before


def test_all_writes_every_object_of_every_type(cluster: lab.Cluster, namespace: str, tmp_path: Path,
                                               env: None) -> None:
    widgets(cluster, namespace, tmp_path)
    r = run("migrate", "--to", "server-side", "--all", "-n", namespace, "-o", "json")
    assert r.code == 0, r.err
    assert sorted((i["name"], i["result"]) for i in r.json()["items"]) == [("a", "changed"), ("b", "changed")]
    # a TYPE, a selector or -f name the objects without --all
    assert run("migrate", "--to", "server-side", "widgets", "-n", namespace).code == 0
    assert run("migrate", "--to", "server-side", "-l", "x!=y", "-n", namespace).code == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--all", "widgets/a"], "name cannot be provided with --all: it selects every object of the type"),
    (["--all", "widgets", "a"], "name cannot be provided with --all: it selects every object of the type"),
    (["--all", "-l", "a=b"], "cannot set --all and --selector at the same time"),
    (["--all", "-f", "x.yaml"], "--all cannot be used with -f: the manifests name the objects"),
    (["widgets/a", "--manifest", "m.yaml", "-f", "x.yaml"],
     "--manifest cannot be used with -f: the -f manifests are the next ones already"),
])
def test_all_with_names(args: list[str], message: str) -> None:
    r = run("reset", *args)
    assert r.code == 2, r.err
    assert r.err.splitlines() == [f"error: {message}"]


def test_manifest_checks_an_object_named_otherwise_against_its_document(
        cluster: lab.Cluster, namespace: str, tmp_path: Path, env: None) -> None:
    """``--manifest FILE`` gives the applier's next manifest of an object named by TYPE/NAME (what
    ``audit -f`` checked its fix with); an object no document names is an input error of its own
    (exit 2), and nothing is written to it."""
    before = widgets(cluster, namespace, tmp_path)
    only_b = tmp_path / "next"
    only_b.mkdir()
    (only_b / "b.yaml").write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                                   "metadata": {"name": "b", "namespace": namespace},
                                                   "spec": {"color": "red"}}))
    r = run("migrate", "widgets/a", "widgets/b", "-n", namespace, "--to", "server-side", "--manifest", str(only_b),
            "-o", "json")
    assert r.code == 2, r.out + r.err
    results = {i["name"]: i for i in r.json()["items"]}
    assert results["b"]["result"] == "changed", results
    (failed,) = [i for i in results.values() if i["result"] == "failed"]
    assert f"no document names widgets.example.com/a -n {namespace}" in failed["error"], failed
    after = widgets_as_they_are(cluster, namespace)
    assert after[0] == before[0]
    assert after[1]["metadata"]["resourceVersion"] != before[1]["metadata"]["resourceVersion"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: example.com/v1\nkind: Nope\nmetadata: {name: a}\n")
    r = run("migrate", "widgets/a", "-n", namespace, "--to", "server-side", "--manifest", str(bad))
    assert r.code == 2 and r.err.startswith("error: --manifest "), r.err
    assert "Nope" in r.err and len(r.err.splitlines()) == 1, r.err


def widgets_as_they_are(cluster: lab.Cluster, namespace: str) -> list[dict[str, object]]:
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        res = client.discovery.resolve("widgets")
        return [client.get(res, n, namespace) for n in ("a", "b")]
    finally:
        client.close()
