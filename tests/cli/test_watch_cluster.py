"""``watch`` against the real API server, with real writers acting in a known order.

Each test starts ``kubectl-fieldown watch`` as a process, waits for its "watching" note (the LIST is
done and the WATCH starts from its resourceVersion: nothing written afterwards can be missed), then
drives the writers one after the other, waiting for each write's change to be printed before the
next write (so the order of the writes is the order of the events, whatever the load), and ends the
watch with ``--max-changes`` (or Ctrl-C). Nothing depends on timing: the only time limits are
generous bounds on a process that would otherwise hang.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import run
from hostile_server import wait_until

pytestmark = pytest.mark.cluster

BOUND = 120.0  # seconds: a hung process fails the test instead of hanging it, never a timing assertion


# the watch stands for a command typed in a terminal: SIGINT has Python's default handler even when
# the test run inherited it ignored (a background job, nohup), which the tool rightly keeps ignored
_TERMINAL = ("import runpy, signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
             "runpy.run_module('kubectl_fieldown', run_name='__main__', alter_sys=True)\n")


class Watch:
    """``kubectl-fieldown watch ARGS`` as a process: its stdout lines as they come, its stderr."""

    def __init__(self, cluster: lab.Cluster, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _TERMINAL, "watch", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env())
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            if line.startswith("note: watching "):
                self.ready.set()
        self.ready.set()

    def wait_ready(self) -> None:
        assert self.ready.wait(BOUND), "the watch did not start"
        assert self.proc.poll() is None, "".join(self.err)

    def next(self) -> str:
        line = self.lines.get(timeout=BOUND)
        assert line is not None, f"the watch ended early (exit {self.proc.wait(BOUND)}): {''.join(self.err)}"
        return line

    def next_json(self) -> dict[str, Any]:
        doc = json.loads(self.next())
        assert isinstance(doc, dict)
        return doc

    def rest(self) -> list[str]:
        """Every line until the process ends."""
        out = []
        while (line := self.lines.get(timeout=BOUND)) is not None:
            out.append(line)
        return out

    def finish(self) -> int:
        return self.proc.wait(BOUND)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(BOUND)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: lab.Cluster) -> None:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for w in started:
        w.kill()


class Lab:
    def __init__(self, cluster: lab.Cluster, ns: str, tmp: Path, watches: list[Watch]) -> None:
        self.cluster, self.ns, self.tmp, self.watches = cluster, ns, tmp, watches
        self.files = 0

    def kubectl(self, *args: str) -> str:
        return self.cluster.kubectl(*args, "-n", self.ns).stdout

    def apply(self, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> None:
        """A client-side ``kubectl apply`` of a Widget manifest."""
        self.files += 1
        md: dict[str, Any] = {"name": name, "namespace": self.ns}
        if annotations:
            md["annotations"] = annotations
        path = self.tmp / f"m{self.files}.yaml"
        path.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md,
                                        "spec": spec}))
        self.kubectl("apply", "-f", str(path))

    def watch(self, *args: str) -> Watch:
        w = Watch(self.cluster, *args, "-n", self.ns)
        self.watches.append(w)
        w.wait_ready()
        return w


@pytest.fixture
def lab_(cluster: lab.Cluster, namespace: str, tmp_path: Path, watches: list[Watch]) -> Lab:
    return Lab(cluster, namespace, tmp_path, watches)


def writer(doc: dict[str, Any]) -> tuple[str, str, str]:
    (w,) = doc["writers"]
    return w["manager"], w["operation"], w.get("subresource", "")


CSA = ("kubectl-client-side-apply", "Update", "")


def test_apply_loop_against_a_scale_writer_is_a_fight(lab_: Lab) -> None:
    lab_.apply("w", {"replicas": 3, "color": "red"})
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "4", "--fail-on", "fight", "--for", "10m")
    changes = []
    fights = []
    for step in range(4):
        if step % 2 == 0:
            lab_.kubectl("scale", "widget/w", "--replicas=5")
        else:
            lab_.apply("w", {"replicas": 3, "color": "red"})  # the apply loop puts its value back
        doc = w.next_json()
        if doc["kind"] == "FieldownFight":
            fights.append(doc)
            doc = w.next_json()
        changes.append(doc)
    rest = [json.loads(x) for x in w.rest()]
    assert w.finish() == 1, "".join(w.err)  # --fail-on fight
    fights += [d for d in rest if d["kind"] == "FieldownFight"]
    (summary,) = [d for d in rest if d["kind"] == "FieldownWatchSummary"]

    assert [(c["kind"], c["path"], c["change"], c["old"], c["new"], c["ambiguous"]) for c in changes] == [
        ("FieldownChange", ".spec.replicas", "modified", 3, 5, None),
        ("FieldownChange", ".spec.replicas", "modified", 5, 3, None),
        ("FieldownChange", ".spec.replicas", "modified", 3, 5, None),
        ("FieldownChange", ".spec.replicas", "modified", 5, 3, None)]
    scaler = writer(changes[0])
    assert scaler[1:] == ("Update", "scale")  # kubectl scale writes through /scale
    assert [writer(c) for c in changes] == [scaler, CSA, scaler, CSA]
    assert all(c["object"] == {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                               "namespace": lab_.ns} for c in changes)

    (fight,) = fights
    assert fight["path"] == ".spec.replicas" and fight["flips"] == 3
    assert sorted((x["manager"], x.get("subresource", ""), x["value"], x["writes"]) for x in fight["writers"]) == \
        sorted([(scaler[0], "scale", 5, 2), (CSA[0], "", 3, 2)])
    (command,) = fight["remedy"]["commands"]
    assert command == f"kubectl fieldown strip-last-applied widget.example.com/w -n {lab_.ns} --field .spec.replicas"
    assert summary["fights"] == [{k: v for k, v in fight.items() if k not in ("kind", "version")}]
    assert (summary["changes"], summary["writes"], summary["objects"], summary["interrupted"]) == (4, 4, 1, False)
    assert sorted((b["writer"]["manager"], b["changes"]) for b in summary["byWriter"]) == \
        sorted([(scaler[0], 2), (CSA[0], 2)])

    # the printed remedy is a valid command of the tool, and followed it ends the fight: the next apply
    # of the manifest without replicas leaves the scaler's value alone
    lab_.kubectl("scale", "widget/w", "--replicas=5")
    r = run(*shlex.split(command)[2:])
    assert r.code == 0, r.out + r.err
    lab_.apply("w", {"color": "red"})
    live = json.loads(lab_.kubectl("get", "widget/w", "-o", "json"))
    assert live["spec"]["replicas"] == 5


def test_a_forced_server_side_applier_against_a_controller_is_a_fight_handover_ends(lab_: Lab) -> None:
    manifest = lab_.tmp / "ci.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": lab_.ns},
                                        "spec": {"color": "red", "replicas": 1}}))
    ci = ("apply", "--server-side", "--force-conflicts", "--field-manager=ci", "-f", str(manifest))
    lab_.kubectl(*ci)
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "4", "--fail-on", "fight")
    docs = []
    for step in range(4):
        if step % 2 == 0:
            lab_.kubectl("patch", "widget/w", "--type=merge", "-p", '{"spec":{"color":"blue"}}',
                         "--field-manager=color-controller")
        else:
            lab_.kubectl(*ci)
        docs.append(w.next_json())
    docs += [json.loads(x) for x in w.rest()]
    assert w.finish() == 1, "".join(w.err)
    changes = [d for d in docs if d["kind"] == "FieldownChange"]
    assert [(c["path"], c["new"], writer(c)) for c in changes] == [
        (".spec.color", "blue", ("color-controller", "Update", "")), (".spec.color", "red", ("ci", "Apply", "")),
        (".spec.color", "blue", ("color-controller", "Update", "")), (".spec.color", "red", ("ci", "Apply", ""))]
    (fight,) = [d for d in docs if d["kind"] == "FieldownFight"]
    (command,) = fight["remedy"]["commands"]
    assert command == f"kubectl fieldown handover widget.example.com/w -n {lab_.ns} --field .spec.color " \
                      "--to color-controller"
    # the printed command is valid and does what it says: the controller owns the field afterwards
    r = run(*shlex.split(command)[2:])
    assert r.code == 0, r.out + r.err
    live = json.loads(lab_.kubectl("get", "widget/w", "-o", "json", "--show-managed-fields"))
    owners = {e["manager"] for e in live["metadata"]["managedFields"] if "f:color" in e["fieldsV1"].get("f:spec", {})}
    assert owners == {"color-controller"}
    # and the applier's manifest without the field: its next apply leaves the value alone
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": lab_.ns}, "spec": {"replicas": 1}}))
    lab_.kubectl(*ci)
    assert json.loads(lab_.kubectl("get", "widget/w", "-o", "json"))["spec"]["color"] == "red"


def test_two_update_writers_on_an_annotation_fight(lab_: Lab) -> None:
    lab_.apply("w", {"color": "red"})
    w = lab_.watch("widgets", "--max-changes", "4", "--fights", "3", "-o", "json",
                   "--path", ".metadata.annotations.example.com/owner")
    seq = [("team-a", "a"), ("team-b", "b"), ("team-a", "a"), ("team-b", "b")]
    docs = []
    for manager, value in seq:
        lab_.kubectl("annotate", "--overwrite", f"--field-manager={manager}", "widget/w", f"example.com/owner={value}")
        docs.append(w.next_json())
    docs += [json.loads(x) for x in w.rest()]
    assert w.finish() == 0, "".join(w.err)  # a fight, but no --fail-on
    changes = [d for d in docs if d["kind"] == "FieldownChange"]
    assert [(c["path"], c.get("old"), c["new"], writer(c)) for c in changes] == [
        (".metadata.annotations.example.com/owner", None, "a", ("team-a", "Update", "")),
        (".metadata.annotations.example.com/owner", "a", "b", ("team-b", "Update", "")),
        (".metadata.annotations.example.com/owner", "b", "a", ("team-a", "Update", "")),
        (".metadata.annotations.example.com/owner", "a", "b", ("team-b", "Update", ""))]
    assert changes[0]["change"] == "added" and "old" not in changes[0]
    (fight,) = [d for d in docs if d["kind"] == "FieldownFight"]
    assert [(x["manager"], x["value"], x["writes"]) for x in fight["writers"]] == [("team-a", "a", 2),
                                                                                   ("team-b", "b", 2)]
    assert fight["remedy"]["commands"] == []  # two imperative writers: no ownership change ends it
    (summary,) = [d for d in docs if d["kind"] == "FieldownWatchSummary"]
    assert len(summary["fights"]) == 1


def test_a_single_edit_is_one_change_and_no_fight(lab_: Lab) -> None:
    lab_.apply("w", {"replicas": 1, "color": "red"})
    w = lab_.watch("widget/w", "--max-changes", "1", "--fail-on", "fight")
    # a merge patch as 'kubectl edit' sends it
    lab_.kubectl("patch", "widget/w", "--type=merge", "-p", '{"spec":{"color":"green"}}',
                 "--field-manager=kubectl-edit")
    line = w.next()
    rest = w.rest()
    assert w.finish() == 0, "".join(w.err)
    when, obj, change = line.split("  ", 2)
    assert when.endswith("Z") and obj == f"widget.example.com/w -n {lab_.ns}"
    assert change == '.spec.color: "red" → "green"  by kubectl-edit (Update)'
    assert "Summary: 1 field change in 1 write of 1 object" in rest
    assert "Fights: none" in rest


def test_ctrl_c_prints_the_summary_and_exits_130(lab_: Lab) -> None:
    lab_.apply("w", {"replicas": 1})
    w = lab_.watch("widget/w", "-o", "json")
    lab_.kubectl("patch", "widget/w", "--type=merge", "-p", '{"spec":{"replicas":2}}', "--field-manager=ed")
    assert w.next_json()["new"] == 2
    w.proc.send_signal(signal.SIGINT)
    (summary,) = [json.loads(x) for x in w.rest()]
    assert w.finish() == 130
    assert summary["kind"] == "FieldownWatchSummary" and summary["interrupted"] is True
    assert summary["changes"] == 1


def test_usage_and_cluster_errors(lab_: Lab) -> None:
    r = run("watch", "widgets", "--for", "soon", "-n", lab_.ns)
    assert r.code == 2 and r.err.startswith("error: --for: invalid duration") and r.err.count("\n") == 1
    r = run("watch", "nosuchthings", "-n", lab_.ns, "--for", "1s")
    assert r.code == 1 and r.err.startswith("error: ") and r.err.count("\n") == 1, r.err
    r = run("watch", "-n", lab_.ns)
    assert r.code == 2
    r = run("watch", "widget/nosuch", "-n", lab_.ns, "--for", "1m")  # as kubectl get -w: the object must exist
    assert r.code == 1 and r.err.startswith("error: ") and "not found" in r.err and r.err.count("\n") == 1, r.err


def test_consecutive_scale_writes_are_attributed_although_the_scale_entry_has_no_time(lab_: Lab) -> None:
    lab_.apply("w", {"replicas": 1})
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "2")
    lab_.kubectl("scale", "widget/w", "--replicas=2")
    first = w.next_json()
    lab_.kubectl("scale", "widget/w", "--replicas=3")
    second = w.next_json()
    w.rest()
    assert w.finish() == 0, "".join(w.err)
    live = json.loads(lab_.kubectl("get", "widget/w", "-o", "json", "--show-managed-fields"))
    (scale_entry,) = [e for e in live["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert "time" not in scale_entry  # the server keeps no time for a /scale writer's entry
    for doc, old, new in ((first, 1, 2), (second, 2, 3)):
        assert (doc["old"], doc["new"], doc["ambiguous"], doc["time"]) == (old, new, None, None)
        assert writer(doc) == (scale_entry["manager"], "Update", "scale")
        assert doc["observed"].endswith("Z")


# --- 410 Gone: the version the watch resumes from was compacted ----------------------------------


def _etcd(cluster: lab.Cluster, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """etcd's JSON gateway, reached at the port the lab's API server uses."""
    import re
    import urllib.request

    assert cluster.state_dir is not None, "needs the lab's etcd"
    pid = lab.recorded_pids(cluster.state_dir)["apiserver"]
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    (url,) = [m.group(1) for a in cmdline if (m := re.match(r"--etcd-servers=(\S+)", a))]
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=BOUND) as resp:
        out = json.load(resp)
    assert isinstance(out, dict)
    return out


def _own_server(tmp_path_factory: pytest.TempPathFactory, name: str, extra_args: str) -> Iterator[lab.Cluster]:
    """A lab server of the test module's own (etcd and API server on free ports) with the Widget CRD."""
    built = os.environ.get(lab.PREBUILT_ENV) == "1" and all(p.is_file() for p in lab.lab_binaries().values())
    if os.environ.get("FIELDOWN_TEST_KUBECONFIG") and not built:
        # (with an external cluster and the lab built, FIELDOWN_LAB_PREBUILT=1 runs these too)
        pytest.skip("the lab is not built when FIELDOWN_TEST_KUBECONFIG selects an external cluster")
    prefix = lab.ensure_built()
    state = tmp_path_factory.mktemp(name)
    last: Exception | None = None
    for attempt in range(3):  # a free port can be taken between picking and binding
        api, etcd, peer = lab.free_ports(3)
        try:
            c = lab.start(state / str(attempt), api, etcd, peer, prefix=prefix,
                          extra_env={"EXTRA_ARGS": extra_args} if extra_args else None)
            break
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            last = e
    else:
        raise AssertionError(f"cannot start a lab server ({name}): {last}")
    try:
        crds = [crd for crd in lab.installed_crds() if crd["spec"]["names"]["kind"] == "Widget"]
        for crd in crds:
            c.apply_crd(crd)
        c.wait_for_discovery([crd["metadata"]["name"] for crd in crds])
        yield c
    finally:
        assert c.state_dir is not None
        lab.stop(c.state_dir)


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[lab.Cluster]:
    """A lab server of its own without the watch cache: a WATCH from a version etcd compacted gets
    410 Gone at once (with the cache, the cache's window decides, which only time and load move)."""
    yield from _own_server(tmp_path_factory, "uncached", "--watch-cache=false")


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[lab.Cluster]:
    """A lab server of its own with the watch cache (the default), to be restarted."""
    yield from _own_server(tmp_path_factory, "cached", "")


