"""CustomResourceDefinition → merge types, as the apiextensions-apiserver builds them.

For each served version the server publishes an OpenAPI schema (``controller/openapi/builder``
``buildKubeNative``) and converts it with kube-openapi together with the built-in definitions
(``buildOpenAPIModelsForApply``, ``NewTypeConverter(models, spec.preserveUnknownFields)``):

* the version's structural schema, with ``apiVersion`` and ``kind`` (strings) and ``metadata``
  (a ``$ref`` to the full ObjectMeta) set on the root — replacing whatever the CRD declares there;
* the same three properties added to every ``x-kubernetes-embedded-resource`` node;
* with ``spec.preserveUnknownFields: true`` (v1beta1; its default there), every map that declares
  no ``additionalProperties`` — ObjectMeta's included — also accepts undeclared keys as deduced;
* a version without a schema is published as a bare ``{type: object}``: every field deduced, and
  ``metadata`` too (so ``metadata.finalizers`` is then an atomic list, not a set).

v1 and v1beta1 manifests are accepted (v1beta1's ``spec.version``, ``spec.validation`` and
``spec.subresources`` apply to every version that does not set its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base.record import Record
from .openapi import OBJECT_META, SchemaConverter, with_unknown_fields_deduced
from .types import DEDUCED, GroupVersionKind, KindSchema, Type

CRD_KIND = "CustomResourceDefinition"
CRD_GROUP = "apiextensions.k8s.io"

_OBJECT_META_REF = f"#/components/schemas/{OBJECT_META}"
_TYPE_META = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}}


class CRDError(ValueError):
    """Not a CustomResourceDefinition we can read; says why."""


class CRDScale(Record):
    __slots__ = ("label_selector_path", "spec_replicas_path", "status_replicas_path")
    spec_replicas_path: Final[str]
    status_replicas_path: Final[str]
    label_selector_path: Final[str | None]

    def __init__(
        self,
        spec_replicas_path: str,
        status_replicas_path: str,
        label_selector_path: str | None = None,
    ) -> None:
        self.spec_replicas_path = spec_replicas_path
        self.status_replicas_path = status_replicas_path
        self.label_selector_path = label_selector_path


class CRDSubresources(Record):
    """The subresources of one CRD version: with ``status``, the main resource ignores ``status``."""

    __slots__ = ("scale", "status")
    status: Final[bool]
    scale: Final[CRDScale | None]

    def __init__(self, status: bool = False, scale: CRDScale | None = None) -> None:
        self.status = status
        self.scale = scale


class _Version(Record):
    __slots__ = ("name", "schema", "served", "subresources")
    name: Final[str]
    served: Final[bool]
    schema: Final[Mapping[str, Any] | None]
    subresources: Final[Mapping[str, Any] | None]

    def __init__(
        self,
        name: str,
        served: bool,
        schema: Mapping[str, Any] | None,
        subresources: Mapping[str, Any] | None,
    ) -> None:
        self.name = name
        self.served = served
        self.schema = schema
        self.subresources = subresources


def is_crd(document: Mapping[str, Any]) -> bool:
    api_version = str(document.get("apiVersion", ""))
    return document.get("kind") == CRD_KIND and api_version.startswith(f"{CRD_GROUP}/")


def crd_name(crd: Mapping[str, Any]) -> str:
    metadata = crd.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if isinstance(name, str) and name:
        return name
    spec = _spec(crd)
    names = _mapping(spec.get("names")) or {}
    return f"{names.get('plural', '?')}.{spec.get('group', '?')}"


def _spec(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = crd.get("spec")
    if not is_crd(crd) or not isinstance(spec, Mapping):
        raise CRDError(f"not a {CRD_GROUP} {CRD_KIND} with a spec")
    return spec


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _versions(crd: Mapping[str, Any]) -> list[_Version]:
    spec = _spec(crd)
    # v1beta1: top-level validation/subresources are shared by versions that set none themselves.
    shared_validation = _mapping(spec.get("validation"))
    shared_subresources = _mapping(spec.get("subresources"))
    raw = spec.get("versions")
    if not isinstance(raw, list) or not raw:
        single = spec.get("version")
        if not isinstance(single, str) or not single:
            raise CRDError(f"{crd_name(crd)}: no versions")
        raw = [{"name": single, "served": True, "storage": True}]
    versions = []
    for entry in raw:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise CRDError(f"{crd_name(crd)}: a version without a name")
        validation = _mapping(entry.get("schema")) or shared_validation
        schema = _mapping(validation.get("openAPIV3Schema")) if validation else None
        subresources = _mapping(entry.get("subresources"))
        versions.append(
            _Version(
                name=entry["name"],
                served=entry.get("served", True) is not False,
                schema=schema,
                subresources=subresources if subresources is not None else shared_subresources,
            )
        )
    return versions


def crd_storage_version(crd: Mapping[str, Any]) -> str:
    """The apiVersion (``group/version``) a CRD stores its objects at; "" when none is marked."""
    spec = _spec(crd)
    raw = spec.get("versions")
    if isinstance(raw, list):
        for entry in raw:
            if isinstance(entry, Mapping) and entry.get("storage") is True and isinstance(entry.get("name"), str):
                return f"{spec.get('group')}/{entry['name']}"
        return ""
    single = spec.get("version")
    return f"{spec.get('group')}/{single}" if isinstance(single, str) and single else ""


def _preserve_unknown_fields(crd: Mapping[str, Any]) -> bool:
    spec = _spec(crd)
    value = spec.get("preserveUnknownFields")
    if value is None:
        # v1beta1 defaults it to true; v1 to false.
        return str(crd.get("apiVersion", "")).endswith("/v1beta1")
    return value is True


def crd_subresources(crd: Mapping[str, Any], version: str) -> CRDSubresources:
    """The subresources a CRD serves for ``version`` (nothing for an unknown version)."""
    for v in _versions(crd):
        if v.name != version:
            continue
        sub = v.subresources or {}
        scale = _mapping(sub.get("scale"))
        return CRDSubresources(
            status=_mapping(sub.get("status")) is not None,
            scale=CRDScale(
                spec_replicas_path=str(scale.get("specReplicasPath", "")),
                status_replicas_path=str(scale.get("statusReplicasPath", "")),
                label_selector_path=str(scale["labelSelectorPath"]) if scale.get("labelSelectorPath") else None,
            )
            if scale is not None
            else None,
        )
    return CRDSubresources()


def _with_kube_native(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The version's schema as published: TypeMeta and ObjectMeta on the root and embedded nodes."""
    root = _embed(schema)
    properties = dict(root.get("properties") or {})
    properties["metadata"] = {"$ref": _OBJECT_META_REF}
    properties.update(_TYPE_META)
    root["properties"] = properties
    return root


