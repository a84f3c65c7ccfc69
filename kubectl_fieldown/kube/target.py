"""One object a write command writes (:class:`ObjectTarget`): below :mod:`.writes`, which runs the
writes, and :mod:`._uncertain`, which reads an object back after a write of unknown outcome;
``kube.writes`` re-exports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discovery import ResourceInfo

__all__ = ["ObjectTarget"]


@dataclass(frozen=True)
class ObjectTarget:
    """One object to write. ``initial`` is a copy already read (a LIST item), used as the first
    read instead of a GET: if it is stale, the resourceVersion test fails and it is read again."""

    res: ResourceInfo
    name: str
    namespace: str | None
    initial: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    manifest: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The manifest that named the object (``-f``): what its applier will apply next."""

    def describe(self) -> str:
        ns = f" -n {self.namespace}" if self.namespace and self.res.namespaced else ""
        return f"{self.res.group_resource}/{self.name}{ns}"
