"""FieldSet: exact per-path set algebra, iteration orders, prefix helpers (ssa-semantics §1)."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_fieldown.base.value import key_value
from kubectl_fieldown.fieldpath import (
    CANONICAL,
    EMPTY,
    KEY,
    UNSTRUCTURED,
    VALUE,
    FieldSet,
    Path,
    field,
    index,
    key,
    parse_element,
    path_from_fields,
    set_value,
)
from kubectl_fieldown.fieldpath.fieldsv1 import decode, encode, to_json_object

from .strategies import paths, small_elements, wide_sets

F = path_from_fields
A, AB, AC, ACD, B, C = F("a"), F("a", "b"), F("a", "c"), F("a", "c", "d"), F("b"), F("c")


def fs(*paths: Path) -> FieldSet:
    return FieldSet(paths)


def paths_of(s: FieldSet) -> set[Path]:
    out = set(s)
    assert len(out) == len(s)
    return out


# --- algebra tables -----------------------------------------------------------------------------

ALGEBRA = [
    # (left, right, union, intersection, difference, recursive_difference)
    ("disjoint", fs(A), fs(B), fs(A, B), fs(), fs(A), fs(A)),
    ("same", fs(A, AB), fs(A, AB), fs(A, AB), fs(A, AB), fs(), fs()),
    # owning a parent says nothing about its children, and the reverse
    ("parent-vs-child", fs(A), fs(AB), fs(A, AB), fs(), fs(A), fs(A)),
    ("child-vs-parent", fs(AB), fs(A), fs(A, AB), fs(), fs(AB), fs()),
    ("deep-child-vs-parent", fs(ACD, B), fs(A), fs(A, ACD, B), fs(), fs(ACD, B), fs(B)),
    ("member-and-child", fs(A, AB, AC), fs(AB), fs(A, AB, AC), fs(AB), fs(A, AC), fs(A, AC)),
    ("sibling-children", fs(AB), fs(AC), fs(AB, AC), fs(), fs(AB), fs(AB)),
    ("empty-left", fs(), fs(A), fs(A), fs(), fs(), fs()),
    ("empty-right", fs(A, AB), fs(), fs(A, AB), fs(), fs(A, AB), fs(A, AB)),
    ("rd-only-below-members", fs(A, AB, ACD, C), fs(AC, C), fs(A, AB, AC, ACD, C), fs(C), fs(A, AB, ACD), fs(A, AB)),
]


@pytest.mark.parametrize(("name", "left", "right", "u", "i", "d", "rd"), ALGEBRA, ids=[a[0] for a in ALGEBRA])
def test_algebra_table(
    name: str, left: FieldSet, right: FieldSet, u: FieldSet, i: FieldSet, d: FieldSet, rd: FieldSet
) -> None:
    before = (encode(left), encode(right))
    assert left.union(right) == u and (left | right) == u
    assert left.intersection(right) == i and (left & right) == i
    assert left.difference(right) == d and (left - right) == d
    assert left.recursive_difference(right) == rd
    # canonical bytes too: an empty subtree left behind would encode as an owned leaf
    for got, want in ((left | right, u), (left & right, i), (left - right, d), (left.recursive_difference(right), rd)):
        assert encode(got) == encode(want)
    # operands are values: never changed
    assert (encode(left), encode(right)) == before


def test_member_and_child_are_independent() -> None:
    s = fs(AB)
    assert not s.has(A) and s.has(AB)
    assert s.children and not s.members
    t = fs(A)
    assert t.has(A) and not t.has(AB)
    both = s | t
    assert both.members == {field("a")} and set(both.children) == {field("a")}
    assert encode(both) == '{"f:a":{".":{},"f:b":{}}}'


def test_empty_children_are_pruned() -> None:
    s = fs(ACD, B)
    d = s - fs(ACD)
    assert d == fs(B)
    assert d.children == {}
    i = s & fs(AC, B)
    assert i == fs(B) and i.children == {}
    rd = fs(ACD).recursive_difference(fs(ACD))
    assert rd.is_empty() and not rd and rd.children == {}
    assert encode(fs(AC) - fs(AC)) == "{}"


def test_leaves() -> None:
    s = fs(A, AB, AC, ACD, B, (*C, index(0)))
    assert s.leaves() == fs(AB, ACD, B, (*C, index(0)))
    assert fs(A).leaves() == fs(A)
    assert FieldSet().leaves() == FieldSet()
    # a member whose only descendants are members is not a leaf
    assert fs(A, ACD).leaves() == fs(ACD)


def test_has_and_prefix_helpers() -> None:
    s = fs(ACD, B)
    assert s.has(ACD) and ACD in s and not s.has(AC) and not s.has(())
    assert s.has_prefix(A) and s.has_prefix(AC) and s.has_prefix(ACD) and s.has_prefix(B)
    assert s.has_prefix(())
    assert not s.has_prefix(AB) and not s.has_prefix((*ACD, field("e"))) and not s.has_prefix(C)
    assert not FieldSet().has_prefix(())
    assert s.descend(AC) == fs(F("d")) and s.descend(AB) == FieldSet() and s.descend(()) == s
    assert s.child(field("a")) == fs(F("c", "d")) and s.child(field("z")) == FieldSet()


def test_filter_prefix() -> None:
    s = fs(A, AB, ACD, B, F("ab"))
    assert s.filter_prefix(A) == fs(A, AB, ACD)
    assert s.filter_prefix(AC) == fs(ACD)
    assert s.filter_prefix(AB) == fs(AB)
    assert s.filter_prefix(C) == FieldSet()
    assert s.filter_prefix(()) == s
    assert s.filter_prefix(ACD) == fs(ACD)


def test_prefixed() -> None:
    s = fs(B, F("c", "d"))
    assert s.prefixed(A) == fs(AB, ACD)
    assert s.prefixed((field("x"), key({"name": "n"}))) == fs(
        (field("x"), key({"name": "n"}), field("b")), (field("x"), key({"name": "n"}), field("c"), field("d"))
    )
    assert s.prefixed(()) == s
    assert FieldSet().prefixed(A).is_empty()
    assert s == fs(B, F("c", "d"))  # unchanged


def test_insert_and_root() -> None:
    s = FieldSet()
    s.insert(AB)
    s.insert(AB)
    assert len(s) == 1
    with pytest.raises(ValueError):
        s.insert(())
    with pytest.raises(ValueError):
        FieldSet([()])
    assert EMPTY.is_empty() and len(EMPTY) == 0


def test_copy_is_deep() -> None:
    s = fs(ACD)
    c = s.copy()
    c.insert((*AC, field("e")))
    assert s == fs(ACD) and c == fs(ACD, (*AC, field("e")))


def test_equality_and_hash() -> None:
    assert fs(A, AB) == fs(AB, A)
    assert hash(fs(A, AB)) == hash(fs(AB, A))
    assert fs(A) != fs(AB)
    assert fs((field("v"), set_value(1))) == fs((field("v"), set_value(1.0)))
    assert fs((field("v"), set_value(True))) != fs((field("v"), set_value(1)))
    assert (fs(A) == "a") is False
    assert repr(fs(AB, A)) == "FieldSet([.a, .a.b])"


# --- iteration orders ---------------------------------------------------------------------------

MIXED = fs(
    ACD,
    C,
    AB,
    A,
    B,
    (field("l"), index(1)),
    (field("l"), set_value("x")),
    (field("l"), key({"k": 2})),
    (field("l"), key({"k": 10})),
    (field("l"), key({"k": 2}), field("f")),
    (field("l"), field("z")),
)


def test_iterate_order_members_first_then_children() -> None:
    assert list(MIXED) == [
        A,
        B,
        C,
        AB,
        ACD,
        (field("l"), field("z")),
        (field("l"), key({"k": 2})),
        (field("l"), key({"k": 10})),
        (field("l"), set_value("x")),
        (field("l"), index(1)),
        (field("l"), key({"k": 2}), field("f")),
    ]


def test_sorted_paths_is_document_order() -> None:
    assert list(MIXED.sorted_paths()) == [
        A,
        AB,
        ACD,
        B,
        C,
        (field("l"), field("z")),
        (field("l"), key({"k": 2})),
        (field("l"), key({"k": 2}), field("f")),
        (field("l"), key({"k": 10})),
        (field("l"), set_value("x")),
        (field("l"), index(1)),
    ]
    assert len(MIXED) == 11


def _smd_iterate(paths: set[Path], depth: int = 0) -> list[Path]:
    """Reference for SMD Set.Iterate, from a flat path set: members sorted, then each child sorted."""
    here = sorted(p for p in paths if len(p) == depth + 1)
    below = sorted({p[depth] for p in paths if len(p) > depth + 1})
    out = list(here)
    for pe in below:
        out += _smd_iterate({p for p in paths if len(p) > depth + 1 and p[depth] == pe}, depth + 1)
    return out


# --- properties ---------------------------------------------------------------------------------


def _ordered(obj: Any) -> Any:
    return [(k, _ordered(v)) for k, v in obj.items()] if isinstance(obj, dict) else obj


def _check_canonical_order(obj: dict[str, Any], top: bool) -> None:
    keys = list(obj)
    if "." in keys:
        assert not top and keys[0] == "."
        keys = keys[1:]
    pes = [parse_element(k) for k in keys]
    assert pes == sorted(pes) and len(set(pes)) == len(pes)
    for v in obj.values():
        _check_canonical_order(v, False)


def _check_string_order(obj: dict[str, Any]) -> None:
    assert list(obj) == sorted(obj)
    for v in obj.values():
        _check_string_order(v)


def _count_members(s: FieldSet, obj: dict[str, Any], prefix: Path) -> int:
    n = 0
    for k, v in obj.items():
        if k == ".":
            continue
        p = (*prefix, parse_element(k))
        if v == {} or "." in v:  # an entry with nothing below, or with ".", is a member
            assert s.has(p)
            n += 1
        n += _count_members(s, v, p)
    return n


@settings(max_examples=200, deadline=None)
@given(wide_sets)
def test_codec_round_trip_iteration_and_encoded_shape(s: FieldSet) -> None:
    # decode(encode(s)) == s in both styles; encode(decode(x)) is canonical
    canonical = encode(s, CANONICAL)
    unstructured = encode(s, UNSTRUCTURED)
    assert decode(canonical) == s
    assert decode(unstructured) == s
    assert encode(decode(canonical)) == canonical
    assert encode(decode(unstructured)) == canonical
    assert encode(decode(unstructured), UNSTRUCTURED) == unstructured
    # len, iteration and the two orders
    it = list(s)
    ps = set(it)
    assert len(it) == len(ps) == len(s)
    assert it == _smd_iterate(ps)
    srt = list(s.sorted_paths())
    assert srt == sorted(ps)
    for x, y in itertools.pairwise(srt):
        assert x < y  # element-wise tuple order, a prefix before the paths below it
    assert all(s.has(p) for p in it)
    assert FieldSet(it) == s and hash(FieldSet(reversed(it))) == hash(s)
    # the encoded shape: canonical is element order with "." first, unstructured is string order,
    # to_json_object has the canonical order, the text is compact, every member is spelled
    obj = json.loads(canonical)
    _check_canonical_order(obj, True)
    _check_string_order(json.loads(unstructured))
    assert _ordered(to_json_object(s)) == _ordered(obj)
    assert not re.search(r"\s", re.sub(r'"(\\.|[^"\\])*"', '""', canonical))
    assert _count_members(s, obj, ()) == len(s)


def _tag(v: Any) -> Any:
    """A plain, hashable form of a value under the server's equality (True is not 1, 1 is 1.0)."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("number", float(v))
    if isinstance(v, str):
        return ("string", v)
    if v is None:
        return ("null",)
    if isinstance(v, list):
        return ("list", tuple(_tag(x) for x in v))
    return ("map", tuple(sorted((k, _tag(x)) for k, x in v.items())))


