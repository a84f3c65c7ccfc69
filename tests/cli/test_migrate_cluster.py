"""Acceptance of ``migrate``, ``strip-last-applied``, ``handover``, ``reset`` and ``undo`` against the
real API server, with the real kubectl (1.36) doing the client-side and server-side applies.

Each scenario checks what matters to a user afterwards: what the next ``kubectl apply`` (plain or
``--server-side``) does to the object, byte for byte where it should change nothing (same
resourceVersion), and that ``undo`` puts ownership back exactly.

Facts of kubectl 1.36 these tests rely on (checked here, see ``test_kubectl_upgrades_by_itself``):
``kubectl apply --server-side`` migrates client-side-apply entries into its own manager by itself
(client-go csaupgrade, then a second apply), so the #99003 trap is only left for the other
server-side appliers (controllers, GitOps tools); a plain ``kubectl apply`` of an unchanged manifest
whose list items have server-defaulted fields sends a merge patch that the server finds to change
nothing (kubectl prints "configured", the resourceVersion stays).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import Result, run

from kubectl_fieldown.fieldpath import FieldSet, decode_fields_v1, parse_path
from kubectl_fieldown.kube import ClusterClient, ClusterOptions, ResourceInfo

LA = "kubectl.kubernetes.io/last-applied-configuration"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: lab.Cluster) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    yield


class Scenario:
    """Widgets in a fresh namespace, written with the real kubectl and our CLI."""

    def __init__(self, cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
        self.cluster = cluster
        self.ns = namespace
        self.tmp = tmp_path
        self.files = 0
        self.backups = tmp_path / "backups"
        self.client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
        self.widgets: ResourceInfo = self.client.discovery.resolve("widgets")

    def manifest(self, name: str, spec: dict[str, Any], **metadata: Any) -> Path:
        self.files += 1
        doc = {"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": name, "namespace": self.ns, **metadata}, "spec": spec}
        path = self.tmp / f"m{self.files}.yaml"
        path.write_text(yaml.safe_dump(doc))
        return path

    def kubectl(self, *args: str, check: bool = True) -> str:
        return self.cluster.kubectl(*args, check=check).stdout

    def live(self, name: str) -> dict[str, Any]:
        return self.client.get(self.widgets, name, self.ns)

    def fd(self, *args: str) -> Result:
        return run(*args, "-n", self.ns)

    def apply_raw(self, name: str, spec: dict[str, Any], manager: str, **kw: Any) -> dict[str, Any]:
        """A server-side apply straight through the API, as a controller or GitOps tool sends it."""
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": self.ns},
                "spec": spec}
        return self.client.patch(self.widgets, name, self.ns, body, "apply", field_manager=manager, **kw)

    def last_backup_run(self) -> Path:
        runs = sorted(self.backups.iterdir())
        assert runs, "no backup run directory"
        return runs[-1]


@pytest.fixture
def sc(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> Iterator[Scenario]:
    s = Scenario(cluster, namespace, tmp_path)
    try:
        yield s
    finally:
        s.client.close()


def entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], FieldSet]:
    return {(e["manager"], e["operation"], e.get("subresource", "")): decode_fields_v1(e["fieldsV1"])
            for e in obj["metadata"].get("managedFields") or []}


def managers(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    return set(entries(obj))


def rv(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


def ownership(obj: dict[str, Any], times: bool = False) -> tuple[Any, Any]:
    """managedFields (as sent back, order free; times only when asked: a write of the annotation is
    recorded with the time it happens, and the server ignores a write that only changes times) and the
    last-applied annotation."""
    mf = sorted(json.dumps({k: v for k, v in e.items() if times or k != "time"}, sort_keys=True)
                for e in obj["metadata"].get("managedFields") or [])
    return mf, (obj["metadata"].get("annotations") or {}).get(LA)


def owns(obj: dict[str, Any], manager: str, path: str) -> bool:
    p = parse_path(path)
    return any(m == manager and fs.has(p) for (m, _, _), fs in entries(obj).items())


def without(spec: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != key}


SPEC = {"replicas": 3, "color": "blue",
        "containers": [{"name": "a", "image": "nginx", "ports": [{"containerPort": 80}]}]}


# --- 1. migrate --to server-side: the #99003 trap ------------------------------------------------------


def test_kubectl_upgrades_by_itself_other_appliers_fall_into_the_trap(sc: Scenario) -> None:
    """Without migration: kubectl 1.36 moves client-side ownership itself, a raw applier does not."""
    sc.kubectl("apply", "-f", str(sc.manifest("k", SPEC)))
    sc.kubectl("apply", "--server-side", "-f", str(sc.manifest("k", without(SPEC, "color"))))
    assert "color" not in sc.live("k")["spec"]

    # the trap (kubernetes#99003): a server-side applier that never applied before drops .spec.color from
    # its manifest, but kubectl-client-side-apply still owns it, so it stays
    sc.kubectl("apply", "-f", str(sc.manifest("t", SPEC)))
    sc.apply_raw("t", SPEC, "flux")
    sc.apply_raw("t", without(SPEC, "color"), "flux")
    assert sc.live("t")["spec"]["color"] == "blue"


@pytest.mark.parametrize("target", ["kubectl", "flux"])
def test_migrated_object_behaves_as_if_always_server_side(sc: Scenario, target: str) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", SPEC, labels={"app": "shop"})))
    before = sc.live("w")

    r = sc.fd("migrate", "widget/w", "--to", "server-side", "--field-manager", target, "-o", "json")
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["result"] == "changed" and item["retries"] == 0 and item["error"] is None
    assert Path(item["backup"]).is_file()
    migrated = sc.live("w")
    assert managers(migrated) == ({(target, "Apply", ""), ("kubectl-last-applied", "Apply", "")}
                                  if target == "kubectl" else {(target, "Apply", "")})
    # the annotation is kept for kubectl (a plain kubectl apply still works), dropped for others
    assert (LA in (migrated["metadata"].get("annotations") or {})) == (target == "kubectl")
    # the defaulted ports[].protocol was never in the manifest: the applier does not own it
    port = '.spec.containers[name="a"].ports[containerPort=80,protocol="TCP"]'
    assert owns(migrated, target, port + ".containerPort")
    assert not owns(migrated, target, port + ".protocol")

    # applying the unchanged manifest conflicts with nobody and changes nothing, not even managedFields
    unchanged = sc.manifest("w", SPEC, labels={"app": "shop"})
    if target == "kubectl":
        sc.kubectl("apply", "--server-side", "--field-manager", target, "-f", str(unchanged))
    else:
        sc.apply_raw("w", SPEC, target, force=False)
        # (the raw apply leaves out the label: the next assertion is on the spec applier only)
    after = sc.live("w")
    if target == "kubectl":
        assert rv(after) == rv(migrated)
        assert ownership(after, times=True) == ownership(migrated, times=True)

    # the manifest minus a field deletes that field (#99003 fixed)
    minus = without(SPEC, "color")
    if target == "kubectl":
        sc.kubectl("apply", "--server-side", "-f", str(sc.manifest("w", minus, labels={"app": "shop"})))
    else:
        sc.apply_raw("w", minus, target)
    final = sc.live("w")
    assert "color" not in final["spec"]
    assert final["spec"]["replicas"] == 3

    # a second run finds nothing to do
    r2 = sc.fd("migrate", "widget/w", "--to", "server-side", "--field-manager", target)
    assert r2.code == 0, r2.err
    assert "widget.example.com/w" in r2.out and ": unchanged" in r2.out
    assert before["metadata"]["uid"] == final["metadata"]["uid"]


def test_migrate_moves_what_the_manifest_sets_and_refuses_to_lose_the_rest(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 1, "color": "red"})))
    # another Update manager the glob picks up: a kubectl edit-like write of a label the manifest lacks
    sc.client.patch(sc.widgets, "w", sc.ns, {"metadata": {"labels": {"tier": "web"}}}, "merge",
                    field_manager="kubectl-edit")
    r = sc.fd("migrate", "widget/w", "--to", "server-side", "--from-manager", "kubectl-*", "-v")
    assert r.code == 0, r.err
    assert "moved the fields of kubectl-client-side-apply into kubectl (Apply)" in r.out
    assert "left 1 field(s) the target's manifest does not set with their owners (.metadata.labels.tier)" in r.out
    obj = sc.live("w")
    assert managers(obj) == {("kubectl", "Apply", ""), ("kubectl-last-applied", "Apply", ""),
                             ("kubectl-edit", "Update", "")}
    assert owns(obj, "kubectl-edit", ".metadata.labels.tier") and owns(obj, "kubectl", ".spec.color")
    # kubectl's next apply of the manifest keeps the label
    sc.kubectl("apply", "--server-side", "-f", str(sc.manifest("w", {"replicas": 1, "color": "red"})))
    assert sc.live("w")["metadata"]["labels"] == {"tier": "web"}

    # every field, as asked: the check finds that kubectl's next apply would delete the label
    sc.client.patch(sc.widgets, "w", sc.ns, {"metadata": {"labels": {"tier": "db"}}}, "merge",
                    field_manager="kubectl-label")
    r = sc.fd("migrate", "widget/w", "--to", "server-side", "--from-manager", "kubectl-label", "--all-fields")
    assert r.code == 1
    assert "failed: refused: it would lose values you did not ask to change (--allow-value-changes writes it " \
        "anyway)" in r.out
    assert '  ! the next apply would delete .metadata.labels ({"tier": "db"} -> unset)' in r.out
    r = sc.fd("migrate", "widget/w", "--to", "server-side", "--from-manager", "kubectl-label", "--all-fields",
              "--allow-value-changes")
    assert r.code == 0, r.out + r.err
    assert owns(sc.live("w"), "kubectl", ".metadata.labels.tier")


# --- 2. migrate --to client-side ----------------------------------------------------------------------


def test_server_side_and_back_then_plain_apply_removal(sc: Scenario) -> None:
    m = sc.manifest("w", SPEC, labels={"app": "shop"})
    sc.kubectl("apply", "-f", str(m))
    original = sc.live("w")
    assert sc.fd("migrate", "widget/w", "--to", "server-side").code == 0
    sc.kubectl("apply", "--server-side", "-f", str(m))  # managed the new way for a while

    r = sc.fd("migrate", "widget/w", "--to", "client-side", "-v")
    assert r.code == 0, r.err
    assert "turned kubectl (Apply) into kubectl-client-side-apply (Update)" in r.out
    back = sc.live("w")
    assert managers(back) == {("kubectl-client-side-apply", "Update", "")}
    # the rebuilt annotation is what client-side apply wrote for this manifest in the first place
    assert back["metadata"]["annotations"][LA] == original["metadata"]["annotations"][LA]

    # plain kubectl apply of the same manifest changes nothing (the server sees no change)
    sc.kubectl("apply", "-f", str(m))
    again = sc.live("w")
    assert rv(again) == rv(back) and ownership(again, times=True) == ownership(back, times=True)

    # and of the manifest minus a field deletes it
    sc.kubectl("apply", "-f", str(sc.manifest("w", without(SPEC, "color"),
                                              labels={"app": "shop"})))
    assert "color" not in sc.live("w")["spec"]
    assert sc.fd("migrate", "widget/w", "--to", "client-side").code == 0  # a second run: nothing to do


def test_client_side_needs_an_apply_entry(sc: Scenario) -> None:
    sc.client.create(sc.widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                                  "metadata": {"name": "c", "namespace": sc.ns}, "spec": {"replicas": 1}},
                     field_manager="creator")
    r = sc.fd("migrate", "widget/c", "--to", "client-side")
    assert r.code == 1
    assert "widget.example.com/c -n" in r.out and "failed: " in r.out
    assert "no server-side apply entry of manager 'kubectl'" in r.out
    assert r.err.startswith("error: 1 of 1 object failed")


# --- 3. hand fields over ------------------------------------------------------------------------------


def test_strip_last_applied_lets_an_imperative_writer_keep_the_field(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    r = sc.fd("strip-last-applied", "widget/w", "--field", ".spec.replicas", "-v")
    assert r.code == 0, r.err
    assert "removed .spec.replicas from the last-applied annotation" in r.out
    obj = sc.live("w")
    assert "replicas" not in json.loads(obj["metadata"]["annotations"][LA])["spec"]
    assert not owns(obj, "kubectl-client-side-apply", ".spec.replicas")

    sc.kubectl("scale", "widget/w", "-n", sc.ns, "--replicas", "7")
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"color": "blue"})))
    assert sc.live("w")["spec"] == {"replicas": 7, "color": "blue"}
    assert sc.fd("strip-last-applied", "widget/w", "--field", ".spec.replicas").code == 0  # idempotent


def test_handover_replicas_to_a_scale_writer_never_resets(sc: Scenario) -> None:
    """The server-side apply documentation's scenario (tests/conformance/cur-hpa-handover.json)."""
    m = {"replicas": 3, "color": "blue"}
    sc.apply_raw("w", m, "user")
    values_seen: list[int] = []

    r = sc.fd("handover", "widget/w", "--field", ".spec.replicas", "--to", "hpa-controller", "-o", "json")
    assert r.code == 0, r.err
    (item,) = r.json()["items"]
    assert item["result"] == "changed" and item["patchesSent"] == 1
    assert "hpa-controller (Apply) owns .spec.replicas" in item["notes"]
    assert "user no longer owns .spec.replicas" in item["notes"]
    obj = sc.live("w")
    values_seen.append(obj["spec"]["replicas"])
    assert owns(obj, "hpa-controller", ".spec.replicas") and not owns(obj, "user", ".spec.replicas")

    # the controller writes the scale subresource (GET, modify, PUT)
    scale = sc.client.get(sc.widgets, "w", sc.ns, subresource="scale")
    scale["spec"]["replicas"] = 5
    sc.client.replace(sc.widgets, scale, "w", sc.ns, field_manager="hpa-controller", subresource="scale")
    values_seen.append(sc.live("w")["spec"]["replicas"])

    # the user's manifest without replicas: no reset to the default (unset), no conflict
    sc.apply_raw("w", {"color": "blue"}, "user")
    values_seen.append(sc.live("w")["spec"]["replicas"])
    sc.kubectl("apply", "--server-side", "--field-manager", "user", "-f", str(sc.manifest("w", {"color": "blue"})))
    values_seen.append(sc.live("w")["spec"]["replicas"])
    assert values_seen == [3, 5, 5, 5]

    # a second handover has nothing to do
    r2 = sc.fd("handover", "widget/w", "--field", ".spec.replicas", "--to", "hpa-controller")
    assert r2.code == 0, r2.err
    assert ": unchanged" in r2.out


