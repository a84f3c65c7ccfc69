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
from collections.abc import Iterable, Mapping
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


_Hints = list[tuple[str, str]]


def _refined(node: FieldSet, value: Any, at: str) -> tuple[Type | None, _Hints]:
    """The refined type of the value at ``at`` (``value``: its live value, when known; None for
    list items, which differ) whose owned children are ``node``, and what was revealed there, as
    (path, what) for the user. (None, []): nothing revealed."""
    shape = _list_shape(node)
    if shape is not None:
        kind, keys = shape
        if kind == "set":
            item: Type | None = UNTYPED
            hints: _Hints = [(at, "a set")]
        else:
            item, below = _refined(_merged(node.children.values()), None, f"{at}[*]")
            hints = [(at, "keyed by " + ", ".join(keys)), *below]
        t = Type(name="__hinted_list_", scalar="untyped")
        t.list = ListType(item=item or DEDUCED, relationship="associative", keys=keys)
        t.map = DEDUCED.map
        return t, hints
    fields: dict[str, StructField] = {}
    hints = []
    live = value if isinstance(value, Mapping) else {}
    for pe in _elements(node):
        if pe[0] != FIELD:
            continue
        child, path = node.children.get(pe), f"{at}.{pe[1]}"
        sub: Type | None = None
        if child is not None:
            sub, below = _refined(child, live.get(pe[1]), path)
            hints += below
        elif isinstance(live.get(pe[1]), Mapping) and live[pe[1]]:
            # a map with content that its owners own only as a whole: the schema makes it atomic
            # (a granular map's owners own its keys)
            sub = UNTYPED
            hints.append((path, "atomic"))
        if sub is not None:
            fields[pe[1]] = StructField(sub)
    if not fields:
        return None, []
    t = Type(name="__hinted_map_", scalar="untyped")
    t.map = MapType(fields=fields, element=DEDUCED, atomic=False)
    t.list = DEDUCED.list
    return t, hints


def hinted_root(owned: Iterable[FieldSet], live: Mapping[str, Any] | None = None) -> Type | None:
    """The deduced schema refined with the list types that ``owned`` (every managedFields entry's
    set) shows, and the maps it owns only whole in ``live``; None when it shows nothing, and the
    deduced schema stands."""
    return _refined(_merged(owned), live, "")[0]


def revealed_lists(owned: Iterable[FieldSet], live: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """What :func:`hinted_root` types, as (``.spec.containers[*].ports``, ``"keyed by
    containerPort, protocol"`` / ``"a set"`` / ``"atomic"``), in path order: what to tell the user."""
    return sorted(_refined(_merged(owned), live, "")[1])


def with_list_hints(schema: KindSchema, owned: Iterable[FieldSet],
                    live: Mapping[str, Any] | None = None) -> KindSchema:
    """``schema`` unchanged unless it is the bare deduced one and ``owned`` reveals list types
    (or maps owned whole in ``live``);
    then the refined schema, its ``hints`` naming each list and its ``source`` saying so."""
    if schema.root is not DEDUCED:
        return schema
    root, revealed = _refined(_merged(owned), live, "")
    if root is None:
        return schema
    hints = tuple(sorted(revealed))
    shown = "; ".join(f"{path} {what}" for path, what in hints)
    return dataclasses.replace(schema, root=root, hints=hints,
                               source=f"{schema.source}; from the live managedFields: {shown}")
