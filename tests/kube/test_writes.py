"""The write executor and backups of the writing commands (kube/writes.py), without a server.

The executor's retry policy is driven here by a scripted fake client (the real server's answers,
409 and the bare 422 of a failed ``test`` op, are reproduced from what it sends; the real thing is
exercised by tests/cli/test_migrate_cluster.py and test_migrate_concurrent.py).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.jsonpatch import apply_json_patch
from kubectl_fieldown.kube import Conflict, Invalid, ResourceInfo
from kubectl_fieldown.kube.writes import (
    BACKUP_FORMAT,
    BackupError,
    BackupRun,
    ObjectTarget,
    Result,
    WriteOptions,
    backup_files,
    execute,
    load_backup,
)
from kubectl_fieldown.managedfields import decode_entries
from kubectl_fieldown.remedies.plans import plan_strip_last_applied
from kubectl_fieldown.remedies.requests import requests_for
from kubectl_fieldown.remedies.writeplan import WritePlan

LA = "kubectl.kubernetes.io/last-applied-configuration"
WIDGETS = ResourceInfo(group="example.com", version="v1", resource="widgets", kind="Widget", namespaced=True,
                       verbs=frozenset({"get", "list", "patch"}))
SECRETS = ResourceInfo(group="", version="v1", resource="secrets", kind="Secret", namespaced=True)


def widget(rv: str = "10") -> dict[str, Any]:
    la = '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{},"name":"w","namespace":"ns"},' \
         '"spec":{"color":"blue","replicas":3}}\n'
    return {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "uid-1", "resourceVersion": rv, "annotations": {LA: la},
                     "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update",
                                        "apiVersion": "example.com/v1", "time": "2026-01-01T00:00:00Z",
                                        "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:metadata": {"f:annotations": {f"f:{LA}": {}}},
                                                     "f:spec": {"f:color": {}, "f:replicas": {}}}}]},
        "spec": {"color": "blue", "replicas": 3},
    }


class FakeClient:
    """One object; JSON patches applied like the server does (test op, resourceVersion bump), with
    ``interfere(n)`` making another writer change the object before the n-th patch."""

    server = "https://fake:6443"
    context = "fake"

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.patches: list[list[dict[str, Any]]] = []
        self.interfere_before: set[int] = set()
        self.reject: str | None = None
        self.gets = 0

    def _bump(self) -> None:
        self.obj["metadata"]["resourceVersion"] = str(int(self.obj["metadata"]["resourceVersion"]) + 1)

    def get(self, res: ResourceInfo, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.gets += 1
        return copy.deepcopy(self.obj)

    def patch(self, res: ResourceInfo, name: str, namespace: str | None, body: Any, patch_type: str = "apply",
              *, field_manager: str | None = None, dry_run: bool = False, **kw: Any) -> dict[str, Any]:
        n = len(self.patches)
        self.patches.append(body)
        if n in self.interfere_before:
            self.obj["metadata"].setdefault("labels", {})["other"] = str(n)
            self._bump()
        if self.reject:
            raise Invalid(self.reject, code=422, reason="Invalid")
        current = self.obj["metadata"]["resourceVersion"]
        if body[0]["value"] != current:
            raise Invalid("the server rejected our request due to an error in our request", code=422,
                          reason="Invalid")
        result = apply_json_patch(self.obj, body)
        if dry_run:
            return result
        self.obj = result
        self._bump()
        return copy.deepcopy(self.obj)


def strip_replicas(obj: dict[str, Any]) -> WritePlan:
    m = plan_strip_last_applied(obj, [parse_path(".spec.replicas")])
    return WritePlan(m, requests_for(m))


def no_sleep(_: float) -> None:
    pass


TARGET = ObjectTarget(WIDGETS, "w", "ns")


def test_writes_in_order_with_the_returned_resource_version(tmp_path: Path) -> None:
    c = FakeClient(widget())
    backups = BackupRun(tmp_path / "b", "strip-last-applied")
    out = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), backups)  # type: ignore[arg-type]
    # the annotation is written as its client-side owner, with the entries, in one patch
    assert out.result is Result.changed and out.retries == 0 and out.patches_sent == 1
    assert [p[0]["value"] for p in c.patches] == ["10"]
    assert out.backup is not None and load_backup(out.backup).resource_version == "10"
    assert "replicas" not in json.loads(c.obj["metadata"]["annotations"][LA])["spec"]


def test_a_changed_object_is_read_planned_and_written_again(tmp_path: Path) -> None:
    c = FakeClient(widget())
    c.interfere_before = {0}  # another writer between the read and the patch
    out = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), BackupRun(tmp_path, "x"))  # type: ignore[arg-type]
    assert out.result is Result.changed and out.retries == 1
    assert c.obj["metadata"]["labels"] == {"other": "0"}  # the other writer's change is kept
    (e,) = decode_entries(c.obj["metadata"]["managedFields"])
    assert not e.fields.has(parse_path(".spec.replicas"))


def test_gives_up_after_max_retries() -> None:
    c = FakeClient(widget())
    c.interfere_before = set(range(100))
    sleeps: list[float] = []
    out = execute(c, TARGET, strip_replicas, WriteOptions(max_retries=3, sleep=sleeps.append), None)  # type: ignore[arg-type]
    assert out.result is Result.failed and out.retries == 3
    assert "kept changing while being written; gave up after 3 retries" in (out.error or "")
    assert len(sleeps) == 2  # the first retry has a fresh read in hand and does not wait
    assert all(0 < s <= 1.5 for s in sleeps)


def test_a_real_422_fails_at_once() -> None:
    c = FakeClient(widget())
    c.reject = 'patch of widgets.example.com "w" rejected as invalid: spec.replicas: Invalid value'
    out = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert out.result is Result.failed and out.retries == 0
    assert out.error == c.reject


def test_409_is_a_retry_too() -> None:
    c = FakeClient(widget())
    calls = {"n": 0}
    original = c.patch

    def once_conflict(*a: Any, **kw: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise Conflict("conflict", code=409, reason="Conflict")
        return original(*a, **kw)

    c.patch = once_conflict  # type: ignore[method-assign]
    out = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert out.result is Result.changed and out.retries == 1


def test_dry_runs(tmp_path: Path) -> None:
    c = FakeClient(widget())
    out = execute(c, TARGET, strip_replicas, WriteOptions(dry_run="client"), BackupRun(tmp_path / "b", "x"))  # type: ignore[arg-type]
    assert out.result is Result.changed and c.patches == [] and out.backup is None
    assert out.patches[0][0]["value"] == "10"
    assert out.requests[0]["fieldManager"] == "kubectl-client-side-apply"
    assert any(line.startswith("~ kubectl-client-side-apply (Update") for line in out.changes)
    assert not (tmp_path / "b").exists()
    out = execute(c, TARGET, strip_replicas, WriteOptions(dry_run="server"), None)  # type: ignore[arg-type]
    assert out.result is Result.changed and [p[0]["value"] for p in c.patches] == ["10"]
    assert c.obj["metadata"]["resourceVersion"] == "10"


def test_unchanged_and_deleted_recreated() -> None:
    c = FakeClient(widget())
    done = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert done.result is Result.changed
    again = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert again.result is Result.unchanged and c.patches[1:] == []

    c = FakeClient(widget())
    original = c.get

    def recreated(*a: Any, **kw: Any) -> dict[str, Any]:
        obj = original(*a, **kw)
        if c.gets > 1:
            obj["metadata"]["uid"] = "uid-2"
        return obj

    c.get = recreated  # type: ignore[method-assign]
    c.interfere_before = {0}
    out = execute(c, TARGET, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert out.result is Result.failed and "deleted and created again" in (out.error or "")


# --- backups ----------------------------------------------------------------------------------------------


def test_backup_layout_and_permissions(tmp_path: Path) -> None:
    run = BackupRun(tmp_path / "root", "migrate --to server-side", server="https://s", context="ctx")
    assert run.save(WIDGETS, widget("5")) == run.save(WIDGETS, widget())  # not written yet: saved again as read
    p = run.save(WIDGETS, widget())
    assert run.record(p, "10", widget("11"), complete=True) is None
    # one backup per object and run once written: the state before the run's first write
    assert run.save(WIDGETS, widget("99")) == p
    assert p.name == "example.com_Widget_ns_w.json"
    assert (tmp_path / "root").stat().st_mode & 0o777 == 0o700
    assert p.parent.stat().st_mode & 0o777 == 0o700 and p.stat().st_mode & 0o777 == 0o600
    b = load_backup(p)
    assert (b.content.header["command"], b.server, b.content.header["context"], b.uid, b.resource_version) == (
        "migrate --to server-side", "https://s", "ctx", "uid-1", "10")
    assert (b.api_version, b.name, b.namespace, b.kind) == ("example.com/v1", "w", "ns", "Widget")
    assert json.loads(p.read_text())["format"] == BACKUP_FORMAT
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s/../x", "uid": "u2"}}
    q = run.save(SECRETS, secret)
    assert q.parent == p.parent and q.name == "core_Secret__cluster_s-..-x.json"
    assert backup_files([p.parent], tmp_path / "root") == sorted([p, q])
    with pytest.raises(BackupError, match="not under the backup directory"):
        backup_files([p], tmp_path / "elsewhere")


def test_backup_errors(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match="no such file or directory"):
        backup_files([tmp_path / "nope"], tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BackupError, match="no backup files"):
        backup_files([tmp_path / "empty"], tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "Widget"}')
    with pytest.raises(BackupError, match="not a fieldown backup"):
        load_backup(bad)
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        with pytest.raises(BackupError, match="nothing was written"):
            BackupRun(ro / "sub", "x").save(WIDGETS, widget())


def test_a_backup_on_a_full_disk_is_refused_whole_and_leaves_nothing(tmp_path: Path) -> None:
    """A real full filesystem (a tmpfs of 4 pages): saving fails with the disk's error before any write,
    and no file — empty, cut or temporary — nor an empty run directory stays behind."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        big = widget()
        big["spec"]["blob"] = "x" * 40_000  # more than the whole disk
        run = BackupRun(disk / "backups", "migrate")
        with pytest.raises(BackupError, match=r"cannot save the backup of 'w' under .*: No space left on device; "
                                              "nothing was written"):
            run.save(WIDGETS, big)
        assert not run.used
        assert [p for p in (disk / "backups").rglob("*")] == []
        # one that fits is whole; its record that no longer fits leaves the file as it was
        p = run.save(WIDGETS, widget())
        saved = p.read_bytes()
        returned = widget("11")
        returned["metadata"]["annotations"][LA] = "y" * 40_000  # recorded: more than the disk has
        why = run.record(p, "10", returned, complete=True)
        assert why is not None and "No space left on device" in why
        assert p.read_bytes() == saved and load_backup(p).content.written is not None
        assert sorted(f.name for f in p.parent.iterdir()) == [p.name]
    finally:
        subprocess.run(["umount", str(disk)], check=True)