def test_handover_from_client_side_apply(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    r = sc.fd("handover", "widget/w", "--field", ".spec.replicas", "--to", "scaler", "-v")
    assert r.code == 0, r.err
    obj = sc.live("w")
    assert "replicas" not in json.loads(obj["metadata"]["annotations"][LA])["spec"]
    assert owns(obj, "scaler", ".spec.replicas")
    assert not owns(obj, "kubectl-client-side-apply", ".spec.replicas")
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"color": "green"})))
    assert sc.live("w")["spec"] == {"replicas": 3, "color": "green"}


def test_handover_to_an_applier_of_other_fields_and_refusals(sc: Scenario) -> None:
    sc.apply_raw("w", {"replicas": 3, "color": "blue"}, "user")
    sc.apply_raw("w", {"color": "blue"}, "flux")
    # flux already applies color: it takes replicas too, and keeps color
    r = sc.fd("handover", "widget/w", "--field", ".spec.replicas", "--to", "flux", "--applier", "ssa:flux")
    assert r.code == 0, r.out + r.err
    obj = sc.live("w")
    assert owns(obj, "flux", ".spec.replicas") and owns(obj, "flux", ".spec.color")
    assert not owns(obj, "user", ".spec.replicas")
    # flux's next apply of both fields changes nothing
    before = sc.live("w")
    sc.apply_raw("w", {"replicas": 3, "color": "blue"}, "flux")
    assert rv(sc.live("w")) == rv(before)
    r = sc.fd("handover", "widget/w", "--field", ".spec.args", "--to", "x")
    assert r.code == 1 and ".spec.args is not set on the object" in r.out
    assert rv(sc.live("w")) == rv(before)


