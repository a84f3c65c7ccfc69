"""``kubectl fieldown audit`` end to end against the real API server.

Objects are put in every interesting state with the real kubectl (1.36) — client-side apply,
kubectl scale, patches under kubectl's imperative manager names, managedFields resets — or with
raw API requests where a controller or GitOps tool would send them; then the audit runs as a
subprocess (``kubectl-fieldown audit -A -o json`` with the cluster's KUBECONFIG) and the findings
of each object are checked exactly. Other tests of the session write to the same server, so only
this module's namespace and cluster-scoped names are looked at.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import Result
from engine.schemas import defaulting_crd

from kubectl_fieldown.cli.main import main
from kubectl_fieldown.kube import ClusterClient, ClusterOptions, ResourceInfo

W = "example.com/v1"
BIG = 245_000  # characters of a spec value: the annotation then holds ~240 KiB, over 90% of 256 KiB

#: what each object must have, exactly (ids in report order)
EXPECTED: dict[str, list[str]] = {
    "clean": [],
    "csa": ["client-side-apply"],
    "mixed": ["mixed-appliers", "client-side-apply"],
    "hpa": ["hpa-replicas-trap", "client-side-apply"],
    "edit": ["imperative-writer"],
    "bfa": ["before-first-apply"],
    "ancient": ["ancient-changes"],
    "big": ["last-applied-size", "client-side-apply"],
    "drift": ["client-side-apply", "last-applied-drift"],
    "untracked": ["untracked"],
}


class Objects:
    """The module's objects: one Widget per state in one namespace, plus a cluster-scoped Gizmo."""

    def __init__(self, cluster: lab.Cluster, tmp: Path) -> None:
        self.cluster = cluster
        self.ns = f"audit-{uuid.uuid4().hex[:8]}"
        self.gizmo = f"audit-gizmo-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp
        self.client = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
        self.widgets: ResourceInfo = self.client.discovery.resolve("widgets")
        self.files = 0

    def manifest(self, name: str, spec: dict[str, Any], kind: str = "Widget", ns: bool = True) -> Path:
        self.files += 1
        md: dict[str, Any] = {"name": name, "labels": {"audit-case": name}}
        if ns:
            md["namespace"] = self.ns
        path = self.tmp / f"m{self.files}.yaml"
        path.write_text(yaml.safe_dump({"apiVersion": W, "kind": kind, "metadata": md, "spec": spec}))
        return path

    def kubectl(self, *args: str) -> None:
        self.cluster.kubectl(*args)

    def apply_raw(self, name: str, spec: dict[str, Any], manager: str) -> None:
        body = {"apiVersion": W, "kind": "Widget",
                "metadata": {"name": name, "namespace": self.ns, "labels": {"audit-case": name}}, "spec": spec}
        self.client.patch(self.widgets, name, self.ns, body, "apply", field_manager=manager, force=True)

    def create_raw(self, name: str, spec: dict[str, Any], manager: str) -> None:
        body = {"apiVersion": W, "kind": "Widget",
                "metadata": {"name": name, "namespace": self.ns, "labels": {"audit-case": name}}, "spec": spec}
        self.client.create(self.widgets, body, self.ns, field_manager=manager)

    def merge(self, name: str, patch: dict[str, Any], manager: str) -> None:
        self.client.patch(self.widgets, name, self.ns, patch, "merge", field_manager=manager)

    def reset(self, name: str) -> None:
        # [{}] is the reliable form of "forget every manager" (semantics notes §4)
        self.client.patch(self.widgets, name, self.ns, [{"op": "replace", "path": "/metadata/managedFields",
                                                         "value": [{}]}], "json")

    def live(self, name: str) -> dict[str, Any]:
        return self.client.get(self.widgets, name, self.ns)

    def build(self) -> None:
        spec = {"color": "red", "replicas": 2}
        self.apply_raw("clean", spec, "argocd-controller")

        self.kubectl("apply", "-f", str(self.manifest("csa", spec)))

        self.kubectl("apply", "-f", str(self.manifest("mixed", spec)))
        self.apply_raw("mixed", {**spec, "args": ["x"]}, "argocd-controller")  # not kubectl: no csaupgrade

        self.kubectl("apply", "-f", str(self.manifest("hpa", spec)))
        self.kubectl("scale", "widget/hpa", "-n", self.ns, "--replicas=5")

        self.apply_raw("edit", spec, "argocd-controller")
        self.kubectl("patch", "widget/edit", "-n", self.ns, "--type=merge", "-p", '{"spec":{"color":"blue"}}',
                     "--field-manager=kubectl-edit")

        self.create_raw("bfa", spec, "some-controller")
        self.reset("bfa")
        self.apply_raw("bfa", {"color": "red"}, "argocd-controller")

        self.apply_raw("ancient", spec, "argocd-controller")
        for i in range(12):
            self.merge("ancient", {"spec": {"labels": {f"k{i}": "v"}}}, f"controller-{i}")

        self.kubectl("apply", "-f", str(self.manifest("big", {**spec, "config": {"blob": "x" * BIG}})))

        self.kubectl("apply", "-f", str(self.manifest("drift", spec)))
        self.merge("drift", {"spec": {"color": "green"}}, "drift-maker")

        self.create_raw("untracked", spec, "some-controller")
        self.reset("untracked")

        self.kubectl("apply", "-f", str(self.manifest(self.gizmo, {"owner": "me"}, kind="Gizmo", ns=False)))


