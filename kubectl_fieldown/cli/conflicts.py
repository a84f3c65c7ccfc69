"""``kubectl fieldown conflicts``: what a server-side apply of manifests would do, before doing it.

fetch (manifests; the live objects from the cluster, or ``--live`` files offline; schemas) →
decode (the manifest's identity and namespace, the resource's rules) → analyse
(:mod:`kubectl_fieldown.conflicts.report`: the plan, co-owners, redaction, optionally the server's own
dry run compared with the prediction) → render (:mod:`kubectl_fieldown.render.conflicts`).

Exit codes differ from the other commands because scripts gate on them: 0 the apply goes
through (no conflicts, or ``--force-conflicts`` takes them over); 1 it would not (conflicts, or
a 400/422/500 the server would answer), or the server dry run disagrees with the prediction;
2 something could not be predicted (bad flags or input, unknown kind, RBAC, unreachable server).
A failing document gets one ``error:`` line and the others are still reported.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from ..base.value import escape_controls
from ..kube.kindrules import KindRules
from . import options
from .errors import UsageError, handle_errors_exiting, one_line, print_error
from .prediction import (
    DocumentError,
    Outcome,
    Request,
    _documents,
    _now,
    predict_offline,
    predict_online,
)

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..schema.registry import SchemaRegistry

__all__ = [
    "EXIT_CONFLICTS",
    "EXIT_ERROR",
    "EXIT_OK",
    "ConflictsOutput",
    "conflicts",
    "register",
]

EXIT_OK = 0
EXIT_CONFLICTS = 1
EXIT_ERROR = 2



class ConflictsOutput(str, enum.Enum):
    text = "text"
    json = "json"
    yaml = "yaml"
    sarif = "sarif"
    name = "name"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


#: kubectl's formats, printed from the -o json document (cli/outputformat.py)
_KUBE_OUTPUTS = (ConflictsOutput.name, ConflictsOutput.jsonpath, ConflictsOutput.custom_columns)


HELP = """Predict a server-side apply: conflicts, shared fields, deletions and fields that stay.

Reads manifests (-f FILE|DIR|-, several documents) and the live objects they name, from the
cluster (default) or offline from --live FILE (the output of
'kubectl get -o yaml --show-managed-fields'), and computes what the API server does with
'kubectl apply --server-side --field-manager NAME' of them.

Exit codes: 0 no conflicts (or --force-conflicts takes them over); 1 conflicts predicted,
the server would reject the apply, or the server dry run disagrees; 2 errors."""

EPILOG = """\b
Examples:
  # Would my apply conflict with anyone? (the manager kubectl apply --server-side uses)
  kubectl fieldown conflicts -f deploy.yaml --field-manager kubectl
\b
  # As Argo CD would apply it, checked against the server's own dry run
  kubectl fieldown conflicts -f k8s/ -R --field-manager argocd-controller --server-dry-run
\b
  # What --force-conflicts would take over, and the resulting managedFields, as JSON
  kubectl fieldown conflicts -f w.yaml --field-manager ci --force-conflicts -o json
