"""The owner tree: every owned path of an object with all of its owners and its value.

Co-ownership is normal under server-side apply (two appliers setting the same value both own it),
so a path maps to a list of owners, in the order of the object's managedFields entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..base.globs import matches_any
from ..base.record import Record
from ..fieldpath import KEY, VALUE, FieldSet, Path, PathElement, index, is_prefix, key, path_string, set_value
from ..fieldpath import field as field_element
from ..fieldpath.lookup import MISSING, Lookup
from .managedfields import STRIPPED_METADATA, ManagedFieldsEntry, object_entries

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final


class Owner(Record):
    __slots__ = ("api_version", "entry_index", "manager", "operation", "subresource")
    manager: Final[str]
    operation: Final[str]
    subresource: Final[str]
    api_version: Final[str]
    entry_index: Final[int]  # position of the entry in the object's managedFields

    def __init__(self, manager: str, operation: str, subresource: str, api_version: str, entry_index: int) -> None:
        self.manager = manager
        self.operation = operation
        self.subresource = subresource
        self.api_version = api_version
        self.entry_index = entry_index


class OwnedField(Record):
    __slots__ = ("owners", "path", "value")
    path: Final[Path]
    owners: Final[tuple[Owner, ...]]
    value: Final[Any]  # MISSING when the path is not set in the object

    def __init__(self, path: Path, owners: tuple[Owner, ...], value: Any = MISSING) -> None:
        self.path = path
        self.owners = owners
        self.value = value

    @property
    def is_set(self) -> bool:
        return self.value is not MISSING

    @property
    def path_string(self) -> str:
        return path_string(self.path)


class OwnerTree(Record, mutable=True):
    """All owned paths of one object, in document order (the order of canonical FieldsV1)."""

    __slots__ = ("entries", "fields", "obj")
    obj: Mapping[str, Any]
    entries: list[ManagedFieldsEntry]
    fields: list[OwnedField]

    def __init__(self, obj: Mapping[str, Any], entries: list[ManagedFieldsEntry],
                 fields: list[OwnedField] | None = None) -> None:
        self.obj = obj
        self.entries = entries
        self.fields = [] if fields is None else fields

    def managers(self) -> list[ManagedFieldsEntry]:
        return self.entries

    def owned_set(self) -> FieldSet:
        s = FieldSet()
        for e in self.entries:
            s = s.union(e.fields)
        return s

    def field_count(self, entry_index: int) -> int:
        return len(self.entries[entry_index].fields)

    def filtered(
        self, managers: Sequence[str] = (), prefixes: Sequence[Path] = ()
    ) -> OwnerTree:
        """Only fields owned by a manager matching one of the globs and below one of the prefixes.

        Owners that do not match the manager globs are kept on a field that matches, so a reader
        still sees who shares it.
        """
        out: list[OwnedField] = []
        for f in self.fields:
            if managers and not any(matches_any(o.manager, managers) for o in f.owners):
                continue
            if prefixes and not any(is_prefix(p, f.path) for p in prefixes):
                continue
            out.append(f)
        return OwnerTree(self.obj, self.entries, out)


def build_owner_tree(obj: Mapping[str, Any], entries: Iterable[ManagedFieldsEntry] | None = None) -> OwnerTree:
    """Merge all managedFields entries of ``obj`` (decoded from it unless given) into one tree."""
    ents = list(entries) if entries is not None else object_entries(obj)
    owners_by_path: dict[Path, list[Owner]] = {}
    union = FieldSet()
    for i, e in enumerate(ents):
        owner = Owner(e.manager, e.operation, e.subresource, e.api_version, i)
        for p in e.fields:
            owners_by_path.setdefault(p, []).append(owner)
        union = union.union(e.fields)
    look = Lookup(obj)
    fields = [OwnedField(p, tuple(owners_by_path[p]), look.at(p)) for p in union.sorted_paths()]
    return OwnerTree(obj, ents, fields)


def item_elements(items: Sequence[Any], owned_below: FieldSet) -> list[PathElement]:
    """The path element of each item of a list, as the server would name it.

    Without the schema, the owned set says what kind of list this is: items owned as
    ``k:{...}`` make it a list-map (the key names are read from those elements), ``v:...`` a set;
    anything else is named by index, which is how an atomic list's items would be addressed."""
    elements = set(owned_below.members) | set(owned_below.children)
    key_names: set[str] = set()
    is_set = False
    for element in elements:
        if element[0] == KEY:
            key_names.update(n for n, _ in element[1])
        elif element[0] == VALUE:
            is_set = True
    out: list[PathElement] = []
    for i, item in enumerate(items):
        pe: PathElement = index(i)
        if key_names and isinstance(item, Mapping):
            fields = {n: item[n] for n in sorted(key_names) if n in item}
            if fields:
                try:
                    pe = key(fields)
                except ValueError:
                    pe = index(i)
        elif is_set and not isinstance(item, (Mapping, list)):
            pe = set_value(item)
        out.append(pe)
    return out


def unowned_leaves(obj: Mapping[str, Any], owned: FieldSet) -> list[OwnedField]:
    """The set leaves of ``obj`` that no entry owns, in object order.

    A leaf is a scalar, a null, an empty map or list, or a list that nobody owns any part of (without
    the schema such a list cannot be told apart from an atomic one, so it counts as one leaf).
    Below an owned node that has nothing owned under it (an atomic value owned whole) nothing is
    unowned. The stripped metadata (name, uid, resourceVersion, ...) is never owned by design and
    not listed. List items are named the way the server names them (see :func:`item_elements`)."""
    out: list[OwnedField] = []

    def walk(v: Any, path: Path, below: FieldSet) -> None:
        if path and below.is_empty() and owned.has(path):
            return
        if isinstance(v, Mapping) and v:
            for k, x in v.items():
                p = (*path, field_element(k))
                if p != _METADATA and STRIPPED_METADATA.has(p):
                    continue
                walk(x, p, below.child(field_element(k)))
            return
        if isinstance(v, list) and v and not below.is_empty():
            for item, pe in zip(v, item_elements(v, below), strict=True):
                walk(item, (*path, pe), below.child(pe))
            return
        if path and not owned.has(path):
            out.append(OwnedField(path, (), v))

    walk(obj, (), owned)
    return out


_METADATA: Path = (field_element("metadata"),)
