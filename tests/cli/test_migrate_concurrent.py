"""Bulk migrate, strip-last-applied and reset over 200 objects while another writer patches them.

200 Widgets are created by one client-side ``kubectl apply``. A background thread merge-patches an
annotation of random objects in a loop (manager ``writer``), recording every successful write.
Meanwhile ``migrate --to server-side -n NS`` runs over the whole namespace (again, as its message
says, for objects that kept changing more often than its retries allow — how often depends on the
machine's load; then once more, which must change nothing), then ``strip-last-applied`` on one
label-selected subset, then ``reset --to-manager`` on another. At the end no write of either side
is lost — every object carries the writer's last value, and the writer's ownership of it survived
every managedFields rewrite — and every object is in the state the native path gives (checked with
the real kubectl).

The figures (objects, retries, wall times, writer's writes) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.cli.main import main
from kubectl_fieldown.fieldpath import decode_fields_v1, parse_path, path_from_fields
from kubectl_fieldown.kube import ClusterClient, ClusterOptions

N = 200
GROUPS = {"a": range(0, 100), "b": range(100, 150), "c": range(150, 200)}
ANNOTATION = "writer.example.com/counter"
LA = "kubectl.kubernetes.io/last-applied-configuration"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


GAVE_UP = "the object kept changing while being written; gave up after 5 retries (run the command again)"


def run_until_done(*args: str) -> dict[str, int]:
    """Run a bulk write as its own message says to: an object that kept changing under the writer
    more often than the retries allow (which depends on how loaded the machine is) fails with
    GAVE_UP and exit 1, and running the command again finishes it. Any other failure fails the
    test. Returns the summary over the runs (``rounds``: how many runs it took)."""
    total = {"changed": 0, "failed": 0, "retries": 0, "rounds": 0}
    for _ in range(10):
        code, out, err = run(*args, "-o", "json")
        doc = json.loads(out) if out.strip() else {}
        summary = doc.get("summary") or {}
        total["rounds"] += 1
        total["changed"] += summary.get("changed", 0)
        total["retries"] += summary.get("retries", 0)
        failures = [i.get("error") for i in doc.get("items", []) if i.get("result") == "failed"]
        assert all(f == GAVE_UP for f in failures), failures
        assert code == (1 if failures else 0), err + out
        if not failures:
            return total
        total["failed"] += len(failures)
    raise AssertionError(f"{args}: objects still changing after 10 runs")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: lab.Cluster) -> Iterator[None]:
    monkeypatch.delenv("FIELDOWN_DEBUG", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    yield


def annotation_path(key: str) -> tuple[Any, ...]:
    # annotation keys have dots, which a path string would split
    return path_from_fields("metadata", "annotations", key)


def group_of(i: int) -> str:
    return next(g for g, r in GROUPS.items() if i in r)


def manifest(i: int, namespace: str, replicas: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"color": "blue", "args": [f"--id={i}"]}
    if replicas:
        spec["replicas"] = 1
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": f"w{i:03d}", "namespace": namespace, "labels": {"group": group_of(i)}},
            "spec": spec}


def write_manifests(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(docs))
    return path


class Writer(threading.Thread):
    """Merge-patches ANNOTATION of random objects until stopped; remembers every successful write."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        super().__init__(daemon=True)
        self.client = ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig)))
        self.widgets = self.client.discovery.resolve("widgets")
        self.namespace = namespace
        self.stop = threading.Event()
        self.last: dict[str, int] = {}
        self.writes = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.counter = 0

    def write(self, name: str) -> None:
        """One write of the annotation (from the loop, or forced just before one of the tool's
        patches)."""
        with self.lock:
            self.counter += 1
            counter = self.counter
        body = {"metadata": {"annotations": {ANNOTATION: str(counter)}}}
        try:
            self.client.patch(self.widgets, name, self.namespace, body, "merge", field_manager="writer")
        except Exception as e:  # recorded, and the test fails on it: the writer must never fail
            self.errors.append(f"{name}: {e}")
            return
        with self.lock:
            if counter > self.last.get(name, 0):
                self.last[name] = counter
            self.writes += 1

    def run(self) -> None:
        rnd = random.Random(99003)
        try:
            while not self.stop.is_set():
                self.write(f"w{rnd.randrange(N):03d}")
        finally:
            self.client.close()


