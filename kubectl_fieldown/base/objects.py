"""Facts about Kubernetes objects that every part of the tool must answer the same way: which
object (:class:`ObjectRef`, and how kubectl names it), and whether it is a Secret."""

from __future__ import annotations

from collections.abc import Mapping

from .record import Record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["ANNOTATIONS_LIMIT", "ObjectRef", "annotations_size", "group_of", "is_secret", "is_secret_object",
           "type_name"]

#: apimachinery ``TotalAnnotationSizeLimitB``: ``metadata.annotations`` may hold at most this many
#: bytes (keys plus values, UTF-8) in total
ANNOTATIONS_LIMIT = 256 * 1024


def annotations_size(annotations: Mapping[Any, Any]) -> int:
    """What counts against :data:`ANNOTATIONS_LIMIT`: the UTF-8 bytes of every key and value."""
    return sum(len(str(k).encode("utf-8", "surrogatepass")) + len(str(v).encode("utf-8", "surrogatepass"))
               for k, v in annotations.items())


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


class ObjectRef(Record):
    """Which object: apiVersion, kind, namespace (None: cluster-scoped) and name. Two refs are the
    same object when all four agree — the way kubectl finds the object a manifest names."""

    __slots__ = ("api_version", "kind", "name", "namespace")
    api_version: Final[str]
    kind: Final[str]
    namespace: Final[str | None]
    name: Final[str]

    def __init__(self, api_version: str, kind: str, namespace: str | None, name: str) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name

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
