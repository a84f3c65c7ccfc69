"""``kubectl fieldown reset``: clear managedFields, give every field that is set to one manager
(``--to-manager``), or drop a manager's entries (``--drop-manager``)
(:class:`kubectl_fieldown.remedies.commands.Reset` and ``DropManagers``, written through
:mod:`.writes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from . import options
from .errors import UsageError
from .writeflags import WriteArgs, WriteOutput
from .writes import WriteJob, write_command

if TYPE_CHECKING:
    from ..remedies.commands import FixCommand


__all__ = ["register", "reset"]


RESET_HELP = """Clear managedFields, give every field that is set to one manager, or drop stale managers.

Without options, managedFields become [{}]: nothing is tracked until the next server-side apply,
which records every field already set as owned by 'before-first-apply' (no conflicts for anyone
until then). With --to-manager NAME, NAME becomes the one Apply manager of every field currently set
(the status excepted when the kind has a status subresource): its next apply then removes every
field that is not in its manifest. With --drop-manager NAME, the entries of NAME go (a previous
applier, as flux-operator's 'migrate owner'): the fields only it owned keep their values, unowned.

Before writing, the next apply of the applier (--applier, else --to-manager's, else the one
managing the object) is played on the engine; a write after which it would delete or change a
value you did not ask to change is refused unless --allow-value-changes."""

RESET_EPILOG = """\b
Examples:
  kubectl fieldown reset widget/w1 --dry-run=client
  kubectl fieldown reset deploy/web --drop-manager kustomize-controller
  kubectl fieldown reset deploy/web --to-manager argocd-controller"""


def reset(
    args: WriteArgs,
    to_manager: Annotated[
        str | None,
        typer.Option("--to-manager", metavar="NAME",
                     help="Make NAME (an Apply manager) the owner of every field currently set.", show_default=False),
    ] = None,
    drop_manager: Annotated[
        list[str] | None,
        typer.Option("--drop-manager", metavar="NAME|GLOB",
                     help="Remove every entry of this manager (repeatable, shell globs); its fields keep their "
                     "values.", show_default=False),
    ] = None,
) -> WriteJob:
    from ..remedies.commands import DropManagers, Reset

    if to_manager is not None and not to_manager.strip():
        raise UsageError("--to-manager needs a manager name")
    if to_manager is not None and drop_manager:
        raise UsageError("--to-manager and --drop-manager do not go together")
    what = f" --to-manager {to_manager}" if to_manager else "".join(f" --drop-manager {m}" for m in drop_manager or ())
    spec: FixCommand
    warning = None
    if drop_manager:
        spec = DropManagers(tuple(drop_manager))
    else:
        spec = Reset(to_manager)
        if to_manager is None and args.output is WriteOutput.text and args.dry_run is options.DryRunStrategy.none:
            warning = ("after a reset nothing is tracked until the next server-side apply, which records every "
                       "field already set as owned by before-first-apply")
    return WriteJob("reset" + what, lambda obj: spec, needs_schema=to_manager is not None, warning=warning)


def register(app: typer.Typer) -> None:
    app.command("reset", help=RESET_HELP, epilog=RESET_EPILOG, no_args_is_help=False)(write_command(reset))