\b
  # Offline: saved live objects and the CRD that gives the merge rules
  kubectl get widget w -o yaml --show-managed-fields > live.yaml
  kubectl fieldown conflicts -f w.yaml --live live.yaml --schema crd.yaml --field-manager ci"""


# --- render ------------------------------------------------------------------------------------------


def _render(outcome: Outcome, output: ConflictsOutput, verbose: bool, offline: bool) -> None:
    out = sys.stdout
    if output in _KUBE_OUTPUTS:
        from ..base.objects import ObjectRef
        from ..render.conflicts import to_document
        from .outputformat import print_kube

        names = [ObjectRef(r.api_version, r.kind, r.namespace, r.name).resource_name for r in outcome.reports]
        print_kube(output.value, to_document(outcome.reports), names, out)
    elif output is ConflictsOutput.json:
        from ..render.conflicts import render_json

        render_json(outcome.reports, out)
    elif output is ConflictsOutput.yaml:
        from ..render.conflicts import render_yaml

        render_yaml(outcome.reports, out)
    else:
        from ..render.conflicts import render_text

        render_text(outcome.reports, out, verbose=verbose, details=offline, failed=len(outcome.errors))
    out.flush()


class FailOn(str, enum.Enum):
    """What makes ``conflicts`` exit 1 besides errors."""

    conflicts = "conflicts"
    deletes = "deletes"


def exit_code(outcome: Outcome, fail_on_deletes: bool = False) -> int:
    if outcome.errors:
        return EXIT_ERROR
    if outcome.disagreements or any(r.blocked for r in outcome.reports):
        return EXIT_CONFLICTS
    if fail_on_deletes and any(run.deletions() for r in outcome.reports for run in (r, *r.runs)):
        return EXIT_CONFLICTS
    return EXIT_OK


# --- the command -------------------------------------------------------------------------------------


def _schema_registry(files: Sequence[str], kube_version: str | None) -> SchemaRegistry:
    from ..schema.builtin import BuiltinSchemaError
    from ..schema.registry import SchemaFileError, SchemaRegistry

    try:
        registry = SchemaRegistry(kube_version=kube_version)
    except BuiltinSchemaError as e:
        raise UsageError(f"--kube-version: {e}") from None
    for f in files:
        try:
            registry.add_file(f)
        except SchemaFileError as e:
            raise DocumentError(f"--schema {e}") from None
        except OSError as e:
            raise DocumentError(f"--schema {f}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise DocumentError(f"--schema {f}: not UTF-8 text") from None
    return registry


@handle_errors_exiting(EXIT_ERROR)
def conflicts(
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    field_manager: Annotated[
        str | None,
        options.field_manager_option(
            "The manager you will apply as ('kubectl apply --server-side' uses \"kubectl\", "
            "Argo CD \"argocd-controller\", Flux \"kustomize-controller\"); required without --applier."
        ),
    ] = None,
    applier: Annotated[
        list[str] | None,
        typer.Option(
            "--applier",
            metavar="KIND[:MANAGER]",
            help="Predict what this applier's next apply does — its whole sequence of requests: kubectl "
            "(apply --server-side with its follow-up), kubectl-client-side (kubectl apply), argocd, flux, helm "
            "or ssa, optionally with its manager (flux:helm-controller: a HelmRelease) and, for Helm, the "
            "previous release's apply method (helm:previous=server-side; default client-side, the switch from "
            "Helm 3). Repeat it to compare appliers side by side (kubectl-client-side and kubectl: what changes "
            "if you switch).",
            show_default=False,
        ),
    ] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", case_sensitive=False,
                     help="Exit 1 on predicted conflicts (default), or also when the apply deletes fields "
                          "(deletes): CI stops before an apply that removes something."),
    ] = FailOn.conflicts,
    force_conflicts: Annotated[
        bool,
        typer.Option("--force-conflicts",
                     help="Predict the apply with force: conflicting fields are taken from their owners "
                          "(they are still listed). Exit 0 when that apply succeeds."),
    ] = False,
    server_dry_run: Annotated[
        bool,
        typer.Option("--server-dry-run",
                     help="Also send the apply with dryRun=All and report whether the server agrees with the "
                          "prediction (needs permission to patch the objects)."),
    ] = False,
    live: Annotated[
        list[str] | None,
        typer.Option("--live", metavar="FILE",
                     help="Offline: take the live objects from FILE or a directory ('-' is stdin; repeatable), "
                          "as 'kubectl get -o yaml --show-managed-fields' prints them, matched to the manifest "
                          "documents by apiVersion, kind, namespace and name. A document without a match is a "
                          "create.",
                     show_default=False),
    ] = None,
    schema: Annotated[
        list[str] | None,
        typer.Option("--schema", metavar="FILE",
                     help="Merge rules from FILE: a CustomResourceDefinition manifest or an OpenAPI v3 document "
                          "(repeatable). Wins over the cluster's OpenAPI and the offline built-in schemas.",
                     show_default=False),
    ] = None,
    kube_version: Annotated[
        str | None,
        typer.Option("--kube-version", metavar="VERSION",
                     help="Kubernetes version of the offline built-in schemas (e.g. 1.33; default: the newest "
                          "available). Used for built-in kinds that the cluster's OpenAPI does not describe.",
                     show_default=False),
    ] = None,
    output: Annotated[
        ConflictsOutput,
        options.output_option("Output format: text (default), json or yaml (the documented contract), sarif "
                              "(SARIF 2.1.0, each result at its line of the manifest; docs/fleet.md), name "
                              "(kind.group/name), jsonpath=TEMPLATE or custom-columns=SPEC (kubectl's, over the json "
                              "document; docs/output.md)."),
    ] = ConflictsOutput.text,
    verbose: Annotated[
        bool,
        typer.Option("-v", "--verbose", help="Say where each schema and status-subresource rule came from."),
    ] = False,
    show_secret_values: Annotated[
        bool,
        typer.Option("--show-secret-values",
                     help="Show the values of a Secret's data, stringData and last-applied annotation "
                          "instead of <redacted>."),
    ] = False,
    namespace: options.Namespace = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
    no_headers: options.NoHeaders = False,
    color: options.Color = options.ColorMode.auto,
) -> None:
    del no_headers, color  # read by the renderers (render/prefs.py), set when the flags are parsed
    from .outputformat import check

    check(output.value)
    paths = list(filename or ())
    live_paths = list(live or ())
    if not paths:
        raise UsageError("you must pass the manifests with -f/--filename (a file, a directory, or - for stdin)")
    appliers = tuple(_parse_applier(a, field_manager, force_conflicts) for a in applier or ())
    if not field_manager and not appliers:
        raise UsageError("--field-manager NAME is required: the manager you will apply as "
                         "('kubectl apply --server-side' uses \"kubectl\"), or name the applier with --applier")
    if appliers and server_dry_run:
        raise UsageError("--server-dry-run checks one apply request; it cannot replay an applier's sequence "
                         "(leave out --applier)")
    if [*paths, *live_paths].count("-") > 1:
        raise UsageError("only one of -f and --live can read stdin ('-')")
    offline = bool(live_paths)
    if offline and server_dry_run:
        raise UsageError("--server-dry-run asks the cluster; it cannot be used with --live (offline)")
    if offline and (kubeconfig is not None or context is not None):
        raise UsageError("--kubeconfig and --context select a cluster; --live works offline without one")

    registry = _schema_registry(list(schema or ()), kube_version)
    outcome = Outcome()
    docs = _documents(paths, recursive, outcome)
    from ..conflicts.report import PredictionSettings

    prediction = PredictionSettings(manager=field_manager or appliers[0].manager, force=force_conflicts, now=_now(),
                                    show_secret_values=show_secret_values, appliers=appliers)
    req = Request(prediction, namespace=namespace, server_dry_run=server_dry_run)
    if offline:
        read_errors = len(outcome.errors)
        live_docs = _documents(live_paths, recursive, outcome)
        if len(outcome.errors) == read_errors:
            predict_offline(docs, live_docs, req, KindRules(registry), outcome)
        # else a --live file that cannot be read: which objects exist is unknown, and predicting
        # against what could be read would call the others "create"
    elif docs:
        from ..kube.client import ClusterClient

        client = ClusterClient(options.cluster_options(options.ClusterArgs(kubeconfig, context, namespace)))
        try:
            predict_online(docs, req, KindRules(registry, client), client, outcome)
        finally:
            client.close()

    if outcome.reports or output not in (ConflictsOutput.text, ConflictsOutput.name, ConflictsOutput.custom_columns):
        # JSON and YAML always print a document, so that `| jq` sees {"items": []} rather than nothing
        if output is ConflictsOutput.sarif:
            from ..render.sarif import conflicts_sarif, render_sarif

            errors = list(dict.fromkeys(outcome.errors))
            render_sarif(conflicts_sarif(outcome.reports, {d.where: d for d in docs}, errors), sys.stdout)
            sys.stdout.flush()
        else:
            _render(outcome, output, verbose, offline)
    if output is not ConflictsOutput.text:
        # the contract has no place for the server's reason; without it a null result is a riddle
        for r in outcome.reports:
            if r.error:
                note = (f"{r.where}: {r.title}: the server would reject this apply ({r.error_status} "
                        f"{r.error_reason}): {one_line(r.error)}")
                sys.stderr.write(f"note: {escape_controls(note)}\n")
    for message in dict.fromkeys(outcome.errors):  # a file given as both -f and --live fails once
        print_error(message)
    code = exit_code(outcome, fail_on is FailOn.deletes)
    if code:
        raise typer.Exit(code)


def _parse_applier(text: str, field_manager: str | None, force: bool) -> Applier:
    from ..appliers import ApplierError, parse_applier_spec

    try:
        return parse_applier_spec(text, manager=field_manager, force=force)
    except ApplierError as e:
        raise UsageError(f"--applier {e}") from None


def register(app: typer.Typer) -> None:
    app.command("conflicts", help=HELP, epilog=EPILOG, no_args_is_help=False)(conflicts)
