"""``audit`` over many clusters, and its metrics: ``--context A --context B``, ``--all-contexts``,
``-o prometheus``, ``--metrics-file`` (docs/fleet.md).

Each context is audited on its own (:func:`audit_cluster`, the same scan as a plain audit), a few at
a time (``--context-concurrency``), in daemon threads so that Ctrl-C is not held up by a slow
cluster. A context that cannot be reached or read (no such context, connection refused, credentials
refused, no type listable) is a ``context-unreachable`` finding of its own, and the run exits 2
after printing the report of every context: a cluster nobody looked at never passes for a clean one.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..base.record import Record
from .clusterargs import ClusterArgs, cluster_options
from .errors import EXIT_USAGE, UsageError, _said, debug_enabled, print_error, whole_number

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..audit import AuditContext, ObjectKey
    from ..audit.fleet import ContextPart
    from ..kube.client import AllNamespaces, ClusterClient
    from ..kube.crdreader import CrdReader
    from ..kube.discovery import ResourceInfo
    from ..manifests.sources import InputDocument
    from ..render.audit import AuditReport
    from .auditjobs import ObjectJobs
    from .auditscan import Manifests, ScanResult

__all__ = ["AuditSpec", "audit_cluster", "audit_contexts", "audit_part", "check_metrics_file", "resolve_contexts",
           "write_metrics"]


class AuditSpec(Record):
    """What to audit, the same in every context."""

    __slots__ = ("all_namespaces", "docs", "ignored", "jobs", "kinds", "named", "namespace", "selector", "workers")
    kinds: Final[list[str]]
    namespace: Final[str | None]
    all_namespaces: Final[bool]
    selector: Final[str | None]
    docs: Final[list[InputDocument]]
    named: Final[Applier | None]
    ignored: Final[frozenset[str]]
    workers: Final[int]
    jobs: Final[int | None]
    """Processes that check the ``-f`` objects (None: :func:`~.auditjobs.auto_jobs`)."""

    def __init__(
        self,
        kinds: list[str],
        namespace: str | None,
        all_namespaces: bool,
        selector: str | None,
        docs: list[InputDocument],
        named: Applier | None,
        ignored: frozenset[str],
        workers: int,
        jobs: int | None = None,
    ) -> None:
        self.kinds = kinds
        self.namespace = namespace
        self.all_namespaces = all_namespaces
        self.selector = selector
        self.docs = docs
        self.named = named
        self.ignored = ignored
        self.workers = workers
        self.jobs = jobs


# --- flags ------------------------------------------------------------------------------------------


def resolve_contexts(names: Sequence[str] | None, all_contexts: bool, kubeconfig: str | None) -> list[str | None]:
    """The contexts to audit, in order, each once ([None]: the current context, as kubectl)."""
    from ..kube._transport import context_names
    from ..kube.errors import KubeError

    given = list(dict.fromkeys(names or ()))
    if all_contexts:
        if given:
            raise UsageError("--all-contexts audits every context: give it or --context, not both")
        try:
            found = context_names(kubeconfig)
        except KubeError as e:
            raise UsageError(f"--all-contexts: {e}") from None
        if not found:
            raise UsageError("--all-contexts: the kubeconfig has no context")
        return list(dict.fromkeys(found))
    return list(given) if given else [None]


def parse_context_concurrency(text: str) -> int:
    return whole_number(text, "--context-concurrency", 1, 16)


def check_metrics_file(path: str | None) -> None:
    """Refuse a metrics file that cannot be written before auditing anything (exit 2)."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"--metrics-file {path}: is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--metrics-file {path}: no such directory {parent}")


# --- one cluster --------------------------------------------------------------------------------------


class ClusterScan(Record, mutable=True):
    __slots__ = ("context", "manifests", "ns", "result", "server", "types")
    result: ScanResult
    types: list[ResourceInfo]
    ns: str | AllNamespaces
    manifests: Manifests
    context: str | None
    server: str

    def __init__(
        self,
        result: ScanResult,
        types: list[ResourceInfo],
        ns: str | AllNamespaces,
        manifests: Manifests,
        context: str | None,
        server: str,
    ) -> None:
        self.result = result
        self.types = types
        self.ns = ns
        self.manifests = manifests
        self.context = context
        self.server = server


