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
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        res = client.discovery.resolve("widgets")
        return [client.get(res, n, namespace) for n in ("a", "b")]
    finally:
        client.close()


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
])
def test_all_with_names(args: list[str], message: str) -> None:
    r = run("reset", *args)
    assert r.code == 2, r.err
    assert r.err.splitlines() == [f"error: {message}"]
