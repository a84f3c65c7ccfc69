"""ToFieldSet: the paths a value sets, as its owner would be recorded (SMD ``typed/tofieldset.go``).

Scalars and atomic containers are one path each (even when null or empty). Granular maps recurse
and also own a key itself when its value is null or ``{}`` or when the key is not a declared
field. Associative lists own every item and recurse into it; an empty granular list adds nothing.
"""

from __future__ import annotations

from typing import Any

from ..fieldpath.element import FIELD, KEY, PathElement
from ..fieldpath.set import FieldSet
from ..schema.types import Type
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
        members: set[PathElement] = set()
        children: dict[PathElement, FieldSet] = {}
        fields = m.fields
        elem = m.element
        for k, x in v.items():
            pe: PathElement = (FIELD, k)
            f = fields.get(k)
            if f is not None:
                ct = f.type
                if x is None or (type(x) is dict and not x) or _is_leaf(x, ct):
                    members.add(pe)
                else:
                    sub = _walk(x, ct)
                    if sub is not None:
                        children[pe] = sub
            else:
                # undeclared keys (labels, deduced maps) are owned themselves
                members.add(pe)
                if elem is not None and not _is_leaf(x, elem):
                    sub = _walk(x, elem)
                    if sub is not None:
                        children[pe] = sub
        if not members and not children:
            return None
        return FieldSet._node(members, children)
    if s == LIST:
        lt = t.list
        assert lt is not None
        if lt.relationship == "atomic" or type(v) is not list or not v:
            return None
        pes, _first, dups = index_items(lt, v)
        members = set()
        children = {}
        it = lt.item
        unkeyed = pes.count(None)
        for item, ipe in zip(v, pes, strict=True):
            if ipe is None:
                # SMD ignores the error and files the item under the zero path element: the list
                # then has a member below it, so it counts as present (a pruned item left null)
                members.add(UNKEYED)
                if unkeyed == 1 and not _is_leaf(item, it):
                    sub = _walk(item, it)
                    if sub is not None:
                        children[UNKEYED] = sub
                continue
            members.add(ipe)
            if ipe in dups:
                # a duplicated live item is one opaque member: its fields are not tracked
                continue
            if not _is_leaf(item, it):
                sub = _walk(item, it)
                if sub is not None:
                    children[ipe] = sub
        if not members and not children:
            return None
        return FieldSet._node(members, children)
    return None


def _is_leaf(v: Any, t: Type) -> bool:
    """True when ``v`` is owned as a single path under ``t`` (scalar, atomic, or null)."""
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        return m.atomic or type(v) is not dict
    if s == LIST:
        lt = t.list
        assert lt is not None
        return lt.relationship == "atomic" or type(v) is not list
    return True
