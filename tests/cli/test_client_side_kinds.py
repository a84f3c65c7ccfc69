"""``conflicts`` and ``audit --applier kubectl-client-side`` on the built-in kinds that have no
recorded server case (StatefulSet, DaemonSet, Job, CronJob, Ingress; issue 20): the object is
created as kubectl creates it (the tool's own prediction of ``kubectl apply``), another writer adds
an env var, and the next manifest drops a label and an env var. The tool's predicted patch and the
object it leaves are compared with apimachinery's own ``strategicpatch`` (the Go oracle of
tests/appliers/test_strategic_upstream.py), and ``audit`` with the same manifest names the same
deletions."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import upstream_oracle
import yaml
from cli_helpers import run

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.appliers.run import client_side_modified
from kubectl_fieldown.audit import AuditContext, audit_object, object_key
from kubectl_fieldown.base.value import go_json
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.ownership.managedfields import LAST_APPLIED_ANNOTATION
from kubectl_fieldown.schema.builtin import builtin_kinds
from kubectl_fieldown.schema.gotypes import normalizer_for
from kubectl_fieldown.schema.types import GroupVersionKind

SOURCE = Path(__file__).resolve().parents[2] / "hack" / "upstream-smp" / "main.go"
POD = {"containers": [{"name": "main", "image": "app:1", "env": [{"name": "A", "value": "1"},
                                                               {"name": "B", "value": "2"}]}]}
ENV = ("spec", "containers")


def _manifest(kind: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A manifest of ``kind`` and where its pod spec is."""
    md = {"name": "x", "namespace": "shop", "labels": {"app": "x", "tier": "t"}}
    tpl = {"metadata": {"labels": {"app": "x"}}, "spec": copy.deepcopy(POD)}
    if kind in ("StatefulSet", "DaemonSet"):
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "x"}}, "template": tpl}
        if kind == "StatefulSet":
            spec["serviceName"] = "x"
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": md, "spec": spec}, ("spec", "template", "spec")
    if kind == "Job":
        tpl["spec"]["restartPolicy"] = "Never"
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": md, "spec": {"template": tpl}}, \
            ("spec", "template", "spec")
    if kind == "CronJob":
        tpl["spec"]["restartPolicy"] = "Never"
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": md,
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": tpl}}}}, \
            ("spec", "jobTemplate", "spec", "template", "spec")
    assert kind == "Ingress"
    rule = {"host": "a.example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "a", "port": {"number": 80}}}},
        {"path": "/b", "pathType": "Prefix", "backend": {"service": {"name": "b", "port": {"number": 80}}}}]}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": kind, "metadata": md,
            "spec": {"ingressClassName": "nginx", "rules": [rule]}}, ()


def _at(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


@pytest.fixture(scope="module")
def oracle() -> Iterator[upstream_oracle.UpstreamOracle]:
    o = upstream_oracle.UpstreamOracle(upstream_oracle.build(source=SOURCE))
    yield o
    o.close()


def _created(tmp: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    (tmp / "first.yaml").write_text(yaml.safe_dump(manifest))
    (tmp / "nothing.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": "unrelated", "namespace": "shop"}}))
    r = run("conflicts", "-f", str(tmp / "first.yaml"), "--live", str(tmp / "nothing.yaml"),
            "--applier", "kubectl-client-side", "-o", "json")
    (item,) = r.json()["items"]
    assert [q["verb"] for q in item["requests"]] == ["create"], item["requests"]
    obj: dict[str, Any] = item["result"]["object"]
    assert LAST_APPLIED_ANNOTATION in obj["metadata"]["annotations"]
    return obj


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet", "Job", "CronJob", "Ingress"])
def test_the_next_client_side_apply_matches_apimachinery(tmp_path: Path, kind: str,
                                                         oracle: upstream_oracle.UpstreamOracle) -> None:
    first, pod = _manifest(kind)
    live = _created(tmp_path, first)
    nxt = copy.deepcopy(first)
    del nxt["metadata"]["labels"]["tier"]
    deleted = [".metadata.labels.tier"]
    if pod:
        # another writer added an env var (kept: the annotation never had it); the manifest drops B
        _at(live, pod)["containers"][0]["env"].append({"name": "INJECTED", "value": "1"})
        _at(nxt, pod)["containers"][0]["env"] = [{"name": "A", "value": "1"}]
        deleted.append("." + ".".join(pod) + '.containers[name="main"].env[name="B"]')
    else:
        nxt["spec"]["rules"][0]["http"]["paths"].pop()  # an atomic list: replaced whole
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    (tmp_path / "next.yaml").write_text(yaml.safe_dump(nxt))
    r = run("conflicts", "-f", str(tmp_path / "next.yaml"), "--live", str(tmp_path / "live.yaml"),
            "--applier", "kubectl-client-side", "-o", "json")
    assert r.code in (0, 1), r.err
    (item,) = r.json()["items"]
    assert [q["verb"] for q in item["requests"]] == ["strategic-patch"]
    assert item["conflicts"] == []
    got = item["result"]["object"]

    # apimachinery: kubectl's three-way patch and the server's application of it
    original = live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
    _, modified = client_side_modified(nxt)
    want = oracle.ask({"op": "three-way", "kind": kind, "original": original, "modified": go_json(modified),
                       "current": go_json(live)})
    assert "patch" in want, want
    server = oracle.ask({"op": "apply", "kind": kind, "object": go_json(live), "patch": go_json(want["patch"])})
    assert "object" in server, server
    expect = json.loads(go_json(server["object"]))
    for part in ("spec",):
        assert got[part] == expect[part], part
    assert got["metadata"]["labels"] == expect["metadata"]["labels"] == {"app": "x"}
    assert got["metadata"]["annotations"] == expect["metadata"]["annotations"]
    if pod:
        assert [e["name"] for e in _at(got, pod)["containers"][0]["env"]] == ["A", "INJECTED"]
    else:
        assert len(got["spec"]["rules"][0]["http"]["paths"]) == 1
    assert sorted(item["deleted"]) == sorted(deleted) if pod else ".metadata.labels.tier" in item["deleted"]

    # audit with the same manifest: the same next apply, no conflict, the same deletions asked
    gvk = GroupVersionKind.from_api_version(first["apiVersion"], kind)
    ks = builtin_kinds().lookup(gvk)
    assert ks is not None
    rules = ResourceRules.for_kind(ks, True, normalizer_for(first["apiVersion"], kind), custom_resource=False)
    ctx = AuditContext(applier=Applier.of("kubectl-client-side"), manifests={object_key(nxt): nxt},
                       rules_for=lambda a, k: rules if (a, k) == (first["apiVersion"], kind) else None,
                       now="2026-11-29T04:00:00Z")
    found = audit_object(live, ctx)
    assert not [f for f in found if f.id in ("predicted-conflict", "values-at-risk")], [f.message for f in found]
    assert not [f for f in found if f.id in ("superseded-deletions", "inferred-deletions", "dropped-fields-stay")]
    (fix,) = {f.fix for f in found}
    assert fix is not None and fix.verified and fix.command is None, fix
    assert "nothing to run: kubectl apply (client-side) keeps every value on its own" in fix.notes
    # the injected env var (written without a record) is the only field the manifest does not set
    assert [p for p, _ in fix.unclaimed] == (
        ["." + ".".join(pod) + '.containers[name="main"].env[name="INJECTED"]'] if pod else []), fix.unclaimed
