"""Offline schemas of the built-in Kubernetes kinds: an extract of ``kubernetes-validate``'s, shipped as package data.

kubernetes-validate ships, per minor version, ``kubernetes-json-schema/v1.XX.0-local/_definitions.json``:
the cluster OpenAPI as JSON schema (``$defs``), with the ``x-kubernetes-*`` extensions and
``x-kubernetes-group-version-kind`` kept. ``kubectl_fieldown/data/builtin-schemas.json`` holds what
the conversion reads of those documents (``hack/gen-builtin-schemas.py``: no descriptions or
enums; each definition once for the versions where it is the same), from the release named in
its ``source``; the tests prove the extract converts to the same merge types as the full
documents, for every definition and version. It is read once per process, on first use (never by
``show``), and converted to merge types lazily, one named type at a time.

Known limitations, compared with the ``/openapi/v3`` documents of a real API server:

* **No schema defaults.** kubernetes-validate drops every OpenAPI ``default`` (its 1.25–1.37
  ``_definitions.json`` contain none: the only ``"default"`` keys are properties so named), so the
  default of a list-map key field — ``protocol: TCP`` of ``ContainerPort`` and ``ServicePort`` —
  is unknown to the data. We put back the key-field defaults the server has (:data:`KEY_DEFAULTS`,
  from the upstream types' ``+default`` markers) and the zero default that openapi-gen enforces
  on required non-pointer key fields (``""``, ``0``); no other field gets a default. Only key
  fields matter for ownership: a missing key field takes its default in the item's key.
* **No zero objects.** The ``default: {}`` markers of non-pointer struct fields are dropped too,
  and no OpenAPI says which fields are Go pointers, so ``KindSchema.zero`` (the JSON of the empty
  Go struct) comes from the Go types themselves: :mod:`.gotypes`, a reflection dump of the
  k8s 1.36 types (``hack/gen-builtin-types.sh``), used for every kube version.
  ``namespaced`` is ``None`` (unknown).
* ``IntOrString`` and ``Quantity`` are ``oneOf`` of two scalar types, as in a real OpenAPI v3
  document; the conversion treats them as kube-openapi does (see :mod:`.openapi`): a node without
  ``type`` is untyped, so the extract leaves ``oneOf`` out.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .openapi import OBJECT_META, SchemaConverter, kind_index, ref_name, schema_type
from .types import DEDUCED, NO_DEFAULT, UNTYPED, GroupVersionKind, KindSchema, Type

DATA_FILE = "builtin-schemas.json"
"""The generated extract in ``kubectl_fieldown/data`` (``hack/gen-builtin-schemas.py``)."""
OBJECT_META_FILE = "builtin-object-meta.json"
"""ObjectMeta's part of :data:`DATA_FILE` (:func:`object_meta_extract`): what a custom resource's
schema needs of the built-in ones, a few KB where the whole extract takes some 20 ms to read."""
SOURCE_NAME = "kubernetes-validate"
"""Where the schemas come from, as shown in ``KindSchema.source`` (``kubernetes-validate 1.36``)."""
_VERSION_ARG = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")

KEY_DEFAULTS: Mapping[tuple[str, str], Any] = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
    # Optional but non-pointer, with +default="" upstream: imagePullSecrets may hold `{}`.
    ("io.k8s.api.core.v1.LocalObjectReference", "name"): "",
}
"""List-map key fields whose server-side OpenAPI default kubernetes-validate drops."""

_ZERO = {"string": "", "integer": 0, "number": 0, "boolean": False}


class BuiltinSchemaError(LookupError):
    """Offline schemas are not available for what was asked."""


class UnknownKubeVersionError(BuiltinSchemaError, ValueError):
    def __init__(self, requested: str, available: list[str]) -> None:
        self.requested = requested
        self.available = available
        super().__init__(
            f"no offline schemas for Kubernetes {requested!r}; available versions: "
            f"{', '.join(available) or 'none'}"
        )


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    return _read_extract(DATA_FILE)


@functools.lru_cache(maxsize=1)
def _object_meta_data() -> Mapping[str, Any]:
    return _read_extract(OBJECT_META_FILE)


def _read_extract(name: str) -> Mapping[str, Any]:
    import importlib.resources  # (here: importing it costs every command's start-up a few ms)

    resource = importlib.resources.files("kubectl_fieldown").joinpath("data").joinpath(name)
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise BuiltinSchemaError(f"the offline built-in schemas ({name}) are not installed") from e
    data = json.loads(text)
    if (
        not isinstance(data, dict)
        or data.get("format") != 1
        or not isinstance(data.get("versions"), list)
        or not isinstance(data.get("definitions"), dict)
    ):
        raise BuiltinSchemaError(f"{name}: not a built-in schemas extract (format 1)")
    return data


def object_meta_extract(extract: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an extract that ObjectMeta's merge type is converted from: the definitions it
    refers to, transitively, in every variant (``hack/gen-builtin-schemas.py`` writes it as
    :data:`OBJECT_META_FILE`; a test checks that each version converts to the same type)."""
    definitions = extract["definitions"]
    kept: set[str] = set()
    todo = [OBJECT_META]
    while todo:
        name = todo.pop()
        if name in kept or name not in definitions:
            continue
        kept.add(name)
        todo.extend(_refs(definitions[name]))
    return {"format": 1, "versions": list(extract["versions"]),
            "definitions": {name: definitions[name] for name in sorted(kept)}}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield ref_name(v)
            else:
                yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def source_info() -> Mapping[str, Any]:
    """Where the extract comes from: package, version, wheel and its SHA-256."""
    info = _data().get("source")
    return info if isinstance(info, dict) else {}


