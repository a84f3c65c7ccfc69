"""``kubectl fieldown migrate``: move objects between client-side and server-side apply, or do now what
an applier's first server-side sync would do (``--for``), keeping their ownership exact.

The plans are :mod:`kubectl_fieldown.remedies.commands`' MigrateToServerSide, MigrateToClientSide
and MigrateFor; selection, the check against the applier's next apply, the guarded writes and the
output are the write commands' (:mod:`.writes`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .completion import complete_managers
from .errors import UsageError
from .writeflags import WriteArgs
from .writes import WriteJob, write_command

if TYPE_CHECKING:
    from ..appliers import Applier


__all__ = ["MigrateTo", "migrate", "register"]


class MigrateTo(str, enum.Enum):
    server_side = "server-side"
    client_side = "client-side"


def migrate_for_applier(text: str, from_managers: Sequence[str] | None, field_manager: str | None,
                        keep_last_applied: bool | None, all_fields: bool, checked_by: Applier | None) -> Applier:
    """``migrate --for KIND[:MANAGER]`` with the options that go with it."""
    from ..appliers import Applier, ApplierError, ApplierKind
    from ..remedies.commands import MIGRATE_FOR_KINDS

    kinds = ", ".join(k.value for k in MIGRATE_FOR_KINDS)
    kind_text, _, manager = text.partition(":")
    if kind_text not in [k.value for k in MIGRATE_FOR_KINDS]:
        raise UsageError(f"--for must be one of {kinds} (optionally KIND:MANAGER), not {text!r}")
    for flag, given in (("--field-manager", field_manager is not None), ("--applier", checked_by is not None),
                        ("--keep-last-applied/--drop-last-applied", keep_last_applied is not None),
                        ("--all-fields", all_fields)):
        if given:
            raise UsageError(f"{flag} does not go with --for: the applier decides (name its manager as "
                             "--for KIND:MANAGER)")
    kind = ApplierKind(kind_text)
    sources = list(from_managers or ())
    extra: dict[str, Any] = {}
    if kind is ApplierKind.argocd and sources:
        if len(sources) != 1 or any(c in sources[0] for c in "*?["):
            raise UsageError("--for argocd takes one --from-manager name: Argo CD's client-side-apply migration "
                             "manager")
        extra["csa_manager"] = sources[0]
    elif kind is ApplierKind.flux and sources:
        extra["override_managers"] = tuple(sources)
    elif sources:
        raise UsageError(f"--from-manager does not go with --for {kind.value}: it migrates the managers it always "
                         "migrates")
    try:
        return Applier.of(kind, manager or None, **extra)
    except ApplierError as e:
        raise UsageError(f"--for {text}: {e}") from None


MIGRATE_HELP = """Move objects between client-side and server-side apply, keeping their ownership exact.

--to server-side: the fields of the source managers (default kubectl-client-side-apply; globs)
become an Apply entry of --field-manager (default kubectl), per subresource and for every
apiVersion, so that the next 'kubectl apply --server-side' of the same manifest changes nothing,
and of the manifest minus a field deletes that field.

--to client-side: the Apply entry of --from-manager (default kubectl) becomes a
kubectl-client-side-apply Update entry, and the last-applied annotation is rebuilt from the fields
it owns, so that the next plain 'kubectl apply' behaves the same way.

--for argocd|flux|helm|kubectl: what that applier's first server-side sync would do to the
object (its managers folded into its Apply entry), done now; see docs/migrate.md.

Every write is a JSON patch guarded by the object's resourceVersion; an object that changes
meanwhile is read, planned and written again. Each object is saved before its first write
(--backup-dir); 'kubectl fieldown undo' puts managedFields and the annotation back."""

MIGRATE_EPILOG = """\b
Examples:
  # Preview, then migrate one Deployment from client-side to server-side apply
  kubectl fieldown migrate deploy/web --to server-side --dry-run=client
  kubectl fieldown migrate deploy/web --to server-side
\b
  # A whole namespace, handing the fields of every kubectl* Update manager to flux
  kubectl fieldown migrate --all -n shop --to server-side --from-manager 'kubectl*' --field-manager flux
\b
  # Do now what Flux's first server-side sync would do (checked: when that would lose a value,
  # it refuses and names the fix that keeps every value)
  kubectl fieldown migrate --all -n shop --for flux --dry-run=client
\b
  # Back to client-side apply
  kubectl fieldown migrate -f web.yaml --to client-side
