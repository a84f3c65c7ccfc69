"""``undo`` against the real API server (issue 18, items 5-7), the later writers played as they write:
the real kubectl (client-side apply, and Argo CD's sync, which is kubectl's server-side apply with
``--force-conflicts --field-manager argocd-controller``, see tests/appliers/replay.py), and backups on
a real full filesystem (a small tmpfs mounted for the test).

* a write after the tool's (found from the resourceVersion its write returned, recorded in the
  backup) makes ``undo`` refuse, naming what changed; ``--force`` restores around it, so the later
  writer keeps its fields and its next apply can still remove them;
* several writes of the tool on one object, undone together or newest first, give back the original
  whole (managedFields and the last-applied annotation); undoing the oldest alone is refused, naming
  the newer run;
* a full backup disk fails each object before anything is sent and leaves no empty or cut file.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import Result, run

from kubectl_fieldown.fieldpath import decode_fields_v1, parse_path
from kubectl_fieldown.kube import ClusterClient, ClusterOptions, ResourceInfo

pytestmark = pytest.mark.cluster

LA = "kubectl.kubernetes.io/last-applied-configuration"
ARGOCD = ["apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller"]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: lab.Cluster) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "FIELDOWN_TEST_FAULT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    yield


class Widgets:
    def __init__(self, cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
        self.cluster = cluster
        self.ns = namespace
        self.tmp = tmp_path
        self.files = 0
        self.backups = tmp_path / "backups"
        self.client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
        self.res: ResourceInfo = self.client.discovery.resolve("widgets")

    def manifest(self, name: str, spec: dict[str, Any]) -> Path:
        self.files += 1
        doc = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": self.ns},
               "spec": spec}
        path = self.tmp / f"m{self.files}.yaml"
        path.write_text(yaml.safe_dump(doc))
        return path

    def kubectl(self, *args: str) -> str:
        return self.cluster.kubectl(*args).stdout

    def apply(self, name: str, spec: dict[str, Any], *flags: str) -> None:
        self.kubectl(*(flags or ("apply",)), "-f", str(self.manifest(name, spec)))

    def live(self, name: str) -> dict[str, Any]:
        return self.client.get(self.res, name, self.ns)

    def fd(self, *args: str) -> Result:
        return run(*args, "-n", self.ns)

    def runs(self) -> list[Path]:
        return sorted(p for p in self.backups.iterdir() if p.is_dir())


@pytest.fixture
def w(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> Iterator[Widgets]:
    s = Widgets(cluster, namespace, tmp_path)
    try:
        yield s
    finally:
        s.client.close()


def ownership(obj: dict[str, Any]) -> tuple[list[str], str | None]:
    """managedFields without times (the server keeps stored times when a write changes only them)
    and the last-applied annotation."""
    mf = sorted(json.dumps({k: v for k, v in e.items() if k != "time"}, sort_keys=True)
                for e in obj["metadata"].get("managedFields") or [])
    return mf, (obj["metadata"].get("annotations") or {}).get(LA)


def owners_of(obj: dict[str, Any], path: str) -> set[str]:
    p = parse_path(path)
    return {f"{e['manager']} ({e['operation']})" for e in obj["metadata"].get("managedFields") or []
            if decode_fields_v1(e["fieldsV1"]).has(p)}


def rv(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


# --- 5. a later writer ------------------------------------------------------------------------------


def test_undo_after_a_later_argocd_sync_refuses_and_force_leaves_the_sync_its_fields(w: Widgets) -> None:
    spec = {"replicas": 3, "color": "blue", "labels": {"tier": "web", "app": "shop"}}
    w.apply("w", spec)  # a client-side apply, before Argo CD took the object over
    assert w.fd("migrate", "widget/w", "--for", "argocd").code == 0
    (run_dir,) = w.runs()
    # the next sync changes a field (server-side apply as Argo CD's controller sends it)
    w.apply("w", {**spec, "color": "red"}, *ARGOCD)
    synced = w.live("w")
    assert owners_of(synced, ".spec.color") == {"argocd-controller (Apply)"}

    u = run("undo", str(run_dir), "-o", "json")
    assert u.code == 1, u.out + u.err
    (item,) = u.json()["items"]
    assert item["result"] == "failed"
    (backup,) = run_dir.iterdir()
    migrated = json.loads(backup.read_text())["written"]["writes"][-1][1]  # what the tool's write returned
    assert item["error"].startswith(f"written after the backup (resourceVersion {migrated} -> {rv(synced)}): ")
    # named by the value it changed (and by its entry's time when that moved on: times have whole seconds)
    assert "argocd-controller (Apply) changed .spec.color" in item["error"] and "--force" in item["error"]
    assert "\n" not in item["error"]
    assert rv(w.live("w")) == rv(synced)  # nothing written

    # --force restores around the sync: the sync keeps every field it applied
    f = run("undo", str(run_dir), "--force", "-o", "json")
    assert f.code == 0, f.out + f.err
    after = w.live("w")
    for path in (".spec.color", ".spec.replicas", ".spec.labels.tier"):
        assert "kubectl-client-side-apply (Update)" not in owners_of(after, path), path
        assert "argocd-controller (Apply)" in owners_of(after, path), path
    # so the next sync without a field removes it, as it would have without the undo
    w.apply("w", {"replicas": 3, "color": "red", "labels": {"app": "shop"}}, *ARGOCD)
    assert w.live("w")["spec"]["labels"] == {"app": "shop"}


@pytest.mark.parametrize("command", [
    ("migrate", "--to", "server-side"),
    ("strip-last-applied", "--field", ".spec.replicas"),
    ("handover", "--field", ".spec.replicas", "--to", "hpa-controller"),
    ("reset", "--to-manager", "owner"),
    ("reset",),
], ids=lambda c: "-".join(c).replace("--", ""))
def test_every_write_command_refuses_undo_over_a_later_write(w: Widgets, command: tuple[str, ...]) -> None:
    w.apply("w", {"replicas": 3, "color": "blue"})
    assert w.fd(command[0], "widget/w", *command[1:]).code == 0
    (run_dir,) = w.runs()
    # a later client-side apply: kubectl-client-side-apply and the annotation are written again
    w.apply("w", {"replicas": 3, "color": "red"})
    later = w.live("w")
    u = run("undo", str(run_dir))
    assert u.code == 1, u.out + u.err
    assert "written after the backup (resourceVersion " in u.out
    # (kubectl-client-side-apply's entry is named too when its time moved on: times have whole seconds)
    assert "the last-applied annotation changed" in u.out, u.out
    assert rv(w.live("w")) == rv(later)
    f = run("undo", str(run_dir), "--force")
    assert f.code == 0, f.out + f.err
    # what is not put back is said without -v
    assert "\n  ! not restored: what was written after the backup (resourceVersion " in f.out, f.out
    after = w.live("w")
    # the later writer's entry and annotation are as it left them, and nobody else got its fields
    was = [e["fieldsV1"] for e in later["metadata"].get("managedFields") or []
           if e["manager"] == "kubectl-client-side-apply"]
    if was:  # (after a reset the server tracks no Update until the next apply: the later apply left no entry)
        assert [e["fieldsV1"] for e in after["metadata"]["managedFields"]
                if e["manager"] == "kubectl-client-side-apply"] == was
    assert after["metadata"]["annotations"][LA] == later["metadata"]["annotations"][LA]
    assert owners_of(after, ".spec.color") == {"kubectl-client-side-apply (Update)"}


# --- 6. several writes on one object ------------------------------------------------------------------


def test_two_writes_undone_together_or_newest_first_give_back_the_original(w: Widgets) -> None:
    for n in ("a", "b"):
        w.apply(n, {"replicas": 3, "color": "blue"})
    original = {n: w.live(n) for n in "ab"}
    assert w.fd("migrate", "widget/a", "widget/b", "--to", "server-side").code == 0
    assert w.fd("strip-last-applied", "widget/a", "widget/b", "--field", ".spec.color").code == 0
    first, second = w.runs()

    # the oldest alone: refused, naming the newer run
    u = run("undo", str(first))
    assert u.code == 1, u.out + u.err
    assert f"written after the backup by this tool: strip-last-applied ({second}/" in u.out, u.out
    assert "undo that first, or name both in one undo" in u.out

    # both at once (in any order): the original, annotation included
    both = run("undo", str(second), str(first), "-o", "json")
    assert both.code == 0, both.out + both.err
    assert both.json()["summary"]["changed"] == 2
    assert ownership(w.live("a")) == ownership(original["a"])
    assert ownership(w.live("b")) == ownership(original["b"])

    # the same writes again, undone newest first, one run at a time
    assert w.fd("migrate", "widget/a", "--to", "server-side").code == 0
    assert w.fd("handover", "widget/a", "--field", ".spec.replicas", "--to", "hpa-controller").code == 0
    *_, third, fourth = w.runs()
    assert run("undo", str(fourth)).code == 0
    assert run("undo", str(third)).code == 0
    assert ownership(w.live("a")) == ownership(original["a"])


def test_many_runs_undone_at_once_with_force_give_back_every_original(w: Widgets) -> None:
    names = [f"o{i}" for i in range(6)]
    for n in names:
        w.apply(n, {"replicas": 3, "color": "blue", "labels": {"tier": "web"}})
    original = {n: w.live(n) for n in names}
    objs = [f"widget/{n}" for n in names]
    for command in (("migrate", "--to", "server-side"),
                    ("strip-last-applied", "--field", ".spec.replicas"),
                    ("handover", "--field", ".spec.labels.tier", "--to", "sizer")):
        assert w.fd(command[0], *objs, *command[1:]).code == 0
    runs = w.runs()
    u = run("undo", *map(str, runs), "--force", "-o", "json")  # as a shell glob names them: oldest first
    assert [n for n in names if ownership(w.live(n)) != ownership(original[n])] == []
    assert u.code == 0, u.out + u.err
    assert u.json()["summary"]["changed"] == len(names)  # one restore per object


def test_list_and_last(w: Widgets) -> None:
    w.apply("w", {"replicas": 3, "color": "blue"})
    w.apply("v", {"replicas": 2})
    original = ownership(w.live("w"))
    assert w.fd("migrate", "widget/w", "widget/v", "--to", "server-side").code == 0
    assert w.fd("strip-last-applied", "widget/w", "--field", ".spec.color").code == 0
    first, second = w.runs()
    listed = run("undo", "--list", "-o", "json")
    assert listed.code == 0, listed.err
    assert [(r["directory"], r["command"], r["objects"]) for r in listed.json()["runs"]] == [
        (str(second), "strip-last-applied", 1), (str(first), "migrate --to server-side", 2)]
    text = run("undo", "--list").text.splitlines()
    assert text[0].split() == ["TIME", "COMMAND", "OBJECTS", "DIRECTORY"]
    assert text[1].endswith(str(second)) and " strip-last-applied " in text[1]
    # --last: the newest run
    last = run("undo", "--last", "-o", "json")
    assert last.code == 0, last.out + last.err
    assert [i["backup"] is not None for i in last.json()["items"]] == [True]
    assert run("undo", "--last", str(first)).code == 2
    assert run("undo", "--list", "--last").code == 2
    # the undo is the newest run now; the first one then puts back the original
    assert run("undo", str(first)).code == 0
    assert ownership(w.live("w")) == original


# --- 7. a full backup disk -----------------------------------------------------------------------------


@contextlib.contextmanager
def small_filesystem(path: Path, size_kb: int) -> Iterator[None]:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(path)], check=True)


def fill(path: Path, leave_bytes: int) -> None:
    """Fill the filesystem of ``path`` up to ``leave_bytes`` free."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    with open(path / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - leave_bytes))
    with contextlib.suppress(OSError), open(path / "filler2", "wb") as g:  # what rounding left
        while os.statvfs(path).f_bavail * st.f_frsize > leave_bytes:
            g.write(b"\0" * 512)
            g.flush()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_backup_disk_fails_each_object_before_writing_and_leaves_no_cut_file(
        w: Widgets, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"d{i}" for i in range(4)]
    for n in names:
        w.apply(n, {"replicas": 3, "color": "blue"})
    before = {n: w.live(n) for n in names}
    disk = w.tmp / "disk"
    with small_filesystem(disk, 64):
        monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(disk / "backups"))
        fill(disk, 0)
        r = w.fd("migrate", *[f"widget/{n}" for n in names], "--to", "server-side", "-o", "json")
        assert r.code == 1, r.out + r.err
        for item in r.json()["items"]:
            assert item["result"] == "failed" and item["patchesSent"] == 0
            assert "cannot save the backup" in item["error"] and "No space left on device" in item["error"]
            assert "nothing was written" in item["error"] and "\n" not in item["error"]
        assert all(rv(w.live(n)) == rv(before[n]) for n in names)
        # not one file, cut or empty, and no run directory without a backup in it
        assert [p for p in (disk / "backups").rglob("*") if p.is_file() or p.is_dir()] == []

        # room for some backups only: each object is written with a whole backup or not at all
        (disk / "filler2").unlink(missing_ok=True)
        (disk / "filler").unlink()
        fill(disk, 3 * 4096)
        r = w.fd("migrate", *[f"widget/{n}" for n in names], "--to", "server-side", "-o", "json")
        items = {i["name"]: i for i in r.json()["items"]}
        changed = [n for n in names if items[n]["result"] == "changed"]
        failed = [n for n in names if items[n]["result"] == "failed"]
        assert changed and failed, items
        for n in failed:
            assert "No space left on device" in items[n]["error"] and rv(w.live(n)) == rv(before[n])
        files = sorted((disk / "backups").rglob("*.json"))
        assert [f.name for f in files] == sorted(f"example.com_Widget_{w.ns}_{n}.json" for n in changed)
        assert not [p for p in (disk / "backups").rglob("*") if p.name.startswith(".")]  # no temporary file
        for f in files:
            assert json.loads(f.read_text())["format"] == "fieldown.backup/v2"
        (disk / "filler").unlink()  # undo saves a backup of its own
        u = run("undo", str(files[0].parent), "-o", "json")
        assert u.code == 0, u.out + u.err
        assert u.json()["summary"]["changed"] == len(changed)
        assert all(ownership(w.live(n)) == ownership(before[n]) for n in names)
