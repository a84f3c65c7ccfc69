"""``audit --applier kubectl-client-side`` on built-in kinds (issue 20): the next client-side apply
of the manifest is kubectl's strategic merge patch, played on the recorded cases of
tests/conformance/builtin-csa (the lab serves no built-in kinds, so these run on the audit core)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.audit import AuditContext, audit_object, object_key
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.schema.builtin import builtin_kinds
from kubectl_fieldown.schema.gotypes import normalizer_for
from kubectl_fieldown.schema.types import GroupVersionKind

CASES = Path(__file__).resolve().parents[1] / "conformance" / "builtin-csa"
NOW = "2026-11-26T13:00:00Z"


def _case(name: str) -> tuple[dict[str, Any], dict[str, Any], AuditContext]:
    case: dict[str, Any] = json.loads((CASES / f"{name}.json").read_text())
    b = case["builtin"]
    ks = builtin_kinds().lookup(GroupVersionKind.from_api_version(b["apiVersion"], b["kind"]))
    assert ks is not None
    rules = ResourceRules.for_kind(ks, True, normalizer_for(b["apiVersion"], b["kind"]), custom_resource=False)
    manifest = case["apply"]["manifest"]
    manifest["metadata"].setdefault("namespace", case["object"]["namespace"])
    ctx = AuditContext(applier=Applier.of("kubectl-client-side"), manifests={object_key(manifest): manifest},
                       rules_for=lambda a, k: rules if (a, k) == (b["apiVersion"], b["kind"]) else None,
                       now=NOW, fixes=False)
    return case, case["live"], ctx


def test_the_servers_refusal_of_the_patch_is_predicted() -> None:
    # a $patch directive kept in last-applied and then dropped: kubectl sends "$patch": null and
    # the server's strategic merge answers 500 with the library's words
    case, live, ctx = _case("cur-csa-patch-directive-dropped-500")
    found = [f for f in audit_object(live, ctx) if f.id == "predicted-conflict"]
    assert len(found) == 1
    assert found[0].message == f"kubectl apply (client-side) would fail: {case['expect']['message']}"
    assert found[0].details["status"] == 500


def test_a_client_side_apply_never_conflicts() -> None:
    # a server-side applier owns replicas: the client-side apply (an Update) takes it without conflict
    _, live, ctx = _case("cur-csa-takes-field-from-ssa-owner")
    assert not [f for f in audit_object(live, ctx) if f.id == "predicted-conflict"]
