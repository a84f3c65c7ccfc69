"""Which side of a type applies to a value, and how list items are identified.

``side`` follows SMD ``deduceAtom`` + ``handleAtom``: the value's own kind picks the map, list or
scalar side of a type; a null, or a value whose kind the type does not allow, gets the type's
first side in the order map, scalar, list.
"""

from __future__ import annotations

from typing import Any

from ..base.value import value_key
from ..fieldpath.element import FIELD, KEY, VALUE, PathElement
from ..schema.types import DEDUCED, NO_DEFAULT, ListType, MapType, Type

MAP = 1
LIST = 2
SCALAR = 3
NONE = 0

#: a key or item one side does not have (one sentinel for merge and compare: merge hands compare the
#: nodes it added)
ABSENT: Any = object()


class ItemError(ValueError):
    """A list item that cannot be identified (SMD ``listItemToPathElement`` errors)."""


def side(t: Type, v: Any) -> int:
    tv = type(v)
    if tv is dict:
        if t.map is not None:
            return MAP
    elif tv is list:
        if t.list is not None:
            return LIST
    elif v is not None and t.scalar is not None:
        return SCALAR
    if t.map is not None:
        return MAP
    if t.scalar is not None:
        return SCALAR
    if t.list is not None:
        return LIST
    return NONE


def same_scalar(a: Any, b: Any) -> bool:
    """One string, integer or boolean on both sides, of one type: unchanged, on any side of any type.
    (Equal floats are not the same: 0.0 and -0.0.)"""
    t = type(a)
    return t is type(b) and (t is str or t is int or t is bool) and a == b


def child_type(t: Type, pe: PathElement) -> Type | None:
    """The type one path element leads to below ``t``: a field's declared type (else the map's element
    type), a list item's item type; None where ``t`` has no such side or no type for it."""
    if pe[0] == FIELD:
        m = t.map
        if m is None:
            return None
        f = m.fields.get(pe[1])
        return f.type if f is not None else m.element
    return t.list.item if t.list is not None else None


def key_type(m: MapType, name: str) -> Type:
    """The type of a map key: its declared field, else the element type, else deduced.

    A key the schema does not declare (no element type) is treated as the server treats values it
    has no schema for: deduced."""
    f = m.fields.get(name)
    if f is not None:
        return f.type
    return m.element if m.element is not None else DEDUCED


def item_element(lt: ListType, item: Any) -> PathElement:
    """The path element of one item of an associative list (keys filled from schema defaults)."""
    keys = lt.keys
    if keys:
        if item is None:
            raise ItemError("associative list with keys may not have a null element")
        if type(item) is not dict:
            raise ItemError("associative list with keys may not have non-map elements")
        if len(keys) == 1 and keys[0] in item:
            return (KEY, ((keys[0], value_key(item[keys[0]])),))  # one pair: nothing to sort or default
        pairs = []
        for k in lt.keys:
            if k in item:
                pairs.append((k, value_key(item[k])))
            else:
                d = _key_default(lt, k)
                if d is not NO_DEFAULT:
                    pairs.append((k, value_key(d)))
        if not pairs:
            raise ItemError(
                f"associative list with keys has an element that omits all key fields {_go_list(lt.keys)} "
                "(and doesn't have default values for any key fields)"
            )
        pairs.sort()
        return (KEY, tuple(pairs))
    tv = type(item)
    if tv is dict:
        raise ItemError("associative list without keys has an element that's a map type")
    if tv is list:
        raise ItemError("not supported: associative list with lists as elements")
    if item is None:
        raise ItemError("associative list without keys has an element that's an explicit null")
    return (VALUE, value_key(item))


def _key_default(lt: ListType, name: str) -> Any:
    m = lt.item.map
    if m is None:
        return NO_DEFAULT
    f = m.fields.get(name)
    return f.default if f is not None else NO_DEFAULT


def _go_list(keys: tuple[str, ...]) -> str:
    return "[" + " ".join(keys) + "]"


ItemIndex = tuple[list[PathElement | None], dict[PathElement, int], set[PathElement]]

#: the item indexes of an applied configuration's lists, found by its validation (which identifies
#: every item anyway) for the merge and the field set that walk the same configuration after it:
#: by the list's id, with the list (so that the id stays its own) and its type. One apply's, dropped
#: with it (nothing changes the configuration meanwhile).
KnownIndexes = dict[int, tuple[list[Any], ListType, ItemIndex]]


def indexed_items(lt: ListType, items: list[Any], known: KnownIndexes | None) -> ItemIndex:
    """:func:`index_items`, taken from ``known`` when the validation indexed this list at this type."""
    if known is not None:
        hit = known.get(id(items))
        if hit is not None and hit[0] is items and hit[1] is lt:
            return hit[2]
    return index_items(lt, items)


def index_items(lt: ListType, items: list[Any]) -> ItemIndex:
    """Element of each item (None when it cannot be identified), first index per element, duplicates."""
    pes: list[PathElement | None] = []
    first: dict[PathElement, int] = {}
    dups: set[PathElement] = set()
    for i, item in enumerate(items):
        try:
            pe = item_element(lt, item)
        except ItemError:
            pes.append(None)
            continue
        pes.append(pe)
        if pe in first:
            dups.add(pe)
        else:
            first[pe] = i
    return pes, first, dups
