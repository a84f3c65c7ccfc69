"""Cluster data is text from strangers: control characters never reach the terminal, and output
that cannot be encoded is escaped instead of failing (issue 9)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import run

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
HUMAN = ["tree", "table", "blame"]
SGR = re.compile("\x1b\\[[0-9;]*m")  # rich's own colours
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # anything but \n

HOSTILE = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {
        "name": "c\x1b[31mred", "namespace": "ns\x07",
        "annotations": {"title": "x\x1b]0;pwned\x07y", "k\x1b[2Jey": "\x9b31m", "del": "a\x7fb", "tab": "a\tb"},
        "managedFields": [
            {"manager": "m\x1b[5m", "operation": "Apply", "apiVersion": "v1\x1b[8m", "fieldsType": "FieldsV1",
             "time": "soon\x1b[1A", "fieldsV1": {"f:metadata": {"f:annotations": {
                 "f:title": {}, "f:k\x1b[2Jey": {}, "f:del": {}, "f:tab": {}}}}},
            {"manager": "m\x1b[5m", "operation": "Update", "apiVersion": "v1", "subresource": "st\x1batus",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {"f:title": {}}}}},
        ],
    },
}


def hostile_file(tmp_path: Path) -> str:
    f = tmp_path / "hostile.json"
    f.write_text(json.dumps(HOSTILE))
    return str(f)


@pytest.mark.parametrize("colour", [False, True])
@pytest.mark.parametrize("output", HUMAN)
def test_no_control_characters_reach_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str,
                                                   colour: bool) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    r = run("show", "-i", hostile_file(tmp_path), "-o", output, "--time", "full")
    assert r.code == 0, r.err
    text = SGR.sub("", r.out) if colour else r.out
    assert not CONTROL.search(text), repr(CONTROL.findall(text))
    # what was there is still readable, escaped as in JSON
    assert "\\u001b]0;pwned\\u0007" in text and "k\\u001b[2Jey" in text and "\\u009b31m" in text
    assert "m\\u001b[5m" in text  # manager names too
    if output == "tree":
        assert "c\\u001b[31mred" in text and "v1\\u001b[8m" in text and "st\\u001batus" in text
        assert "soon\\u001b[1A" in text


def test_conflicts_text_escapes_paths_and_values(tmp_path: Path) -> None:
    entry = {"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:k\x1b[2J": {}}}}
    live = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "managedFields": [entry]}, "data": {"k\x1b[2J": "x\x9b"}}
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                "data": {"k\x1b[2J": "y\x07"}}
    (tmp_path / "live.json").write_text(json.dumps(live))
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    r = run("conflicts", "-f", str(tmp_path / "m.json"), "--live", str(tmp_path / "live.json"), "--field-manager", "b")
    assert r.code == 1, r.err
    assert not CONTROL.search(r.out)
    assert '.data.k\\u001b[2J  live: "x\\u009b" → applied: "y\\u0007"' in r.out


# --- machine output ----------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_machine_output_is_lossless_and_escapes_c1(tmp_path: Path, output: str) -> None:
    r = run("show", "-i", hostile_file(tmp_path), "-o", output)
    assert r.code == 0, r.err
    assert not re.search("[\x7f-\x9f]", r.out)  # JSON escapes C0 only; C1 and DEL are escaped too
    doc = json.loads(r.out) if output == "json" else yaml.safe_load(r.out)
    item = doc["items"][0]
    assert item["name"] == "c\x1b[31mred" and item["managers"][0]["manager"] == "m\x1b[5m"
    assert {f["path"]: f.get("value") for f in item["fields"]}[".metadata.annotations.k\x1b[2Jey"] == "\x9b31m"


@pytest.mark.parametrize("output", ["tree", "table", "blame", "json", "yaml"])
def test_ascii_output_encoding_in_a_real_process(tmp_path: Path, output: str) -> None:
    """PYTHONIOENCODING=ascii made every output an internal error (the tree guides, é in a name)."""
    obj: dict[str, Any] = yaml.safe_load(DEPLOYMENT.read_text())
    obj["metadata"]["labels"]["café"] = "ünï"
    obj["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]["f:café"] = {}
    f = tmp_path / "d.json"
    f.write_text(json.dumps(obj))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "FIELDOWN_DEBUG")}
    env.update(PYTHONIOENCODING="ascii", NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", "show", "-i", str(f), "-o", output],
                          capture_output=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    text = proc.stdout.decode("ascii")  # nothing but ASCII was written
    if output == "json":
        assert any(x["path"] == ".metadata.labels.café" and x["value"] == "ünï"
                   for x in json.loads(text)["items"][0]["fields"])
    elif output == "yaml":
        assert any(x["path"] == ".metadata.labels.café" for x in yaml.safe_load(text)["items"][0]["fields"])
    else:
        assert "caf\\xe9" in text or "caf\\u00e9" in text


def test_error_lines_escape_control_characters(tmp_path: Path) -> None:
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c\x1b]0;pwned\x07", "managedFields": 5}}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    r = run("show", "-i", str(f))
    assert r.code == 2
    assert r.err == (f"error: {f}: document 1: ConfigMap c\\u001b]0;pwned\\u0007: managedFields[0]: "
                     "managedFields is not a list\n")


def test_the_server_refuses_control_characters_in_manager_names(cluster: Any, namespace: str, tmp_path: Path) -> None:
    """The 1.36 server validates managedFields managers (422, "invalid character U+001B"), so a
    manager name with an escape reaches the write commands only from an older server or the command
    line; render/migrate escapes every line either way (tests/render/test_migrate.py)."""
    from kubectl_fieldown.kube import ClusterClient, ClusterOptions, Invalid

    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace}, "spec": {"color": "red"}}))
    cluster.kubectl("apply", "-f", str(manifest))
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        widgets = client.discovery.resolve("widgets")
        entries = client.get(widgets, "w", namespace)["metadata"]["managedFields"]
        for bad in ("ev\x1b]0;pwned\x07il", "ev\x9b31mil"):
            with pytest.raises(Invalid, match="invalid character U\\+00"):
                client.patch(widgets, "w", namespace, {"metadata": {"managedFields": [
                    {**e, "manager": bad} for e in entries]}}, "merge")
    finally:
        client.close()


@pytest.mark.parametrize("dry_run", ["--dry-run=client", "--dry-run=none"])
def test_write_commands_escape_from_manager(cluster: Any, namespace: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch, dry_run: str) -> None:
    """Issue 18, item 4: a --from-manager value is echoed escaped in the notes (``no entries of … to
    move``, printed with -v)."""
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace},
                                        "spec": {"replicas": 2, "color": "red"}}))
    cluster.kubectl("apply", "-f", str(manifest))
    evil = "kubectl-client-side-apply\x1b]0;pwned\x07"
    r = run("migrate", "widgets/w", "-n", namespace, "--to", "server-side", "--from-manager", evil, dry_run, "-v")
    assert r.code == 0, r.out + r.err
    assert not CONTROL.search(r.out + r.err), repr(r.out + r.err)
    assert "\\u001b]0;pwned\\u0007" in r.out, r.out
