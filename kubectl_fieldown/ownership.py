"""The owner tree: every owned path of an object with all of its owners and its value.

Co-ownership is normal under server-side apply (two appliers setting the same value both own it),
so a path maps to a list of owners, in the order of the object's managedFields entries.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fieldpath import FieldSet, Path, is_prefix, path_string
from .fieldpath.lookup import MISSING, value_at
from .managedfields import ManagedFieldsEntry, object_entries


@dataclass(frozen=True)
class Owner:
    manager: str
    operation: str
    subresource: str
    api_version: str
    entry_index: int  # position of the entry in the object's managedFields


@dataclass(frozen=True)
class OwnedField:
    path: Path
    owners: tuple[Owner, ...]
    value: Any = MISSING  # MISSING when the path is not set in the object

    @property
    def is_set(self) -> bool:
        return self.value is not MISSING

    @property
    def path_string(self) -> str:
        return path_string(self.path)


@dataclass
class OwnerTree:
    """All owned paths of one object, in document order (the order of canonical FieldsV1)."""

    obj: Mapping[str, Any]
    entries: list[ManagedFieldsEntry]
    fields: list[OwnedField] = field(default_factory=list)

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
            if managers and not any(fnmatch.fnmatchcase(o.manager, g) for o in f.owners for g in managers):
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
    fields = [OwnedField(p, tuple(owners_by_path[p]), value_at(obj, p)) for p in union.sorted_paths()]
    return OwnerTree(obj, ents, fields)