def available_versions() -> list[str]:
    """The Kubernetes minor versions with offline schemas, oldest first (``["1.25", …]``)."""
    # (the small file lists the same versions: asking which there are does not read the large one)
    versions = [str(v) for v in _object_meta_data()["versions"]]
    return sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")))


def newest_version() -> str:
    versions = available_versions()
    if not versions:
        raise BuiltinSchemaError(f"{DATA_FILE} has no schemas")
    return versions[-1]


def normalize_version(kube_version: str) -> str:
    """``"v1.36.4"``, ``"1.36"`` … → ``"1.36"``; an unknown or malformed one raises."""
    match = _VERSION_ARG.match(kube_version.strip())
    available = available_versions()
    wanted = f"{int(match[1])}.{int(match[2])}" if match else kube_version
    if wanted not in available:
        raise UnknownKubeVersionError(kube_version, available)
    return wanted


def definitions_for(extract: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The ``$defs`` of one version from an extract document: each definition is stored once,
    as ``[[versions…], schema]`` variants."""
    found: dict[str, Any] = {}
    for name, variants in extract["definitions"].items():
        for versions, node in variants:
            if version in versions:
                found[name] = node
                break
    return found


@functools.cache
def _definitions(version: str) -> Mapping[str, Any]:
    return definitions_for(_data(), version)


def _schema_nodes(definitions: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every schema node, reached the way the converter reaches them (not descriptions, enums…)."""
    stack = [node for node in definitions.values() if isinstance(node, dict)]
    while stack:
        node = stack.pop()
        yield node
        properties = node.get("properties")
        if type(properties) is dict:
            stack.extend(v for v in properties.values() if type(v) is dict)
        for key in ("items", "additionalProperties"):
            child = node.get(key)
            if type(child) is dict:
                stack.append(child)


def _key_fields(definitions: Mapping[str, Any]) -> set[tuple[str, str]]:
    """``(item definition, key field)`` of every keyed list whose items are a named type."""
    found: set[tuple[str, str]] = set()
    for node in _schema_nodes(definitions):
        items = node.get("items")
        if type(items) is not dict or not isinstance(items.get("$ref"), str):
            continue
        if node.get("x-kubernetes-list-type") == "map":
            keys = node.get("x-kubernetes-list-map-keys")
        elif "x-kubernetes-list-type" not in node and node.get("x-kubernetes-patch-strategy") in (
            "merge",
            "merge,retainKeys",
        ):
            keys = [node.get("x-kubernetes-patch-merge-key")]
        else:
            continue
        item = ref_name(items["$ref"])
        found.update((item, k) for k in keys or () if isinstance(k, str))
    return found


class BuiltinSchemas:
    """The built-in kinds of one Kubernetes minor version; types are converted on first use."""

    def __init__(self, version: str, definitions: Mapping[str, Any]) -> None:
        self.version = version
        self.source = f"{SOURCE_NAME} {version}"
        self._definitions = definitions
        self._index = kind_index(definitions)
        self._converter: SchemaConverter | None = None
        self._kinds: dict[GroupVersionKind, KindSchema] = {}

    def _conv(self) -> SchemaConverter:
        if self._converter is None:
            key_fields = _key_fields(self._definitions)
            definitions = self._definitions

            def field_default(definition: str, field: str, prop: Mapping[str, Any]) -> Any:
                if "default" in prop:
                    return prop["default"]
                if (definition, field) not in key_fields:
                    return NO_DEFAULT
                if (definition, field) in KEY_DEFAULTS:
                    return KEY_DEFAULTS[(definition, field)]
                owner = definitions.get(definition)
                required = owner.get("required", ()) if isinstance(owner, Mapping) else ()
                if field in required and "$ref" not in prop:
                    return _ZERO.get(schema_type(prop), NO_DEFAULT)
                return NO_DEFAULT

            self._converter = SchemaConverter(definitions, field_default=field_default)
        return self._converter

    def kinds(self) -> list[GroupVersionKind]:
        return sorted(self._index, key=lambda g: (g.group, g.version, g.kind))

    def definition_name(self, gvk: GroupVersionKind) -> str | None:
        return self._index.get(gvk)

    def lookup(self, gvk: GroupVersionKind) -> KindSchema | None:
        found = self._kinds.get(gvk)
        if found is None:
            name = self._index.get(gvk)
            if name is None:
                return None
            from .gotypes import builtin_zero

            # the empty Go struct: what a create and before-first-apply are compared against
            zero = builtin_zero(gvk.api_version, gvk.kind)
            found = KindSchema(gvk=gvk, root=self._conv().named(name), source=self.source, zero=zero)
            self._kinds[gvk] = found
        return found

    def type(self, name: str) -> Type:
        """A named definition's type, e.g. ``io.k8s.api.core.v1.PodSpec``."""
        return self._conv().named(name)

    def object_meta(self) -> Type:
        return self._conv().named(OBJECT_META)

    def fingerprint(self) -> str:
        """SHA-256 of everything the schemas decide: the merge types of every definition (sides,
        relationships, keys, field order and defaults, which types are shared) and the kind index.

        Two sources with the same fingerprint give the same answers; the tests compare the shipped
        extract with the full kubernetes-validate documents this way.
        """
        roots, table = _type_table((name, self.type(name)) for name in self._definitions)
        kinds = [[g.group, g.version, g.kind, self._index[g]] for g in self.kinds()]
        canonical = json.dumps({"roots": roots, "kinds": kinds, "types": table}, sort_keys=True, separators=(",", ":"))
        import hashlib

        return hashlib.sha256(canonical.encode()).hexdigest()


def type_fingerprint(t: Type) -> str:
    """SHA-256 of everything one merge type decides (as :meth:`BuiltinSchemas.fingerprint` does for
    all of an extract's): equal for two types that give the same answers."""
    import hashlib

    roots, table = _type_table([("", t)])
    canonical = json.dumps({"roots": roots, "types": table}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _type_table(named: Iterable[tuple[str, Type]]) -> tuple[list[Any], list[Any]]:
    """Named types as a table of their nodes, each once (a shared type is one slot)."""
    slots: dict[int, int] = {}
    table: list[Any] = []

    def slot(t: Type) -> Any:
        if t is DEDUCED or t is UNTYPED:
            return t.name
        found = slots.get(id(t))
        if found is not None:
            return found
        index = slots[id(t)] = len(table)
        table.append(None)
        entry: dict[str, Any] = {"name": t.name, "scalar": t.scalar, "json": t.json_type, "null": t.nullable}
        if t.map is not None:
            entry["map"] = {
                "atomic": t.map.atomic,
                "element": None if t.map.element is None else slot(t.map.element),
                "fields": [
                    [name, slot(f.type), None if f.default is NO_DEFAULT else {"default": f.default}]
                    for name, f in t.map.fields.items()
                ],
            }
        if t.list is not None:
            entry["list"] = [t.list.relationship, list(t.list.keys), slot(t.list.item)]
        table[index] = entry
        return index

    roots = [[name, slot(t)] for name, t in named]
    return roots, table


@functools.cache
def _builtin(version: str) -> BuiltinSchemas:
    return BuiltinSchemas(version, _definitions(version))


def builtin_kinds(kube_version: str | None = None) -> BuiltinSchemas:
    """The offline schemas for ``kube_version`` (``"1.36"``, ``"v1.36.4"``; default: the newest)."""
    return _builtin(_chosen(kube_version))


def builtin_object_meta(kube_version: str | None = None) -> Type:
    """ObjectMeta's merge type for ``kube_version`` (default: the newest), read from
    :data:`OBJECT_META_FILE` alone: the ``metadata`` of a custom resource's schema."""
    return _object_meta_schemas(_chosen(kube_version)).object_meta()


def _chosen(kube_version: str | None) -> str:
    """The minor version ``kube_version`` names, or the newest when none is given."""
    return normalize_version(kube_version) if kube_version else newest_version()


@functools.cache
def _object_meta_schemas(version: str) -> BuiltinSchemas:
    return BuiltinSchemas(version, definitions_for(_object_meta_data(), version))