# --- 4. reset -----------------------------------------------------------------------------------------


def test_reset_then_reapply(sc: Scenario) -> None:
    for n in ("w", "v"):
        sc.kubectl("apply", "-f", str(sc.manifest(n, {"replicas": 3, "color": "blue"})))
    r = sc.fd("reset", "widget/w", "widget/v")
    assert r.code == 0, r.err
    assert "nothing is tracked until the next server-side apply" in r.err
    assert all(sc.live(n)["metadata"].get("managedFields") is None for n in ("w", "v"))

    # untracked until the next apply
    sc.client.patch(sc.widgets, "w", sc.ns, {"spec": {"color": "red"}}, "merge", field_manager="painter")
    assert sc.live("w")["metadata"].get("managedFields") is None

    # an applier's first apply records what was there for before-first-apply, which keeps it
    sc.apply_raw("w", {"replicas": 3}, "deployer")
    obj = sc.live("w")
    assert managers(obj) == {("deployer", "Apply", ""), ("before-first-apply", "Update", "")}
    assert owns(obj, "before-first-apply", ".spec.color") and obj["spec"]["color"] == "red"

    # kubectl apply --server-side on an object with a last-applied annotation folds before-first-apply
    # into its own manager (csaupgrade), so the fields missing from its manifest go
    sc.kubectl("apply", "--server-side", "--field-manager", "deployer", "-f", str(sc.manifest("v", {"replicas": 3})))
    obj = sc.live("v")
    assert managers(obj) == {("deployer", "Apply", "")}
    assert obj["spec"] == {"replicas": 3}
    assert sc.fd("reset", "widget/v", "--dry-run=client").code == 0