@pytest.fixture(scope="module")
def objs(cluster: lab.Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Objects]:
    o = Objects(cluster, tmp_path_factory.mktemp("audit"))
    try:
        o.build()
        # the states the findings rely on, as the server recorded them
        assert not o.live("untracked")["metadata"].get("managedFields")
        assert {e["manager"] for e in o.live("bfa")["metadata"]["managedFields"]} == \
            {"before-first-apply", "argocd-controller"}
        assert "ancient-changes" in {e["manager"] for e in o.live("ancient")["metadata"]["managedFields"]}
        scale = [e for e in o.live("hpa")["metadata"]["managedFields"] if e.get("subresource") == "scale"]
        assert [(e["manager"], e["operation"]) for e in scale] == [("kubectl", "Update")]
        yield o
    finally:
        o.client.close()


@pytest.fixture
def env(cluster: lab.Cluster, tmp_path: Path) -> dict[str, str]:
    e = cluster.env()
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        e.pop(var, None)
    e["FIELDOWN_CACHE_DIR"] = str(tmp_path / "cache")
    return e


def cli(env: dict[str, str], *args: str) -> Result:
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def inproc(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Any:
    for k in ("KUBECONFIG", "FIELDOWN_CACHE_DIR", "KUBECACHEDIR"):
        if k in env:
            monkeypatch.setenv(k, env[k])

    def run(*args: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["audit", *args])
        return Result(code, out.getvalue(), err.getvalue())

    return run


def mine(doc: dict[str, Any], objs: Objects) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for item in doc["items"]:
        if item["namespace"] == objs.ns or item["name"] == objs.gizmo:
            out.setdefault(item["name"], []).append(item)
    return out


# --- the findings --------------------------------------------------------------------------------------


def test_findings_per_object(objs: Objects, env: dict[str, str]) -> None:
    r = cli(env, "audit", "-A", "-o", "json")
    assert r.code == 1, r.err  # hpa-replicas-trap and last-applied-size are errors
    assert r.err == ""
    doc = r.json()
    assert doc["kind"] == "FieldownAudit" and doc["version"] == 1
    assert doc["complete"] is True and doc["interrupted"] is False and doc["failed"] is True
    assert doc["scope"]["allNamespaces"] is True
    assert {"widgets.example.com", "gizmos.example.com", "gadgets.example.com",
            "customresourcedefinitions.apiextensions.k8s.io"} <= set(doc["scope"]["types"])
    found = mine(doc, objs)
    got = {name: [i["id"] for i in items] for name, items in found.items()}
    want = {k: v for k, v in EXPECTED.items() if v}
    want[objs.gizmo] = ["client-side-apply"]
    assert got == want

    for items in found.values():
        for i in items:
            assert list(i) == ["id", "severity", "apiVersion", "kind", "namespace", "name", "resource", "message",
                               "fix", "details"]
            assert "\n" not in i["message"]
            assert i["fix"] == "" or i["fix"].startswith("kubectl fieldown ")
    by = {(name, i["id"]): i for name, items in found.items() for i in items}
    # this module's objects only: an earlier run's, left on a shared lab, have the same names
    fixes = {o["name"]: o["fix"] for o in doc["objects"]
             if o["name"] in found and (o.get("namespace") == objs.ns or o["name"] == objs.gizmo)}
    ns = objs.ns

    # every finding of an object carries its one fix, checked for the applier in use
    for name, items in found.items():
        assert {i["fix"] for i in items} == {fixes[name]["commandLine"]}
    hpa = by[("hpa", "hpa-replicas-trap")]
    assert hpa["severity"] == "error"
    assert hpa["message"] == (".spec.replicas is in the last-applied annotation (2) and kubectl (subresource scale) "
                              "scales it: remove replicas from the manifest and the annotation")
    assert hpa["fix"] == f"kubectl fieldown strip-last-applied widget.example.com/hpa -n {ns} --field .spec.replicas"
    assert fixes["hpa"]["applier"] == "kubectl apply (client-side)" and fixes["hpa"]["verified"] is True
    assert fixes["hpa"]["edits"] == ["remove .spec.replicas from the manifest (its writer keeps it)"]

    # client-side objects stay client-side unless an applier is named: nothing to run for them
    for name in ("csa", "drift", objs.gizmo):
        assert fixes[name]["command"] == [] and fixes[name]["verified"] is True
        assert any("--applier" in n for n in fixes[name]["notes"]) or name == "drift"
    # the annotation of "big" must go, which client-side apply cannot do without
    assert fixes["big"]["verified"] is False and "needs the last-applied annotation" in fixes["big"]["problems"][0]
    # Argo CD manages these: it folds the client-side manager itself; before-first-apply it does not
    assert fixes["mixed"]["applier"] == "Argo CD (ServerSideApply=true)" and fixes["mixed"]["command"] == []
    assert by[("bfa", "before-first-apply")]["fix"] == (
        f"kubectl fieldown migrate widget.example.com/bfa -n {ns} --to server-side --from-manager before-first-apply "
        "--field-manager argocd-controller")
    # no applier at all: no fix, and it says why
    assert fixes["untracked"]["verified"] is False and "no applier" in fixes["untracked"]["problems"][0]

    gizmo = by[(objs.gizmo, "client-side-apply")]
    assert gizmo["namespace"] is None and gizmo["kind"] == "Gizmo"

    edit = by[("edit", "imperative-writer")]
    assert edit["message"] == "kubectl-edit owns .spec.color"
    assert edit["details"] == {"manager": "kubectl-edit", "subresources": [], "fields": [".spec.color"]}

    bfa = by[("bfa", "before-first-apply")]
    assert bfa["details"]["manager"] == "before-first-apply" and bfa["details"]["fields"] >= 1
    assert by[("ancient", "ancient-changes")]["severity"] == "info"

    big = by[("big", "last-applied-size")]
    assert big["severity"] == "error"
    assert 0.9 * 262144 < big["details"]["bytes"] < 262144

    drift = by[("drift", "last-applied-drift")]
    assert drift["message"] == ('1 field differs from the last-applied annotation: .spec.color '
                                '(annotation "red", live "green"): the next client-side apply restores the '
                                "annotation's values")

    summary = doc["summary"]
    assert summary["objects"] >= len(EXPECTED) + 1
    assert summary["objectsByType"]["widgets.example.com"] >= len(EXPECTED)
    assert summary["bySeverity"]["error"] >= 2
    assert summary["findings"] == len(doc["items"])


def test_imperative_writer_keeps_subresource_entries_apart(cluster: lab.Cluster, env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """One manager that patched the object and its /status has two managedFields entries: each is
    its own finding, and the status entry is never said to own a spec field (a bug merged them)."""
    objs = Objects(cluster, tmp_path)
    try:
        objs.apply_raw("both", {"color": "red"}, "argocd-controller")
        objs.kubectl("patch", "widget/both", "-n", objs.ns, "--type=merge", "-p", '{"spec":{"color":"blue"}}')
        objs.kubectl("patch", "widget/both", "-n", objs.ns, "--subresource=status", "--type=merge",
                     "-p", '{"status":{"replicas":3}}')
        entries = {(e["manager"], e.get("subresource", "")) for e in objs.live("both")["metadata"]["managedFields"]}
        assert {("kubectl-patch", ""), ("kubectl-patch", "status")} <= entries  # as the server recorded them
        r = cli(env, "audit", "-n", objs.ns, "-o", "json")
        found = [i for i in r.json()["items"] if i["id"] == "imperative-writer"]
        assert sorted((i["message"], i["details"]["subresources"], i["details"]["fields"]) for i in found) == [
            ("kubectl-patch (subresource status) owns .status.replicas", ["status"], [".status.replicas"]),
            ("kubectl-patch owns .spec.color", [], [".spec.color"]),
        ]
    finally:
        objs.client.close()


def test_namespace_selector_and_kinds_scope(objs: Objects, env: dict[str, str]) -> None:
    r = cli(env, "audit", "-n", objs.ns, "-l", "audit-case in (csa,drift)", "--kinds", "widgets", "-o", "json")
    doc = r.json()
    assert doc["scope"] == {"namespace": objs.ns, "allNamespaces": False, "selector": "audit-case in (csa,drift)",
                            "fieldManager": None, "types": ["widgets.example.com"]}
    assert doc["summary"]["objects"] == 2
    assert {(i["name"], i["id"]) for i in doc["items"]} == {
        ("csa", "client-side-apply"), ("drift", "client-side-apply"), ("drift", "last-applied-drift")}
    assert r.code == 0  # warnings only, --fail-on error
    # without -A the cluster-scoped types are not scanned
    r = cli(env, "audit", "-n", objs.ns, "-o", "json")
    assert all(t != "gizmos.example.com" for t in r.json()["scope"]["types"])
    assert {i["namespace"] for i in r.json()["items"]} == {objs.ns}


@pytest.mark.parametrize(("case", "fail_on", "code"), [
    ("clean", "info", 0),
    ("untracked", "info", 1),
    ("untracked", "warning", 0),
    ("edit", "warning", 1),
    ("edit", "error", 0),
    ("hpa", None, 1),  # the default is error
    ("hpa", "none", 0),
])
def test_fail_on_exit_codes(objs: Objects, inproc: Any, case: str, fail_on: str | None, code: int) -> None:
    args = ["-n", objs.ns, "--kinds", "widgets", "-l", f"audit-case={case}", "-o", "json"]
    if fail_on:
        args += ["--fail-on", fail_on]
    r = inproc(*args)
    assert r.code == code, r.err
    assert r.json()["failed"] is (code == 1)


def test_junit(objs: Objects, env: dict[str, str]) -> None:
    r = cli(env, "audit", "-n", objs.ns, "--kinds", "widgets", "-o", "junit", "--fail-on", "warning")
    assert r.code == 1
    root = ET.fromstring(r.out)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert suites["summary"].find("testcase") is not None
    expected_ids = {i for ids in EXPECTED.values() for i in ids}
    assert set(suites) == {"summary"} | expected_ids
    cases = {(s.get("name"), c.get("name")): c for s in root.findall("testsuite") for c in s.findall("testcase")}
    trap = cases[("hpa-replicas-trap", f"Widget {objs.ns}/hpa")]
    failure = trap.find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert "fix: kubectl fieldown strip-last-applied" in (failure.text or "")
    info = cases[("untracked", f"Widget {objs.ns}/untracked")]  # info is below --fail-on warning
    assert info.find("failure") is None and "info:" in (info.findtext("system-out") or "")
    total = sum(len(v) for v in EXPECTED.values()) + 1
    assert int(root.get("tests") or 0) == total
    assert int(root.get("failures") or 0) == sum(1 for ids in EXPECTED.values() for i in ids
                                                 if i not in ("ancient-changes", "untracked"))


def test_text_output_details(objs: Objects, inproc: Any) -> None:
    r = inproc("-n", objs.ns, "--kinds", "widgets", "--details")
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0].startswith(f"Audited {len(EXPECTED)} objects of 1 type (namespace {objs.ns}) in ")
    assert lines[0].endswith("2 errors, 9 warnings, 2 info")
    assert any(line.split()[:3] == ["error", "hpa-replicas-trap", "1"] for line in lines)
    assert f"By kind: Widget {sum(len(v) for v in EXPECTED.values())}" in lines
    assert f"Widget {objs.ns}/hpa" in lines
    i = lines.index(f"Widget {objs.ns}/hpa")
    assert lines[i + 1].startswith("  ERROR   hpa-replicas-trap  .spec.replicas is in the last-applied annotation")
    assert lines[i + 2].startswith("  WARNING client-side-apply  ")
    # one fix per object, after its findings
    assert lines[i + 3] == (f"  fix: kubectl fieldown strip-last-applied widget.example.com/hpa -n {objs.ns} "
                            "--field .spec.replicas")
    assert lines[i + 4] == "       then: remove .spec.replicas from the manifest (its writer keeps it)"
    assert "\x1b[" not in r.out  # not a terminal: no colours


def test_text_output_groups_findings_and_fixes(objs: Objects, inproc: Any) -> None:
    r = inproc("-n", objs.ns, "--kinds", "widgets")
    assert r.code == 1
    lines = r.out.splitlines()
    assert "Details" not in lines and f"Widget {objs.ns}/hpa" not in lines  # per object only with --details
    findings = lines[lines.index("Findings") + 1:lines.index("Fixes") - 1]
    # one line per finding id and message, the objects that have it on the next, worst first
    i = findings.index("WARNING client-side-apply  managed by client-side kubectl apply (the last-applied "
                       "annotation and manager kubectl-client-side-apply)")
    assert findings[i + 1] == f"        5 objects: Widget big, csa, drift, hpa, mixed -n {objs.ns}"
    assert findings[0].startswith("ERROR   hpa-replicas-trap  ")
    assert sum(1 for line in findings if "client-side-apply  " in line) == 1
    fixes = lines[lines.index("Fixes") + 1:]
    # the same fix for several objects is said once, with its objects
    nothing = "  fix: nothing to run: kubectl apply (client-side) keeps every value on its own"
    assert fixes.count(nothing) == 1
    assert fixes[fixes.index(nothing) - 1] == f"2 objects: Widget csa, drift -n {objs.ns}"
    assert fixes.count("       to plan the switch to server-side apply, audit with --applier (kubectl, argocd, "
                       "flux, helm, ssa)") == 2  # csa and drift together, hpa with its own command
    j = fixes.index(f"1 object: Widget hpa -n {objs.ns}")
    assert fixes[j + 1] == (f"  fix: kubectl fieldown strip-last-applied widget.example.com/hpa -n {objs.ns} "
                            "--field .spec.replicas")
    # -o json is unchanged by the grouping
    assert len(inproc("-n", objs.ns, "--kinds", "widgets", "-o", "json").json()["items"]) == \
        sum(len(v) for v in EXPECTED.values())


@pytest.mark.parametrize("output", ["json", "text", "junit"])
def test_the_audit_read_without_typer_reports_what_typer_reports(objs: Objects, inproc: Any, output: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """cli/auditfast.py reads this line; the same line through typer prints the same report."""
    import kubectl_fieldown.cli.main as cli_main

    args = ("-n", objs.ns, "--kinds", "widgets,gizmos", "-o", output, "--fail-on", "warning", "--details")
    fast = inproc(*args)
    with monkeypatch.context() as m:
        m.setattr(cli_main, "_without_typer", lambda _args: None)
        slow = inproc(*args)
    assert fast.code == slow.code == 1
    if output != "json":  # (the run's seconds are in the text and the JUnit report)
        seconds = re.compile(r'\d+\.\d+s\b|time="[0-9.]+"')
        fast, slow = (Result(r.code, seconds.sub("", r.out), r.err) for r in (fast, slow))
    assert (fast.out, fast.err) == (slow.out, slow.err)
    assert "client-side-apply" in fast.out


def test_ignore(objs: Objects, inproc: Any) -> None:
    r = inproc("-n", objs.ns, "--kinds", "widgets", "-o", "json", "--ignore", "client-side-apply",
               "--ignore", "hpa-replicas-trap", "--ignore", "last-applied-size")
    assert r.code == 0
    assert {i["id"] for i in r.json()["items"]} == {
        "mixed-appliers", "imperative-writer", "before-first-apply", "ancient-changes", "last-applied-drift",
        "untracked"}


# --- predicted conflicts --------------------------------------------------------------------------------


def test_predicted_conflicts_match_the_server(objs: Objects, env: dict[str, str], tmp_path: Path) -> None:
    d = tmp_path / "flux"
    d.mkdir()
    docs = [
        {"apiVersion": W, "kind": "Widget", "metadata": {"name": "edit", "namespace": objs.ns},
         "spec": {"color": "red", "replicas": 2}},
        {"apiVersion": W, "kind": "Widget", "metadata": {"name": "hpa", "namespace": objs.ns},
         "spec": {"color": "red", "replicas": 3}},
        {"apiVersion": W, "kind": "Widget", "metadata": {"name": "clean", "namespace": objs.ns},
         "spec": {"color": "red", "replicas": 2}},  # the same values: shared, no conflict
        {"apiVersion": W, "kind": "Widget", "metadata": {"name": "not-there-yet", "namespace": objs.ns},
         "spec": {"color": "red"}},  # created by the apply: nothing to conflict with
    ]
    (d / "widgets.yaml").write_text(yaml.safe_dump_all(docs))
    r = cli(env, "audit", "-n", objs.ns, "--kinds", "widgets", "--field-manager", "flux", "-f", str(d), "-o", "json")
    assert r.code == 1, r.err
    predicted = {i["name"]: i for i in r.json()["items"] if i["id"] == "predicted-conflict"}
    assert set(predicted) == {"edit", "hpa"}
    assert predicted["edit"]["details"]["conflicts"] == [
        {"path": ".spec.color", "manager": "kubectl-edit", "operation": "Update", "subresource": ""}]
    assert predicted["hpa"]["details"]["conflicts"] == [
        {"path": ".spec.replicas", "manager": "kubectl", "operation": "Update", "subresource": "scale"}]
    # the fix folds the owners of the manifest's fields (the imperative edit, the previous applier) into
    # flux, and names the manifest it was checked with: run without it, a migrate line would move only
    # what flux applied before (nothing) — the fix used to be a handover for that reason
    fix = predicted["edit"]["fix"]
    assert fix == (f"kubectl fieldown migrate widget.example.com/edit -n {objs.ns} --to server-side "
                   "--from-manager argocd-controller --from-manager kubectl-edit --field-manager flux "
                   f"--manifest {d / 'widgets.yaml'}")
    assert r.json()["scope"]["fieldManager"] == "flux"

    # the server agrees: a dry-run apply of each manifest by flux fails on exactly those fields
    for name, field in (("edit", ".spec.color"), ("hpa", ".spec.replicas")):
        doc = next(x for x in docs if x["metadata"]["name"] == name)
        proc = objs.cluster.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=flux", "-f", "-",
                                    input=json.dumps(doc), check=False)
        assert proc.returncode != 0
        assert "conflict" in proc.stderr.lower() and field in proc.stderr
    for name in ("clean", "not-there-yet"):
        doc = next(x for x in docs if x["metadata"]["name"] == name)
        objs.cluster.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=flux", "-f", "-",
                             input=json.dumps(doc))
    # the printed fix, run literally, makes flux's apply of the manifest go through
    done = cli(env, *shlex.split(fix)[2:])
    assert done.code == 0, done.out + done.err
    objs.cluster.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=flux", "-f", "-",
                         input=json.dumps(docs[0]))
    # and undo puts the conflict back (the objects are shared with the next tests)
    backups = next(line.split()[1] for line in done.out.splitlines() if line.startswith("backups: "))
    assert cli(env, "undo", backups).code == 0
    proc = objs.cluster.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=flux", "-f", "-",
                                input=json.dumps(docs[0]), check=False)
    assert proc.returncode != 0 and ".spec.color" in proc.stderr


