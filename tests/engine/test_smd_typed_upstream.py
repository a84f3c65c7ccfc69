"""structured-merge-diff v6's typed/ tables through the library's typed package.

hack/port-upstream-tests.py extracts the tables of typed/*_test.go (``mergeCases``, ``symdiffCases``,
``fieldsetCases``, ``removeCases``, ``reversibleExtractCases``, ``extractWithKeysCases``) with go/parser into
tests/conformance/upstream/smd-typed.json; each item is played here with kubectl_fieldown.typed
(merge, compare, to_field_set, remove_items, extract_items, with key fields appended for
``extractWithKeysCases``) on the schema of its case (SMD's schema YAML, read by
tests/engine/smd_upstream.py). Not played: the ``reconcile``/``validation`` tables (their schemas
are built by Go functions, which the extractor does not read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_fieldown.base.value import values_equal
from kubectl_fieldown.fieldpath import FieldSet, path_string
from kubectl_fieldown.typed.compare import compare
from kubectl_fieldown.typed.merge import merge
from kubectl_fieldown.typed.remove import extract_items, remove_items
from kubectl_fieldown.typed.tofieldset import to_field_set

from .smd_upstream import path_of, smd_types

TABLES = json.loads((Path(__file__).resolve().parent.parent / "conformance" / "upstream"
                     / "smd-typed.json").read_text())


def items(table: str, field: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    for case in TABLES[table]["cases"]:
        for i, item in enumerate(case[field]):
            out.append((f"{case['name']}-{i}", case, item))
    return out


def root(case: dict[str, Any]) -> Any:
    return smd_types(case["schema"])[case["rootTypeName"]]


def obj(text: str) -> Any:
    """The first YAML document, as SMD's FromYAML (go-yaml's Unmarshal) reads it: what follows it
    (one test writes `{"a":{}}}`) is not read."""
    return next(yaml.safe_load_all(text)) if text else None


def fieldset(v: dict[str, Any] | None) -> FieldSet:
    return FieldSet([path_of(p) for p in (v or {}).get("set") or []])


def shown(s: FieldSet) -> list[str]:
    return sorted(path_string(p) for p in s.sorted_paths())


def test_tables_were_ported() -> None:
    counts = {k: len(v.get("cases") or []) for k, v in TABLES.items() if isinstance(v, dict)}
    assert counts["mergeCases"] >= 6 and counts["symdiffCases"] >= 9 and counts["fieldsetCases"] >= 3, counts


@pytest.mark.parametrize(("name", "case", "triplet"), items("mergeCases", "triplets"), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_merge(name: str, case: dict[str, Any], triplet: dict[str, Any]) -> None:
    got = merge(obj(triplet["lhs"]), obj(triplet["rhs"]), root(case))
    assert values_equal(got, obj(triplet["out"])), (got, triplet["out"])


@pytest.mark.parametrize(("name", "case", "quint"), items("symdiffCases", "quints"), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_compare(name: str, case: dict[str, Any], quint: dict[str, Any]) -> None:
    t = root(case)
    c = compare(obj(quint["lhs"]), obj(quint["rhs"]), t)
    assert shown(c.added) == shown(fieldset(quint["added"]))
    assert shown(c.modified) == shown(fieldset(quint["modified"]))
    assert shown(c.removed) == shown(fieldset(quint["removed"]))
    back = compare(obj(quint["rhs"]), obj(quint["lhs"]), t)
    assert shown(back.removed) == shown(c.added) and shown(back.modified) == shown(c.modified)


@pytest.mark.parametrize(("name", "case", "pair"), items("fieldsetCases", "pairs"), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_to_field_set(name: str, case: dict[str, Any], pair: dict[str, Any]) -> None:
    assert shown(to_field_set(obj(pair["object"]), root(case))) == shown(fieldset(pair["set"]))


# upstream tests RemoveItems only where removeOutput is not its "unparseable" marker
@pytest.mark.parametrize(("name", "case", "quad"), [i for i in items("removeCases", "quadruplets")
                                                    if i[2]["removeOutput"] != "unparseable"],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_remove_items(name: str, case: dict[str, Any], quad: dict[str, Any]) -> None:
    got = remove_items(obj(quad["object"]), fieldset(quad["set"]), root(case))
    assert values_equal(got, obj(quad["removeOutput"])), (got, quad["removeOutput"])


@pytest.mark.parametrize(("name", "case", "quad"), [i for i in items("removeCases", "quadruplets")
                                                    if i[2]["extractOutput"] != "unparseable"],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_extract_items(name: str, case: dict[str, Any], quad: dict[str, Any]) -> None:
    got = extract_items(obj(quad["object"]), fieldset(quad["set"]), root(case))
    assert values_equal(got, obj(quad["extractOutput"])), (got, quad["extractOutput"])


@pytest.mark.parametrize(("name", "case", "pair"), items("reversibleExtractCases", "pairs"),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_extract_is_reversible(name: str, case: dict[str, Any], pair: dict[str, Any]) -> None:
    """Merging a partial object in and extracting its leaves gives it back (TestReversibleExtract)."""
    t = root(case)
    pso = obj(pair["pso"])
    merged = merge(obj(pair["object"]), pso, t)
    assert values_equal(extract_items(merged, to_field_set(pso, t).leaves(), t), pso)


@pytest.mark.parametrize(("name", "case", "triplet"), items("extractWithKeysCases", "triplets"),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_extract_with_key_fields(name: str, case: dict[str, Any], triplet: dict[str, Any]) -> None:
    """ExtractItems(set, WithAppendKeyFields()) (TestExtractWithKeys): the expected output is YAML
    text or, where upstream wrote a Go value, that value."""
    want = triplet["wantOutput"]
    want = obj(want) if isinstance(want, str) else want
    got = extract_items(obj(triplet["object"]), fieldset(triplet["set"]), root(case), append_key_fields=True)
    assert values_equal(got, want), (got, want)
