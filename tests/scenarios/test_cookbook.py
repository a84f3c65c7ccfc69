"""The cookbook (docs/cookbook.md) played on the real API server, following only the tool's words.

Each scenario builds an object the way a team gets there (real kubectl: client-side and server-side
apply, ``scale``, ``label``, ``patch``; raw requests for controllers, Helm 3 and GitOps appliers),
then the user changes the manifest and asks the tool for the fix for the applier they use next:

* ``kubectl fieldown audit --applier KIND -f next.yaml -o json`` (the one fix per object), or
  ``kubectl fieldown migrate --for KIND`` (which, when it refuses, names a fix that keeps every value),
  or ``kubectl fieldown conflicts -f next.yaml`` (its ways out: the checked fold line, the scaler's field);
* every command line the tool prints is run **literally** (``shlex.split`` of the printed line,
  through kubectl's plugin mechanism: ``kubectl fieldown ...``) and must exit 0; the manifest edits it
  asks for (``remove PATH from the manifest``) are made;
* then the applier applies the manifest with its own request sequence (tests/appliers/replay.py: real
  kubectl for kubectl, raw HTTP as Argo CD, Flux and Helm send it) and must succeed;
* and the object must hold: every value the manifest sets, none of the fields the user removed from
  the manifest, and every other value it had before (a scaler's replicas, a label someone else set).

That last check is computed here from the objects alone (no kubectl_fieldown code judges itself).
A table of the outcomes is written to ``$FIELDOWN_COOKBOOK_TABLE`` when set.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from appliers.replay import Appliers, Target, Wire, wait_past_newest_entry
from engine.scenarios import object_path

from kubectl_fieldown.appliers import Applier

pytestmark = pytest.mark.cluster

LA = "kubectl.kubernetes.io/last-applied-configuration"
GV = "example.com/v1"


# --- the lab, as a user drives it --------------------------------------------------------------


class Lab:
    """One scenario's namespace on the lab server: real kubectl, raw requests, and our plugin."""

    def __init__(self, cluster: lab.Cluster, wire: Wire, appliers: Appliers, tmp: Path, ns: str) -> None:
        self.cluster = cluster
        self.wire = wire
        self.appliers = appliers
        self.tmp = tmp
        self.ns = ns
        self.files = 0
        self.commands: list[str] = []
        bindir = Path(sys.executable).parent
        self.env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1",
                    "FIELDOWN_BACKUP_DIR": str(tmp / "backups"), "FIELDOWN_CACHE_DIR": str(tmp / "cache")}

    def doc(self, name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
        md: dict[str, Any] = {"name": name, "namespace": self.ns}
        if labels:
            md["labels"] = dict(labels)
        return {"apiVersion": GV, "kind": "Widget", "metadata": md, "spec": copy.deepcopy(spec)}

    def file(self, doc: dict[str, Any]) -> Path:
        self.files += 1
        p = self.tmp / f"{doc['metadata']['name']}-{self.files}.yaml"
        p.write_text(yaml.safe_dump(doc))
        return p

    def kubectl(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.cluster.kubectl(*args, input=input, env=self.env)

    def csa(self, doc: dict[str, Any]) -> None:
        self.kubectl("apply", "-f", str(self.file(doc)))

    def ssa(self, doc: dict[str, Any], manager: str = "kubectl", force: bool = False) -> None:
        argv = ["apply", "--server-side", "-f", str(self.file(doc))]
        if manager != "kubectl":
            argv.append(f"--field-manager={manager}")
        if force:
            argv.append("--force-conflicts")
        self.kubectl(*argv)

    def scale(self, name: str, replicas: int) -> None:
        self.kubectl("scale", f"widgets.example.com/{name}", "-n", self.ns, f"--replicas={replicas}")

    def label(self, name: str, pair: str) -> None:
        self.kubectl("label", f"widgets.example.com/{name}", "-n", self.ns, pair)

    def patch(self, name: str, body: dict[str, Any]) -> None:
        """``kubectl patch --type merge`` (manager kubectl-patch)."""
        self.kubectl("patch", f"widgets.example.com/{name}", "-n", self.ns, "--type=merge", "-p", json.dumps(body))

    def path(self, name: str, sub: str = "") -> str:
        return object_path("Widget", self.ns, name, sub)

    def raw(self, method: str, path: str, body: Any, manager: str, content_type: str,
            query: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
        resp = self.wire.send(method, path, body, content_type,
                              query=[("fieldManager", manager), *query] if manager else list(query))
        assert resp.status < 300, f"{method} {path} as {manager}: {resp.status} {resp.body}"
        assert isinstance(resp.body, dict)
        return resp.body

    def apply_as(self, doc: dict[str, Any], manager: str, force: bool = False) -> None:
        """A server-side apply as a controller or GitOps tool sends it."""
        q = (("force", "true"),) if force else ()
        self.raw("PATCH", self.path(doc["metadata"]["name"]), doc, manager, "application/apply-patch+yaml", q)

    def create_as(self, doc: dict[str, Any], manager: str) -> None:
        """A create by an Update manager (Helm 3, an operator)."""
        self.raw("POST", object_path("Widget", self.ns), doc, manager, "application/json")

    def merge_patch_as(self, name: str, body: dict[str, Any], manager: str, sub: str = "") -> None:
        self.raw("PATCH", self.path(name, sub), body, manager, "application/merge-patch+json")

    def live(self, name: str) -> dict[str, Any]:
        obj = self.wire.get(self.path(name))
        assert obj is not None
        return obj

    def fieldown(self, line: str) -> subprocess.CompletedProcess[str]:
        """A command line as the tool printed it, run as the user would (kubectl's plugin lookup)."""
        words = shlex.split(line)
        assert words[:2] == ["kubectl", "fieldown"], line
        self.commands.append(line)
        env = {**self.cluster.env(), **self.env, "KUBECONFIG": str(self.cluster.kubeconfig)}
        return subprocess.run([str(self.cluster.kubectl_bin), *words[1:]], capture_output=True, text=True, env=env,
                              timeout=300, check=False)


# --- what the object must hold afterwards -------------------------------------------------------


def _leaves(v: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(v, dict) and v:
        for k, x in v.items():
            yield from _leaves(x, (*prefix, k))
    else:
        yield prefix, v  # lists are compared whole: the scenarios never share a list between writers


def _values(obj: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """spec, status, labels and annotations (not the last-applied record, which is bookkeeping)."""
    md = obj.get("metadata") or {}
    out: dict[tuple[str, ...], Any] = {}
    for top in ("spec", "status"):
        if top in obj:
            out.update(dict(_leaves(obj[top], (top,))))
    for m in ("labels", "annotations"):
        for k, v in (md.get(m) or {}).items():
            if k != LA:
                out[("metadata", m, k)] = v
    return out


def problems_after(before: dict[str, Any], manifest: dict[str, Any], removed: list[tuple[str, ...]],
                   after: dict[str, Any]) -> list[str]:
    """What is wrong with ``after``: a value of the manifest not set, a removed field still there, or
    any other value of ``before`` gone or changed."""
    want = _values(manifest)
    was = _values(before)
    got = _values(after)
    out = [f"{'.'.join(p)}: the manifest sets {v!r}, the object has {got.get(p, '<unset>')!r}"
           for p, v in want.items() if got.get(p, "<unset>") != v]
    for p in removed:
        if any(q[:len(p)] == p for q in got):
            out.append(f"{'.'.join(p)}: removed from the manifest but still set")
    for p, v in was.items():
        if p in want or any(p[:len(r)] == r for r in removed):
            continue
        if any(p[:len(w)] == w or w[:len(p)] == p for w in want):
            continue  # under a value the manifest sets (a list, a map it replaces)
        if got.get(p, "<unset>") != v:
            out.append(f"{'.'.join(p)}: was {v!r}, now {got.get(p, '<unset>')!r} (nobody asked)")
    return out


# --- the scenarios -------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    symptom: str
    applier: str
    """``KIND`` or ``KIND:MANAGER`` as ``--applier``/``--for`` take it; the applier of the next apply."""
    history: Callable[[Lab, str], dict[str, Any]]
    """Builds the object; returns the manifest the user applied last (the one the user edits)."""
    edit: Callable[[dict[str, Any]], list[tuple[str, ...]]] = lambda doc: []
    """The user's change to that manifest (in place); returns the fields they removed."""
    via: str = "audit"
    """``audit`` or ``migrate --for``: where the user asks for the fix."""
    extra: list[str] = field(default_factory=list)
    """More words for the command that suggests the fix (audit's --field-manager, --for's --from-manager)."""


BASE = {"replicas": 2, "color": "blue", "args": ["--port=80"]}


def _drop(*path: str) -> Callable[[dict[str, Any]], list[tuple[str, ...]]]:
    def edit(doc: dict[str, Any]) -> list[tuple[str, ...]]:
        node = doc
        for k in path[:-1]:
            node = node[k]
        node.pop(path[-1])
        return [tuple(path)]
    return edit


def _leave_replicas(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    """The user takes replicas out of the manifest to leave them to the scaler: they must stay."""
    doc["spec"].pop("replicas")
    return []


def _csa_scaled_labelled(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.csa(doc)
    s.scale(n, 7)
    s.label(n, "team=payments")
    return doc


def _csa_then(extra: Callable[[Lab, str], None] | None = None,
              spec: dict[str, Any] | None = None) -> Callable[[Lab, str], dict[str, Any]]:
    def history(s: Lab, n: str) -> dict[str, Any]:
        doc = s.doc(n, spec if spec is not None else {**BASE, "labels": {"tier": "web"}})
        s.csa(doc)
        if extra is not None:
            extra(s, n)
        return doc
    return history


def _hpa(s: Lab, n: str) -> None:
    s.merge_patch_as(n, {"spec": {"replicas": 9}}, "horizontal-pod-autoscaler", "scale")


def _ssa_then_scale(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.ssa(doc)
    s.scale(n, 4)
    return doc


def _helm3(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}}, labels={"app.kubernetes.io/managed-by": "Helm"})
    s.create_as(doc, "helm")
    _hpa(s, n)
    return doc


def _kustomization_then_release(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.apply_as(doc, "kustomize-controller", force=True)
    s.apply_as(doc, "helm-controller", force=True)
    return doc


def _reset_then_apply(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.create_as(doc, "operator")
    s.merge_patch_as(n, {"metadata": {"managedFields": [{}]}}, "")
    s.apply_as(s.doc(n, {"color": "blue"}), "ci")
    return s.doc(n, {"color": "blue"})


def _edited_then_ssa(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.ssa(doc)
    s.patch(n, {"spec": {"color": "green"}})
    return doc


def _edited_then_ssa_ci(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.ssa(doc, manager="ci")
    s.patch(n, {"spec": {"color": "green"}})
    return doc


def _ssa_custom(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.ssa(doc, manager="ci")
    return doc


def _lac_drift(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.csa(doc)
    s.patch(n, {"spec": {"color": "green", "labels": None}})
    return doc


def _big_lac(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "config": {"blob": "x" * 200_000}})
    s.ssa(doc)  # the annotation alone would be close to the limit: applied server-side first
    s.merge_patch_as(n, {"metadata": {"annotations": {LA: json.dumps(doc)}}}, "kubectl-client-side-apply")
    return doc


def _ancient(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.csa(doc)
    s.patch(n, {"spec": {"strategy": {"type": "Recreate"}}})
    return doc


def _set_color(color: str) -> Callable[[dict[str, Any]], list[tuple[str, ...]]]:
    def edit(doc: dict[str, Any]) -> list[tuple[str, ...]]:
        doc["spec"]["color"] = color
        return []
    return edit


CASES: list[Case] = [
    Case("csa-field-stuck", "after switching a client-side applied object to server-side apply (a CI job), a "
         "field removed from the manifest is never deleted", "ssa:ci", _csa_then(), _drop("spec", "labels"),
         extra=["--field-manager", "ci"]),
    Case("scale-then-ssa-conflict", "kubectl scale, then a server-side apply of the manifest with replicas "
         "answers 409", "ssa:ci", _csa_then(lambda s, n: s.scale(n, 5)), extra=["--field-manager", "ci"]),
    Case("hpa-replicas-reset", "every plain kubectl apply resets the replicas an HPA set", "kubectl-client-side",
         _csa_then(_hpa)),
    Case("csa-scale-label-to-kubectl-ssa", "after kubectl scale and kubectl label, switching to kubectl apply "
         "--server-side with a manifest without replicas deletes replicas and the label", "kubectl",
         _csa_scaled_labelled, _leave_replicas),
    Case("label-lost-under-flux", "Flux's first sync deletes a label set with kubectl label", "flux",
         _csa_then(lambda s, n: s.label(n, "team=payments"))),
    Case("label-lost-under-flux-migrate-for", "the same, prepared with migrate --for flux", "flux",
         _csa_then(lambda s, n: s.label(n, "team=payments")), via="migrate --for"),
    Case("helm3-to-helm4", "Helm 4's first server-side upgrade of a Helm 3 release conflicts with the HPA",
         "helm", _helm3, _drop("spec", "labels")),
    Case("helm3-to-helm4-migrate-for", "the same, prepared with migrate --for helm", "helm", _helm3,
         _drop("spec", "labels"), via="migrate --for"),
    Case("argocd-switch-with-scaler", "Argo CD's forced sync resets the replicas kubectl scale set", "argocd",
         _csa_then(lambda s, n: s.scale(n, 6)), _drop("spec", "labels")),
    Case("argocd-switch-migrate-for", "a client-side applied object prepared for Argo CD ahead of its sync",
         "argocd", _csa_then(), _drop("spec", "labels"), via="migrate --for"),
    Case("kustomization-to-helmrelease", "after moving an object from a Kustomization to a HelmRelease, a field "
         "removed from the chart stays (the old applier's Apply entry)", "flux:helm-controller",
         _kustomization_then_release, _drop("spec", "labels")),
    Case("ssa-then-scale-same-manager", "kubectl scale after kubectl apply --server-side: the next apply "
         "conflicts with kubectl itself", "kubectl", _ssa_then_scale),
    Case("before-first-apply-after-reset", "after managedFields were reset, the first apply leaves "
         "before-first-apply owning everything, and nothing is pruned", "ssa:ci", _reset_then_apply,
         extra=["--field-manager", "ci"]),
    Case("imperative-edit-conflict", "kubectl patch changed a field the manifest sets: the next server-side "
         "apply answers 409", "kubectl", _edited_then_ssa, _set_color("red")),
    Case("imperative-edit-conflict-from-conflicts", "the same 409, fixed from the ways out that conflicts prints",
         "ssa:ci", _edited_then_ssa_ci, _set_color("red"), via="conflicts"),
    Case("scale-then-ssa-conflict-from-conflicts", "the scale conflict, fixed from the ways out that conflicts "
         "prints", "ssa:ci", _csa_then(lambda s, n: s.scale(n, 5)), via="conflicts"),
    Case("ssa-to-csa-downgrade", "going back to plain kubectl apply from server-side apply with a custom "
         "manager: the field removed from the manifest stays", "kubectl-client-side", _ssa_custom,
         _drop("spec", "labels")),
    Case("last-applied-drift", "the last-applied annotation no longer says what is live (kubectl patch)",
         "kubectl", _lac_drift, _drop("spec", "args")),
    Case("last-applied-size", "the last-applied annotation is near the 256 KiB limit", "kubectl", _big_lac,
         _drop("spec", "args")),
    Case("ancient-update-manager", "a field set by kubectl patch long ago stays after a switch to server-side "
         "apply", "kubectl", _ancient, _drop("spec", "color")),
]


@dataclass
class Outcome:
    case: Case
    fix: list[str] = field(default_factory=list)
    result: str = ""


OUTCOMES: list[Outcome] = []


@pytest.fixture(scope="module")
def tools(cluster: lab.Cluster) -> Iterator[tuple[Wire, Appliers]]:
    wire = Wire(str(cluster.kubeconfig))
    yield wire, Appliers(wire, cluster.kubectl)
    table = os.environ.get("FIELDOWN_COOKBOOK_TABLE")
    if table:
        rows = ["| scenario | applier | fix suggested (run literally) | outcome |", "|---|---|---|---|"]
        for o in OUTCOMES:
            fix = "<br>".join(f"`{f}`" for f in o.fix) or "nothing to run"
            rows.append(f"| {o.case.id} | {o.case.applier} | {fix} | {o.result} |")
        Path(table).write_text("\n".join(rows) + "\n")


def _applier(text: str) -> Applier:
    kind, _, manager = text.partition(":")
    return Applier.of(kind, manager or None)


def _suggestion(s: Lab, case: Case, name: str, manifest: Path) -> tuple[list[str], list[str]]:
    """The command lines and manifest edits the tool suggests, as it prints them."""
    kind = case.applier.partition(":")[0]
    manager = case.applier.partition(":")[2]
    if case.via == "audit":
        argv = ["kubectl", "fieldown", "audit", "--kinds", "widgets", "-n", s.ns, "--applier", kind,
                *(["--field-manager", manager] if manager and "--field-manager" not in case.extra else []),
                *case.extra, "-f", str(manifest), "-o", "json", "--fail-on", "none"]
        proc = s.fieldown(shlex.join(argv))
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        fixes = [o["fix"] for o in report["objects"] if o["name"] == name]
        if not fixes:
            return [], []
        fix = fixes[0]
        assert fix["verified"], f"no verified fix: {fix['problems']}"
        return ([fix["commandLine"]] if fix["commandLine"] else []), list(fix["edits"])
    if case.via == "conflicts":
        # the ways out of each conflict: the checked fold line if there is one, else the scaler's field
        # to leave out of the manifest
        argv = ["kubectl", "fieldown", "conflicts", "-f", str(manifest),
                *(["--field-manager", manager or Applier.of(kind).manager] if kind in ("ssa", "kubectl") else
                  ["--applier", case.applier])]
        proc = s.fieldown(shlex.join(argv))
        assert proc.returncode in (0, 1), proc.stderr
        lines, edits = [], []
        for text in proc.stdout.splitlines():
            if "(checked): kubectl fieldown " in text:
                lines.append("kubectl fieldown " + text.split("(checked): kubectl fieldown ", 1)[1].strip())
            elif "it scales)" in text and "remove " in text:
                path = text.split("remove ", 1)[1].split(" ", 1)[0]
                edits.append(f"remove {path} from the manifest")
        assert proc.returncode == 0 or lines or edits, f"conflicts predicted without a way out:\n{proc.stdout}"
        return lines, edits
    # migrate --for: run it; when it refuses, it names the fix that keeps every value
    line = shlex.join(["kubectl", "fieldown", "migrate", "-f", str(manifest), "--for", case.applier, *case.extra])
    proc = s.fieldown(line)
    if proc.returncode == 0:
        return [line], [t.strip().removeprefix("then: ") for t in proc.stdout.splitlines()
                        if t.strip().startswith("then: ")]
    lines, edits = [], []
    for text in proc.stdout.splitlines():
        text = text.strip()
        if text.startswith("instead, this keeps every value: "):
            lines.append(text.removeprefix("instead, this keeps every value: "))
        elif text.startswith(("then: ", "instead: ")):
            edits.append(text.split(": ", 1)[1])
    assert lines or edits, f"migrate --for refused without a fix:\n{proc.stdout}{proc.stderr}"
    # after the fix, the migration itself (it must now pass its own check)
    return [*lines, line], edits


def _edited(doc: dict[str, Any], edits: list[str]) -> dict[str, Any]:
    """The manifest after the edits the tool asked for (``remove .a.b from the manifest ...``)."""
    out = copy.deepcopy(doc)
    for e in edits:
        assert e.startswith("remove ."), e
        path = e.removeprefix("remove ").split(" from ")[0].lstrip(".").split(".")
        node = out
        for k in path[:-1]:
            node = node.get(k, {})
        node.pop(path[-1], None)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_following_the_tool_loses_nothing(case: Case, cluster: lab.Cluster, tools: tuple[Wire, Appliers],
                                          tmp_path: Path) -> None:
    wire, appliers = tools
    ns = f"cook-{uuid.uuid4().hex[:8]}"
    wire.send("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    s = Lab(cluster, wire, appliers, tmp_path, ns)
    name = "w"
    previous = case.history(s, name)
    nxt = copy.deepcopy(previous)
    removed = case.edit(nxt)
    before = s.live(name)
    outcome = Outcome(case)
    OUTCOMES.append(outcome)

    lines, edits = _suggestion(s, case, name, s.file(nxt))
    outcome.fix = lines + edits
    for line in lines:
        if line in s.commands:
            continue  # migrate --for when it already ran and wrote
        proc = s.fieldown(line)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}{proc.stderr}"
    applied = _edited(nxt, edits)

    live = s.live(name)
    wait_past_newest_entry(wire, live)
    rep = appliers.play(_applier(case.applier), Target("Widget", name, ns), applied)
    failed = [f"{x.verb} as {x.manager or '-'}: {x.status} {x.message}" for x in rep.sent
              if x.status >= 400 and not x.dry_run]
    assert rep.rc == 0 and not failed, f"the applier's next apply failed: {failed} {rep.stderr}"
    assert rep.final is not None
    wrong = problems_after(before, applied, removed, rep.final)
    outcome.result = "kept every value, removed what the manifest dropped" if not wrong else "; ".join(wrong)
    assert not wrong, wrong