\b
  # Undo a run (the directory is printed at the end of each run)
  kubectl fieldown undo ~/.kube/fieldown/backups/20260101T120000.000Z-1a2b3c4d"""


def migrate(
    args: WriteArgs,
    to: Annotated[
        MigrateTo | None,
        typer.Option("--to", metavar="server-side|client-side", help="Where to move the objects.",
                     case_sensitive=False, show_default=False),
    ] = None,
    from_manager: Annotated[
        list[str] | None,
        typer.Option(
            "--from-manager",
            metavar="NAME|GLOB",
            help="--to server-side: the Update managers whose fields move (repeatable, shell globs; "
            "default kubectl-client-side-apply). --to client-side: the one Apply manager to turn into "
            "client-side apply (default kubectl).",
            show_default=False,
            autocompletion=complete_managers,
        ),
    ] = None,
    field_manager: Annotated[
        str | None,
        options.field_manager_option("--to server-side: the Apply manager that gets the fields (default kubectl)."),
    ] = None,
    keep_last_applied: Annotated[
        bool | None,
        typer.Option(
            "--keep-last-applied/--drop-last-applied",
            help="--to server-side: keep the last-applied annotation (default when the target manager is "
            "kubectl, so a later plain 'kubectl apply' still works) or remove it (default otherwise).",
            show_default=False,
        ),
    ] = None,
    all_fields: Annotated[
        bool,
        typer.Option("--all-fields", help="--to server-side: move every field of the source managers, not only "
                     "those the target's manifest sets (the last-applied annotation, its Apply entry, -f)."),
    ] = False,
    for_applier: Annotated[
        str | None,
        typer.Option(
            "--for",
            metavar="KIND[:MANAGER]",
            help="Do now, guarded and undoable, what that applier's first server-side sync would do (argocd, "
            "flux, helm or kubectl; implies --to server-side): fold the same managers into its Apply entry, "
            "but only the fields its manifest sets and never a subresource entry, and say where that differs "
            "from its own migration. --from-manager: Argo CD's client-side-apply migration manager, Flux's "
            "--override-manager names.",
            show_default=False,
        ),
    ] = None,
) -> WriteJob:
    from ..ownership.managedfields import KUBECTL, KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import MigrateFor, MigrateToClientSide, MigrateToServerSide

    if for_applier is not None:
        if to is MigrateTo.client_side:
            raise UsageError("--for prepares a switch to server-side apply: it cannot go with --to client-side")
        to = MigrateTo.server_side
    if to is None:
        raise UsageError("--to is required: server-side or client-side (or --for APPLIER)")
    _, named = args.parsed()  # before the checks below
    what = f"migrate --for {for_applier}" if for_applier is not None else f"migrate --to {to.value}"
    spec: MigrateToServerSide | MigrateToClientSide | MigrateFor
    if for_applier is not None:
        spec = MigrateFor(migrate_for_applier(for_applier, from_manager, field_manager, keep_last_applied,
                                              all_fields, named))
    elif to is MigrateTo.server_side:
        if field_manager == KUBECTL_CLIENT_SIDE_APPLY:
            raise UsageError(f"{KUBECTL_CLIENT_SIDE_APPLY} is client-side apply's manager: it cannot be the "
                             "server-side applier")
        spec = MigrateToServerSide(tuple(from_manager or [KUBECTL_CLIENT_SIDE_APPLY]), field_manager or KUBECTL,
                                   keep_last_applied, all_fields)
    else:
        if field_manager is not None:
            raise UsageError("--field-manager is for --to server-side; client-side apply always records "
                             f"{KUBECTL_CLIENT_SIDE_APPLY}")
        if keep_last_applied is not None:
            raise UsageError("--keep-last-applied/--drop-last-applied are for --to server-side: client-side apply "
                             "needs the annotation")
        if all_fields:
            raise UsageError("--all-fields is for --to server-side")
        managers = list(from_manager or [KUBECTL])
        if len(managers) != 1 or any(c in managers[0] for c in "*?["):
            raise UsageError("--to client-side takes one --from-manager name (no globs): the Apply manager whose "
                             "manifest becomes the last-applied annotation")
        spec = MigrateToClientSide(managers[0])
    return WriteJob(what, lambda obj: spec)


def register(app: typer.Typer) -> None:
    app.command("migrate", help=MIGRATE_HELP, epilog=MIGRATE_EPILOG, no_args_is_help=False)(write_command(migrate))
