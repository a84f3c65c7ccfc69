"""What ``kubectl fieldown audit`` reads from one cluster: which types (the scope), the ``-f``
manifests its next apply is predicted from, and the scan that streams every object through the
audit rules. :mod:`.audit` (the command) and :mod:`.fleet` (many contexts) both use it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..base.record import Record
from .errors import UsageError, whole_number

if TYPE_CHECKING:
    from ..audit import AuditContext, Finding, ObjectKey
    from ..fieldmanager import ResourceRules
    from ..kube.client import AllNamespaces, ClusterClient
    from ..kube.discovery import ResourceInfo
    from ..kube.kindrules import KindRules
    from ..kube.stream import PageStream
    from ..manifests.sources import InputDocument
    from .auditjobs import ObjectJobs

# The engine's modules (kind rules, schemas, the audit rules) are imported where they are used, not
# here: the audit starts its LIST before loading them, so that a cold start's imports overlap the
# server's first pages (fleet.audit_cluster).

__all__ = ["DEFAULT_EXCLUDED", "Manifests", "ScanResult", "scan", "select_types"]

#: listed only when named with --kinds: events are written by controllers, never applied, and
#: are usually the largest collections of a cluster (the two types are the same objects)
DEFAULT_EXCLUDED = frozenset({"events", "events.events.k8s.io"})


# --- scope -----------------------------------------------------------------------------------------


def select_types(resources: Sequence[ResourceInfo], all_namespaces: bool) -> list[ResourceInfo]:
    """The types a plain audit scans: listable and patchable (nothing can apply to the others), the
    preferred version of each, no events; cluster-scoped types only with ``-A``."""
    out: list[ResourceInfo] = []
    seen: set[str] = set()
    for r in resources:
        if r.group_resource in seen:
            continue  # discovery lists each group's preferred version first
        seen.add(r.group_resource)
        if not {"list", "patch"} <= r.verbs or r.group_resource in DEFAULT_EXCLUDED:
            continue
        if not r.namespaced and not all_namespaces:
            continue
        out.append(r)
    return out


def _parse_kinds(values: Sequence[str]) -> list[str]:
    return [t.strip() for v in values for t in v.split(",") if t.strip()]


def _resolve_kinds(client: ClusterClient, names: Sequence[str]) -> list[ResourceInfo]:
    from ..kube.errors import UnknownResourceType

    out: list[ResourceInfo] = []
    for n in names:
        try:
            r = client.discovery.resolve(n)
        except UnknownResourceType as e:
            raise UsageError(f"--kinds: {e}") from None
        if "list" not in r.verbs:
            raise UsageError(f"--kinds: {r.group_resource} cannot be listed")
        if r not in out:
            out.append(r)
    return out


def _parse_concurrency(text: str) -> int:
    return whole_number(text, "--concurrency", 1, 32)


def _parse_jobs(text: str) -> int | None:
    """``--jobs``: a number of processes (1-64), or None for ``auto``."""
    if text.strip().lower() == "auto":
        return None
    return whole_number(text, "--jobs", 1, 64, or_else="auto")


# --- manifests for predicted conflicts ---------------------------------------------------------------


class Manifests(Record, mutable=True):
    """The ``-f`` manifests by live-object key, with the engine rules of each kind."""

    __slots__ = ("by_key", "resources", "rules", "sources")
    by_key: dict[ObjectKey, dict[str, Any]]
    resources: dict[ObjectKey, ResourceInfo]
    rules: dict[tuple[str, str], ResourceRules]
    sources: dict[ObjectKey, InputDocument]
    """Where each manifest was read (``-o sarif`` points at its lines)."""

    def __init__(
        self,
        by_key: dict[ObjectKey, dict[str, Any]] | None = None,
        resources: dict[ObjectKey, ResourceInfo] | None = None,
        rules: dict[tuple[str, str], ResourceRules] | None = None,
        sources: dict[ObjectKey, InputDocument] | None = None,
    ) -> None:
        self.by_key = by_key if by_key is not None else {}
        self.resources = resources if resources is not None else {}
        self.rules = rules if rules is not None else {}
        self.sources = sources if sources is not None else {}


def _read_manifests(paths: Sequence[str], recursive: bool) -> list[InputDocument]:
    from .files import load_sources

    docs: list[InputDocument] = []
    for p in paths:
        result = load_sources(p, recursive=recursive)
        if result.errors:
            raise UsageError(str(result.errors[0]))
        for d in result.documents:
            md = d.obj.get("metadata")
            md = md if isinstance(md, Mapping) else {}
            missing = [k for k, v in (("apiVersion", d.obj.get("apiVersion")), ("kind", d.obj.get("kind")),
                                      ("metadata.name", md.get("name"))) if not v]
            if missing:
                raise UsageError(f"{d.where}: a manifest to apply needs {' and '.join(missing)}")
            docs.append(d)
    return docs


def _load_manifests(client: ClusterClient, docs: Sequence[InputDocument], flag_namespace: str | None,
                    kind_rules: KindRules) -> Manifests:
    from ..kube.errors import UnknownResourceType
    from ..schema.types import GroupVersionKind

    out = Manifests()
    for source in docs:
        doc = source.obj
        api_version, kind = str(doc["apiVersion"]), str(doc["kind"])
        try:
            res = client.discovery.resolve_kind(api_version, kind)
        except UnknownResourceType:
            continue  # the applier would create the type first: there is no live object to conflict with
        md = dict(doc.get("metadata") or {})
        ns = ""
        if res.namespaced:
            ns = str(md.get("namespace") or flag_namespace or client.default_namespace)
            md["namespace"] = ns
        key: ObjectKey = (api_version, kind, ns, str(md["name"]))
        out.by_key[key] = {**doc, "metadata": md}
        out.sources[key] = source
        out.resources[key] = res
        if (api_version, kind) not in out.rules:
            out.rules[(api_version, kind)] = kind_rules.rules(GroupVersionKind.from_api_version(api_version, kind),
                                                              "status" in res.subresources, res)
    return out


class _RulesByKind:
    """Each kind's engine rules, looked up once, on first need (an audit meets few kinds)."""

    def __init__(self, client: ClusterClient, kind_rules: KindRules,
                 known: dict[tuple[str, str], ResourceRules]) -> None:
        self._client = client
        self._kind_rules = kind_rules
        self._known: dict[tuple[str, str], ResourceRules | None] = dict(known)

    def __call__(self, api_version: str, kind: str) -> ResourceRules | None:
        key = (api_version, kind)
        if key not in self._known:
            from ..kube.errors import KubeError
            from ..kube.stream import FATAL_ERRORS
            from ..schema.types import GroupVersionKind

            try:
                res = self._client.discovery.resolve_kind(api_version, kind)
                rules: ResourceRules | None = self._kind_rules.rules(
                    GroupVersionKind.from_api_version(api_version, kind), "status" in res.subresources, res)
            except FATAL_ERRORS:
                raise
            except KubeError:
                rules = None
            if rules is not None and rules.schema.deduced:
                rules = None  # a deduced schema makes every list atomic: a fix checked on it proves nothing
            self._known[key] = rules
        return self._known[key]

    def knows(self, api_version: str, kind: str) -> bool:
        """Whether the kind's rules are at hand (no lookup on the cluster to answer)."""
        return (api_version, kind) in self._known


