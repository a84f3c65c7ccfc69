"""One order of schema sources for every command (kube/kindrules.py), on the real API server:
``--schema`` files, then a custom resource's CRD as served, then the cluster's OpenAPI v3, then the
offline built-ins, then deduced."""

from __future__ import annotations

import json
from pathlib import Path

import lab
import pytest

from kubectl_fieldown.kube import ClusterClient, ClusterOptions
from kubectl_fieldown.kube.kindrules import KindRules
from kubectl_fieldown.schema.registry import SchemaRegistry
from kubectl_fieldown.schema.types import GroupVersionKind

WIDGET = GroupVersionKind("example.com", "v1", "Widget")


@pytest.fixture
def client(cluster: lab.Cluster) -> ClusterClient:
    return ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))


def test_a_custom_resource_takes_its_crd_as_served(client: ClusterClient) -> None:
    kinds = KindRules(client=client)
    res = client.discovery.resolve_kind("example.com/v1", "Widget")
    schema = kinds.lookup(WIDGET, res)
    assert schema.source == "CRD widgets.example.com", schema.source
    assert kinds.registry.describe_sources()[0] == "CRD widgets.example.com (from the cluster)"
    assert not any(line.startswith("cluster OpenAPI v3") for line in kinds.registry.describe_sources())
    assert not kinds.is_builtin(WIDGET)
    rules = kinds.rules(WIDGET, "status" in res.subresources, res)
    assert rules.schema is not None and not rules.schema.deduced


def test_without_its_discovery_entry_the_openapi_document_answers(client: ClusterClient) -> None:
    # no resource type known (no CRD name to read): the group-version's OpenAPI v3 document
    schema = KindRules(client=client).lookup(WIDGET)
    assert schema.source.startswith("cluster OpenAPI v3 (example.com/v1)"), schema.source


def test_schema_files_come_first(client: ClusterClient, cluster: lab.Cluster, tmp_path: Path) -> None:
    crd = cluster.kubectl_json("get", "crd", "widgets.example.com")
    path = tmp_path / "crd.json"
    path.write_text(json.dumps(lab.clean_crd(crd)))
    registry = SchemaRegistry()
    registry.add_file(path)
    kinds = KindRules(registry, client)
    res = client.discovery.resolve_kind("example.com/v1", "Widget")
    before = client.request_count
    assert kinds.lookup(WIDGET, res).source == "CRD widgets.example.com"
    assert client.request_count == before  # nothing asked of the cluster
    assert kinds.registry.describe_sources()[0] == f"CRD widgets.example.com ({path})"


def test_a_builtin_kind_the_server_does_not_serve_is_offline_and_builtin(client: ClusterClient) -> None:
    deployment = GroupVersionKind("apps", "v1", "Deployment")
    kinds = KindRules(client=client)
    schema = kinds.lookup(deployment)
    assert schema.source == kinds.registry.builtins_source()
    assert kinds.is_builtin(deployment)


def test_an_unknown_kind_is_deduced_and_says_why(client: ClusterClient) -> None:
    schema = KindRules(client=client).lookup(GroupVersionKind("nowhere.example.com", "v1", "Thing"))
    assert schema.deduced
    assert "cluster OpenAPI v3:" in schema.source, schema.source
