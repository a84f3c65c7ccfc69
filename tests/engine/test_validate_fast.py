"""``typed_errors`` answers a valid configuration from a walk that only looks for a problem (``_typed``
without ``words``: no paths, the first problem ends it) and only walks again for the messages when it
finds one: both walks must agree on every value, valid or not."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubectl_fieldown.schema.types import Type
from kubectl_fieldown.typed.validate import _typed, typed_errors

from .schemas import WIDGET


def _valid(value: Any, t: Type, undeclared: bool) -> bool:
    found: list[str] = []
    _typed(value, t, (), found, undeclared, words=False)
    assert found in ([], [""])  # the first problem ends the walk, and nothing is worded
    return not found

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                     st.sampled_from(["a", "b", "m", "TCP", "UDP"]))
_KEYS = st.sampled_from(["x", "name", "a", "value", "other"])


def _any_json(depth: int) -> st.SearchStrategy[Any]:
    if depth <= 0:
        return _SCALARS
    inner = _any_json(depth - 1)
    return st.one_of(_SCALARS, st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3))


def _shaped(t: Type, depth: int) -> st.SearchStrategy[Any]:
    """Mostly what ``t`` expects (declared keys, keyed items from small pools, so duplicates and
    missing keys happen), sometimes anything."""
    if depth <= 0:
        return _SCALARS
    wrong = _any_json(1)
    if t.map is not None:
        m = t.map
        names = [*sorted(m.fields), "undeclared"]

        def value_for(k: str) -> st.SearchStrategy[Any]:
            f = m.fields.get(k)
            return _shaped(f.type if f is not None else (m.element or t), depth - 1)
        entries = st.lists(st.sampled_from(names).flatmap(lambda k: st.tuples(st.just(k), value_for(k))),
                           max_size=4)
        return st.one_of(entries.map(dict), wrong)
    if t.list is not None:
        return st.one_of(st.lists(_shaped(t.list.item, depth - 1), max_size=3), wrong)
    return st.one_of(_SCALARS, wrong)


@given(_shaped(WIDGET, 6), st.booleans())
def test_fast_walk_agrees_with_the_walk_that_words_errors(value: Any, undeclared: bool) -> None:
    out: list[str] = []
    _typed(value, WIDGET, (), out, undeclared)
    assert _valid(value, WIDGET, undeclared) == (not out)
    assert typed_errors(value, WIDGET, undeclared=undeclared) == out


def test_each_kind_of_problem_is_found_by_both() -> None:
    cases: list[tuple[Any, bool]] = [
        ({"spec": {"replicas": "three"}}, False),                                  # scalar type
        ({"spec": {"labels": [1]}}, False),                                         # list for a map
        ({"spec": {"containers": {"a": 1}}}, False),                                # map for a list
        ({"spec": {"containers": [{"image": "x"}]}}, False),                        # item without its key
        ({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}, False),          # duplicate item
        ({"spec": {"finalizers": ["a", "a"]}}, False),                              # duplicate in a set
        ({"spec": {"finalizers": [None]}}, False),                                  # null in a set
        ({"spec": {"nope": 1}}, True),                                              # undeclared key
    ]
    for value, undeclared in cases:
        assert not _valid(value, WIDGET, undeclared), value
        assert typed_errors(value, WIDGET, undeclared=undeclared), value
    assert _valid({"spec": {"nope": 1, "containers": [{"name": "a"}]}}, WIDGET, False)
    assert typed_errors({"spec": {"nope": 1}}, WIDGET) == []