def test_reset_to_one_manager_then_its_apply(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    sc.client.patch(sc.widgets, "w", sc.ns, {"status": {"ready": True}}, "merge", field_manager="ctrl",
                    subresource="status")
    r = sc.fd("reset", "widget/w", "--to-manager", "owner", "-v")
    assert r.code == 0, r.err
    assert "the status is left out" in r.out
    obj = sc.live("w")
    assert managers(obj) == {("owner", "Apply", "")}
    assert owns(obj, "owner", ".spec.color") and not owns(obj, "owner", ".status.ready")
    # the owner's apply of the same fields: no conflict, nothing changes
    sc.apply_raw("w", {"replicas": 3, "color": "blue"}, "owner")
    assert sc.live("w")["spec"] == {"replicas": 3, "color": "blue"}
    assert sc.fd("reset", "widget/w", "--to-manager", "owner").code == 0


# --- undo ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ("migrate", "--to", "server-side"),
    ("migrate", "--to", "server-side", "--field-manager", "flux"),
    ("strip-last-applied", "--field", ".spec.replicas"),
    ("handover", "--field", ".spec.replicas", "--to", "hpa-controller"),
    ("reset",),
    ("reset", "--to-manager", "owner"),
], ids=lambda c: "-".join(c).replace("--", ""))
def test_undo_restores_ownership_exactly(sc: Scenario, command: tuple[str, ...]) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    sc.kubectl("apply", "-f", str(sc.manifest("v", {"replicas": 2})))
    before = {n: sc.live(n) for n in ("w", "v")}
    r = sc.fd(command[0], "widget/w", "widget/v", *command[1:])
    assert r.code == 0, r.err + r.out
    run_dir = sc.last_backup_run()
    assert {f.name for f in run_dir.iterdir()} == {f"example.com_Widget_{sc.ns}_{n}.json" for n in "wv"}
    assert all(ownership(sc.live(n)) != ownership(before[n]) for n in "wv")

    # values written since stay; ownership comes back as it was, guarded like every write
    u = run("undo", str(run_dir), "-o", "json")
    assert u.code == 0, u.err
    doc = u.json()
    assert doc["summary"] == {"changed": 2, "unchanged": 0, "failed": 0, "retries": 0, "maybeWritten": 0}
    for n in "wv":
        assert ownership(sc.live(n)) == ownership(before[n])
    # undoing twice changes nothing; the undo itself has a backup
    assert run("undo", str(run_dir), "-o", "json").json()["summary"]["unchanged"] == 2
    assert doc["backupDir"] and Path(doc["backupDir"]).is_dir()


