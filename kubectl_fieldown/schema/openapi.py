"""OpenAPI v3 / JSON-schema definitions → merge types (kube-openapi ``schemaconv.ToSchemaFromOpenAPI``).

The rules (docs/ssa-semantics.md §5), as kube-openapi applies them:

* ``type`` is read from its first non-``null`` entry, so JSON-schema ``["string", "null"]``
  (kubernetes-validate's nullable spelling) means ``string``.
* ``object`` → a map; ``properties`` are its declared fields, each with the property's
  ``default``. Undeclared keys: ``additionalProperties: <schema>`` → that type, ``true`` → deduced,
  ``false`` → none; absent → deduced when ``x-kubernetes-preserve-unknown-fields: true`` is set on
  this node or an *inline* ancestor (the flag does not travel through ``$ref``), or when there are
  no properties; otherwise none.
* ``array`` → a list: ``x-kubernetes-list-type`` atomic / set / map (keyed by
  ``x-kubernetes-list-map-keys``); otherwise ``x-kubernetes-patch-strategy`` ``merge`` or
  ``merge,retainKeys`` → associative keyed by ``x-kubernetes-patch-merge-key`` (a set without
  one); ``retainKeys`` or nothing → atomic.
* ``integer``/``number`` → numeric, ``boolean`` → boolean, ``string`` with format ``""``/``byte`` →
  string, any other string format → untyped scalar.
* No ``type`` → untyped scalar *and* list *and* map, each built from whatever the node declares.
  kube-openapi has no special case for ``x-kubernetes-int-or-string``: such a node has no type, so
  it gets this shape too (which, with nothing declared, is exactly :data:`DEDUCED`).
* ``x-kubernetes-map-type`` atomic / granular sets the map's relationship. On a ``$ref`` property
  (or a single-``$ref`` ``allOf``) it overrides that one use of the named type only.
* The named types ``Quantity`` and ``RawExtension`` are hard-wired: an untyped scalar, and a value
  owned whole (:data:`UNTYPED`), whatever their schema says.
* Anything kube-openapi reports as an error (an unknown list type, map type, patch strategy or
  ``type``; list-map without keys; an array without exactly one ``items`` schema) raises
  :class:`SchemaError`: the server would fail to build its type converter.

Named types are built once per :class:`SchemaConverter` and referenced, so recursive definitions
(JSONSchemaProps) terminate; conversion is lazy, per named type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from .types import (
    DEDUCED,
    NO_DEFAULT,
    UNTYPED,
    GroupVersionKind,
    KindSchema,
    ListRelationship,
    ListType,
    MapType,
    StructField,
    Type,
    merges_as_deduced,
)

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

GVK_EXTENSION = "x-kubernetes-group-version-kind"
INT_OR_STRING = "x-kubernetes-int-or-string"
PRESERVE_UNKNOWN = "x-kubernetes-preserve-unknown-fields"

FieldDefault = Callable[[str, str, Mapping[str, Any]], Any]
"""``(definition name, field name, property schema) -> default`` (``NO_DEFAULT`` for none)."""


class SchemaError(ValueError):
    """A schema the API server could not turn into merge types; says where."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}" if where else reason)


def ref_name(ref: str) -> str:
    """The definition a ``$ref`` names: its last path segment (kube-openapi uses ``path.Split``)."""
    name = ref.rsplit("/", 1)[-1]
    return name.replace("~1", "/").replace("~0", "~")