def connection_flags(cluster: ClusterArgs) -> tuple[str, ...]:
    """The flags a printed command needs to reach the cluster audited (none for the current context
    of the default kubeconfig, which the command reaches by itself)."""
    return (*(("--kubeconfig", cluster.kubeconfig) if cluster.kubeconfig else ()),
            *(("--context", cluster.context) if cluster.context else ()))


def audit_cluster(spec: AuditSpec, cluster: ClusterArgs, progress: bool) -> ClusterScan:
    """The audit of one cluster (KubeError or UsageError: it could not be read)."""
    from ..kube.client import ALL_NAMESPACES, ClusterClient
    from ..kube.stream import PageStream
    from .auditscan import _resolve_kinds, _unseen_manifests, scan, select_types

    client = ClusterClient(cluster_options(cluster))
    try:
        types = _resolve_kinds(client, spec.kinds) if spec.kinds else select_types(client.discovery.current_resources(),
                                                                                  spec.all_namespaces)
        ns: str | AllNamespaces = ALL_NAMESPACES if spec.all_namespaces else (spec.namespace
                                                                             or client.default_namespace)
        crds = _crd_reader(client)
        with PageStream(client, types, ns, label_selector=spec.selector, workers=spec.workers,
                        first_page=crds.read_ahead if crds is not None else None) as stream:
            jobs = None
            n = _jobs(spec)
            if n > 1:
                # workers are forked before any thread starts (auditjobs): the LIST waits for the
                # manifests here, a tenth of a second on an audit that checks each of their objects
                manifests, ctx = _audit_context(spec, cluster, client, crds)
                jobs = _start_jobs(n, ctx)
                stream.start()
            else:
                # the LIST goes out before the engine is loaded and the manifests are read: on a cold
                # start the server answers the first pages meanwhile (issue 24: the audit's start-up)
                stream.start()
                manifests, ctx = _audit_context(spec, cluster, client, crds)
                if ctx.fixes:
                    from ..audit import import_fix_engine

                    import_fix_engine()
            try:
                result = scan(client, stream, types, ns, ctx, progress, jobs)
                if jobs is not None and debug_enabled():
                    print(f"debug: audit: the -f objects were checked by {jobs.size} worker processes; "
                          f"{jobs.redone} batches of them again in this one", file=sys.stderr)
            finally:
                if jobs is not None:
                    jobs.close()
        if manifests.by_key and not result.interrupted:
            try:
                _unseen_manifests(client, manifests, result, ctx, ns, spec.selector,
                                  unseen="predicted-conflict" not in spec.ignored)
            except KeyboardInterrupt:
                result.interrupted = True
    finally:
        client.close()
    return ClusterScan(result, types, ns, manifests, client.context, client.server)


def _jobs(spec: AuditSpec) -> int:
    """The worker processes for the -f objects: 1 (none) without -f, and where workers cannot be
    forked: beside another thread (the contexts of a many-context audit)."""
    if not spec.docs or threading.active_count() != 1:
        return 1
    if spec.jobs is not None:
        return spec.jobs
    from .auditjobs import auto_jobs  # (an audit without -f never loads the workers' module)

    return auto_jobs(len(spec.docs))


def _start_jobs(n: int, ctx: AuditContext) -> ObjectJobs | None:
    from .auditjobs import start_jobs
    from .auditscan import _RulesByKind

    rules_for = ctx.rules_for
    known = rules_for.knows if isinstance(rules_for, _RulesByKind) else (lambda api_version, kind: False)
    return start_jobs(ctx, n, known)