def test_undo_refuses_another_object_with_the_same_name(sc: Scenario) -> None:
    m = sc.manifest("w", {"replicas": 3})
    sc.kubectl("apply", "-f", str(m))
    assert sc.fd("migrate", "widget/w", "--to", "server-side").code == 0
    run_dir = sc.last_backup_run()
    sc.kubectl("delete", "widget", "w", "-n", sc.ns)
    sc.kubectl("apply", "--server-side", "-f", str(m))
    again = sc.live("w")
    u = run("undo", str(run_dir))
    assert u.code == 1
    assert "is not the object that was saved" in u.out and "refusing to restore" in u.out
    assert rv(sc.live("w")) == rv(again)


# --- safety: dry runs, bulk failures, backups -----------------------------------------------------------


def test_dry_runs_write_nothing(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    before = sc.live("w")
    for mode in ("client", "server"):
        r = sc.fd("migrate", "widget/w", "--to", "server-side", f"--dry-run={mode}", "-o", "json")
        assert r.code == 0, r.err
        (item,) = r.json()["items"]
        assert item["result"] == "changed" and item["backup"] is None and item["patchesSent"] == 0
        # the rewritten annotation is applied by its owner (kubectl-last-applied), then the entries
        apply, second = item["patches"]
        assert apply["metadata"]["resourceVersion"] == rv(before)
        assert [r["type"] for r in item["requests"]] == ["apply", "json-patch"]
        assert item["requests"][0]["fieldManager"] == "kubectl-last-applied"
        assert second[1]["path"] == "/metadata/managedFields"
        # client: the second request waits for the first's resourceVersion; server: tested on the live one
        assert second[0]["value"] == (rv(before) if mode == "server" else "<resourceVersion of the previous write>")
        assert any(c.startswith("+ kubectl (Apply) owns ") for c in item["changes"])
    r = sc.fd("handover", "widget/w", "--field", ".spec.replicas", "--to", "hpa", "--dry-run=server")
    assert r.code == 0, r.err
    assert "would change (server dry run)" in r.out
    r = sc.fd("reset", "widget/w", "--dry-run=client", "-v")
    assert '"value": [{}]' in r.out
    assert rv(sc.live("w")) == rv(before)
    assert not sc.backups.exists()


def _owners_by_field(obj: dict[str, Any]) -> dict[str, set[str]]:
    from kubectl_fieldown.fieldpath import path_string

    out: dict[str, set[str]] = {}
    for e in obj["metadata"].get("managedFields") or []:
        label = f"{e['manager']} ({e['operation']}" + (f", {e['subresource']})" if e.get("subresource") else ")")
        for p in decode_fields_v1(e.get("fieldsV1")).leaves():
            out.setdefault(path_string(p), set()).add(label)
    return out


def test_a_dry_run_shows_ownership_before_and_after_as_the_server_then_records_it(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3, "color": "blue"})))
    sc.kubectl("scale", "widget/w", "--replicas=5", "-n", sc.ns)
    before = _owners_by_field(sc.live("w"))
    r = sc.fd("migrate", "widget/w", "--to", "server-side", "--dry-run=client")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    start = lines.index("  ownership, before → after:")
    assert any(line.split() == [".spec.color", "kubectl-client-side-apply", "(Update)", "→", "kubectl", "(Apply)"]
               for line in lines[start + 1:]), r.out
    assert "apply (fieldManager" not in r.out and "+ kubectl (Apply) owns" not in r.out  # requests with -v only
    verbose = sc.fd("migrate", "widget/w", "--to", "server-side", "--dry-run=client", "-v")
    assert "apply (fieldManager kubectl-last-applied)" in verbose.out and "+ kubectl (Apply) owns" in verbose.out
    (item,) = sc.fd("migrate", "widget/w", "--to", "server-side", "--dry-run=client", "-o", "json").json()["items"]
    moves = {m["path"]: m for m in item["ownership"]}
    assert ".spec.replicas" not in moves  # the scaler keeps it
    # every "before" is what the server had, and after the real write every "after" is what it has
    for path, m in moves.items():
        assert set(m["before"]) == before.get(path, set()), path
    assert sc.fd("migrate", "widget/w", "--to", "server-side").code == 0
    after = _owners_by_field(sc.live("w"))
    for path, m in moves.items():
        assert set(m["after"]) == after.get(path, set()), path
    unmoved = {p for p in set(before) | set(after) if p not in moves}
    assert unmoved and all(before.get(p) == after.get(p) for p in unmoved)


