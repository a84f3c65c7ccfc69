"""One ``kubectl fieldown audit``, as a request, run without typer.

The typer command (:mod:`.audit`) and the typer-free reading of its common command lines
(:mod:`.auditfast`) both build an :class:`AuditRequest` and hand it to :func:`run_audit`, which
returns the exit code. ``audit -A`` is judged against a plain LIST of the same objects (issue 24:
within 1.3x as a subprocess, start-up included), and typer's import and parse were a tenth of
that budget; nothing here imports typer.

Exit codes: 0 no finding at or above ``--fail-on`` (default ``error``); 1 some; 2 usage,
configuration, connection or discovery errors and unreadable ``-f`` manifests; 130 interrupted
(Ctrl-C: the findings so far are printed first, marked as partial; an interrupted audit never
passes, whatever it found). A type that cannot be listed (403, or an error after retries) is a
``type-forbidden``/``type-error`` finding of severity error (so the default ``--fail-on`` fails an
incomplete audit); an audit that could list no type at all looked at nothing and exits 2 whatever
``--fail-on`` says.
"""

from __future__ import annotations

import enum
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from ..base.record import Record
from . import fleet
from .auditscan import ScanResult, _parse_concurrency, _parse_jobs, _parse_kinds, _read_manifests
from .clusterargs import ClusterArgs
from .errors import EXIT_USAGE, UsageError, print_error
from .fleet import AuditSpec

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..audit import Finding, ObjectKey
    from ..kube.discovery import ResourceInfo
    from ..manifests.sources import InputDocument
    from ..render.audit import AuditReport

__all__ = ["EXIT_FINDINGS", "EXIT_INTERRUPTED", "AuditOutput", "AuditRequest", "FailOn", "exit_code", "run_audit"]

EXIT_FINDINGS = 1
EXIT_INTERRUPTED = 130


class AuditOutput(str, enum.Enum):
    text = "text"
    json = "json"
    yaml = "yaml"
    junit = "junit"
    sarif = "sarif"
    prometheus = "prometheus"
    name = "name"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


class FailOn(str, enum.Enum):
    info = "info"
    warning = "warning"
    error = "error"
    none = "none"


class AuditRequest(Record):
    """The flags of one ``audit``, as given (checked by :func:`run_audit`, in the command's order)."""

    __slots__ = ("all_contexts", "all_namespaces", "applier", "concurrency", "context_concurrency", "contexts",
                 "details", "fail_on", "field_manager", "filenames", "ignore", "jobs", "kinds", "kubeconfig",
                 "metrics_file", "namespace", "output", "recursive", "selector")
    kinds: Final[list[str]]
    """``--kinds`` as given: each value may hold several types, comma-separated."""
    output: Final[AuditOutput]
    fail_on: Final[FailOn]
    applier: Final[str | None]
    field_manager: Final[str | None]
    filenames: Final[list[str]]
    recursive: Final[bool]
    ignore: Final[list[str]]
    details: Final[bool]
    concurrency: Final[str]
    jobs: Final[str]
    namespace: Final[str | None]
    all_namespaces: Final[bool]
    selector: Final[str | None]
    kubeconfig: Final[str | None]
    contexts: Final[list[str]]
    all_contexts: Final[bool]
    context_concurrency: Final[str]
    metrics_file: Final[str | None]

    def __init__(self, kinds: list[str] | None = None, output: AuditOutput = AuditOutput.text,
                 fail_on: FailOn = FailOn.error, applier: str | None = None, field_manager: str | None = None,
                 filenames: list[str] | None = None, recursive: bool = False, ignore: list[str] | None = None,
                 details: bool = False, concurrency: str = "4", jobs: str = "auto", namespace: str | None = None,
                 all_namespaces: bool = False, selector: str | None = None, kubeconfig: str | None = None,
                 contexts: list[str] | None = None, all_contexts: bool = False, context_concurrency: str = "4",
                 metrics_file: str | None = None) -> None:
        self.kinds = [] if kinds is None else kinds
        self.output = output
        self.fail_on = fail_on
        self.applier = applier
        self.field_manager = field_manager
        self.filenames = [] if filenames is None else filenames
        self.recursive = recursive
        self.ignore = [] if ignore is None else ignore
        self.details = details
        self.concurrency = concurrency
        self.jobs = jobs
        self.namespace = namespace
        self.all_namespaces = all_namespaces
        self.selector = selector
        self.kubeconfig = kubeconfig
        self.contexts = [] if contexts is None else contexts
        self.all_contexts = all_contexts
        self.context_concurrency = context_concurrency
        self.metrics_file = metrics_file


def exit_code(findings: Sequence[Finding], fail_on: FailOn, interrupted: bool) -> int:
    from ..audit import Severity

    if interrupted:
        return EXIT_INTERRUPTED
    if fail_on is FailOn.none:
        return 0
    threshold = Severity(fail_on.value).rank
    return EXIT_FINDINGS if any(f.severity.rank >= threshold for f in findings) else 0


