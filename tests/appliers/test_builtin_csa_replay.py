"""Client-side ``kubectl apply`` of built-in kinds against the recorded cases (issue 20).

tests/conformance/builtin-csa holds histories on a Deployment, ConfigMap, Service or Pod that end in
a client-side ``kubectl apply`` (kubectl 1.36 and client-go 0.36's managedFields, see its
README.md). For every case, the final apply is played on the recorded ``live`` object by
``run_applier`` and must give exactly what kubectl and the server gave:

* kubectl's three-way strategic merge patch, byte for byte as JSON (directives included), and
  whether it is sent at all (``{}``: no request);
* the status (200, or the server's error and its message);
* the object after the patch (uid, creationTimestamp, resourceVersion and managedFields times
  aside) and its managedFields per (manager, operation, apiVersion, subresource), as path sets.

The ``kubectl-apply`` steps of the histories are checked the same way, each against the object the
step before it left (when that step recorded it); and every history is played from nothing on the
engine (the other writers' server-side applies, creates, updates, merge, JSON and strategic merge
patches and managedFields resets too), which must reach each recorded step's object and ``live``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fieldsv1_oracle import oracle_entries

from kubectl_fieldown.appliers import Applier, ApplierKind, run_applier
from kubectl_fieldown.appliers.jsonmerge import apply_merge_patch
from kubectl_fieldown.appliers.run import client_side_modified
from kubectl_fieldown.appliers.smpmeta import patch_meta_for
from kubectl_fieldown.appliers.strategic import apply_strategic_patch, client_side_strategic_patch, go_decoded
from kubectl_fieldown.fieldmanager import FieldManagerError, ResourceRules, simulate_apply, simulate_update
from kubectl_fieldown.fieldmanager.jsonpatch import apply_json_patch
from kubectl_fieldown.ownership.managedfields import KUBECTL_CLIENT_SIDE_APPLY, LAST_APPLIED_ANNOTATION
from kubectl_fieldown.schema.builtin import builtin_kinds
from kubectl_fieldown.schema.gotypes import normalizer_for
from kubectl_fieldown.schema.types import GroupVersionKind

CASES_DIR = Path(__file__).resolve().parent.parent / "conformance" / "builtin-csa"
CASES = sorted(CASES_DIR.glob("*.json"))
NOW = "2026-11-26T13:00:00Z"


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _rules(case: dict[str, Any]) -> ResourceRules:
    b = case["builtin"]
    gvk = GroupVersionKind.from_api_version(b["apiVersion"], b["kind"])
    ks = builtin_kinds().lookup(gvk)
    assert ks is not None, gvk
    return ResourceRules.for_kind(ks, True, normalizer_for(b["apiVersion"], b["kind"]), custom_resource=False)


def _manager(apply: dict[str, Any]) -> str:
    return str(apply.get("fieldManagerFlag") or apply.get("manager") or KUBECTL_CLIENT_SIDE_APPLY)


def _with_namespace(manifest: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    md = manifest.get("metadata") or {}
    if md.get("namespace") or not case["object"].get("namespace"):
        return manifest
    return {**manifest, "metadata": {**md, "namespace": case["object"]["namespace"]}}


def _object_view(obj: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    md = out.get("metadata") or {}
    for k in ("uid", "creationTimestamp", "resourceVersion", "managedFields", "generation"):
        md.pop(k, None)
    return out


def _differences(live: dict[str, Any] | None, manifest: dict[str, Any], manager: str, answer: dict[str, Any],
                 case: dict[str, Any]) -> list[str]:
    out: list[str] = []
    rules = _rules(case)
    kubectl = answer["kubectl"]
    manifest = _with_namespace(manifest, case)
    _, modified = client_side_modified(manifest)
    exp_modified = json.loads(kubectl["modified"])
    if modified != exp_modified:
        out.append(f"modified: expected {kubectl['modified']}, got {json.dumps(modified, sort_keys=True)}")
    if live is not None and kubectl["request"] != "create":
        meta = patch_meta_for(case["builtin"]["apiVersion"], case["builtin"]["kind"])
        assert meta is not None
        la = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        original = json.loads(la) if la else None
        got_patch = client_side_strategic_patch(modified, live, original, meta)
        if isinstance(got_patch, Exception):
            out.append(f"kubectl failed: {got_patch}")
        elif json.dumps(got_patch, sort_keys=True) != json.dumps(kubectl.get("patch"), sort_keys=True):
            out.append(f"patch: expected {json.dumps(kubectl.get('patch'), sort_keys=True)}, "
                       f"got {json.dumps(got_patch, sort_keys=True)}")
    run = run_applier(Applier(ApplierKind.kubectl_client_side, manager), live, manifest, rules, now=NOW)
    sent = list(run.requests)
    if kubectl["request"] == "none":
        if sent:
            out.append(f"expected no request, got {[(r.verb, r.status) for r in sent]}")
        return out
    if len(sent) != 1:
        return [*out, f"expected one {kubectl['request']} request, got {[(r.verb, r.status, r.message) for r in sent]}"]
    req = sent[0]
    if answer["status"] >= 300:
        if req.status != answer["status"] or req.message != answer.get("message"):
            out.append(f"error: expected {answer['status']} {answer.get('message')!r}, "
                       f"got {req.status} {req.message!r}")
        return out
    if not req.ok:
        return [*out, f"expected {answer['status']}, got {req.status} {req.message}"]
    assert run.result is not None
    exp_obj, got_obj = answer["object"], run.result
    if _object_view(exp_obj) != _object_view(got_obj):
        out.append(f"object: expected {json.dumps(_object_view(exp_obj), sort_keys=True)}, "
                   f"got {json.dumps(_object_view(got_obj), sort_keys=True)}")
    exp_entries, got_entries = oracle_entries(exp_obj), oracle_entries(got_obj)
    if exp_entries != got_entries:
        out.append(f"managedFields: expected {sorted(exp_entries.items())!r}, got {sorted(got_entries.items())!r}")
    return out


def test_all_recorded_cases_are_here() -> None:
    assert len(CASES) == 81


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_final_apply_replays_exactly(path: Path) -> None:
    case = _load(path)
    a = case["apply"]
    diffs = _differences(case["live"], a["manifest"], _manager(a), case["expect"], case)
    assert not diffs, "\n".join(diffs)


def _step_pairs() -> list[tuple[str, int]]:
    pairs = []
    for p in CASES:
        steps = _load(p)["steps"]
        for i, s in enumerate(steps):
            if s["op"] == "kubectl-apply" and "kubectl" in s and (i == 0 or "object" in steps[i - 1]):
                pairs.append((p.stem, i))
    return pairs


STEPS = _step_pairs()


@pytest.mark.parametrize(("stem", "index"), STEPS, ids=[f"{s}-step{i}" for s, i in STEPS])
def test_history_kubectl_apply_steps_replay_exactly(stem: str, index: int) -> None:
    case = _load(CASES_DIR / f"{stem}.json")
    steps = case["steps"]
    step = steps[index]
    live = steps[index - 1]["object"] if index > 0 else None
    manager = step.get("manager") or KUBECTL_CLIENT_SIDE_APPLY
    diffs = _differences(live, step["body"], manager, step, case)
    assert not diffs, "\n".join(diffs)


def _replay_step(state: dict[str, Any] | None, step: dict[str, Any], case: dict[str, Any],
                 rules: ResourceRules) -> tuple[int, dict[str, Any] | None, str]:
    """One request of a history on the engine: (status, the object after it, the error message)."""
    op, manager, body = step["op"], step.get("manager") or "", step["body"]
    try:
        if op == "apply":
            r = simulate_apply(state, _with_namespace(body, case), manager, rules, now=NOW,
                               force=bool(step.get("force")))
            return (201 if state is None else 200), r.object, ""
        if op == "create":
            return 201, simulate_update(None, _with_namespace(body, case), manager, rules, now=NOW).object, ""
        assert state is not None
        if op == "update":
            new = body
        elif op in ("merge-patch", "reset"):
            new = apply_merge_patch(state, body)
        elif op == "json-patch":
            new = apply_json_patch(state, body)
        elif op == "strategic-patch":
            meta = patch_meta_for(case["builtin"]["apiVersion"], case["builtin"]["kind"])
            assert meta is not None
            new = apply_strategic_patch(go_decoded(state), body, meta)
        else:
            raise AssertionError(f"unknown op {op}")
        return 200, simulate_update(state, new, manager, rules, now=NOW).object, ""
    except FieldManagerError as e:
        return e.status, state, e.message


def _compare(exp: dict[str, Any], got: dict[str, Any] | None, what: str) -> list[str]:
    if got is None:
        return [f"{what}: no object"]
    out = []
    if _object_view(exp) != _object_view(got):
        out.append(f"{what}: object: expected {json.dumps(_object_view(exp), sort_keys=True)}, "
                   f"got {json.dumps(_object_view(got), sort_keys=True)}")
    if oracle_entries(exp) != oracle_entries(got):
        out.append(f"{what}: managedFields: expected {sorted(oracle_entries(exp).items())!r}, "
                   f"got {sorted(oracle_entries(got).items())!r}")
    return out


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_whole_history_replays_on_the_engine(path: Path) -> None:
    """Every step from nothing: each kubectl apply as above (against the object the engine made),
    the other writers' requests (server-side applies, creates, updates, merge, JSON and strategic
    merge patches, managedFields resets) through the simulated server; the statuses, the objects
    the kubectl applies left, and at the end the recorded live object."""
    case = _load(path)
    rules = _rules(case)
    state: dict[str, Any] | None = None
    diffs: list[str] = []
    for i, step in enumerate(case["steps"]):
        created = state is None
        if step["op"] == "kubectl-apply":
            manager = step.get("manager") or KUBECTL_CLIENT_SIDE_APPLY
            diffs += [f"step {i}: {d}" for d in _differences(state, step["body"], manager, step, case)]
            run = run_applier(Applier(ApplierKind.kubectl_client_side, manager), state,
                              _with_namespace(step["body"], case), rules, now=NOW)
            status = 200 if run.ok else (run.error.status if run.error else 0)
            state = run.result
        else:
            status, state, message = _replay_step(state, step, case, rules)
            if status != step["status"]:
                diffs.append(f"step {i} ({step['op']}): expected {step['status']} {step.get('error', '')!r}, "
                             f"got {status} {message!r}")
        if diffs:
            break
        if created and state is not None:
            # the server gives a created object its uid and creation time (the engine does not): an
            # object with a uid and no managedFields is untracked, one without is new
            md = state["metadata"]
            md.update({k: case["live"]["metadata"][k] for k in ("uid", "creationTimestamp")})
        if step.get("object") is not None and step["status"] < 300:
            diffs += _compare(step["object"], state, f"step {i} ({step['op']})")
            if diffs:
                break
    if not diffs:
        diffs += _compare(case["live"], state, "live after the history")
    assert not diffs, "\n".join(diffs)
