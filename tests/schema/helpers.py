"""Navigating converted types in tests."""

from __future__ import annotations

from kubectl_fieldown.schema.types import Type


def at(t: Type, path: str) -> Type:
    """The type at a dotted path: ``name`` is a declared field (else the map's element type),
    ``[]`` a list item, ``*`` the map element: ``"spec.containers[].ports"``."""
    for raw in path.replace("[]", ".[]").split("."):
        if not raw:
            continue
        if raw == "[]":
            assert t.list is not None, f"{t!r} has no list side (at {path!r})"
            t = t.list.item
            continue
        m = t.map
        assert m is not None, f"{t!r} has no map side (at {raw!r} of {path!r})"
        if raw != "*" and raw in m.fields:
            t = m.fields[raw].type
        else:
            assert m.element is not None, f"{raw!r} is neither a field nor allowed (at {path!r})"
            t = m.element
    return t


def describe(t: Type) -> str:
    """A short summary of how a type merges, for table-driven assertions.

    ``scalar:string``, ``map:granular``, ``map:atomic``, ``list:atomic``, ``list:set``,
    ``list:map[k1,k2]``; several sides joined by ``+``; ``DEDUCED`` / ``UNTYPED`` by identity.
    """
    from kubectl_fieldown.schema.types import DEDUCED, UNTYPED

    if t is DEDUCED:
        return "DEDUCED"
    if t is UNTYPED:
        return "UNTYPED"
    sides = []
    if t.scalar:
        sides.append(f"scalar:{t.scalar}")
    if t.map is not None:
        sides.append("map:atomic" if t.map.atomic else "map:granular")
    if t.list is not None:
        if t.list.relationship == "atomic":
            sides.append("list:atomic")
        elif t.list.keys:
            sides.append(f"list:map[{','.join(t.list.keys)}]")
        else:
            sides.append("list:set")
    return "+".join(sides)
