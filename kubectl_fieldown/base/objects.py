"""Facts about Kubernetes objects that every part of the tool must answer the same way: which
object (:class:`ObjectRef`, and how kubectl names it), and whether it is a Secret."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ObjectRef", "group_of", "is_secret", "is_secret_object", "type_name"]


def is_secret(api_version: object, kind: object) -> bool:
    """The core Secret (``v1``), whose values are redacted in every output. A custom kind that is
    also called Secret (another group) is an ordinary object: its schema is the CRD's."""
    return kind == "Secret" and api_version == "v1"


def is_secret_object(obj: Mapping[str, Any]) -> bool:
    return is_secret(obj.get("apiVersion"), obj.get("kind"))


def group_of(api_version: str) -> str:
    """``apps`` of ``apps/v1``; ``""`` for the core group (``v1``)."""
    return api_version.rpartition("/")[0]


def type_name(group: str, kind: str) -> str:
    """``widget.example.com``, ``secret``: how kubectl names a kind on its command line (the
    singular resolves like the plural)."""
    return f"{kind.lower()}.{group}" if group else kind.lower()


@dataclass(frozen=True)
class ObjectRef:
    """Which object: apiVersion, kind, namespace (None: cluster-scoped) and name. Two refs are the
    same object when all four agree — the way kubectl finds the object a manifest names."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> ObjectRef:
        """The object ``obj`` is (missing parts empty: callers that need them check first)."""
        md = obj.get("metadata")
        md = md if isinstance(md, Mapping) else {}
        return cls(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), md.get("namespace") or None,
                   str(md.get("name", "")))

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def type_name(self) -> str:
        """``widget.example.com``: the kind as kubectl's TYPE argument."""
        return type_name(self.group, self.kind)

    @property
    def resource_name(self) -> str:
        """``widget.example.com/w``: kubectl's TYPE/NAME."""
        return f"{self.type_name}/{self.name}"

    def display(self) -> str:
        """``widget.example.com/w -n shop``: as kubectl prints the object it wrote, and as its
        command line takes it."""
        return self.resource_name + (f" -n {self.namespace}" if self.namespace else "")

    def __str__(self) -> str:
        return self.display()

    def title(self) -> str:
        """``Widget shop/w``: a heading for a person reading about the object."""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"