#: the tool's patches (counted over the test) before which the writer is made to write the same
#: object: whatever the machine's speed, these collide, and the server's answer must make the tool retry
FORCED = frozenset({0, 40, 80, 160})


def force_collisions(monkeypatch: pytest.MonkeyPatch, writer: Writer) -> dict[str, int]:
    from kubectl_fieldown.kube import writes

    seen = {"sends": 0, "forced": 0}
    send = writes._send

    def colliding(client: Any, target: Any, req: Any, tested: str, **kw: Any) -> dict[str, Any]:
        if not kw.get("dry_run"):
            if seen["sends"] in FORCED:
                writer.write(target.name)
                seen["forced"] += 1
            seen["sends"] += 1
        return send(client, target, req, tested, **kw)

    monkeypatch.setattr(writes, "_send", colliding)
    return seen


def owners(obj: dict[str, Any], path: str | tuple[Any, ...]) -> set[str]:
    p = parse_path(path) if isinstance(path, str) else path
    return {e["manager"] for e in obj["metadata"].get("managedFields") or [] if decode_fields_v1(e["fieldsV1"]).has(p)}


def test_bulk_rewrites_race_a_writer_and_lose_nothing(cluster: lab.Cluster, namespace: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ns = namespace
    t0 = time.monotonic()
    cluster.kubectl("apply", "-f", str(write_manifests(tmp_path / "all.yaml", [manifest(i, ns) for i in range(N)])))
    t_create = time.monotonic() - t0

    writer = Writer(cluster.kubeconfig, ns)
    forced = force_collisions(monkeypatch, writer)
    writer.start()
    figures: dict[str, Any] = {"objects": N, "create_s": round(t_create, 1)}
    try:
        time.sleep(0.3)  # the writer is under way before the first LIST

        t = time.monotonic()
        done = run_until_done("migrate", "--to", "server-side", "--all", "-n", ns)
        figures["migrate_s"] = round(time.monotonic() - t, 1)
        assert done["changed"] == N, done
        figures["migrate"] = done
        # the 200 objects take at least 200 patches: the collisions forced before patches 0, 40, 80
        # and 160 happened, and each made the server refuse the tool's guarded write once
        assert forced["forced"] == len(FORCED) and done["retries"] >= len(FORCED), (forced, done)

        t = time.monotonic()
        code, out, err = run("migrate", "--to", "server-side", "--all", "-n", ns, "-o", "json")
        figures["migrate_again_s"] = round(time.monotonic() - t, 1)
        assert code == 0, err
        again = json.loads(out)["summary"]
        assert again == {"changed": 0, "unchanged": N, "failed": 0, "retries": 0, "maybeWritten": 0}, again

        t = time.monotonic()
        done = run_until_done("strip-last-applied", "widgets", "-n", ns, "-l", "group=b", "--field", ".spec.replicas")
        figures["strip_s"] = round(time.monotonic() - t, 1)
        assert done["changed"] == len(GROUPS["b"]), done
        figures["strip"] = done

        t = time.monotonic()
        # owner takes the writer's annotation too, so owner's next apply (of the manifest the objects record)
        # would delete it: without --allow-value-changes the tool refuses, which is checked elsewhere
        done = run_until_done("reset", "widgets", "-n", ns, "-l", "group=c", "--to-manager", "owner",
                              "--allow-value-changes")
        figures["reset_s"] = round(time.monotonic() - t, 1)
        # a second run also takes again what the writer wrote since the first one
        assert done["changed"] == len(GROUPS["c"]) if done["rounds"] == 1 else done["changed"] >= len(GROUPS["c"]), done
        figures["reset"] = done
        time.sleep(0.3)  # and the writer goes on after the last rewrite
    finally:
        writer.stop.set()
        writer.join(timeout=30)
    figures["writer_writes"] = writer.writes
    figures["objects_written_by_writer"] = len(writer.last)
    print(f"\n[concurrent] {json.dumps(figures)}")
    assert not writer.errors, writer.errors[:5]
    assert writer.writes > N, "the writer must really race the rewrites"

    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        widgets = client.discovery.resolve("widgets")
        live = {o["metadata"]["name"]: o for o in client.list(widgets, ns)}
    finally:
        client.close()
    assert len(live) == N

    # no lost write: the writer's last value is there, and so is its ownership of it (group c: or the
    # manager the reset gave every field to, when the reset came after the writer's last write)
    for name, value in writer.last.items():
        obj = live[name]
        assert obj["metadata"]["annotations"][ANNOTATION] == str(value), name
        who = owners(obj, annotation_path(ANNOTATION))
        assert who == {"writer"} or (group_of(int(name[1:])) == "c" and who == {"owner"}), (name, who)

    for name, obj in live.items():
        i = int(name[1:])
        managers = {(e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"]}
        writer_entry = {("writer", "Update")} if name in writer.last else set()
        if group_of(i) in "ab":
            # what kubectl apply --server-side leaves: the applier, the annotation's co-owner, the writer
            assert managers - writer_entry == {("kubectl", "Apply"), ("kubectl-last-applied", "Apply")}, name
            la = json.loads(obj["metadata"]["annotations"][LA])
            assert ("replicas" in la["spec"]) == (group_of(i) == "a"), name
        else:
            assert managers - {("writer", "Update")} == {("owner", "Apply")}, (name, managers)
            for path in (".spec.color", ".spec.replicas", ".spec.args", ".metadata.labels.group"):
                assert owners(obj, path) == {"owner"}, (name, path)

    # the native path: kubectl apply --server-side of the original manifests (group a) conflicts with
    # nobody and changes nothing, not even managedFields
    a_file = write_manifests(tmp_path / "a.yaml", [manifest(i, ns) for i in GROUPS["a"]])
    cluster.kubectl("apply", "--server-side", "-f", str(a_file))
    # stripped objects: a plain kubectl apply of the manifests without replicas leaves replicas alone
    b_file = write_manifests(tmp_path / "b.yaml", [manifest(i, ns, replicas=False) for i in GROUPS["b"]])
    cluster.kubectl("apply", "-f", str(b_file))
    # group c: as if "owner" had applied the whole object: applying everything it owns, with the values
    # there, conflicts with nobody and changes nothing
    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        widgets = client.discovery.resolve("widgets")
        for i in GROUPS["c"]:
            obj = live[f"w{i:03d}"]
            md = obj["metadata"]
            mine = {k: v for k, v in md["annotations"].items() if "owner" in owners(obj, annotation_path(k))}
            body = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                    "metadata": {"name": md["name"], "namespace": ns, "labels": md["labels"], "annotations": mine},
                    "spec": obj["spec"]}
            out = client.patch(widgets, md["name"], ns, body, "apply", field_manager="owner", force=False)
            assert out["metadata"]["resourceVersion"] == md["resourceVersion"], md["name"]
    finally:
        client.close()

    client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        after = {o["metadata"]["name"]: o for o in client.list(client.discovery.resolve("widgets"), ns)}
    finally:
        client.close()
    for name, obj in after.items():
        i = int(name[1:])
        assert obj["spec"]["replicas"] == 1 and obj["spec"]["color"] == "blue", name
        if group_of(i) == "a":
            assert obj["metadata"]["resourceVersion"] == live[name]["metadata"]["resourceVersion"], name
        if name in writer.last:
            assert obj["metadata"]["annotations"][ANNOTATION] == str(writer.last[name]), name
