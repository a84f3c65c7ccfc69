"""OpenAPI v3 documents of the server, per group-version, cached on disk by content hash.

``GET /openapi/v3`` lists every group-version with a ``serverRelativeURL`` that carries the
document's hash (``/openapi/v3/apis/apps/v1?hash=...``). The document is cached as
``<cache root>/<server>/openapi/v3/apis/apps/v1-<hash>.json`` (core: ``api/v1-<hash>.json``),
so it is downloaded again only when the server's hash changes, as kubectl does. The index
itself is small and fetched once per :class:`OpenAPIV3` instance.

Turning a document into schemas is :mod:`kubectl_fieldown.schema`'s job; this module only
fetches and caches.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, urlsplit

from . import _json
from .cache import server_cache_dir, write_bytes_atomic
from .errors import KubeError, NotFound, RequestContext

if TYPE_CHECKING:
    from .types import HTTPResponse, Requester

__all__ = ["OpenAPIV3", "fetch_openapi_v3", "openapi_v3_key"]

_SAFE_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SAFE_HASH = re.compile(r"^[A-Za-z0-9]+$")


def openapi_v3_key(group_version: str) -> str:
    """The index key of a group-version: ``apps/v1`` -> ``apis/apps/v1``, ``v1`` -> ``api/v1``;
    keys already in that form (``apis/...``, ``api/...``, ``version``) pass through."""
    gv = group_version.strip().strip("/")
    if gv.startswith(("apis/", "api/")) or gv in ("api", "apis", "version"):
        return gv
    if gv.startswith("openapi/v3/"):
        return gv[len("openapi/v3/"):]
    return f"apis/{gv}" if "/" in gv else f"api/{gv}"


def _hash_of(url: str) -> str | None:
    values = parse_qs(urlsplit(url).query).get("hash")
    h = values[0] if values else None
    return h if h and _SAFE_HASH.match(h) else None


class OpenAPIV3:
    """Fetches OpenAPI v3 documents of one :class:`~.client.ClusterClient`'s server.

    ``last_source`` says where the last :meth:`document` came from: ``"memory"``, ``"disk"``
    or ``"server"``."""

    def __init__(self, client: Requester, *, cache_dir: Path | None = None, use_disk_cache: bool = True) -> None:
        self._client = client
        self._dir = (cache_dir if cache_dir is not None else server_cache_dir(client.server)) / "openapi" / "v3"
        self._use_disk = use_disk_cache
        self._paths: dict[str, str] | None = None
        self._memory: dict[str, tuple[str | None, dict[str, Any]]] = {}
        self.last_source: str | None = None

    @property
    def cache_dir(self) -> Path:
        return self._dir

    def paths(self, *, refresh: bool = False) -> dict[str, str]:
        """The index: key (``apis/example.com/v1``) -> serverRelativeURL (with ``?hash=``)."""
        if self._paths is None or refresh:
            ctx = RequestContext(verb="get", server=self._client.server, path="/openapi/v3")
            try:
                doc = self._client.request("GET", "/openapi/v3", context=ctx).json()
            except NotFound:
                raise KubeError(f"the API server at {self._client.server} does not serve OpenAPI v3 "
                                "(/openapi/v3 not found; Kubernetes >= 1.24 does)") from None
            paths = doc.get("paths") if isinstance(doc, Mapping) else None
            if not isinstance(paths, Mapping):
                raise KubeError(f"unexpected OpenAPI v3 index from {self._client.server}: no 'paths'")
            self._paths = {str(k): str((v or {}).get("serverRelativeURL") or "") for k, v in paths.items()
                           if isinstance(v, Mapping)}
        return dict(self._paths)

    def group_versions(self) -> list[str]:
        """Group-versions with a document: ``v1``, ``apps/v1``, ``example.com/v1``, ..."""
        out = []
        for key in self.paths():
            if key.startswith("apis/") and key.count("/") == 2:
                out.append(key[len("apis/"):])
            elif key.startswith("api/") and key.count("/") == 1:
                out.append(key[len("api/"):])
        return out

    def document(self, group_version: str) -> dict[str, Any]:
        """The parsed OpenAPI v3 document of ``group_version`` (``apps/v1``, ``v1``,
        ``example.com/v1``). Raises :class:`~.errors.NotFound` if the server has none."""
        key = openapi_v3_key(group_version)
        url = self.paths().get(key)
        if not url:
            raise NotFound(f'the server has no OpenAPI v3 document for "{group_version}" '
                           f"(no {key} in /openapi/v3)", code=404, reason="NotFound")
        h = _hash_of(url)
        mem = self._memory.get(key)
        if mem is not None and h is not None and mem[0] == h:
            self.last_source = "memory"
            return mem[1]
        cache_file = self._cache_file(key, h)
        if cache_file is not None:
            doc = self._read(cache_file)
            if doc is not None:
                self._memory[key] = (h, doc)
                self.last_source = "disk"
                return doc
        resp, h = self._download(key, url)
        data = resp.data
        doc = resp.json()
        if not isinstance(doc, dict):
            raise KubeError(f"unexpected OpenAPI v3 document for {group_version} from {self._client.server}")
        cache_file = self._cache_file(key, h)
        if cache_file is not None:
            # only the newest document per group-version is worth keeping
            for old in cache_file.parent.glob(f"{cache_file.name.rsplit('-', 1)[0]}-*.json"):
                if old != cache_file:
                    with contextlib.suppress(OSError):
                        old.unlink()
            write_bytes_atomic(cache_file, data)
        self._memory[key] = (h, doc)
        self.last_source = "server"
        return doc

    def _download(self, key: str, url: str) -> tuple[HTTPResponse, str | None]:
        """GET the document; the server redirects (301) an outdated hash to the current one."""
        for _ in range(3):
            ctx = RequestContext(verb="get", server=self._client.server, path=url)
            resp = self._client.request("GET", url, context=ctx, ok=(301, 302, 303, 307, 308))
            if resp.status < 300:
                return resp, _hash_of(url)
            location = resp.headers.get("location", "")
            if not location.startswith("/openapi/v3/"):
                break  # only follow to the same server: our credentials go with the request
            url = location
        raise KubeError(f"the server keeps redirecting the OpenAPI v3 document {key} (last: {url})")

    def _cache_file(self, key: str, h: str | None) -> Path | None:
        if not self._use_disk or h is None:
            return None
        parts = key.split("/")
        if not all(_SAFE_PART.match(p) and p not in (".", "..") for p in parts):
            return None
        return self._dir.joinpath(*parts[:-1], f"{parts[-1]}-{h}.json")

    @staticmethod
    def _read(path: Path) -> dict[str, Any] | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            doc = _json.loads(data)
        except ValueError:
            return None  # a damaged cache file is a miss; the download overwrites it
        return doc if isinstance(doc, dict) else None


class _WithOpenAPI(Protocol):
    """A client with an OpenAPI v3 fetcher (a :class:`~.client.ClusterClient`)."""

    @property
    def openapi(self) -> OpenAPIV3: ...


def fetch_openapi_v3(client: _WithOpenAPI, group_version: str) -> dict[str, Any]:
    """The OpenAPI v3 document of ``group_version`` (via the client's cached fetcher)."""
    return client.openapi.document(group_version)
