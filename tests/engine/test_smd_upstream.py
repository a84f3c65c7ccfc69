"""structured-merge-diff v6's own merge tests through the library (tests/engine/smd_upstream.py).

The cases are upstream's tables, extracted mechanically by hack/port-upstream-tests.py: every
``map[string]TestCase`` of merge/*_test.go, the tables of helpers that a Test function runs for
every combination of versions (``testMultipleAppliersFieldUnsetting(t, v1, v2, v3)``: one case per
combination), their converters (by name: the library's conversion hook plays them), ignored fields,
``ChangeParser`` and ``ExtractApply``. Every case is one test here; a case the extractor cannot read
would be written with ``unsupported`` set, and test_every_case_is_expressible fails on it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from .smd_upstream import CONVERTERS, load, play

UPSTREAM = load()
CASES = [c for c in UPSTREAM["cases"] if not c.get("unsupported")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['file']}:{c['func']}:{c['name']}")
def test_upstream_merge_case(case: dict[str, Any]) -> None:
    differences = play(case, UPSTREAM["parsers"])
    if case.get("expectError"):
        assert differences, "upstream expects this case to fail"
    else:
        assert not differences, "\n".join(differences)


def test_every_case_is_expressible() -> None:
    unsupported = [(c["func"], c["name"], c["unsupported"]) for c in UPSTREAM["cases"] if c.get("unsupported")]
    assert not unsupported
    assert len(CASES) >= 314
    # the converters the tables use are the ones restated in smd_upstream.CONVERTERS
    used = Counter(c.get("converter") or "" for c in CASES)
    assert set(used) <= set(CONVERTERS), used
    assert used["renamingConverter"] == 189 and used["repeatingConverter"] == 6, used
    ops = Counter(o["op"] for c in CASES for o in c["ops"])
    assert {"Apply", "ForceApply", "Update", "ExtractApply", "ChangeParser"} <= set(ops), ops
