"""Issue 17 on the real API server: audit's words, one engine, and the user's intent.

Each case builds an object as a team gets there (real kubectl; raw requests for controllers and
GitOps tools), then asks ``kubectl fieldown audit --applier ... -f next.yaml -o json`` and
``kubectl fieldown conflicts -f next.yaml --applier ...`` about the same object and manifest:

* they must agree: audit reports ``predicted-conflict`` exactly when conflicts predicts a 409;
* when audit offers a verified fix, the fix is run literally, its manifest edits are made, the
  applier applies for real (tests/appliers/replay.py), and the object must hold the user's intent
  (docs/ownership-model.md, "The user's intent"), judged here from the objects alone: every value
  of the manifest, none of the fields the case says the user removed, every other value as before —
  and a field the audit says "stays" must still be there;
* when audit offers none, it must say so with a ``values-at-risk`` error (exit 1), and every value it
  says will change must change when the applier applies anyway.
"""

from __future__ import annotations

import copy
import json
import shlex
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lab
import pytest
from appliers.replay import Appliers, Target, Wire, wait_past_newest_entry

from scenarios.test_cookbook import BASE, LA, Lab, _applier, _edited, problems_after

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def tools(cluster: lab.Cluster) -> Iterator[tuple[Wire, Appliers]]:
    wire = Wire(str(cluster.kubeconfig))
    yield wire, Appliers(wire, cluster.kubectl)


# --- histories ---------------------------------------------------------------------------------------


def _ssa_ci_then_kcm_scale(s: Lab, n: str) -> dict[str, Any]:
    """A CI job applies server-side as ci; the HPA controller (kube-controller-manager) scales."""
    doc = s.doc(n, BASE)
    s.ssa(doc, manager="ci")
    s.merge_patch_as(n, {"spec": {"replicas": 5}}, "kube-controller-manager", "scale")
    return doc


def _ssa_ci_then_patch(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.ssa(doc, manager="ci")
    s.patch(n, {"spec": {"color": "green"}})
    return doc


def _ssa_ci_then_ancient(s: Lab, n: str) -> dict[str, Any]:
    """color changed by an Update manager that eleven later ones pushed into ancient-changes."""
    doc = s.doc(n, BASE)
    s.ssa(doc, manager="ci")
    s.merge_patch_as(n, {"spec": {"color": "green"}}, "early-script")
    for i in range(10):
        wait_past_newest_entry(s.wire, s.live(n))
        s.merge_patch_as(n, {"metadata": {"annotations": {f"note-{i}": "x"}}}, f"script-{i}")
    return doc


def _csa_history(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, {**BASE, "labels": {"tier": "web", "zone": "a"}})
    s.csa(doc)
    return doc


def _create_save_config_then_hpa(s: Lab, n: str) -> dict[str, Any]:
    doc = s.doc(n, BASE)
    s.kubectl("create", "--save-config", "-f", str(s.file(doc)))
    s.merge_patch_as(n, {"spec": {"replicas": 9}}, "horizontal-pod-autoscaler", "scale")
    return doc


def _flux_then_label_overwritten(s: Lab, n: str) -> dict[str, Any]:
    """Flux applies a label; kubectl label --overwrite changes it."""
    doc = s.doc(n, BASE, labels={"team": "payments", "app": "web"})
    s.apply_as(doc, "kustomize-controller", force=True)
    s.kubectl("label", "--overwrite", f"widgets.example.com/{n}", "-n", s.ns, "team=platform")
    return doc


def _csa_then_cainjector(s: Lab, n: str) -> dict[str, Any]:
    """The manifest once carried the CA bundle; an injector has written it since."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web", "ca": "old"}})
    s.csa(doc)
    s.merge_patch_as(n, {"spec": {"labels": {"ca": "CERT"}}}, "cainjector")
    return doc


def _csa_then_big_cainjector(s: Lab, n: str) -> dict[str, Any]:
    """The manifest once carried a 200 KB CA bundle (the annotation is near its limit, so it must go);
    an injector has rewritten the bundle since."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web", "ca": "A" * 200_000}})
    s.csa(doc)
    s.merge_patch_as(n, {"spec": {"labels": {"ca": "B" * 200_000}}}, "cainjector")
    return doc


def _csa_then_partial_ci(s: Lab, n: str) -> dict[str, Any]:
    """Client-side applies; a CI job once applied one field as ci; now CI applies the whole manifest."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web", "zone": "a"}})
    s.csa(doc)
    s.apply_as(s.doc(n, {"color": "blue"}), "ci")
    return doc


def _csa_then_operator_label(s: Lab, n: str) -> dict[str, Any]:
    """Client-side applies a map; an operator adds a key to it."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.csa(doc)
    s.merge_patch_as(n, {"spec": {"labels": {"extra": "y"}}}, "operator")
    return doc


