"""CRDs read once per invocation, and read ahead by the threads that LIST their custom resources.

The engine's merge rules for a custom resource come from its CRD (:mod:`.kindrules`). ``audit`` looks
them up when the first object of the type needs a fix, on the thread that checks the objects: a GET
that thread waited for while the server was busy with the LIST's pages — 10 to 70 ms for each type
on the loaded bench machine (issue 24). Now the LIST's worker thread reads the CRD as soon as the
first page of its type is handed over (:meth:`CrdReader.read_ahead`), so the lookup finds it read.
The price: one GET for each custom resource type with objects, even when none of them needs rules.

A CRD read ahead is the one a lookup a moment later would have read. A read that failed is
forgotten, so the lookup reads it again and meets the error itself, as it did before; a lookup
that finds the read still on its way waits for it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..schema.types import GroupVersionKind
from .errors import KubeError

if TYPE_CHECKING:
    from .client import ClusterClient
    from .discovery import ResourceInfo

__all__ = ["CrdReader", "crd_name"]

_POLL = 0.1  # seconds between looks while waiting: Ctrl-C stays deliverable


def crd_name(res: ResourceInfo) -> str:
    """The name of the CRD that defines ``res`` (``widgets.example.com``)."""
    return f"{res.resource}.{res.group}"


class _Read:
    __slots__ = ("doc", "done")

    def __init__(self) -> None:
        self.doc: dict[str, Any] | None = None
        self.done = threading.Event()


class CrdReader:
    """Each CRD of one cluster read at most once by a successful GET. ``crds`` is the
    CustomResourceDefinition type as the cluster's discovery names it."""

    def __init__(self, client: ClusterClient, crds: ResourceInfo) -> None:
        self._client = client
        self._crds = crds
        self._lock = threading.Lock()
        self._reads: dict[str, _Read] = {}

    def read(self, name: str) -> dict[str, Any]:
        """The CRD ``name``: read already, read now, or waited for (raises the GET's
        :class:`~.errors.KubeError`)."""
        while True:
            with self._lock:
                entry = self._reads.get(name)
                mine = entry is None
                if entry is None:
                    entry = self._reads[name] = _Read()
            if mine:
                return self._get(name, entry)
            while not entry.done.wait(_POLL):
                pass
            if entry.doc is not None:
                return entry.doc
            # the other read failed and was forgotten: this one reads it again, as before

    def read_ahead(self, res: ResourceInfo) -> None:
        """Read the CRD of a custom resource (a type in a group Kubernetes does not serve itself)
        unless it was read already or is on its way; errors are left to :meth:`read`."""
        if GroupVersionKind(res.group, res.version, res.kind).in_builtin_group or "." not in res.group:
            return  # served by Kubernetes itself, or a group no CRD may have (it has no dot)
        name = crd_name(res)
        with self._lock:
            if name in self._reads:
                return
            entry = self._reads[name] = _Read()
        try:
            self._get(name, entry)
        except KubeError:
            return  # forgotten: the lookup reads it again and meets the error itself

    def _get(self, name: str, entry: _Read) -> dict[str, Any]:
        try:
            entry.doc = self._client.get(self._crds, name)
            return entry.doc
        finally:
            if entry.doc is None:
                with self._lock:
                    if self._reads.get(name) is entry:
                        del self._reads[name]
            entry.done.set()
