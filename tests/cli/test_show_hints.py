"""Hints for newcomers, followed literally on the real API server."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import lab
from test_show_live import fieldown, widget


def test_a_file_saved_without_managed_fields_says_how_to_save_it_and_that_command_works(
        cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    cluster.kubectl("apply", "--server-side", "--field-manager", "ci", "-f", "-",
                    input=json.dumps(widget("w1", namespace, {"replicas": 2})))
    saved = tmp_path / "w1.yaml"
    saved.write_text(cluster.kubectl("get", "widgets", "w1", "-n", namespace, "-o", "yaml").stdout)
    r = fieldown(cluster, "show", "-i", str(saved))
    assert r.code == 0 and "no managedFields" in r.out
    [note] = r.err.splitlines()
    assert note.startswith(f"note: {saved}: document 1: Widget {namespace}/w1 has no managedFields: ")
    command = note.split("save it again with '")[1].split("'")[0]
    assert command == f"kubectl get widget.example.com w1 -n {namespace} -o yaml --show-managed-fields"
    words = shlex.split(command)
    again = tmp_path / "again.yaml"
    again.write_text(cluster.kubectl(*words[1:]).stdout)
    r = fieldown(cluster, "show", "-i", str(again), "-o", "json")
    assert r.code == 0 and r.err == ""
    assert {f["owners"][0]["manager"] for f in r.json()["items"][0]["fields"]} == {"ci"}
    # a manifest (never stored by a server) had no managedFields to lose: no hint
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(json.dumps(widget("w2", namespace, {"replicas": 1})))
    assert fieldown(cluster, "show", "-i", str(manifest)).err == ""