def test_a_410_lists_again_and_gives_each_real_change_once(uncached: lab.Cluster, namespace: str,
                                                           tmp_path: Path) -> None:
    cluster = uncached
    lab_ = Lab(cluster, namespace, tmp_path, [])
    from kubectl_fieldown.kube import ClusterClient, ClusterOptions
    from kubectl_fieldown.kube.watch import Event, Failed, Notice, Snapshot, TypeWatch, WatchItem
    from kubectl_fieldown.watch.tracker import Tracker

    for name in ("a", "b", "c"):
        lab_.apply(name, {"color": "red"})
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        res = client.discovery.resolve("widgets")
        meta: dict[str, Any] = {}
        items = [i for page in client.list_pages(res, lab_.ns, on_meta=meta.update) for i in page]
        tracker = Tracker()
        assert tracker.snapshot(0, items, relist=False) == []
        # while nobody watches: a changes, b goes, d comes, c stays as it was
        lab_.kubectl("patch", "widget/a", "--type=merge", "-p", '{"spec":{"color":"blue"}}')
        lab_.kubectl("delete", "widget/b")
        lab_.apply("d", {"color": "red"})
        revision = int(_etcd(cluster, "/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        _etcd(cluster, "/v3/kv/compaction", {"revision": revision, "physical": True})

        q: queue.Queue[WatchItem] = queue.Queue()
        stop = threading.Event()
        tw = TypeWatch(client, 0, res, lab_.ns, q, stop)
        tw.start(resume_from=meta["resourceVersion"])
        seen: list[WatchItem] = []
        while not any(isinstance(x, Snapshot) for x in seen):
            item = q.get(timeout=BOUND)
            assert not isinstance(item, Failed), item.error
            seen.append(item)
        notices = [x.text for x in seen if isinstance(x, Notice)]
        assert any("410 Gone" in n for n in notices), notices
        (snap,) = [x for x in seen if isinstance(x, Snapshot)]
        assert snap.relist
        got = sorted(((t.old or t.new).ref.name, t.old is not None, t.new is not None, t.coalesced)  # type: ignore[union-attr]
                     for t in tracker.snapshot(0, snap.items, snap.relist))
        assert got == [("a", True, True, True), ("b", True, False, True), ("d", False, True, True)]
        # the watch goes on from the relist: the next write is one transition, c's first
        lab_.kubectl("patch", "widget/c", "--type=merge", "-p", '{"spec":{"color":"green"}}')
        transitions = []
        while not transitions:
            item = q.get(timeout=BOUND)
            assert not isinstance(item, (Failed, Snapshot)), item
            if isinstance(item, Event):
                transitions += tracker.event(0, item.type, item.obj)
        (t,) = transitions
        assert t.old is not None and t.new is not None and t.new.ref.name == "c" and not t.coalesced
        assert (t.old.body["spec"], t.new.body["spec"]) == ({"color": "red"}, {"color": "green"})
        tw.close()
    finally:
        client.close()


def test_status_only_rewrites_are_listed_apart(lab_: Lab) -> None:
    lab_.apply("w", {"color": "red"})
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "10")
    for i in range(10):
        lab_.kubectl("patch", "widget/w", "--subresource=status", "--type=merge", "-p",
                     json.dumps({"status": {"replicas": i + 1}}), "--field-manager=status-writer")
        assert w.next_json()["path"] == ".status.replicas"
    (summary,) = [json.loads(x) for x in w.rest()]
    assert w.finish() == 0, "".join(w.err)
    (quiet,) = summary["quietWrites"]
    assert (quiet["object"]["name"], quiet["writes"], quiet["statusOnly"], quiet["ownershipOnly"]) == ("w", 10, 10, 0)
    assert quiet["writers"] == [{"manager": "status-writer", "operation": "Update", "subresource": "status"}]
    assert summary["fights"] == []


def test_an_ownership_only_write_is_a_write_without_a_change(lab_: Lab) -> None:
    manifest = lab_.tmp / "same.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": lab_.ns}, "spec": {"color": "red"}}))
    lab_.kubectl("apply", "--server-side", "--field-manager=first", "-f", str(manifest))
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "1")
    # a second applier of the same value: only managedFields change (it becomes a co-owner)
    lab_.kubectl("apply", "--server-side", "--field-manager=second", "-f", str(manifest))
    lab_.kubectl("patch", "widget/w", "--type=merge", "-p", '{"spec":{"color":"blue"}}', "--field-manager=ed")
    change = w.next_json()
    (summary,) = [json.loads(x) for x in w.rest()]
    assert w.finish() == 0, "".join(w.err)
    assert (change["path"], change["new"], writer(change)) == (".spec.color", "blue", ("ed", "Update", ""))
    assert (summary["writes"], summary["changes"]) == (2, 1)


