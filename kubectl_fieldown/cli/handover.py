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

from .errors import UsageError
from .writeflags import WriteArgs, check_fields, field_option, parse_paths
from .writes import WriteJob, write_command

if TYPE_CHECKING:
    from ..remedies.commands import FixCommand

__all__ = ["handover", "register"]

HELP = """Hand fields over to another manager (a controller, an imperative writer, an applier), with no value change.

MANAGER's Apply entry gets the fields, as if it had applied them with their current values (it may
already apply other fields: they stay), and every other owner lets go; the fields also leave the
last-applied annotation and the client-side manager, so neither 'kubectl apply' nor 'kubectl apply
--server-side' of a manifest without them removes or resets them. One write of managedFields,
guarded by the resourceVersion.

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


def handover(
    args: WriteArgs,
    field: Annotated[list[str] | None, field_option("A field to hand over (repeatable).")] = None,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="MANAGER", help="The manager that takes the fields over.", show_default=False),
    ] = None,
) -> WriteJob:
    from ..ownership.managedfields import KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import Handover

    paths = check_fields(field, "hand over")
    if not to or not to.strip():
        raise UsageError("--to MANAGER is required: the manager that takes the fields over")
    if to == KUBECTL_CLIENT_SIDE_APPLY:
        raise UsageError(f"{KUBECTL_CLIENT_SIDE_APPLY} cannot take fields over: it only ever updates")

    def spec_for(obj: dict[str, Any]) -> FixCommand:
        return Handover(tuple(parse_paths(paths, obj)), to)

    return WriteJob(f"handover --to {to}", spec_for)


def register(app: typer.Typer) -> None:
    app.command("handover", help=HELP, epilog=EPILOG, no_args_is_help=False)(write_command(handover))
