"""When validation ratcheting counts a value as unchanged (apiserver ``CorrelatedObject.CachedDeepEqual``).

On an update the CRD validator does not report a violation at a node whose new value "equals" the
old one. Equality there is not Go's ``reflect.DeepEqual`` of the two values but a walk along the
schema, as the lab shows:

* a list-map's items are matched by their keys (the first old item with the same keys), so a
  reordered list-map is unchanged; a new item without an old one, or one that differs from the
  first old item with its keys (a list stored with repeated keys), makes the list changed;
* a map is unchanged only if every key has a schema (a property, or ``additionalProperties`` with a
  schema) and every value is unchanged: a ``x-kubernetes-preserve-unknown-fields`` map holding any
  key is never unchanged, and neither is anything holding it;
* sets and atomic lists, and scalars, compare as Go's DeepEqual does (an int64 is no float64).

Two views of one schema, for the two walks that ratchet: :func:`unchanged` on a merge
:class:`Type` (the type checks), :func:`unchanged_in_schema` on the CRD's OpenAPI schema (the value
constraints).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..schema.types import DEDUCED, Type
from .numbers import go_deep_equal


def unchanged(new: Any, old: Any, t: Type) -> bool:
    """CachedDeepEqual of ``new`` and ``old`` at a node of type ``t``."""
    if new is old and not _may_differ_from_itself(t):
        return True  # (a write shares what it leaves as it was: the common case, decided here)
    if new is None or old is None:
        return new is None and old is None
    if type(new) is dict and type(old) is dict:
        m = t.map
        if len(new) != len(old) or m is None or t is DEDUCED:
            return not (new or old)
        for k, x in new.items():
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is None or ct is DEDUCED or k not in old:
                return False  # a key without a schema is not correlated: not equal
            if not unchanged(x, old[k], ct):
                return False
        return True
    if type(new) is list and type(old) is list:
        lt = t.list
        if lt is None or not lt.is_map:
            return go_deep_equal(new, old)
        if len(new) != len(old):
            return False
        return all(o is not None and unchanged(item, o, lt.item)
                   for item, o in zip(new, correlated(new, old, lt.keys), strict=True))
    return go_deep_equal(new, old)


def unchanged_in_schema(new: Any, old: Any, s: Mapping[str, Any] | None) -> bool:
    """CachedDeepEqual of ``new`` and ``old`` at a node of the OpenAPI schema ``s``."""
    if new is old and s is not None and not _schema_may_differ_from_itself(s):
        return True
    if new is None or old is None:
        return new is None and old is None
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        if len(new) != len(old):
            return False
        props = s.get("properties") if s is not None else None
        additional = s.get("additionalProperties") if s is not None else None
        for k, x in new.items():
            sub = props.get(k) if isinstance(props, Mapping) else None
            if not isinstance(sub, Mapping):
                sub = additional if isinstance(additional, Mapping) else None
            if sub is None or k not in old:
                return False
            if not unchanged_in_schema(x, old[k], sub):
                return False
        return True
    if isinstance(new, list) and isinstance(old, list):
        keys = s.get("x-kubernetes-list-map-keys") if s is not None else None
        if s is None or s.get("x-kubernetes-list-type") != "map" or not isinstance(keys, list) or not keys:
            return go_deep_equal(new, old)
        if len(new) != len(old):
            return False
        items = s.get("items")
        item_schema = items if isinstance(items, Mapping) else None
        return all(o is not None and unchanged_in_schema(item, o, item_schema)
                   for item, o in zip(new, correlated(new, old, keys), strict=True))
    return go_deep_equal(new, old)


def correlated(new: list[Any], old: list[Any], keys: Sequence[str]) -> list[Any]:
    """For each item of a list-map, the old item ratcheting compares it with: the first old item
    with the same keys (apiserver ``MapList``); None for an item without one."""
    firsts: dict[str, Any] = {}
    for o in old:
        k = _key(o, keys)
        if k is not None and k not in firsts:
            firsts[k] = o
    return [None if k is None else firsts.get(k) for k in (_key(item, keys) for item in new)]


def _key(item: Any, keys: Sequence[str]) -> str | None:
    if not isinstance(item, Mapping):
        return None
    return json.dumps([item.get(k) for k in keys], sort_keys=True)


#: by id, each with the object it was computed for (a kind's schema is read for every write)
_SELF_TYPE: dict[int, tuple[Type, bool]] = {}
_SELF_SCHEMA: dict[int, tuple[Mapping[str, Any], bool]] = {}


def _may_differ_from_itself(t: Type) -> bool:
    """Whether a value of type ``t`` can be "changed" when compared with itself: where it may hold a
    map key without a schema (a preserve-unknown-fields map) or a list-map (repeated keys)."""
    hit = _SELF_TYPE.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    found = False
    seen: set[int] = set()
    stack = [t]
    while stack and not found:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x is DEDUCED:
            found = True
        elif x.map is not None:
            if x.map.element is not None:
                stack.append(x.map.element)
            stack.extend(f.type for f in x.map.fields.values())
        if not found and x.list is not None:
            found = x.list.is_map
            stack.append(x.list.item)
    if len(_SELF_TYPE) >= 1024:
        _SELF_TYPE.clear()
    _SELF_TYPE[id(t)] = (t, found)
    return found


def _schema_may_differ_from_itself(s: Mapping[str, Any]) -> bool:
    """:func:`_may_differ_from_itself` for an OpenAPI schema."""
    hit = _SELF_SCHEMA.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    found = False
    seen: set[int] = set()
    stack: list[Any] = [s]
    while stack and not found:
        x = stack.pop()
        if id(x) in seen or not isinstance(x, Mapping):
            continue
        seen.add(id(x))
        found = (x.get("x-kubernetes-preserve-unknown-fields") is True or x.get("x-kubernetes-list-type") == "map"
                 or x.get("additionalProperties") is True)
        props = x.get("properties")
        if isinstance(props, Mapping):
            stack.extend(props.values())
        stack.append(x.get("additionalProperties"))
        stack.append(x.get("items"))
    if len(_SELF_SCHEMA) >= 1024:
        _SELF_SCHEMA.clear()
    _SELF_SCHEMA[id(s)] = (s, found)
    return found
