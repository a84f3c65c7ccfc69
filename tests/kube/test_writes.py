"""Backups of the writing commands (kube/writes.py), without a server.

The executor's retry policy is tested against the real server's answers (409, the bare 422 of a
failed ``test`` op, a real 422) in tests/kube/test_writes_cluster.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.kube import ResourceInfo
from kubectl_fieldown.kube.writes import (
    BACKUP_FORMAT,
    BackupError,
    BackupRun,
    backup_files,
    load_backup,
)

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
