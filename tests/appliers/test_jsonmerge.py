"""kubectl's three-way JSON merge patch and the server's JSON merge patch (appliers/jsonmerge.py).

Tables restated from the semantics of evanphx/json-patch's v4 API (``MergePatch``,
``CreateMergePatch``, ``matchesValue``; RFC 7386 appendix A) and apimachinery's
``CreateThreeWayJSONMergePatch`` (its own table of original / modified / current, the patch and
the patched object), as kubectl 1.36 and the lab's API server run them. The last rows of each table
are the cases where the replays of tests/appliers caught the module out.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubectl_fieldown.appliers import MergePatchError, apply_merge_patch, create_merge_patch, three_way_merge_patch

# (document, patch, result) — MergePatch
MERGE: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # RFC 7386 appendix A (the object cases)
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"a": 1, "e": None}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    # recursion into objects leaves the other members alone; other values are replaced whole
    ({"person": {"title": "hello", "age": 18}}, {"person": {"title": "goodbye"}},
     {"person": {"title": "goodbye", "age": 18}}),
    ({"a": 1, "b": 1}, {"a": 2}, {"a": 2, "b": 1}),
    ({"array": ["one", "two"]}, {"array": []}, {"array": []}),
    # a null member of the document is replaced like a missing one, nulls of the patch pruned
    ({"title": None}, {"title": {"foo": "bar", "x": None}}, {"title": {"foo": "bar"}}),
    # a map replaced by a list takes the patch as it is; a scalar replaced by a map or list is pruned
    ({"a": {"k": 1}}, {"a": [{"x": None}]}, {"a": [{"x": None}]}),
    ({"a": 1}, {"a": [{"x": None}]}, {"a": [{}]}),
    # null items of lists stay (pruneAryNulls keeps them): caught by the replays
    ({"a": [{"b": "c"}]}, {"a": [None, 1]}, {"a": [None, 1]}),
    ({"a": ["b"]}, {"a": ["b", None]}, {"a": ["b", None]}),
    ({"a": []}, {"a": ["b", None, None, "a"]}, {"a": ["b", None, None, "a"]}),
    ({}, {"a": [1, None, {"x": None, "y": [None]}]}, {"a": [1, None, {"y": [None]}]}),
]


@pytest.mark.parametrize(("doc", "patch", "result"), MERGE)
def test_merge_patch(doc: dict[str, Any], patch: dict[str, Any], result: dict[str, Any]) -> None:
    before = copy.deepcopy((doc, patch))
    assert apply_merge_patch(doc, patch) == result
    assert (doc, patch) == before


# (original, modified, patch) — CreateMergePatch
CREATE: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ({"title": "hello", "nested": {"one": 1, "two": 2}}, {"title": "goodbye", "nested": {"one": 2, "two": 2}},
     {"title": "goodbye", "nested": {"one": 2}}),
    ({"title": "hello", "array": ["one", "two"], "notmatch": [1, 2, 3]},
     {"title": "hello", "array": ["one", "two", "three"], "notmatch": [1, 2, 3]},
     {"array": ["one", "two", "three"]}),
    ({"array": [{"banana": True}, {"evil": False}], "same": [{"one": 1}, {"two": 2}]},
     {"array": [{"banana": False}, {"evil": True}], "same": [{"one": 1}, {"two": 2}]},
     {"array": [{"banana": False}, {"evil": True}]}),
    ({"title": "hello", "nested": {"one": 1, "two": 2}}, {"title": "hello", "nested": {"one": 1}},
     {"nested": {"two": None}}),
    ({"array": None}, {"array": []}, {"array": []}),
    ({"a": [1, 2, 3, 4], "n": None, "pi": 3.1416, "t": True, "nested": {"n": None, "o": {"p": [{"q": "r"}]}}},
     {"a": [1, 2, 3, 4], "n": None, "pi": 3.1416, "t": True, "nested": {"n": None, "o": {"p": [{"q": "r"}]}}},
     {}),
    ({}, {"hello": "world", "n": None, "i": 123, "a": [1, 2]}, {"hello": "world", "n": None, "i": 123, "a": [1, 2]}),
    ({"hello": "world", "n": None, "nested": {"i": 1}}, {}, {"hello": None, "n": None, "nested": None}),
    ({"outer": [{"inner": [{"s": "abc"}], "s": "def"}]}, {"outer": [{"inner": [{"s": "abc"}], "s": "def"}]}, {}),
    # JSON numbers are float64 on both sides; a type change replaces the value
    ({"i": 1, "b": True}, {"i": 1.0, "b": 1}, {"b": 1}),
    # matchesValue: nulls match nulls, inside lists too
    ({"two": [{"one": None}, {"two": None}]}, {"two": [{"one": None}, {"two": None}]}, {}),
    # ...but a member set to null is not a missing member, and two maps need the same keys: caught
    # by the replays (kubectl sends the list again)
    ({"x": [{}]}, {"x": [{"a": None}]}, {"x": [{"a": None}]}),
    ({"x": [{"1": None}]}, {"x": [{"2": None}]}, {"x": [{"2": None}]}),
    ({"x": [{"1": True}]}, {"x": [{"2": True}]}, {"x": [{"2": True}]}),
]


@pytest.mark.parametrize(("original", "modified", "patch"), CREATE)
def test_create_merge_patch(original: dict[str, Any], modified: dict[str, Any], patch: dict[str, Any]) -> None:
    before = copy.deepcopy((original, modified))
    assert create_merge_patch(original, modified) == patch
    assert (original, modified) == before


# (description, original (last-applied; None: no annotation), modified, current, patch, result)
THREE_WAY: list[tuple[str, Any, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("nil original", None, {"name": 1, "value": 1}, {"name": 1, "other": "a"},
     {"value": 1}, {"name": 1, "value": 1, "other": "a"}),
    ("nil patch", {"name": 1}, {"name": 1}, {"name": 1}, {}, {"name": 1}),
    ("add field to map", {"name": 1}, {"name": 1, "value": 1}, {"name": 1, "other": "a"},
     {"value": 1}, {"name": 1, "value": 1, "other": "a"}),
    ("add field to map with conflict", {"name": 1}, {"name": 1, "value": 1}, {"name": "a", "other": "a"},
     {"name": 1, "value": 1}, {"name": 1, "value": 1, "other": "a"}),
    ("add field and delete field from map", {"name": 1}, {"value": 1}, {"name": 1, "other": "a"},
     {"name": None, "value": 1}, {"value": 1, "other": "a"}),
    ("delete field from nested map", {"simpleMap": {"key1": 1, "key2": 1}}, {"simpleMap": {"key1": 1}},
     {"simpleMap": {"key1": 1, "key2": 1, "other": "a"}}, {"simpleMap": {"key2": None}},
     {"simpleMap": {"key1": 1, "other": "a"}}),
    ("delete field from nested map with conflict", {"simpleMap": {"key1": 1, "key2": 1}},
     {"simpleMap": {"key1": 1}}, {"simpleMap": {"key1": "a", "key2": 1, "other": "a"}},
     {"simpleMap": {"key1": 1, "key2": None}}, {"simpleMap": {"key1": 1, "other": "a"}}),
    ("delete all fields from map", {"name": 1, "value": 1}, {}, {"name": 1, "value": 1, "other": "a"},
     {"name": None, "value": None}, {"other": "a"}),
    ("add field and delete all fields from map with conflict", {"name": 1, "value": 1}, {"other": "a"},
     {"name": 1, "value": 1, "other": "b"}, {"name": None, "value": None, "other": "a"}, {"other": "a"}),
    ("replace list of scalars with conflict", {"intList": [1, 2]}, {"intList": [2, 3]}, {"intList": [1, 4]},
     {"intList": [2, 3]}, {"intList": [2, 3]}),
    ("patch with different scalar type", {"foo": 1}, {"foo": True}, {"foo": 1, "bar": 2},
     {"foo": True}, {"foo": True, "bar": 2}),
    ("patch from scalar to list", {"foo": 0}, {"foo": [1, 2]}, {"foo": 0, "bar": 2},
     {"foo": [1, 2]}, {"foo": [1, 2], "bar": 2}),
    ("patch from list to scalar", {"foo": [1, 2]}, {"foo": 0}, {"foo": [1, 2], "bar": 2},
     {"foo": 0}, {"foo": 0, "bar": 2}),
    ("patch from map to list", {"foo": {"baz": 1}}, {"foo": [1, 2]}, {"foo": {"baz": 1}, "bar": 2},
     {"foo": [1, 2]}, {"foo": [1, 2], "bar": 2}),
    ("patch from list to map", {"foo": [1, 2]}, {"foo": {"baz": 0}}, {"foo": [1, 2], "bar": 2},
     {"foo": {"baz": 0}}, {"foo": {"baz": 0}, "bar": 2}),
    ("patch with different nested types", {"foo": [{"a": True}, 2, False]}, {"foo": [1, False, {"b": 1}]},
     {"foo": [{"a": True}, 2, False], "bar": 0}, {"foo": [1, False, {"b": 1}]},
     {"foo": [1, False, {"b": 1}], "bar": 0}),
    ("patch array with nil", {"foo": [{"a": True}, None, False], "bar": [], "drop": [1]},
     {"foo": [1, False, {"b": 1}], "bar": ["c", None, None, "a"], "drop": [None]},
     {"foo": [{"a": True}, 2, False], "bar": ["c", None, None, "a"], "drop": None},
     {"foo": [1, False, {"b": 1}], "drop": [None]},
     {"foo": [1, False, {"b": 1}], "bar": ["c", None, None, "a"], "drop": [None]}),
    ("whole floats go as Go prints them, big integers as float64 holds them", {}, {"f": 2.0, "n": 2**53 + 1},
     {}, {"f": 2, "n": 2**53}, {"f": 2, "n": 2**53}),
    # an explicit null of the manifest is a deletion (from the last-applied side), sent within the
    # map the additions bring, and pruned by the server where the map is new
    ("explicit nulls of the manifest are sent as deletions", {}, {"m": {"a": None, "b": 1}}, {},
     {"m": {"a": None, "b": 1}}, {"m": {"b": 1}}),
    # caught by the replays: a CSA-created object whose manifest has a null member in a list item
    # (kubectl's create pruned it) gets the list sent again on every apply
    ("null member of a list item", {"spec": {"objs": [{"a": None, "b": 1}]}}, {"spec": {"objs": [{"a": None, "b": 1}]}},
     {"spec": {"objs": [{"b": 1}]}}, {"spec": {"objs": [{"b": 1}]}}, {"spec": {"objs": [{"b": 1}]}}),
    # caught by the replays: a null item of a list is sent and kept
    ("null item of a list", {"spec": {"list": [1]}}, {"spec": {"list": [1, None]}}, {"spec": {"list": [1]}},
     {"spec": {"list": [1, None]}}, {"spec": {"list": [1, None]}}),
]


@pytest.mark.parametrize(("original", "modified", "current", "patch", "result"),
                         [c[1:] for c in THREE_WAY], ids=[c[0] for c in THREE_WAY])
def test_three_way_merge_patch(original: Any, modified: dict[str, Any], current: dict[str, Any],
                               patch: dict[str, Any], result: dict[str, Any]) -> None:
    before = copy.deepcopy((original, modified, current))
    got = three_way_merge_patch(original, modified, current)
    assert json.dumps(got, sort_keys=True) == json.dumps(patch, sort_keys=True)
    assert apply_merge_patch(current, got) == result
    assert (original, modified, current) == before


@pytest.mark.parametrize(("modified", "current"), [
    ({"apiVersion": "v1", "kind": "K"}, {"apiVersion": "v2", "kind": "K"}),
    ({"kind": "K2"}, {"kind": "K"}),
    ({"metadata": {"name": "b"}}, {"metadata": {"name": "a"}}),
])
def test_preconditions(modified: dict[str, Any], current: dict[str, Any]) -> None:
    with pytest.raises(MergePatchError, match="At least one of apiVersion, kind and name was changed"):
        three_way_merge_patch(None, modified, current)


def test_a_removed_name_is_not_a_changed_name() -> None:
    # the deletion patch only keeps nulls, and a name the manifest keeps is no change
    assert three_way_merge_patch({"metadata": {"name": "a", "x": 1}}, {"metadata": {"name": "a"}},
                                 {"metadata": {"name": "a", "x": 1}}) == {"metadata": {"x": None}}
