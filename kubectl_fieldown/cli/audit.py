"""``kubectl fieldown audit``: every object that will hurt when a fleet switches appliers.

The typer command: its flags, help and examples. It builds an :class:`~.auditrun.AuditRequest` and
runs it with :func:`~.auditrun.run_audit` (the exit codes are documented there), which
:mod:`.auditfast` also does for the common command lines without importing typer.

Thin shell around the pure rules of :mod:`kubectl_fieldown.audit`: resolve the types to scan
(discovery, or ``--kinds``), stream their LIST pages through a few threads
(:class:`kubectl_fieldown.kube.stream.PageStream`), run the rules on each object as its page
arrives and drop it, then render the report (:mod:`kubectl_fieldown.render.audit`).

Nothing is ever written to the cluster. ``rich`` is imported only for text output and for the
progress bar (drawn on stderr when it is a terminal); the objects are never deserialised into the
official client's models (raw JSON pages only).
"""

from __future__ import annotations

from typing import Annotated

import typer

from . import options
from .auditrun import AuditOutput, AuditRequest, FailOn, exit_code, run_audit
from .auditscan import select_types
from .completion import complete_context
from .errors import handle_errors

__all__ = ["AuditOutput", "FailOn", "audit", "exit_code", "register", "select_types"]

Contexts = Annotated[
    list[str] | None,
    typer.Option("--context", metavar="NAME", autocompletion=complete_context, show_default=False,
                 help="The kubeconfig context to use; repeat it to audit several clusters in one run "
                 "(docs/fleet.md)."),
]
AllContexts = Annotated[
    bool,
    typer.Option("--all-contexts", help="Audit every context of the merged kubeconfig (docs/fleet.md)."),
]
ContextConcurrency = Annotated[
    str,
    typer.Option("--context-concurrency", metavar="N", help="Contexts audited at the same time (1-16)."),
]
MetricsFile = Annotated[
    str | None,
    typer.Option("--metrics-file", metavar="PATH", show_default=False,
                 help="Also write the Prometheus metrics of the run to PATH, replaced atomically (for the "
                 "node-exporter textfile collector; docs/fleet.md)."),
]


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
    code = run_audit(AuditRequest(
        kinds=kinds, output=output, fail_on=fail_on, applier=applier, field_manager=field_manager, filenames=filename,
        recursive=recursive, ignore=ignore, details=details, concurrency=concurrency, jobs=jobs, namespace=namespace,
        all_namespaces=all_namespaces, selector=selector, kubeconfig=kubeconfig, contexts=context,
        all_contexts=all_contexts, context_concurrency=context_concurrency, metrics_file=metrics_file))
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("audit", help=HELP, epilog=EPILOG, no_args_is_help=False)(audit)