def test_bulk_goes_on_past_failures_and_reports(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("a", {"replicas": 1})))
    sc.apply_raw("b", {"replicas": 1}, "flux")  # no last-applied annotation: cannot be stripped
    sc.kubectl("apply", "-f", str(sc.manifest("c", {"replicas": 1})))
    r = sc.fd("strip-last-applied", "widgets", "--field", ".spec.replicas")
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[:3] == [
        f"widget.example.com/a -n {sc.ns}: changed",
        f"widget.example.com/b -n {sc.ns}: failed: has no last-applied annotation (it is not managed by "
        "client-side apply)",
        f"widget.example.com/c -n {sc.ns}: changed",
    ]
    assert lines[3] == "2 changed, 0 unchanged, 1 failed"
    assert lines[4].startswith(f"backups: {sc.backups}")
    assert r.err == "error: 1 of 3 objects failed\n"
    # also a missing object and an unknown type among named ones
    r = sc.fd("migrate", "widget/a", "widget/nope", "sprockets/x", "--to", "server-side")
    assert r.code == 1
    assert f"widget.example.com/a -n {sc.ns}: changed" in r.out
    assert 'failed: widgets.example.com "nope" not found' in r.out
    assert 'the server doesn\'t have a resource type "sprockets"' in r.out


def test_selection_forms_and_manifests(sc: Scenario) -> None:
    m = sc.manifest("a", {"replicas": 1}, labels={"team": "x"})
    sc.kubectl("apply", "-f", str(m))
    sc.kubectl("apply", "-f", str(sc.manifest("b", {"replicas": 1})))
    r = sc.fd("migrate", "--to", "server-side", "-l", "team=x", "widgets", "-o", "json")
    assert r.code == 0, r.err
    assert [i["name"] for i in r.json()["items"]] == ["a"]
    r = sc.fd("migrate", "--to", "server-side", "-f", str(m), "-o", "json")
    assert [(i["name"], i["result"]) for i in r.json()["items"]] == [("a", "unchanged")]
    r = sc.fd("migrate", "--to", "server-side", "--all", "-o", "json")  # the whole namespace, every type
    assert sorted((i["name"], i["result"]) for i in r.json()["items"]) == [("a", "unchanged"), ("b", "changed")]


