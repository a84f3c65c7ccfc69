"""kubectl_fieldown.appliers.csaupgrade against client-go's own test table (TestUpgradeCSA of
k8s.io/client-go/util/csaupgrade/upgrade_test.go, ported verbatim by hack/port-upstream-tests.py
into tests/conformance/upstream/client-go-csaupgrade.json): the upgraded managedFields must equal
upstream's expected ones, entry for entry (FieldsV1 compared as path sets by the tests' own
decoder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fieldsv1_oracle import oracle_paths

from kubectl_fieldown.appliers.csaupgrade import upgrade_managed_fields
from kubectl_fieldown.fieldpath import UNSTRUCTURED
from kubectl_fieldown.ownership.managedfields import decode_entries

UPSTREAM = json.loads((Path(__file__).resolve().parent.parent / "conformance" / "upstream"
                       / "client-go-csaupgrade.json").read_text())


def view(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e.get("manager"), e.get("operation"), e.get("apiVersion"), e.get("subresource", ""), e.get("time"),
             oracle_paths(e.get("fieldsV1"))) for e in entries]


def test_the_table_was_ported() -> None:
    assert UPSTREAM["function"] == "TestUpgradeCSA" and len(UPSTREAM["cases"]) >= 9


@pytest.mark.parametrize("case", UPSTREAM["cases"], ids=lambda c: c["name"])
def test_upstream_case(case: dict[str, Any]) -> None:
    entries = decode_entries(case["original"]["metadata"].get("managedFields"))
    got = upgrade_managed_fields(entries, case["csaManagers"], case["ssaManager"], case["subresource"])
    want = case["expected"]["metadata"].get("managedFields") or []
    assert view([e.to_dict(UNSTRUCTURED) for e in got]) == view(want)