def test_a_printed_fix_names_the_cluster_it_was_audited_in(objs: Objects, env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """An audit of another context than the current one (``--context``, ``--kubeconfig``) printed its
    fixes without them: run as printed they reached the current context — another cluster, where the
    object is not, or worse, is. Now they carry the flags the audit was given."""
    config = yaml.safe_load(objs.cluster.kubeconfig.read_text())
    lab_context = config["current-context"]
    user = config["contexts"][0]["context"]["user"]
    config["clusters"].append({"name": "nowhere", "cluster": {"server": "https://127.0.0.1:9"}})
    config["contexts"].append({"name": "other", "context": {"cluster": "nowhere", "user": user}})
    config["current-context"] = "other"
    kc = tmp_path / "two-contexts"
    kc.write_text(yaml.safe_dump(config))
    m = tmp_path / "edit.yaml"
    m.write_text(yaml.safe_dump({"apiVersion": W, "kind": "Widget", "metadata": {"name": "edit", "namespace": objs.ns},
                                 "spec": {"color": "red", "replicas": 2}}))
    env = {k: v for k, v in env.items() if k != "KUBECONFIG"}
    r = cli(env, "audit", "--kubeconfig", str(kc), "--context", lab_context, "-n", objs.ns, "--kinds", "widgets",
            "--field-manager", "flux", "-f", str(m), "-o", "json")
    assert r.code == 1, r.err
    (fix,) = {o["fix"]["commandLine"] for o in r.json()["objects"] if o["name"] == "edit"}
    assert fix.endswith(f" --manifest {m} --kubeconfig {kc} --context {lab_context}"), fix
    ran = cli(env, *shlex.split(fix)[2:], "--dry-run=client")
    assert ran.code == 0, ran.out + ran.err
    # the current context of that kubeconfig is not the lab: the same command without the flags fails
    bare = shlex.split(fix.removesuffix(f" --kubeconfig {kc} --context {lab_context}"))[2:]
    assert cli({**env, "KUBECONFIG": str(kc)}, *bare, "--dry-run=client").code != 0


def test_predicted_conflicts_outside_the_scan_are_fetched(objs: Objects, inproc: Any, tmp_path: Path) -> None:
    m = tmp_path / "edit.yaml"
    m.write_text(yaml.safe_dump({"apiVersion": W, "kind": "Widget", "metadata": {"name": "edit"},
                                 "spec": {"color": "red"}}))
    # -l selects only the clean object; the manifest's object is read on its own (namespace from -n)
    r = inproc("-n", objs.ns, "--kinds", "widgets", "-l", "audit-case=clean", "--field-manager", "flux",
               "-f", str(m), "-o", "json")
    doc = r.json()
    assert [(i["name"], i["id"]) for i in doc["items"] if i["id"] == "predicted-conflict"] == \
        [("edit", "predicted-conflict")]
    # it is audited like a scanned object: its other findings, its fix, and it counts
    assert {i["id"] for i in doc["items"] if i["name"] == "edit"} > {"predicted-conflict"}
    assert [o["name"] for o in doc["objects"]].count("edit") == 1
    clean = inproc("-n", objs.ns, "--kinds", "widgets", "-l", "audit-case=clean", "-o", "json").json()
    assert doc["summary"]["objects"] == clean["summary"]["objects"] + 1


def test_jobs_find_what_one_process_finds(objs: Objects, env: dict[str, str], tmp_path: Path) -> None:
    """``--jobs``: the -f objects checked in worker processes (forked: tests/audit/test_jobs.py) give
    the report one process gives, on every history of the module's objects."""
    live = objs.cluster.kubectl_json("get", "widgets", "-n", objs.ns)["items"]
    docs = [{"apiVersion": W, "kind": "Widget", "metadata": {"name": o["metadata"]["name"], "namespace": objs.ns},
             "spec": {"color": "red", "replicas": 2, "labels": {"team": "x"}}} for o in live]
    assert len(docs) >= 10
    (tmp_path / "widgets.yaml").write_text(yaml.safe_dump_all(docs))
    args = ["audit", "-n", objs.ns, "--kinds", "widgets", "--field-manager", "argocd-controller", "-f",
            str(tmp_path / "widgets.yaml"), "-o", "json"]
    alone = cli(env, *args, "--jobs", "1")
    shared = cli({**env, "FIELDOWN_DEBUG": "1"}, *args, "--jobs", "3")
    assert (alone.code, shared.code) == (1, 1), alone.err + shared.err
    assert "checked by 3 worker processes; 0 batches of them again in this one" in shared.err
    one = alone.json()
    assert one == shared.json()  # (the JSON report holds no timing)
    # what was compared is the engine's work: conflicts predicted, fixes chosen and verified (an object
    # whose apply alone keeps every value and that has no finding gets no entry)
    assert "predicted-conflict" in {i["id"] for i in one["items"]}
    assert len([o for o in one["objects"] if o.get("fix")]) >= len(docs) // 2


# --- usage errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["--kinds", "nosuchthings"], 'error: --kinds: the server doesn\'t have a resource type "nosuchthings"'),
    (["-f", "x.yaml"], "error: -f names the manifests of the new applier: name it with --applier or --field-manager"),
    (["--ignore", "bogus"], "error: --ignore: unknown finding id 'bogus'"),
    (["--concurrency", "0"], "error: --concurrency must be between 1 and 32, not 0"),
    (["--jobs", "0"], "error: --jobs must be between 1 and 64, not 0"),
    (["--jobs", "many"], "error: --jobs must be a whole number or auto, not 'many'"),
    # flags are checked before the -f manifests are read
    (["--jobs", "0", "--field-manager", "x", "-f", "/nonexistent/dir"], "error: --jobs must be between 1 and 64"),
    (["--fail-on", "bogus"], "error: invalid value for '--fail-on'"),
    (["--field-manager", "x", "-f", "/nonexistent/dir"], "error: /nonexistent/dir: "),
])
def test_usage_errors_exit_2(objs: Objects, inproc: Any, args: list[str], message: str) -> None:
    r = inproc(*args)
    assert r.code == 2
    assert r.err.startswith(message), r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def test_a_type_gone_since_discovery_was_cached_is_not_an_error(cluster: lab.Cluster, env: dict[str, str]) -> None:
    """Discovery is cached for hours, as kubectl caches it: a CRD deleted since (an operator
    uninstalled) is still listed, and its LIST answers 404. The audit asks discovery again: the type
    is gone, so there is nothing to audit, and no ``type-error`` (which would fail the run)."""
    group = f"gone{uuid.uuid4().hex[:8]}.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"things.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    cluster.apply_crd(crd)
    ns = f"gone-{uuid.uuid4().hex[:8]}"
    first = cli(env, "audit", "-n", ns, "-o", "json")
    assert f"things.{group}" in first.json()["scope"]["types"], first.err  # the cache now names it
    cluster.kubectl("delete", "crd", f"things.{group}", "--wait=true")
    deadline = time.monotonic() + 60
    while cluster.kubectl("get", f"things.{group}", "-n", ns, check=False).returncode == 0:
        assert time.monotonic() < deadline, "the deleted CRD is still served"
        time.sleep(0.2)
    r = cli(env, "audit", "-n", ns, "-o", "json")
    doc = r.json()
    assert [i for i in doc["items"] if i["id"] == "type-error"] == [], doc["items"]
    assert r.code == 0, r.err
    # discovery was asked again: the next run does not list the type at all
    assert f"things.{group}" not in cli(env, "audit", "-n", ns, "-o", "json").json()["scope"]["types"]


