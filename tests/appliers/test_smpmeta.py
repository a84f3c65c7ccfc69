"""Patch metadata of the built-in kinds (appliers/smpmeta.py): the Go types joined with the patch
tags of their 1.36 OpenAPI definitions, looked up as apimachinery's ``PatchMetaFromStruct`` does."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.appliers.smpmeta import PatchMeta, PatchMetaError, StructMeta, patch_meta_for
from kubectl_fieldown.schema.builtin import _definitions
from kubectl_fieldown.schema.gotypes import _data, builtin_kinds


def _walk(meta: StructMeta, *path: str) -> tuple[StructMeta, PatchMeta]:
    """Down struct fields; ``name[]`` steps to a list field's items."""
    pm = PatchMeta()
    for key in path:
        meta, pm = meta.for_slice(key[:-2]) if key.endswith("[]") else meta.for_struct(key)
    return meta, pm


def test_every_builtin_kind_has_patch_metadata() -> None:
    missing = []
    for key in builtin_kinds():
        api_version, _, kind = key.rpartition("/")
        if patch_meta_for(api_version, kind) is None:
            missing.append(key)
    assert not missing
    assert patch_meta_for("example.com/v1", "Widget") is None


@pytest.mark.parametrize(("api_version", "kind", "path", "strategies", "key"), [
    ("apps/v1", "Deployment", ("spec", "template", "spec", "containers[]"), ("merge",), "name"),
    ("apps/v1", "Deployment", ("spec", "template", "spec", "volumes[]"), ("merge", "retainKeys"), "name"),
    ("apps/v1", "Deployment", ("spec", "strategy"), ("retainKeys",), ""),
    ("apps/v1", "Deployment", ("spec", "template", "spec", "containers[]", "env[]"), ("merge",), "name"),
    ("v1", "Pod", ("spec", "containers[]", "ports[]"), ("merge",), "containerPort"),
    ("v1", "Pod", ("spec", "tolerations[]"), ("",), ""),
    ("v1", "Service", ("spec", "ports[]"), ("merge",), "port"),
    ("v1", "ConfigMap", ("metadata", "finalizers[]"), ("merge",), ""),
    ("v1", "ConfigMap", ("metadata", "ownerReferences[]"), ("merge",), "uid"),
    ("batch/v1", "CronJob", ("spec", "jobTemplate", "spec", "template", "spec", "initContainers[]"), ("merge",),
     "name"),
    ("apps/v1", "StatefulSet", ("spec", "volumeClaimTemplates[]"), ("",), ""),
    ("networking.k8s.io/v1", "Ingress", ("spec", "rules[]"), ("",), ""),
])
def test_tags_of_known_fields(api_version: str, kind: str, path: tuple[str, ...], strategies: tuple[str, ...],
                              key: str) -> None:
    root = patch_meta_for(api_version, kind)
    assert root is not None
    _, pm = _walk(root, *path)
    assert pm == PatchMeta(strategies, key)


def test_lookups_fail_as_apimachinery_does() -> None:
    root = patch_meta_for("apps/v1", "Deployment")
    assert root is not None
    with pytest.raises(PatchMetaError) as e:
        root.for_struct("nope")
    assert str(e.value) == 'unable to find api field in struct Deployment for the json field "nope"'
    labels, _ = _walk(root, "metadata", "labels")
    with pytest.raises(PatchMetaError) as e:
        labels.for_struct("x")
    assert str(e.value) == "merging an object in json but data type is not struct, instead is: map"
    with pytest.raises(PatchMetaError) as e:
        root.for_slice("spec")
    assert str(e.value) == "expected slice or array type, but got: struct"
    # encoding/json's field match: exact first, else case-insensitive
    spec, _ = root.for_struct("SPEC")
    assert spec.for_struct("replicas")[1] == PatchMeta(("",), "")


def test_every_tag_of_the_definitions_is_found_through_the_go_types() -> None:
    """The two sources join: each tagged property of a definition that is a Go struct with that
    field gives its tags back through the lookup."""
    definitions = _definitions("1.36")
    types = _data()["types"]
    checked = 0
    for name, definition in definitions.items():
        if name not in types:
            continue
        fields = {f["name"] for f in types[name]["fields"]}
        for prop, node in (definition.get("properties") or {}).items():
            strategy: Any = node.get("x-kubernetes-patch-strategy")
            if strategy is None or prop not in fields:
                continue
            _, pm = StructMeta({"kind": "struct", "type": name}).for_struct(prop)
            assert pm == PatchMeta(tuple(strategy.split(",")), node.get("x-kubernetes-patch-merge-key", "")), \
                (name, prop)
            checked += 1
    assert checked >= 70  # the tagged fields of the 1.36 structs
