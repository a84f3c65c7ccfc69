"""Finding the value at a path inside a plain JSON object."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..value import value_key
from .element import FIELD, INDEX, KEY, VALUE, Path, PathElement

if TYPE_CHECKING:
    from .set import FieldSet

MISSING: Any = object()
"""Returned by :func:`value_at` when the object has nothing at the path (distinct from ``None``/null)."""


def child_value(node: Any, pe: PathElement) -> Any:
    """The value one element below ``node``, or :data:`MISSING`."""
    kind, payload = pe
    if kind == FIELD:
        if isinstance(node, Mapping) and payload in node:
            return node[payload]
        return MISSING
    if not isinstance(node, list):
        return MISSING
    if kind == INDEX:
        return node[payload] if 0 <= payload < len(node) else MISSING
    if kind == VALUE:
        for item in node:
            if value_key(item) == payload:
                return item
        return MISSING
    if kind == KEY:
        for item in node:
            if isinstance(item, Mapping) and all(
                n in item and value_key(item[n]) == vk for n, vk in payload
            ):
                return item
        return MISSING
    return MISSING


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj``, or :data:`MISSING` when the object does not set it."""
    node = obj
    for pe in path:
        node = child_value(node, pe)
        if node is MISSING:
            return MISSING
    return node


def exists_in(docs: Sequence[Any], owned: FieldSet) -> Callable[[Path, PathElement], bool]:
    """An ``exists`` callback for :func:`~kubectl_fieldown.fieldpath.parse_path`: an element is
    there when ``owned`` has it or any of ``docs`` (the object, its last-applied manifest) sets it.
    That is how dotted segments (``.metadata.labels.app.kubernetes.io/name``) are grouped."""

    def exists(prefix: Path, pe: PathElement) -> bool:
        below = owned.descend(prefix)
        if pe in below.members or pe in below.children:
            return True
        return any(value_at(d, (*prefix, pe)) is not MISSING for d in docs)

    return exists