def run_audit(request: AuditRequest) -> int:
    """Audit as ``request`` says, print the report, and return the exit code (UsageError and the
    cluster layer's errors other than KubeError propagate to the caller's error reporting)."""
    from .outputformat import check

    r = request
    check(r.output.value)
    started = time.monotonic()
    workers = _parse_concurrency(r.concurrency)
    processes = _parse_jobs(r.jobs)
    ignored = frozenset(r.ignore)
    if ignored:
        # (the engine is imported only when a flag needs it: the LIST starts before it loads)
        from ..audit import RULES

        unknown = sorted(ignored - set(RULES))
        if unknown:
            raise UsageError(f"--ignore: unknown finding id {unknown[0]!r} (one of {', '.join(RULES)})")
    named = _named_applier(r.applier, r.field_manager)
    if r.filenames and named is None:
        raise UsageError("-f names the manifests of the new applier: name it with --applier or --field-manager")
    docs = _read_manifests(r.filenames, r.recursive) if r.filenames else []
    contexts = fleet.resolve_contexts(r.contexts, r.all_contexts, r.kubeconfig)
    parallel = fleet.parse_context_concurrency(r.context_concurrency)
    fleet.check_metrics_file(r.metrics_file)
    spec = AuditSpec(kinds=_parse_kinds(r.kinds) if r.kinds else [], namespace=r.namespace,
                     all_namespaces=r.all_namespaces, selector=r.selector, docs=docs, named=named, ignored=ignored,
                     workers=workers, jobs=processes)
    if len(contexts) > 1 or r.all_contexts:
        return fleet.audit_contexts(contexts, lambda c: fleet.audit_part(spec, r.kubeconfig, c),
                                    output=r.output.value, fail_on=r.fail_on.value, spec=spec,
                                    metrics_file=r.metrics_file, parallel=parallel, started=started,
                                    details=r.details)
    from ..kube.errors import KubeError

    try:
        one = fleet.audit_cluster(spec, ClusterArgs(r.kubeconfig, contexts[0], r.namespace, r.all_namespaces), True)
    except KubeError as e:
        # configuration, connection and discovery failures exit 2 here: 1 means "findings"
        print_error(str(e))
        return EXIT_USAGE
    result, types, ns = one.result, one.types, one.ns
    nothing = nothing_audited(result, types)
    report = _report(result, types, ns if isinstance(ns, str) else None, r.selector, r.fail_on,
                     named.manager if named else None, time.monotonic() - started, nothing is not None)
    if r.output is AuditOutput.prometheus:
        fleet.print_metrics([(one.context or "", report)])
    else:
        render(report, r.output, one.manifests.sources, r.details)
    fleet.write_metrics(r.metrics_file, [(one.context or "", report)])
    if result.interrupted:
        print_error(f"interrupted: partial results ({len(result.complete_types)} of {len(types)} types complete)")
    elif nothing is not None:
        # whatever --fail-on says: a run that looked at nothing must never pass for a clean cluster
        print_error(nothing)
        return EXIT_USAGE
    return exit_code(report.findings, r.fail_on, result.interrupted)


def nothing_audited(result: ScanResult, types: Sequence[ResourceInfo]) -> str | None:
    """Why the audit looked at nothing (None: it looked at something). An audit whose every type was
    listed to its end and held no object did look: an empty cluster (or namespace) has no findings."""
    if result.interrupted or result.objects or result.complete_types:
        return None
    if not types:
        return "nothing was audited: the server offers no type that can be listed and patched here"
    failed = Counter(f.id for f in result.findings if f.id in ("type-forbidden", "type-error") and f.name is None)
    why = ", ".join(f"{n} {'forbidden' if rule == 'type-forbidden' else 'failed'}"
                    for rule, n in sorted(failed.items()))
    return (f"nothing was audited: none of the {len(types)} type{'s' if len(types) != 1 else ''} could be listed"
            + (f" ({why})" if why else "") + "; the findings say why (are these the right credentials?)")


def _named_applier(kind: str | None, manager: str | None) -> Applier | None:
    # the appliers are imported only when one is named: the LIST starts before the engine loads
    if kind is None:
        if not manager:
            return None
        from ..appliers import applier_for_manager

        return applier_for_manager(manager)
    from ..appliers import ApplierError, parse_applier_spec

    try:
        return parse_applier_spec(kind, manager=manager)
    except ApplierError as e:
        raise UsageError(f"--applier {e}") from None


def _report(result: ScanResult, types: Sequence[ResourceInfo], namespace: str | None, selector: str | None,
            fail_on: FailOn, field_manager: str | None, seconds: float, nothing_audited: bool) -> AuditReport:
    from ..audit import sort_findings
    from ..render.audit import AuditReport

    findings = sort_findings(result.findings)
    return AuditReport(
        findings=findings,
        objects=result.objects,
        types=[t.group_resource for t in types],
        complete_types=sorted(result.complete_types),
        objects_by_type=dict(sorted(result.objects_by_type.items())),
        namespace=namespace,
        selector=selector,
        fail_on=fail_on.value,
        failed=nothing_audited or exit_code(findings, fail_on, False) != 0,
        field_manager=field_manager,
        interrupted=result.interrupted,
        seconds=seconds,
        nothing_audited=nothing_audited,
    )


def render(report: AuditReport, output: AuditOutput, sources: Mapping[ObjectKey, InputDocument],
           details: bool = False) -> None:
    """Print ``report`` in ``output``'s format on stdout."""
    out = sys.stdout
    if output is AuditOutput.sarif:
        from ..render.sarif import audit_sarif, render_sarif

        render_sarif(audit_sarif(report, sources), out)
    elif output in (AuditOutput.name, AuditOutput.jsonpath, AuditOutput.custom_columns):
        from .outputformat import print_audit

        print_audit(output.value, report, out)
    elif output is AuditOutput.json:
        from ..render.audit import render_json

        render_json(report, out)
    elif output is AuditOutput.yaml:
        from ..render.audit import render_yaml

        render_yaml(report, out)
    elif output is AuditOutput.junit:
        from ..render.audit import render_junit

        render_junit(report, out)
    else:
        from ..render.audit import render_text

        render_text(report, out, details=details)
    out.flush()