def test_a_type_that_goes_away_ends_the_watch_with_its_summary_and_one_error(cluster: lab.Cluster, lab_: Lab) -> None:
    import copy
    import uuid

    (widget_crd,) = [c for c in lab.installed_crds() if c["spec"]["names"]["kind"] == "Widget"]
    crd = copy.deepcopy(widget_crd)
    plural = f"doomed{uuid.uuid4().hex[:6]}"
    crd["metadata"] = {"name": f"{plural}.example.com"}
    crd["spec"]["names"] = {"plural": plural, "singular": plural, "kind": plural.capitalize(),
                            "listKind": plural.capitalize() + "List"}
    cluster.apply_crd(crd)
    w = lab_.watch(f"{plural}.example.com", "-o", "json")
    cluster.kubectl("delete", "crd", f"{plural}.example.com")  # its watches end, the next one is refused
    lines = w.rest()
    code = w.finish()
    (summary,) = [json.loads(x) for x in lines]
    assert code == 1, "".join(w.err)
    assert summary["kind"] == "FieldownWatchSummary" and summary["failed"]
    errors = [x for x in w.err if x.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in "".join(w.err)
    assert summary["failed"] in errors[0]


def test_a_forced_applier_against_kubectl_scale_is_a_fight_the_manifest_ends(lab_: Lab) -> None:
    manifest = lab_.tmp / "argo.yaml"

    def sync(spec: dict[str, Any]) -> None:
        manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                            "metadata": {"name": "w", "namespace": lab_.ns}, "spec": spec}))
        lab_.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller",
                     "-f", str(manifest))

    sync({"replicas": 2, "color": "red"})
    w = lab_.watch("widget/w", "-o", "json", "--max-changes", "4")
    for step in range(4):
        if step % 2 == 0:
            lab_.kubectl("scale", "widget/w", "--replicas=6")
        else:
            sync({"replicas": 2, "color": "red"})
        w.next_json()
    docs = [json.loads(x) for x in w.rest()]
    assert w.finish() == 0, "".join(w.err)
    (fight,) = [d for d in docs if d["kind"] == "FieldownFight"]
    assert fight["remedy"]["commands"] == []
    assert "drop it from argocd-controller's manifest after the other writer's next write" in fight["remedy"]["text"]
    # followed: after the scaler's next write, the manifest without replicas leaves them alone
    lab_.kubectl("scale", "widget/w", "--replicas=6")
    sync({"color": "red"})
    assert json.loads(lab_.kubectl("get", "widget/w", "-o", "json"))["spec"]["replicas"] == 6


