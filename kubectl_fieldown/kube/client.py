"""``ClusterClient``: get, list (paged), patch (apply/merge/json/strategic), create, replace,
delete and raw GETs against one API server, returning plain JSON dicts.

Importing this module is cheap: ``kubernetes`` and ``urllib3`` are imported (via
``._transport``) only when a :class:`ClusterClient` is created.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import urlencode

from . import _json
from .errors import KubeError, RequestContext, error_from_response

if TYPE_CHECKING:
    from ._transport import Transport
    from .discovery import Discovery, ResourceInfo
    from .openapi import OpenAPIV3

__all__ = [
    "ALL_NAMESPACES",
    "PATCH_CONTENT_TYPES",
    "AllNamespaces",
    "ClusterClient",
    "ClusterOptions",
    "ConnectionOverrides",
    "HTTPResponse",
    "PatchType",
    "RetryPolicy",
    "ServerVersion",
]


class AllNamespaces(enum.Enum):
    ALL = "all"


#: pass as ``namespace`` to list across all namespaces (kubectl ``-A``)
ALL_NAMESPACES: Final = AllNamespaces.ALL

PatchType = Literal["apply", "merge", "json", "strategic"]

PATCH_CONTENT_TYPES: Final[Mapping[str, str]] = {
    # JSON is YAML, so an apply body is sent as JSON under the YAML media type the server requires
    "apply": "application/apply-patch+yaml",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff for transient failures: reads retry 429/500/502/503/504 and
    reset connections; writes only a 429 that carries Retry-After (rejected before any effect)."""

    max_attempts: int = 5
    backoff_base: float = 0.2
    backoff_max: float = 5.0
    retry_after_max: float = 30.0

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (counting from 1); a numeric
        Retry-After from the server wins, capped at ``retry_after_max``."""
        if retry_after:
            try:
                return min(max(float(retry_after.strip()), 0.0), self.retry_after_max)
            except ValueError:
                pass  # an HTTP date: the API server sends seconds, so fall back to backoff
        return float(min(self.backoff_base * (2 ** (attempt - 1)), self.backoff_max))


@dataclass(frozen=True)
class ConnectionOverrides:
    """kubectl's generic flags that override what kubeconfig says (None: not given)."""

    server: str | None = None
    cluster: str | None = None
    user: str | None = None
    token: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    tls_server_name: str | None = None
    insecure_skip_tls_verify: bool | None = None
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None

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


