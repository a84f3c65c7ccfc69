"""Every write command, interrupted between its writes, converges when run again (real API server).

For each command an object is written without interruption (the reference), and for each write
``N`` of that run and each way of stopping — SIGKILL, Ctrl-C (SIGINT), SIGTERM and the server going away —
a twin object with the same history is written by a run that stops right after its N-th write
(``FIELDOWN_TEST_FAULT=N:kill|int|term|down``: exact points, no timing; kube/_faults.py). Then the
same command runs again and must exit 0 and leave the twin exactly as the reference (values, the
last-applied annotation, and ownership as path sets per manager), and ``undo`` of the interrupted
run's backups must put the original back. Ctrl-C, SIGTERM and the outage must also report what was
done and where the backups are. A write whose answer is lost (504, timeout) after the server made it
converges in the same run.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.ownership.managedfields import decode_entries

pytestmark = pytest.mark.cluster

LA = "kubectl.kubernetes.io/last-applied-configuration"
SPEC = {"replicas": 2, "color": "blue", "args": ["--port=80"]}

_TERMINAL_MAIN = ("import signal, runpy\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
                  "runpy.run_module('kubectl_fieldown', run_name='__main__', alter_sys=True)\n")


@dataclass
class Case:
    id: str
    history: Callable[[Any, str], None]
    argv: list[str]
    """The command's words after the object (``widgets.example.com/NAME -n NS``)."""


class Objects:
    def __init__(self, cluster: lab.Cluster, tmp: Path) -> None:
        self.cluster = cluster
        self.tmp = tmp
        self.ns = f"kill-{uuid.uuid4().hex[:8]}"  # the lab serves no Namespace objects: any name works

    def kubectl(self, *args: str) -> None:
        self.cluster.kubectl(*args)

    def apply(self, name: str, server_side: bool = False, manager: str = "") -> None:
        doc = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": self.ns},
               "spec": copy.deepcopy(SPEC)}
        path = self.tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump(doc))
        argv = ["apply", "-f", str(path)]
        if server_side:
            argv.append("--server-side")
        if manager:
            argv.append(f"--field-manager={manager}")
        self.kubectl(*argv)

    def ref(self, name: str) -> list[str]:
        return [f"widgets.example.com/{name}", "-n", self.ns]

    def fieldown(self, *args: str, fault: str = "", backups: Path) -> subprocess.CompletedProcess[str]:
        env = self.cluster.env()
        env["FIELDOWN_BACKUP_DIR"] = str(backups)
        env["FIELDOWN_CACHE_DIR"] = str(self.tmp / "cache")
        env.pop("FIELDOWN_TEST_FAULT", None)
        if fault:
            env["FIELDOWN_TEST_FAULT"] = fault
        # the child stands for a command typed in a terminal: Ctrl-C has Python's default handler even
        # when this suite runs as a background job, which passes SIGINT on ignored (the 'int' faults
        # then interrupted nothing and the runs ended 0 instead of 130)
        return subprocess.run([sys.executable, "-c", _TERMINAL_MAIN, *args], capture_output=True, text=True,
                              env=env, timeout=120, check=False)

    def live(self, name: str) -> dict[str, Any]:
        out = self.cluster.kubectl("get", *self.ref(name), "-o", "json", "--show-managed-fields").stdout
        return json.loads(out)


def state(obj: dict[str, Any]) -> dict[str, Any]:
    """What must match between twins: values, the annotation's manifest, ownership as path sets."""
    md = obj["metadata"]
    ann = dict(md.get("annotations") or {})
    la = ann.pop(LA, None)
    if la is not None:
        doc = json.loads(la)
        doc["metadata"].pop("name", None)
        la = doc
    owners: dict[str, list[str]] = {}
    for e in decode_entries(md.get("managedFields")):
        key = f"{e.manager}/{e.operation}/{e.subresource}"
        owners[key] = sorted(str(p) for p in e.fields.sorted_paths())
    return {"spec": obj.get("spec"), "labels": md.get("labels"), "annotations": ann, "lastApplied": la,
            "owners": owners}


def _csa_scaled_labelled(o: Objects, name: str) -> None:
    o.apply(name)
    o.kubectl("scale", *o.ref(name), "--replicas=5")
    o.kubectl("label", *o.ref(name), "team=payments")


def _csa_labelled(o: Objects, name: str) -> None:
    o.apply(name)
    o.kubectl("label", *o.ref(name), "team=payments")


def _ssa_ci(o: Objects, name: str) -> None:
    o.apply(name, server_side=True, manager="ci")