def definitions_of(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The named schemas of an OpenAPI v3 (``components.schemas``), v2 (``definitions``) or
    JSON-schema (``$defs``) document."""
    components = document.get("components")
    if isinstance(components, Mapping) and isinstance(components.get("schemas"), Mapping):
        schemas: Mapping[str, Any] = components["schemas"]
        return schemas
    for key in ("$defs", "definitions"):
        found = document.get(key)
        if isinstance(found, Mapping):
            return found
    return {}


def schema_type(node: Mapping[str, Any]) -> str:
    """The node's ``type``, the first entry that is not ``null`` ("" when absent)."""
    typ = node.get("type")
    if isinstance(typ, str):
        return typ
    if isinstance(typ, list):
        for entry in typ:
            if entry != "null":
                return str(entry)
    return ""


def _single_ref(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref:
        return ref
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
        inner = all_of[0].get("$ref")
        if isinstance(inner, str) and inner:
            return inner
    return None


def _no_field_default(definition: str, field: str, prop: Mapping[str, Any]) -> Any:
    return prop.get("default", NO_DEFAULT)


class SchemaConverter:
    """Converts schema nodes against one set of named definitions, building each named type once.

    ``preserve_unknown_fields`` is the converter-wide flag of ``ToSchemaFromOpenAPI`` (set for CRDs
    with ``spec.preserveUnknownFields: true``): every map without ``additionalProperties`` then
    accepts undeclared keys as deduced. ``prebuilt`` supplies named types from elsewhere (ObjectMeta
    for a CRD). ``field_default`` may supply defaults the definitions lack.
    """

    def __init__(
        self,
        definitions: Mapping[str, Any],
        *,
        preserve_unknown_fields: bool = False,
        prebuilt: Mapping[str, Type] | None = None,
        field_default: FieldDefault | None = None,
    ) -> None:
        self.definitions = definitions
        self.preserve_unknown_fields = preserve_unknown_fields
        self._named: dict[str, Type] = dict(prebuilt or {})
        self._variants: dict[tuple[int, str], Type] = {}
        # Overrides met while their target was still being built (a recursive reference): the
        # variant's sides are copied in once the target is complete.
        self._building: dict[int, list[tuple[Type, bool]]] = {}
        self._field_default = field_default or _no_field_default

    def has(self, name: str) -> bool:
        return name in self._named or isinstance(self.definitions.get(name), Mapping)

    def named(self, name: str) -> Type:
        """The type of definition ``name``, converted on first use."""
        found = self._named.get(name)
        if found is not None:
            return found
        if name == RAW_EXTENSION:
            self._named[name] = UNTYPED
            return UNTYPED
        if name == QUANTITY:
            t = Type(name=name, scalar="untyped")
            self._named[name] = t
            return t
        node = self.definitions.get(name)
        if not isinstance(node, Mapping):
            raise SchemaError(name, "no such definition")
        target = _single_ref(node)
        if target is not None:
            # A definition that only points elsewhere is skipped by kube-openapi; following it
            # is the only useful reading for a caller that asks for it by name.
            alias = self.named(ref_name(target))
            self._named[name] = alias
            return alias
        # Registered before its content is built: a recursive reference finds this very object.
        t = Type(name=name)
        self._named[name] = t
        self._building[id(t)] = []
        try:
            self._fill(t, node, self.preserve_unknown_fields, name)
        except BaseException:
            # Half built: the next use must fail the same way, not see a partial type.
            del self._named[name]
            raise
        finally:
            pending = self._building.pop(id(t))
        for variant, atomic in pending:
            _copy_sides(variant, self._variant(t, atomic))
        return t

    def convert(self, node: Mapping[str, Any], where: str = "", preserve_unknown: bool = False) -> Type:
        """The type of an inline schema node (``$ref`` and single-``$ref`` ``allOf`` resolved)."""
        return self._ref_or_inline(node, where, preserve_unknown or self.preserve_unknown_fields)

    # --- internals -------------------------------------------------------------------------

    def _ref_or_inline(self, node: Mapping[str, Any], where: str, preserve: bool) -> Type:
        ref = _single_ref(node)
        if ref is not None:
            target = self.named(ref_name(ref))
            map_type = node.get("x-kubernetes-map-type")
            if map_type is None:
                return target
            return self._variant(target, _map_atomic(map_type, where))
        t = Type()
        self._fill(t, node, preserve, where)
        if t.json_type is None and merges_as_deduced(t):
            return DEDUCED  # (an int-or-string node merges as one too, but its values are typed)
        return t

    def _variant(self, target: Type, atomic: bool) -> Type:
        """``target`` as seen through a field-level map-type override, sharing everything else."""
        pending = self._building.get(id(target))
        if pending is not None:
            key = (id(target), "pending-atomic" if atomic else "pending-granular")
            late = self._variants.get(key)
            if late is None:
                late = Type(name=target.name)
                self._variants[key] = late
                pending.append((late, atomic))
            return late
        if target.map is not None:
            if target.map.atomic == atomic:
                return target
            key = (id(target), "atomic" if atomic else "granular")
            found = self._variants.get(key)
            if found is None:
                # Shallow: the fields dict is the named type's own, so it stays one definition.
                found = replace(
                    target, map=MapType(fields=target.map.fields, element=target.map.element, atomic=atomic)
                )
                self._variants[key] = found
            return found
        if target.list is not None:
            relationship: ListRelationship = "atomic" if atomic else "associative"
            if target.list.relationship == relationship:
                return target
            key = (id(target), relationship)
            found = self._variants.get(key)
            if found is None:
                found = replace(
                    target, list=ListType(item=target.list.item, relationship=relationship, keys=target.list.keys)
                )
                self._variants[key] = found
            return found
        # SMD cannot apply a relationship to a scalar; the override has nothing to act on.
        return target

    def _fill(self, t: Type, node: Mapping[str, Any], preserve: bool, where: str) -> None:
        if node.get(PRESERVE_UNKNOWN) is True:
            preserve = True
        typ = schema_type(node)
        # Not merge rules: what the CRD validator checks types with (apiextensions gives an
        # int-or-string node the types "integer" and "string").
        t.json_type = typ or ("integer,string" if node.get(INT_OR_STRING) is True else None)
        declared = node.get("type")
        t.nullable = node.get("nullable") is True or (isinstance(declared, list) and "null" in declared)
        fmt = node.get("format")
        t.format = fmt if isinstance(fmt, str) else ""
        if typ == "":
            t.scalar = "untyped"
            t.list = self._list(node, preserve, where, typed=False)
            t.map = self._map(node, preserve, where)
        elif typ == "object":
            t.map = self._map(node, preserve, where)
        elif typ == "array":
            t.list = self._list(node, preserve, where, typed=True)
        elif typ in ("integer", "number"):
            t.scalar = "numeric"
        elif typ == "boolean":
            t.scalar = "boolean"
        elif typ == "string":
            t.scalar = "string" if node.get("format", "") in ("", "byte") else "untyped"
        else:
            raise SchemaError(where, f"unrecognized type: {typ!r}")

    def _map(self, node: Mapping[str, Any], preserve: bool, where: str) -> MapType:
        properties = node.get("properties")
        fields: dict[str, StructField] = {}
        if isinstance(properties, Mapping):
            for name, prop in properties.items():
                if not isinstance(prop, Mapping):
                    raise SchemaError(f"{where}.{name}", "property schema is not an object")
                fields[name] = StructField(
                    type=self._ref_or_inline(prop, f"{where}.{name}", preserve),
                    default=self._field_default(where, name, prop),
                )
        additional = node.get("additionalProperties")
        element: Type | None
        if additional is None:
            element = DEDUCED if preserve or not fields else None
        elif isinstance(additional, Mapping):
            element = self._ref_or_inline(additional, f"{where}[*]", preserve)
        elif additional is True:
            element = DEDUCED
        else:
            element = None
        return MapType(fields=fields, element=element, atomic=_map_atomic(node.get("x-kubernetes-map-type"), where))

    def _list(self, node: Mapping[str, Any], preserve: bool, where: str, typed: bool) -> ListType:
        relationship, keys = list_relationship(node, where)
        items = node.get("items")
        item: Type
        if items is None:
            if typed:
                raise SchemaError(where, "`items` must be specified on arrays")
            item = UNTYPED
        elif isinstance(items, Mapping):
            item = self._ref_or_inline(items, f"{where}[]", preserve)
        else:
            raise SchemaError(where, "structural schema arrays must have exactly one member subtype")
        return ListType(item=item, relationship=relationship, keys=keys)


def _copy_sides(into: Type, source: Type) -> None:
    into.__dict__.update(source.__dict__)


def _map_atomic(value: Any, where: str) -> bool:
    if value is None or value == "granular":
        return False
    if value == "atomic":
        return True
    raise SchemaError(where, f"unknown map type {value!r}")


def list_relationship(node: Mapping[str, Any], where: str = "") -> tuple[ListRelationship, tuple[str, ...]]:
    """``(relationship, keys)`` of an array node, first matching extension wins."""
    if "x-kubernetes-list-type" in node:
        list_type = node["x-kubernetes-list-type"]
        if list_type == "atomic":
            return "atomic", ()
        if list_type == "set":
            return "associative", ()
        if list_type == "map":
            if "x-kubernetes-list-map-keys" not in node:
                raise SchemaError(where, "missing map keys")
            keys = node["x-kubernetes-list-map-keys"]
            if not isinstance(keys, list):
                raise SchemaError(where, f"uninterpreted map keys: {keys!r}")
            # kube-openapi keeps only the string entries of the keys list.
            return "associative", tuple(k for k in keys if isinstance(k, str))
        raise SchemaError(where, f"unknown list type {list_type!r}")
    if "x-kubernetes-patch-strategy" in node:
        strategy = node["x-kubernetes-patch-strategy"]
        if strategy in ("merge", "merge,retainKeys"):
            if "x-kubernetes-patch-merge-key" not in node:
                return "associative", ()
            key = node["x-kubernetes-patch-merge-key"]
            if not isinstance(key, str):
                raise SchemaError(where, f"uninterpreted merge key: {key!r}")
            return "associative", (key,)
        if strategy == "retainKeys":
            return "atomic", ()
        raise SchemaError(where, f"unknown patch strategy {strategy!r}")
    return "atomic", ()


def with_unknown_fields_deduced(root: Type) -> Type:
    """``root`` with every map that declares no other keys opened to deduced ones.

    What ``ToSchemaFromOpenAPI(..., preserveUnknownFields=true)`` does to named types it did not
    build for us (ObjectMeta under a CRD with ``spec.preserveUnknownFields: true``). A copy: shared
    named types are left alone.
    """
    done: dict[int, Type] = {}

    def clone(t: Type) -> Type:
        if t is DEDUCED or t is UNTYPED or (t.map is None and t.list is None):
            return t
        found = done.get(id(t))
        if found is not None:
            return found
        copy = replace(t, map=None, list=None)
        done[id(t)] = copy
        if t.map is not None:
            copy.map = MapType(
                fields={k: StructField(clone(f.type), f.default) for k, f in t.map.fields.items()},
                element=clone(t.map.element) if t.map.element is not None else DEDUCED,
                atomic=t.map.atomic,
            )
        if t.list is not None:
            copy.list = ListType(item=clone(t.list.item), relationship=t.list.relationship, keys=t.list.keys)
        return copy

    return clone(root)


def type_from_schema(
    schema_node: Mapping[str, Any],
    definitions: Mapping[str, Any] | None = None,
    *,
    preserve_unknown_fields: bool = False,
) -> Type:
    """The type of one schema node; ``$ref`` resolve against ``definitions`` (raw schemas)."""
    return SchemaConverter(definitions or {}, preserve_unknown_fields=preserve_unknown_fields).convert(schema_node)


def types_from_openapi_v3(document: Mapping[str, Any]) -> dict[str, Type]:
    """Every named schema of a document, converted (see :func:`definitions_of`)."""
    definitions = definitions_of(document)
    converter = SchemaConverter(definitions)
    return {name: converter.named(name) for name in definitions}


def group_version_kinds(node: Mapping[str, Any]) -> list[GroupVersionKind]:
    """The kinds a named schema is the root of (``x-kubernetes-group-version-kind``)."""
    found = node.get(GVK_EXTENSION)
    if isinstance(found, Mapping):
        found = [found]
    if not isinstance(found, list):
        return []
    return [
        GroupVersionKind(str(g.get("group", "")), str(g.get("version", "")), str(g.get("kind", "")))
        for g in found
        if isinstance(g, Mapping) and g.get("kind") and g.get("version")
    ]


def kind_index(definitions: Mapping[str, Any]) -> dict[GroupVersionKind, str]:
    """Which definition is the root of each kind; the first one wins if several claim it."""
    index: dict[GroupVersionKind, str] = {}
    for name, node in definitions.items():
        if isinstance(node, Mapping):
            for gvk in group_version_kinds(node):
                index.setdefault(gvk, name)
    return index


def namespaced_kinds(document: Mapping[str, Any]) -> dict[GroupVersionKind, bool]:
    """Scope of each kind from the ``paths`` of an OpenAPI document, where it has any.

    A kind is namespaced when its single-object path (``…/{name}``, read/replace/patch) has a
    ``{namespace}`` segment.
    """
    scopes: dict[GroupVersionKind, bool] = {}
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return scopes
    for path, item in paths.items():
        if not isinstance(item, Mapping) or not str(path).endswith("/{name}"):
            continue
        for operation in _operations(item):
            gvk = operation.get(GVK_EXTENSION)
            if isinstance(gvk, Mapping) and gvk.get("kind"):
                key = GroupVersionKind(str(gvk.get("group", "")), str(gvk.get("version", "")), str(gvk["kind"]))
                scopes.setdefault(key, "{namespace}" in str(path))
    return scopes


def _operations(item: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for verb in ("get", "put", "patch"):
        operation = item.get(verb)
        if isinstance(operation, Mapping):
            yield operation


def kinds_from_openapi_v3(document: Mapping[str, Any], source: str) -> dict[GroupVersionKind, KindSchema]:
    """A :class:`KindSchema` for every kind a document defines (e.g. ``/openapi/v3/apis/apps/v1``).

    ``zero`` is left unknown: a document does not say which fields are Go pointers.
    """
    definitions = definitions_of(document)
    converter = SchemaConverter(definitions)
    scopes = namespaced_kinds(document)
    return {
        gvk: KindSchema(gvk=gvk, root=converter.named(name), source=source, namespaced=scopes.get(gvk))
        for gvk, name in kind_index(definitions).items()
    }