def _tag_path(p: Path) -> tuple[Any, ...]:
    out = []
    for kind, payload in p:
        if kind == KEY:
            out.append((kind, tuple((n, _tag(key_value(vk))) for n, vk in payload)))
        elif kind == VALUE:
            out.append((kind, _tag(key_value(payload))))
        else:
            out.append((kind, payload))
    return tuple(out)


small_path_lists = st.lists(paths(small_elements), max_size=8)


@settings(max_examples=200, deadline=None)
@given(small_path_lists, small_path_lists, small_path_lists)
def test_algebra_laws(la: list[Path], lb: list[Path], lc: list[Path]) -> None:
    a, b, c = FieldSet(la), FieldSet(lb), FieldSet(lc)
    # elements are equal exactly as on the server: 1 is 1.0, True is not 1
    assert len(a) == len({_tag_path(p) for p in la})
    pa, pb = paths_of(a), paths_of(b)
    # against the plain path-set model, and normalised (canonical bytes of the model)
    for got, want in (
        (a | b, pa | pb),
        (a & b, pa & pb),
        (a - b, pa - pb),
        (a.recursive_difference(b), {p for p in pa if not any(p[:n] in pb for n in range(1, len(p) + 1))}),
        (a.leaves(), {p for p in pa if not any(q != p and q[: len(p)] == p for q in pa)}),
        (a.not_prefixes_of(b), {p for p in pa if not b.has_prefix(p)}),
        (a.not_prefixes_of(b), {p for p in pa if not any(q[: len(p)] == p for q in pb)}),
    ):
        assert paths_of(got) == want
        assert got == FieldSet(want)
        assert encode(got) == encode(FieldSet(want))
    assert a.intersects(b) == bool(pa & pb) == b.intersects(a)
    assert a.issubset(b) == (pa <= pb) == (a - b).is_empty()
    assert (a & b).issubset(a) and a.issubset(a | b) and a.issubset(a) and FieldSet().issubset(a)
    # commutativity, associativity, idempotence, identities
    assert a | b == b | a and a & b == b & a
    assert (a | b) | c == a | (b | c) and (a & b) & c == a & (b & c)
    assert a | a == a and a & a == a and (a - a).is_empty() and a.recursive_difference(a).is_empty()
    assert a | FieldSet() == a and (a & FieldSet()).is_empty() and a - FieldSet() == a
    assert a.recursive_difference(FieldSet()) == a
    # difference laws
    assert ((a - b) & b).is_empty()
    assert (a - b) | (a & b) == a
    assert paths_of(a.recursive_difference(b)) <= paths_of(a - b)
    # De Morgan and distributivity, exact for path sets
    assert a - (b | c) == (a - b) & (a - c)
    assert a - (b & c) == (a - b) | (a - c)
    assert a & (b | c) == (a & b) | (a & c)
    assert a | (b & c) == (a | b) & (a | c)
    # prefix helpers against the model
    for p in pb:
        assert a.has_prefix(p) == any(q[: len(p)] == p for q in pa)
        assert paths_of(a.filter_prefix(p)) == {q for q in pa if q[: len(p)] == p}
        assert paths_of(a.prefixed(p)) == {(*p, *q) for q in pa}
    # results share unchanged subtrees with their operands, which are never changed
    assert a == FieldSet(la) and b == FieldSet(lb) and c == FieldSet(lc)