CASES = [
    Case("migrate-to-server-side", _csa_scaled_labelled, ["migrate", "--to", "server-side"]),
    Case("migrate-to-server-side-ci", _csa_labelled, ["migrate", "--to", "server-side", "--field-manager", "ci"]),
    Case("migrate-to-client-side", _ssa_ci, ["migrate", "--to", "client-side", "--from-manager", "ci"]),
    Case("migrate-for-argocd", _csa_labelled, ["migrate", "--for", "argocd"]),
    Case("strip-last-applied", _csa_scaled_labelled, ["strip-last-applied", "--field", ".spec.replicas"]),
    Case("handover", _csa_labelled, ["handover", "--field", ".metadata.labels.team", "--to", "manual-edits"]),
    Case("reset-drop-manager", _csa_labelled, ["reset", "--drop-manager", "kubectl-label",
                                               "--allow-value-changes"]),
    Case("reset-clear", _csa_labelled, ["reset", "--allow-value-changes"]),
]


def _backup_dir(root: Path) -> Path:
    runs = sorted(p for p in root.iterdir() if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_interrupted_write_converges_when_run_again(case: Case, cluster: lab.Cluster, tmp_path: Path) -> None:
    o = Objects(cluster, tmp_path)
    case.history(o, "ref")
    ref_backups = tmp_path / "ref-backups"
    done = o.fieldown(*case.argv[:1], *o.ref("ref"), *case.argv[1:], "-o", "json", backups=ref_backups)
    assert done.returncode == 0, done.stdout + done.stderr
    writes = json.loads(done.stdout)["items"][0]["patchesSent"]
    assert writes >= 1
    want = state(o.live("ref"))

    for n in range(1, writes + 1):
        # SIGTERM (CI cancelling a job) stops a run as Ctrl-C does, with exit 143 (128 + 15)
        for action, code in (("kill", -9), ("int", 130), ("term", 143), ("down", 1)):
            if action == "down" and n == writes:
                continue  # an outage after the last write interrupts nothing
            name = f"t{n}{action}"
            case.history(o, name)
            original = state(o.live(name))
            backups = tmp_path / f"backups-{name}"
            cut = o.fieldown(*case.argv[:1], *o.ref(name), *case.argv[1:], fault=f"{n}:{action}", backups=backups)
            assert cut.returncode == code, f"{name}: {cut.returncode}\n{cut.stdout}{cut.stderr}"
            run = _backup_dir(backups)
            if action != "kill":
                # what was done and where the backups are, even when stopped
                assert str(run) in cut.stdout + cut.stderr, f"{name}: {cut.stdout}{cut.stderr}"
            again = o.fieldown(*case.argv[:1], *o.ref(name), *case.argv[1:], backups=tmp_path / f"again-{name}")
            assert again.returncode == 0, f"{name}: {again.stdout}{again.stderr}"
            assert state(o.live(name)) == want, name
            # the interrupted run's backup is the original: undo (with --force: the re-run wrote after it)
            # puts it back
            back = o.fieldown("undo", str(run), "--force", backups=backups)
            assert back.returncode == 0, f"{name}: {back.stdout}{back.stderr}"
            assert state(o.live(name)) == original, name


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_write_answered_504_that_the_server_made_converges(case: Case, cluster: lab.Cluster,
                                                             tmp_path: Path) -> None:
    """A write the server committed but whose answer was lost (a proxy's 504, a read timeout) is read
    back and the object re-planned: the run itself ends as an uninterrupted one (issue 18, item 8)."""
    o = Objects(cluster, tmp_path)
    case.history(o, "ref")
    done = o.fieldown(*case.argv[:1], *o.ref("ref"), *case.argv[1:], "-o", "json", backups=tmp_path / "ref")
    assert done.returncode == 0, done.stdout + done.stderr
    writes = json.loads(done.stdout)["items"][0]["patchesSent"]
    want = state(o.live("ref"))
    for n in range(1, writes + 1):
        for fault, answered in (("504", "was answered 504"), ("timeout", "got no answer")):
            name = f"t{n}{fault}"
            case.history(o, name)
            cut = o.fieldown(*case.argv[:1], *o.ref(name), *case.argv[1:], "-o", "json", "-v", fault=f"{n}:{fault}",
                             backups=tmp_path / f"backups-{name}")
            assert cut.returncode == 0, f"{name}: {cut.stdout}{cut.stderr}"
            item = json.loads(cut.stdout)["items"][0]
            assert item["result"] == "changed" and item["maybeWritten"] is False
            assert item["retries"] == 0  # no concurrent change
            assert any(note.startswith(f"a write {answered} (") and note.endswith(
                "read back, the object had changed (the write was made, or another writer's): planned again from it")
                for note in item["notes"]), item["notes"]
            assert state(o.live(name)) == want, name


def test_a_write_that_may_have_been_made_says_so_and_a_rerun_converges(cluster: lab.Cluster, tmp_path: Path) -> None:
    """A 504 that the object cannot be read back after: "may have been written", in text and JSON, never
    "failed" as if nothing was sent; running the command again finishes (issue 18, item 8)."""
    o = Objects(cluster, tmp_path)
    argv = ["migrate", "--to", "server-side"]
    _csa_scaled_labelled(o, "ref")
    assert o.fieldown(argv[0], *o.ref("ref"), *argv[1:], backups=tmp_path / "ref").returncode == 0
    want = state(o.live("ref"))
    for output in ("text", "json"):
        name = f"blind-{output}"
        _csa_scaled_labelled(o, name)
        backups = tmp_path / f"backups-{name}"
        cut = o.fieldown(argv[0], *o.ref(name), *argv[1:], "-o", output, fault="1:504-blind", backups=backups)
        assert cut.returncode == 1, cut.stdout + cut.stderr
        if output == "json":
            doc = json.loads(cut.stdout)
            (item,) = doc["items"]
            assert item["result"] == "failed" and item["maybeWritten"] is True and item["patchesSent"] == 1
            assert doc["summary"]["maybeWritten"] == 1
            assert "it may have been written (reading it back failed: " in item["error"]
            assert doc["backupDir"] == str(_backup_dir(backups))
        else:
            first = cut.stdout.splitlines()[0]
            assert first.startswith(f"widget.example.com/{name} -n {o.ns}: failed: patch ") and \
                "(504 Timeout)" in first and "it may have been written (reading it back failed: " in first, first
            assert "1 of the failed may have been written (the server answered 5xx or not at all): run the " \
                   "command again" in cut.stdout
            assert f"backups: {_backup_dir(backups)}" in cut.stdout
        again = o.fieldown(argv[0], *o.ref(name), *argv[1:], backups=tmp_path / f"again-{name}")
        assert again.returncode == 0, again.stdout + again.stderr
        assert state(o.live(name)) == want


def test_a_write_answered_504_that_was_not_made_says_so(cluster: lab.Cluster, tmp_path: Path) -> None:
    """Read back unchanged: the 504'd write was not made, and the object fails with the server's answer
    (not "may have been written"); the object is as it was (issue 18, item 8)."""
    o = Objects(cluster, tmp_path)
    _csa_scaled_labelled(o, "u")
    original = state(o.live("u"))
    cut = o.fieldown("migrate", *o.ref("u"), "--to", "server-side", "-o", "json", fault="1:504-unmade",
                     backups=tmp_path / "backups")
    assert cut.returncode == 1, cut.stdout + cut.stderr
    (item,) = json.loads(cut.stdout)["items"]
    assert item["result"] == "failed" and item["maybeWritten"] is False
    assert "(504 Timeout)" in item["error"]
    assert item["error"].endswith("(read back: the object is unchanged, this write was not made)"), item["error"]
    assert state(o.live("u")) == original


def test_json_output_of_an_interrupted_run_says_what_was_done(cluster: lab.Cluster, tmp_path: Path) -> None:
    o = Objects(cluster, tmp_path)
    for name in ("a", "b", "c"):
        _csa_labelled(o, name)
    backups = tmp_path / "backups"
    cut = o.fieldown("migrate", "--all", "-n", o.ns, "--to", "server-side", "-o", "json", fault="1:int",
                     backups=backups)
    assert cut.returncode == 130, cut.stdout + cut.stderr
    doc = json.loads(cut.stdout)
    assert doc["interrupted"] is True
    assert doc["backupDir"] == str(_backup_dir(backups))
    assert doc["inFlight"] == f"widgets.example.com/a -n {o.ns}"
    assert "interrupted while writing widgets.example.com/a" in cut.stderr and "backups: " in cut.stderr
    # SIGTERM the same, as "terminated"
    backups = tmp_path / "backups-term"
    cut = o.fieldown("migrate", "--all", "-n", o.ns, "--to", "server-side", "-o", "json", fault="1:term",
                     backups=backups)
    assert cut.returncode == 143, cut.stdout + cut.stderr
    doc = json.loads(cut.stdout)
    assert doc["interrupted"] is True and doc["backupDir"] == str(_backup_dir(backups))
    assert "terminated (SIGTERM) while writing widgets.example.com/" in cut.stderr and "backups: " in cut.stderr


@pytest.mark.parametrize("action", ["kill", "int"])
def test_an_interrupted_undo_converges_when_run_again(action: str, cluster: lab.Cluster, tmp_path: Path) -> None:
    o = Objects(cluster, tmp_path)
    _csa_scaled_labelled(o, "u")
    original = state(o.live("u"))
    backups = tmp_path / "backups"
    assert o.fieldown("migrate", *o.ref("u"), "--to", "server-side", backups=backups).returncode == 0
    run = _backup_dir(backups)
    cut = o.fieldown("undo", str(run), fault=f"1:{action}", backups=backups)
    assert cut.returncode == (-9 if action == "kill" else 130), cut.stdout + cut.stderr
    again = o.fieldown("undo", str(run), backups=backups)
    assert again.returncode == 0, again.stdout + again.stderr
    assert state(o.live("u")) == original
