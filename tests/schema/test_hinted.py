"""schema/hinted.py: what FieldsV1 reveals about a schema nobody gave us."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.fieldpath import FieldSet, decode_fields_v1
from kubectl_fieldown.schema.hinted import hinted_root, revealed_lists, with_list_hints
from kubectl_fieldown.schema.types import DEDUCED, UNTYPED, GroupVersionKind, KindSchema, Type

CONTAINERS = {"f:spec": {"f:containers": {
    'k:{"name":"app"}': {".": {}, "f:name": {}, "f:image": {},
                          "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}},
    'k:{"name":"side"}': {".": {}, "f:name": {}}}}}
FINALIZERS = {"f:spec": {"f:finalizers": {'v:"a"': {}, 'v:"b"': {}}}}


def sets(*fields_v1: dict[str, Any]) -> list[FieldSet]:
    return [decode_fields_v1(f) for f in fields_v1]


def at(t: Type, *names: str) -> Type:
    for name in names:
        if name == "[*]":
            assert t.list is not None
            t = t.list.item
        else:
            assert t.map is not None
            t = t.map.fields[name].type
    return t


@pytest.mark.parametrize("fields_v1, live, want", [
    pytest.param([CONTAINERS], None,
                 [(".spec.containers", "keyed by name"),
                  (".spec.containers[*].ports", "keyed by containerPort, protocol")],
                 id="list-maps, nested"),
    pytest.param([FINALIZERS], None, [(".spec.finalizers", "a set")], id="set"),
    pytest.param([{"f:spec": {"f:selector": {}}}], {"spec": {"selector": {"app": "x"}}},
                 [(".spec.selector", "atomic")], id="map owned whole"),
    pytest.param([{"f:spec": {"f:selector": {}}}], {"spec": {"selector": {}}}, [], id="empty map shows nothing"),
    pytest.param([{"f:spec": {"f:selector": {}}}, {"f:spec": {"f:selector": {"f:app": {}}}}],
                 {"spec": {"selector": {"app": "x"}}}, [], id="a map whose keys are owned is granular"),
    pytest.param([{"f:spec": {"f:replicas": {}, "f:tags": {}}}], {"spec": {"replicas": 1, "tags": ["a"]}}, [],
                 id="scalars and atomic lists show nothing"),
    pytest.param([{"f:spec": {"f:x": {'k:{"a":1}': {}, 'k:{"b":1}': {}}}}], None, [],
                 id="items keyed by different fields show nothing"),
    pytest.param([{"f:spec": {"f:x": {'k:{"a":1}': {}, 'v:1': {}}}}], None, [], id="keys and values show nothing"),
])
def test_what_managed_fields_reveal(fields_v1: list[dict[str, Any]], live: dict[str, Any] | None,
                                    want: list[tuple[str, str]]) -> None:
    assert revealed_lists(sets(*fields_v1), live) == want
    root = hinted_root(sets(*fields_v1), live)
    assert (root is None) == (not want)


def test_the_refined_types() -> None:
    root = hinted_root(sets(CONTAINERS, FINALIZERS))
    assert root is not None
    containers = at(root, "spec", "containers")
    assert containers.list is not None and containers.list.is_map and containers.list.keys == ("name",)
    ports = at(containers, "[*]", "ports")
    assert ports.list is not None and ports.list.keys == ("containerPort", "protocol")
    assert at(ports, "[*]") is DEDUCED  # nothing more is known of an item: maps granular, lists atomic
    finalizers = at(root, "spec", "finalizers")
    assert finalizers.list is not None and finalizers.list.is_set
    # everything not revealed is the server's own fallback
    assert root.map is not None and root.map.element is DEDUCED
    assert at(hinted_root(sets({"f:spec": {"f:s": {}}}), {"spec": {"s": {"a": 1}}}) or DEDUCED, "spec", "s") is UNTYPED


def test_a_schema_keeps_saying_it_is_deduced() -> None:
    gvk = GroupVersionKind("example.com", "v1", "Widget")
    deduced = KindSchema(gvk, DEDUCED, "deduced: no schema known")
    hinted = with_list_hints(deduced, sets(FINALIZERS))
    assert hinted.deduced and hinted.root is not DEDUCED
    assert hinted.source == "deduced: no schema known; from the live managedFields: .spec.finalizers a set"
    assert with_list_hints(deduced, sets({"f:spec": {"f:a": {}}})) is deduced
    given = KindSchema(gvk, UNTYPED, "CRD widgets.example.com")
    assert with_list_hints(given, sets(FINALIZERS)) is given  # a real schema is never second-guessed
