"""``typed_errors`` answers a valid configuration from a walk that only looks for a problem (``_typed``
without ``words``: no paths, the first problem ends it) and only walks again for the messages when it
finds one: both walks must agree on every value, valid or not."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubectl_fieldown.schema.types import MapType, StructField, Type
from kubectl_fieldown.typed.validate import _typed, typed_errors

from .schemas import WIDGET
from .shaped import shaped


def _valid(value: Any, t: Type, undeclared: bool) -> bool:
    found: list[str] = []
    _typed(value, t, (), found, undeclared, words=False)
    assert found in ([], [""])  # the first problem ends the walk, and nothing is worded
    return not found

@given(shaped(WIDGET, 6), st.booleans())
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


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3)),
       st.sampled_from(["numeric", "string", "boolean", "untyped"]))
def test_a_scalar_is_judged_by_its_kind_alone(v: Any, kind: str) -> None:
    # _typed answers a scalar of the expected kind before looking at the type's sides
    from kubectl_fieldown.typed.validate import _scalar_error

    for t in (Type(scalar=kind), Type(scalar=kind, map=WIDGET.map)):  # alone, or beside a map side
        out: list[str] = []
        _typed(v, t, (), out)
        problem = _scalar_error(kind, v)
        assert out == ([f": {problem}"] if problem else [])
        # and as a map's value, worded and not
        holder = Type(map=MapType({"k": StructField(t)}, None, False))
        for words in (True, False):
            out = []
            _typed({"k": v}, holder, (), out, words=words)
            assert out == (([f".k: {problem}"] if words else [""]) if problem else [])