def _embed(node: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``node`` with ``x-kubernetes-embedded-resource`` nodes given TypeMeta and ObjectMeta.

    Descends where the server does: properties, items and additionalProperties.
    """
    out = dict(node)
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {k: _embed(v) if isinstance(v, Mapping) else v for k, v in properties.items()}
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, Mapping):
            out[key] = _embed(child)
    if node.get("x-kubernetes-embedded-resource") is True:
        embedded = dict(out.get("properties") or {})
        embedded.update(_TYPE_META)
        embedded["metadata"] = {"$ref": _OBJECT_META_REF}
        out["properties"] = embedded
    return out


def _default_object_meta() -> Type:
    from .builtin import builtin_object_meta

    return builtin_object_meta()


def kinds_from_crd(crd: Mapping[str, Any], object_meta: Type | None = None,
                   *, include_unserved: bool = False) -> dict[GroupVersionKind, KindSchema]:
    """One :class:`KindSchema` per served version of a CRD (with ``include_unserved``, per listed
    version: the field manager reads managedFields entries of any of them).

    ``object_meta`` is the ObjectMeta type to reference (default: the newest offline built-in one).
    """
    spec = _spec(crd)
    group = spec.get("group")
    names = _mapping(spec.get("names")) or {}
    kind = names.get("kind")
    if not isinstance(group, str) or not group or not isinstance(kind, str) or not kind:
        raise CRDError(f"{crd_name(crd)}: spec.group and spec.names.kind are required")
    scope = spec.get("scope")
    namespaced = True if scope == "Namespaced" else False if scope == "Cluster" else None
    preserve = _preserve_unknown_fields(crd)
    source = f"CRD {crd_name(crd)}"
    plural_name = names.get("plural")
    plural = plural_name if isinstance(plural_name, str) else ""

    meta: Type | None = None
    result: dict[GroupVersionKind, KindSchema] = {}
    for version in _versions(crd):
        if not version.served and not include_unserved:
            continue
        gvk = GroupVersionKind(group, version.name, kind)
        zero = {"apiVersion": gvk.api_version, "kind": kind}
        scale = crd_subresources(crd, version.name).scale
        scale_paths = (scale.spec_replicas_path, scale.status_replicas_path, scale.label_selector_path or "") \
            if scale is not None else None
        if version.schema is None:
            result[gvk] = KindSchema(
                gvk=gvk, root=DEDUCED, source=f"{source} (no schema: deduced)", namespaced=namespaced, zero=zero,
                resource=plural, scale_paths=scale_paths,
            )
            continue
        if meta is None:
            meta = object_meta if object_meta is not None else _default_object_meta()
            if preserve:
                meta = with_unknown_fields_deduced(meta)
        converter = SchemaConverter({}, preserve_unknown_fields=preserve, prebuilt={OBJECT_META: meta})
        root = converter.convert(_with_kube_native(version.schema), where=f"{kind}.{version.name}")
        result[gvk] = KindSchema(gvk=gvk, root=root, source=source, namespaced=namespaced, zero=zero,
                                 validation=version.schema, resource=plural, scale_paths=scale_paths)
    return result
