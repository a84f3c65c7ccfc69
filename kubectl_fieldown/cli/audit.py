"""``kubectl fieldown audit``: every object that will hurt when a fleet switches appliers.

Thin shell around the pure rules of :mod:`kubectl_fieldown.audit`: resolve the types to scan
(discovery, or ``--kinds``), stream their LIST pages through a few threads
(:class:`kubectl_fieldown.kube.stream.PageStream`), run the rules on each object as its page
arrives and drop it, then render the report (:mod:`kubectl_fieldown.render.audit`).

Exit codes: 0 no finding at or above ``--fail-on`` (default ``error``); 1 some; 2 usage,
configuration, connection or discovery errors and unreadable ``-f`` manifests; 130 interrupted
(Ctrl-C: the findings so far are printed first, marked as partial; an interrupted audit never
passes, whatever it found). A type that cannot be listed (403, or an error after retries) is a
``type-forbidden``/``type-error`` finding of severity error (so the default ``--fail-on`` fails an
incomplete audit); an audit that could list no type at all looked at nothing and exits 2 whatever
``--fail-on`` says.

Nothing is ever written to the cluster. ``rich`` is imported only for text output and for the
progress bar (drawn on stderr when it is a terminal); the objects are never deserialised into the
official client's models (raw JSON pages only).
"""

from __future__ import annotations

import enum
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from . import fleet, options
from .auditscan import (
    ScanResult,
    _parse_concurrency,
    _parse_jobs,
    _parse_kinds,
    _read_manifests,
    select_types,
)
from .errors import EXIT_USAGE, UsageError, handle_errors, print_error
from .fleet import AllContexts, AuditSpec, ContextConcurrency, Contexts, MetricsFile

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..audit import Finding, ObjectKey
    from ..kube.discovery import ResourceInfo
    from ..manifests.sources import InputDocument
    from ..render.audit import AuditReport

__all__ = ["AuditOutput", "FailOn", "audit", "exit_code", "register", "select_types"]

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


HELP = """Audit field ownership before switching appliers (kubectl to --server-side, Helm 3 to 4,
client-side pipelines to Argo CD or Flux): every object that will hurt, why, and the command that
fixes it.

Scans every listable type (or --kinds) in the namespace (-n, default: the context's) or in all
namespaces (-A). Read-only. With --field-manager NAME -f DIR the engine also predicts the conflicts
an apply of those manifests by NAME would have. See docs/audit.md for the findings and the JSON
schema. Exit codes: 0 nothing at or above --fail-on, 1 findings (a type that could not be listed is
one), 2 usage or connection error or nothing audited (no type could be listed), 130 interrupted
(partial results are printed)."""

EPILOG = """\b
Examples:
  # The whole cluster, summary and details
  kubectl fieldown audit -A
\b
  # Some types in one namespace, as JSON for scripts
  kubectl fieldown audit -n prod --kinds deployments.apps,widgets -o json
\b
  # CI: JUnit report, fail on warnings too
  kubectl fieldown audit -A -o junit --fail-on warning > audit.xml
\b
  # What Argo CD would run into when it starts applying these manifests
  kubectl fieldown audit -A --field-manager argocd-controller -f k8s/ -R"""


# --- exit code -------------------------------------------------------------------------------------


def exit_code(findings: Sequence[Finding], fail_on: FailOn, interrupted: bool) -> int:
    from ..audit import Severity

    if interrupted:
        return EXIT_INTERRUPTED
    if fail_on is FailOn.none:
        return 0
    threshold = Severity(fail_on.value).rank
    return EXIT_FINDINGS if any(f.severity.rank >= threshold for f in findings) else 0


@contextmanager
def _usage_exit() -> Iterator[None]:
    """Configuration, connection and discovery failures exit 2 here: 1 means "findings"."""
    from ..kube.errors import KubeError

    try:
        yield
    except KubeError as e:
        print_error(str(e))
        raise typer.Exit(EXIT_USAGE) from None


# --- the command -----------------------------------------------------------------------------------


