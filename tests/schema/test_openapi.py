"""OpenAPI → merge types: every rule of docs/ssa-semantics.md §5, as kube-openapi applies it."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.schema.openapi import (
    QUANTITY,
    RAW_EXTENSION,
    SchemaConverter,
    SchemaError,
    kinds_from_openapi_v3,
    list_relationship,
    ref_name,
    type_from_schema,
    types_from_openapi_v3,
    with_unknown_fields_deduced,
)
from kubectl_fieldown.schema.types import DEDUCED, NO_DEFAULT, UNTYPED, GroupVersionKind, merges_as_deduced

from .helpers import at, describe

STR = {"type": "string"}
ITEM = {"type": "object", "properties": {"name": STR, "port": {"type": "integer"}}}


def array(**ext: Any) -> dict[str, Any]:
    return {"type": "array", "items": ITEM, **{k.replace("_", "-"): v for k, v in ext.items()}}


# --- lists ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(array(), "list:atomic", id="no-extension"),
        pytest.param(array(x_kubernetes_list_type="atomic"), "list:atomic", id="list-type-atomic"),
        pytest.param({"type": "array", "items": STR, "x-kubernetes-list-type": "set"}, "list:set", id="set"),
        pytest.param(
            array(x_kubernetes_list_type="map", x_kubernetes_list_map_keys=["name"]), "list:map[name]", id="map-1-key"
        ),
        pytest.param(
            array(x_kubernetes_list_type="map", x_kubernetes_list_map_keys=["port", "name"]),
            "list:map[port,name]",
            id="map-keys-keep-order",
        ),
        pytest.param(
            array(x_kubernetes_patch_strategy="merge", x_kubernetes_patch_merge_key="name"),
            "list:map[name]",
            id="fallback-merge-key",
        ),
        pytest.param(
            array(x_kubernetes_patch_strategy="merge,retainKeys", x_kubernetes_patch_merge_key="name"),
            "list:map[name]",
            id="fallback-merge-retainKeys",
        ),
        pytest.param(
            {"type": "array", "items": STR, "x-kubernetes-patch-strategy": "merge"},
            "list:set",
            id="merge-no-key-is-set",
        ),
        pytest.param(array(x_kubernetes_patch_strategy="retainKeys"), "list:atomic", id="retainKeys-alone"),
        pytest.param(
            array(
                x_kubernetes_list_type="atomic",
                x_kubernetes_patch_strategy="merge",
                x_kubernetes_patch_merge_key="name",
            ),
            "list:atomic",
            id="list-type-wins-over-patch-strategy",
        ),
        pytest.param(
            array(
                x_kubernetes_list_type="map",
                x_kubernetes_list_map_keys=["port"],
                x_kubernetes_patch_strategy="merge",
                x_kubernetes_patch_merge_key="name",
            ),
            "list:map[port]",
            id="list-map-keys-win-over-merge-key",
        ),
        pytest.param(
            {**array(x_kubernetes_list_type="set"), "x-kubernetes-patch-strategy": "bogus"},
            "list:set",
            id="patch-strategy-ignored-under-list-type",
        ),
        pytest.param({"type": ["array", "null"], "items": STR}, "list:atomic", id="nullable-json-schema-array"),
    ],
)
def test_list_relationship(schema: dict[str, Any], expected: str) -> None:
    assert describe(type_from_schema(schema)) == expected


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        pytest.param(array(x_kubernetes_list_type="bag"), "unknown list type 'bag'", id="unknown-list-type"),
        pytest.param(array(x_kubernetes_patch_strategy="replace"), "unknown patch strategy 'replace'", id="replace"),
        pytest.param(array(x_kubernetes_list_type="map"), "missing map keys", id="list-map-without-keys"),
        pytest.param(
            array(x_kubernetes_list_type="map", x_kubernetes_list_map_keys="name"),
            "uninterpreted map keys",
            id="keys-str",
        ),
        pytest.param(
            array(x_kubernetes_patch_strategy="merge", x_kubernetes_patch_merge_key=["name"]),
            "uninterpreted merge key",
            id="merge-key-list",
        ),
        pytest.param({"type": "array"}, "`items` must be specified", id="array-without-items"),
        pytest.param({"type": "array", "items": [STR, STR]}, "exactly one member subtype", id="tuple-items"),
        pytest.param({"type": "object", "x-kubernetes-map-type": "sometimes"}, "unknown map type", id="map-type"),
        pytest.param({"type": "file"}, "unrecognized type: 'file'", id="unknown-type"),
    ],
)
def test_conversion_errors(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        type_from_schema({"type": "object", "properties": {"f": schema}})


def test_schema_error_names_where() -> None:
    with pytest.raises(SchemaError) as caught:
        SchemaConverter(
            {"io.Thing": {"type": "object", "properties": {"bad": array(x_kubernetes_list_type="x")}}}
        ).named("io.Thing")
    assert caught.value.where == "io.Thing.bad"


def test_failed_named_type_fails_again() -> None:
    converter = SchemaConverter({"io.Bad": {"type": "object", "properties": {"l": array(x_kubernetes_list_type="x")}}})
    for _ in range(2):
        with pytest.raises(SchemaError, match="unknown list type"):
            converter.named("io.Bad")


def test_list_item_type_is_converted() -> None:
    t = type_from_schema(array(x_kubernetes_list_type="map", x_kubernetes_list_map_keys=["name"]))
    assert describe(at(t, "[]")) == "map:granular"
    assert describe(at(t, "[].port")) == "scalar:numeric"
    assert list_relationship({}) == ("atomic", ())


# --- scalars --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer"}, "scalar:numeric"),
        ({"type": "integer", "format": "int64"}, "scalar:numeric"),
        ({"type": "number", "format": "double"}, "scalar:numeric"),
        ({"type": "boolean"}, "scalar:boolean"),
        ({"type": "string"}, "scalar:string"),
        ({"type": "string", "format": "byte"}, "scalar:string"),
        ({"type": "string", "format": "int-or-string"}, "scalar:untyped"),
        ({"type": "string", "format": "date-time"}, "scalar:untyped"),
        ({"type": "string", "format": "quantity"}, "scalar:untyped"),
        ({"type": ["string", "null"]}, "scalar:string"),
        ({"type": ["null", "integer"]}, "scalar:numeric"),
        ({"type": ["boolean", "null"]}, "scalar:boolean"),
        ({"type": ["string", "null"], "format": "date-time"}, "scalar:untyped"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else None,
)
def test_scalars(schema: dict[str, Any], expected: str) -> None:
    assert describe(type_from_schema(schema)) == expected


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"x-kubernetes-int-or-string": True}, id="int-or-string"),
        pytest.param({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, STR]}, id="unfolded"),
        pytest.param({}, id="empty"),
        pytest.param({"oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]}, id="oneOf-scalars"),
        pytest.param({"x-kubernetes-preserve-unknown-fields": True}, id="preserve-no-type"),
    ],
)
def test_no_type_is_untyped_scalar_list_and_map(schema: dict[str, Any]) -> None:
    # kube-openapi has no int-or-string special case: no type → untyped scalar, atomic list of
    # untyped, granular map of deduced — which is exactly the deduced type (an int-or-string node
    # merges as it, and carries the types the CRD validator checks)
    t = type_from_schema(schema)
    if schema.get("x-kubernetes-int-or-string"):
        assert merges_as_deduced(t) and t is not DEDUCED and t.json_type == "integer,string"
    else:
        assert t is DEDUCED


def test_no_type_with_properties_keeps_all_three_sides() -> None:
    t = type_from_schema({"properties": {"a": STR}, "x-kubernetes-list-type": "set"})
    assert describe(t) == "scalar:untyped+map:granular+list:set"
    assert t.list is not None and t.list.item is UNTYPED
    assert t.map is not None and t.map.element is None and describe(at(t, "a")) == "scalar:string"


# --- maps -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "element"),
    [
        pytest.param({"type": "object", "properties": {"a": STR}}, None, id="props-only-closed"),
        pytest.param({"type": "object"}, "DEDUCED", id="no-props-free-form"),
        pytest.param({"type": ["object", "null"]}, "DEDUCED", id="nullable-no-props"),
        pytest.param({"type": "object", "additionalProperties": STR}, "scalar:string", id="additional-schema"),
        pytest.param({"type": "object", "additionalProperties": True}, "DEDUCED", id="additional-true"),
        pytest.param({"type": "object", "additionalProperties": False}, None, id="additional-false"),
        pytest.param({"type": "object", "additionalProperties": {}}, "DEDUCED", id="additional-empty-schema"),
        pytest.param(
            {"type": "object", "properties": {"a": STR}, "x-kubernetes-preserve-unknown-fields": True},
            "DEDUCED",
            id="props-plus-preserve",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": STR, "x-kubernetes-preserve-unknown-fields": True},
            "scalar:string",
            id="additional-schema-beats-preserve",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": STR}, "x-kubernetes-preserve-unknown-fields": False},
            None,
            id="preserve-false",
        ),
    ],
)
def test_map_undeclared_keys(schema: dict[str, Any], element: str | None) -> None:
    t = type_from_schema(schema)
    assert t.map is not None and t.scalar is None and t.list is None
    assert (describe(t.map.element) if t.map.element is not None else None) == element


def test_preserve_unknown_fields_is_inherited_by_inline_descendants() -> None:
    t = type_from_schema(
        {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "nested": {"type": "object", "properties": {"deep": {"type": "object", "properties": {"x": STR}}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"y": STR}}},
                "values": {"type": "object", "additionalProperties": {"type": "object", "properties": {"z": STR}}},
            },
        }
    )
    for path in ("", "nested", "nested.deep", "list[]", "values.*"):
        m = at(t, path).map
        assert m is not None and m.element is DEDUCED, path
    # An unknown key below a preserved node is deduced, and so is everything under it.
    assert at(t, "nested.unknown") is DEDUCED


def test_preserve_unknown_fields_does_not_cross_a_ref() -> None:
    definitions = {
        "io.Inner": {"type": "object", "properties": {"x": STR}},
        "io.Outer": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"inner": {"$ref": "#/components/schemas/io.Inner"}},
        },
    }
    outer = SchemaConverter(definitions).named("io.Outer")
    assert outer.map is not None and outer.map.element is DEDUCED
    inner = at(outer, "inner").map
    assert inner is not None and inner.element is None


def test_converter_wide_preserve_flag_opens_named_types() -> None:
    definitions = {"io.Inner": {"type": "object", "properties": {"x": STR}}}
    inner = SchemaConverter(definitions, preserve_unknown_fields=True).named("io.Inner")
    assert inner.map is not None and inner.map.element is DEDUCED


@pytest.mark.parametrize(
    ("map_type", "atomic"),
    [(None, False), ("granular", False), ("atomic", True)],
)
def test_map_type(map_type: str | None, atomic: bool) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": STR}}
    if map_type:
        schema["x-kubernetes-map-type"] = map_type
    t = type_from_schema(schema)
    assert t.map is not None and t.map.atomic is atomic


def test_fields_keep_their_defaults() -> None:
    t = type_from_schema(
        {
            "type": "object",
            "properties": {
                "protocol": {"type": "string", "default": "TCP"},
                "port": {"type": "integer"},
                "nullDefault": {"type": "string", "default": None},
                "objectDefault": {"type": "object", "default": {}},
            },
        }
    )
    assert t.map is not None
    defaults = {name: f.default for name, f in t.map.fields.items()}
    assert defaults["protocol"] == "TCP"
    assert defaults["port"] is NO_DEFAULT
    assert defaults["nullDefault"] is None  # a default of JSON null is not "no default"
    assert defaults["objectDefault"] == {}


# --- $ref, allOf, overrides, recursion ---------------------------------------------------------

NAMED = {
    "io.Selector": {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"matchLabels": {"type": "object", "additionalProperties": STR}},
    },
    "io.Ref": {"type": "object", "properties": {"name": STR}},
}


@pytest.mark.parametrize(
    "ref",
    [
        "#/components/schemas/io.Ref",
        "#/$defs/io.Ref",
        "/api/_definitions.json#/$defs/io.Ref",
        "_definitions.json#/$defs/io.Ref",
        "#/definitions/io.Ref",
    ],
)
def test_ref_spellings(ref: str) -> None:
    converter = SchemaConverter(NAMED)
    assert ref_name(ref) == "io.Ref"
    assert converter.convert({"$ref": ref}) is converter.named("io.Ref")
    assert converter.convert({"allOf": [{"$ref": ref}], "description": "wrapped"}) is converter.named("io.Ref")


def test_field_default_next_to_single_ref_allof() -> None:
    t = type_from_schema(
        {"type": "object", "properties": {"r": {"allOf": [{"$ref": "#/components/schemas/io.Ref"}], "default": {}}}},
        NAMED,
    )
    assert t.map is not None and t.map.fields["r"].default == {}


def test_allof_with_several_entries_is_not_a_ref() -> None:
    t = type_from_schema({"allOf": [{"$ref": "#/$defs/io.Ref"}, {"$ref": "#/$defs/io.Selector"}]}, NAMED)
    assert t is DEDUCED


@pytest.mark.parametrize(
    ("prop", "expected_atomic"),
    [
        pytest.param({"$ref": "#/$defs/io.Selector"}, True, id="plain-ref-keeps-atomic"),
        pytest.param({"$ref": "#/$defs/io.Selector", "x-kubernetes-map-type": "granular"}, False, id="ref-granular"),
        pytest.param(
            {"allOf": [{"$ref": "#/$defs/io.Selector"}], "x-kubernetes-map-type": "granular"},
            False,
            id="allOf-granular",
        ),
        pytest.param({"$ref": "#/$defs/io.Ref", "x-kubernetes-map-type": "atomic"}, True, id="ref-atomic"),
        pytest.param(
            {"allOf": [{"$ref": "#/$defs/io.Ref"}], "x-kubernetes-map-type": "atomic"}, True, id="allOf-atomic"
        ),
        pytest.param({"$ref": "#/$defs/io.Ref"}, False, id="plain-ref-granular"),
    ],
)
def test_map_type_override_on_ref_changes_that_field_only(prop: dict[str, Any], expected_atomic: bool) -> None:
    converter = SchemaConverter(NAMED)
    t = converter.convert({"type": "object", "properties": {"f": prop, "plain": {"$ref": "#/$defs/io.Ref"}}})
    f = at(t, "f")
    assert f.map is not None and f.map.atomic is expected_atomic
    named = converter.named(ref_name(prop.get("$ref") or prop["allOf"][0]["$ref"]))
    if f is not named:
        # A shallow variant: same fields, same name; the shared definition is untouched.
        assert named.map is not None and named.map.atomic is not expected_atomic
        assert f.map.fields is named.map.fields and f.name == named.name
    assert at(t, "plain").map.atomic is False  # type: ignore[union-attr]
    # Two uses with the same override share one variant.
    assert at(converter.convert({"type": "object", "properties": {"g": prop}}), "g") is f


def test_override_on_a_list_named_type_sets_list_relationship() -> None:
    definitions = {"io.Names": {"type": "array", "items": STR, "x-kubernetes-list-type": "set"}}
    t = type_from_schema(
        {"type": "object", "properties": {"n": {"$ref": "#/$defs/io.Names", "x-kubernetes-map-type": "atomic"}}},
        definitions,
    )
    assert describe(at(t, "n")) == "list:atomic"


def test_recursive_definitions_terminate_and_share_types() -> None:
    definitions = {
        "io.Props": {
            "type": "object",
            "properties": {
                "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/io.Props"}},
                "items": {"$ref": "#/$defs/io.Props"},
                "allOf": {"type": "array", "items": {"$ref": "#/$defs/io.Props"}},
                "not": {"$ref": "#/$defs/io.Props", "x-kubernetes-map-type": "atomic"},
            },
        }
    }
    converter = SchemaConverter(definitions)
    props = converter.named("io.Props")
    assert at(props, "items") is props
    assert at(props, "properties.*") is props
    assert at(props, "allOf[]") is props
    assert at(props, "items.items.properties.x.allOf[]") is props
    # An override met while the target was still being built is completed afterwards.
    not_ = at(props, "not")
    assert not_ is not props and not_.map is not None and not_.map.atomic
    assert not_.map.fields is props.map.fields  # type: ignore[union-attr]


def test_unknown_ref_is_an_error() -> None:
    with pytest.raises(SchemaError, match="no such definition"):
        type_from_schema({"$ref": "#/$defs/io.Missing"})


def test_hardwired_quantity_and_raw_extension() -> None:
    definitions = {
        QUANTITY: {"oneOf": [{"type": "string"}, {"type": "number"}]},
        RAW_EXTENSION: {"type": ["object", "null"]},
    }
    converter = SchemaConverter(definitions)
    assert describe(converter.named(QUANTITY)) == "scalar:untyped"
    assert converter.named(RAW_EXTENSION) is UNTYPED


def test_json_type_and_nullable_are_recorded() -> None:
    t = type_from_schema(
        {
            "type": "object",
            "properties": {"s": {"type": "string", "nullable": True}, "n": {"type": ["integer", "null"]}},
        }
    )
    assert (t.json_type, at(t, "s").json_type, at(t, "s").nullable) == ("object", "string", True)
    assert (at(t, "n").json_type, at(t, "n").nullable, t.nullable) == ("integer", True, False)


def test_with_unknown_fields_deduced_copies() -> None:
    converter = SchemaConverter(NAMED)
    ref = converter.named("io.Ref")
    opened = with_unknown_fields_deduced(ref)
    assert opened is not ref and opened.map is not None and opened.map.element is DEDUCED
    assert ref.map is not None and ref.map.element is None
    selector = with_unknown_fields_deduced(converter.named("io.Selector"))
    assert describe(at(selector, "matchLabels.*")) == "scalar:string"  # additionalProperties kept


# --- documents --------------------------------------------------------------------------------

V3_DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.0",
    "paths": {
        "/apis/example.com/v1/namespaces/{namespace}/things/{name}": {
            "get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Thing"}},
        },
        "/apis/example.com/v1/namespaces/{namespace}/things/{name}/status": {
            "get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Thing"}},
        },
        "/apis/example.com/v1/clusterthings/{name}": {
            "put": {
                "x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "ClusterThing"}
            },
        },
    },
    "components": {
        "schemas": {
            "com.example.v1.Thing": {
                "type": "object",
                "properties": {
                    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.Meta"}], "default": {}},
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                },
                "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Thing", "version": "v1"}],
            },
            "com.example.v1.ClusterThing": {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "ClusterThing", "version": "v1"}],
            },
            "io.Meta": {
                "type": "object",
                "properties": {"finalizers": {"type": "array", "items": STR, "x-kubernetes-list-type": "set"}},
            },
        }
    },
}


def test_kinds_from_openapi_v3() -> None:
    kinds = kinds_from_openapi_v3(V3_DOCUMENT, "cluster OpenAPI v3")
    thing = kinds[GroupVersionKind("example.com", "v1", "Thing")]
    assert thing.source == "cluster OpenAPI v3" and thing.namespaced is True and thing.zero is None
    assert describe(at(thing.root, "metadata.finalizers")) == "list:set"
    assert thing.root.map is not None and thing.root.map.fields["metadata"].default == {}
    cluster = kinds[GroupVersionKind("example.com", "v1", "ClusterThing")]
    assert cluster.namespaced is False
    assert cluster.root.map is not None and cluster.root.map.element is DEDUCED
    assert set(kinds) == {
        GroupVersionKind("example.com", "v1", "Thing"),
        GroupVersionKind("example.com", "v1", "ClusterThing"),
    }


def test_types_from_openapi_v3_share_named_types() -> None:
    types = types_from_openapi_v3(V3_DOCUMENT)
    assert set(types) == set(V3_DOCUMENT["components"]["schemas"])
    assert at(types["com.example.v1.Thing"], "metadata") is types["io.Meta"]


def test_json_schema_defs_document() -> None:
    document = {
        "$defs": {
            "io.K": {
                "type": ["object", "null"],
                "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "K"}],
            }
        }
    }
    kinds = kinds_from_openapi_v3(document, "file")
    assert GroupVersionKind("", "v1", "K") in kinds
