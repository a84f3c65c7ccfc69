"""The write executor's retry policy against the real API server (kube/writes.py ``execute``).

Another writer changes the object between the tool's read and its patch: the test wraps the
client so that, before the chosen patches, a real write (a merge patch by manager ``other``) goes
to the lab server first. The server's own answers — the bare 422 of a failed JSON-patch ``test``
op, a real validation 422 — drive the executor; nothing stands in for them. Deterministic: the
interference happens at exact points, not by timing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
from engine.conformance_cases import CASES, load, rules_for

from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.kube import ClusterClient, ClusterOptions, ResourceInfo
from kubectl_fieldown.kube.writes import BackupRun, ObjectTarget, Result, WriteOptions, execute, load_backup
from kubectl_fieldown.ownership.managedfields import decode_entries
from kubectl_fieldown.remedies.plans import plan_strip_last_applied, plan_to_server_side
from kubectl_fieldown.remedies.requests import ApplyRequest, JsonPatchRequest, requests_for
from kubectl_fieldown.remedies.writeplan import WritePlan

LA = "kubectl.kubernetes.io/last-applied-configuration"


class Interfering:
    """The real client; before the patches numbered in ``before`` (0-based), another writer's real
    merge patch changes the object's labels on the server."""

    def __init__(self, client: ClusterClient, before: set[int]) -> None:
        self._client = client
        self.before = before
        self.patches = 0
        self.interfered = 0
        self.server = client.server
        self.context = client.context

    def get(self, *a: Any, **kw: Any) -> dict[str, Any]:
        return self._client.get(*a, **kw)

    def patch(self, res: ResourceInfo, name: str, namespace: str | None, body: Any, patch_type: str = "apply",
              **kw: Any) -> dict[str, Any]:
        n = self.patches
        self.patches += 1
        if n in self.before and not kw.get("dry_run"):
            self._client.patch(res, name, namespace, {"metadata": {"labels": {"other": str(n)}}}, "merge",
                               field_manager="other")
            self.interfered += 1
        return self._client.patch(res, name, namespace, body, patch_type, **kw)


@pytest.fixture
def client(cluster: lab.Cluster) -> Iterator[ClusterClient]:
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        yield c


@pytest.fixture
def widgets(client: ClusterClient) -> ResourceInfo:
    from kubectl_fieldown.kube.discovery import Discovery

    return Discovery(client).resolve("widgets")


def created(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    """A Widget applied client-side by the real kubectl (the annotation and its Update entry)."""
    manifest = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": namespace},
                "spec": {"color": "blue", "replicas": 3}}
    f = tmp_path / "w.json"
    f.write_text(json.dumps(manifest))
    cluster.kubectl("apply", "-f", str(f))


def strip_replicas(obj: dict[str, Any]) -> WritePlan:
    m = plan_strip_last_applied(obj, [parse_path(".spec.replicas")])
    return WritePlan(m, requests_for(m))


def no_sleep(_: float) -> None:
    pass


