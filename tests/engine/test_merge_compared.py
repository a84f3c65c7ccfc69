"""``merge_compared`` is ``merge`` followed by ``compare(live, merged)``: the apply records what its
merge changed on the way instead of a second walk. Both answers must be those of the two walks on
every pair of values, typed or not, duplicated items and kinds that differ included."""

from __future__ import annotations

import copy
import marshal
from typing import Any

import pytest
from hypothesis import given, settings

from kubectl_fieldown.fieldpath import path_string
from kubectl_fieldown.schema.types import DEDUCED, Type
from kubectl_fieldown.typed.compare import Comparison, compare
from kubectl_fieldown.typed.merge import merge, merge_compared

from .schemas import CONTAINER, STRING, WIDGET, list_map, set_of
from .shaped import shaped


def _paths(c: Comparison) -> tuple[list[str], list[str], list[str]]:
    return tuple(sorted(path_string(p) for p in s) for s in (c.added, c.modified, c.removed))  # type: ignore[return-value]


def _agrees(live: Any, config: Any, t: Type) -> None:
    before = marshal.dumps((live, config), 2)
    merged, compared = merge_compared(live, config, t)
    expected = merge(live, config, t)
    assert marshal.dumps(merged, 2) == marshal.dumps(expected, 2)  # exact types and key order
    walked = compare(live, expected, t)
    # every set exactly (the elements' number types too), the paths spelled for a failure's message
    assert compared == walked, (_paths(compared), _paths(walked))
    assert marshal.dumps((live, config), 2) == before  # the inputs are only read


@settings(max_examples=400)
@given(shaped(WIDGET, 6), shaped(WIDGET, 6))
def test_the_merge_records_what_compare_finds(live: Any, config: Any) -> None:
    _agrees(live, config, WIDGET)
    _agrees(live, config, DEDUCED)


@settings(max_examples=200)
@given(shaped(WIDGET, 6))
def test_a_configuration_equal_to_the_live_object_changes_nothing(live: Any) -> None:
    _agrees(live, copy.deepcopy(live), WIDGET)
    _agrees(live, live, WIDGET)


SPEC_OF = {"spec": {"containers": [{"name": "a", "image": "x"}]}}

CASES = [
    # a duplicated live element collapses into the configuration's item: compare's own walk of the list
    ("duplicated live items", {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "a", "image": "2"}]}},
     SPEC_OF),
    ("duplicated configuration items", {"spec": {"containers": [{"name": "a", "image": "1"}]}},
     {"spec": {"containers": [{"name": "a", "image": "2"}, {"name": "a", "image": "3"}]}}),
    ("an item without its key", {"spec": {"containers": [{"image": "1"}, {"name": "a"}]}}, SPEC_OF),
    ("a map where a list was", {"spec": {"containers": {"name": "a"}}}, SPEC_OF),
    ("a list where a map was", {"spec": {"config": [1, 2]}}, {"spec": {"config": {"a": 1}}}),
    ("an atomic map changed", {"spec": {"selector": {"matchLabels": {"a": "1"}}}},
     {"spec": {"selector": {"matchLabels": {"a": "2"}}}}),
    ("an atomic map rewritten equal", {"spec": {"selector": {"matchLabels": {"a": "1"}}}},
     {"spec": {"selector": {"matchLabels": {"a": "1"}}}}),
    ("an atomic list", {"spec": {"args": ["a"]}}, {"spec": {"args": ["a", "b"]}}),
    ("a set", {"spec": {"finalizers": ["a", "a", "b"]}}, {"spec": {"finalizers": ["c", "a"]}}),
    ("empty on both sides", {"spec": {"labels": {}, "containers": []}}, {"spec": {"labels": {}, "containers": []}}),
    ("null against a map", {"spec": {"labels": {"a": "1"}}}, {"spec": {"labels": None}}),
    ("a map against null", {"spec": {"labels": None}}, {"spec": {"labels": {"a": "1"}}}),
    ("an empty live map", {"spec": {"labels": {}}}, {"spec": {"labels": {"a": "1"}}}),
    ("an empty live list", {"spec": {"containers": []}}, SPEC_OF),
    ("a defaulted key of an item", {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}},
     {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 1}]}]}}),
    ("equal numbers of two types", {"spec": {"replicas": 1}}, {"spec": {"replicas": 1.0}}),
    # a scalar where a map or a list was, under a type with every side: compare removes what was below
    ("a scalar where a map was", {"spec": {"config": {"a": {"b": 1}, "c": [1]}}},
     {"spec": {"config": {"a": 1, "c": "x"}}}),
    ("a scalar where null was", {"spec": {"config": {"a": None}, "maxSurge": None}},
     {"spec": {"config": {"a": 1}, "maxSurge": "25%"}}),
    ("a new key holding containers", {}, {"spec": {"containers": [{"name": "a"}], "labels": {"b": "2"}}}),
    ("a null object", None, {"spec": {"replicas": 1}}),
]


@pytest.mark.parametrize(("name", "live", "config"), CASES, ids=[c[0] for c in CASES])
def test_the_shapes_compare_walks_itself(name: str, live: Any, config: Any) -> None:
    _agrees(live, config, WIDGET)


@pytest.mark.parametrize("t", [CONTAINER, list_map(CONTAINER, "name"), set_of(STRING), DEDUCED])
def test_other_roots(t: Type) -> None:
    for live, config in [({"name": "a", "env": [{"name": "x"}]}, {"name": "a", "env": [{"name": "x", "value": "1"}]}),
                         ([{"name": "a"}, {"name": "b"}], [{"name": "b", "image": "i"}]),
                         (["a", "b"], ["b", "c"]), (1, 2), ({"a": 1}, [1])]:
        _agrees(live, config, t)