def test_a_type_created_since_discovery_was_cached_is_audited(cluster: lab.Cluster, env: dict[str, str],
                                                             tmp_path: Path) -> None:
    """An operator installed after the last run: its CRD is not in the cached discovery, which is
    kept for hours. ``audit`` without ``--kinds`` goes through every type, so it asks the server
    first (two 304s when nothing changed), as ``kubectl api-resources`` does, and audits the new
    type's objects."""
    group = f"new{uuid.uuid4().hex[:8]}.example.com"
    ns = f"new-{uuid.uuid4().hex[:8]}"
    first = cli(env, "audit", "-n", ns, "-o", "json")
    assert first.code == 0 and f"things.{group}" not in first.json()["scope"]["types"], first.err
    cluster.apply_crd({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                       "metadata": {"name": f"things.{group}"},
                       "spec": {"group": group, "scope": "Namespaced",
                                "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                                    "openAPIV3Schema": {"type": "object",
                                                        "x-kubernetes-preserve-unknown-fields": True}}}]}})
    try:
        thing = tmp_path / "thing.yaml"
        thing.write_text(json.dumps({"apiVersion": f"{group}/v1", "kind": "Thing",
                                     "metadata": {"name": "t", "namespace": ns}, "spec": {"size": 1}}))
        cluster.kubectl("apply", "--server-side", "--field-manager", "deployer", "-f", str(thing))
        r = cli(env, "audit", "-n", ns, "-o", "json")
        assert r.code == 0, r.err
        doc = r.json()
        assert f"things.{group}" in doc["scope"]["types"]
        assert doc["summary"]["objects"] == 1
    finally:
        cluster.kubectl("delete", "crd", f"things.{group}", "--wait=false", check=False)


