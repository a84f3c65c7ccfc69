"""Fixtures for the cluster access layer tests: a ClusterClient on the session's real API
server, with the disk cache in a per-test temporary folder (FIELDOWN_CACHE_DIR)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.kube import ClusterClient, ClusterOptions, ResourceInfo

KubeconfigFactory = Callable[[Callable[[dict[str, Any]], None]], Path]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "fieldown-cache"
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(d))
    return d


@pytest.fixture
def client(cluster: lab.Cluster, cache_dir: Path) -> Iterator[ClusterClient]:
    c = ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig)))
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def widgets(client: ClusterClient) -> ResourceInfo:
    return client.discovery.resolve("widgets")


@pytest.fixture
def gizmos(client: ClusterClient) -> ResourceInfo:
    return client.discovery.resolve("gizmos")


@pytest.fixture
def kubeconfig_variant(cluster: lab.Cluster, tmp_path: Path) -> KubeconfigFactory:
    """Write a modified copy of the cluster's kubeconfig (the function edits the parsed dict)."""
    original = yaml.safe_load(cluster.kubeconfig.read_text())
    counter = [0]

    def make(edit: Callable[[dict[str, Any]], None]) -> Path:
        doc = copy.deepcopy(original)
        edit(doc)
        counter[0] += 1
        path = tmp_path / f"kubeconfig-{counter[0]}.yaml"
        path.write_text(yaml.safe_dump(doc))
        return path

    return make