# --- the API server goes away and comes back ------------------------------------------------------


def _key(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What a reported change or object event says, whether seen as it happened or by a relist."""
    writers = tuple((w["manager"], w["operation"], w.get("subresource", "")) for w in doc["writers"])
    if doc["kind"] == "FieldownObject":
        return ("object", doc["object"]["name"], doc["event"], writers)
    assert doc["kind"] == "FieldownChange", doc
    return ("field", doc["object"]["name"], doc["path"], doc.get("old"), doc.get("new"), writers, doc["ambiguous"])


def _until(w: Watch, want: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The watch's documents until every one of ``want`` came (at least as many of each as wanted)."""
    docs: list[dict[str, Any]] = []
    missing = list(want)
    while missing:
        doc = w.next_json()
        docs.append(doc)
        if _key(doc) in missing:
            missing.remove(_key(doc))
    return docs


def _patch(lab_: Lab, name: str, spec: dict[str, Any], manager: str) -> None:
    lab_.kubectl("patch", f"widget/{name}", "--type=merge", "-p", json.dumps({"spec": spec}),
                 f"--field-manager={manager}")


@pytest.fixture(params=["watch-cache", "no-watch-cache"])
def restartable(request: pytest.FixtureRequest) -> lab.Cluster:
    """Both kinds of server: after a restart, the watch cache starts at etcd's current revision (a
    watch from an older version is too old: 410, relist), etcd itself still has the old revisions
    (the watch goes on from its version)."""
    c: lab.Cluster = request.getfixturevalue("cached" if request.param == "watch-cache" else "uncached")
    return c


def test_the_watch_survives_api_server_restarts_without_a_missed_or_duplicated_change(
        restartable: lab.Cluster, namespace: str, tmp_path: Path, watches: list[Watch]) -> None:
    """Writes before, between and after two restarts of the API server (etcd kept: resourceVersions
    go on): each change is reported exactly once, with its writer. Each write after a restart
    changes its own field (or creates or deletes an object), so that what the watch reports does not
    depend on whether it resumed from its version or had to list again (writes coalesced)."""
    cluster = restartable
    assert cluster.state_dir is not None
    lab_ = Lab(cluster, namespace, tmp_path, watches)
    for name in ("a", "b", "c"):
        lab_.apply(name, {"color": "red", "replicas": 1})
    w = lab_.watch("widgets", "-o", "json")
    csa = ("kubectl-client-side-apply", "Update", "")
    everything: list[dict[str, Any]] = []

    _patch(lab_, "a", {"color": "blue"}, "before")
    expected = [("field", "a", ".spec.color", "red", "blue", (("before", "Update", ""),), None)]
    everything += _until(w, expected)

    for cycle in (1, 2):
        err_before = len(w.err)
        lab.restart_apiserver(cluster.state_dir)
        # ready is not yet serving the CRD's objects (a 404 for a moment): wait until it does
        assert wait_until(lambda: cluster.kubectl("get", "widgets", "-n", namespace, check=False).returncode == 0,
                          BOUND)
        # after the restart: each write its own field, an object created, one deleted
        new = f"d{cycle}"
        _patch(lab_, "a", {"replicas": 1 + cycle}, f"after{cycle}-a")
        _patch(lab_, "b", {"color": f"green{cycle}"}, f"after{cycle}-b")
        lab_.apply(new, {"color": "red"})
        gone = "c" if cycle == 1 else "d1"
        lab_.kubectl("delete", f"widget/{gone}")
        # the last write: once it is reported, all before it were (one stream, in resourceVersion
        # order; or one relist, reported at once)
        _patch(lab_, "b", {"replicas": 10 + cycle}, f"after{cycle}-last")
        b_old = "red" if cycle == 1 else "green1"
        want = [
            ("field", "a", ".spec.replicas", cycle, cycle + 1, ((f"after{cycle}-a", "Update", ""),), None),
            ("field", "b", ".spec.color", b_old, f"green{cycle}", ((f"after{cycle}-b", "Update", ""),), None),
            ("object", new, "created", (csa,)),
            ("object", gone, "deleted", ()),
            ("field", "b", ".spec.replicas", 1 if cycle == 1 else 11, 10 + cycle,
             ((f"after{cycle}-last", "Update", ""),), None),
        ]
        docs = _until(w, want)
        everything += docs
        notes = "".join(w.err[err_before:])
        if any(d["coalesced"] for d in docs):  # seen by a relist: only after the server said 410
            assert "410 Gone" in notes, notes
        waits = [line for line in w.err[err_before:] if " again in " in line]
        if waits:  # the watch ran before the restart: its backoff starts afresh
            assert waits[0].rstrip().endswith("again in 0.5s"), notes
        print(f"restart {cycle}: {'relisted' if any(d['coalesced'] for d in docs) else 'resumed'}; {notes}")
        expected += want
    w.proc.send_signal(signal.SIGINT)
    rest = [json.loads(x) for x in w.rest()]
    assert w.finish() == 130, "".join(w.err)
    (summary,) = rest
    assert summary["kind"] == "FieldownWatchSummary" and summary["failed"] is None
    # exactly once: nothing beyond what was written, nothing twice
    got = sorted(map(repr, map(_key, everything)))
    assert got == sorted(map(repr, expected)), "".join(w.err)
    assert (summary["changes"], summary["created"], summary["deleted"]) == (7, 2, 2)
    assert "Traceback" not in "".join(w.err)


class Gate:
    """A TCP forwarder to the API server that the test can shut: shut, it cuts every connection
    and closes each new one at once (counted in ``refused``), as a server that went away; open,
    it forwards again. The watch goes through it, the writers do not."""

    def __init__(self, server: str) -> None:
        import socket
        from urllib.parse import urlsplit

        u = urlsplit(server)
        self.target = (u.hostname or "127.0.0.1", u.port or 443)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.open = True
        self.refused = 0
        self.conns: list[Any] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def kubeconfig(self, source: Path, dest: Path) -> Path:
        doc = yaml.safe_load(source.read_text())
        for c in doc["clusters"]:
            c["cluster"]["server"] = f"https://127.0.0.1:{self.port}"  # the server's certificate names 127.0.0.1
        dest.write_text(yaml.safe_dump(doc))
        return dest

    def _accept(self) -> None:
        import socket

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if not self.open:
                    self.refused += 1
                    conn.close()
                    continue
                try:
                    up = socket.create_connection(self.target, timeout=BOUND)
                except OSError:
                    conn.close()
                    continue
                up.settimeout(None)
                self.conns += [conn, up]
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: Any, dst: Any) -> None:
        import contextlib
        import socket

        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s_ in (src, dst):
            with contextlib.suppress(OSError):
                s_.shutdown(socket.SHUT_RDWR)

    def shut(self) -> None:
        import contextlib
        import socket

        with self.lock:
            self.open = False
            for c in self.conns:
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
            self.conns = []

    def reopen(self) -> None:
        with self.lock:
            self.open = True

    def close(self) -> None:
        self.shut()
        self.sock.close()


