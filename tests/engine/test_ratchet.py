"""typed/ratchet.py: when validation ratcheting counts a value as unchanged, case by case as the lab
answered (tests/engine/test_constraints_differential.py compares generated writes with it)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.schema.types import DEDUCED, MapType, Type
from kubectl_fieldown.typed.ratchet import unchanged, unchanged_in_schema

from .schemas import NUMBER, STRING, list_map, set_of, struct

ITEM = struct({"name": STRING, "v": STRING})
FREE = Type(map=MapType({}, DEDUCED), json_type="object")  # x-kubernetes-preserve-unknown-fields
SPEC = struct({"items": list_map(ITEM, "name"), "tags": set_of(STRING), "n": NUMBER, "free": FREE})

ITEM_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "string"}}}
SPEC_SCHEMA = {"type": "object", "properties": {
    "items": {"type": "array", "items": ITEM_SCHEMA, "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"]},
    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
    "n": {"type": "integer"},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}

X, Y = {"name": "x", "v": "bad"}, {"name": "y", "v": "ok"}


@pytest.mark.parametrize(("new", "old", "want"), [
    ({"n": 1}, {"n": 1}, True),
    ({"n": 1.0}, {"n": 1}, False),  # an int64 is no float64
    ({"items": [X, Y]}, {"items": [Y, X]}, True),  # a list-map's items are matched by key
    ({"items": [X, Y]}, {"items": [X, {"name": "y", "v": "no"}]}, False),
    ({"items": [X]}, {"items": [X, Y]}, False),
    # repeated keys: each new item meets the first old item with its key
    ({"items": [X, {"name": "x", "v": "ok"}]}, {"items": [X, {"name": "x", "v": "ok"}]}, False),
    ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, False),  # a set is compared whole
    ({"free": {}}, {"free": {}}, True),
    ({"free": {"k": 1}}, {"free": {"k": 1}}, False),  # a key without a schema: never unchanged
    ({"n": None}, {"n": None}, True),
    ({"n": None}, {}, False),
])
def test_unchanged_as_apiserver_counts_it(new: dict[str, Any], old: dict[str, Any], want: bool) -> None:
    assert unchanged(new, old, SPEC) is want
    assert unchanged_in_schema(new, old, SPEC_SCHEMA) is want


def test_a_shared_value_is_compared_too_where_it_may_differ_from_itself() -> None:
    same = {"free": {"k": 1}}
    assert unchanged(same, same, SPEC) is False
    assert unchanged_in_schema(same, same, SPEC_SCHEMA) is False
    plain = {"n": 3, "tags": ["a"]}
    assert unchanged(plain, plain, SPEC) and unchanged_in_schema(plain, plain, SPEC_SCHEMA)
