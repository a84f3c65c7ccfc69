"""CRDs read once, and ahead of need by a LIST's threads (kube/crdreader.py), on the real API server."""

from __future__ import annotations

import threading
from typing import Any

import lab
import pytest

from kubectl_fieldown.kube import ClusterClient, ResourceInfo
from kubectl_fieldown.kube.crdreader import CrdReader, crd_name
from kubectl_fieldown.kube.errors import NotFound
from kubectl_fieldown.kube.kindrules import KindRules
from kubectl_fieldown.schema.types import GroupVersionKind


@pytest.fixture
def crds(client: ClusterClient) -> ResourceInfo:
    return client.discovery.resolve_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")


def test_a_crd_read_ahead_is_the_one_read_and_is_read_once(client: ClusterClient, crds: ResourceInfo,
                                                           widgets: ResourceInfo, cluster: lab.Cluster) -> None:
    reader = CrdReader(client, crds)
    before = client.request_count
    reader.read_ahead(widgets)
    assert client.request_count == before + 1
    doc = reader.read("widgets.example.com")
    again = reader.read("widgets.example.com")
    reader.read_ahead(widgets)
    assert client.request_count == before + 1
    assert doc is again
    served = cluster.kubectl_json("get", "crd", "widgets.example.com")
    assert doc["metadata"]["uid"] == served["metadata"]["uid"] and doc["spec"] == served["spec"]


def test_kinds_kubernetes_serves_itself_are_not_read_ahead(client: ClusterClient, crds: ResourceInfo) -> None:
    reader = CrdReader(client, crds)
    before = client.request_count
    for group in ("", "apps", "networking.k8s.io", "gateway.networking.k8s.io"):
        reader.read_ahead(ResourceInfo(group, "v1", "things", "Thing", namespaced=True))
    assert client.request_count == before


def test_a_read_ahead_that_failed_is_forgotten_and_the_read_meets_the_error(client: ClusterClient,
                                                                            crds: ResourceInfo) -> None:
    reader = CrdReader(client, crds)
    missing = ResourceInfo("none.example.com", "v1", "nothings", "Nothing", namespaced=True)
    before = client.request_count
    reader.read_ahead(missing)  # the error is the read's to meet, not the LIST thread's
    assert client.request_count == before + 1
    with pytest.raises(NotFound):
        reader.read(crd_name(missing))
    assert client.request_count == before + 2


class _GatedClient:
    """The real client, whose GETs wait for ``gate`` once they started (told by ``entered``)."""

    def __init__(self, client: ClusterClient) -> None:
        self.client = client
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.gets = 0

    def get(self, res: ResourceInfo, name: str) -> dict[str, Any]:
        self.gets += 1
        self.entered.set()
        assert self.gate.wait(60)
        return self.client.get(res, name)


def test_a_read_waits_for_the_read_ahead_on_its_way(client: ClusterClient, crds: ResourceInfo,
                                                    widgets: ResourceInfo) -> None:
    gated = _GatedClient(client)
    reader = CrdReader(gated, crds)  # type: ignore[arg-type]
    ahead = threading.Thread(target=reader.read_ahead, args=(widgets,))
    ahead.start()
    assert gated.entered.wait(60)
    got: list[dict[str, Any]] = []
    reading = threading.Thread(target=lambda: got.append(reader.read("widgets.example.com")))
    reading.start()
    gated.gate.set()
    ahead.join(60)
    reading.join(60)
    assert gated.gets == 1 and got and got[0]["metadata"]["name"] == "widgets.example.com"


def test_the_rules_of_a_custom_resource_come_from_the_crd_read_ahead(client: ClusterClient, crds: ResourceInfo,
                                                                     widgets: ResourceInfo) -> None:
    reader = CrdReader(client, crds)
    reader.read_ahead(widgets)
    before = client.request_count
    kinds = KindRules(client=client, crds=reader)
    widget = GroupVersionKind("example.com", "v1", "Widget")
    assert kinds.lookup(widget, widgets).source == "CRD widgets.example.com"
    assert client.request_count == before
    read_ahead = kinds.rules(widget, True, widgets).schema
    plain = KindRules(client=client).rules(widget, True, widgets).schema
    assert read_ahead is not None and plain is not None and not read_ahead.deduced
    assert read_ahead.source == plain.source == "CRD widgets.example.com"
