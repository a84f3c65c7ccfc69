"""Which objects a command names: kubectl's argument forms, shared by ``show`` and the write commands.

``show`` and the write commands (``migrate``, ``strip-last-applied``, ``handover``, ``reset``)
take the same TYPE/NAME, TYPE [NAME...], TYPE -l SELECTOR forms (:func:`parse_live_args`); the
write commands also take -f manifests and a whole namespace or cluster (:func:`select`, which
turns a :class:`Selection` into :class:`Selected` targets, each named or with the reason it
could not be). Nothing heavy is imported at module level: ``show -i`` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .clusterargs import ClusterArgs
from .errors import UsageError

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..kube.discovery import ResourceInfo
    from ..kube.writes import ObjectTarget

__all__ = ["LiveRequest", "ResolvedTarget", "Selected", "Selection", "parse_live_args", "resolve_targets", "select"]


@dataclass(frozen=True)
class LiveRequest:
    """What to fetch: ``(type, name)`` pairs, or ``(type, None)`` to list a type."""

    targets: list[tuple[str, str | None]]
    selector: str | None


def parse_live_args(args: Sequence[str], selector: str | None, all_namespaces: bool) -> LiveRequest:
    """kubectl's argument forms: ``TYPE/NAME ...``, ``TYPE[,TYPE] [NAME ...]``, ``TYPE -l SEL``."""
    if not args:
        raise UsageError(
            "you must specify the type of resource to get, e.g. 'deployment/web', 'widgets NAME' or '-i FILE'"
        )
    slashed = [a for a in args if "/" in a]
    targets: list[tuple[str, str | None]] = []
    if slashed:
        if len(slashed) != len(args):
            raise UsageError(
                "there is no need to specify a resource type as a separate argument when passing arguments "
                "in resource/name form (e.g. 'kubectl fieldown show resource/<resource_name>' instead of "
                "'kubectl fieldown show resource resource/<resource_name>')"
            )
        for a in args:
            typ, _, name = a.partition("/")
            if not typ or not name or "/" in name:
                raise UsageError(f"arguments in resource/name form must have a single resource and name: {a!r}")
            targets.append((typ, name))
    else:
        types = [t for t in args[0].split(",") if t]
        if not types:
            raise UsageError(f"invalid resource type {args[0]!r}")
        names = list(args[1:])
        if names:
            targets = [(t, n) for t in types for n in names]
        else:
            targets = [(t, None) for t in types]
    if selector is not None and any(n is not None for _, n in targets):
        raise UsageError("name cannot be provided when a selector is specified")
    if all_namespaces and any(n is not None for _, n in targets):
        raise UsageError("a resource cannot be retrieved by name across all namespaces")
    return LiveRequest(targets, selector)


# --- the write commands' targets ---------------------------------------------------------------

# never worth rewriting, and numerous: kubectl leaves them out of "all" too
_SKIPPED_TYPES = frozenset({"events", "events.events.k8s.io"})


@dataclass(frozen=True)
class Selected:
    """An object to write, or why it could not be named (``where`` says which argument)."""

    where: str
    target: ObjectTarget | None = None
    error: BaseException | None = None


