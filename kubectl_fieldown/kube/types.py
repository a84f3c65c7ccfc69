"""The types the cluster layer's modules share, below all of them: what a request answers
(:class:`HTTPResponse`), how to reach a cluster (:class:`ClusterOptions`, :class:`ConnectionOverrides`,
:class:`RetryPolicy`), the limits and the patch types, and what discovery and the OpenAPI cache need of a
client (:class:`Requester`). :mod:`.client` re-exports them; :mod:`._transport`, :mod:`.discovery` and
:mod:`.openapi` import them from here, so none of them imports the client (no import cycle).

Importing this module is cheap: it imports neither ``kubernetes`` nor ``urllib3``.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal, Protocol

from ..base.record import Record
from . import _json
from .errors import BadResponse, RequestContext, answer_excerpt

__all__ = [
    "ALL_NAMESPACES",
    "MAX_RESPONSE_BYTES",
    "PATCH_CONTENT_TYPES",
    "AllNamespaces",
    "ClusterOptions",
    "ConnectionOverrides",
    "HTTPResponse",
    "PatchType",
    "Requester",
    "RetryPolicy",
    "ServerVersion",
    "describe_status",
]


class AllNamespaces(enum.Enum):
    ALL = "all"


#: pass as ``namespace`` to list across all namespaces (kubectl ``-A``)
ALL_NAMESPACES: Final = AllNamespaces.ALL

#: The most bytes read for one answer, after decompression (and before it). etcd stores objects of
#: at most 1.5 MiB (its default --max-request-bytes) and a LIST page of this tool holds at most 500
#: of them: 750 MiB in the worst case; 1 GiB leaves room for the JSON around them. Real pages are a
#: few MB. A larger answer is refused with one line instead of growing memory until MemoryError.
MAX_RESPONSE_BYTES: Final = 1 << 30

PatchType = Literal["apply", "merge", "json", "strategic"]

PATCH_CONTENT_TYPES: Final[Mapping[str, str]] = {
    # JSON is YAML, so an apply body is sent as JSON under the YAML media type the server requires
    "apply": "application/apply-patch+yaml",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}


class RetryPolicy(Record):
    """Bounded exponential backoff for transient failures: reads retry 429/500/502/503/504 and
    reset connections; writes only a 429 that carries Retry-After (rejected before any effect)."""

    __slots__ = ("backoff_base", "backoff_max", "max_attempts", "retry_after_max")
    max_attempts: Final[int]
    backoff_base: Final[float]
    backoff_max: Final[float]
    retry_after_max: Final[float]

    def __init__(
        self,
        max_attempts: int = 5,
        backoff_base: float = 0.2,
        backoff_max: float = 5.0,
        retry_after_max: float = 30.0,
    ) -> None:
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (counting from 1); a numeric
        Retry-After from the server wins, capped at ``retry_after_max``."""
        if retry_after:
            try:
                return min(max(float(retry_after.strip()), 0.0), self.retry_after_max)
            except ValueError:
                pass  # an HTTP date: the API server sends seconds, so fall back to backoff
        return float(min(self.backoff_base * (2 ** (attempt - 1)), self.backoff_max))


class ConnectionOverrides(Record):
    """kubectl's generic flags that override what kubeconfig says (None: not given)."""

    __slots__ = ("certificate_authority", "client_certificate", "client_key", "cluster", "impersonate",
                 "impersonate_groups", "impersonate_uid", "insecure_skip_tls_verify", "server", "tls_server_name",
                 "token", "user")
    server: Final[str | None]
    cluster: Final[str | None]
    user: Final[str | None]
    token: Final[str | None]
    certificate_authority: Final[str | None]
    client_certificate: Final[str | None]
    client_key: Final[str | None]
    tls_server_name: Final[str | None]
    insecure_skip_tls_verify: Final[bool | None]
    impersonate: Final[str | None]
    impersonate_groups: Final[tuple[str, ...]]
    impersonate_uid: Final[str | None]

    def __init__(
        self,
        server: str | None = None,
        cluster: str | None = None,
        user: str | None = None,
        token: str | None = None,
        certificate_authority: str | None = None,
        client_certificate: str | None = None,
        client_key: str | None = None,
        tls_server_name: str | None = None,
        insecure_skip_tls_verify: bool | None = None,
        impersonate: str | None = None,
        impersonate_groups: tuple[str, ...] = (),
        impersonate_uid: str | None = None,
    ) -> None:
        self.server = server
        self.cluster = cluster
        self.user = user
        self.token = token
        self.certificate_authority = certificate_authority
        self.client_certificate = client_certificate
        self.client_key = client_key
        self.tls_server_name = tls_server_name
        self.insecure_skip_tls_verify = insecure_skip_tls_verify
        self.impersonate = impersonate
        self.impersonate_groups = impersonate_groups
        self.impersonate_uid = impersonate_uid

    def impersonation_headers(self) -> list[tuple[str, str]]:
        """The headers the API server reads impersonation from; one header per group, as
        client-go sends them (the server does not split a comma-separated value)."""
        if not self.impersonate:
            return []
        out = [("Impersonate-User", self.impersonate)]
        out += [("Impersonate-Group", g) for g in self.impersonate_groups]
        if self.impersonate_uid:
            out.append(("Impersonate-Uid", self.impersonate_uid))
        return out


