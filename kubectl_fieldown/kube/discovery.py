"""Discovery: which resource types the server has, and what a user's type argument means.

Resolution follows kubectl (``ParseResourceArg`` / ``ParseKindArg`` and the priority REST
mapper): ``pods``, ``pod``, ``po``, ``Pod``, ``deployments.apps``, ``deployment.v1.apps``,
``widgets.example.com``, ``Widget.example.com`` and ``TYPE/NAME``; the core group wins, then
the groups in the server's order, and within a group its preferred version.

Sources, fastest first: this process's memory, the disk cache
(``<cache root>/<server>/discovery.json``, 6 h like kubectl, revalidated with ETags after that),
the server's aggregated discovery (``/api``, ``/apis`` as APIGroupDiscoveryList v2), and the
legacy per-group-version documents for servers without it. When a name is not found in cached
data, the data is refreshed once (a CRD may have been created since).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from ..base.record import Record
from . import _json
from .cache import read_json, server_cache_dir, write_bytes_atomic
from .errors import KubeError, RequestContext, UnknownResourceType

if TYPE_CHECKING:
    from .types import Requester

__all__ = [
    "AGGREGATED_ACCEPT",
    "DEFAULT_TTL",
    "Discovery",
    "ResourceInfo",
    "cached_resources",
    "find_kind",
    "find_resource",
    "parse_aggregated",
    "parse_resource_list",
    "split_type_name",
]

#: kubectl's discovery cache lifetime
DEFAULT_TTL = 6 * 3600.0

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)

_CACHE_FORMAT = 1
_ROOTS = ("/api", "/apis")


class ResourceInfo(Record):
    """One resource type in one group-version, as discovery describes it."""

    __slots__ = ("categories", "group", "kind", "namespaced", "resource", "short_names", "singular", "subresources",
                 "verbs", "version")
    group: Final[str]  # "" for the core group
    version: Final[str]
    resource: Final[str]  # the plural, lower-case: "widgets"
    kind: Final[str]
    namespaced: Final[bool]
    verbs: Final[frozenset[str]]
    short_names: Final[tuple[str, ...]]
    singular: Final[str]
    subresources: Final[frozenset[str]]
    categories: Final[tuple[str, ...]]

    def __init__(
        self,
        group: str,
        version: str,
        resource: str,
        kind: str,
        namespaced: bool,
        verbs: frozenset[str] = frozenset(),
        short_names: tuple[str, ...] = (),
        singular: str = "",
        subresources: frozenset[str] = frozenset(),
        categories: tuple[str, ...] = (),
    ) -> None:
        self.group = group
        self.version = version
        self.resource = resource
        self.kind = kind
        self.namespaced = namespaced
        self.verbs = verbs
        self.short_names = short_names
        self.singular = singular
        self.subresources = subresources
        self.categories = categories

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``widgets.example.com`` (``pods`` for the core group): how kubectl names a type."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def singular_name(self) -> str:
        # older servers leave singularName empty; kubectl then uses the lower-case kind
        return self.singular or self.kind.lower()

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The REST path: ``/apis/example.com/v1/namespaces/ns/widgets/w1/status``. Without
        ``namespace`` a namespaced type gives its all-namespaces collection; for cluster-scoped
        types ``namespace`` is ignored."""
        out = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            out += f"/namespaces/{quote(namespace, safe='')}"
        out += f"/{self.resource}"
        if name is not None:
            if not name:
                raise ValueError(f"empty object name for {self.group_resource}")
            out += f"/{quote(name, safe='')}"
        if subresource:
            if name is None:
                raise ValueError("a subresource needs an object name")
            out += f"/{subresource}"
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group, "version": self.version, "resource": self.resource, "kind": self.kind,
            "namespaced": self.namespaced, "verbs": sorted(self.verbs), "shortNames": list(self.short_names),
            "singular": self.singular, "subresources": sorted(self.subresources),
            "categories": list(self.categories),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ResourceInfo:
        return cls(
            group=str(d["group"]), version=str(d["version"]), resource=str(d["resource"]), kind=str(d["kind"]),
            namespaced=bool(d["namespaced"]), verbs=frozenset(d.get("verbs") or ()),
            short_names=tuple(d.get("shortNames") or ()), singular=str(d.get("singular") or ""),
            subresources=frozenset(d.get("subresources") or ()), categories=tuple(d.get("categories") or ()),
        )