@handle_errors
def audit(
    kinds: Annotated[
        list[str] | None,
        typer.Option(
            "--kinds",
            metavar="TYPE[,TYPE...]",
            help="Only these types, named as kubectl does (widgets, deployments.apps, deploy); repeatable. "
            "Default: every type that can be listed and patched, except events.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        AuditOutput,
        options.output_option("Output format: text (summary and details, default), json or yaml (the "
                              "documented schema, docs/audit.md), junit (one test case per finding, for CI), sarif "
                              "(SARIF 2.1.0, findings at the lines of the -f manifests), prometheus (metrics; "
                              "docs/fleet.md), name (each object with findings: kind.group/name), "
                              "jsonpath=TEMPLATE or custom-columns=SPEC (kubectl's, over the json document: one row "
                              "per finding; docs/output.md).", metavar="FORMAT"),
    ] = AuditOutput.text,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on",
            metavar="info|warning|error|none",
            help="Exit 1 when a finding has this severity or a higher one (none: exit 0 whatever was found).",
            case_sensitive=False,
        ),
    ] = FailOn.error,
    applier: Annotated[
        str | None,
        typer.Option(
            "--applier",
            metavar="KIND[:MANAGER]",
            help="The applier the fixes are for, and whose next apply (its own sequence of requests) is checked: "
            "kubectl, kubectl-client-side, argocd, flux, helm or ssa, optionally with its manager "
            "(flux:helm-controller) and, for Helm, helm:previous=server-side; with -f its apply of those manifests "
            "is predicted. Default: the one each object is managed by.",
            show_default=False,
        ),
    ] = None,
    field_manager: Annotated[
        str | None,
        options.field_manager_option(
            "The manager the applier applies as (default: the tool's own: kubectl, argocd-controller, "
            "kustomize-controller, helm); alone, it names the applier by its manager."),
    ] = None,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", metavar="ID", help="Do not report this finding id (repeatable).",
                     show_default=False),
    ] = None,
    details: Annotated[bool, typer.Option(
        "--details", "-v", "--verbose", help="Text output: the findings and the fix of each object, object by "
        "object (default: identical findings and fixes grouped, with the objects they concern).")] = False,
    concurrency: Annotated[
        str,
        typer.Option("--concurrency", metavar="N", help="Types listed at the same time (1-32)."),
    ] = "4",
    jobs: Annotated[
        str,
        typer.Option("--jobs", metavar="N|auto", help="Processes that check the objects of the -f manifests "
                     "(1: this one alone). auto: one per CPU, up to 8, with 64 objects or more (Linux)."),
    ] = "auto",
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: Contexts = None,
    all_contexts: AllContexts = False,
    context_concurrency: ContextConcurrency = "4",
    metrics_file: MetricsFile = None,
    no_headers: options.NoHeaders = False,
    color: options.Color = options.ColorMode.auto,
) -> None:
    del no_headers, color  # read by the renderers (render/prefs.py), set when the flags are parsed
    from .outputformat import check

    check(output.value)
    started = time.monotonic()
    workers = _parse_concurrency(concurrency)
    processes = _parse_jobs(jobs)
    ignored = frozenset(ignore or ())
    if ignored:
        # (the engine is imported only when a flag needs it: the LIST starts before it loads)
        from ..audit import RULES

        unknown = sorted(ignored - set(RULES))
        if unknown:
            raise UsageError(f"--ignore: unknown finding id {unknown[0]!r} (one of {', '.join(RULES)})")
    named = _named_applier(applier, field_manager)
    if filename and named is None:
        raise UsageError("-f names the manifests of the new applier: name it with --applier or --field-manager")
    docs = _read_manifests(filename, recursive) if filename else []
    contexts = fleet.resolve_contexts(context, all_contexts, kubeconfig)
    parallel = fleet.parse_context_concurrency(context_concurrency)
    fleet.check_metrics_file(metrics_file)
    spec = AuditSpec(kinds=_parse_kinds(kinds) if kinds else [], namespace=namespace, all_namespaces=all_namespaces,
                 selector=selector, docs=docs, named=named, ignored=ignored, workers=workers,
                 jobs=processes)
    if len(contexts) > 1 or all_contexts:
        fleet.audit_contexts(contexts, lambda c: fleet.audit_part(spec, kubeconfig, c), output=output.value,
                             fail_on=fail_on.value, spec=spec, metrics_file=metrics_file,
                             parallel=parallel, started=started, details=details)
        return
    with _usage_exit():
        one = fleet.audit_cluster(spec, options.ClusterArgs(kubeconfig, contexts[0], namespace, all_namespaces), True)
    result, types, ns = one.result, one.types, one.ns
    nothing = _nothing_audited(result, types)
    report = _report(result, types, ns if isinstance(ns, str) else None, selector, fail_on,
                     named.manager if named else None, time.monotonic() - started, nothing is not None)
    if output is AuditOutput.prometheus:
        fleet.print_metrics([(one.context or "", report)])
    else:
        _render(report, output, one.manifests.sources, details)
    fleet.write_metrics(metrics_file, [(one.context or "", report)])
    if result.interrupted:
        print_error(f"interrupted: partial results ({len(result.complete_types)} of {len(types)} types complete)")
    elif nothing is not None:
        # whatever --fail-on says: a run that looked at nothing must never pass for a clean cluster
        print_error(nothing)
        raise typer.Exit(EXIT_USAGE)
    code = exit_code(report.findings, fail_on, result.interrupted)
    if code:
        raise typer.Exit(code)


def _nothing_audited(result: ScanResult, types: Sequence[ResourceInfo]) -> str | None:
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


def _render(report: AuditReport, output: AuditOutput, sources: Mapping[ObjectKey, InputDocument],
            details: bool = False) -> None:
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


def register(app: typer.Typer) -> None:
    app.command("audit", help=HELP, epilog=EPILOG, no_args_is_help=False)(audit)
