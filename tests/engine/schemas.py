"""Small hand-built schemas for table tests of the typed primitives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_fieldown.schema.types import (
    DEDUCED,
    UNTYPED,
    GroupVersionKind,
    KindSchema,
    ListType,
    MapType,
    StructField,
    Type,
)

if TYPE_CHECKING:
    from kubectl_fieldown.fieldmanager import ResourceRules

STRING = Type(name="string", scalar="string", json_type="string")
NUMBER = Type(name="number", scalar="numeric", json_type="integer")


def struct(fields: dict[str, Type], atomic: bool = False, defaults: dict[str, object] | None = None) -> Type:
    d = defaults or {}
    return Type(
        map=MapType({k: StructField(t, d.get(k, StructField(t).default)) for k, t in fields.items()}, None, atomic),
        json_type="object",
    )


def string_map(atomic: bool = False) -> Type:
    return Type(map=MapType({}, STRING, atomic), json_type="object")


def list_map(item: Type, *keys: str) -> Type:
    return Type(list=ListType(item, "associative", tuple(keys)), json_type="array")


def set_of(item: Type) -> Type:
    return Type(list=ListType(item, "associative", ()), json_type="array")


def atomic_list(item: Type) -> Type:
    return Type(list=ListType(item, "atomic"), json_type="array")


PORT = struct({"containerPort": NUMBER, "protocol": STRING, "hostPort": NUMBER}, defaults={"protocol": "TCP"})
ENV = struct({"name": STRING, "value": STRING})
CONTAINER = struct(
    {
        "name": STRING,
        "image": STRING,
        "ports": list_map(PORT, "containerPort", "protocol"),
        "env": list_map(ENV, "name"),
    }
)
METADATA = struct(
    {
        "name": STRING,
        "namespace": STRING,
        "labels": string_map(),
        "annotations": string_map(),
        "finalizers": set_of(STRING),
        "managedFields": atomic_list(UNTYPED),
        "uid": STRING,
        "resourceVersion": STRING,
        "generation": NUMBER,
        "creationTimestamp": UNTYPED,
    }
)
SPEC = struct(
    {
        "replicas": NUMBER,
        "color": STRING,
        "selector": struct({"matchLabels": string_map()}, atomic=True),
        "labels": string_map(),
        "args": atomic_list(STRING),
        "finalizers": set_of(STRING),
        "containers": list_map(CONTAINER, "name"),
        "config": Type(map=MapType({}, DEDUCED, False), json_type="object"),
        "maxSurge": UNTYPED,
    }
)
WIDGET = struct(
    {
        "apiVersion": STRING,
        "kind": STRING,
        "metadata": METADATA,
        "spec": SPEC,
        "status": struct({"replicas": NUMBER, "phase": STRING}),
    }
)
WIDGET_KIND = KindSchema(GroupVersionKind("example.com", "v1", "Widget"), WIDGET, "test schema", True)


def widget(spec: dict[str, object] | None = None, **metadata: object) -> dict[str, object]:
    md: dict[str, object] = {"name": "w", "namespace": "ns"}
    md.update(metadata)
    obj: dict[str, object] = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md}
    if spec is not None:
        obj["spec"] = spec
    return obj


def defaulting_crd(group: str = "example.com") -> dict[str, object]:
    """A CRD of kind Thing whose ``spec.mode`` the schema defaults to "auto" (``spec.image`` has none):
    the shape of a field a manifest drops and the server sets again."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"things.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                             "type": "object", "properties": {
                                 "image": {"type": "string"},
                                 "mode": {"type": "string", "default": "auto"}}}}}}}]}}


def thing(**spec: object) -> dict[str, object]:
    """A manifest of :func:`defaulting_crd`'s Thing ``t`` in namespace ``ns`` (group example.com)."""
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "ns"},
            "spec": spec}


def defaulting_rules() -> ResourceRules:
    """The rules of :func:`defaulting_crd`'s Thing, read as the audit reads a CRD."""
    from kubectl_fieldown.kube.kindrules import KindRules
    from kubectl_fieldown.schema.registry import SchemaRegistry

    registry = SchemaRegistry()
    registry.add_crd(defaulting_crd(), "a test")
    return KindRules(registry).rules(GroupVersionKind("example.com", "v1", "Thing"), False)
