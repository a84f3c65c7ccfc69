"""OpenAPI v3 fetch and the per-hash disk cache, against the real API server."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import lab
import pytest

from kubectl_fieldown.kube import ClusterClient, ClusterOptions, NotFound, OpenAPIV3, fetch_openapi_v3
from kubectl_fieldown.kube.cache import server_dir_name
from kubectl_fieldown.kube.openapi import openapi_v3_key


def test_fetch_and_cache_hit(cluster: lab.Cluster, cache_dir: Path) -> None:
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        doc = fetch_openapi_v3(c, "example.com/v1")
        assert doc["openapi"].startswith("3.")
        schemas = doc["components"]["schemas"]
        assert {"com.example.v1.Widget", "com.example.v1.Gizmo"} <= set(schemas)
        assert c.openapi.last_source == "server"
        url = c.openapi.paths()["apis/example.com/v1"]
        digest = url.split("hash=", 1)[1]
        cached = cache_dir / server_dir_name(c.server) / "openapi" / "v3" / "apis" / "example.com" / f"v1-{digest}.json"
        assert cached.is_file()
        assert c.openapi.document("example.com/v1") is doc
        assert c.openapi.last_source == "memory"
        assert "example.com/v1" in c.openapi.group_versions()

    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c2:
        before = c2.request_count
        again = c2.openapi.document("example.com/v1")
        assert c2.openapi.last_source == "disk"
        assert again == doc
        assert c2.request_count - before == 1  # only the index


def test_missing_group_version(client: ClusterClient) -> None:
    with pytest.raises(NotFound, match=r'no OpenAPI v3 document for "nothing.example/v9"'):
        client.openapi.document("nothing.example/v9")


def test_outdated_hash_is_redirected(client: ClusterClient, cache_dir: Path) -> None:
    oa = OpenAPIV3(client)
    real = oa.paths()["apis/example.com/v1"]
    oa._paths = dict(oa.paths(), **{"apis/example.com/v1": "/openapi/v3/apis/example.com/v1?hash=ABC123"})
    doc = oa.document("example.com/v1")
    assert "com.example.v1.Widget" in doc["components"]["schemas"]
    files = [p.name for p in (oa.cache_dir / "apis" / "example.com").glob("v1-*.json")]
    assert files == [f"v1-{real.split('hash=', 1)[1]}.json"]  # cached under the server's real hash


def _crd(group: str, extra_field: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"size": {"type": "integer"}}
    if extra_field:
        props[extra_field] = {"type": "string"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"cogs.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": "cogs", "singular": "cog", "kind": "Cog"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}],
        },
    }


def _wait_for_hash_change(c: ClusterClient, key: str, old: str | None, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        url = c.openapi.paths(refresh=True).get(key)
        if url and url != old:
            return url
        if time.monotonic() > deadline:
            raise AssertionError(f"OpenAPI v3 index still has {key} -> {url} after {timeout}s")
        time.sleep(0.2)


def test_changed_schema_gets_new_hash_and_replaces_cache(cluster: lab.Cluster, cache_dir: Path) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.fieldown.test"
    key = f"apis/{group}/v1"
    cluster.apply_crd(_crd(group))
    try:
        with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
            first_url = _wait_for_hash_change(c, key, None)
            doc = c.openapi.document(f"{group}/v1")
            assert c.openapi.last_source == "server"
            spec = doc["components"]["schemas"][f"{'.'.join(reversed(group.split('.')))}.v1.Cog"]
            assert "extra" not in spec["properties"]["spec"]["properties"]

            cluster.apply_crd(_crd(group, extra_field="extra"))
            _wait_for_hash_change(c, key, first_url)
            doc2 = c.openapi.document(f"{group}/v1")
            assert c.openapi.last_source == "server"  # new hash: downloaded again
            spec2 = doc2["components"]["schemas"][f"{'.'.join(reversed(group.split('.')))}.v1.Cog"]
            assert "extra" in spec2["properties"]["spec"]["properties"]
            files = list((c.openapi.cache_dir / "apis" / group).glob("v1-*.json"))
            assert len(files) == 1  # the outdated document was removed
    finally:
        cluster.kubectl("delete", "crd", f"cogs.{group}", "--wait=false", check=False)


def test_openapi_keys() -> None:
    assert openapi_v3_key("apps/v1") == "apis/apps/v1"
    assert openapi_v3_key("v1") == "api/v1"
    assert openapi_v3_key("apis/example.com/v1") == "apis/example.com/v1"
    assert openapi_v3_key("/openapi/v3/apis/apps/v1") == "apis/apps/v1"