def _now() -> str:
    from ..ownership.managedfields import format_time

    return format_time(time.time())


# --- the scan --------------------------------------------------------------------------------------


class ScanResult(Record, mutable=True):
    __slots__ = ("complete_types", "elsewhere", "findings", "interrupted", "objects", "objects_by_type",
                 "seen_manifests")
    findings: list[Finding]
    objects: int
    objects_by_type: dict[str, int]
    complete_types: set[str]
    seen_manifests: set[ObjectKey]
    elsewhere: set[ObjectKey]
    """Manifests whose object the scan listed at another served version: counted, not audited there —
    the manifest's apply is at its own version, so the object is read and audited at that one."""
    interrupted: bool

    def __init__(
        self,
        findings: list[Finding] | None = None,
        objects: int = 0,
        objects_by_type: dict[str, int] | None = None,
        complete_types: set[str] | None = None,
        seen_manifests: set[ObjectKey] | None = None,
        elsewhere: set[ObjectKey] | None = None,
        interrupted: bool = False,
    ) -> None:
        self.findings = findings if findings is not None else []
        self.objects = objects
        self.objects_by_type = objects_by_type if objects_by_type is not None else {}
        self.complete_types = complete_types if complete_types is not None else set()
        self.seen_manifests = seen_manifests if seen_manifests is not None else set()
        self.elsewhere = elsewhere if elsewhere is not None else set()
        self.interrupted = interrupted


