"""ToFieldSet: the paths a value sets, as its owner would be recorded (SMD ``typed/tofieldset.go``).

Scalars and atomic containers are one path each (even when null or empty). Granular maps recurse
and also own a key itself when its value is null or ``{}`` or when the key is not a declared
field. Associative lists own every item and recurse into it; an empty granular list adds nothing.
"""

from __future__ import annotations

from typing import Any

from ..fieldpath.element import FIELD, KEY, PathElement
from ..fieldpath.set import FieldSet
from ..schema.types import ListType, MapType, Type
from .items import LIST, MAP, index_items, side

#: the element SMD gives a list item it cannot identify (no key, not a map: ``listItemToPathElement``'s
#: zero value); only intermediate objects of a prune hold one (the server refuses such an object)
UNKEYED: PathElement = (KEY, ())


def to_field_set(value: Any, t: Type) -> FieldSet:
    """The set of a whole object (the root itself is never a member)."""
    node = _walk(value, t)
    return node if node is not None else FieldSet()


def _walk(v: Any, t: Type) -> FieldSet | None:
    """The paths below ``v`` (not ``v`` itself); None when there are none."""
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if m.atomic or type(v) is not dict or not v:
            return None
        return _walk_map(v, m)
    if s == LIST:
        lt = t.list
        assert lt is not None
        if lt.relationship == "atomic" or type(v) is not list or not v:
            return None
        return _walk_list(v, lt)
    return None


# Below the root each value is classed where its parent meets it (the same cases as ``side``, with
# the call saved): a non-empty dict under a granular map type and a non-empty list under a granular
# list type are walked; an empty granular list sets nothing; anything else is one path (a leaf).


def _walk_map(v: dict[str, Any], m: MapType) -> FieldSet | None:
    members: set[PathElement] = set()
    children: dict[PathElement, FieldSet] = {}
    fields = m.fields
    elem = m.element
    for k, x in v.items():
        pe: PathElement = (FIELD, k)
        f = fields.get(k)
        if f is not None:
            ct = f.type
        else:
            # undeclared keys (labels, deduced maps) are owned themselves, and below by their element
            members.add(pe)
            if elem is None:
                continue
            ct = elem
        tx = type(x)
        if tx is dict:
            cm = ct.map
            if x and cm is not None and not cm.atomic:
                sub = _walk_map(x, cm)
                if sub is not None:
                    children[pe] = sub
                continue
            if f is not None:
                members.add(pe)
            continue
        if tx is list:
            cl = ct.list
            if cl is not None and cl.relationship != "atomic":
                if x:
                    sub = _walk_list(x, cl)
                    if sub is not None:
                        children[pe] = sub
                continue
        if f is not None:
            members.add(pe)
    if not members and not children:
        return None
    return FieldSet._node(members, children)


def _walk_list(v: list[Any], lt: ListType) -> FieldSet | None:
    pes, _first, dups = index_items(lt, v)
    members: set[PathElement] = set()
    children: dict[PathElement, FieldSet] = {}
    it = lt.item
    unkeyed = pes.count(None)
    for item, ipe in zip(v, pes, strict=True):
        if ipe is None:
            # SMD ignores the error and files the item under the zero path element: the list
            # then has a member below it, so it counts as present (a pruned item left null)
            members.add(UNKEYED)
            if unkeyed == 1:
                sub = _walk_below(item, it)
                if sub is not None:
                    children[UNKEYED] = sub
            continue
        members.add(ipe)
        if ipe in dups:
            # a duplicated live item is one opaque member: its fields are not tracked
            continue
        sub = _walk_below(item, it)
        if sub is not None:
            children[ipe] = sub
    if not members and not children:
        return None
    return FieldSet._node(members, children)


def _walk_below(x: Any, t: Type) -> FieldSet | None:
    """The paths below a list item (None for a leaf, or nothing below)."""
    tx = type(x)
    if tx is dict:
        m = t.map
        if x and m is not None and not m.atomic:
            return _walk_map(x, m)
    elif tx is list:
        lt = t.list
        if x and lt is not None and lt.relationship != "atomic":
            return _walk_list(x, lt)
    return None
