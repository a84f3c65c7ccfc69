"""The owner tree on real recorded objects (tests/conformance), and FieldsV1 bytes as the server wrote them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path as FsPath
from typing import Any

import pytest

from kubectl_fieldown.fieldpath import (
    CANONICAL,
    FIELD,
    INDEX,
    KEY,
    UNSTRUCTURED,
    VALUE,
    FieldSet,
    Path,
    decode_fields_v1,
    element_value,
    encode_fields_v1,
    field,
    key,
    key_fields,
    parse_path,
    path_from_fields,
    path_string,
    set_value,
)
from kubectl_fieldown.fieldpath.element import index
from kubectl_fieldown.fieldpath.lookup import MISSING, names_in
from kubectl_fieldown.ownership.managedfields import ManagedFieldsEntry, object_entries
from kubectl_fieldown.ownership.tree import Owner, build_owner_tree, item_elements, unowned_leaves

F = path_from_fields
CONFORMANCE = FsPath(__file__).resolve().parent.parent / "conformance"
CASE_FILES = sorted(CONFORMANCE.glob("*.json")) + sorted(CONFORMANCE.glob("builtin/*.json"))


@cache
def load(name: str) -> dict[str, Any]:
    f = CONFORMANCE / f"{name}.json"
    if not f.exists():
        f = CONFORMANCE / "builtin" / f"{name}.json"
    case: dict[str, Any] = json.loads(f.read_text())
    return case


def case_name(f: FsPath) -> str:
    return f"builtin/{f.stem}" if f.parent.name == "builtin" else f.stem


def objects(case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The recorded objects that carry managedFields: live, and the returned objects of the answers."""
    out = [("live", case["live"])]
    for k in ("expect", "expectForced"):
        answer = case.get(k) or {}
        if "object" in answer:
            out.append((k, answer["object"]))
    return out


def test_corpus_is_there() -> None:
    assert len(CASE_FILES) >= 150
    assert any(f.parent.name == "builtin" for f in CASE_FILES)


# --- an independent walk of the object -----------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Server equality: numbers across int and float, bool never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def walk(obj: Any, path: Path) -> Any:
    node = obj
    for pe in path:
        kind = pe[0]
        if kind == FIELD:
            assert isinstance(node, Mapping), path
            node = node[pe[1]]
        elif kind == INDEX:
            node = node[pe[1]]
        elif kind == VALUE:
            want = element_value(pe)
            node = next(x for x in node if _same(x, want))
        else:
            assert kind == KEY
            kf = key_fields(pe)
            node = next(x for x in node if all(n in x and _same(x[n], v) for n, v in kf.items()))
    return node


# --- every case ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [case_name(f) for f in CASE_FILES])
def test_owner_tree_and_fields_v1_bytes_of_recorded_objects(name: str) -> None:
    case = load(name)
    for label, obj in objects(case):
        entries = object_entries(obj)
        tree = build_owner_tree(obj)
        assert tree.entries == entries
        union = FieldSet()
        for e in entries:
            union = union | e.fields
        # exactly the union of the entries' sets, in document order
        assert [f.path for f in tree.fields] == list(union.sorted_paths()), label
        assert tree.owned_set() == union
        for f in tree.fields:
            want = tuple(
                Owner(e.manager, e.operation, e.subresource, e.api_version, i)
                for i, e in enumerate(entries)
                if e.fields.has(f.path)
            )
            assert f.owners == want, (label, f.path_string)
            # the value is the object's own node at that path
            assert f.is_set, (label, f.path_string)
            assert f.value is walk(obj, f.path), (label, f.path_string)
        for i, e in enumerate(entries):
            assert tree.field_count(i) == len(e.fields) == sum(1 for f in tree.fields if i in _indexes(f.owners))
        # every entry's FieldsV1 re-encodes byte for byte. The CRD server returns managedFields inside an
        # unstructured map (Go-map, i.e. string, key order); built-in types store SMD's canonical bytes.
        style = CANONICAL if case.get("builtin") else UNSTRUCTURED
        for raw in obj["metadata"].get("managedFields") or []:
            recorded = json.dumps(raw["fieldsV1"], separators=(",", ":"), ensure_ascii=False)
            assert encode_fields_v1(decode_fields_v1(raw["fieldsV1"]), style) == recorded, label
            assert encode_fields_v1(decode_fields_v1(recorded), style) == recorded, label


