"""``show -o json`` against every recorded conformance case (tests/conformance/README.md).

The case's ``live`` object is what a real API server returned; its managedFields are the truth.
``fields`` must list exactly the union of the entries' paths, each with exactly the owners that
own it (in entry order), and ``managers`` must mirror the entries.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fieldsv1_oracle import oracle_path_string, oracle_paths

from kubectl_fieldown.cli.main import main
from kubectl_fieldown.fieldpath import FieldSet, decode_fields_v1, path_string
from kubectl_fieldown.fieldpath.lookup import MISSING, value_at

CONFORMANCE = Path(__file__).resolve().parent / "conformance"
CASES = sorted([*CONFORMANCE.glob("*.json"), *(CONFORMANCE / "builtin").glob("*.json")])


def show_json(obj: dict[str, Any]) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(json.dumps(obj))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["show", "-i", "-", "-o", "json"])
    finally:
        sys.stdin = saved
    assert code == 0, err.getvalue()
    md = obj.get("metadata") or {}
    if "managedFields" in md or not md.get("uid"):
        assert err.getvalue() == ""
    else:  # a reset object: the hint for a file saved without --show-managed-fields, and nothing else
        assert err.getvalue().startswith("note: <stdin>: document 1: ") and err.getvalue().count("\n") == 1
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def test_there_are_cases() -> None:
    assert len(CASES) > 100
    assert any(c.parent.name == "builtin" for c in CASES)


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_show_lists_every_owned_path_with_its_owners(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    live = case["live"]
    entries = live["metadata"].get("managedFields") or []

    # the owned paths and their owners from the tests' own decoder, printed as the server prints paths
    want: dict[str, list[dict[str, str]]] = {}
    for e in entries:
        for op in sorted(oracle_paths(e.get("fieldsV1"))):
            want.setdefault(oracle_path_string(op), []).append(
                {"manager": e["manager"], "operation": e["operation"], "subresource": e.get("subresource", "")}
            )
    # the values and the canonical order: the product's lookup (what a value is, is not in question here)
    want_values: dict[str, Any] = {}
    union = FieldSet()
    for e in entries:
        fields = decode_fields_v1(e.get("fieldsV1"))
        union = union.union(fields)
        for p in fields:
            want_values[path_string(p)] = value_at(live, p)

    (item,) = show_json(live)["items"]
    md = live["metadata"]
    assert (item["apiVersion"], item["kind"], item["name"], item["namespace"]) == (
        live["apiVersion"], live["kind"], md["name"], md.get("namespace"))
    assert item["managers"] == [
        {"manager": e["manager"], "operation": e["operation"], "apiVersion": e["apiVersion"],
         "subresource": e.get("subresource", ""), "time": e.get("time"),
         "fieldCount": len(oracle_paths(e.get("fieldsV1")))}
        for e in entries
    ]
    got = {f["path"]: f["owners"] for f in item["fields"]}
    assert len(got) == len(item["fields"]), "each path appears once"
    assert got == want
    assert [f["path"] for f in item["fields"]] == [path_string(p) for p in union.sorted_paths()], "canonical order"
    for f in item["fields"]:
        if want_values[f["path"]] is MISSING:
            assert "value" not in f, f["path"]
        else:
            assert f["value"] == want_values[f["path"]], f["path"]
