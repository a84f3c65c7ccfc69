"""The cluster access layer: the only code that talks to an API server.

Cheap to import: ``kubernetes`` (about half a second) and ``urllib3`` are imported only when a
:class:`ClusterClient` is created. Typical use::

    from kubectl_fieldown.kube import ClusterClient, ClusterOptions

    client = ClusterClient(ClusterOptions(kubeconfig=None, context=None, namespace=None))
    res = client.discovery.resolve("widgets")
    for page in client.list_pages(res, ALL_NAMESPACES):
        ...
"""

from .client import (
    ALL_NAMESPACES,
    AllNamespaces,
    ClusterClient,
    ClusterOptions,
    HTTPResponse,
    PatchType,
    RetryPolicy,
    ServerVersion,
)
from .discovery import Discovery, ResourceInfo, split_type_name
from .errors import (
    AlreadyExists,
    ApiError,
    ConfigError,
    Conflict,
    Forbidden,
    Invalid,
    KubeError,
    NotFound,
    RequestContext,
    StatusCause,
    Unauthorized,
    UnknownResourceType,
    Unreachable,
)
from .openapi import OpenAPIV3, fetch_openapi_v3

__all__ = [
    "ALL_NAMESPACES",
    "AllNamespaces",
    "AlreadyExists",
    "ApiError",
    "ClusterClient",
    "ClusterOptions",
    "ConfigError",
    "Conflict",
    "Discovery",
    "Forbidden",
    "HTTPResponse",
    "Invalid",
    "KubeError",
    "NotFound",
    "OpenAPIV3",
    "PatchType",
    "RequestContext",
    "ResourceInfo",
    "RetryPolicy",
    "ServerVersion",
    "StatusCause",
    "Unauthorized",
    "UnknownResourceType",
    "Unreachable",
    "fetch_openapi_v3",
    "split_type_name",
]