def _indexes(owners: tuple[Owner, ...]) -> set[int]:
    return {o.entry_index for o in owners}


def test_style_matters_for_custom_resources() -> None:
    # some recorded CR entries are not in canonical order (k:{..443..} before k:{..80..})
    differ = 0
    for f in CASE_FILES:
        case = load(case_name(f))
        if case.get("builtin"):
            continue
        for _label, obj in objects(case):
            for raw in obj["metadata"].get("managedFields") or []:
                recorded = json.dumps(raw["fieldsV1"], separators=(",", ":"), ensure_ascii=False)
                canonical = encode_fields_v1(decode_fields_v1(raw["fieldsV1"]), CANONICAL)
                if canonical != recorded:
                    differ += 1
                    assert json.loads(canonical) == raw["fieldsV1"]  # same entries, other order
    assert differ > 0


# --- by hand ------------------------------------------------------------------------------------


def owned(name: str, label: str = "live") -> dict[str, tuple[list[tuple[str, str, str]], Any]]:
    obj = dict(objects(load(name)))[label]
    tree = build_owner_tree(obj)
    return {f.path_string: ([(o.manager, o.operation, o.subresource) for o in f.owners], f.value) for f in tree.fields}


def test_hpa_handover() -> None:
    t = owned("cur-hpa-handover")
    assert t[".spec.replicas"] == ([("hpa-controller", "Update", "scale")], 5)
    assert t[".spec.color"] == ([("user", "Apply", "")], "blue")
    assert len(t) == 2
    tree = build_owner_tree(load("cur-hpa-handover")["live"])
    (replicas,) = [f for f in tree.fields if f.path == F("spec", "replicas")]
    assert replicas.owners[0].api_version == "example.com/v1" and replicas.owners[0].entry_index == 1


def test_shared_ownership() -> None:
    t = owned("cur-shared-ownership-then-drop")
    assert t[".spec.color"] == ([("bob", "Apply", ""), ("alice", "Apply", "")], "red")
    t = owned("cur-set-list-finalizers-shared")
    assert t['.spec.finalizers[="f1"]'] == ([("alice", "Apply", "")], "f1")
    assert t['.spec.finalizers[="f2"]'] == ([("alice", "Apply", ""), ("bob", "Apply", "")], "f2")
    assert t['.spec.finalizers[="f3"]'] == ([("bob", "Apply", "")], "f3")


def test_int_keys_and_sets() -> None:
    t = owned("cur-gizmo-cluster-scoped-int-key")
    assert t[".spec.rules[id=2].weight"] == ([("dave", "Update", "")], 5)
    assert t[".spec.rules[id=2]"][1] == {"action": "deny", "id": 2, "weight": 5}
    assert t[".spec.tags[=1]"] == ([("alice", "Apply", "")], 1)
    # the stored key is a float; the object holds an int; they are one element
    tree = build_owner_tree(load("cur-gizmo-cluster-scoped-int-key")["live"])
    rule = next(f for f in tree.fields if f.path_string == ".spec.rules[id=2]")
    assert type(key_fields(rule.path[-1])["id"]) is float
    assert rule.path == (*F("spec", "rules"), key({"id": 2}))


def test_map_owned_as_a_node_and_per_key() -> None:
    t = owned("cur-empty-map-ownership")
    assert t[".spec.labels"] == ([("alice", "Apply", "")], {"a": "x"})
    assert t[".spec.labels.a"] == ([("bob", "Apply", "")], "x")


def test_builtin_two_key_ports() -> None:
    t = owned("cur-svc-ports-two-keys")
    keyed = [p for p in t if p.startswith(".spec.ports[") and p.endswith("]")]
    assert keyed and all("protocol=" in p and "port=" in p for p in keyed)
    for p in keyed:
        assert isinstance(t[p][1], dict)


# --- API of the tree ----------------------------------------------------------------------------


def _tree_obj() -> dict[str, Any]:
    return {
        "metadata": {
            "labels": {"app": "web"},
            "managedFields": [
                {
                    "manager": "alice",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:gone": {}}},
                },
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {"f:f": {"v:\"x\"": {}}},
                    },
                    "subresource": "status",
                },
            ],
        },
        "spec": {"f": ["x"]},
    }


