"""What managedFields reveal about a schema nobody gave us.

Without a schema the server's own fallback (:data:`~.types.DEDUCED`) treats every list as atomic.
But the server that wrote an object's managedFields *had* the schema, and FieldsV1 shows its list
types: items written ``k:{"name":"app"}`` belong to a list-map keyed by ``name``, items written
``v:"x"`` to a set. :func:`hinted_root` refines the deduced schema with exactly that and nothing
else (maps stay granular, every other list atomic, scalars untyped), so that an offline prediction
of an object saved with ``--show-managed-fields`` merges its keyed lists as the server will.

It stays a guess — defaults, atomic maps and lists with no item owned yet are invisible — so a
schema built here is still reported as deduced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..fieldpath import FIELD, KEY, VALUE, FieldSet, PathElement
from .types import DEDUCED, UNTYPED, KindSchema, ListType, MapType, StructField, Type

__all__ = ["hinted_root", "revealed_lists", "with_list_hints"]


def _elements(node: FieldSet) -> set[PathElement]:
    return set(node.members) | set(node.children)


def _merged(nodes: Iterable[FieldSet]) -> FieldSet:
    out = FieldSet()
    for n in nodes:
        out = out | n
    return out


def _list_shape(node: FieldSet) -> tuple[str, tuple[str, ...]] | None:
    """("map", keys) or ("set", ()) when the items under ``node`` show a list type, else None.
    A node whose items disagree (both keys and values, or different key names) shows nothing."""
    kinds = {pe[0] for pe in _elements(node)}
    if kinds == {KEY}:
        names = {tuple(n for n, _ in pe[1]) for pe in _elements(node)}
        return ("map", names.pop()) if len(names) == 1 else None
    if kinds == {VALUE}:
        return ("set", ())
    return None


def _type(node: FieldSet, value: Any = None) -> Type | None:
    """The refined type of ``value`` (the live value, when known; None for list items, which
    differ) whose owned children are ``node`` (None: nothing revealed)."""
    shape = _list_shape(node)
    if shape is not None:
        kind, keys = shape
        if kind == "set":
            item = UNTYPED
        else:
            item = _type(_merged(node.children.values())) or DEDUCED
        t = Type(name="__hinted_list_", scalar="untyped")
        t.list = ListType(item=item, relationship="associative", keys=keys)
        t.map = DEDUCED.map
        return t
    fields: dict[str, StructField] = {}
    live = value if isinstance(value, Mapping) else {}
    for pe in _elements(node):
        if pe[0] != FIELD:
            continue
        child = node.children.get(pe)
        sub = _type(child, live.get(pe[1])) if child is not None else None
        if child is None and isinstance(live.get(pe[1]), Mapping) and live[pe[1]]:
            # a map with content that its owners own only as a whole: the schema makes it atomic
            # (a granular map's owners own its keys)
            sub = UNTYPED
        if sub is not None:
            fields[pe[1]] = StructField(sub)
    if not fields:
        return None
    t = Type(name="__hinted_map_", scalar="untyped")
    t.map = MapType(fields=fields, element=DEDUCED, atomic=False)
    t.list = DEDUCED.list
    return t


def hinted_root(owned: Iterable[FieldSet], live: Mapping[str, Any] | None = None) -> Type | None:
    """The deduced schema refined with the list types that ``owned`` (every managedFields entry's
    set) shows, and the maps it owns only whole in ``live``; None when it shows nothing, and the
    deduced schema stands."""
    return _type(_merged(owned), live)


def revealed_lists(owned: Iterable[FieldSet], live: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """What :func:`hinted_root` types, as (``.spec.containers[*].ports``, ``"keyed by
    containerPort, protocol"`` / ``"a set"`` / ``"atomic"``), in path order: what to tell the user."""
    return sorted(_revealed(_merged(owned), "", live))


def _revealed(node: FieldSet, at: str, value: Any) -> Iterator[tuple[str, str]]:
    shape = _list_shape(node)
    if shape is not None:
        kind, keys = shape
        yield at, ("a set" if kind == "set" else "keyed by " + ", ".join(keys))
        if kind == "map":
            yield from _revealed(_merged(node.children.values()), f"{at}[*]", None)
        return
    live = value if isinstance(value, Mapping) else {}
    for pe in _elements(node):
        if pe[0] != FIELD:
            continue
        child = node.children.get(pe)
        if child is not None:
            yield from _revealed(child, f"{at}.{pe[1]}", live.get(pe[1]))
        elif isinstance(live.get(pe[1]), Mapping) and live[pe[1]]:
            yield f"{at}.{pe[1]}", "atomic"


def with_list_hints(schema: KindSchema, owned: Iterable[FieldSet],
                    live: Mapping[str, Any] | None = None) -> KindSchema:
    """``schema`` unchanged unless it is the bare deduced one and ``owned`` reveals list types
    (or maps owned whole in ``live``);
    then the refined schema, its ``hints`` naming each list and its ``source`` saying so."""
    if schema.root is not DEDUCED:
        return schema
    sets = list(owned)
    root = hinted_root(sets, live)
    if root is None:
        return schema
    hints = tuple(revealed_lists(sets, live))
    shown = "; ".join(f"{path} {what}" for path, what in hints)
    return dataclasses.replace(schema, root=root, hints=hints,
                               source=f"{schema.source}; from the live managedFields: {shown}")
