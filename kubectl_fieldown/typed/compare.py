"""Compare(old, new): which paths were added, modified and removed (SMD ``typed/compare.go``).

Leaves (scalars, atomic containers, containers empty or null on both sides) are Added, Removed
or Modified. Granular containers recurse over the union of their keys or items, and a node's own
path is Added when it is absent in ``old`` and Removed when absent in ``new`` — that is where the
``"."`` members of Update entries come from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.value import values_equal
from ..fieldpath.element import FIELD, Path, PathElement
from ..fieldpath.set import FieldSet
from ..schema.types import Type
from .items import LIST, MAP, index_items, key_type, side

_ABSENT: Any = object()


@dataclass
class Comparison:
    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def is_same(self) -> bool:
        return self.added.is_empty() and self.modified.is_empty() and self.removed.is_empty()

    def exclude(self, fields: FieldSet) -> Comparison:
        """Drop every path at or below ``fields`` (SMD ``ExcludeFields``: reset fields)."""
        if fields.is_empty():
            return self
        return Comparison(
            self.added.recursive_difference(fields),
            self.modified.recursive_difference(fields),
            self.removed.recursive_difference(fields),
        )


def compare(old: Any, new: Any, t: Type) -> Comparison:
    added = FieldSet()
    modified = FieldSet()
    removed = FieldSet()
    w = _Walker(added, modified, removed)
    w.node((), old, new, t, root=True)
    return Comparison(added, modified, removed)


class _Walker:
    __slots__ = ("added", "modified", "removed")

    def __init__(self, added: FieldSet, modified: FieldSet, removed: FieldSet) -> None:
        self.added = added
        self.modified = modified
        self.removed = removed

    def node(self, path: Path, lhs: Any, rhs: Any, t: Type, root: bool = False) -> None:
        sl = side(t, lhs) if lhs is not _ABSENT else side(t, None)
        sr = side(t, rhs) if rhs is not _ABSENT else side(t, None)
        in_leaf = False
        if lhs is not _ABSENT and rhs is not _ABSENT and sl != sr:
            # kinds differ (untyped positions): both handlers run and record into the same sets
            self._handle(path, sl, lhs, rhs, t)
            in_leaf = self._handle(path, sr, lhs, rhs, t)
        else:
            s = sr if rhs is not _ABSENT else sl
            in_leaf = self._handle(path, s, lhs, rhs, t)
        if not in_leaf and not root:
            if lhs is _ABSENT:
                self.added.insert(path)
            elif rhs is _ABSENT:
                self.removed.insert(path)

    def _leaf(self, path: Path, lhs: Any, rhs: Any) -> bool:
        if lhs is _ABSENT:
            self.added.insert(path)
        elif rhs is _ABSENT:
            self.removed.insert(path)
        elif not values_equal(lhs, rhs):
            self.modified.insert(path)
        return True

    def _handle(self, path: Path, s: int, lhs: Any, rhs: Any, t: Type) -> bool:
        """Returns True when the node was a leaf."""
        if s == MAP:
            m = t.map
            assert m is not None
            lm = lhs if type(lhs) is dict else None
            rm = rhs if type(rhs) is dict else None
            if m.atomic or (not lm and not rm):
                return self._leaf(path, lhs, rhs)
            lm = lm or {}
            rm = rm or {}
            for k, lv in lm.items():
                self.node((*path, (FIELD, k)), lv, rm.get(k, _ABSENT), key_type(m, k))
            for k, rv in rm.items():
                if k not in lm:
                    self.node((*path, (FIELD, k)), _ABSENT, rv, key_type(m, k))
            return False
        if s == LIST:
            lt = t.list
            assert lt is not None
            ll = lhs if type(lhs) is list else None
            rl = rhs if type(rhs) is list else None
            if lt.relationship == "atomic" or (not ll and not rl):
                return self._leaf(path, lhs, rhs)
            ll = ll or []
            rl = rl or []
            lpes, lfirst, ldups = index_items(lt, ll)
            rpes, rfirst, rdups = index_items(lt, rl)
            it = lt.item
            for i, pe in enumerate(rpes):
                if pe is None or rfirst[pe] != i:
                    continue
                li = lfirst.get(pe)
                if pe in ldups or pe in rdups:
                    self._duplicated(path, pe, ll, rl, lt)
                    continue
                self.node((*path, pe), ll[li] if li is not None else _ABSENT, rl[i], it)
            for i, pe in enumerate(lpes):
                if pe is None or lfirst[pe] != i or pe in rfirst:
                    continue
                if pe in ldups:
                    self._duplicated(path, pe, ll, rl, lt)
                    continue
                self.node((*path, pe), ll[i], _ABSENT, it)
            return False
        return self._leaf(path, lhs, rhs)

    def _duplicated(self, path: Path, pe: PathElement, ll: list[Any], rl: list[Any], lt: Any) -> None:
        """SMD's compare of an element that is duplicated on either side: duplicated on both sides,
        the items are compared as one atomic list (modified when it differs); an item that stops
        being duplicated is compared as added (its new single item) and its element removed; one that
        becomes duplicated, the reverse."""
        from .items import item_element

        def group(items: list[Any]) -> list[Any]:
            out = []
            for x in items:
                try:
                    if item_element(lt, x) == pe:
                        out.append(x)
                except ValueError:
                    continue
            return out

        lg, rg = group(ll), group(rl)
        p = (*path, pe)
        if len(lg) >= 2 and len(rg) >= 2:
            if len(lg) != len(rg) or not all(values_equal(a, b) for a, b in zip(lg, rg, strict=True)):
                self.modified.insert(p)
        elif len(lg) >= 2:
            if rg:
                self.node(p, _ABSENT, rg[0], lt.item)
            self.removed.insert(p)
        else:
            if lg:
                self.node(p, lg[0], _ABSENT, lt.item)
            self.added.insert(p)