@dataclass(frozen=True)
class ClusterOptions:
    """How to reach the cluster: the kubectl flags ``--kubeconfig``, ``--context``, ``-n`` and the
    generic ones (``--server``, ``--token``, ``--as``, ...; see :class:`ConnectionOverrides`).
    A timeout of None waits as long as it takes (kubectl's ``--request-timeout=0``)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    connect_timeout: float | None = 5.0
    read_timeout: float | None = 60.0
    overrides: ConnectionOverrides = field(default_factory=ConnectionOverrides)
    #: kubectl's -v: 6 logs each request, 7 its headers, 8 its bodies
    verbosity: int = 0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: ask for gzip; pays off on any real network, costs a little CPU on localhost
    gzip: bool = True


@dataclass(frozen=True)
class HTTPResponse:
    """A raw answer: ``headers`` keys are lower-case."""

    status: int
    headers: Mapping[str, str]
    data: bytes

    def json(self) -> Any:
        return _json.loads(self.data)


@dataclass(frozen=True)
class ServerVersion:
    major: str
    minor: str
    git_version: str
    platform: str
    raw: Mapping[str, Any]


def _user_agent() -> str:
    import platform  # not at module level: ~5 ms of start-up for a string we need only here

    from .. import __version__

    # the server names a field manager after the User-Agent up to "/" when none is given
    return (f"kubectl-fieldown/{__version__} ({sys.platform}/{platform.machine().lower()}) "
            f"python/{platform.python_version()}")


def _metadata(body: Any) -> Mapping[str, Any]:
    meta = body.get("metadata") if isinstance(body, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


class ClusterClient:
    """One API server, as selected by :class:`ClusterOptions`.

    Every method returns plain JSON (dicts) and raises :class:`~.errors.KubeError`
    subclasses; nothing is deserialised into the official client's models."""

    def __init__(self, options: ClusterOptions | None = None) -> None:
        from ._transport import Transport, load_config

        self.options = options or ClusterOptions()
        loaded = load_config(self.options.kubeconfig, self.options.context, self.options.overrides)
        self._transport: Transport = Transport(
            loaded,
            connect_timeout=self.options.connect_timeout,
            read_timeout=self.options.read_timeout,
            user_agent=_user_agent(),
            retry=self.options.retry,
            gzip=self.options.gzip,
            headers=self.options.overrides.impersonation_headers(),
            verbosity=self.options.verbosity,
        )
        #: the API server URL, e.g. ``https://127.0.0.1:6443``
        self.server: str = loaded.server
        #: the kubeconfig context in use (None in a pod)
        self.context: str | None = loaded.context
        #: ``-n`` if given, else the context's namespace, else ``default``
        self.default_namespace: str = self.options.namespace or loaded.namespace or "default"
        #: where the configuration came from ("kubeconfig <paths>" or "in-cluster")
        self.config_source: str = loaded.source
        self._discovery: Discovery | None = None
        self._openapi: OpenAPIV3 | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ClusterClient(server={self.server!r}, context={self.context!r}, namespace={self.default_namespace!r})"

    @property
    def request_count(self) -> int:
        """HTTP requests sent so far (retries included)."""
        return self._transport.requests_sent

    @property
    def discovery(self) -> Discovery:
        """This client's discovery (in-memory and disk cached)."""
        if self._discovery is None:
            from .discovery import Discovery

            self._discovery = Discovery(self)
        return self._discovery

    @property
    def openapi(self) -> OpenAPIV3:
        """This client's OpenAPI v3 fetcher (disk cached by content hash)."""
        if self._openapi is None:
            from .openapi import OpenAPIV3

            self._openapi = OpenAPIV3(self)
        return self._openapi

    # -- raw HTTP ----------------------------------------------------------------------------

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
    ) -> HTTPResponse:
        """Send a request; answers >= 400 (other than those in ``ok``) raise the mapped
        :class:`~.errors.ApiError`. GET and HEAD are retried on transient failures and follow
        redirects to paths on the same server (unless the redirect status is in ``ok``)."""
        if query:
            q = {k: ("true" if v is True else "false" if v is False else str(v))
                 for k, v in query.items() if v is not None}
            if q:
                path += ("&" if "?" in path else "?") + urlencode(q)
        method = method.upper()
        idempotent = method in ("GET", "HEAD")
        resp = self._transport.request(method, path, headers=headers, body=body, idempotent=idempotent)
        for _ in range(5):
            location = resp.headers.get("location", "")
            # follow redirects of reads within this server only: our credentials go along
            if not (idempotent and resp.status in (301, 302, 303, 307, 308) and resp.status not in ok
                    and location.startswith("/") and not location.startswith("//")):
                break
            path = location
            resp = self._transport.request(method, path, headers=headers, body=body, idempotent=idempotent)
        if resp.status >= 400 and resp.status not in ok:
            ctx = context or RequestContext(verb=method, server=self.server, path=path)
            raise error_from_response(resp.status, resp.data, ctx)
        return HTTPResponse(status=resp.status, headers=resp.headers, data=resp.data)

    def get_raw(self, path: str, *, accept: str | None = None) -> bytes:
        """GET an arbitrary server path (``/version``, ``/openapi/v3``, ...) and return the body."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': {path!r}")
        headers = {"Accept": accept} if accept else None
        return self.request("GET", path, headers=headers).data

    def get_json(self, path: str, *, accept: str | None = None) -> Any:
        """GET an arbitrary server path and parse the JSON answer."""
        return _json.loads(self.get_raw(path, accept=accept))

    def server_version(self) -> ServerVersion:
        v = self.get_json("/version")
        if not isinstance(v, Mapping):
            raise KubeError(f"unexpected answer from {self.server}/version")
        return ServerVersion(major=str(v.get("major", "")), minor=str(v.get("minor", "")),
                             git_version=str(v.get("gitVersion", "")), platform=str(v.get("platform", "")),
                             raw=dict(v))

    # -- objects -----------------------------------------------------------------------------

    def _namespace(self, res: ResourceInfo, namespace: str | None) -> str | None:
        if not res.namespaced:
            return None  # kubectl ignores -n for cluster-scoped types
        return namespace or self.default_namespace

    def _ctx(self, verb: str, res: ResourceInfo, path: str, name: str | None, namespace: str | None) -> RequestContext:
        return RequestContext(verb=verb, server=self.server, path=path, resource=res.group_resource,
                              name=name, namespace=namespace)

    def _object(self, resp: HTTPResponse, ctx: RequestContext) -> dict[str, Any]:
        doc = resp.json()
        if not isinstance(doc, dict):
            raise KubeError(f"{ctx.verb} {ctx.target()}: the server answered with {type(doc).__name__}, not an object")
        return doc

    def get(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
            subresource: str | None = None) -> dict[str, Any]:
        """The object (or its subresource, e.g. ``scale``) as the server has it."""
        ns = self._namespace(res, namespace)
        path = res.path(ns, name, subresource)
        ctx = self._ctx("get", res, path, name, ns)
        return self._object(self.request("GET", path, context=ctx), ctx)

    def list_pages(
        self,
        res: ResourceInfo,
        namespace: str | AllNamespaces | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
    ) -> Iterator[list[dict[str, Any]]]:
        """LIST in pages of at most ``limit`` items (``continue`` tokens), yielding each page's
        items as raw dicts with ``apiVersion`` and ``kind`` filled in (LIST items of built-in
        types lack them). ``namespace``: a name, None for the default namespace, or
        :data:`ALL_NAMESPACES`."""
        if namespace is ALL_NAMESPACES or not res.namespaced:
            ns = None
        else:
            ns = namespace or self.default_namespace
        path = res.path(ns)
        ctx = self._ctx("list", res, path, None, ns)
        kind = res.kind
        token: str | None = None
        while True:
            query: dict[str, str | int | bool | None] = {
                "limit": limit if limit > 0 else None,
                "labelSelector": label_selector,
                "fieldSelector": field_selector,
                "continue": token,
            }
            doc = self.request("GET", path, query=query, context=ctx).json()
            if not isinstance(doc, dict):
                raise KubeError(f"list {ctx.target()}: the server answered with {type(doc).__name__}, not a list")
            items = doc.get("items") or []
            api_version = doc.get("apiVersion") or res.api_version
            for item in items:
                if "kind" not in item:
                    item["kind"] = kind
                if "apiVersion" not in item:
                    item["apiVersion"] = api_version
            yield items
            token = (doc.get("metadata") or {}).get("continue") or None
            if not token:
                return

    def list(
        self,
        res: ResourceInfo,
        namespace: str | AllNamespaces | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
    ) -> list[dict[str, Any]]:
        """All items of :meth:`list_pages`, in one list."""
        out: list[dict[str, Any]] = []
        for page in self.list_pages(res, namespace, label_selector=label_selector,
                                    field_selector=field_selector, limit=limit):
            out.extend(page)
        return out

    def patch(
        self,
        res: ResourceInfo,
        name: str,
        namespace: str | None,
        body: Any,
        patch_type: PatchType = "apply",
        *,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """PATCH an object. ``apply`` is server-side apply (``field_manager`` required; ``force``
        takes over conflicting fields); ``merge`` is RFC 7386, ``json`` RFC 6902 (a list of
        operations), ``strategic`` the built-in types' strategic merge. With ``dry_run`` the
        server computes the result (``dryRun=All``) and stores nothing."""
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"unknown patch type {patch_type!r}: one of {', '.join(PATCH_CONTENT_TYPES)}")
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        if force is not None and patch_type != "apply":
            raise ValueError("force is only meaningful for server-side apply")
        if patch_type == "json" and not isinstance(body, list):
            raise ValueError("a JSON patch is a list of operations")
        ns = self._namespace(res, namespace)
        path = res.path(ns, name, subresource)
        ctx = self._ctx("apply" if patch_type == "apply" else "patch", res, path, name, ns)
        query: dict[str, str | int | bool | None] = {
            "fieldManager": field_manager,
            "force": force if patch_type == "apply" else None,
            "dryRun": "All" if dry_run else None,
        }
        resp = self.request("PATCH", path, query=query, headers={"Content-Type": content_type},
                            body=_json.dumps(body), context=ctx)
        return self._object(resp, ctx)

    def create(
        self,
        res: ResourceInfo,
        body: Mapping[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """POST a new object; the namespace defaults to the body's, then the default namespace."""
        meta = _metadata(body)
        ns = self._namespace(res, namespace or meta.get("namespace"))
        path = res.path(ns)
        name = meta.get("name") or meta.get("generateName")
        ctx = self._ctx("create", res, path, name, ns)
        query: dict[str, str | int | bool | None] = {"fieldManager": field_manager,
                                                      "dryRun": "All" if dry_run else None}
        resp = self.request("POST", path, query=query, headers={"Content-Type": "application/json"},
                            body=_json.dumps(body), context=ctx)
        return self._object(resp, ctx)

    def replace(
        self,
        res: ResourceInfo,
        body: Mapping[str, Any],
        name: str | None = None,
        namespace: str | None = None,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """PUT the whole object (an update: with ``metadata.resourceVersion`` in the body the
        server refuses with :class:`~.errors.Conflict` if the object changed meanwhile)."""
        meta = _metadata(body)
        name = name or meta.get("name")
        if not name:
            raise ValueError("replace needs a name (argument or metadata.name)")
        ns = self._namespace(res, namespace or meta.get("namespace"))
        path = res.path(ns, name, subresource)
        ctx = self._ctx("update", res, path, name, ns)
        query: dict[str, str | int | bool | None] = {"fieldManager": field_manager,
                                                      "dryRun": "All" if dry_run else None}
        resp = self.request("PUT", path, query=query, headers={"Content-Type": "application/json"},
                            body=_json.dumps(body), context=ctx)
        return self._object(resp, ctx)

    def delete(
        self,
        res: ResourceInfo,
        name: str,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """DELETE an object; returns the server's answer (the object or a Status)."""
        ns = self._namespace(res, namespace)
        path = res.path(ns, name)
        ctx = self._ctx("delete", res, path, name, ns)
        query: dict[str, str | int | bool | None] = {"dryRun": "All" if dry_run else None}
        return self._object(self.request("DELETE", path, query=query, context=ctx), ctx)