def test_bool_and_int_elements_never_collide() -> None:
    s = fs(
        (field("v"), set_value(True)),
        (field("v"), set_value(1)),
        (field("v"), set_value(1.0)),
        (field("k"), key({"a": True})),
        (field("k"), key({"a": 1})),
        (field("k"), key({"a": False})),
        (field("k"), key({"a": 0.0})),
    )
    assert len(s) == 6
    assert encode(s) == (
        '{"f:k":{"k:{\\"a\\":0}":{},"k:{\\"a\\":1}":{},"k:{\\"a\\":false}":{},"k:{\\"a\\":true}":{}},'
        '"f:v":{"v:1":{},"v:true":{}}}'
    )
    assert decode(encode(s)) == s
    assert not fs((field("v"), set_value(True))).has((field("v"), set_value(1)))
    assert (fs((field("v"), set_value(True))) & fs((field("v"), set_value(1)))).is_empty()


def test_issubset_counts_an_empty_node_as_difference_does() -> None:
    # a node left empty (compare's builder, a hand-made set) is kept by difference, so it is no subset
    hollow = FieldSet._node(set(), {A[0]: FieldSet()})
    for other in (FieldSet(), fs(B), fs(AC)):
        assert hollow.issubset(other) == (hollow - other).is_empty()
    assert fs(AC).issubset(fs(AC, B)) and not fs(AC, B).issubset(fs(AC)) and fs().issubset(fs())
