"""``ClusterClient``: get, list (paged), patch (apply/merge/json/strategic), create, replace,
delete and raw GETs against one API server, returning plain JSON dicts.

Importing this module is cheap: ``kubernetes`` and ``urllib3`` are imported (via
``._transport``) only when a :class:`ClusterClient` is created.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from . import _json
from .errors import BadResponse, KubeError, RequestContext, answer_excerpt, error_from_response
from .types import (
    ALL_NAMESPACES,
    MAX_RESPONSE_BYTES,
    PATCH_CONTENT_TYPES,
    AllNamespaces,
    ClusterOptions,
    ConnectionOverrides,
    HTTPResponse,
    PatchType,
    RetryPolicy,
    ServerVersion,
)

if TYPE_CHECKING:
    from ._transport import Transport
    from .discovery import Discovery, ResourceInfo
    from .openapi import OpenAPIV3

__all__ = [
    "ALL_NAMESPACES",
    "MAX_RESPONSE_BYTES",
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



def _user_agent() -> str:
    import platform  # not at module level: ~5 ms of start-up for a string we need only here

    from .. import __version__

    # the server names a field manager after the User-Agent up to "/" when none is given
    return (f"kubectl-fieldown/{__version__} ({sys.platform}/{platform.machine().lower()}) "
            f"python/{platform.python_version()}")


def _metadata(body: Any) -> Mapping[str, Any]:
    meta = body.get("metadata") if isinstance(body, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _json_type(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _list_parts(doc: Any, resp: HTTPResponse) -> tuple[list[dict[str, Any]], Mapping[str, Any]]:
    """The items and the list metadata of a LIST answer, or a :class:`BadResponse` saying what in
    it is not what the API server sends (a list whose items are strings, a body that is a list)."""
    where = f"{resp.method} {resp.url}: the server answered {resp.what()}"
    if not isinstance(doc, dict):
        raise BadResponse(f"{where} with a JSON {_json_type(doc)}, not a list object: {answer_excerpt(resp.data)}")
    items = doc.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise BadResponse(f"{where} whose items are a JSON {_json_type(items)}, not a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadResponse(f"{where} whose items[{i}] is a JSON {_json_type(item)}, not an object")
    meta = doc.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise BadResponse(f"{where} whose metadata is a JSON {_json_type(meta)}, not an object")
    return items, meta


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
            request_timeout=self.options.request_timeout,
            max_response_bytes=self.options.max_response_bytes,
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
        if resp.status in (301, 302, 303, 307, 308) and resp.status not in ok:
            # kubectl follows redirects anywhere and sends its token along; we follow a read's redirect
            # within this server only (above), and say where any other one pointed
            location = resp.headers.get("location", "")
            where = f" to {answer_excerpt(location.encode(), 120)}" if location else " without a Location"
            raise BadResponse(f"{resp.method} {resp.url}: the server answered {resp.what()}, a redirect{where}; "
                              "not followed (the credentials would go with it)")
        return resp

    def get_raw(self, path: str, *, accept: str | None = None) -> bytes:
        """GET an arbitrary server path (``/version``, ``/openapi/v3``, ...) and return the body."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': {path!r}")
        headers = {"Accept": accept} if accept else None
        return self.request("GET", path, headers=headers).data

    def get_json(self, path: str, *, accept: str | None = None) -> Any:
        """GET an arbitrary server path and parse the JSON answer."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': {path!r}")
        return self.request("GET", path, headers={"Accept": accept} if accept else None).json()

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
            raise BadResponse(f"{ctx.verb} {ctx.target()}: the server answered {resp.what()} with a JSON "
                              f"{_json_type(doc)}, not an object: {answer_excerpt(resp.data)}")
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
        on_meta: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> Iterator[list[dict[str, Any]]]:
        """LIST in pages of at most ``limit`` items (``continue`` tokens), yielding each page's
        items as raw dicts with ``apiVersion`` and ``kind`` filled in (LIST items of built-in
        types lack them). ``namespace``: a name, None for the default namespace, or
        :data:`ALL_NAMESPACES`. ``on_meta`` is given each page's list metadata before its items
        (a WATCH starts from the list's ``resourceVersion``)."""
        if namespace is ALL_NAMESPACES or not res.namespaced:
            ns = None
        else:
            ns = namespace or self.default_namespace
        path = res.path(ns)
        ctx = self._ctx("list", res, path, None, ns)
        kind = res.kind
        token: str | None = None
        # a server that hands out a continue token it handed out before would be listed forever
        seen_tokens: set[str] = set()
        pages = 0
        while True:
            query: dict[str, str | int | bool | None] = {
                "limit": limit if limit > 0 else None,
                "labelSelector": label_selector,
                "fieldSelector": field_selector,
                "continue": token,
            }
            resp = self.request("GET", path, query=query, context=ctx)
            doc = resp.json()
            items, meta = _list_parts(doc, resp)
            pages += 1
            if on_meta is not None:
                on_meta(meta)
            api_version = doc.get("apiVersion") or res.api_version
            for item in items:
                if "kind" not in item:
                    item["kind"] = kind
                if "apiVersion" not in item:
                    item["apiVersion"] = api_version
            yield items
            token = meta.get("continue") or None
            if not token:
                return
            if not isinstance(token, str):
                raise BadResponse(f"list {ctx.target()}: the server answered a continue token that is a "
                                  f"{_json_type(token)}, not a string")
            if token in seen_tokens:
                raise BadResponse(f"list {ctx.target()}: the server answered a continue token it had already "
                                  f"given (after {pages} pages); stopped instead of listing the same pages forever")
            seen_tokens.add(token)

    def open_watch(
        self,
        res: ResourceInfo,
        namespace: str | AllNamespaces | None,
        *,
        resource_version: str,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> Any:
        """Start a WATCH of ``res`` from ``resource_version`` with bookmarks; the answer is returned
        unread (a urllib3 response: read it with ``read1``, close it). The server ends it after
        ``timeout_seconds``; each silence may last that long plus a minute (bookmarks come every
        minute or so). An error answer (410 Gone: the version was compacted) raises its
        :class:`~.errors.ApiError`."""
        if namespace is ALL_NAMESPACES or not res.namespaced:
            ns = None
        else:
            ns = namespace or self.default_namespace
        path = res.path(ns)
        query = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(timeout_seconds), "labelSelector": label_selector,
                 "fieldSelector": field_selector}
        path += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        stream, answer = self._transport.open_stream(path, read_timeout=timeout_seconds + 60.0)
        if answer is not None:
            ctx = self._ctx("watch", res, path.split("?", 1)[0], None, ns)
            if answer.status >= 400:
                raise error_from_response(answer.status, answer.data, ctx)
            raise BadResponse(f"watch {ctx.target()}: the server answered {answer.what()}, not a watch: "
                              f"{answer_excerpt(answer.data)}")
        return stream

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
