"""Offline built-in schemas (the kubernetes-validate extract): merge rules of well-known kinds, versions,
defaults, and that the extract converts exactly as the full kubernetes-validate documents do."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.schema import builtin
from kubectl_fieldown.schema.builtin import (
    KEY_DEFAULTS,
    UnknownKubeVersionError,
    available_versions,
    builtin_kinds,
    newest_version,
    normalize_version,
)
from kubectl_fieldown.schema.gotypes import builtin_zero
from kubectl_fieldown.schema.openapi import OBJECT_META
from kubectl_fieldown.schema.types import DEDUCED, NO_DEFAULT, UNTYPED, GroupVersionKind

from .helpers import at, describe

DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
SERVICE = GroupVersionKind("", "v1", "Service")
POD = GroupVersionKind("", "v1", "Pod")
CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
PV = GroupVersionKind("", "v1", "PersistentVolume")
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")

POD_SPEC = "spec.template.spec"

RULES = [
    (DEPLOYMENT, f"{POD_SPEC}.containers", "list:map[name]"),
    (DEPLOYMENT, f"{POD_SPEC}.initContainers", "list:map[name]"),
    (DEPLOYMENT, f"{POD_SPEC}.containers[].ports", "list:map[containerPort,protocol]"),
    (DEPLOYMENT, f"{POD_SPEC}.containers[].env", "list:map[name]"),
    (DEPLOYMENT, f"{POD_SPEC}.containers[].args", "list:atomic"),
    (DEPLOYMENT, f"{POD_SPEC}.containers[].resources.limits", "map:granular"),
    (DEPLOYMENT, f"{POD_SPEC}.containers[].resources.limits.*", "scalar:untyped"),  # Quantity
    (DEPLOYMENT, f"{POD_SPEC}.tolerations", "list:atomic"),
    (DEPLOYMENT, "spec.selector", "map:atomic"),  # LabelSelector
    (DEPLOYMENT, "spec.selector.matchLabels", "map:granular"),
    (DEPLOYMENT, "spec.selector.matchExpressions", "list:atomic"),
    (DEPLOYMENT, "spec.template.metadata.labels.*", "scalar:string"),
    (DEPLOYMENT, "spec.replicas", "scalar:numeric"),
    (DEPLOYMENT, "spec.strategy", "map:granular"),  # retainKeys on an object: not a list rule
    # IntOrString is a oneOf with no type: untyped scalar, list and map, as kube-openapi makes it.
    (DEPLOYMENT, "spec.strategy.rollingUpdate.maxSurge", "scalar:untyped+map:granular+list:atomic"),
    (DEPLOYMENT, "status.conditions", "list:map[type]"),
    (DEPLOYMENT, "metadata.finalizers", "list:set"),
    (DEPLOYMENT, "metadata.ownerReferences", "list:map[uid]"),
    (DEPLOYMENT, "metadata.managedFields", "list:atomic"),
    (DEPLOYMENT, "metadata.labels", "map:granular"),
    (DEPLOYMENT, "metadata.creationTimestamp", "scalar:untyped"),  # Time: date-time
    (DEPLOYMENT, "apiVersion", "scalar:string"),
    (SERVICE, "spec.selector", "map:atomic"),
    (SERVICE, "spec.selector.*", "scalar:string"),
    (SERVICE, "spec.ports", "list:map[port,protocol]"),
    (SERVICE, "spec.ports[].targetPort", "scalar:untyped+map:granular+list:atomic"),
    (SERVICE, "spec.clusterIPs", "list:atomic"),
    (POD, "spec.volumes", "list:map[name]"),
    (POD, "spec.nodeSelector", "map:atomic"),
    (POD, "spec.imagePullSecrets", "list:map[name]"),
    (POD, "spec.imagePullSecrets[]", "map:atomic"),  # LocalObjectReference
    (POD, "spec.topologySpreadConstraints", "list:map[topologyKey,whenUnsatisfiable]"),
    (POD, "spec.containers[].volumeMounts", "list:map[mountPath]"),
    (CONFIGMAP, "data", "map:granular"),
    (CONFIGMAP, "data.*", "scalar:string"),
    (CONFIGMAP, "binaryData.*", "scalar:string"),  # format byte
    (PV, "spec.claimRef", "map:granular"),  # x-kubernetes-map-type: granular on an atomic $ref
    (PV, "spec.nodeAffinity.required", "map:atomic"),
    (CRD, "spec.versions", "list:atomic"),
    (
        CRD,
        "spec.versions[].schema.openAPIV3Schema.properties.*.properties.*.items",
        "scalar:untyped+map:granular+list:atomic",
    ),
]


@pytest.mark.parametrize(("gvk", "path", "expected"), RULES, ids=[f"{g.kind}:{p}" for g, p, _ in RULES])
def test_builtin_merge_rules(gvk: GroupVersionKind, path: str, expected: str) -> None:
    ks = builtin_kinds().lookup(gvk)
    assert ks is not None
    assert describe(at(ks.root, path)) == expected


def test_label_selector_and_object_reference_are_atomic_named_types() -> None:
    b = builtin_kinds()
    assert b.type("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector").map.atomic  # type: ignore[union-attr]
    reference = b.type("io.k8s.api.core.v1.ObjectReference")
    assert reference.map is not None and reference.map.atomic
    # The granular claimRef of a PersistentVolume is a variant; the shared type stays atomic.
    pv = b.lookup(PV)
    assert pv is not None
    claim_ref = at(pv.root, "spec.claimRef")
    assert claim_ref is not reference and claim_ref.map is not None and claim_ref.map.fields is reference.map.fields


def test_raw_extension_is_owned_whole() -> None:
    b = builtin_kinds()
    assert b.type("io.k8s.apimachinery.pkg.runtime.RawExtension") is UNTYPED
    assert describe(b.type("io.k8s.apimachinery.pkg.api.resource.Quantity")) == "scalar:untyped"
    deployment = b.lookup(DEPLOYMENT)
    assert deployment is not None
    assert (
        at(deployment.root, "spec.strategy.rollingUpdate.maxSurge").name
        == "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    )


def test_object_meta_is_shared() -> None:
    b = builtin_kinds()
    meta = b.object_meta()
    assert meta.name == OBJECT_META
    for gvk in (DEPLOYMENT, SERVICE, POD, CONFIGMAP):
        ks = b.lookup(gvk)
        assert ks is not None and at(ks.root, "metadata") is meta
    assert describe(at(meta, "finalizers")) == "list:set"
    assert describe(at(meta, "ownerReferences")) == "list:map[uid]"
    assert describe(at(meta, "annotations.*")) == "scalar:string"
    assert meta.map is not None and meta.map.element is None


@pytest.mark.parametrize(
    ("gvk", "item_path", "field", "default"),
    [
        (DEPLOYMENT, f"{POD_SPEC}.containers[].ports[]", "protocol", "TCP"),
        (POD, "spec.ephemeralContainers[].ports[]", "protocol", "TCP"),
        (SERVICE, "spec.ports[]", "protocol", "TCP"),
        (POD, "spec.imagePullSecrets[]", "name", ""),
        # Required key fields: the zero default openapi-gen enforces on non-pointer fields.
        (DEPLOYMENT, f"{POD_SPEC}.containers[].ports[]", "containerPort", 0),
        (DEPLOYMENT, f"{POD_SPEC}.containers[]", "name", ""),
        (DEPLOYMENT, f"{POD_SPEC}.containers[].env[]", "name", ""),
        (SERVICE, "spec.ports[]", "port", 0),
        (DEPLOYMENT, "metadata.ownerReferences[]", "uid", ""),
        # Not key fields: no default at all.
        (DEPLOYMENT, f"{POD_SPEC}.containers[]", "image", NO_DEFAULT),
        (DEPLOYMENT, f"{POD_SPEC}.containers[].ports[]", "hostPort", NO_DEFAULT),
        (SERVICE, "spec.ports[]", "name", NO_DEFAULT),
        (DEPLOYMENT, "spec", "replicas", NO_DEFAULT),
    ],
)
def test_key_field_defaults(gvk: GroupVersionKind, item_path: str, field: str, default: Any) -> None:
    ks = builtin_kinds().lookup(gvk)
    assert ks is not None
    item = at(ks.root, item_path)
    assert item.map is not None
    found = item.map.fields[field].default
    assert found is default if default is NO_DEFAULT else found == default and type(found) is type(default)


@pytest.mark.parametrize("version", available_versions())
def test_the_extract_has_no_openapi_defaults(version: str) -> None:
    # The documented limitation: if a future kubernetes-validate keeps `default`, this fails and
    # KEY_DEFAULTS can go.
    def defaults(node: Any, parent_key: str = "") -> list[str]:
        found = []
        if isinstance(node, dict):
            if "default" in node and parent_key != "properties":
                found.append(parent_key)
            for k, v in node.items():
                found.extend(defaults(v, k))
        elif isinstance(node, list):
            for v in node:
                found.extend(defaults(v, parent_key))
        return found

    assert defaults(dict(builtin._definitions(version))) == []
    assert {name for name, _ in KEY_DEFAULTS} <= set(builtin._definitions(version))


@pytest.mark.parametrize("version", available_versions())
def test_every_builtin_kind_converts(version: str) -> None:
    b = builtin_kinds(version)
    kinds = b.kinds()
    assert DEPLOYMENT in kinds and CONFIGMAP in kinds
    for gvk in kinds:
        ks = b.lookup(gvk)
        assert ks is not None and ks.root.map is not None, gvk
        assert ks.source == f"kubernetes-validate {version}"
        # the empty Go struct comes from the 1.36 Go types (schema/gotypes), for every version
        assert ks.zero == builtin_zero(gvk.api_version, gvk.kind), gvk
        assert ks.namespaced is None


def test_versions() -> None:
    versions = available_versions()
    assert versions[0] == "1.25" and {"1.30", "1.36", "1.37"} <= set(versions)
    assert versions == sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    assert newest_version() == versions[-1]
    assert builtin_kinds().version == newest_version()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("1.36", "1.36"),
        ("v1.36", "1.36"),
        ("1.36.4", "1.36"),
        ("v1.30.0", "1.30"),
        (" 1.25 ", "1.25"),
        ("v1.36.4-gke.100", "1.36"),
    ],
)
def test_normalize_version(given: str, expected: str) -> None:
    assert normalize_version(given) == expected
    assert builtin_kinds(given) is builtin_kinds(expected)


@pytest.mark.parametrize("given", ["1.12", "2.0", "banana", "", "1"])
def test_unknown_version_lists_available(given: str) -> None:
    with pytest.raises(UnknownKubeVersionError) as caught:
        normalize_version(given)
    message = str(caught.value)
    assert repr(given) in message and "1.25" in message and newest_version() in message
    assert caught.value.available == available_versions()


def test_unknown_kind_is_none() -> None:
    assert builtin_kinds().lookup(GroupVersionKind("example.com", "v1", "Widget")) is None
    assert builtin_kinds().lookup(GroupVersionKind("apps", "v1beta9", "Deployment")) is None


def test_lookup_is_cached() -> None:
    b = builtin_kinds()
    assert b.lookup(DEPLOYMENT) is b.lookup(DEPLOYMENT)
    assert b.definition_name(DEPLOYMENT) == "io.k8s.api.apps.v1.Deployment"
    assert at(b.lookup(DEPLOYMENT).root, "spec.template.spec.volumes[].configMap.items") is not DEDUCED  # type: ignore[union-attr]


# --- the extract against its source: the full documents of the kubernetes-validate package ------------------
# The package is a test dependency pinned to the release the extract was made from (pyproject.toml);
# hack/gen-builtin-schemas.py makes the extract and checks the same before writing it.

_SOURCE_DIR = re.compile(r"^v(\d+)\.(\d+)\.0-local$")


def _source_documents() -> dict[str, Path]:
    spec = importlib.util.find_spec("kubernetes_validate")  # located, not imported (it pulls in jsonschema)
    assert spec is not None and spec.submodule_search_locations, (
        "kubernetes-validate (a test dependency: pip install -e '.[test]') is not installed"
    )
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    found = {}
    for child in root.iterdir():
        match = _SOURCE_DIR.match(child.name)
        if match and (child / "_definitions.json").is_file():
            found[(int(match[1]), int(match[2]))] = child / "_definitions.json"
    return {f"{major}.{minor}": found[(major, minor)] for major, minor in sorted(found)}


def test_the_extract_comes_from_the_installed_source_release() -> None:
    info = builtin.source_info()
    assert info["package"] == "kubernetes-validate" == builtin.SOURCE_NAME
    assert importlib.metadata.version("kubernetes-validate") == info["version"]
    assert available_versions() == list(_source_documents())  # --kube-version offers what the package had


@pytest.mark.parametrize("version", available_versions())
def test_the_extract_gives_the_merge_types_of_the_full_documents(version: str) -> None:
    full = json.loads(_source_documents()[version].read_text(encoding="utf-8"))["$defs"]
    expected = builtin.BuiltinSchemas(version, full)
    shipped = builtin_kinds(version)
    assert shipped.kinds() == expected.kinds()
    # every definition's merge types (sides, relationships, keys, field order, defaults, sharing)
    assert shipped.fingerprint() == expected.fingerprint()


def test_the_fingerprint_sees_what_the_conversion_reads() -> None:
    # Without this, an insensitive fingerprint would make the comparison above prove nothing.
    definitions = dict(builtin._definitions(newest_version()))
    reference = builtin.BuiltinSchemas("x", definitions).fingerprint()
    selector = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"
    container_port = "io.k8s.api.core.v1.ContainerPort"
    changes = {
        "map type": {selector: {k: v for k, v in definitions[selector].items() if k != "x-kubernetes-map-type"}},
        "required": {container_port: {k: v for k, v in definitions[container_port].items() if k != "required"}},
        "field order": {selector: {**definitions[selector],
                                   "properties": dict(reversed(definitions[selector]["properties"].items()))}},
        "kind": {"io.k8s.api.core.v1.ConfigMap": {k: v for k, v in definitions["io.k8s.api.core.v1.ConfigMap"].items()
                                                 if k != "x-kubernetes-group-version-kind"}},
    }
    for what, change in changes.items():
        assert builtin.BuiltinSchemas("x", {**definitions, **change}).fingerprint() != reference, what
    assert builtin.BuiltinSchemas("x", dict(definitions)).fingerprint() == reference


# --- ObjectMeta's own small extract (what a custom resource's schema needs, read without the large one) -----

def test_the_object_meta_file_is_cut_from_the_extract() -> None:
    assert builtin._object_meta_data() == builtin.object_meta_extract(builtin._data())
    assert available_versions() == [str(v) for v in builtin._data()["versions"]]


@pytest.mark.parametrize("version", available_versions())
def test_object_meta_from_its_file_is_the_extracts(version: str) -> None:
    small = builtin.builtin_object_meta(version)
    assert small is not builtin_kinds(version).object_meta()  # converted from the small file alone
    assert builtin.type_fingerprint(small) == builtin.type_fingerprint(builtin_kinds(version).object_meta())


def test_the_type_fingerprint_sees_a_change() -> None:
    definitions = dict(builtin._object_meta_schemas(newest_version())._definitions)
    owner_reference = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"
    reference = builtin.type_fingerprint(builtin.BuiltinSchemas("x", definitions).object_meta())
    meta = definitions[OBJECT_META]
    refs = meta["properties"]["ownerReferences"]
    changed = {**meta, "properties": {**meta["properties"], "ownerReferences": {
        k: v for k, v in refs.items() if not k.startswith("x-kubernetes-")}}}  # keyed by uid -> atomic
    assert builtin.type_fingerprint(builtin.BuiltinSchemas("x", {**definitions, OBJECT_META: changed})
                                    .object_meta()) != reference
    assert owner_reference in definitions


def test_a_custom_resource_reads_no_built_in_data() -> None:
    # a fresh interpreter: which data files does a custom resource's schema read?
    import subprocess
    import sys

    code = (
        "from kubectl_fieldown.schema import builtin, gotypes\n"
        "from kubectl_fieldown.kube.kindrules import KindRules\n"
        "from kubectl_fieldown.schema.registry import SchemaRegistry\n"
        "from kubectl_fieldown.schema.types import GroupVersionKind\n"
        "import json, sys\n"
        "reg = SchemaRegistry()\n"
        "reg.add_crd(json.loads(sys.argv[1]))\n"
        "kinds = KindRules(reg)\n"
        "assert not kinds.is_builtin(GroupVersionKind('other.example.com', 'v1', 'Gadget'))\n"
        "meta = kinds.lookup(GroupVersionKind('example.com', 'v1', 'Widget')).root.map.fields['metadata']\n"
        "assert 'managedFields' in meta.type.map.fields\n"
        "print(builtin._data.cache_info().currsize, gotypes._data.cache_info().currsize)\n"
    )
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}]}}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(crd)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0"]


@pytest.mark.parametrize("group", sorted({g.group for v in available_versions() for g in builtin_kinds(v).kinds()}
                                         | {k.rsplit("/", 2)[0] if k.count("/") == 2 else ""
                                            for k in __import__("kubectl_fieldown.schema.gotypes",
                                                                fromlist=["x"]).builtin_kinds()}))
def test_every_built_in_kind_is_in_a_built_in_group(group: str) -> None:
    # KindRules.is_builtin says no at once for any other group: this keeps that exact
    assert GroupVersionKind(group, "v1", "X").in_builtin_group
    assert not GroupVersionKind("example.com", "v1", "X").in_builtin_group
    assert not GroupVersionKind("k8s.io.example.com", "v1", "X").in_builtin_group