def test_tree_api() -> None:
    obj = _tree_obj()
    tree = build_owner_tree(obj)
    by = {f.path_string: f for f in tree.fields}
    assert list(by) == ['.metadata.labels.app', ".spec.f[=\"x\"]", ".spec.gone"]
    assert [o.manager for o in by[".metadata.labels.app"].owners] == ["alice", "kube-controller-manager"]
    assert by[".metadata.labels.app"].owners[1].subresource == "status"
    # an owned path the object does not set
    assert by[".spec.gone"].value is MISSING and not by[".spec.gone"].is_set
    assert by['.spec.f[="x"]'].value == "x"
    assert tree.managers() == tree.entries and tree.field_count(0) == 2 and tree.field_count(1) == 2
    # filters: manager globs keep the co-owners; prefixes are path prefixes
    kcm = tree.filtered(managers=["kube-*"])
    assert [f.path_string for f in kcm.fields] == [".metadata.labels.app", '.spec.f[="x"]']
    assert [o.manager for o in kcm.fields[0].owners] == ["alice", "kube-controller-manager"]
    assert [f.path_string for f in tree.filtered(prefixes=[F("spec")]).fields] == ['.spec.f[="x"]', ".spec.gone"]
    both = tree.filtered(managers=["alice"], prefixes=[F("spec")])
    assert [f.path_string for f in both.fields] == [".spec.gone"]
    assert tree.filtered(managers=["nobody"]).fields == []
    assert tree.filtered().fields == tree.fields


def test_tree_with_given_entries_and_without_managed_fields() -> None:
    obj = _tree_obj()
    only = ManagedFieldsEntry("x", "Apply", "v1", FieldSet([(field("spec"), field("f"), set_value("x"))]))
    tree = build_owner_tree(obj, [only])
    assert [(f.path_string, [o.manager for o in f.owners]) for f in tree.fields] == [('.spec.f[="x"]', ["x"])]
    assert build_owner_tree({"metadata": {"name": "n"}}).fields == []
    assert build_owner_tree({}).fields == []


def test_path_strings_of_the_tree_parse_back() -> None:
    for f in CASE_FILES[:60]:
        case = load(case_name(f))
        tree = build_owner_tree(case["live"])
        owned_set = tree.owned_set()
        for of in tree.fields:
            p = parse_path(of.path_string, names_in([], owned_set))
            assert p == of.path


def test_item_elements_from_owned_set() -> None:
    items = [{"name": "a", "port": 80}, {"name": "b"}, "stray"]
    owned = FieldSet([(key({"name": "a"}),)])
    assert item_elements(items, owned) == [key({"name": "a"}), key({"name": "b"}), index(2)]
    two_keys = FieldSet([(key({"port": 80, "protocol": "TCP"}),)])
    assert item_elements([{"port": 80, "protocol": "TCP"}], two_keys) == [key({"port": 80, "protocol": "TCP"})]
    assert item_elements(["x", "y"], FieldSet([(set_value("x"),)])) == [set_value("x"), set_value("y")]
    assert item_elements(["x", "y"], FieldSet()) == [index(0), index(1)]


def test_unowned_leaves_lists_maps_and_atomic_nodes() -> None:
    obj = {
        "apiVersion": "v1", "kind": "X", "metadata": {"name": "x", "uid": "u", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "finalizers": ["f1", "f2"],
            "containers": [{"name": "c1", "image": "i", "pull": "Always"}, {"name": "c2", "image": "j"}],
            "args": ["--x"],
            "selector": {"matchLabels": {"k": "v"}},
            "empty": {},
            "nothing": None,
        },
    }
    s, c = field("spec"), field("containers")
    owned = FieldSet([
        (field("metadata"), field("labels"), field("a")),
        (s, field("finalizers"), set_value("f1")),
        (s, c, key({"name": "c1"})), (s, c, key({"name": "c1"}), field("image")),
        (s, field("selector")),
    ])
    got = {path_string(f.path): f.value for f in unowned_leaves(obj, owned)}
    assert got == {
        ".metadata.labels.b": "2",
        '.spec.finalizers[="f2"]': "f2",
        '.spec.containers[name="c1"].name': "c1",
        '.spec.containers[name="c1"].pull': "Always",
        '.spec.containers[name="c2"].name': "c2",
        '.spec.containers[name="c2"].image': "j",
        ".spec.args": ["--x"],  # nobody owns any part of it: one leaf
        ".spec.empty": {},
        ".spec.nothing": None,
    }
    assert all(not f.owners for f in unowned_leaves(obj, owned))
