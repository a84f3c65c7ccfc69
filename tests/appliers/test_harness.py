"""The replay harness's pieces (tests/appliers/replay.py), checked without a server.

The product's csaupgrade is compared with client-go's own code (the upstream oracle); Flux's drift
rule on hand-written cases (its cleanup is checked against fluxcd/pkg's own test assertions on the
lab, tests/appliers/test_upstream_flux.py). The kubectl ``-v=9`` log parser is checked on a log
written by the lab's kubectl 1.36.
"""

from __future__ import annotations

from typing import Any

import pytest
import upstream_oracle
from engine.conformance_cases import case_files, load
from fieldsv1_oracle import oracle_paths

from kubectl_fieldown.appliers.csaupgrade import upgrade_managed_fields
from kubectl_fieldown.fieldpath import UNSTRUCTURED
from kubectl_fieldown.ownership.managedfields import decode_entries

from .replay import flux_drifted, parse_kubectl_v9

LIVES: list[dict[str, Any]] = [c["live"] for c in map(load, case_files()) if c["live"].get("metadata")]


def _view(raw_entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((e.get("manager"), e.get("operation"), e.get("apiVersion"), e.get("subresource", ""),
                   sorted(oracle_paths(e.get("fieldsV1")))) for e in raw_entries)


def test_there_is_recorded_data() -> None:
    assert len(LIVES) >= 200


@pytest.mark.parametrize("target", ["kubectl", "argocd-controller", "helm"])
def test_the_products_csaupgrade_is_client_gos(target: str) -> None:
    """kubectl_fieldown.appliers.csaupgrade against client-go's UpgradeManagedFieldsPatch itself (built from
    the lab's Debian sources by tests/upstream_oracle.py), on every managedFields list the
    conformance cases recorded from the real server, for every Update manager folded into each
    target (what kubectl, Argo CD and Helm 4 send)."""
    oracle = upstream_oracle.shared()
    checked = changed = 0
    for live in LIVES:
        raw = live["metadata"].get("managedFields") or []
        entries = decode_entries(raw)
        for name in sorted({e.manager for e in entries if e.operation == "Update"}):
            ops = oracle.csaupgrade_patch(live, [name], target)
            core_raw = [e.to_dict(UNSTRUCTURED) for e in upgrade_managed_fields(entries, [name], target)]
            if ops is None:
                assert _view(core_raw) == _view(raw), (name, target)
            else:
                changed += 1
                assert ops[1] == {"op": "replace", "path": "/metadata/resourceVersion",
                                  "value": live["metadata"].get("resourceVersion", "")}
                assert _view(ops[0]["value"]) == _view(core_raw), (name, target)
            checked += 1
    assert checked > 200 and changed > 50


def test_flux_drift() -> None:
    obj = {"metadata": {"resourceVersion": "5", "labels": {}}, "spec": {"a": 1}, "status": {"x": 1}}
    assert not flux_drifted(obj, {"metadata": {"resourceVersion": "5"}, "spec": {"a": 1}, "status": {"x": 2}})
    assert flux_drifted(obj, {"metadata": {"resourceVersion": "5"}, "spec": {"a": 1.5}})
    assert flux_drifted(obj, {"metadata": {"resourceVersion": "5"}, "spec": {"a": True}})  # a bool is no int
    assert flux_drifted(obj, {"metadata": {"resourceVersion": "5", "annotations": {"n": ""}}, "spec": {"a": 1}})
    assert flux_drifted(obj, {"metadata": {}, "spec": {"a": 1}})  # a create


# what kubectl 1.36 wrote with -v=9 for a client-side apply (header lines shortened)
V9_LOG = '''I1125 01:31:30.612712   25845 helper.go:269] "Request Body" body="{\\"spec\\":{\\"color\\":\\"blue\\"}}"
I1125 01:31:30.612754   25845 round_trippers.go:527] "Request" curlCommand=<
\tcurl -v -XPATCH  -H "User-Agent: kubectl/v1.36.4 (linux/amd64) kubernetes/bb826b1" -H "Accept: application/json" \
-H "Content-Type: application/merge-patch+json" \
'https://127.0.0.1:42165/apis/example.com/v1/namespaces/ns1/widgets/w1?fieldManager=kubectl-client-side-apply&fieldValidation=Strict'
 >
I1125 01:31:30.615626   25845 round_trippers.go:632] "Response" verb="PATCH" \
url="https://127.0.0.1:42165/apis/example.com/v1/namespaces/ns1/widgets/w1?fieldManager=kubectl-client-side-apply\
&fieldValidation=Strict" status="200 OK" headers=<
\tContent-Type: application/json
 > milliseconds=2 getConnectionMilliseconds=0 serverProcessingMilliseconds=2
I1125 01:31:30.615778   25845 helper.go:269] "Response Body" body=<
\t{"apiVersion":"example.com/v1","kind":"Widget"}
 >
I1125 01:31:31.000000   25845 helper.go:269] "Request Body" body=<
\t{"apiVersion":"example.com/v1","kind":"Widget","spec":{"color":"red"}}
 >
I1125 01:31:31.000100   25845 round_trippers.go:527] "Request" curlCommand=<
\tcurl -v -XPATCH  -H "Content-Type: application/apply-patch+yaml" \
'https://127.0.0.1:42165/apis/example.com/v1/namespaces/ns1/widgets/w1?fieldManager=kubectl&force=false'
 >
I1125 01:31:31.000200   25845 round_trippers.go:632] "Response" verb="PATCH" \
url="https://127.0.0.1:42165/apis/example.com/v1/namespaces/ns1/widgets/w1?fieldManager=kubectl&force=false" \
status="409 Conflict" headers=<
\tContent-Type: application/json
 > milliseconds=1
I1125 01:31:31.000300   25845 helper.go:269] "Response Body" body=<
\t{"kind":"Status","message":"Apply failed with 1 conflict: conflict with \\"bob\\": .spec.color","code":409}
 >
widget.example.com/w1 configured
error: Apply failed with 1 conflict
'''.replace("\\\n", "")


def test_kubectl_v9_log() -> None:
    sent, plain = parse_kubectl_v9(V9_LOG)
    assert [(s.verb, s.manager, s.status, s.force) for s in sent] == [
        ("merge-patch", "kubectl-client-side-apply", 200, False), ("apply", "kubectl", 409, False)]
    assert sent[0].body == {"spec": {"color": "blue"}}
    assert sent[1].body == {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"color": "red"}}
    assert sent[1].message == 'Apply failed with 1 conflict: conflict with "bob": .spec.color'
    assert plain == "widget.example.com/w1 configured\nerror: Apply failed with 1 conflict"
