"""Finding the value at a path inside a plain JSON object."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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


class ObjectFieldNames:
    """:class:`~kubectl_fieldown.fieldpath.pathstring.FieldNames` of documents (the object, its
    last-applied manifest) and an owned set: a field name exists where any of them has it. That is
    how dotted segments (``.metadata.labels.app.kubernetes.io/name``) are grouped.

    A position is ``(the documents' values there, the owned subtree there)``."""

    def __init__(self, docs: Sequence[Any], owned: FieldSet) -> None:
        self._docs = tuple(docs)
        self._owned = owned

    def root(self) -> tuple[tuple[Any, ...], FieldSet]:
        return self._docs, self._owned

    def below(self, at: tuple[tuple[Any, ...], FieldSet], pe: PathElement) -> tuple[tuple[Any, ...], FieldSet]:
        docs, owned = at
        values = tuple(v for v in (child_value(d, pe) for d in docs) if v is not MISSING)
        return values, owned.child(pe)

    def dotted(self, at: tuple[tuple[Any, ...], FieldSet]) -> Iterator[str]:
        docs, owned = at
        for d in docs:
            if isinstance(d, Mapping):
                yield from (k for k in d if isinstance(k, str) and "." in k)
        for elements in (owned.members, owned.children):
            yield from (pe[1] for pe in elements if pe[0] == FIELD and "." in pe[1])


def names_in(docs: Sequence[Any], owned: FieldSet) -> ObjectFieldNames:
    """The field names of ``docs`` and ``owned``, for :func:`~kubectl_fieldown.fieldpath.parse_path`."""
    return ObjectFieldNames(docs, owned)
