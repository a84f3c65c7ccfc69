"""``kubectl fieldown handover TYPE/NAME --field PATH --to MANAGER``: give fields to another writer.

The server-side variant of the documented hand-over ("transferring ownership"), as one
resourceVersion-guarded write that changes no value: MANAGER's Apply entry gets the fields, as if
it had applied them with their current values (MANAGER may already apply other fields: they
stay); every other entry — MANAGER's own Update entries included — lets go of them; and they leave
the last-applied annotation and the client-side manager, so neither ``kubectl apply`` nor
``kubectl apply --server-side`` of a manifest without them removes or resets them. The plan is
:func:`kubectl_fieldown.remedies.plans.plan_handover`; like every write it is checked against the
next apply of the applier managing the object (``--applier`` to name another) first.
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

__all__ = ["handover", "register"]

HELP = """Hand fields over to another manager (a controller, an imperative writer, an applier), with no value change.

\b
MANAGER's Apply entry gets the fields, as if it had applied them with their current values (it may
already apply other fields: they stay), and every other owner lets go; the fields also leave the
last-applied annotation and the client-side manager, so neither 'kubectl apply' nor 'kubectl apply
--server-side' of a manifest without them removes or resets them. One write of managedFields,
guarded by the resourceVersion.

\b
Before writing, the next apply of the applier managing the object (--applier to name another) is
played on the engine, with its manifest minus the fields handed to MANAGER; a write after which it
would delete or change a value you did not ask to change is refused unless --allow-value-changes."""

EPILOG = """\b
Examples:
  # An autoscaler takes over replicas; then remove replicas from the manifest
  kubectl fieldown handover deploy/web --field .spec.replicas --to hpa-controller
\b
  # Keep a label added with 'kubectl label' through a switch to Flux (which folds kubectl* managers)
  kubectl fieldown handover deploy/web --field .metadata.labels.team --to manual-edits --applier flux
\b
  kubectl fieldown handover widget/w1 --field '.spec.containers[name="a"].image' --to image-updater --dry-run=client"""


@handle_errors
def handover(
    resources: Resources = None,
    field: Annotated[
        list[str] | None,
        typer.Option("--field", metavar="PATH", help="A field to hand over (repeatable).", show_default=False),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="MANAGER", help="The manager that takes the fields over.", show_default=False),
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
    from ..remedies.commands import Handover

    paths = list(field or ())
    if not paths:
        raise UsageError("name the fields to hand over with --field PATH (e.g. --field .spec.replicas)")
    check_fields(paths)  # before anything is fetched
    if not to or not to.strip():
        raise UsageError("--to MANAGER is required: the manager that takes the fields over")
    if to == KUBECTL_CLIENT_SIDE_APPLY:
        raise UsageError(f"{KUBECTL_CLIENT_SIDE_APPLY} cannot take fields over: it only ever updates")
    retries = parse_retries(max_retries)
    named = parse_applier(applier)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster, all_objects)
    cfg = WriteConfig(f"handover --to {to}", dry_run, output, verbose, backup_dir, retries, allow_value_changes)

    def spec_for(obj: dict[str, Any]) -> FixCommand:
        return Handover(tuple(parse_paths(paths, obj)), to)

    # the applier keeps the fields in its manifest only when it is the one taking them
    code = run_plans(cluster, sel, cfg, write_planner(spec_for, applier=named, default_applier=own_applier, keep=paths,
                                                      receiver=to))
    if code:
        raise typer.Exit(code)
    return 0


def register(app: typer.Typer) -> None:
    app.command("handover", help=HELP, epilog=EPILOG, no_args_is_help=False)(handover)