def _crd_reader(client: ClusterClient) -> CrdReader | None:
    """The CRDs of the cluster read once, ahead of need by the LIST's threads (None: discovery names
    no CustomResourceDefinition type; the rules then look each one up as before)."""
    from ..kube.crdreader import CrdReader
    from ..kube.discovery import find_kind

    crds = find_kind(client.discovery.resources(), "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    return CrdReader(client, crds) if crds is not None else None


def _audit_context(spec: AuditSpec, cluster: ClusterArgs, client: ClusterClient,
                   crds: CrdReader | None = None) -> tuple[Manifests, AuditContext]:
    """The ``-f`` manifests (resolved on the cluster) and the rules' context: the first use of the
    engine, so its imports happen here, once the LIST is under way."""
    from ..audit import AuditContext
    from ..kube.kindrules import KindRules
    from .auditscan import Manifests, _load_manifests, _now, _RulesByKind

    kind_rules = KindRules(client=client, crds=crds)
    files: dict[ObjectKey, str] = {}
    if spec.docs:
        from .files import STDIN_NAME  # (the file reader's modules load only for -f)

        manifests = _load_manifests(client, spec.docs, spec.namespace, kind_rules)
        files = {k: d.source for k, d in manifests.sources.items() if d.source != STDIN_NAME}
    else:
        manifests = Manifests()
    ctx = AuditContext(applier=spec.named, manifests=manifests.by_key, manifest_files=files,
                       connection=connection_flags(cluster),
                       rules_for=_RulesByKind(client, kind_rules, manifests.rules), now=_now(),
                       ignore=spec.ignored)
    return manifests, ctx


def audit_part(spec: AuditSpec, kubeconfig: str | None, context: str) -> ContextPart:
    """One context of a many-context audit: never raises for a cluster that cannot be read."""
    from ..audit.fleet import ContextPart
    from ..kube.errors import KubeError
    from .auditrun import nothing_audited

    started = time.monotonic()
    try:
        one = audit_cluster(spec, ClusterArgs(kubeconfig, context, spec.namespace, spec.all_namespaces),
                            False)
    except (KubeError, UsageError) as e:
        return ContextPart(context, error=_said(str(e)), seconds=time.monotonic() - started)
    result = one.result
    return ContextPart(context, findings=result.findings, objects=result.objects,
                       types=[t.group_resource for t in one.types], complete_types=sorted(result.complete_types),
                       objects_by_type=dict(sorted(result.objects_by_type.items())),
                       seconds=time.monotonic() - started, server=one.server,
                       error=nothing_audited(result, one.types), interrupted=result.interrupted,
                       sources=dict(one.manifests.sources))


# --- metrics ----------------------------------------------------------------------------------------


def print_metrics(reports: Sequence[tuple[str, AuditReport]]) -> None:
    from ..render.prometheus import ContextRun, metrics_text

    runs = [ContextRun(c, r, not r.nothing_audited) for c, r in reports]
    sys.stdout.write(metrics_text(runs, time.time()))
    sys.stdout.flush()


def write_metrics(path: str | None, reports: Sequence[tuple[str, AuditReport]]) -> None:
    """``--metrics-file``: the run's metrics, replacing the file in one rename (exit 2 if it cannot)."""
    if path is None:
        return
    from ..render.prometheus import ContextRun, metrics_text, write_atomically

    runs = [ContextRun(c, r, not r.nothing_audited) for c, r in reports]
    try:
        write_atomically(path, metrics_text(runs, time.time()))
    except OSError as e:
        raise UsageError(f"--metrics-file {path}: {e.strerror or e}") from None


# --- many contexts ------------------------------------------------------------------------------------


def _run_bounded(contexts: Sequence[str], audit_one: Callable[[str], ContextPart],
                 parallel: int) -> tuple[list[ContextPart | None], bool]:
    """Each context's part, ``parallel`` at a time, in daemon threads; (parts, interrupted). On
    Ctrl-C the parts not finished are None and their threads are left to die with the process."""
    parts: list[ContextPart | None] = [None] * len(contexts)
    slots = threading.Semaphore(parallel)
    done = threading.Event()
    remaining = [len(contexts)]
    lock = threading.Lock()

    def work(i: int) -> None:
        try:
            parts[i] = audit_one(contexts[i])
        except Exception as e:  # a bug must not look like a clean cluster: the context failed
            from ..audit.fleet import ContextPart

            parts[i] = ContextPart(contexts[i], error=_said(f"{type(e).__name__}: {e}"))
        finally:
            slots.release()
            with lock:
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.set()

    try:
        for i in range(len(contexts)):
            while not slots.acquire(timeout=0.2):
                pass
            threading.Thread(target=work, args=(i,), name=f"fieldown-context-{i}", daemon=True).start()
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        return parts, True
    return parts, False


def audit_contexts(contexts: Sequence[str | None], audit_one: Callable[[str], ContextPart], *,
                   output: str, fail_on: str, spec: AuditSpec, metrics_file: str | None, parallel: int,
                   details: bool = False,
                   started: float) -> int:
    """Audit every context, print one report (the context on every finding, a summary per context),
    write the metrics, and return the exit code: 130 interrupted, 2 a context not audited, else by
    ``--fail-on``."""
    from ..audit.fleet import ContextPart, merged_findings
    from ..render.audit import AuditReport
    from .auditrun import EXIT_INTERRUPTED, AuditOutput, FailOn, exit_code, render

    if not spec.all_namespaces and spec.namespace is None:
        raise UsageError("several contexts are audited in one namespace (-n NAMESPACE) or in all (-A): "
                         "each context has its own default namespace")
    names = [c for c in contexts if c is not None]
    results, interrupted = _run_bounded(names, audit_one, parallel)
    parts = [p if p is not None else ContextPart(c, interrupted=True) for c, p in zip(names, results, strict=True)]
    findings = merged_findings(parts)
    fail = FailOn(fail_on)
    unreachable = [p for p in parts if p.error is not None]
    types = sorted({t for p in parts for t in p.types})
    by_type: dict[str, int] = {}
    for p in parts:
        for t, n in p.objects_by_type.items():
            by_type[t] = by_type.get(t, 0) + n
    report = AuditReport(
        findings=findings, objects=sum(p.objects for p in parts), types=types,
        complete_types=[t for t in types if all(t in p.complete_types for p in parts)],
        objects_by_type=dict(sorted(by_type.items())),
        namespace=None if spec.all_namespaces else spec.namespace, selector=spec.selector, fail_on=fail.value,
        failed=bool(unreachable) or exit_code(findings, fail, False) != 0,
        field_manager=spec.named.manager if spec.named else None, interrupted=interrupted,
        seconds=time.monotonic() - started, nothing_audited=all(p.error is not None for p in parts),
        contexts=parts)
    per_context = [(p.context, _context_report(p, report)) for p in parts]
    if output == "prometheus":
        print_metrics(per_context)
    else:
        sources = {k: v for p in parts for k, v in p.sources.items()}
        render(report, AuditOutput(output), sources, details)
    write_metrics(metrics_file, per_context)
    if interrupted:
        done = sum(1 for p in results if p is not None)
        print_error(f"interrupted: partial results ({done} of {len(names)} contexts complete)")
        return EXIT_INTERRUPTED
    for p in unreachable:
        print_error(f"context {p.context!r} was not audited: {p.error}")
    if unreachable:
        return EXIT_USAGE
    return exit_code(findings, fail, False)


def _context_report(part: ContextPart, whole: AuditReport) -> AuditReport:
    """One context's part of the run as a report of its own (its metrics)."""
    from ..render.audit import AuditReport

    mine = [f for f in whole.findings if f.context == part.context]
    return AuditReport(findings=mine, objects=part.objects, types=list(part.types),
                       complete_types=list(part.complete_types), objects_by_type=dict(part.objects_by_type),
                       namespace=whole.namespace, selector=whole.selector, fail_on=whole.fail_on,
                       interrupted=part.interrupted, seconds=part.seconds, nothing_audited=part.error is not None)
