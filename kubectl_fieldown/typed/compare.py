"""Compare(old, new): which paths were added, modified and removed (SMD ``typed/compare.go``).

Leaves (scalars, atomic containers, containers empty or null on both sides) are Added, Removed
or Modified. Granular containers recurse over the union of their keys or items, and a node's own
path is Added when it is absent in ``old`` and Removed when absent in ``new`` — that is where the
``"."`` members of Update entries come from.
"""

from __future__ import annotations

from typing import Any

from ..base.record import Record
from ..base.value import values_equal
from ..fieldpath.element import FIELD, PathElement
from ..fieldpath.set import FieldSet
from ..schema.types import ListType, MapType, Type
from .items import ABSENT as _ABSENT
from .items import LIST, MAP, KnownIndexes, index_items, key_type, side


class Comparison(Record, mutable=True):
    __slots__ = ("added", "modified", "removed")
    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def __init__(self, added: FieldSet, modified: FieldSet, removed: FieldSet) -> None:
        self.added = added
        self.modified = modified
        self.removed = removed

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
    w = Walker()
    w.node(None, None, old, new, t)
    return w.comparison()


#: where a container sits: its parent's frame and its own element (None: the root); a frame costs
#: one pair per container, and a set's nodes are made only for a path that is recorded
_Frame = tuple["_Frame", PathElement] | None


def _node_at(root: FieldSet, frame: _Frame) -> FieldSet:
    if frame is None:
        return root
    parent = _node_at(root, frame[0])
    c = parent.children.get(frame[1])
    if c is None:
        c = parent.children[frame[1]] = FieldSet._node(set(), {})
    return c


class Walker:
    """Each call gets the frame of the container holding the value and the value's own element
    ``pe`` (None: the root, which is never a member)."""

    __slots__ = ("added", "known", "modified", "removed")

    def __init__(self, known: KnownIndexes | None = None) -> None:
        self.added = FieldSet()
        self.modified = FieldSet()
        self.removed = FieldSet()
        #: the merge's: the configuration's lists indexed by its validation
        self.known = known

    def comparison(self) -> Comparison:
        return Comparison(self.added, self.modified, self.removed)

    def node(self, frame: _Frame, pe: PathElement | None, lhs: Any, rhs: Any, t: Type) -> None:
        if lhs is rhs and lhs is not _ABSENT:
            # one value on both sides (merge and prune share what they leave untouched): nothing
            # below it differs (JSON, and so the server, has no NaN, the one value unequal to itself)
            return
        tl = type(lhs)
        if tl is type(rhs) and (tl is str or tl is int or tl is bool) and lhs == rhs:  # same_scalar, inline
            # one scalar on both sides, of one type: nothing differs either (most values of a write)
            return
        sl = side(t, lhs) if lhs is not _ABSENT else side(t, None)
        sr = side(t, rhs) if rhs is not _ABSENT else side(t, None)
        in_leaf = False
        if lhs is not _ABSENT and rhs is not _ABSENT and sl != sr:
            # kinds differ (untyped positions): both handlers run and record into the same sets
            self._handle(frame, pe, sl, lhs, rhs, t)
            in_leaf = self._handle(frame, pe, sr, lhs, rhs, t)
        else:
            s = sr if rhs is not _ABSENT else sl
            in_leaf = self._handle(frame, pe, s, lhs, rhs, t)
        if not in_leaf and pe is not None:
            if lhs is _ABSENT:
                _node_at(self.added, frame).members.add(pe)
            elif rhs is _ABSENT:
                _node_at(self.removed, frame).members.add(pe)

    def leaf(self, frame: _Frame, pe: PathElement | None, lhs: Any, rhs: Any) -> bool:
        if pe is None:
            return True  # the root as a leaf (a null object): the root path is never recorded
        if lhs is _ABSENT:
            _node_at(self.added, frame).members.add(pe)
        elif rhs is _ABSENT:
            _node_at(self.removed, frame).members.add(pe)
        elif not values_equal(lhs, rhs):
            _node_at(self.modified, frame).members.add(pe)
        return True

    def _handle(self, frame: _Frame, pe: PathElement | None, s: int, lhs: Any, rhs: Any, t: Type) -> bool:
        """Returns True when the node was a leaf."""
        if s == MAP:
            m = t.map
            assert m is not None
            return self.map_node(frame, pe, lhs, rhs, m)
        if s == LIST:
            lt = t.list
            assert lt is not None
            return self.list_node(frame, pe, lhs, rhs, lt)
        return self.leaf(frame, pe, lhs, rhs)

    def map_node(self, frame: _Frame, pe: PathElement | None, lhs: Any, rhs: Any, m: MapType) -> bool:
        """The map side of a node (True: it was a leaf)."""
        lm = lhs if type(lhs) is dict else None
        rm = rhs if type(rhs) is dict else None
        if m.atomic or (not lm and not rm):
            return self.leaf(frame, pe, lhs, rhs)
        lm = lm or {}
        rm = rm or {}
        inner: _Frame = (frame, pe) if pe is not None else None
        for k, lv in lm.items():
            rv = rm.get(k, _ABSENT)
            tl = type(lv)
            if lv is rv or (tl is type(rv) and (tl is str or tl is int or tl is bool) and lv == rv):
                continue  # node's own first answer (one value, or one scalar), without the call
            self.node(inner, (FIELD, k), lv, rv, key_type(m, k))
        for k, rv in rm.items():
            if k not in lm:
                self.node(inner, (FIELD, k), _ABSENT, rv, key_type(m, k))
        return False

    def list_node(self, frame: _Frame, pe: PathElement | None, lhs: Any, rhs: Any, lt: ListType) -> bool:
        """The list side of a node (True: it was a leaf)."""
        ll = lhs if type(lhs) is list else None
        rl = rhs if type(rhs) is list else None
        if lt.relationship == "atomic" or (not ll and not rl):
            return self.leaf(frame, pe, lhs, rhs)
        ll = ll or []
        rl = rl or []
        lpes, lfirst, ldups = index_items(lt, ll)
        rpes, rfirst, rdups = index_items(lt, rl)
        it = lt.item
        inner = (frame, pe) if pe is not None else None
        for i, ipe in enumerate(rpes):
            if ipe is None or rfirst[ipe] != i:
                continue
            li = lfirst.get(ipe)
            if ipe in ldups or ipe in rdups:
                self._duplicated(inner, ipe, ll, rl, lt)
                continue
            self.node(inner, ipe, ll[li] if li is not None else _ABSENT, rl[i], it)
        for i, ipe in enumerate(lpes):
            if ipe is None or lfirst[ipe] != i or ipe in rfirst:
                continue
            if ipe in ldups:
                self._duplicated(inner, ipe, ll, rl, lt)
                continue
            self.node(inner, ipe, ll[i], _ABSENT, it)
        return False

    def _duplicated(self, frame: _Frame, pe: PathElement, ll: list[Any], rl: list[Any], lt: Any) -> None:
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
        if len(lg) >= 2 and len(rg) >= 2:
            if len(lg) != len(rg) or not all(values_equal(a, b) for a, b in zip(lg, rg, strict=True)):
                _node_at(self.modified, frame).members.add(pe)
        elif len(lg) >= 2:
            if rg:
                self.node(frame, pe, _ABSENT, rg[0], lt.item)
            _node_at(self.removed, frame).members.add(pe)
        else:
            if lg:
                self.node(frame, pe, lg[0], _ABSENT, lt.item)
            _node_at(self.added, frame).members.add(pe)
