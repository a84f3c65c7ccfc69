"""Go's value semantics the strategic merge patch depends on (appliers/smpgo.py)."""

from __future__ import annotations

import random

import pytest

from kubectl_fieldown.appliers.smpgo import deep_equal, go_eq, go_sort, go_stable_sort, sprint_s, sprint_v


@pytest.mark.parametrize("seed", range(50))
def test_stable_sort_is_a_stable_sort(seed: int) -> None:
    # sort.SliceStable with a consistent order is a stable sort whatever the length (insertion sort
    # of blocks of 20, then symMerge): equal keys keep their order
    rng = random.Random(seed)
    items = [(rng.randrange(8), i) for i in range(rng.randrange(0, 120))]
    got = go_stable_sort(list(items), lambda a, b: a[0] < b[0])
    assert got == sorted(items, key=lambda x: x[0])


def test_sort_with_less_or_equal_moves_an_item_before_its_equals() -> None:
    # sort.Sort with StringsAreSorted as Less (<=) on up to 12 items: Go's insertion sort swaps equal
    # neighbours, so equal keys come out in reverse order
    items = [("b", 1), ("a", 2), ("b", 3), ("a", 4)]
    assert go_sort(items, lambda x: x[0]) == [("a", 4), ("a", 2), ("b", 3), ("b", 1)]


@pytest.mark.parametrize(("value", "v", "s"), [
    ("x", "x", "x"),
    (None, "<nil>", "%!s(<nil>)"),
    (3, "3", "%!s(int64=3)"),
    (2.5, "2.5", "%!s(float64=2.5)"),
    (1e21, "1e+21", "%!s(float64=1e+21)"),
    (True, "true", "%!s(bool=true)"),
    ({"b": 1, "a": None}, "map[a:<nil> b:1]", "map[a:<nil> b:1]"),
    (["a", 1], "[a 1]", "[a 1]"),
])
def test_fmt_verbs(value: object, v: str, s: str) -> None:
    assert sprint_v(value) == v
    assert sprint_s(value) == s


def test_int64_and_float64_differ() -> None:
    # apimachinery's decoder makes 1 an int64 and 1.0 a float64: DeepEqual and == tell them apart
    assert not deep_equal(1, 1.0) and not go_eq(1, 1.0)
    assert deep_equal({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not deep_equal({"a": None}, {})
    assert not go_eq(True, 1)