class _Progress:
    """A rich progress bar on stderr when stderr is a terminal; nothing (and no rich) otherwise."""

    def __init__(self, total_types: int) -> None:
        self._bar: Any = None
        self._task: Any = None
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty or total_types == 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("auditing"), BarColumn(), MofNCompleteColumn(), TextColumn("types"),
                             TextColumn("{task.fields[objects]:,} objects"), TimeElapsedColumn(),
                             console=Console(file=sys.stderr), transient=True)
        self._task = self._bar.add_task("audit", total=total_types, objects=0)
        self._bar.start()

    def update(self, objects: int, types_done: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=types_done, objects=objects)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def scan(client: ClusterClient, stream: PageStream, types: Sequence[ResourceInfo],
         namespace: str | AllNamespaces | None, ctx: AuditContext, progress_bar: bool = True,
         jobs: ObjectJobs | None = None) -> ScanResult:
    """Every page of ``stream`` (the LIST of ``types``) through the rules; Ctrl-C ends it with what
    was found. The stream is closed at the end. With ``jobs``, the objects of the ``-f`` manifests
    are checked by its workers (the caller closes them)."""
    from ..audit import audit_object, object_key, same_object, type_finding
    from ..kube.errors import Forbidden, KubeError, NotFound
    from ..render.common import counted

    result = ScanResult()
    findings = result.findings
    by_type = result.objects_by_type
    manifests = ctx.manifests
    versions = {same_object(k): k for k in manifests} if manifests else {}
    scope_ns = None if not isinstance(namespace, str) else namespace
    progress = _Progress(len(types) if progress_bar else 0)
    done = 0
    vanished: list[tuple[ResourceInfo, str]] = []
    try:
        for ev in stream:
            res = ev.resource
            if ev.items is not None:
                for obj in ev.items:
                    if manifests:
                        key = object_key(obj)
                        if key in manifests:
                            result.seen_manifests.add(key)
                            if jobs is not None:
                                jobs.add(obj, key)
                                continue
                        else:
                            wanted = versions.get(same_object(key))
                            if wanted is not None:
                                result.elsewhere.add(wanted)
                                continue
                    found = audit_object(obj, ctx)
                    if found:
                        findings.extend(found)
                n = len(ev.items)
                result.objects += n
                by_type[res.group_resource] = by_type.get(res.group_resource, 0) + n
            elif ev.done:
                done += 1
                result.complete_types.add(res.group_resource)
            elif ev.error is not None:
                done += 1
                listed = by_type.get(res.group_resource, 0)
                after = f" (after {counted(listed, 'object')})" if listed else ""
                if isinstance(ev.error, Forbidden):
                    findings.append(type_finding("type-forbidden", res.api_version, res.kind, res.group_resource,
                                                 scope_ns if res.namespaced else None, f"{ev.error}{after}"))
                elif isinstance(ev.error, NotFound) and not listed:
                    vanished.append((res, f"{ev.error}"))
                else:
                    findings.append(type_finding("type-error", res.api_version, res.kind, res.group_resource,
                                                 scope_ns if res.namespaced else None, f"{ev.error}{after}"))
            progress.update(result.objects, done)
        if jobs is not None:
            jobs.finish()
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        if jobs is not None:
            findings.extend(jobs.findings)  # (interrupted: those of the objects checked to the end)
        stream.close()
        progress.stop()
    if vanished:
        # a type the (cached) discovery named whose LIST the server does not know: its CRD went since
        # the cache was written (kubectl's keeps it 6 hours). Asked again, discovery says whether the
        # type is gone (nothing to audit) or the server failed to serve it (an error, as before)
        served: set[tuple[str, str, str]] | None
        try:
            served = {(r.group, r.version, r.resource) for r in client.discovery.refresh()}
        except KubeError:
            served = None
        except KeyboardInterrupt:
            result.interrupted = True
            served = None
        for res, error in vanished:
            if served is not None and (res.group, res.version, res.resource) not in served:
                continue
            findings.append(type_finding("type-error", res.api_version, res.kind, res.group_resource,
                                         scope_ns if res.namespaced else None, error))
    return result


def _unseen_manifests(client: ClusterClient, m: Manifests, result: ScanResult, ctx: AuditContext,
                      namespace: str | AllNamespaces | None, selector: str | None, unseen: bool = True) -> None:
    """The objects of manifests the scan did not meet (outside ``-n``, ``-l`` or ``--kinds``; with
    ``unseen``), and those it met at another served version than the manifest's (always): read one by
    one at the manifest's version and audited like the scanned ones — every finding and the fix — since
    ``-f`` names them. An object of a type listed completely in its namespace does not exist."""
    from ..audit import audit_object, type_finding
    from ..kube.errors import Forbidden, KubeError, NotFound
    from ..kube.stream import FATAL_ERRORS

    for key in m.by_key:
        if key in result.seen_manifests:
            continue
        res = m.resources[key]
        in_scope = not res.namespaced or not isinstance(namespace, str) or namespace == key[2]
        met = key in result.elsewhere
        if not met and not unseen:
            continue
        if res.group_resource in result.complete_types and in_scope and selector is None and not met:
            continue
        try:
            live = client.get(res, key[3], key[2] or None)
        except NotFound:
            continue  # the applier creates it: nothing to conflict with
        except FATAL_ERRORS:
            raise
        except KubeError as e:
            rule = "type-forbidden" if isinstance(e, Forbidden) else "type-error"
            result.findings.append(type_finding(rule, res.api_version, res.kind, res.group_resource,
                                                key[2] or None, str(e)))
            continue
        result.findings.extend(audit_object(live, ctx))
        result.seen_manifests.add(key)
        if not met:
            result.objects += 1
            result.objects_by_type[res.group_resource] = result.objects_by_type.get(res.group_resource, 0) + 1
