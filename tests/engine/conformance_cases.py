"""Replaying the recorded server cases (tests/conformance) through the engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fieldsv1_oracle import OraclePath, oracle_entries

from kubectl_fieldown.fieldmanager import (
    ApplyConflict,
    FieldManagerError,
    ResourceRules,
    simulate_apply,
)
from kubectl_fieldown.schema.types import GroupVersionKind

CASES = Path(__file__).resolve().parent.parent / "conformance"


def case_files() -> list[Path]:
    """The recorded cases, the built-in ones, and regressions kept from the differential test."""
    return (
        sorted(CASES.glob("*.json"))
        + sorted((CASES / "builtin").glob("*.json"))
        + sorted((CASES / "regressions").glob("*.json"))
    )


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def rules_for(case: dict[str, Any]) -> ResourceRules:
    if case.get("schema"):
        from kubectl_fieldown.schema.crd import crd_storage_version, crd_subresources, kinds_from_crd

        crd = case["schema"]
        kinds = kinds_from_crd(crd)
        gvk = GroupVersionKind.from_api_version(case["live"]["apiVersion"], case["live"]["kind"])
        ks = kinds[gvk]
        sub = crd_subresources(crd, gvk.version)
        # a CRD served at several versions (tests/conformance/multiversion): every version's schema
        every = kinds_from_crd(crd, include_unserved=True)
        versions = {k.api_version: s.root for k, s in every.items() if k.kind == gvk.kind}
        return ResourceRules.for_kind(ks, sub.status, versions=versions, storage_version=crd_storage_version(crd))
    from kubectl_fieldown.schema.builtin import builtin_kinds

    b = case["builtin"]
    gvk = GroupVersionKind.from_api_version(b["apiVersion"], b["kind"])
    from kubectl_fieldown.schema.gotypes import normalizer_for

    ks = builtin_kinds().lookup(gvk)
    assert ks is not None, gvk
    # built-in kinds with a status subresource reset status on the main endpoint
    return ResourceRules.for_kind(ks, True, normalizer_for(b["apiVersion"], b["kind"]), custom_resource=False)


@dataclass
class Outcome:
    status: int
    conflicts: set[tuple[str, str]]
    entries: dict[tuple[str, str, str, str], frozenset[OraclePath]]
    obj: dict[str, Any] | None
    message: str = ""


def entries_of(obj: dict[str, Any]) -> dict[tuple[str, str, str, str], frozenset[OraclePath]]:
    """managedFields as path sets, decoded by the tests' own decoder (the server's entries and the
    predicted ones alike: the product's codec does not judge itself)."""
    return oracle_entries(obj)


def expected(answer: dict[str, Any]) -> Outcome:
    st = answer["status"]
    if st == 409:
        return Outcome(st, {(c["manager"], c["path"]) for c in answer["conflicts"]}, {}, None, answer["message"])
    if st == 200 or st == 201:
        return Outcome(200, set(), entries_of(answer["object"]), answer["object"])
    return Outcome(st, set(), {}, None, answer.get("message", ""))


def predict(case: dict[str, Any], force: bool, now: str = "2026-11-22T03:00:00Z") -> Outcome:
    rules = rules_for(case)
    a = case["apply"]
    try:
        r = simulate_apply(case["live"], a["manifest"], a["manager"], rules, now=now, force=force,
                           subresource=a.get("subresource", ""))
    except ApplyConflict as e:
        return Outcome(409, {(c.manager, c.path_string) for c in e.conflicts}, {}, None, e.message)
    except FieldManagerError as e:
        return Outcome(e.status, set(), {}, None, e.message)
    return Outcome(200, set(), entries_of(r.object), r.object)


def object_view(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj.get("metadata") or {}
    return {"spec": obj.get("spec"), "status": obj.get("status"), "labels": md.get("labels"),
            "annotations": md.get("annotations"), "finalizers": md.get("finalizers")}


def differences(exp: Outcome, got: Outcome) -> list[str]:
    out = []
    if exp.status != got.status:
        return [f"status: expected {exp.status} ({exp.message[:300]}), got {got.status} ({got.message[:300]})"]
    if exp.status not in (200, 409) and exp.message != got.message:
        # a refusal other than a conflict: its message, word for word
        return [f"message: expected {exp.message!r}, got {got.message!r}"]
    if exp.status == 409 and exp.conflicts != got.conflicts:
        out.append(f"conflicts: expected {sorted(exp.conflicts)}, got {sorted(got.conflicts)}")
    if exp.status == 409 and exp.message != got.message and len(exp.conflicts) == len(got.conflicts):
        out.append(f"message: expected {exp.message!r}, got {got.message!r}")
    if exp.status == 200:
        if set(exp.entries) != set(got.entries):
            out.append(f"managers: expected {sorted(exp.entries)}, got {sorted(got.entries)}")
        for k in set(exp.entries) & set(got.entries):
            if exp.entries[k] != got.entries[k]:
                out.append(f"fields of {k}: expected {exp.entries[k]!r}, got {got.entries[k]!r}")
        assert exp.obj is not None and got.obj is not None
        ev, gv = object_view(exp.obj), object_view(got.obj)
        if ev != gv:
            out.append(f"object: expected {json.dumps(ev, sort_keys=True)}, got {json.dumps(gv, sort_keys=True)}")
    return out