class ClusterOptions(Record):
    """How to reach the cluster: the kubectl flags ``--kubeconfig``, ``--context``, ``-n`` and the
    generic ones (``--server``, ``--token``, ``--as``, ...; see :class:`ConnectionOverrides`).
    A timeout of None waits as long as it takes (kubectl's ``--request-timeout=0``).

    ``connect_timeout`` and ``read_timeout`` bound each wait on the socket (a read timeout: the
    longest silence); ``request_timeout`` bounds the whole request — connection, headers, body and
    retries — as kubectl's ``--request-timeout`` does (None: no overall limit, kubectl's default).
    ``max_response_bytes`` is the most one answer may hold (:data:`MAX_RESPONSE_BYTES`)."""

    __slots__ = ("connect_timeout", "context", "gzip", "kubeconfig", "max_response_bytes", "namespace", "overrides",
                 "read_timeout", "request_timeout", "retry", "verbosity")
    kubeconfig: Final[str | None]
    context: Final[str | None]
    namespace: Final[str | None]
    connect_timeout: Final[float | None]
    read_timeout: Final[float | None]
    request_timeout: Final[float | None]
    max_response_bytes: Final[int]
    overrides: Final[ConnectionOverrides]
    #: kubectl's -v: 6 logs each request, 7 its headers, 8 its bodies
    verbosity: Final[int]
    retry: Final[RetryPolicy]
    #: ask for gzip; pays off on any real network, costs a little CPU on localhost
    gzip: Final[bool]

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
        connect_timeout: float | None = 5.0,
        read_timeout: float | None = 60.0,
        request_timeout: float | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        overrides: ConnectionOverrides | None = None,
        verbosity: int = 0,
        retry: RetryPolicy | None = None,
        gzip: bool = True,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.namespace = namespace
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.request_timeout = request_timeout
        self.max_response_bytes = max_response_bytes
        self.overrides = overrides if overrides is not None else ConnectionOverrides()
        self.verbosity = verbosity
        self.retry = retry if retry is not None else RetryPolicy()
        self.gzip = gzip


class HTTPResponse(Record):
    """A raw answer: ``headers`` keys are lower-case; ``method`` and ``url`` (without the query)
    say which request it answers, for the errors about it."""

    __slots__ = ("data", "headers", "method", "status", "url")
    status: Final[int]
    headers: Final[Mapping[str, str]]
    data: Final[bytes]
    method: Final[str]
    url: Final[str]

    def __init__(self, status: int, headers: Mapping[str, str], data: bytes, method: str = "", url: str = "") -> None:
        self.status = status
        self.headers = headers
        self.data = data
        self.method = method
        self.url = url

    def what(self) -> str:
        """``200 OK (text/html)``: the status and the content type, as an error names them."""
        return describe_status(self.status, self.headers.get("content-type"))

    def json(self) -> Any:
        """The body as JSON; anything else (an HTML page from a proxy, a truncated document) is a
        :class:`~.errors.BadResponse` that says what came instead."""
        try:
            return _json.loads(self.data)
        except (ValueError, RecursionError):
            raise BadResponse(f"{self.method} {self.url}: the server answered {self.what()}, not JSON: "
                              f"{answer_excerpt(self.data)}") from None


def describe_status(status: int, content_type: str | None) -> str:
    import http

    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    kind = " ".join((content_type or "").split())[:60] or "no content type"
    return f"{status} {phrase} ({kind})".replace("  ", " ")


class ServerVersion(Record):
    __slots__ = ("git_version", "major", "minor", "platform", "raw")
    major: Final[str]
    minor: Final[str]
    git_version: Final[str]
    platform: Final[str]
    raw: Final[Mapping[str, Any]]

    def __init__(self, major: str, minor: str, git_version: str, platform: str, raw: Mapping[str, Any]) -> None:
        self.major = major
        self.minor = minor
        self.git_version = git_version
        self.platform = platform
        self.raw = raw


class Requester(Protocol):
    """What :class:`~.discovery.Discovery` and :class:`~.openapi.OpenAPIV3` need of a client (a
    :class:`~.client.ClusterClient` is one): its server's URL and raw requests."""

    @property
    def server(self) -> str: ...

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int | bool | None] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        context: RequestContext | None = None,
        ok: Collection[int] = (),
    ) -> HTTPResponse: ...