def _drop_labels_map(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    """The map leaves the manifest: its key the manifest set goes, the operator's key stays."""
    out = copy.deepcopy(doc)
    out["spec"].pop("labels")
    return out, [("spec", "labels", "tier")]


def _operator_update_then_apply(s: Lab, n: str) -> dict[str, Any]:
    """An operator created the object with Update requests; it now applies under the same name."""
    doc = s.doc(n, {**BASE, "containers": [{"name": "app", "image": "app:1",
                                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]})
    s.create_as(doc, "operator")
    return doc


def _ci_then_kubectl(s: Lab, n: str) -> dict[str, Any]:
    """A CI job applied as ci; the team switches to plain kubectl apply --server-side."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web"}})
    s.ssa(doc, manager="ci")
    return doc


def _helm3_created(s: Lab, n: str) -> dict[str, Any]:
    """Helm 3 created the object (a POST as helm: an Update entry); a CI job takes the chart over."""
    doc = s.doc(n, {**BASE, "labels": {"tier": "web", "zone": "a"}})
    s.create_as(doc, "helm")
    return doc


# --- next manifests ------------------------------------------------------------------------------


def _same(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    return copy.deepcopy(doc), []


def _color(value: str) -> Callable[[dict[str, Any]], tuple[dict[str, Any], list[tuple[str, ...]]]]:
    def edit(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
        out = copy.deepcopy(doc)
        out["spec"]["color"] = value
        return out, []
    return edit


def _partial(spec: dict[str, Any]) -> Callable[[dict[str, Any]], tuple[dict[str, Any], list[tuple[str, ...]]]]:
    """Another configuration of a few fields (a hotfix, a tuner): it removes nothing."""
    def edit(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
        md = {k: doc["metadata"][k] for k in ("name", "namespace")}
        return {"apiVersion": doc["apiVersion"], "kind": doc["kind"], "metadata": md, "spec": spec}, []
    return edit


def _without(*path: str, removed: bool = True) -> Callable[[dict[str, Any]], tuple[dict[str, Any],
                                                                                   list[tuple[str, ...]]]]:
    """The field leaves the manifest; ``removed``: the user's intent is that it goes."""
    def edit(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
        out = copy.deepcopy(doc)
        node = out
        for k in path[:-1]:
            node = node[k]
        node.pop(path[-1])
        return out, [tuple(path)] if removed else []
    return edit


def _without_env_b(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    out = copy.deepcopy(doc)
    out["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    return out, []


@dataclass
class Case:
    id: str
    applier: str
    history: Callable[[Lab, str], dict[str, Any]]
    edit: Callable[[dict[str, Any]], tuple[dict[str, Any], list[tuple[str, ...]]]]
    conflict: bool = False
    """conflicts --applier predicts a 409 for the manifest as it is."""
    gone: list[str] = field(default_factory=list)
    """Paths (dotted, under spec) the user's intent deletes although the case's edit keeps listing
    them as not removed (a dropped list-map item)."""


CASES = [
    Case("kcm-scale-under-ci", "kubectl:ci", _ssa_ci_then_kcm_scale, _same, conflict=True),
    Case("patch-under-ci", "kubectl:ci", _ssa_ci_then_patch, _color("red"), conflict=True),
    Case("ancient-changes-under-ci", "kubectl:ci", _ssa_ci_then_ancient, _color("red"), conflict=True),
    Case("hotfix-after-client-side", "kubectl:hotfix", _csa_history,
         _partial({"color": "blue", "args": ["--port=80"]})),
    Case("tuner-after-client-side", "ssa:tuner", _csa_history, _partial({"replicas": 3}),
         conflict=True),
    Case("hpa-after-create-save-config", "kubectl-client-side", _create_save_config_then_hpa,
         _without("spec", "replicas", removed=False)),
    Case("flux-label-overwritten-then-dropped", "flux", _flux_then_label_overwritten,
         _without("metadata", "labels", "team", removed=False)),
    Case("cainjector-field-dropped-under-argocd", "argocd", _csa_then_cainjector,
         _without("spec", "labels", "ca", removed=False)),
    Case("big-cainjector-field-dropped-under-argocd", "argocd", _csa_then_big_cainjector,
         _without("spec", "labels", "ca", removed=False)),
    Case("client-side-into-ci-with-a-partial-entry", "ssa:ci", _csa_then_partial_ci,
         _without("spec", "labels", "zone")),
    Case("client-side-into-kubectl-ci-with-a-partial-entry", "kubectl:ci", _csa_then_partial_ci,
         _without("spec", "labels", "zone")),
    Case("operator-key-in-a-dropped-map-under-client-side", "kubectl-client-side", _csa_then_operator_label,
         _drop_labels_map),
    Case("operator-starts-applying", "ssa:operator", _operator_update_then_apply, _without_env_b,
         gone=["containers"]),
    Case("ci-then-kubectl-drops-labels", "kubectl", _ci_then_kubectl, _without("spec", "labels")),
    # Helm 3's entry recorded the chart the job applies next: the dropped map goes (class 6)
    Case("helm3-created-then-ci-drops-labels", "ssa:ci", _helm3_created, _without("spec", "labels")),
]


def _audit(s: Lab, case: Case, manifest: Path) -> tuple[int, dict[str, Any]]:
    kind, _, manager = case.applier.partition(":")
    argv = ["kubectl", "fieldown", "audit", "--kinds", "widgets", "-n", s.ns, "--applier", kind,
            *(["--field-manager", manager] if manager else []), "-f", str(manifest), "-o", "json"]
    proc = s.fieldown(shlex.join(argv))
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _conflicts(s: Lab, case: Case, manifest: Path) -> int:
    proc = s.fieldown(shlex.join(["kubectl", "fieldown", "conflicts", "-f", str(manifest), "--applier", case.applier]))
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode


def _path_of(text: str) -> tuple[str, ...]:
    """``.spec.labels.ca`` -> ("spec", "labels", "ca") (the cases use plain field names)."""
    return tuple(text.lstrip(".").split("."))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_audit_says_what_the_next_apply_does(case: Case, cluster: lab.Cluster, tools: tuple[Wire, Appliers],
                                             tmp_path: Path) -> None:
    wire, appliers = tools
    ns = f"intent-{uuid.uuid4().hex[:8]}"
    wire.send("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    s = Lab(cluster, wire, appliers, tmp_path, ns)
    name = "w"
    previous = case.history(s, name)
    nxt, removed = case.edit(previous)
    before = s.live(name)
    manifest = s.file(nxt)

    code, report = _audit(s, case, manifest)
    ids = [f["id"] for f in report["items"] if f["name"] == name]
    # one engine: audit's predicted conflict is conflicts --applier's 409
    assert ("predicted-conflict" in ids) == (_conflicts(s, case, manifest) == 1) == case.conflict, ids
    fixes = [o["fix"] for o in report["objects"] if o["name"] == name]
    fix = fixes[0] if fixes else None

    if fix is not None and not fix["verified"]:
        # no fix keeps every value: audit says so, as an error, with each change
        assert code == 1 and "values-at-risk" in ids, (ids, fix)
        (risk,) = [f for f in report["items"] if f["id"] == "values-at-risk" and f["name"] == name]
        changed = [c.split("would delete ", 1)[1].split(" (")[0] for c in risk["details"]["changes"]
                   if "would delete " in c]
        live = s.live(name)
        wait_past_newest_entry(wire, live)
        rep = appliers.play(_applier(case.applier), Target("Widget", name, ns), nxt)
        assert rep.final is not None
        for p in changed:
            node: Any = rep.final
            for k in _path_of(p):
                node = node.get(k) if isinstance(node, dict) else None
            assert node is None, f"audit said {p} would be deleted; it is {node!r}"
        return

    lines = [fix["commandLine"]] if fix is not None and fix["commandLine"] else []
    edits = list(fix["edits"]) if fix is not None else []
    notes = list(fix["notes"]) if fix is not None else []
    for line in lines:
        proc = s.fieldown(line)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}{proc.stderr}"
    applied = _edited(nxt, edits)
    live = s.live(name)
    wait_past_newest_entry(wire, live)
    rep = appliers.play(_applier(case.applier), Target("Widget", name, ns), applied)
    failed = [f"{x.verb} as {x.manager or '-'}: {x.status} {x.message}" for x in rep.sent
              if x.status >= 400 and not x.dry_run]
    assert rep.rc == 0 and not failed, f"the applier's next apply failed after {lines} {edits}: {failed} {rep.stderr}"
    assert rep.final is not None
    wrong = problems_after(before, applied, removed, rep.final)
    for top in case.gone:
        # a list item the manifest dropped that only the applier's own identity set: it goes
        assert rep.final["spec"][top] == applied["spec"][top], (rep.final["spec"][top], lines, notes)
    wrong = [w for w in wrong if not any(w.startswith(f"spec.{t}") for t in case.gone)]
    assert not wrong, (wrong, lines, edits, notes)
    for note in notes:
        if " stays, owned by " in note:
            p = note.split(" ", 1)[0]
            node = rep.final
            for k in _path_of(p):
                node = node.get(k) if isinstance(node, dict) else None
            assert node is not None, f"audit said {p} stays: {note}"
    # the last-applied annotation is bookkeeping, but it must not be lost under a client-side applier
    if case.applier == "kubectl-client-side":
        assert LA in (rep.final["metadata"].get("annotations") or {})