# --------------------------------------------------------------------------------------------
# parsing discovery documents


def parse_aggregated(doc: Mapping[str, Any]) -> list[ResourceInfo]:
    """Resources of an APIGroupDiscoveryList (v2 or v2beta1), groups in the server's order and
    each group's versions preferred first (the order the server lists them)."""
    out: list[ResourceInfo] = []
    for item in doc.get("items") or ():
        group = str((item.get("metadata") or {}).get("name") or "")
        for ver in item.get("versions") or ():
            version = str(ver.get("version") or "")
            for r in ver.get("resources") or ():
                plural = str(r.get("resource") or "")
                if not plural:
                    continue
                kind = str((r.get("responseKind") or {}).get("kind") or "")
                out.append(ResourceInfo(
                    group=group, version=version, resource=plural, kind=kind,
                    namespaced=r.get("scope") == "Namespaced",
                    verbs=frozenset(r.get("verbs") or ()),
                    short_names=tuple(r.get("shortNames") or ()),
                    singular=str(r.get("singularResource") or ""),
                    subresources=frozenset(str(s.get("subresource")) for s in r.get("subresources") or ()
                                           if s.get("subresource")),
                    categories=tuple(r.get("categories") or ()),
                ))
    return out


def parse_resource_list(group: str, version: str, doc: Mapping[str, Any]) -> list[ResourceInfo]:
    """Resources of a legacy APIResourceList (``/api/v1``, ``/apis/<group>/<version>``);
    ``widgets/status``-style entries become the parent's subresources."""
    subs: dict[str, set[str]] = {}
    mains: list[Mapping[str, Any]] = []
    for r in doc.get("resources") or ():
        name = str(r.get("name") or "")
        if "/" in name:
            parent, sub = name.split("/", 1)
            subs.setdefault(parent, set()).add(sub)
        elif name:
            mains.append(r)
    return [
        ResourceInfo(
            group=group, version=version, resource=str(r["name"]), kind=str(r.get("kind") or ""),
            namespaced=bool(r.get("namespaced")), verbs=frozenset(r.get("verbs") or ()),
            short_names=tuple(r.get("shortNames") or ()), singular=str(r.get("singularName") or ""),
            subresources=frozenset(subs.get(str(r["name"]), ())), categories=tuple(r.get("categories") or ()),
        )
        for r in mains
    ]


# --------------------------------------------------------------------------------------------
# resolving names (pure)


def split_type_name(arg: str) -> tuple[str, str | None]:
    """``widget/w1`` -> (``widget``, ``w1``); ``widgets`` -> (``widgets``, None)."""
    if "/" in arg:
        typ, name = arg.split("/", 1)
        if not typ or not name or "/" in name:
            raise ValueError(f"arguments in resource/name form must have a single resource and name: {arg!r}")
        return typ, name
    return arg, None


def _pick(candidates: Sequence[ResourceInfo], name: str) -> ResourceInfo | None:
    # plural/singular beat short names, which beat kinds; the first (highest priority) wins
    for match in (
        lambda r: r.resource == name or r.singular_name == name,
        lambda r: name in r.short_names,
        lambda r: r.kind.lower() == name,
    ):
        for r in candidates:
            if match(r):
                return r
    return None


