"""How values merge: the schema model (SMD ``schema.Atom``).

A :class:`Type` says what a value at one position may be — a scalar, a map (struct or plain map),
a list — and how each of them merges. One type can allow several kinds (an "untyped" position
accepts anything); the value's own kind picks the side that applies.

* :class:`MapType`: ``fields`` are the declared (struct) fields; ``element`` types every other key
  (``None``: the schema declares no other keys); ``atomic`` maps are owned and replaced whole.
* :class:`ListType`: ``atomic`` lists are owned and replaced whole; associative lists merge item
  by item, identified by ``keys`` (a list-map) or by the item's whole value (a set, no keys).

Types may be recursive (JSONSchemaProps refers to itself), so they are plain mutable objects
compared by identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ScalarKind = Literal["numeric", "string", "boolean", "untyped"]
ListRelationship = Literal["atomic", "associative"]


class _NoDefault:
    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False


NO_DEFAULT: Any = _NoDefault()
"""A field without a schema default (``None`` would be a default of JSON null)."""


@dataclass(eq=False)
class StructField:
    type: Type
    default: Any = NO_DEFAULT


@dataclass(eq=False)
class MapType:
    fields: dict[str, StructField] = field(default_factory=dict)
    element: Type | None = None
    atomic: bool = False


@dataclass(eq=False)
class ListType:
    item: Type
    relationship: ListRelationship = "atomic"
    keys: tuple[str, ...] = ()

    @property
    def is_set(self) -> bool:
        return self.relationship == "associative" and not self.keys

    @property
    def is_map(self) -> bool:
        return self.relationship == "associative" and bool(self.keys)


@dataclass(eq=False)
class Type:
    name: str = ""
    scalar: ScalarKind | None = None
    map: MapType | None = None
    list: ListType | None = None
    # For the CRD validator's type checks: the OpenAPI ``type`` ("object", "string", "integer",
    # "number", "boolean", "array"; "integer,string" for int-or-string; None when untyped),
    # ``nullable: true`` and ``format`` as written.
    json_type: str | None = None
    nullable: bool = False
    format: str = ""

    def __repr__(self) -> str:
        sides = [s for s, v in (("scalar", self.scalar), ("map", self.map), ("list", self.list)) if v]
        return f"Type({self.name or '?'}: {'/'.join(sides) or 'nothing'})"

    @property
    def is_deduced(self) -> bool:
        return self is DEDUCED


def _untyped_atomic() -> Type:
    t = Type(name="__untyped_atomic_", scalar="untyped")
    t.list = ListType(item=t, relationship="atomic")
    t.map = MapType(fields={}, element=t, atomic=True)
    return t


UNTYPED: Type = _untyped_atomic()
"""Anything, owned whole (kube-openapi's ``__untyped_atomic_``): int-or-string, Quantity, no type."""


def _deduced() -> Type:
    t = Type(name="__untyped_deduced_", scalar="untyped")
    t.list = ListType(item=UNTYPED, relationship="atomic")
    t.map = MapType(fields={}, element=t, atomic=False)
    return t


DEDUCED: Type = _deduced()
"""What the server uses when it knows nothing: maps granular all the way down, lists atomic."""


def merges_as_deduced(t: Type) -> bool:
    """Whether ``t`` merges as :data:`DEDUCED` does: DEDUCED itself, or its shape carrying types for
    the CRD validator only (an int-or-string node: ``json_type`` "integer,string")."""
    if t is DEDUCED:
        return True
    return (
        t.scalar == "untyped"
        and t.list is not None
        and t.list.relationship == "atomic"
        and t.list.item is UNTYPED
        and t.map is not None
        and not t.map.atomic
        and not t.map.fields
        and t.map.element is DEDUCED
    )


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        group, _, version = api_version.rpartition("/")
        return cls(group, version, kind)

    def __str__(self) -> str:
        return f"{self.kind}.{self.version}.{self.group}" if self.group else f"{self.kind}.{self.version}"

    @property
    def in_builtin_group(self) -> bool:
        """Could Kubernetes itself serve this kind? Its group is the core group, one of the few
        unqualified ones, or under ``k8s.io``; every kind of the offline data is (a test checks it).
        A custom resource's group (``example.com``) is not, and telling so spares loading the
        built-in kinds' data files (some 25 ms of a run on custom resources alone); a CRD under
        ``k8s.io`` (the Gateway API's) is told apart by the data."""
        g = self.group
        return g in BUILTIN_UNQUALIFIED_GROUPS or g.endswith(".k8s.io")


#: the API groups of built-in kinds that are not under ``k8s.io`` (``""``: the core group)
BUILTIN_UNQUALIFIED_GROUPS = frozenset({"", "apps", "autoscaling", "batch", "extensions", "policy"})


@dataclass
class KindSchema:
    """The schema of one kind at one version, and where it came from.

    ``source`` is shown to users ("cluster OpenAPI v3", "CRD widgets.example.com", "kubernetes-validate
    1.36", "deduced: no schema known") so that a prediction made without a schema says so.
    ``zero`` is the object the server starts from when it creates this kind by an Update: for
    custom resources just ``{apiVersion, kind}``; for built-in types the JSON of the empty Go struct
    (non-pointer struct fields present as ``{}``), when known.
    """

    gvk: GroupVersionKind
    root: Type
    source: str
    namespaced: bool | None = None
    zero: dict[str, Any] | None = None
    hints: tuple[tuple[str, str], ...] = ()
    """The list types a deduced root took from an object's managedFields (see schema.hinted)."""
    validation: Mapping[str, Any] | None = None
    """A CRD version's ``openAPIV3Schema`` as written: the value constraints the CRD validator checks
    (``typed.constraints``); None where unknown (built-in kinds, OpenAPI, deduced)."""
    resource: str = ""
    """The plural (``widgets``) when known (a CRD's names, discovery): the server names some
    errors after ``resource.group`` (an update without resourceVersion)."""
    scale_paths: tuple[str, str, str] | None = None
    """A CRD version's scale subresource: ``specReplicasPath``, ``statusReplicasPath`` and
    ``labelSelectorPath`` ("" when none); the CRD validator checks their values on every write."""

    @property
    def deduced(self) -> bool:
        return self.root is DEDUCED or bool(self.hints)
