"""CRD → merge types: the recorded CRDs (Widget, Gadget, Gizmo) and the apiextensions rules."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.schema.builtin import builtin_object_meta
from kubectl_fieldown.schema.crd import (
    CRDError,
    CRDScale,
    CRDSubresources,
    crd_subresources,
    kinds_from_crd,
)
from kubectl_fieldown.schema.openapi import SchemaError
from kubectl_fieldown.schema.types import (
    DEDUCED,
    NO_DEFAULT,
    UNTYPED,
    GroupVersionKind,
    KindSchema,
    Type,
    merges_as_deduced,
)

from .helpers import at, describe

CONFORMANCE = Path(__file__).resolve().parent.parent / "conformance"


def _crd_of(kind: str) -> dict[str, Any]:
    for path in sorted(CONFORMANCE.glob("*.json")):
        case = json.loads(path.read_text())
        if case.get("kind") == kind and case.get("schema"):
            crd: dict[str, Any] = case["schema"]
            return crd
    raise AssertionError(f"no conformance case of kind {kind}")


@pytest.fixture(scope="module")
def recorded() -> dict[str, dict[str, Any]]:
    return {kind: _crd_of(kind) for kind in ("Widget", "Gadget", "Gizmo")}


def _kind(crd: dict[str, Any], version: str = "v1") -> KindSchema:
    kinds = kinds_from_crd(crd)
    spec = crd["spec"]
    return kinds[GroupVersionKind(spec["group"], version, spec["names"]["kind"])]


META_RULES = [
    ("apiVersion", "scalar:string"),
    ("kind", "scalar:string"),
    ("metadata", "map:granular"),
    ("metadata.finalizers", "list:set"),
    ("metadata.ownerReferences", "list:map[uid]"),
    ("metadata.labels", "map:granular"),
    ("metadata.labels.*", "scalar:string"),
    ("metadata.annotations.*", "scalar:string"),
    ("metadata.managedFields", "list:atomic"),
    ("metadata.creationTimestamp", "scalar:untyped"),
]

WIDGET_RULES = [
    ("spec", "map:granular"),
    ("spec.replicas", "scalar:numeric"),
    ("spec.color", "scalar:string"),
    ("spec.selector", "map:atomic"),
    ("spec.selector.matchLabels", "map:granular"),
    ("spec.selector.matchLabels.*", "scalar:string"),
    ("spec.labels", "map:granular"),
    ("spec.labels.*", "scalar:string"),
    ("spec.args", "list:atomic"),
    ("spec.finalizers", "list:set"),
    ("spec.finalizers[]", "scalar:string"),
    ("spec.containers", "list:map[name]"),
    ("spec.containers[].image", "scalar:string"),
    ("spec.containers[].env", "list:map[name]"),
    ("spec.containers[].ports", "list:map[containerPort,protocol]"),
    ("spec.containers[].ports[].containerPort", "scalar:numeric"),
    ("spec.strategy.rollingUpdate", "map:granular"),
    # int-or-string merges as the deduced type (its own object: it carries the validator's types)
    ("spec.strategy.rollingUpdate.maxSurge", "scalar:untyped+map:granular+list:atomic"),
    ("spec.strategy.rollingUpdate.maxUnavailable", "scalar:untyped+map:granular+list:atomic"),
    ("spec.config", "map:granular"),
    ("spec.config.anything", "DEDUCED"),
    ("spec.config.anything.deeper", "DEDUCED"),
    ("status.replicas", "scalar:numeric"),
    ("status.phase", "scalar:string"),
    *META_RULES,
]

GADGET_RULES = [
    ("spec.tags", "list:atomic"),
    ("spec.items", "list:atomic"),
    ("spec.items[]", "map:granular"),
    ("spec.items[].sub", "map:granular"),
    ("spec.meta.nested", "map:granular"),
    ("spec.meta.nested.y", "scalar:numeric"),
    ("spec.params", "map:granular"),
    ("spec.params.*", "map:granular"),
    ("spec.params.*.w", "scalar:numeric"),
    ("spec.matrix", "list:atomic"),
    ("spec.matrix[]", "list:atomic"),
    ("spec.matrix[][]", "scalar:numeric"),
    ("status.note", "scalar:string"),
    *META_RULES,
]

GIZMO_RULES = [
    ("spec.rules", "list:map[id]"),
    ("spec.rules[].id", "scalar:numeric"),
    ("spec.tags", "list:set"),
    ("spec.tags[]", "scalar:numeric"),
    ("spec.data", "map:granular"),
    ("spec.data.*", "scalar:numeric"),
    ("spec.level", "scalar:numeric"),
    *META_RULES,
]


@pytest.mark.parametrize(
    ("kind", "path", "expected"),
    [("Widget", p, e) for p, e in WIDGET_RULES]
    + [("Gadget", p, e) for p, e in GADGET_RULES]
    + [("Gizmo", p, e) for p, e in GIZMO_RULES],
)
def test_recorded_crds(recorded: dict[str, dict[str, Any]], kind: str, path: str, expected: str) -> None:
    assert describe(at(_kind(recorded[kind]).root, path)) == expected


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Widget", ""),
        ("Widget", "spec"),
        ("Widget", "spec.containers[]"),
        ("Widget", "spec.selector"),
        ("Widget", "status"),
        ("Gadget", "spec.params.*"),
        ("Gizmo", "spec.rules[]"),
    ],
)
def test_structs_declare_no_other_keys(recorded: dict[str, dict[str, Any]], kind: str, path: str) -> None:
    m = at(_kind(recorded[kind]).root, path).map
    assert m is not None and m.element is None


def test_widget_port_protocol_default(recorded: dict[str, dict[str, Any]]) -> None:
    item = at(_kind(recorded["Widget"]).root, "spec.containers[].ports[]")
    assert item.map is not None
    assert item.map.fields["protocol"].default == "TCP"
    assert item.map.fields["containerPort"].default is NO_DEFAULT
    assert item.map.fields["name"].default is NO_DEFAULT


def test_widget_config_is_a_granular_map_of_deduced(recorded: dict[str, dict[str, Any]]) -> None:
    config = at(_kind(recorded["Widget"]).root, "spec.config")
    assert config.map is not None and config.scalar is None and config.list is None
    assert config.map.fields == {} and config.map.element is DEDUCED and not config.map.atomic


@pytest.mark.parametrize(
    ("kind", "namespaced", "subresources"),
    [
        ("Widget", True, CRDSubresources(status=True, scale=CRDScale(".spec.replicas", ".status.replicas"))),
        ("Gadget", True, CRDSubresources()),
        ("Gizmo", False, CRDSubresources()),
    ],
)
def test_recorded_crd_kind_facts(
    recorded: dict[str, dict[str, Any]], kind: str, namespaced: bool, subresources: CRDSubresources
) -> None:
    crd = recorded[kind]
    kinds = kinds_from_crd(crd)
    gvk = GroupVersionKind("example.com", "v1", kind)
    assert list(kinds) == [gvk]
    ks = kinds[gvk]
    assert ks.namespaced is namespaced
    assert ks.zero == {"apiVersion": "example.com/v1", "kind": kind}
    assert ks.source == f"CRD {crd['metadata']['name']}"
    assert not ks.deduced
    assert crd_subresources(crd, "v1") == subresources
    assert crd_subresources(crd, "v9") == CRDSubresources()


def test_metadata_is_the_given_object_meta(recorded: dict[str, dict[str, Any]]) -> None:
    meta = Type(name="io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    root = kinds_from_crd(recorded["Gizmo"], object_meta=meta)[GroupVersionKind("example.com", "v1", "Gizmo")].root
    assert at(root, "metadata") is meta
    default_root = _kind(recorded["Gizmo"]).root
    assert at(default_root, "metadata") is builtin_object_meta()


# --- synthetic CRDs ---------------------------------------------------------------------------

SPEC_SCHEMA = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
    },
}


def crd_v1(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SPEC_SCHEMA}}],
        },
    }
    base["spec"].update(spec)
    return base


def crd_v1beta1(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Cluster",
            "version": "v1",
            "validation": {"openAPIV3Schema": SPEC_SCHEMA},
            "subresources": {"status": {}},
        },
    }
    base["spec"].update(spec)
    return base


def test_declared_root_metadata_is_replaced_by_object_meta() -> None:
    root = _kind(crd_v1()).root
    assert at(root, "metadata") is builtin_object_meta()
    assert describe(at(root, "metadata.finalizers")) == "list:set"


def test_unserved_versions_are_skipped_and_each_served_version_is_converted() -> None:
    other = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}
    crd = crd_v1(
        versions=[
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SPEC_SCHEMA}},
            {"name": "v2", "served": True, "storage": False, "schema": other},
            {"name": "v0", "served": False, "storage": False, "schema": other},
        ]
    )
    kinds = kinds_from_crd(crd)
    assert set(kinds) == {
        GroupVersionKind("example.com", "v1", "Thing"),
        GroupVersionKind("example.com", "v2", "Thing"),
    }
    assert at(kinds[GroupVersionKind("example.com", "v2", "Thing")].root, "spec").map.element is DEDUCED  # type: ignore[union-attr]


def test_version_without_schema_is_deduced_metadata_included() -> None:
    crd = crd_v1beta1(validation=None, preserveUnknownFields=False)
    ks = _kind(crd)
    # apiextensions publishes a bare {type: object}: nothing is typed, not even metadata.
    assert ks.root is DEDUCED and ks.deduced
    assert "no schema" in ks.source and ks.zero == {"apiVersion": "example.com/v1", "kind": "Thing"}
    finalizers = at(ks.root, "metadata.finalizers")
    assert finalizers is DEDUCED and finalizers.list is not None and finalizers.list.relationship == "atomic"


def test_v1beta1_shared_validation_scope_and_subresources() -> None:
    crd = crd_v1beta1(preserveUnknownFields=False)
    ks = _kind(crd)
    assert ks.namespaced is False
    assert describe(at(ks.root, "spec.size")) == "scalar:numeric"
    assert at(ks.root, "spec").map.element is None  # type: ignore[union-attr]
    assert crd_subresources(crd, "v1") == CRDSubresources(status=True)


def test_v1beta1_per_version_schema_and_subresources_win() -> None:
    own = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
        }
    }
    crd = crd_v1beta1(
        preserveUnknownFields=False,
        versions=[{"name": "v1", "served": True, "storage": True, "schema": own, "subresources": {}}],
    )
    ks = _kind(crd)
    assert describe(at(ks.root, "spec.x")) == "scalar:string" and "size" not in at(ks.root, "spec").map.fields  # type: ignore[union-attr]
    assert crd_subresources(crd, "v1") == CRDSubresources()


@pytest.mark.parametrize(
    ("crd", "preserve"),
    [
        pytest.param(crd_v1beta1(), True, id="v1beta1-default-true"),
        pytest.param(crd_v1beta1(preserveUnknownFields=True), True, id="v1beta1-true"),
        pytest.param(crd_v1beta1(preserveUnknownFields=False), False, id="v1beta1-false"),
        pytest.param(crd_v1(), False, id="v1-default-false"),
        pytest.param(crd_v1(preserveUnknownFields=True), True, id="v1-true"),
    ],
)
def test_spec_preserve_unknown_fields_opens_every_struct(crd: dict[str, Any], preserve: bool) -> None:
    root = _kind(crd).root
    expected = DEDUCED if preserve else None
    for path in ("", "spec", "metadata", "metadata.ownerReferences[]"):
        m = at(root, path).map
        assert m is not None and m.element is expected, path
    # Declared fields stay typed either way; the shared ObjectMeta is never modified.
    assert describe(at(root, "metadata.finalizers")) == "list:set"
    assert builtin_object_meta().map.element is None  # type: ignore[union-attr]


def test_embedded_resource_gets_type_meta_and_object_meta() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    "objects": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": True,
                            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}},
                        },
                    },
                },
            }
        },
    }
    crd = crd_v1(versions=[{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}])
    original = copy.deepcopy(crd)
    root = _kind(crd).root
    meta = builtin_object_meta()
    for node in ("spec.template", "spec.objects[]"):
        assert describe(at(root, f"{node}.apiVersion")) == "scalar:string"
        assert describe(at(root, f"{node}.kind")) == "scalar:string"
        assert at(root, f"{node}.metadata") is meta
    assert at(root, "spec.template").map.element is DEDUCED  # type: ignore[union-attr]
    assert at(root, "spec.template.spec") is DEDUCED
    assert at(root, "spec.objects[]").map.element is None  # type: ignore[union-attr]
    assert describe(at(root, "spec.objects[].spec.a")) == "scalar:string"
    assert crd == original  # the manifest is not modified


def test_int_or_string_and_no_type_in_crd() -> None:
    schema = {
        "type": "object",
        "properties": {
            "port": {"x-kubernetes-int-or-string": True},
            "raw": {"x-kubernetes-preserve-unknown-fields": True},
        },
    }
    root = _kind(crd_v1(versions=[{"name": "v1", "served": True, "schema": {"openAPIV3Schema": schema}}])).root
    assert merges_as_deduced(at(root, "port")) and at(root, "port").json_type == "integer,string"
    assert at(root, "raw") is DEDUCED
    assert at(root, "port") is not UNTYPED


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param({"apiVersion": "v1", "kind": "ConfigMap"}, id="not-a-crd"),
        pytest.param({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}, id="no-spec"),
        pytest.param(crd_v1(group=""), id="no-group"),
        pytest.param(crd_v1(versions=[]), id="no-versions"),
    ],
)
def test_not_a_usable_crd(manifest: dict[str, Any]) -> None:
    with pytest.raises(CRDError):
        kinds_from_crd(manifest)


def test_schema_errors_name_the_kind_version_and_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}},
            }
        },
    }
    crd = crd_v1(versions=[{"name": "v1", "served": True, "schema": {"openAPIV3Schema": schema}}])
    with pytest.raises(SchemaError, match=r"Thing\.v1\.spec\.l: unknown list type 'bag'"):
        kinds_from_crd(crd)
