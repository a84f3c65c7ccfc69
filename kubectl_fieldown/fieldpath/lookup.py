"""Finding the value at a path inside a plain JSON object."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from ..base.value import value_key
from .element import FIELD, INDEX, KEY, VALUE, Path, PathElement

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

    from .set import FieldSet

MISSING: Any = object()
"""Returned by :func:`value_at` when the object has nothing at the path (distinct from ``None``/null)."""


def child_value(node: Any, pe: PathElement) -> Any:
    """The value one element below ``node``, or :data:`MISSING`."""
    kind, payload = pe
    if kind == FIELD:
        # dict first: isinstance with an ABC is a Python-level check per call
        if (type(node) is dict or isinstance(node, Mapping)) and payload in node:
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
            if type(item) is dict or isinstance(item, Mapping):
                # a loop, not all() over a generator: one made per item was most of a lookup's cost
                for n, vk in payload:
                    if n not in item or value_key(item[n]) != vk:
                        break
                else:
                    return item
        return MISSING
    return MISSING


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj``, or :data:`MISSING` when the object does not set it.

    A keyed list is scanned at each call: for many paths of one object, use :class:`Lookup`."""
    node = obj
    for pe in path:
        node = child_value(node, pe)
        if node is MISSING:
            return MISSING
    return node


# below this many items a scan is cheaper than building an index
_INDEX_FROM = 16


class Lookup:
    """:func:`value_at` and :func:`child_value` for many paths of one object, each keyed list indexed
    once (its items by key, or by value for a set), so that looking up every item of a list of N
    items takes O(N), not O(N²).

    The object must not change while the lookup is used (an index would be stale): make one for a
    loop over paths, not one that outlives a change to the object."""

    __slots__ = ("_indexes", "_parents", "obj")

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        # (id(list), KEY or VALUE, key names) -> (the list, kept so that its id stays its own; its index)
        self._indexes: dict[tuple[int, int, tuple[str, ...]], tuple[list[Any], dict[Any, Any]]] = {}
        # path -> the value there: the paths looked up are mostly siblings, each found from its parent
        self._parents: dict[Path, Any] = {}

    def child(self, node: Any, pe: PathElement) -> Any:
        kind = pe[0]
        if kind in (KEY, VALUE) and type(node) is list and len(node) >= _INDEX_FROM:
            payload = pe[1]
            names = tuple(n for n, _ in payload) if kind == KEY else ()
            hit = self._indexes.get((id(node), kind, names))
            if hit is None or hit[0] is not node:
                hit = (node, _index(node, names) if kind == KEY else _set_index(node))
                self._indexes[(id(node), kind, names)] = hit
            key = tuple(vk for _, vk in payload) if kind == KEY else payload
            return hit[1].get(key, MISSING)
        return child_value(node, pe)

    def at(self, path: Path) -> Any:
        """The value at ``path``, or :data:`MISSING`."""
        if not path:
            return self.obj
        # the deepest ancestor found before, then down from it, remembering each value on the way
        parents = self._parents
        last = len(path) - 1
        i = last
        node = MISSING
        while i > 0:
            node = parents.get(path[:i], MISSING)
            if node is not MISSING:
                break
            i -= 1
        if i == 0:
            node = self.obj
        while i < last:
            node = self.child(node, path[i])
            if node is MISSING:
                return MISSING
            i += 1
            parents[path[:i]] = node
        return self.child(node, path[last])


def _index(items: list[Any], names: tuple[str, ...]) -> dict[Any, Any]:
    """The first item of each key, as :func:`child_value` finds it."""
    out: dict[Any, Any] = {}
    for item in items:
        if isinstance(item, Mapping) and all(n in item for n in names):
            out.setdefault(tuple(value_key(item[n]) for n in names), item)
    return out


def _set_index(items: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for item in items:
        out.setdefault(value_key(item), item)
    return out


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