_FIRST_LIST_PROBE = """
import sys
from kubectl_fieldown.kube.client import ClusterClient
seen = []
original = ClusterClient.list_pages
def list_pages(self, *a, **k):
    if not seen:
        seen.append(sorted(m for m in sys.modules if m.split(".")[:2] in (["kubectl_fieldown", "audit"],
                                                                          ["kubectl_fieldown", "appliers"],
                                                                          ["kubectl_fieldown", "fieldmanager"])))
        sys.stderr.write("ENGINE-AT-FIRST-LIST " + " ".join(seen[0]) + "\\n")
    return original(self, *a, **k)
ClusterClient.list_pages = list_pages
from kubectl_fieldown.cli.main import main
code = main(sys.argv[1:])
sys.stderr.write("ENGINE-AFTER " + str("kubectl_fieldown.audit" in sys.modules) + "\\n")
sys.exit(code)
"""


def test_the_list_starts_before_the_engine_is_loaded(objs: Objects, env: dict[str, str]) -> None:
    """A cold start's imports of the audit engine overlap the server's first pages (issue 24): when
    the first LIST goes out, neither the audit rules nor the appliers' simulation are loaded yet."""
    proc = subprocess.run([sys.executable, "-c", _FIRST_LIST_PROBE, "audit", "-n", objs.ns, "-o", "json"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    lines = {ln.split(" ", 1)[0]: ln for ln in proc.stderr.splitlines() if ln.startswith("ENGINE-")}
    assert lines.get("ENGINE-AT-FIRST-LIST") == "ENGINE-AT-FIRST-LIST ", proc.stderr
    assert lines.get("ENGINE-AFTER") == "ENGINE-AFTER True", proc.stderr  # the probe saw a real audit
    assert json.loads(proc.stdout)["kind"] == "FieldownAudit"


def _owns(entries: list[dict[str, Any]], field: str) -> list[str]:
    """The managers whose entry records ``spec.<field>``."""
    return [e["manager"] for e in entries if f"f:{field}" in ((e.get("fieldsV1") or {}).get("f:spec") or {})]


def test_a_dropped_field_the_schema_defaults_goes_back_to_its_default(cluster: lab.Cluster, env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    """A field the manifest drops that the schema defaults is pruned and defaulted again in the same
    write, owned by nobody: that is the deletion the user asked for. ``conflicts`` says so
    (``defaulted``, not "never pruned"); ``audit`` verifies the next apply (no value at risk) and does
    not call the default an unclaimed or a kept field — after a server-side applier drops ``mode``,
    after client-side apply created the object (its manager owned the default until ``kubectl apply
    --server-side`` folded it), and when client-side apply itself drops ``mode`` (its patch's null is
    defaulted back, owned by its manager). The real server decides each claim."""
    group = f"dflt{uuid.uuid4().hex[:8]}.example.com"
    cluster.apply_crd(defaulting_crd(group))
    ns = f"dflt-{uuid.uuid4().hex[:8]}"
    resource = f"things.{group}"

    def doc(name: str, spec: dict[str, Any]) -> Path:
        f = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}.yaml"
        f.write_text(json.dumps({"apiVersion": f"{group}/v1", "kind": "Thing",
                                 "metadata": {"name": name, "namespace": ns}, "spec": spec}))
        return f

    def audited(name: str, manifest: Path, *applier: str) -> tuple[int, list[str], list[dict[str, Any]]]:
        """The exit code, the object's findings and its fix (none listed: no finding)."""
        r = cli(env, "audit", "-n", ns, "--kinds", resource, "-f", str(manifest), *applier, "-o", "json")
        assert r.code in (0, 1), r.err
        report = r.json()
        return (r.code, [i["id"] for i in report["items"] if i["name"] == name],
                [o["fix"] for o in report["objects"] if o["name"] == name])

    try:
        # a server-side applier's own field, dropped
        cluster.kubectl("apply", "--server-side", "--field-manager", "deployer", "-f",
                        str(doc("a", {"image": "img:1", "mode": "manual"})))
        nxt = doc("a", {"image": "img:1"})
        r = cli(env, "conflicts", "-f", str(nxt), "--field-manager", "deployer", "-o", "json")
        assert r.code == 0, r.err
        (item,) = r.json()["items"]
        assert item["deleted"] == [".spec.mode"]
        assert item["defaulted"] == [{"path": ".spec.mode", "value": "auto"}]
        assert item["neverPruned"] == []
        # nothing to say: the next apply does what the manifest asks (before: "no safe fix", the default
        # taken for a value nobody asked to change)
        assert audited("a", nxt, "--applier", "kubectl", "--field-manager", "deployer") == (0, [], [])
        cluster.kubectl("apply", "--server-side", "--field-manager", "deployer", "-f", str(nxt))
        real = cluster.kubectl_json("get", resource, "a", "-n", ns, "--show-managed-fields")
        assert real["spec"] == item["result"]["object"]["spec"] == {"image": "img:1", "mode": "auto"}
        assert _owns(real["metadata"]["managedFields"], "mode") == []

        # client-side apply created it: its manager owned the default until kubectl folds it
        cluster.kubectl("apply", "-f", str(doc("b", {"image": "img:1"})))
        created = cluster.kubectl_json("get", resource, "b", "-n", ns, "--show-managed-fields")
        assert _owns(created["metadata"]["managedFields"], "mode") == ["kubectl-client-side-apply"]
        nxt = doc("b", {"image": "img:2"})
        code, ids, fixes = audited("b", nxt, "--applier", "kubectl")
        # client-side apply is a warning; the default is no unclaimed field (before: an error)
        assert (code, ids) == (0, ["client-side-apply"]), (ids, fixes)
        assert [f["verified"] for f in fixes] == [True], fixes
        r = cli(env, "conflicts", "-f", str(nxt), "--applier", "kubectl", "-o", "json")
        assert r.code == 0, r.err
        (item,) = r.json()["items"]
        assert ".spec.mode" not in [p["path"] for p in item["neverPruned"]], item
        cluster.kubectl("apply", "--server-side", "-f", str(nxt))
        real = cluster.kubectl_json("get", resource, "b", "-n", ns, "--show-managed-fields")
        assert real["spec"] == item["result"]["object"]["spec"] == {"image": "img:2", "mode": "auto"}

        # client-side apply drops it: its three-way patch sends null, the server sets the default again,
        # and the client-side manager owns it (the comparison sees a change, not a removal)
        cluster.kubectl("apply", "-f", str(doc("c", {"image": "img:1", "mode": "manual"})))
        nxt = doc("c", {"image": "img:1"})
        r = cli(env, "conflicts", "-f", str(nxt), "--applier", "kubectl-client-side", "-o", "json")
        assert r.code == 0, r.err
        (item,) = r.json()["items"]
        assert (item["deleted"], item["defaulted"], item["neverPruned"]) == (
            [".spec.mode"], [{"path": ".spec.mode", "value": "auto"}], []), item
        # before: dropped-fields-stay, an error ("no later apply will delete it")
        assert audited("c", nxt, "--applier", "kubectl-client-side")[:2] == (0, ["client-side-apply"])
        cluster.kubectl("apply", "-f", str(nxt))
        real = cluster.kubectl_json("get", resource, "c", "-n", ns, "--show-managed-fields")
        assert real["spec"] == item["result"]["object"]["spec"] == {"image": "img:1", "mode": "auto"}
        assert _owns(real["metadata"]["managedFields"], "mode") == ["kubectl-client-side-apply"]
    finally:
        cluster.kubectl("delete", "crd", f"things.{group}", "--wait=false", check=False)
