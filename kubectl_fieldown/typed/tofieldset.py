"""ToFieldSet: the paths a value sets, as its owner would be recorded (SMD ``typed/tofieldset.go``).

Scalars and atomic containers are one path each (even when null or empty). Granular maps recurse
and also own a key itself when its value is null or ``{}`` or when the key is not a declared
field. Associative lists own every item and recurse into it; an empty granular list adds nothing.
"""

from __future__ import annotations

from typing import Any

from ..base.identitymemo import memo, remembered
from ..fieldpath.element import FIELD, KEY, Path, PathElement
from ..fieldpath.set import FieldSet
from ..schema.types import ListType, MapType, Type
from .items import KnownIndexes, index_items, indexed_items

#: the element SMD gives a list item it cannot identify (no key, not a map: ``listItemToPathElement``'s
#: zero value); only intermediate objects of a prune hold one (the server refuses such an object)
UNKEYED: PathElement = (KEY, ())


def to_field_set(value: Any, t: Type, known: KnownIndexes | None = None) -> FieldSet:
    """The set of a whole object (the root itself is never a member). Sets are values (nobody
    changes one once it is returned), so inside an :class:`~kubectl_fieldown.base.identitymemo.IdentityMemo`
    block the set of a value seen before is the same set again: an audit with -f asks for the set of
    its object and its manifest some fifteen times per object. ``known``: lists of ``value`` indexed
    already (an applied configuration's, by its validation)."""
    return remembered(memo("to_field_set"), (value, t), _field_set, value, t, known)


def _field_set(value: Any, t: Type, known: KnownIndexes | None = None) -> FieldSet:
    node = _below(value, t, known)
    return node if isinstance(node, FieldSet) else FieldSet()


class _Leaf:
    """:func:`_below`'s answer for a value owned as one path."""


_LEAF = _Leaf()


def _below(x: Any, t: Type, known: KnownIndexes | None = None) -> FieldSet | _Leaf | None:
    """The paths below ``x`` under ``t``; ``_LEAF`` when ``x`` is owned as one path itself, None when
    it is walked and sets nothing. The cases of ``side``, decided where the value is met: a non-empty
    dict under a granular map type and a list under a granular list type are walked (an empty one
    sets nothing); anything else (a scalar, null, ``{}``, an atomic container, a value of a kind the
    type does not allow) is a leaf."""
    tx = type(x)
    if tx is dict:
        m = t.map
        if x and m is not None and not m.atomic:
            return _walk_map(x, m, known)
    elif tx is list:
        lt = t.list
        if lt is not None and lt.relationship != "atomic":
            return _walk_list(x, lt, known) if x else None
    return _LEAF


def _walk_map(v: dict[str, Any], m: MapType, known: KnownIndexes | None) -> FieldSet | None:
    members: set[PathElement] = set()
    children: dict[PathElement, FieldSet] = {}
    fields = m.fields
    elem = m.element
    for k, x in v.items():
        pe: PathElement = (FIELD, k)
        tx = type(x)
        if tx is not dict and tx is not list:
            # a scalar or null (most keys): _below's leaf, and a member whether declared or not
            members.add(pe)
            continue
        f = fields.get(k)
        if f is None:
            # undeclared keys (labels, deduced maps) are owned themselves, and below by their element
            members.add(pe)
            if elem is None:
                continue
            sub = _below(x, elem, known)
        else:
            sub = _below(x, f.type, known)
            if sub is _LEAF:
                members.add(pe)
                continue
        if isinstance(sub, FieldSet):
            children[pe] = sub
    if not members and not children:
        return None
    return FieldSet._node(members, children)


def _walk_list(v: list[Any], lt: ListType, known: KnownIndexes | None) -> FieldSet | None:
    pes, _first, dups = indexed_items(lt, v, known)
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
                sub = _below(item, it, known)
                if isinstance(sub, FieldSet):
                    children[UNKEYED] = sub
            continue
        members.add(ipe)
        if ipe in dups:
            # a duplicated live item is one opaque member: its fields are not tracked
            continue
        sub = _below(item, it, known)
        if isinstance(sub, FieldSet):
            children[ipe] = sub
    if not members and not children:
        return None
    return FieldSet._node(members, children)


def leaf_path(value: Any, t: Type, path: Path) -> Path | None:
    """``path`` as a leaf of ``to_field_set(value, t)`` (a member with nothing below it), spelled with
    the value's own elements (a list item's key as the item holds it), or None when it is not one.

    Walks ``path`` alone, deciding each step as :func:`_below` does, so a caller that needs a few
    paths of a large object does not build the object's whole set."""
    x = value
    last = len(path) - 1
    out: list[PathElement] = []
    for i, pe in enumerate(path):
        tx = type(x)
        if tx is dict:
            m = t.map
            if not x or m is None or m.atomic or pe[0] != FIELD or pe[1] not in x:
                return None
            x = x[pe[1]]
            out.append(pe)
            f = m.fields.get(pe[1])
            if f is None:
                # an undeclared key is a member itself; below it, its element's fields
                if m.element is None:
                    return tuple(out) if i == last else None
                t = m.element
            else:
                t = f.type
                if i == last:
                    return tuple(out) if _below(x, t) is _LEAF else None
                continue
        elif tx is list:
            lt = t.list
            if not x or lt is None or lt.relationship == "atomic":
                return None
            pes, first, dups = index_items(lt, x)
            if pe == UNKEYED:
                unkeyed = pes.count(None)
                if not unkeyed:
                    return None
                if unkeyed > 1:  # one opaque member
                    return (*out, UNKEYED) if i == last else None
                x = x[pes.index(None)]
                out.append(UNKEYED)
            else:
                at = first.get(pe)
                if at is None:
                    return None
                own = pes[at]
                assert own is not None
                out.append(own)
                if own in dups:  # a duplicated item is one opaque member
                    return tuple(out) if i == last else None
                x = x[at]
            t = lt.item
        else:
            return None
        if i == last:
            return tuple(out) if not isinstance(_below(x, t), FieldSet) else None
    return None
