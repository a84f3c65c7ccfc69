"""Discovery against the real API server: name resolution, aggregated and legacy discovery, and
the disk cache (TTL, ETag revalidation, refresh when a type is missing)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lab
import pytest

from kubectl_fieldown.kube import (
    ClusterClient,
    ClusterOptions,
    Discovery,
    ResourceInfo,
    UnknownResourceType,
    split_type_name,
)
from kubectl_fieldown.kube.cache import server_dir_name
from kubectl_fieldown.kube.discovery import find_kind, find_resource
from kubectl_fieldown.kube.types import ConnectionOverrides


@pytest.mark.parametrize("arg", [
    "widgets", "widget", "Widget", "WIDGETS", "widgets.example.com", "widget.example.com",
    "widgets.v1.example.com", "Widget.example.com", "Widget.v1.example.com", " widgets ",
])
def test_resolve_widget_forms(client: ClusterClient, arg: str) -> None:
    r = client.discovery.resolve(arg)
    assert (r.group, r.version, r.resource, r.kind) == ("example.com", "v1", "widgets", "Widget")
    assert r.namespaced and r.singular == "widget"
    assert r.subresources == {"status", "scale"}
    assert {"get", "list", "patch", "create", "update", "delete"} <= r.verbs
    assert r.api_version == "example.com/v1" and r.group_resource == "widgets.example.com"


def test_resolve_other_types(client: ClusterClient) -> None:
    d = client.discovery
    gizmo = d.resolve("gizmo")
    assert gizmo.kind == "Gizmo" and not gizmo.namespaced and gizmo.subresources == frozenset()
    assert d.resolve("gadgets").kind == "Gadget"
    crd = d.resolve("crd")  # a short name
    assert crd.group_resource == "customresourcedefinitions.apiextensions.k8s.io"
    assert "crds" in crd.short_names
    assert d.resolve("customresourcedefinition.apiextensions.k8s.io") == crd


def test_resolve_type_name_forms(client: ClusterClient) -> None:
    r, name = client.discovery.resolve_arg("widget/w1")
    assert r.resource == "widgets" and name == "w1"
    r, name = client.discovery.resolve_arg("widgets.example.com")
    assert r.resource == "widgets" and name is None
    with pytest.raises(UnknownResourceType, match="single resource and name"):
        client.discovery.resolve_arg("widget/a/b")


def test_unknown_type_like_kubectl(client: ClusterClient) -> None:
    with pytest.raises(UnknownResourceType) as exc:
        client.discovery.resolve("foo")
    assert str(exc.value) == 'the server doesn\'t have a resource type "foo"'
    assert exc.value.exit_code == 1
    with pytest.raises(UnknownResourceType):
        client.discovery.resolve("widgets.v2.example.com")
    with pytest.raises(UnknownResourceType):
        client.discovery.resolve("widgets.apps")


def test_resolve_kind_from_manifest(client: ClusterClient) -> None:
    d = client.discovery
    assert d.resolve_kind("example.com/v1", "Widget").resource == "widgets"
    assert d.resolve_kind("example.com/v1", "gizmo").resource == "gizmos"  # case-insensitive fallback
    assert d.resolve_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition").resource == \
        "customresourcedefinitions"
    with pytest.raises(UnknownResourceType,
                       match=r'^no matches for kind "Widget" in version "example.com/v2"'):
        d.resolve_kind("example.com/v2", "Widget")


def test_aggregated_discovery_and_no_core_api(client: ClusterClient, cluster: lab.Cluster) -> None:
    resources = client.discovery.resources()
    assert client.discovery.source == "server"
    groups = [r.group for r in resources]
    if not cluster.external:
        # the lab serves no core API: /api answers 404, which is not an error for discovery
        assert "" not in groups
    assert {"example.com", "apiextensions.k8s.io"} <= set(groups)
    if "" in groups:
        assert groups[0] == ""  # the core group resolves first


def test_legacy_discovery_matches_aggregated(client: ClusterClient) -> None:
    legacy = Discovery(client, aggregated=False, use_disk_cache=False)
    before = client.request_count
    by_legacy = {(r.group, r.version, r.resource): r for r in legacy.resources()}
    assert client.request_count - before >= 3  # /api, /apis, then one request per group-version
    by_aggregated = {(r.group, r.version, r.resource): r for r in client.discovery.resources()}
    assert by_legacy.keys() == by_aggregated.keys()
    for key, r in by_legacy.items():
        a = by_aggregated[key]
        assert (r.kind, r.namespaced, r.verbs, r.short_names, r.singular, r.subresources) == \
            (a.kind, a.namespaced, a.verbs, a.short_names, a.singular, a.subresources), key
    assert legacy.resolve("Widget").subresources == {"status", "scale"}


def test_disk_cache_hit_ttl_and_etag_revalidation(cluster: lab.Cluster, cache_dir: Path) -> None:
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c1:
        c1.discovery.resolve("widgets")
        assert c1.discovery.source == "server"
        cache_file = cache_dir / server_dir_name(c1.server) / "discovery.json"
        assert c1.discovery.cache_file == cache_file
        assert json.loads(cache_file.read_text())["server"] == c1.server

    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c2:
        before = c2.request_count
        assert c2.discovery.resolve("gizmos").kind == "Gizmo"
        assert c2.discovery.source == "disk"
        assert c2.request_count == before  # no request at all

        # past the TTL the server is asked again, with ETags: unchanged data costs two 304s
        later = Discovery(c2, clock=lambda: 10**12)
        assert later.resolve("widgets").resource == "widgets"
        assert later.source == "revalidated"
        assert c2.request_count - before == 2

    cache_file.write_text("{not json")  # a damaged cache is a miss, not an error
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c3:
        assert c3.discovery.resolve("widgets").kind == "Widget"
        assert c3.discovery.source == "server"


def _crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"sprockets.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket", "shortNames": ["spk"]},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }


@pytest.fixture
def new_crd(cluster: lab.Cluster, cache_dir: Path) -> Iterator[str]:
    """The group of a CRD created after the disk cache was written (it is not in the cache)."""
    group = f"t{uuid.uuid4().hex[:8]}.fieldown.test"
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        c.discovery.resolve("widgets")
    cluster.apply_crd(_crd(group))
    try:
        yield group
    finally:
        cluster.kubectl("delete", "crd", f"sprockets.{group}", "--wait=false", check=False)


def test_new_crd_found_after_refresh(cluster: lab.Cluster, new_crd: str) -> None:
    group = new_crd
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        assert c.discovery.resources() and c.discovery.source == "disk"
        r = c.discovery.resolve(f"spk.{group}")  # missing in the cache: refreshed once, then found
        assert (r.kind, r.group, r.short_names) == ("Sprocket", group, ("spk",))
        assert c.discovery.source == "server"
        assert c.discovery.resolve_kind(f"{group}/v1", "Sprocket") == r
        with pytest.raises(UnknownResourceType):
            c.discovery.resolve("still-not-there")  # refreshes at most once per Discovery


def test_current_resources_revalidate_the_cache(cluster: lab.Cluster, new_crd: str) -> None:
    """Going through every type asks the server first: a CRD created since the cache was written is
    there, and an unchanged server costs two 304s; once per Discovery."""
    name = f"sprockets.{new_crd}"
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        assert name not in {r.group_resource for r in c.discovery.resources()}  # the cache
        before = c.request_count
        assert name in {r.group_resource for r in c.discovery.current_resources()}
        assert c.discovery.source == "server" and c.request_count - before == 2
        c.discovery.current_resources()
        assert c.request_count - before == 2  # fresh from the server already
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        before = c.request_count
        assert name in {r.group_resource for r in c.discovery.current_resources()}
        assert c.discovery.source == "revalidated" and c.request_count - before == 2


def test_current_resources_keep_the_cache_when_discovery_is_refused(cluster: lab.Cluster, new_crd: str,
                                                                    cache_dir: Path) -> None:
    """Credentials the server refuses discovery to (the lab authorizes system:masters only; a real
    cluster lets every authenticated user read it): the cache is used as before, and kept fresh."""
    cache_file = next(iter(cache_dir.glob("*/discovery.json")))
    written = cache_file.read_bytes()
    alice = ClusterOptions(kubeconfig=str(cluster.kubeconfig), overrides=ConnectionOverrides(impersonate="alice"))
    with ClusterClient(alice) as c:
        names = {r.group_resource for r in c.discovery.current_resources()}
        assert "widgets.example.com" in names and f"sprockets.{new_crd}" not in names  # the cache, as it was
        assert c.discovery.source == "disk" and c.request_count == 1  # refused at the first root
    assert cache_file.read_bytes() == written


# --------------------------------------------------------------------------------------------
# pure parts


def _ri(group: str, version: str, resource: str, kind: str, **kw: Any) -> ResourceInfo:
    return ResourceInfo(group=group, version=version, resource=resource, kind=kind, namespaced=True, **kw)


CATALOGUE = [
    _ri("", "v1", "pods", "Pod", short_names=("po",), singular="pod"),
    _ri("", "v1", "events", "Event", short_names=("ev",)),
    _ri("apps", "v1", "deployments", "Deployment", short_names=("deploy",), singular="deployment"),
    _ri("events.k8s.io", "v1", "events", "Event", short_names=("ev",)),
    _ri("example.com", "v1", "widgets", "Widget", singular="widget"),
    _ri("example.com", "v1beta1", "widgets", "Widget", singular="widget"),
    _ri("other.io", "v1", "things", "Widget", singular="thing"),
]


@pytest.mark.parametrize(("arg", "want"), [
    ("pods", ("", "v1", "pods")),
    ("pod", ("", "v1", "pods")),
    ("po", ("", "v1", "pods")),
    ("Pod", ("", "v1", "pods")),
    ("deploy", ("apps", "v1", "deployments")),
    ("deployments.apps", ("apps", "v1", "deployments")),
    ("deployment.v1.apps", ("apps", "v1", "deployments")),
    ("events", ("", "v1", "events")),  # the core group wins
    ("ev", ("", "v1", "events")),
    ("event", ("", "v1", "events")),  # empty singularName: the lower-case kind
    ("events.events.k8s.io", ("events.k8s.io", "v1", "events")),
    ("widgets", ("example.com", "v1", "widgets")),  # the preferred (first listed) version
    ("widgets.v1beta1.example.com", ("example.com", "v1beta1", "widgets")),
    ("Widget", ("example.com", "v1", "widgets")),  # singular beats another group's kind
    ("Widget.other.io", ("other.io", "v1", "things")),
])
def test_find_resource(arg: str, want: tuple[str, str, str]) -> None:
    r = find_resource(CATALOGUE, arg)
    assert r is not None and (r.group, r.version, r.resource) == want


def test_find_resource_misses_and_find_kind() -> None:
    assert find_resource(CATALOGUE, "") is None
    assert find_resource(CATALOGUE, "deployments.v2.apps") is None
    assert find_resource(CATALOGUE, "pods.apps") is None
    r = find_kind(CATALOGUE, "v1", "Pod")
    assert r is not None and r.resource == "pods"
    r = find_kind(CATALOGUE, "example.com/v1beta1", "Widget")
    assert r is not None and r.version == "v1beta1"
    assert find_kind(CATALOGUE, "apps/v2", "Deployment") is None


def test_split_type_name() -> None:
    assert split_type_name("po/web-0") == ("po", "web-0")
    assert split_type_name("widgets.example.com") == ("widgets.example.com", None)
    for bad in ("/x", "po/", "a/b/c"):
        with pytest.raises(ValueError):
            split_type_name(bad)


def test_resource_paths() -> None:
    w = _ri("example.com", "v1", "widgets", "Widget")
    assert w.path() == "/apis/example.com/v1/widgets"
    assert w.path("ns") == "/apis/example.com/v1/namespaces/ns/widgets"
    assert w.path("ns", "w1", "status") == "/apis/example.com/v1/namespaces/ns/widgets/w1/status"
    pod = CATALOGUE[0]
    assert pod.path("kube-system", "p") == "/api/v1/namespaces/kube-system/pods/p"
    assert pod.api_version == "v1" and pod.group_resource == "pods"
    cluster_scoped = ResourceInfo(group="", version="v1", resource="nodes", kind="Node", namespaced=False)
    assert cluster_scoped.path("ns", "n1") == "/api/v1/nodes/n1"
    with pytest.raises(ValueError):
        w.path("ns", None, "status")
    assert ResourceInfo.from_json(w.to_json()) == w


def test_server_dir_name() -> None:
    assert server_dir_name("https://127.0.0.1:6443") == "127.0.0.1_6443"
    assert server_dir_name("https://rancher.example/k8s/clusters/c-1/") == "rancher.example_k8s_clusters_c-1"