def test_a_write_between_read_and_patch_is_read_planned_and_written_again(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    created(cluster, namespace, tmp_path)
    c = Interfering(client, {0})
    target = ObjectTarget(widgets, "w", namespace)
    out = execute(c, target, strip_replicas, WriteOptions(sleep=no_sleep),  # type: ignore[arg-type]
                  BackupRun(tmp_path / "b", "strip-last-applied"))
    assert c.interfered == 1
    assert out.result is Result.changed and out.retries == 1 and out.patches_sent == 1
    obj = client.get(widgets, "w", namespace)
    assert obj["metadata"]["labels"] == {"other": "0"}  # the other writer's change is kept
    assert "replicas" not in json.loads(obj["metadata"]["annotations"][LA])["spec"]
    owners = {e.manager: e for e in decode_entries(obj["metadata"]["managedFields"])}
    assert owners["other"].fields.has(parse_path(".metadata.labels.other"))
    assert not owners["kubectl-client-side-apply"].fields.has(parse_path(".spec.replicas"))
    # the backup is the state the tool's write started from (read again after the other writer, before
    # anything was sent): undo then restores around nothing of the other writer's
    assert out.backup is not None
    assert load_backup(out.backup).object["metadata"]["labels"] == {"other": "0"}


def test_an_object_that_keeps_changing_is_given_up_after_max_retries(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    created(cluster, namespace, tmp_path)
    before = client.get(widgets, "w", namespace)
    c = Interfering(client, set(range(100)))
    sleeps: list[float] = []
    out = execute(c, ObjectTarget(widgets, "w", namespace), strip_replicas,  # type: ignore[arg-type]
                  WriteOptions(max_retries=3, sleep=sleeps.append), None)
    assert out.result is Result.failed and out.retries == 3 and c.interfered == 4
    assert "kept changing while being written; gave up after 3 retries" in (out.error or "")
    assert len(sleeps) == 2  # the first retry has the fresh read in hand and does not wait
    after = client.get(widgets, "w", namespace)
    assert after["metadata"]["annotations"][LA] == before["metadata"]["annotations"][LA]  # nothing of ours landed


def test_a_real_422_is_no_retry(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    """A patch the server rejects for what it says (not a failed ``test`` op) fails at once."""
    created(cluster, namespace, tmp_path)

    def invalid_plan(obj: dict[str, Any]) -> WritePlan:
        wp = strip_replicas(obj)
        (req,) = wp.requests
        assert isinstance(req, JsonPatchRequest)
        bad = req.replace(ops=(*req.ops, {"op": "replace", "path": "/spec/replicas", "value": "three"}))
        return WritePlan(wp.migration, [bad])

    out = execute(client, ObjectTarget(widgets, "w", namespace), invalid_plan, WriteOptions(sleep=no_sleep), None)
    assert out.result is Result.failed and out.retries == 0
    assert 'rejected as invalid: spec.replicas' in (out.error or ""), out.error


def test_server_dry_run_writes_nothing_and_client_dry_run_sends_nothing(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    created(cluster, namespace, tmp_path)
    before = client.get(widgets, "w", namespace)
    c = Interfering(client, set())
    target = ObjectTarget(widgets, "w", namespace)
    out = execute(c, target, strip_replicas, WriteOptions(dry_run="client"), BackupRun(tmp_path / "b", "x"))  # type: ignore[arg-type]
    assert out.result is Result.changed and c.patches == 0 and out.backup is None
    assert out.patches[0][0]["value"] == before["metadata"]["resourceVersion"]
    assert not (tmp_path / "b").exists()
    out = execute(c, target, strip_replicas, WriteOptions(dry_run="server"), None)  # type: ignore[arg-type]
    assert out.result is Result.changed and c.patches == 1
    assert client.get(widgets, "w", namespace)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_done_work_is_unchanged_and_a_recreated_object_is_not_written(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    created(cluster, namespace, tmp_path)
    target = ObjectTarget(widgets, "w", namespace)
    assert execute(client, target, strip_replicas, WriteOptions(sleep=no_sleep), None).result is Result.changed
    assert execute(client, target, strip_replicas, WriteOptions(sleep=no_sleep), None).result is Result.unchanged

    # deleted and created again between the read and the write: the uid differs on the re-read
    cluster.kubectl("delete", "widgets", "w", "-n", namespace)
    created(cluster, namespace, tmp_path)

    class Recreating(Interfering):
        def patch(self, res: ResourceInfo, name: str, namespace: str | None, body: Any,
                  patch_type: str = "apply", **kw: Any) -> dict[str, Any]:
            if self.patches == 0:
                cluster.kubectl("delete", "widgets", name, "-n", str(namespace))
                created(cluster, str(namespace), tmp_path)
            self.patches += 1
            return self._client.patch(res, name, namespace, body, patch_type, **kw)

    c = Recreating(client, set())
    out = execute(c, target, strip_replicas, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert c.patches == 1
    assert out.result is Result.failed and "deleted and created again" in (out.error or ""), out
    assert "replicas" in json.loads(client.get(widgets, "w", namespace)["metadata"]["annotations"][LA])["spec"]


def test_an_apply_with_a_stale_resource_version_gets_the_servers_409_and_is_retried(
        cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str, tmp_path: Path) -> None:
    """migrate --to server-side writes the annotation by a server-side apply carrying the
    resourceVersion it planned on: another write in between makes the server answer 409."""
    created(cluster, namespace, tmp_path)
    rules = rules_for(load(CASES / "cur-hpa-handover.json"))

    def to_server_side(obj: dict[str, Any]) -> WritePlan:
        m = plan_to_server_side(obj, rules.root)
        return WritePlan(m, requests_for(m))

    first = to_server_side(client.get(widgets, "w", namespace))
    assert isinstance(first.requests[0], ApplyRequest)  # the path this test is about
    c = Interfering(client, {0})
    out = execute(c, ObjectTarget(widgets, "w", namespace), to_server_side, WriteOptions(sleep=no_sleep), None)  # type: ignore[arg-type]
    assert c.interfered == 1
    assert out.result is Result.changed and out.retries == 1, out
    obj = client.get(widgets, "w", namespace)
    assert obj["metadata"]["labels"] == {"other": "0"}
    assert {(e.manager, e.operation) for e in decode_entries(obj["metadata"]["managedFields"])} >= {
        ("kubectl", "Apply"), ("other", "Update")}
