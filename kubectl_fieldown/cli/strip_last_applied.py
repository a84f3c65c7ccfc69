"""``kubectl fieldown strip-last-applied``: remove fields from the last-applied annotation and from
the client-side apply manager, so that the next ``kubectl apply`` without them leaves them to
another writer (:class:`kubectl_fieldown.remedies.commands.StripLastApplied`, written through
:mod:`.writes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from .writeflags import WriteArgs, check_fields, field_option, parse_paths
from .writes import WriteJob, write_command

if TYPE_CHECKING:
    from ..remedies.commands import FixCommand


__all__ = ["register", "strip_last_applied"]


STRIP_HELP = """Remove fields from the last-applied annotation and from the client-side apply manager.

The documented way to give a field that is in your manifest to an imperative writer or a
controller (kubectl scale, an autoscaler): afterwards the next 'kubectl apply' of the manifest
without the field leaves the field alone instead of deleting it. Paths use the API server's
syntax: .spec.replicas, .spec.containers[name="web"].image, .metadata.labels.app.kubernetes.io/name"""

STRIP_EPILOG = """\b
Examples:
  # Let the HorizontalPodAutoscaler own replicas; then remove replicas from web.yaml
  kubectl fieldown strip-last-applied deploy/web --field .spec.replicas
  kubectl apply -f web.yaml"""


def strip_last_applied(
    args: WriteArgs,
    field: Annotated[list[str] | None, field_option("A field to forget (repeatable).")] = None,
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
) -> WriteJob:
    from ..ownership.managedfields import KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import StripLastApplied

    paths = check_fields(field, "strip")
    managers = tuple(client_side_manager or [KUBECTL_CLIENT_SIDE_APPLY])

    def spec_for(obj: dict[str, Any]) -> FixCommand:
        return StripLastApplied(tuple(parse_paths(paths, obj)), managers)

    # the stripped fields go to another writer: client-side apply's next patch must leave their values
    return WriteJob("strip-last-applied", spec_for)


def register(app: typer.Typer) -> None:
    app.command("strip-last-applied", help=STRIP_HELP, epilog=STRIP_EPILOG, no_args_is_help=False)(
        write_command(strip_last_applied))
