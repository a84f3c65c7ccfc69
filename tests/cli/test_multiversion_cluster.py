"""Issue 17, class 4: a custom resource served at two versions (Multi: v1 and v2, conversion None),
on the lab server, through the command line.

* Helm 3 wrote the object at v1 (install) and at v2 (an upgrade): two ``helm`` Update entries.
  Helm 4's csaupgrade (client-go ``UpgradeManagedFields``) turns the oldest into its Apply entry,
  merges only Update entries of that entry's apiVersion, and drops every other ``helm`` Update
  entry: the fields only the v2 entry owned are left with no owner, and the upgrade never prunes
  them. ``conflicts --applier helm`` must say so; ``migrate --for helm`` moves both entries'
  fields, after which the upgrade prunes what the chart dropped.
* ``handover`` plans and writes at the version the applier applies at.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import lab
import pytest
from appliers.replay import Wire, csaupgrade_patch
from cli_helpers import Result
from engine.scenarios import APPLY_CT, JSON_PATCH_CT, MERGE_CT

V1, V2 = "example.com/v1", "example.com/v2"


@pytest.fixture
def env(cluster: lab.Cluster, tmp_path: Path) -> dict[str, str]:
    e = cluster.env()
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        e.pop(var, None)
    e["FIELDOWN_CACHE_DIR"] = str(tmp_path / "cache")
    return e


def cli(env: dict[str, str], *args: str) -> Result:
    import subprocess

    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def path(version: str, ns: str, name: str | None = None) -> str:
    return f"/apis/{version}/namespaces/{ns}/multis" + (f"/{name}" if name else "")


def body(version: str, ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": version, "kind": "Multi", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def ok(resp: Any) -> Any:
    assert 200 <= resp.status < 300, (resp.status, resp.body)
    return resp.body


def owners_of(obj: dict[str, Any], key: str) -> list[tuple[str, str, str]]:
    """The entries whose fieldsV1 mention ``key`` anywhere."""
    return [(e["manager"], e["operation"], e["apiVersion"]) for e in obj["metadata"].get("managedFields") or []
            if key in json.dumps(e.get("fieldsV1"))]


C_A = {"name": "a", "image": "a:1"}
C_B = {"name": "b", "image": "b:1"}
B_KEY = 'k:{\\"name\\":\\"b\\"}'


def helm3_at_two_versions(wire: Wire, ns: str, name: str) -> None:
    """Helm 3: install (POST) at v1, upgrade (JSON merge patch) at v2 adding container b."""
    ok(wire.send("POST", path(V1, ns), body(V1, ns, name, {"containers": [C_A], "color": "red"}),
                 query=[("fieldManager", "helm")]))
    ok(wire.send("PATCH", path(V2, ns, name), {"spec": {"containers": [C_A, C_B]}}, MERGE_CT,
                 query=[("fieldManager", "helm")]))


def helm4_upgrade(wire: Wire, ns: str, name: str, chart: dict[str, Any]) -> dict[str, Any]:
    """Helm 4's server-side upgrade as it is sent (tests/appliers/replay.py): client-go's csaupgrade
    of its ``helm`` Update entries as a JSON patch, then a forced apply of the chart."""
    live = wire.get(path(V2, ns, name))
    assert live is not None
    ops = csaupgrade_patch(live, ["helm"], "helm")
    if ops:
        ok(wire.send("PATCH", path(V2, ns, name), ops, JSON_PATCH_CT,
                     query=[("fieldManager", "helm"), ("fieldValidation", "Strict")]))
    ok(wire.send("PATCH", path(V2, ns, name), chart, APPLY_CT,
                 query=[("fieldManager", "helm"), ("force", "true"), ("fieldValidation", "Strict")]))
    got = wire.get(path(V2, ns, name))
    assert got is not None
    return got


def test_helm4_upgrade_leaves_the_v2_entrys_fields_unowned_and_conflicts_says_so(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    wire = Wire(str(cluster.kubeconfig))
    name = "helm3-two-versions"
    helm3_at_two_versions(wire, namespace, name)
    live = wire.get(path(V2, namespace, name))
    assert live is not None
    assert sorted(owners_of(live, B_KEY)) == [("helm", "Update", V2)]
    chart = body(V2, namespace, name, {"containers": [C_A], "color": "red"})  # the chart drops container b
    f = tmp_path / "chart.yaml"
    f.write_text(json.dumps(chart))

    r = cli(env, "conflicts", "-f", str(f), "--applier", "helm", "-o", "json")
    assert r.code in (0, 1), r.err
    report = r.json()["items"][0] if "items" in r.json() else r.json()
    never = {n["path"]: n["owners"] for n in report["neverPruned"]}
    assert never.get('.spec.containers[name="b"]') == [] or never.get('.spec.containers[name="b"].image') == [], \
        report["neverPruned"]
    predicted = report["result"]["object"]

    # what the server does: b stays, and nobody owns it any more
    final = helm4_upgrade(wire, namespace, name, chart)
    assert [c["name"] for c in final["spec"]["containers"]] == ["a", "b"]
    assert owners_of(final, B_KEY) == []
    assert predicted["spec"] == final["spec"]
    assert sorted((e["manager"], e["operation"], e["apiVersion"]) for e in final["metadata"]["managedFields"]) == \
        sorted((e["manager"], e["operation"], e["apiVersion"]) for e in predicted["metadata"]["managedFields"])


def test_migrate_for_helm_moves_both_versions_so_the_upgrade_prunes(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    wire = Wire(str(cluster.kubeconfig))
    name = "helm3-two-versions-migrated"
    helm3_at_two_versions(wire, namespace, name)
    chart = body(V2, namespace, name, {"containers": [C_A], "color": "red"})
    f = tmp_path / "chart.yaml"
    f.write_text(json.dumps(chart))
    # the chart Helm 4 will apply (-f) drops b, which Helm 3 set: the upgrade is to delete it
    r = cli(env, "migrate", "-f", str(f), "--for", "helm", "-o", "json")
    assert r.code == 0, r.out + r.err
    (item,) = r.json()["items"]
    # the advice tells how this differs from Helm 4's own migration, which leaves b behind
    assert any(n.startswith('this migration deletes .spec.containers[name="b"]') and
               "at the first sync; Helm 4 (--server-side)" in n and n.endswith("'s own migration would keep it")
               for n in item["notes"]), item["notes"]
    migrated = wire.get(path(V2, namespace, name))
    assert migrated is not None
    assert owners_of(migrated, B_KEY) == [("helm", "Apply", migrated["metadata"]["managedFields"][0]["apiVersion"])] \
        or [o[:2] for o in owners_of(migrated, B_KEY)] == [("helm", "Apply")]

    r = cli(env, "conflicts", "-f", str(f), "--applier", "helm", "-o", "json")
    assert r.code in (0, 1), r.err
    report = r.json()["items"][0] if "items" in r.json() else r.json()
    assert '.spec.containers[name="b"]' in report["deleted"], report
    final = helm4_upgrade(wire, namespace, name, chart)
    assert [c["name"] for c in final["spec"]["containers"]] == ["a"]
    assert report["result"]["object"]["spec"] == final["spec"]


def test_handover_plans_and_writes_at_the_version_the_applier_applies_at(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    """kubectl applies Multi at v1 (tags: an atomic list there); ``handover multis/NAME`` reads the
    object at discovery's preferred version, v2 (tags: a set). Planned at v2, kubectl's entry (v1)
    was read with v2's schema, its manifest lost tags, and the check refused the hand-over because
    "the next apply would delete .spec.tags". Planned at v1, it writes, and kubectl's next apply of
    its manifest without replicas keeps every value."""
    wire = Wire(str(cluster.kubeconfig))
    name = "handover-two-versions"
    manifest = body(V1, namespace, name, {"replicas": 2, "color": "red", "tags": ["a", "b"]})
    f = tmp_path / "m.yaml"
    f.write_text(json.dumps(manifest))
    cluster.kubectl("apply", "--server-side", "-f", str(f))
    preferred = cluster.kubectl("api-resources", "--api-group=example.com", "-o", "wide").stdout
    assert any(line.split()[0] == "multis" and "example.com/v2" in line for line in preferred.splitlines())

    r = cli(env, "handover", f"multis.example.com/{name}", "-n", namespace, "--field", ".spec.replicas",
            "--to", "hpa", "-o", "json")
    assert r.code == 0, r.out + r.err
    (item,) = r.json()["items"]
    assert item["apiVersion"] == V1 and item["result"] == "changed", item
    obj = wire.get(path(V1, namespace, name))
    assert obj is not None
    entries = {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}
    assert entries[("hpa", "Apply")]["apiVersion"] == V1
    assert entries[("hpa", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in json.dumps(entries[("kubectl", "Apply")]["fieldsV1"])

    # the applier's next apply, its manifest without the handed field: every value stays
    f.write_text(json.dumps(body(V1, namespace, name, {"color": "red", "tags": ["a", "b"]})))
    cluster.kubectl("apply", "--server-side", "-f", str(f))
    after = wire.get(path(V1, namespace, name))
    assert after is not None
    assert after["spec"] == {"replicas": 2, "color": "red", "tags": ["a", "b"]}
    owners = {(e["manager"], e["operation"], e["apiVersion"]) for e in after["metadata"]["managedFields"]}
    assert owners == {("hpa", "Apply", V1), ("kubectl", "Apply", V1)}


def test_kubectl_server_side_after_client_side_applies_at_two_versions(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    """``kubectl apply`` (client-side) at v1, then at v2: two kubectl-client-side-apply Update
    entries. ``kubectl apply --server-side`` at v2 of a manifest without replicas migrates (its
    csaupgrade merges only the v2 entry and deletes the v1 one) and applies again: replicas, which
    only the v1 entry owned, stays with no owner. ``conflicts --applier kubectl`` predicts the
    object and says replicas is never pruned."""
    wire = Wire(str(cluster.kubeconfig))
    name = "csa-two-versions"
    f = tmp_path / "m.yaml"
    f.write_text(json.dumps(body(V1, namespace, name, {"color": "red", "replicas": 2, "labels": {"a": "1"}})))
    cluster.kubectl("apply", "-f", str(f))
    f.write_text(json.dumps(body(V2, namespace, name, {"color": "red", "replicas": 2,
                                                        "labels": {"a": "1", "b": "2"}})))
    cluster.kubectl("apply", "-f", str(f))
    live = wire.get(path(V2, namespace, name))
    assert live is not None
    csa = sorted(e["apiVersion"] for e in live["metadata"]["managedFields"]
                 if e["manager"] == "kubectl-client-side-apply")
    assert csa == [V1, V2]
    f.write_text(json.dumps(body(V2, namespace, name, {"color": "red", "labels": {"a": "1", "b": "2"}})))

    r = cli(env, "conflicts", "-f", str(f), "--applier", "kubectl", "-o", "json")
    assert r.code in (0, 1), r.err
    report = r.json()["items"][0] if "items" in r.json() else r.json()
    never = {n["path"]: n["owners"] for n in report["neverPruned"]}
    assert never.get(".spec.replicas") == [], report["neverPruned"]
    predicted = report["result"]["object"]

    cluster.kubectl("apply", "--server-side", "-f", str(f))
    final = wire.get(path(V2, namespace, name))
    assert final is not None
    assert final["spec"]["replicas"] == 2
    assert owners_of(final, "f:replicas") == []
    assert predicted["spec"] == final["spec"]
    assert sorted((e["manager"], e["operation"], e["apiVersion"]) for e in final["metadata"]["managedFields"]) == \
        sorted((e["manager"], e["operation"], e["apiVersion"]) for e in predicted["metadata"]["managedFields"])


def test_migrate_for_kubectl_of_a_client_side_object_of_the_other_version(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    """Client-side ``kubectl apply`` at v1 (tags atomic there); ``migrate multis/NAME --for kubectl``
    reads the object at v2 (tags a set). Planned at v2, the client-side entry's ``.spec.tags`` was
    misread and went to nobody; planned at v1 (the client-side entry's and the annotation's version)
    it moves to kubectl, and ``kubectl apply --server-side`` of the manifest then changes nothing and
    conflicts with nobody."""
    wire = Wire(str(cluster.kubeconfig))
    name = "csa-v1-migrated"
    manifest = body(V1, namespace, name, {"replicas": 2, "color": "red", "tags": ["a", "b"]})
    f = tmp_path / "m.yaml"
    f.write_text(json.dumps(manifest))
    cluster.kubectl("apply", "-f", str(f))

    r = cli(env, "migrate", f"multis.example.com/{name}", "-n", namespace, "--for", "kubectl", "-o", "json")
    assert r.code == 0, r.out + r.err
    (item,) = r.json()["items"]
    assert item["apiVersion"] == V1, item
    moved = {m["path"]: m["after"] for m in item["ownership"]}
    assert moved[".spec.tags"] == ["kubectl (Apply)"], item["ownership"]
    obj = wire.get(path(V1, namespace, name))
    assert obj is not None
    entries = {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}
    assert entries[("kubectl", "Apply")]["apiVersion"] == V1
    assert entries[("kubectl", "Apply")]["fieldsV1"]["f:spec"] == {"f:color": {}, "f:replicas": {}, "f:tags": {}}

    rv = obj["metadata"]["resourceVersion"]
    cluster.kubectl("apply", "--server-side", "-f", str(f))
    after = wire.get(path(V1, namespace, name))
    assert after is not None
    assert after["spec"] == manifest["spec"] and after["metadata"]["resourceVersion"] == rv


def test_audit_reads_the_object_at_the_manifests_version(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    """``audit --kinds multis`` lists Multis at the preferred version (v2); a manifest at v1 is the same
    object. The audit used to match manifests to listed objects by apiVersion too, so the v1 manifest
    matched nothing, the object was audited without it, and the next apply's 409 went unsaid (a lab
    generated case: a server-side applier owned ``.spec.labels.ring``, ``kubectl apply --server-side``
    of a manifest changing it). Now the object is read at the manifest's version and predicted like
    ``conflicts`` does, and still counted once."""
    wire = Wire(str(cluster.kubeconfig))
    name = "audit-at-v1"
    ok(wire.send("PATCH", path(V1, namespace, name), body(V1, namespace, name, {"labels": {"ring": "x"}}),
                 APPLY_CT, query=[("fieldManager", "deployer")]))
    f = tmp_path / "next.yaml"
    f.write_text(json.dumps(body(V1, namespace, name, {"labels": {"ring": "y"}})))
    c = cli(env, "conflicts", "-f", str(f), "--applier", "kubectl", "-o", "json")
    assert c.code == 1, c.out + c.err
    a = cli(env, "audit", "--kinds", "multis", "-n", namespace, "--applier", "kubectl", "-f", str(f), "-o", "json")
    assert a.code == 1, a.out + a.err
    doc = a.json()
    (pc,) = [i for i in doc["items"] if i["id"] == "predicted-conflict"]
    assert [x["path"] for x in pc["details"]["conflicts"]] == [".spec.labels.ring"], pc["details"]
    assert pc["apiVersion"] == V1, pc
    assert doc["summary"]["objects"] == 1, doc["summary"]


def test_a_printed_fix_names_the_manifest_audit_checked_it_with(
        cluster: lab.Cluster, namespace: str, env: dict[str, str], tmp_path: Path) -> None:
    """Soak seed 49's seed-4900131 and seed-4900990, made small: client-side ``kubectl apply`` at v1
    (the annotation holds ``args``), ``ci`` applies server-side at v2, ``kubectl edit`` changes
    ``args`` at v1. ``audit -f next.yaml --applier kubectl`` (a v2 manifest without ``args``) verified
    a fold of ci into kubectl with the manifest; the printed command had none, took the old
    annotation for kubectl's next manifest, predicted a conflict on ``args`` and refused. The fix now
    names the file (``--manifest``): run as printed it checks the same next apply and writes, and
    kubectl's real apply then keeps every value it did not drop."""
    wire = Wire(str(cluster.kubeconfig))
    name = "fix-names-manifest"
    f = tmp_path / "m.yaml"
    f.write_text(json.dumps(body(V1, namespace, name, {"args": ["-q"], "color": "green", "labels": {"zone": "a"}})))
    cluster.kubectl("apply", "-f", str(f))
    f.write_text(json.dumps(body(V2, namespace, name, {"color": "green", "labels": {"zone": "a"}, "replicas": 2})))
    cluster.kubectl("apply", "--server-side", "--field-manager", "ci", "-f", str(f))
    ok(wire.send("PATCH", path(V1, namespace, name), {"spec": {"args": ["--defaulted"]}}, MERGE_CT,
                 query=[("fieldManager", "kubectl-edit")]))
    nxt = tmp_path / "next.yaml"
    nxt.write_text(json.dumps(body(V2, namespace, name, {"color": "green", "labels": {"zone": "a"}})))

    a = cli(env, "audit", "--kinds", "multis", "-n", namespace, "--applier", "kubectl", "-f", str(nxt), "-o", "json")
    assert a.code in (0, 1), a.out + a.err
    (obj,) = a.json()["objects"]
    command = obj["fix"]["command"]
    assert command[-2:] == ["--manifest", str(nxt)], obj["fix"]
    refused = cli(env, *command[:-2], "--dry-run=client")
    assert refused.code == 1 and "conflict" in refused.out and ".spec.args" in refused.out, refused.out
    ran = cli(env, *command)
    assert ran.code == 0, ran.out + ran.err

    cluster.kubectl("apply", "--server-side", "-f", str(nxt))
    after = wire.get(path(V2, namespace, name))
    assert after is not None
    assert after["spec"] == {"args": ["--defaulted"], "color": "green", "labels": {"zone": "a"}}