def find_resource(resources: Sequence[ResourceInfo], arg: str) -> ResourceInfo | None:
    """The resource type ``arg`` names, like kubectl: first as ``resource.version.group`` (two
    or more dots), then ``resource.group``, then a bare name in any group; each of these matches
    the plural, singular, a short name or the kind (case-insensitive)."""
    a = arg.strip().lower()
    if not a:
        return None
    parts = a.split(".", 2)
    attempts: list[tuple[str, str | None, str | None]] = []
    if len(parts) == 3:
        attempts.append((parts[0], parts[1], parts[2]))
    if len(parts) >= 2:
        attempts.append((parts[0], None, a.split(".", 1)[1]))
    else:
        attempts.append((a, None, None))
    for name, version, group in attempts:
        candidates = [r for r in resources
                      if (group is None or r.group == group) and (version is None or r.version == version)]
        hit = _pick(candidates, name)
        if hit is not None:
            return hit
    return None


def find_kind(resources: Sequence[ResourceInfo], api_version: str, kind: str) -> ResourceInfo | None:
    """The resource of ``kind`` in ``api_version`` (``example.com/v1``, ``v1``), as written in a
    manifest; an exact kind match wins over a case-insensitive one."""
    group, _, version = api_version.rpartition("/")
    in_gv = [r for r in resources if r.group == group and r.version == version]
    for r in in_gv:
        if r.kind == kind:
            return r
    lower = kind.lower()
    for r in in_gv:
        if r.kind.lower() == lower:
            return r
    return None


# --------------------------------------------------------------------------------------------
# fetching and caching


class _RootData(Record, mutable=True):
    __slots__ = ("etag", "resources", "status")
    status: int  # 200, or 404 when the server has no such root (the lab server has no /api)
    etag: str | None
    resources: list[ResourceInfo]

    def __init__(self, status: int, etag: str | None, resources: list[ResourceInfo] | None = None) -> None:
        self.status = status
        self.etag = etag
        self.resources = resources if resources is not None else []


class _Snapshot(Record, mutable=True):
    __slots__ = ("fetched_at", "roots")
    fetched_at: float
    roots: dict[str, _RootData]

    def __init__(self, fetched_at: float, roots: dict[str, _RootData]) -> None:
        self.fetched_at = fetched_at
        self.roots = roots

    @property
    def resources(self) -> list[ResourceInfo]:
        return [r for root in _ROOTS if root in self.roots for r in self.roots[root].resources]