@dataclass(frozen=True)
class Selection:
    """The objects a write command names. ``all_objects`` is ``--all``: every object of every type in
    the namespace (``-n``, else the context's) or the cluster (``-A``) — like ``kubectl delete``, a
    write over everything must say so."""

    args: list[str]
    filenames: list[str]
    recursive: bool
    selector: str | None
    cluster: ClusterArgs
    all_objects: bool = False
    manifests: list[str] = field(default_factory=list)
    """``--manifest FILE``: the applier's next manifests of objects named otherwise, for the check only."""

    def validate(self) -> None:
        if self.manifests and self.filenames:
            raise UsageError("--manifest cannot be used with -f: the -f manifests are the next ones already")
        if self.filenames and self.args:
            raise UsageError("when paths, URLs, or stdin is provided as input, you may not specify resource "
                             "arguments as well")
        if self.filenames and self.selector is not None:
            raise UsageError("-l cannot be used with -f: the manifests name the objects")
        if self.all_objects and self.filenames:
            raise UsageError("--all cannot be used with -f: the manifests name the objects")
        if self.all_objects and self.selector is not None:
            raise UsageError("cannot set --all and --selector at the same time")
        if not self.args and not self.filenames and self.selector is None and not self.all_objects:
            where = "the cluster (-A)" if self.cluster.all_namespaces else \
                f"namespace {self.cluster.namespace}" if self.cluster.namespace else "the namespace"
            raise UsageError("name the objects: TYPE/NAME, TYPE [NAME...], -f FILE or -l SELECTOR; to write every "
                             f"object of every type in {where}, say --all")
        if self.args:
            request = parse_live_args(self.args, self.selector, self.cluster.all_namespaces)
            if self.all_objects and any(name is not None for _, name in request.targets):
                raise UsageError("name cannot be provided with --all: it selects every object of the type")


@dataclass(frozen=True)
class ResolvedTarget:
    """One ``(type, name)`` of a :class:`LiveRequest` with its resource type, or why the type is
    not known (``error``; errors that stop every further object are raised instead)."""

    label: str
    name: str | None
    res: ResourceInfo | None = None
    error: Exception | None = None


def resolve_targets(client: ClusterClient, request: LiveRequest) -> Iterator[ResolvedTarget]:
    """Each target of ``request`` with its type resolved through discovery, each type once."""
    from ..kube.errors import KubeError, is_fatal

    resolved: dict[str, ResourceInfo] = {}
    for typ, name in request.targets:
        label = f"{typ}/{name}" if name else typ
        try:
            res = resolved.get(typ)
            if res is None:
                res = resolved[typ] = client.discovery.resolve(typ)
        except KubeError as e:
            if is_fatal(e):
                raise
            yield ResolvedTarget(label, name, error=e)
            continue
        yield ResolvedTarget(label, name, res)


def select(client: ClusterClient, sel: Selection) -> Iterator[Selected]:
    """The objects a selection names. Listed objects carry their LIST copy as the first read."""
    from ..kube.client import ALL_NAMESPACES
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import ObjectTarget

    namespace = sel.cluster.namespace or client.default_namespace
    list_ns: Any = ALL_NAMESPACES if sel.cluster.all_namespaces else namespace

    def listed(res: ResourceInfo, label: str) -> Iterator[Selected]:
        try:
            for page in client.list_pages(res, list_ns, label_selector=sel.selector):
                for item in page:
                    md = item.get("metadata") or {}
                    yield Selected(label, ObjectTarget(res, str(md.get("name")), md.get("namespace"), item))
        except KubeError as e:
            if is_fatal(e):
                raise
            yield Selected(label, error=e)

    if sel.filenames:
        yield from _from_manifests(client, sel, namespace)
        return
    if sel.manifests:
        yield from _with_next_manifests(client, sel, namespace, _named(client, sel, namespace, listed))
        return
    yield from _named(client, sel, namespace, listed)


def _named(client: ClusterClient, sel: Selection, namespace: str,
           listed: Callable[[ResourceInfo, str], Iterator[Selected]]) -> Iterator[Selected]:
    from ..kube.writes import ObjectTarget

    if sel.args:
        request = parse_live_args(sel.args, sel.selector, sel.cluster.all_namespaces)
        for t in resolve_targets(client, request):
            if t.res is None:
                yield Selected(t.label, error=t.error)
            elif t.name is not None:
                yield Selected(t.label, ObjectTarget(t.res, t.name, namespace if t.res.namespaced else None))
            else:
                yield from listed(t.res, t.label)
        return
    seen: set[tuple[str, str]] = set()
    for res in client.discovery.current_resources():
        if (res.group, res.resource) in seen or res.group_resource in _SKIPPED_TYPES:
            continue
        seen.add((res.group, res.resource))
        if not {"list", "patch"} <= res.verbs or "/" in res.resource:
            continue
        if not res.namespaced and not sel.cluster.all_namespaces:
            continue
        yield from listed(res, res.group_resource)


