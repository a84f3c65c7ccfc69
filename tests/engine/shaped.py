"""Values for property tests of the typed walks: mostly what a type expects (declared keys, keyed
items from small pools, so duplicates and missing keys happen), sometimes anything."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kubectl_fieldown.schema.types import Type

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                     st.sampled_from(["a", "b", "m", "TCP", "UDP"]))
_KEYS = st.sampled_from(["x", "name", "a", "value", "other"])


def _any_json(depth: int) -> st.SearchStrategy[Any]:
    if depth <= 0:
        return _SCALARS
    inner = _any_json(depth - 1)
    return st.one_of(_SCALARS, st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3))


def shaped(t: Type, depth: int) -> st.SearchStrategy[Any]:
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
            return shaped(f.type if f is not None else (m.element or t), depth - 1)
        entries = st.lists(st.sampled_from(names).flatmap(lambda k: st.tuples(st.just(k), value_for(k))),
                           max_size=4)
        return st.one_of(entries.map(dict), wrong)
    if t.list is not None:
        return st.one_of(st.lists(shaped(t.list.item, depth - 1), max_size=3), wrong)
    return st.one_of(_SCALARS, wrong)
