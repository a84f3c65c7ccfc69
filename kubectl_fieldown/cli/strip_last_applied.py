"""``kubectl fieldown strip-last-applied``: remove fields from the last-applied annotation and from
the client-side apply manager, so that the next ``kubectl apply`` without them leaves them to
another writer (:class:`kubectl_fieldown.remedies.commands.StripLastApplied`, written through
:mod:`.writes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .errors import UsageError, handle_errors
from .select import Selection
from .writes import (
    AllObjects,
    AllowValueChanges,
    ApplierOption,
    BackupDir,
    DryRunOption,
    MaxRetries,
    Output,
    Resources,
    Verbose,
    WriteConfig,
    WriteOutput,
    check_fields,
    own_applier,
    parse_applier,
    parse_paths,
    parse_retries,
    run_plans,
    write_planner,
)

if TYPE_CHECKING:
    from ..remedies.commands import FixCommand


__all__ = ["register", "strip_last_applied"]


STRIP_HELP = """Remove fields from the last-applied annotation and from the client-side apply manager.

\b
The documented way to give a field that is in your manifest to an imperative writer or a
controller (kubectl scale, an autoscaler): afterwards the next 'kubectl apply' of the manifest
without the field leaves the field alone instead of deleting it. Paths use the API server's
syntax: .spec.replicas, .spec.containers[name="web"].image, .metadata.labels.app.kubernetes.io/name"""

STRIP_EPILOG = """\b
Examples:
  # Let the HorizontalPodAutoscaler own replicas; then remove replicas from web.yaml
  kubectl fieldown strip-last-applied deploy/web --field .spec.replicas
  kubectl apply -f web.yaml"""


@handle_errors
def strip_last_applied(
    resources: Resources = None,
    field: Annotated[
        list[str] | None,
        typer.Option("--field", metavar="PATH", help="A field to forget (repeatable).", show_default=False),
    ] = None,
    client_side_manager: Annotated[
        list[str] | None,
        typer.Option(
            "--client-side-manager",
            metavar="GLOB",
            help="The client-side apply managers to remove the fields from (repeatable; default "
            "kubectl-client-side-apply).",
            show_default=False,
        ),
    ] = None,
    applier: ApplierOption = None,
    allow_value_changes: AllowValueChanges = False,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    all_objects: AllObjects = False,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..managedfields import KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import StripLastApplied

    paths = list(field or ())
    if not paths:
        raise UsageError("name the fields to strip with --field PATH (e.g. --field .spec.replicas)")
    check_fields(paths)  # before anything is fetched
    retries = parse_retries(max_retries)
    named = parse_applier(applier)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster, all_objects)
    cfg = WriteConfig("strip-last-applied", dry_run, output, verbose, backup_dir, retries, allow_value_changes)
    managers = tuple(client_side_manager or [KUBECTL_CLIENT_SIDE_APPLY])

    def spec_for(obj: dict[str, Any]) -> FixCommand:
        return StripLastApplied(tuple(parse_paths(paths, obj)), managers)

    # the stripped fields go to another writer: client-side apply's next patch must leave their values
    code = run_plans(cluster, sel, cfg, write_planner(spec_for, applier=named, default_applier=own_applier,
                                                      keep=paths))
    if code:
        raise typer.Exit(code)
    return 0


def register(app: typer.Typer) -> None:
    app.command("strip-last-applied", help=STRIP_HELP, epilog=STRIP_EPILOG, no_args_is_help=False)(strip_last_applied)
