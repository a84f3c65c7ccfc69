"""``kubectl fieldown undo BACKUP...``: put back the ownership a write changed (files, or whole run
directories).

Each backup is checked (:func:`kubectl_fieldown.remedies.restore.read_backup_document`: written by
this tool, unchanged since, of an object with a uid) and must lie under the backup directory
(``--backup-dir`` names another). The live object must be the one saved (uid, name, namespace,
kind). The plan (:func:`kubectl_fieldown.remedies.restore.plan_restore`) puts back what the write
changed and keeps what was written since; when managers were added since the backup it refuses
unless ``--force``. It is written like any other plan (``kube.writes.execute``: resourceVersion-
guarded, re-planned on concurrent changes, the pre-undo state saved as a backup of its own, so an
undo can be undone). Field values are never touched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .errors import handle_errors
from .select import Selected
from .writes import (
    BackupDir,
    DryRunOption,
    MaxRetries,
    Output,
    Verbose,
    WriteConfig,
    WriteOutput,
    make_backups,
    open_client,
    parse_retries,
    run_all,
    write_one,
    write_options,
)

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..kube.writes import Backup, ObjectTarget, WriteOutcome
    from ..remedies.writeplan import WritePlan

__all__ = ["register", "restore_plan", "undo"]


def restore_plan(backup: Backup, server: str, force: bool) -> Callable[[dict[str, Any]], WritePlan]:
    """From the live object back to the saved ownership (see the module docstring)."""
    from ..remedies.requests import requests_for
    from ..remedies.restore import plan_restore
    from ..remedies.writeplan import WritePlan

    def plan(live: dict[str, Any]) -> WritePlan:
        m = plan_restore(live, backup.content, force=force)
        m.notes[0] += f" from {backup.path}"
        if backup.server and backup.server != server:
            m.notes.append(f"the backup was taken on {backup.server}")
        return WritePlan(m, requests_for(m))

    return plan


HELP = """Put back the managedFields and last-applied annotation a write changed.

\b
BACKUP is a backup file or a run directory (every file in it); each write command prints its
run directory, under the backup directory (--backup-dir, else $FIELDOWN_BACKUP_DIR, else
~/.kube/fieldown/backups), where backups must lie. Each backup is checked first: written by this
tool and unchanged since, of the same object (uid, name, namespace, kind). Only what the write
changed goes back: ownership that managers took since is kept, and when managers were added since
the backup, undo refuses unless --force. Field values are never touched; the state before the undo
is saved too."""

EPILOG = """\b
Examples:
  kubectl fieldown undo ~/.kube/fieldown/backups/20260101T120000Z-1a2b3c4d --dry-run=client
  kubectl fieldown undo ~/.kube/fieldown/backups/20260101T120000Z-1a2b3c4d/apps_Deployment_shop_web.json"""


@handle_errors
def undo(
    backups: Annotated[
        list[str] | None,
        typer.Argument(metavar="BACKUP...", help="Backup files or run directories.", show_default=False),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Restore even when managers wrote the object after the backup (their "
                     "ownership is kept)."),
    ] = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import backup_files, default_backup_root, load_backup
    from .errors import UsageError

    if not backups:
        raise UsageError("name the backups to restore: files or run directories")
    retries = parse_retries(max_retries)
    root = Path(backup_dir).expanduser() if backup_dir else default_backup_root()
    files = backup_files(backups, root)
    cfg = WriteConfig("undo", dry_run, output, verbose, backup_dir, retries)
    client = open_client(options.ClusterArgs(kubeconfig, context))
    try:
        items: list[Selected] = []
        plans: dict[int, Callable[[dict[str, Any]], WritePlan]] = {}
        for f in files:
            try:
                b = load_backup(f)
                target = _target(client, b)
            except KubeError as e:  # a file that is no backup, a type the server no longer has
                if is_fatal(e):
                    raise
                items.append(Selected(str(f), error=e))
                continue
            plans[id(target)] = restore_plan(b, client.server, force)
            items.append(Selected(str(f), target))
        store = make_backups(client, cfg)
        wopts = write_options(cfg)

        def act(t: ObjectTarget) -> WriteOutcome:
            return write_one(client, t, plans[id(t)], wopts, store)

        code = run_all(client, items, act, cfg, store)
    finally:
        client.close()
    if code:
        raise typer.Exit(code)
    return 0


def _target(client: ClusterClient, b: Backup) -> ObjectTarget:
    from ..kube.discovery import ResourceInfo
    from ..kube.writes import BackupError, ObjectTarget

    if not b.name:
        raise BackupError(f"{b.path}: the saved object has no name")
    if b.resource:
        res = ResourceInfo(group=b.group, version=b.version, resource=b.resource, kind=b.kind,
                           namespaced=b.namespaced)
    else:
        res = client.discovery.resolve_kind(str(b.object.get("apiVersion") or ""), b.kind)
    return ObjectTarget(res, b.name, b.namespace if res.namespaced else None)


def register(app: typer.Typer) -> None:
    app.command("undo", help=HELP, epilog=EPILOG, no_args_is_help=False)(undo)
