"""kubectl_fieldown.fieldmanager.jsonpatch: RFC 6902 as the server applies it, never changing its input.

The result shares what no operation touched with the input (copied on write), so the input must come
out exactly as it went in, and the result must equal what a patch of a deep copy gives.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_fieldown.fieldmanager.jsonpatch import JsonPatchError, apply_json_patch, pointer

OBJ: dict[str, Any] = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "c", "annotations": {"a": "1"}, "managedFields": [{"manager": "m", "fieldsV1": {"f:x": {}}}]},
    "data": {"k": "v", "l": ["x", "y"]},
}

OPS = [
    [{"op": "replace", "path": "/metadata/managedFields", "value": [{}]}],
    [{"op": "test", "path": "/metadata/name", "value": "c"}, {"op": "remove", "path": "/metadata/annotations/a"}],
    [{"op": "add", "path": "/data/l/-", "value": "z"}, {"op": "add", "path": "/data/l/0", "value": "w"}],
    [{"op": "replace", "path": "/metadata/managedFields/0/manager", "value": "n"},
     {"op": "add", "path": "/metadata/managedFields/0/fieldsV1/f:y", "value": {}}],
    [{"op": "add", "path": pointer("metadata", "annotations", "a/b~c"), "value": "2"},
     {"op": "replace", "path": "/data/k", "value": {"deep": ["v"]}}, {"op": "remove", "path": "/data/l/1"}],
]


def _reference(obj: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The same operations on a deep copy, changed in place (what a server does to its own copy)."""
    doc = copy.deepcopy(obj)
    for op in ops:
        *path, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent: Any = doc
        for p in path:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        if op["op"] == "add":
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), copy.deepcopy(op["value"]))
            else:
                parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "replace":
            parent[int(last) if isinstance(parent, list) else last] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[int(last) if isinstance(parent, list) else last]
    return doc


@pytest.mark.parametrize("ops", OPS)
def test_the_input_is_unchanged_and_the_result_is_a_patched_copy(ops: list[dict[str, Any]]) -> None:
    before = json.dumps(OBJ)
    out = apply_json_patch(OBJ, ops)
    assert json.dumps(OBJ) == before
    assert json.dumps(out) == json.dumps(_reference(OBJ, ops))
    # the containers on an operation's path are the result's own: changing them leaves the input alone
    for op in ops:
        node: Any = out
        for p in op["path"].split("/")[1:-1]:
            node = node[int(p)] if isinstance(node, list) else node[p]
            if isinstance(node, dict):
                node["probe"] = 1
            else:
                node.append("probe")
    assert json.dumps(OBJ) == before


def test_a_failed_test_or_a_missing_member_is_the_servers_422() -> None:
    with pytest.raises(JsonPatchError):
        apply_json_patch(OBJ, [{"op": "test", "path": "/metadata/name", "value": "other"}])
    with pytest.raises(JsonPatchError):
        apply_json_patch(OBJ, [{"op": "remove", "path": "/metadata/labels/x"}])
    with pytest.raises(JsonPatchError):
        apply_json_patch(OBJ, [{"op": "replace", "path": "/data/missing", "value": 1}])


keys = st.sampled_from(["a", "b", "c"])
docs = st.recursive(st.one_of(st.integers(0, 3), st.text(max_size=2)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
                    max_leaves=10)


@given(st.dictionaries(keys, docs, min_size=1, max_size=3), st.lists(st.tuples(
    st.sampled_from(["add", "replace", "remove", "test"]), st.lists(st.one_of(keys, st.sampled_from(["0", "1", "-"])),
                                                                  min_size=1, max_size=3), docs), max_size=4))
def test_any_patch_leaves_its_input_alone(obj: dict[str, Any], raw: list[tuple[str, list[str], Any]]) -> None:
    ops = [{"op": o, "path": "/" + "/".join(p), "value": v} for o, p, v in raw]
    before = json.dumps(obj)
    try:
        out = apply_json_patch(obj, ops)
    except (JsonPatchError, ValueError, IndexError, TypeError, KeyError):
        assert json.dumps(obj) == before
        return
    assert json.dumps(obj) == before
    if all(o["op"] != "test" for o in ops):
        assert json.dumps(out) == json.dumps(_reference(obj, ops))