def test_backup_files_are_private_and_complete(sc: Scenario) -> None:
    sc.kubectl("apply", "-f", str(sc.manifest("w", {"replicas": 3})))
    before = sc.live("w")
    assert sc.fd("migrate", "widget/w", "--to", "server-side").code == 0
    run_dir = sc.last_backup_run()
    (f,) = run_dir.iterdir()
    assert run_dir.stat().st_mode & 0o777 == 0o700
    assert f.stat().st_mode & 0o777 == 0o600
    doc = json.loads(f.read_text())
    assert doc["format"] == "fieldown.backup/v2"
    assert len(doc["sha256"]) == 64 and doc["after"]["managedFields"]
    assert doc["command"] == "migrate --to server-side"
    assert doc["server"] == sc.client.server
    assert doc["resourceVersion"] == rv(before) and doc["uid"] == before["metadata"]["uid"]
    assert doc["resource"] == {"group": "example.com", "version": "v1", "resource": "widgets", "kind": "Widget",
                               "namespaced": True}
    assert doc["object"] == before


def test_usage_errors(sc: Scenario) -> None:
    for args, needle in [
        (("migrate", "widget/w"), "--to is required"),
        (("migrate", "widget/w", "--to", "sideways"), "'sideways' is not one of"),
        (("migrate", "--to", "server-side", "--max-retries", "x", "widget/w"), "--max-retries must be"),
        (("migrate", "widget/w", "--to", "client-side", "--field-manager", "x"), "--field-manager is for"),
        (("migrate", "widget/w", "--to", "client-side", "--from-manager", "a*"), "one --from-manager name"),
        (("migrate", "widget/w", "--to", "server-side", "--field-manager", "kubectl-client-side-apply"),
         "it cannot be the server-side applier"),
        (("migrate", "widget/w", "--to", "server-side", "--applier", "bogus"), "--applier must be one of"),
        (("strip-last-applied", "widget/w"), "--field PATH"),
        (("strip-last-applied", "widget/w", "--field", ".spec[oops"), ""),
        (("handover", "widget/w", "--field", ".spec.replicas"), "--to MANAGER is required"),
        (("undo", "--max-retries", "-1", "somewhere"), "--max-retries must be between 0 and 100"),
    ]:
        r = run(*args)
        assert r.code == 2, (args, r.out, r.err)
        assert r.err.startswith("error: ") and needle in r.err, (args, r.err)
        assert "Traceback" not in r.err
    # a name is required somewhere: no implicit "everything in the default namespace"
    r = run("migrate", "--to", "server-side")
    assert r.code == 2 and "name the objects" in r.err
    r = run("undo", str(sc.tmp / "missing"))
    assert r.code == 2 and "no such file or directory" in r.err
