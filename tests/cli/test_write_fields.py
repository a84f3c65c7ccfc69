"""The ``--field`` of ``handover`` and ``strip-last-applied`` names a field a manager can own, and an
error quotes at most an excerpt of what it was given (issue 18, item 14)."""

from __future__ import annotations

import json
from pathlib import Path

import lab
import pytest
import yaml
from cli_helpers import run

from kubectl_fieldown.kube import ClusterClient, ClusterOptions

LA = "kubectl.kubernetes.io/last-applied-configuration"
HUGE = "9" * 5000


@pytest.mark.parametrize("field", [".kind", ".apiVersion", ".metadata", ".metadata.name", ".metadata.namespace",
                                   ".metadata.managedFields", ".metadata.resourceVersion", ".metadata.uid"])
@pytest.mark.parametrize("command", [["handover", "--to", "other"], ["strip-last-applied"]])
def test_fields_nobody_owns_are_refused(cluster: lab.Cluster, namespace: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, field: str, command: list[str]) -> None:
    """The server strips these from every manager's set: handing them over is meaningless, and it
    stripped them from the object's last-applied annotation (a later kubectl apply then works from a
    manifest without kind)."""
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace}, "spec": {"color": "red"}}))
    cluster.kubectl("apply", "-f", str(manifest))
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        widgets = client.discovery.resolve("widgets")
        before = client.get(widgets, "w", namespace)
        r = run(command[0], "widgets/w", "-n", namespace, "--field", field, *command[1:])
        after = client.get(widgets, "w", namespace)
    finally:
        client.close()
    assert r.code == 2, r.out + r.err
    assert r.err.splitlines() == [
        f"error: --field {field}: the API server records no owner of it (it strips it from every manager's "
        "fields); name a field a manager can own (under .spec, .metadata.labels, .metadata.annotations, ...)"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert json.loads(after["metadata"]["annotations"][LA])["kind"] == "Widget"


@pytest.mark.parametrize("args", [
    ["reset", "widgets/w", "--max-retries", HUGE],
    ["reset", "widgets/w", "--max-retries", "x" + HUGE],
    ["handover", "widgets/w", "--field", f".spec.x[{HUGE}]", "--to", "m"],
    ["handover", "widgets/w", "--field", f".spec.{HUGE}[", "--to", "m"],
    ["show", "-i", "-", "--path", f".spec.x[{HUGE}]"],
    ["show", "-i", "-", "--path", f".spec.x[a={HUGE}"],
])
def test_errors_quote_an_excerpt_of_the_input(args: list[str]) -> None:
    """A 5,000-digit number gave a 5 KB "one-line" error (or an internal error: Python refuses to read
    more than 4,300 digits as an int)."""
    r = run(*args)
    assert r.code == 2, r.err
    (line,) = r.err.splitlines()
    assert line.startswith("error: ") and "internal error" not in line
    assert len(line) < 300, line
    assert "(5,0" in line  # the excerpt says how long the input was


def test_a_status_field_is_not_handed_to_the_main_resource(cluster: lab.Cluster, namespace: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Widgets have a status subresource: the server resets .status on every write to the main
    resource, so an Apply entry there cannot own it. handover wrote one anyway (ctrl (Apply) owning
    .status.phase, taken from the status writer); now the object fails and nothing is written."""
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace}, "spec": {"color": "red"}}))
    cluster.kubectl("apply", "--server-side", "-f", str(manifest))
    cluster.kubectl("patch", "widget", "w", "-n", namespace, "--subresource=status", "--type=merge",
                    "-p", '{"status":{"phase":"Ready"}}')
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        widgets = client.discovery.resolve("widgets")
        before = client.get(widgets, "w", namespace)
        r = run("handover", "widgets/w", "-n", namespace, "--field", ".status.phase", "--to", "ctrl")
        after = client.get(widgets, "w", namespace)
    finally:
        client.close()
    assert r.code == 1, r.out + r.err
    assert r.out.splitlines()[0] == (
        f"widget.example.com/w -n {namespace}: failed: .status.phase is written through the status subresource: no "
        "Apply entry of the main resource can own it (hand it over with its status writer)")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
