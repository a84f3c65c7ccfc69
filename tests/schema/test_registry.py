"""SchemaRegistry: lookup order, --schema file detection, the deduced fallback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_fieldown.schema.builtin import (
    UnknownKubeVersionError,
    builtin_kinds,
    builtin_object_meta,
    newest_version,
    type_fingerprint,
)
from kubectl_fieldown.schema.crd import CRDScale, CRDSubresources
from kubectl_fieldown.schema.registry import SchemaFileError, SchemaRegistry
from kubectl_fieldown.schema.types import DEDUCED, GroupVersionKind

from .helpers import at, describe

CONFORMANCE = Path(__file__).resolve().parent.parent / "conformance"
WIDGET = GroupVersionKind("example.com", "v1", "Widget")
GIZMO = GroupVersionKind("example.com", "v1", "Gizmo")
DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def recorded_crd(kind: str) -> dict[str, Any]:
    for path in sorted(CONFORMANCE.glob("*.json")):
        case = json.loads(path.read_text())
        if case.get("kind") == kind and case.get("schema"):
            crd: dict[str, Any] = case["schema"]
            return crd
    raise AssertionError(kind)


def openapi_doc(
    kind: GroupVersionKind, spec: dict[str, Any], object_meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "root": {
            "type": "object",
            "properties": {"spec": spec, "metadata": {"$ref": f"#/components/schemas/{OBJECT_META}"}},
            "x-kubernetes-group-version-kind": [{"group": kind.group, "version": kind.version, "kind": kind.kind}],
        },
        OBJECT_META: object_meta or {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    return {"openapi": "3.0.0", "components": {"schemas": schemas}}


ATOMIC_SPEC = {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"replicas": {"type": "integer"}}}
SET_SPEC = {"type": "object", "properties": {"replicas": {"type": "string"}}}


def test_unknown_kind_is_deduced_never_an_error() -> None:
    registry = SchemaRegistry()
    gvk = GroupVersionKind("example.com", "v1", "Unknown")
    ks = registry.lookup(gvk)
    assert ks.root is DEDUCED and ks.deduced and ks.gvk == gvk
    assert ks.source == "deduced: no schema known for Unknown.v1.example.com"
    assert registry.lookup(gvk) is ks
    assert registry.lookup(GroupVersionKind("", "v1", "Nothing")).source == "deduced: no schema known for Nothing.v1"


def test_builtins_answer_for_builtin_kinds() -> None:
    registry = SchemaRegistry()
    ks = registry.lookup(DEPLOYMENT)
    assert ks.source == f"kubernetes-validate {newest_version()}"
    assert ks is builtin_kinds().lookup(DEPLOYMENT)
    assert registry.lookup_api_version("apps/v1", "Deployment") is ks
    assert registry.for_object({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}}) is ks


def test_kube_version_selects_builtins_and_is_checked_early() -> None:
    assert SchemaRegistry(kube_version="v1.30.7").lookup(DEPLOYMENT).source == "kubernetes-validate 1.30"
    with pytest.raises(UnknownKubeVersionError, match=r"available versions: 1\.25"):
        SchemaRegistry(kube_version="1.2")


def test_builtins_can_be_turned_off() -> None:
    registry = SchemaRegistry(use_builtins=False)
    assert registry.lookup(DEPLOYMENT).deduced
    assert registry.describe_sources() == ["deduced (no schema)"]


@pytest.mark.parametrize(
    ("explicit", "cluster", "expected"),
    [
        pytest.param(True, True, "explicit", id="explicit-beats-cluster-and-builtin"),
        pytest.param(False, True, "cluster", id="cluster-beats-builtin"),
        pytest.param(False, False, "builtin", id="builtin"),
    ],
)
def test_lookup_order(explicit: bool, cluster: bool, expected: str) -> None:
    registry = SchemaRegistry()
    if cluster:
        registry.add_openapi_v3(openapi_doc(DEPLOYMENT, SET_SPEC), "cluster /openapi/v3/apis/apps/v1")
    if explicit:
        registry.add_openapi(openapi_doc(DEPLOYMENT, ATOMIC_SPEC), "deploy-schema.json")
    ks = registry.lookup(DEPLOYMENT)
    source = {"explicit": "deploy-schema.json", "cluster": "cluster /openapi/v3/apis/apps/v1"}.get(expected)
    assert ks.source == (source or f"kubernetes-validate {newest_version()}")
    spec = at(ks.root, "spec")
    assert describe(spec) == ("map:atomic" if expected == "explicit" else "map:granular")


def test_first_explicit_source_wins() -> None:
    registry = SchemaRegistry()
    registry.add_openapi(openapi_doc(DEPLOYMENT, ATOMIC_SPEC), "first")
    registry.add_openapi(openapi_doc(DEPLOYMENT, SET_SPEC), "second")
    assert registry.lookup(DEPLOYMENT).source == "first"


def test_crd_beats_cluster_document_for_the_same_kind() -> None:
    registry = SchemaRegistry()
    registry.add_openapi_v3(openapi_doc(WIDGET, ATOMIC_SPEC), "cluster")
    registry.add_crd(recorded_crd("Widget"), "widgets.yaml")
    ks = registry.lookup(WIDGET)
    assert ks.source == "CRD widgets.example.com"
    assert describe(at(ks.root, "spec.containers")) == "list:map[name]"


def test_crds_use_the_cluster_object_meta_when_there_is_one() -> None:
    atomic_finalizers = {
        "type": "object",
        "properties": {"finalizers": {"type": "array", "items": {"type": "string"}}},
    }
    registry = SchemaRegistry()
    registry.add_crd(recorded_crd("Gizmo"))
    registry.add_openapi_v3(openapi_doc(DEPLOYMENT, SET_SPEC, object_meta=atomic_finalizers), "cluster")
    root = registry.lookup(GIZMO).root
    assert describe(at(root, "metadata.finalizers")) == "list:atomic"
    # Without one, the offline ObjectMeta of the chosen version.
    plain = SchemaRegistry(kube_version="1.30")
    plain.add_crd(recorded_crd("Gizmo"))
    meta = at(plain.lookup(GIZMO).root, "metadata")
    assert meta is builtin_object_meta("1.30")  # from the small file, not the whole extract
    assert type_fingerprint(meta) == type_fingerprint(builtin_kinds("1.30").object_meta())


def test_subresources_of_crd_kinds() -> None:
    registry = SchemaRegistry()
    registry.add_crd(recorded_crd("Widget"))
    registry.add_crd(recorded_crd("Gizmo"))
    assert registry.subresources(WIDGET) == CRDSubresources(True, CRDScale(".spec.replicas", ".status.replicas"))
    assert registry.subresources(GIZMO) == CRDSubresources()
    assert registry.subresources(DEPLOYMENT) is None


def test_add_crd_refuses_other_objects() -> None:
    with pytest.raises(SchemaFileError):
        SchemaRegistry().add_crd({"apiVersion": "v1", "kind": "ConfigMap"})


# --- files ------------------------------------------------------------------------------------


def test_add_file_multi_document_yaml(tmp_path: Path) -> None:
    crds = tmp_path / "crds.yaml"
    crds.write_text(
        yaml.safe_dump_all(
            [
                recorded_crd("Widget"),
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}},
                None,
                {"apiVersion": "v1", "kind": "List", "items": [recorded_crd("Gizmo")]},
            ]
        )
    )
    registry = SchemaRegistry()
    assert registry.add_file(crds) == 2
    assert registry.lookup(WIDGET).source == "CRD widgets.example.com"
    assert registry.lookup(GIZMO).namespaced is False
    assert registry.known_kinds() == {WIDGET: "CRD widgets.example.com", GIZMO: "CRD gizmos.example.com"}
    assert registry.describe_sources()[:2] == [f"CRD widgets.example.com ({crds})", f"CRD gizmos.example.com ({crds})"]


def test_add_file_json_openapi_and_crd_list(tmp_path: Path) -> None:
    doc = tmp_path / "apps-v1.json"
    doc.write_text(json.dumps(openapi_doc(DEPLOYMENT, ATOMIC_SPEC)))
    listed = tmp_path / "crds.json"
    listed.write_text(json.dumps({"kind": "CustomResourceDefinitionList", "items": [recorded_crd("Gadget")]}))
    registry = SchemaRegistry()
    assert registry.add_file(doc) == 1 and registry.add_file(str(listed)) == 1
    assert registry.lookup(DEPLOYMENT).source == str(doc)
    assert registry.lookup(GroupVersionKind("example.com", "v1", "Gadget")).source == "CRD gadgets.example.com"
    assert registry.for_kinds([DEPLOYMENT])[DEPLOYMENT].source == str(doc)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\n", "no CustomResourceDefinition or OpenAPI", id="nothing-usable"
        ),
        pytest.param("", "no CustomResourceDefinition or OpenAPI", id="empty"),
        pytest.param("a: [unclosed\n", r"document 1: invalid YAML: .* \(line 2, column 1\)", id="broken-yaml"),
    ],
)
def test_add_file_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(SchemaFileError, match=message) as caught:
        SchemaRegistry().add_file(path)
    assert str(path) in str(caught.value)
