"""FieldSet: a set of paths, stored as a trie (SMD ``fieldpath.Set``).

Each node has ``members`` (elements whose path ends here) and ``children`` (element -> subtree).
One element can be both, e.g. a list item that is owned itself and has owned fields. Owning a
parent says nothing about its children, and the reverse: every operation is exact per path.

Sets are treated as values: the algebra returns new sets and never changes its operands. Only
:meth:`FieldSet.insert` mutates, for building a set before it is shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .element import Path, PathElement


class FieldSet:
    __slots__ = ("children", "members")

    members: set[PathElement]
    children: dict[PathElement, FieldSet]

    def __init__(self, paths: Iterable[Path] = ()) -> None:
        self.members = set()
        self.children = {}
        for p in paths:
            self.insert(p)

    # --- construction ------------------------------------------------------------------------

    @classmethod
    def _node(cls, members: set[PathElement], children: dict[PathElement, FieldSet]) -> FieldSet:
        s = cls.__new__(cls)
        s.members = members
        s.children = children
        return s

    def insert(self, path: Path) -> None:
        """Add one path (mutates; use while building a set)."""
        if not path:
            raise ValueError("the root path cannot be a member of a set")
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = FieldSet._node(set(), {})
                node.children[pe] = child
            node = child
        node.members.add(path[-1])

    def copy(self) -> FieldSet:
        return FieldSet._node(set(self.members), {pe: c.copy() for pe, c in self.children.items()})

    # --- queries -----------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return not self.members and not self.children

    def __bool__(self) -> bool:
        return bool(self.members) or bool(self.children)

    def has(self, path: Path) -> bool:
        if not path:
            return False
        node: FieldSet | None = self
        for pe in path[:-1]:
            assert node is not None
            node = node.children.get(pe)
            if node is None:
                return False
        assert node is not None
        return path[-1] in node.members

    __contains__ = has

    def child(self, pe: PathElement) -> FieldSet:
        """The subtree below one element (empty if none); the element's own membership is not included."""
        c = self.children.get(pe)
        return c if c is not None else EMPTY

    def descend(self, path: Path) -> FieldSet:
        """The subtree below a path (empty if none)."""
        node = self
        for pe in path:
            c = node.children.get(pe)
            if c is None:
                return EMPTY
            node = c
        return node

    def has_prefix(self, path: Path) -> bool:
        """True if some member path starts with ``path`` (including ``path`` itself)."""
        if not path:
            return not self.is_empty()
        return self.has(path) or not self.descend(path).is_empty()

    def __len__(self) -> int:
        n = len(self.members)
        for c in self.children.values():
            n += len(c) if c.children else len(c.members)
        return n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    def __hash__(self) -> int:  # sets are values, but mutable while built: hash by content
        return hash((frozenset(self.members), frozenset(self.children)))

    def __repr__(self) -> str:
        from .pathstring import path_string

        return "FieldSet([" + ", ".join(path_string(p) for p in self.sorted_paths()) + "])"

    # --- iteration ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Path]:
        """SMD ``Iterate`` order: at each node all members (sorted), then each child (sorted)."""
        return self._iterate(())

    def _iterate(self, prefix: Path) -> Iterator[Path]:
        for pe in sorted(self.members):
            yield (*prefix, pe)
        for pe in sorted(self.children):
            yield from self.children[pe]._iterate((*prefix, pe))

    def sorted_paths(self) -> Iterator[Path]:
        """Document order: paths sorted element by element, a path before the paths below it.

        This is the order in which paths appear in canonical FieldsV1 JSON.
        """
        return self._sorted(())

    def _sorted(self, prefix: Path) -> Iterator[Path]:
        members, children = self.members, self.children
        for pe in sorted(members.union(children)):
            p = (*prefix, pe)
            if pe in members:
                yield p
            c = children.get(pe)
            if c is not None:
                yield from c._sorted(p)

    def leaves(self) -> FieldSet:
        """Members that have no children below them (SMD ``Leaves``)."""
        own = self.children
        if not own:
            return self
        members = self.members
        same = members.isdisjoint(own)
        if not same:
            members = {pe for pe in members if pe not in own}
        children = {}
        for pe, c in own.items():
            lc = c.leaves()
            if lc.members or lc.children:
                children[pe] = lc
                if lc is not c:
                    same = False
            else:
                same = False
        # already nothing but leaves: the set itself (sets are values)
        return self if same else FieldSet._node(members, children)

    # --- algebra -----------------------------------------------------------------------------

    def union(self, other: FieldSet) -> FieldSet:
        if not (other.members or other.children):
            return self
        if not (self.members or self.children):
            return other
        members = self.members | other.members
        children = dict(self.children)
        for pe, oc in other.children.items():
            mc = children.get(pe)
            children[pe] = oc if mc is None else mc.union(oc)
        return FieldSet._node(members, children)

    def intersection(self, other: FieldSet) -> FieldSet:
        """Paths in both; the elements kept are ``self``'s (they carry its number types)."""
        if not (self.members or self.children) or not (other.members or other.children):
            return EMPTY
        om = other.members
        members = {pe for pe in self.members if pe in om}
        children = {}
        ochildren = other.children
        for pe, c in self.children.items():
            oc = ochildren.get(pe)
            if oc is not None:
                i = c.intersection(oc)
                if i.members or i.children:
                    children[pe] = i
        return FieldSet._node(members, children)

    def intersects(self, other: FieldSet) -> bool:
        """Whether some path is in both: ``not (self & other).is_empty()``, without building the set."""
        if not self.members.isdisjoint(other.members):
            return True
        ochildren = other.children
        for pe, c in self.children.items():
            oc = ochildren.get(pe)
            if oc is not None and c.intersects(oc):
                return True
        return False

    def issubset(self, other: FieldSet) -> bool:
        """Every path of ``self`` is in ``other``: ``(self - other).is_empty()``, without building
        the difference (a node left empty inside ``self`` counts as a path of it, as there)."""
        if not (self.members or self.children) or other is self:
            return True
        if not (other.members or other.children) or not self.members <= other.members:
            return False
        ochildren = other.children
        for pe, c in self.children.items():
            oc = ochildren.get(pe)
            if oc is None or not c.issubset(oc):
                return False
        return True

    def difference(self, other: FieldSet) -> FieldSet:
        """Paths of ``self`` that are not in ``other`` (exact paths; nothing below is removed)."""
        if not (other.members or other.children) or not (self.members or self.children):
            return self
        if other is self:  # an entry a write left as it was
            return EMPTY
        om = other.members
        members = self.members
        if om and not members.isdisjoint(om):
            members = members - om
        children = {}
        ochildren = other.children
        same = members is self.members
        for pe, c in self.children.items():
            oc = ochildren.get(pe)
            if oc is None:
                children[pe] = c
            else:
                d = c.difference(oc)
                if d.members or d.children:
                    children[pe] = d
                    if d is not c:
                        same = False
                else:
                    same = False
        # nothing removed: the set itself (sets are values; sharing keeps later identity checks cheap)
        return self if same else FieldSet._node(members, children)

    def not_prefixes_of(self, other: FieldSet) -> FieldSet:
        """The paths ``p`` of ``self`` of which no path of ``other`` is ``p`` or starts with ``p``
        (``not other.has_prefix(p)``), found in one walk of both sets."""
        if not (other.members or other.children) or not (self.members or self.children):
            return self
        om, ochildren = other.members, other.children
        members = {pe for pe in self.members if pe not in om and (pe not in ochildren or ochildren[pe].is_empty())}
        children = {}
        for pe, c in self.children.items():
            oc = ochildren.get(pe)
            d = c if oc is None else c.not_prefixes_of(oc)
            if d.members or d.children:
                children[pe] = d
        return FieldSet._node(members, children)

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like :meth:`difference`, but also drops every path that lies below a member of ``other``."""
        if not (other.members or other.children) or not (self.members or self.children):
            return self
        om = other.members
        members = self.members - om
        children = {}
        ochildren = other.children
        for pe, c in self.children.items():
            if pe in om:
                continue
            oc = ochildren.get(pe)
            if oc is None:
                children[pe] = c
            else:
                d = c.recursive_difference(oc)
                if d.members or d.children:
                    children[pe] = d
        return FieldSet._node(members, children)

    def __or__(self, other: FieldSet) -> FieldSet:
        return self.union(other)

    def __and__(self, other: FieldSet) -> FieldSet:
        return self.intersection(other)

    def __sub__(self, other: FieldSet) -> FieldSet:
        return self.difference(other)

    def prefixed(self, prefix: Path) -> FieldSet:
        """This set moved below ``prefix``."""
        node = self
        for pe in reversed(prefix):
            node = FieldSet._node(set(), {pe: node}) if node else EMPTY
        return node

    def filter_prefix(self, prefix: Path) -> FieldSet:
        """The paths equal to or below ``prefix``, kept at their full paths."""
        if not prefix:
            return self
        below = self.descend(prefix)
        out = below.prefixed(prefix)
        if self.has(prefix):
            out = out.union(FieldSet([prefix]))
        return out


EMPTY = FieldSet()
"""The empty set. Treat it as immutable."""