def test_a_410_after_the_server_was_away_reports_each_change_once(uncached: lab.Cluster, namespace: str,
                                                                   tmp_path: Path, watches: list[Watch]) -> None:
    """The running watch loses its server; meanwhile objects are written (one twice), created,
    deleted, written back to the value it had, and etcd is compacted; when the server is back, the
    watch's version is gone (410): it lists again and reports each real change once, marked as seen
    by a relist (several writes as one), then goes on watching from the list."""
    cluster = uncached
    lab_ = Lab(cluster, namespace, tmp_path, watches)
    for name in ("a", "b", "c", "e"):
        lab_.apply(name, {"color": "red", "replicas": 1})
    gate = Gate(cluster.server)
    try:
        kubeconfig = gate.kubeconfig(cluster.kubeconfig, tmp_path / "gated.kubeconfig")
        w = Watch(cluster, "widgets", "-o", "json", "-n", namespace, "--kubeconfig", str(kubeconfig))
        watches.append(w)
        w.wait_ready()
        _patch(lab_, "a", {"color": "blue"}, "before")
        assert _key(w.next_json()) == ("field", "a", ".spec.color", "red", "blue", (("before", "Update", ""),), None)

        gate.shut()  # the watch's stream is cut; what follows it cannot see as it happens
        assert wait_until(lambda: gate.refused >= 1, BOUND)  # it tried again and found no server
        _patch(lab_, "a", {"replicas": 2}, "m1")
        _patch(lab_, "a", {"replicas": 3}, "m2")  # m2 takes replicas from m1: one change 1 → 3, by m2
        lab_.kubectl("delete", "widget/b")
        lab_.apply("d", {"color": "red"})
        _patch(lab_, "e", {"color": "green"}, "flipper")
        _patch(lab_, "e", {"color": "red"}, "flipper")  # back as it was: a write without a change
        revision = int(_etcd(cluster, "/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        _etcd(cluster, "/v3/kv/compaction", {"revision": revision, "physical": True})
        gate.reopen()

        relisted = _until(w, [("field", "a", ".spec.replicas", 1, 3, (("m2", "Update", ""),), None),
                              ("object", "b", "deleted", ()),
                              ("object", "d", "created", (CSA,))])
        assert all(d["coalesced"] for d in relisted), relisted
        # the watch goes on from the list: the next write is seen as it happens, once
        _patch(lab_, "c", {"color": "white"}, "after")
        (later,) = _until(w, [("field", "c", ".spec.color", "red", "white", (("after", "Update", ""),), None)])
        assert later["coalesced"] is False
        w.proc.send_signal(signal.SIGINT)
        (summary,) = [json.loads(x) for x in w.rest()]
        assert w.finish() == 130
    finally:
        gate.close()
    notes = "".join(w.err)
    assert "410 Gone" in notes and "watch interrupted" in notes and "Traceback" not in notes, notes
    assert len(relisted) == 3  # nothing else: not c, not e (its value did not change), nothing twice
    # a's write before, the relist's three (e's included: a write without a change), c's after
    assert (summary["changes"], summary["writes"], summary["created"], summary["deleted"]) == (3, 4, 1, 1)
