"""structured-merge-diff v6's own merge tests through the library (tests/engine/smd_upstream.py).

The cases are upstream's tables, extracted mechanically by hack/port-upstream-tests.py. Each
expressible case is one test here; the cases that cannot be expressed as data (a Go converter
between versions, ChangeParser, ExtractApply, ignore filters, *Object operations) are counted by
reason in test_what_cannot_be_expressed, so that a new kind of gap shows up as a failure."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from .smd_upstream import load, play

UPSTREAM = load()
CASES = [c for c in UPSTREAM["cases"] if not c.get("unsupported")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['file']}:{c['name']}")
def test_upstream_merge_case(case: dict[str, Any]) -> None:
    differences = play(case, UPSTREAM["parsers"])
    if case.get("expectError"):
        assert differences, "upstream expects this case to fail"
    else:
        assert not differences, "\n".join(differences)


def test_what_cannot_be_expressed() -> None:
    reasons = Counter(c["unsupported"].split(":")[0] for c in UPSTREAM["cases"] if c.get("unsupported"))
    assert set(reasons) <= {"operation ExtractApply", "TestCase field IgnoreFilter", "operation ChangeParser",
                            "TestCase field IgnoredFields", "uses a version converter", "not a literal"}, reasons
    assert len(CASES) >= 83 and len(CASES) + sum(reasons.values()) == len(UPSTREAM["cases"])
