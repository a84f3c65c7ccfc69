"""Every command's machine output carries one envelope (docs/output.md): ``apiVersion:
fieldown.dev/v1``, a ``kind`` and the ``version`` of its keys, with the keys it had before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import lab
import yaml
from cli_helpers import Result

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "deployment.yaml"
API_VERSION = "fieldown.dev/v1"


def cli(cluster: lab.Cluster, tmp: Path, *args: str) -> Result:
    env = cluster.env()
    env["FIELDOWN_CACHE_DIR"] = str(tmp / "cache")
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def head(doc: Any) -> tuple[str, str, int]:
    return doc["apiVersion"], doc["kind"], doc["version"]


def test_every_command_has_the_envelope(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace},
                                        "spec": {"color": "red", "replicas": 2}}))
    cluster.kubectl("apply", "-f", str(manifest))
    backups = str(tmp_path / "backups")
    docs: dict[str, Any] = {}

    def doc(name: str, *args: str, codes: tuple[int, ...] = (0,), fmt: str = "json") -> None:
        r = cli(cluster, tmp_path, *args)
        assert r.code in codes, (args, r.out, r.err)
        docs[name] = json.loads(r.out) if fmt == "json" else yaml.safe_load(r.out)

    doc("show", "show", "-i", str(EXAMPLE), "-o", "json")
    doc("show-yaml", "show", "widget/w", "-n", namespace, "-o", "yaml", fmt="yaml")
    doc("conflicts", "conflicts", "-f", str(manifest), "--field-manager", "kubectl", "-o", "json", codes=(0, 1))
    doc("conflicts-yaml", "conflicts", "-f", str(manifest), "--field-manager", "kubectl", "-o", "yaml", fmt="yaml",
        codes=(0, 1))
    doc("audit", "audit", "-n", namespace, "-o", "json", codes=(0, 1))
    doc("migrate", "migrate", "widget/w", "-n", namespace, "--to", "server-side", "--backup-dir", backups,
        "-o", "json")
    doc("strip-last-applied", "strip-last-applied", "widget/w", "-n", namespace, "--field", ".spec.color",
        "--dry-run=server", "-o", "json")
    doc("handover", "handover", "widget/w", "-n", namespace, "--field", ".spec.replicas", "--to", "sizer",
        "--dry-run=server", "-o", "json")
    doc("reset", "reset", "widget/w", "-n", namespace, "--dry-run=client", "-o", "json")
    doc("undo", "undo", "--last", "--backup-dir", backups, "-o", "json")
    doc("undo-list", "undo", "--list", "--backup-dir", backups, "-o", "json")

    kinds = {name: head(d) for name, d in docs.items()}
    assert kinds == {
        "show": (API_VERSION, "FieldownShow", 1), "show-yaml": (API_VERSION, "FieldownShow", 1),
        "conflicts": (API_VERSION, "FieldownConflicts", 2), "conflicts-yaml": (API_VERSION, "FieldownConflicts", 2),
        "audit": (API_VERSION, "FieldownAudit", 1),
        **{w: (API_VERSION, "FieldownWrite", 1) for w in ("migrate", "strip-last-applied", "handover", "reset",
                                                          "undo")},
        "undo-list": (API_VERSION, "FieldownBackupRuns", 1),
    }
    # the keys consumers read before are all still there
    assert {"items"} <= set(docs["show"]) and docs["show"]["items"][0]["name"] == "web"
    assert docs["audit"]["complete"] is True and "summary" in docs["audit"]
    assert docs["migrate"]["command"] == "migrate --to server-side" and docs["migrate"]["summary"]["changed"] == 1
    assert docs["undo-list"]["runs"][-1]["command"] == "migrate --to server-side"
    # the envelope's keys come first, as in a Kubernetes object
    assert all(list(d)[:3] == ["apiVersion", "kind", "version"] for d in docs.values())
