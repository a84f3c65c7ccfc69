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
step before it left (when that step recorded it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fieldsv1_oracle import oracle_entries

from kubectl_fieldown.appliers import Applier, ApplierKind, run_applier
from kubectl_fieldown.appliers.run import client_side_modified
from kubectl_fieldown.appliers.smpmeta import patch_meta_for
from kubectl_fieldown.appliers.strategic import client_side_strategic_patch
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.managedfields import KUBECTL_CLIENT_SIDE_APPLY, LAST_APPLIED_ANNOTATION
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
