"""Strategic-merge patch metadata of the built-in kinds: apimachinery ``PatchMetaFromStruct``.

kubectl (its compiled-in Go types) and the API server (the typed object it patches) look up, field
by field, how a strategic merge patch treats a value: ``patchStrategy`` (``merge``, ``replace``,
``retainKeys``, ``merge,retainKeys``) and ``patchMergeKey`` struct tags. We walk the same Go types
(:mod:`kubectl_fieldown.schema.gotypes`, a reflection dump of the k8s 1.36 types: which fields a
struct has, which are pointers, slices, maps) and read the tags from what the real server publishes
for them, the ``x-kubernetes-patch-strategy``/``x-kubernetes-patch-merge-key`` extensions of the
1.36 OpenAPI definitions shipped in :mod:`kubectl_fieldown.schema.builtin` (openapi-gen writes the
extensions from those tags; embedded structs such as ``VolumeSource`` are flattened into their
owner's properties, as Go flattens their fields).

Lookups follow the forked ``encoding/json`` field matching (exact name first, else the first
case-insensitive match) and fail as apimachinery fails: a field the struct does not have, an
object where the type is not a struct, a list where it is not a slice.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..base.record import Record

__all__ = ["KUBECTL_TYPES_VERSION", "GoStructs", "PatchMeta", "PatchMetaError", "StructMeta", "patch_meta_for"]

KUBECTL_TYPES_VERSION = "1.36"
"""The Kubernetes release whose Go types kubectl 1.36 and the 1.36 API server compile in."""


class PatchMetaError(ValueError):
    """apimachinery could not look the field up (its message)."""


class PatchMeta(Record):
    """The tags of one field: ``strategies`` as ``strings.Split(tag, ",")`` (``[""]`` when untagged)."""

    __slots__ = ("merge_key", "strategies")
    strategies: Final[tuple[str, ...]]
    merge_key: Final[str]

    def __init__(self, strategies: tuple[str, ...] = (), merge_key: str = "") -> None:
        self.strategies = strategies
        self.merge_key = merge_key


def _go_kind_name(desc: Mapping[str, Any] | None) -> str:
    """reflect.Kind's name of a type descriptor, for apimachinery's messages."""
    if desc is None:
        return "invalid"
    kind = str(desc.get("kind"))
    if kind == "custom":
        return str(desc.get("base") or "struct")
    return {"int": "int64", "float": "float64", "bytes": "slice", "ptr": "ptr"}.get(kind, kind)


@dataclass(frozen=True, eq=False)
class GoStructs:
    """Go struct types given as data, in place of the built-in kinds' (apimachinery's own tests
    patch a ``MergeItem`` struct): type id → its fields in order, each ``{"name": json name, "type":
    type descriptor, "patchStrategy": tag, "patchMergeKey": tag}``."""

    types: Mapping[str, tuple[Mapping[str, Any], ...]]

    def fields(self, type_id: str) -> tuple[Mapping[str, Any], ...]:
        return tuple(self.types.get(type_id, ()))

    def tags(self, type_id: str, field: str) -> tuple[str, str]:
        for f in self.fields(type_id):
            if f["name"] == field:
                return str(f.get("patchStrategy") or ""), str(f.get("patchMergeKey") or "")
        return "", ""


class StructMeta(Record):
    """``PatchMetaFromStruct{T}``: the Go type a value at one position has (a type descriptor of the
    Go types data: struct, ptr, slice, map, scalar, custom). ``structs``: where its struct types are
    found (None: the built-in kinds' Go types)."""

    __slots__ = ("desc", "structs")
    desc: Final[Mapping[str, Any] | None]
    structs: Final[GoStructs | None]

    def __init__(self, desc: Mapping[str, Any] | None, structs: GoStructs | None = None) -> None:
        self.desc = desc
        self.structs = structs

    def name(self) -> str:
        return _go_kind_name(self.desc)

    def _struct_id(self) -> str:
        t = self.desc
        if t is not None and t.get("kind") == "ptr":
            t = t.get("elem")
        if t is None or t.get("kind") not in ("struct", "custom") or \
                (t.get("kind") == "custom" and t.get("base") != "struct"):
            raise PatchMetaError("merging an object in json but data type is not struct, instead is: "
                                 f"{_go_kind_name(t)}")
        return str(t.get("type"))

    def for_struct(self, key: str) -> tuple[StructMeta, PatchMeta]:
        """``LookupPatchMetadataForStruct``: the field's type and tags."""
        type_id = self._struct_id()
        found: Mapping[str, Any] | None = None
        fields = self.structs.fields(type_id) if self.structs is not None else _struct_fields(type_id)
        for f in fields:
            if f["name"] == key:
                found = f
                break
            if found is None and f["name"].casefold() == key.casefold():
                found = f
        if found is None:
            short = type_id.rsplit(".", 1)[-1]
            raise PatchMetaError(f'unable to find api field in struct {short} for the json field "{key}"')
        strategy, merge_key = (self.structs.tags(type_id, str(found["name"])) if self.structs is not None
                               else _tags(type_id, str(found["name"])))
        return StructMeta(found["type"], self.structs), PatchMeta(tuple(strategy.split(",")), merge_key)

    def for_slice(self, key: str) -> tuple[StructMeta, PatchMeta]:
        """``LookupPatchMetadataForSlice``: the type of the list's items and the field's tags."""
        sub, meta = self.for_struct(key)
        t = sub.desc
        kind = t.get("kind") if t is not None else None
        if kind == "bytes":
            return StructMeta({"kind": "uint8"}, self.structs), meta
        if kind == "slice":
            elem = t.get("elem") if t is not None else None
            if elem is not None and elem.get("kind") in ("slice", "bytes"):
                raise PatchMetaError("unexpected slice of slice")
            return StructMeta(elem, self.structs), meta
        if kind == "ptr":
            elem = t.get("elem") if t is not None else None
            if elem is not None and elem.get("kind") == "slice":
                elem = elem.get("elem")
            return StructMeta(elem, self.structs), meta
        raise PatchMetaError(f"expected slice or array type, but got: {self.name()}")


@functools.cache
def _struct_fields(type_id: str) -> tuple[Mapping[str, Any], ...]:
    from ..schema.gotypes import _data

    found = _data()["types"].get(type_id)
    if not isinstance(found, dict):
        return ()
    return tuple(f for f in found.get("fields", ()) if isinstance(f, dict))


@functools.cache
def _definitions() -> Mapping[str, Any]:
    from ..schema.builtin import _definitions as defs

    return defs(KUBECTL_TYPES_VERSION)


def _tags(type_id: str, field: str) -> tuple[str, str]:
    definition = _definitions().get(type_id)
    props = definition.get("properties") if isinstance(definition, Mapping) else None
    prop = props.get(field) if isinstance(props, Mapping) else None
    if not isinstance(prop, Mapping):
        return "", ""
    strategy = prop.get("x-kubernetes-patch-strategy")
    key = prop.get("x-kubernetes-patch-merge-key")
    return (strategy if isinstance(strategy, str) else ""), (key if isinstance(key, str) else "")


def patch_meta_for(api_version: str, kind: str) -> StructMeta | None:
    """The root of a built-in kind (None: not a built-in kind the Go types know)."""
    from ..schema.gotypes import _kind

    found = _kind(api_version, kind)
    if found is None or not isinstance(found.get("type"), str):
        return None
    return StructMeta({"kind": "struct", "type": found["type"]})