@dataclass(frozen=True)
class _Document:
    """A manifest document, resolved to its type; ``manifest`` has the namespace defaulted."""

    where: str
    name: str
    namespace: str | None
    res: ResourceInfo
    manifest: dict[str, Any]


@dataclass(frozen=True)
class _Unreadable:
    """A file or document that names no object: ``where`` it is and the whole one-line ``message``."""

    where: str
    message: str
    error: Exception


def _documents(client: ClusterClient, paths: Sequence[str], recursive: bool,
               namespace: str) -> Iterator[_Document | _Unreadable]:
    """The documents of manifest files (``-f``, ``--manifest``), each resolved to a type, in file order."""
    from ..kube.errors import KubeError, is_fatal
    from ..manifests.sources import SourceError, live_name
    from .files import load_sources

    for path in paths:
        result = load_sources(path, recursive=recursive)
        for err in result.errors:
            yield _Unreadable(str(err).removesuffix(f": {err.reason}"), str(err), err)
        for doc in result.documents:
            try:
                named = live_name(doc)
            except SourceError as e:
                yield _Unreadable(doc.where, str(e), e)
                continue
            try:
                res = client.discovery.resolve_kind(named.api_version, named.kind)
            except KubeError as e:
                if is_fatal(e):
                    raise
                yield _Unreadable(doc.where, f"{doc.where}: {e}", e)
                continue
            manifest = dict(doc.obj)
            ns = None
            if res.namespaced:
                ns = named.namespace or namespace
                manifest["metadata"] = {**(manifest.get("metadata") or {}), "namespace": ns}
            yield _Document(doc.where, named.name, ns, res, manifest)


def _from_manifests(client: ClusterClient, sel: Selection, namespace: str) -> Iterator[Selected]:
    from ..kube.writes import ObjectTarget

    for doc in _documents(client, sel.filenames, sel.recursive, namespace):
        if isinstance(doc, _Unreadable):
            yield Selected(doc.where, error=doc.error)
        else:
            yield Selected(doc.where, ObjectTarget(doc.res, doc.name, doc.namespace, manifest=doc.manifest))


#: (group, kind, namespace or "", name): one object whichever served version names it
_ObjectName = tuple[str, str, str, str]


def _with_next_manifests(client: ClusterClient, sel: Selection, namespace: str,
                         selected: Iterator[Selected]) -> Iterator[Selected]:
    """The objects ``selected`` names, each with its document of the ``--manifest`` files as the
    manifest its applier applies next (what ``-f`` gives, without selecting by it). An object no
    document names is an error of its own: checked without the manifest the user meant, a write
    could be refused, or let through, on a guess."""
    import dataclasses

    from ..manifests.sources import SourceError

    by_name = _next_manifests(client, sel, namespace)
    named = ", ".join(sel.manifests)
    for s in selected:
        t = s.target
        if t is None:
            yield s
            continue
        manifest = by_name.get((t.res.group, t.res.kind, t.namespace or "", t.name))
        if manifest is None:
            yield Selected(t.describe(), error=SourceError(named, f"no document names {t.describe()}"))
            continue
        yield Selected(s.where, dataclasses.replace(t, manifest=manifest))


def _next_manifests(client: ClusterClient, sel: Selection, namespace: str) -> dict[_ObjectName, dict[str, Any]]:
    """The ``--manifest`` documents by the object they name; a document that cannot be read or
    names no known type stops the command (nothing is written on a manifest half read)."""
    out: dict[_ObjectName, dict[str, Any]] = {}
    for doc in _documents(client, sel.manifests, sel.recursive, namespace):
        if isinstance(doc, _Unreadable):
            raise UsageError(f"--manifest {doc.message}")
        out[(doc.res.group, doc.res.kind, doc.namespace or "", doc.name)] = doc.manifest
    return out