class Discovery:
    """Discovery of one :class:`~.client.ClusterClient`'s server.

    ``source`` tells where the current data came from: ``"disk"``, ``"server"`` (a full
    fetch) or ``"revalidated"`` (the server answered 304 Not Modified to our ETags)."""

    def __init__(
        self,
        client: Requester,
        *,
        ttl: float = DEFAULT_TTL,
        cache_dir: Path | None = None,
        use_disk_cache: bool = True,
        aggregated: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``aggregated=False`` asks for legacy discovery only (as a server without aggregated
        discovery would answer); ``clock`` exists for TTL tests."""
        self._client = client
        self._accept = AGGREGATED_ACCEPT if aggregated else "application/json"
        self._ttl = ttl
        self._use_disk = use_disk_cache
        self._cache_file = (cache_dir if cache_dir is not None else server_cache_dir(client.server)) / "discovery.json"
        self._clock = clock
        self._snapshot: _Snapshot | None = None
        self._fresh_from_server = False
        self.source: str | None = None

    @property
    def cache_file(self) -> Path:
        return self._cache_file

    # -- public -------------------------------------------------------------------------------

    def resources(self) -> list[ResourceInfo]:
        """Every resource type, highest resolution priority first."""
        return self._load().resources

    def current_resources(self) -> list[ResourceInfo]:
        """Every resource type the server has now, for a command that goes through them all
        (``audit`` without ``--kinds``, ``--all``): the disk cache is revalidated first (ETags: an
        unchanged server answers two 304s), as ``kubectl api-resources`` does, so that a type
        created since it was written (an operator's CRD installed a minute ago) is not left out.
        When the server does not answer discovery (refused to these credentials, which a real
        cluster grants to every authenticated user, or unreachable), the cache is used as it is,
        and left as it was."""
        if self._fresh_from_server:
            return self.resources()
        cached = self._snapshot or self._read_disk()
        try:
            snap = self._fetch(cached)
        except KubeError:
            if cached is None:
                raise
            self._snapshot = cached
            self.source = "disk"
            return cached.resources
        return self._keep(snap).resources

    def resolve(self, arg: str) -> ResourceInfo:
        """The resource type a user typed (``po``, ``deployments.apps``, ``Widget``, ...);
        :class:`~.errors.UnknownResourceType` if the server has none."""
        typ = arg.strip()
        hit = find_resource(self._load().resources, typ)
        if hit is None and self._refresh_once():
            hit = find_resource(self._load().resources, typ)
        if hit is None:
            raise UnknownResourceType(typ)
        return hit

    def resolve_arg(self, arg: str) -> tuple[ResourceInfo, str | None]:
        """``TYPE/NAME`` or ``TYPE``: the resource type and the name (None without one)."""
        try:
            typ, name = split_type_name(arg)
        except ValueError as e:
            raise UnknownResourceType(arg, str(e)) from None
        return self.resolve(typ), name

    def resolve_kind(self, api_version: str, kind: str) -> ResourceInfo:
        """The resource for an object read from a manifest (its apiVersion and kind)."""
        hit = find_kind(self._load().resources, api_version, kind)
        if hit is None and self._refresh_once():
            hit = find_kind(self._load().resources, api_version, kind)
        if hit is None:
            raise UnknownResourceType(
                f"{kind}.{api_version}",
                f'no matches for kind "{kind}" in version "{api_version}" (the server doesn\'t have that type)')
        return hit

    def invalidate(self) -> None:
        """Forget the in-memory data and mark the disk cache stale (its ETags are kept, so the
        next load costs two 304 answers if nothing changed)."""
        if self._snapshot is not None:
            self._snapshot.fetched_at = 0.0
            self._write_disk(self._snapshot)
        else:
            snap = self._read_disk()
            if snap is not None:
                snap.fetched_at = 0.0
                self._write_disk(snap)
        self._snapshot = None
        self._fresh_from_server = False

    def refresh(self) -> list[ResourceInfo]:
        """Ask the server now (with ETags, so an unchanged server answers 304)."""
        self.invalidate()
        return self.resources()

    # -- internals ----------------------------------------------------------------------------

    def _refresh_once(self) -> bool:
        if self._fresh_from_server:
            return False
        self.refresh()
        return True

    def _load(self) -> _Snapshot:
        if self._snapshot is not None:
            return self._snapshot
        cached = self._read_disk()
        now = self._clock()
        if cached is not None and 0 <= now - cached.fetched_at < self._ttl:
            self._snapshot = cached
            self.source = "disk"
            return cached
        return self._keep(self._fetch(cached))

    def _keep(self, snap: _Snapshot) -> _Snapshot:
        """``snap``, just fetched from the server: this process's data from now on, and the disk's."""
        self._snapshot = snap
        self._fresh_from_server = True
        self._write_disk(snap)
        return snap

    def _fetch(self, previous: _Snapshot | None) -> _Snapshot:
        roots: dict[str, _RootData] = {}
        all_revalidated = True
        for root in _ROOTS:
            old = previous.roots.get(root) if previous is not None else None
            data, revalidated = self._fetch_root(root, old)
            roots[root] = data
            all_revalidated = all_revalidated and revalidated
        self.source = "revalidated" if all_revalidated else "server"
        return _Snapshot(fetched_at=self._clock(), roots=roots)

    def _fetch_root(self, root: str, old: _RootData | None) -> tuple[_RootData, bool]:
        headers = {"Accept": self._accept}
        if old is not None and old.etag:
            headers["If-None-Match"] = old.etag
        ctx = RequestContext(verb="get", server=self._client.server, path=root)
        resp = self._client.request("GET", root, headers=headers, context=ctx, ok=(404,))
        if resp.status == 304 and old is not None:
            return old, True
        if resp.status == 404:
            # a server without the core API (this project's lab) or without any groups
            return _RootData(status=404, etag=None), old is not None and old.status == 404
        doc = resp.json()
        if not isinstance(doc, Mapping):
            return _RootData(status=resp.status, etag=None), False
        if doc.get("kind") == "APIGroupDiscoveryList":
            return _RootData(status=200, etag=resp.headers.get("etag"), resources=parse_aggregated(doc)), False
        return _RootData(status=200, etag=None, resources=self._legacy(root, doc)), False

    def _legacy(self, root: str, doc: Mapping[str, Any]) -> list[ResourceInfo]:
        """Per-group-version discovery for servers that do not serve aggregated discovery."""
        gvs: list[tuple[str, str]] = []
        if root == "/api":
            gvs = [("", str(v)) for v in doc.get("versions") or ()]
        else:
            for g in doc.get("groups") or ():
                name = str(g.get("name") or "")
                preferred = str((g.get("preferredVersion") or {}).get("version") or "")
                versions = [str(v.get("version")) for v in g.get("versions") or () if v.get("version")]
                if preferred in versions:
                    versions.remove(preferred)
                    versions.insert(0, preferred)
                gvs.extend((name, v) for v in versions)

        def fetch(gv: tuple[str, str]) -> list[ResourceInfo]:
            group, version = gv
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            # an unavailable aggregated API (503) must not hide every other group
            resp = self._client.request("GET", path, ok=(404, 500, 502, 503, 504),
                                        context=RequestContext(verb="get", server=self._client.server, path=path))
            if resp.status != 200:
                return []
            sub = resp.json()
            return parse_resource_list(group, version, sub) if isinstance(sub, Mapping) else []

        if len(gvs) <= 1:
            results = [fetch(gv) for gv in gvs]
        else:
            from concurrent.futures import ThreadPoolExecutor  # only old servers get here

            with ThreadPoolExecutor(max_workers=min(8, len(gvs))) as pool:
                results = list(pool.map(fetch, gvs))
        return [r for rs in results for r in rs]

    # -- disk ----------------------------------------------------------------------------------

    def _read_disk(self) -> _Snapshot | None:
        if not self._use_disk:
            return None
        return _read_snapshot(self._cache_file, self._client.server)

    def _write_disk(self, snap: _Snapshot) -> None:
        if not self._use_disk:
            return
        doc = {
            "format": _CACHE_FORMAT,
            "server": self._client.server,
            "fetchedAt": snap.fetched_at,
            "roots": {
                root: {"status": d.status, "etag": d.etag, "resources": [r.to_json() for r in d.resources]}
                for root, d in snap.roots.items()
            },
        }
        write_bytes_atomic(self._cache_file, _json.dumps(doc))


def _read_snapshot(path: Path, server: str) -> _Snapshot | None:
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("format") != _CACHE_FORMAT or doc.get("server") != server:
        return None
    try:
        roots = {
            root: _RootData(status=int(d["status"]), etag=d.get("etag"),
                            resources=[ResourceInfo.from_json(r) for r in d.get("resources") or ()])
            for root, d in (doc.get("roots") or {}).items()
        }
        return _Snapshot(fetched_at=float(doc["fetchedAt"]), roots=roots)
    except (KeyError, TypeError, ValueError):
        return None


def cached_resources(server: str, *, ttl: float = DEFAULT_TTL, cache_dir: Path | None = None,
                     clock: Callable[[], float] = time.time) -> list[ResourceInfo] | None:
    """The resource types of ``server`` from the disk cache while it is fresh, else None — without a
    client, a kubeconfig loader or the kubernetes package (shell completion answers from it at each
    TAB, as kubectl does from its discovery cache)."""
    snap = _read_snapshot((cache_dir if cache_dir is not None else server_cache_dir(server)) / "discovery.json",
                          server)
    if snap is None or not 0 <= clock() - snap.fetched_at < ttl:
        return None
    return snap.resources
