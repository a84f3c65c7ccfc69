"""``kubectl fieldown undo BACKUP...``: put back the managedFields and last-applied annotation saved
before a write (files, or whole run directories).

Each backup is restored like any other migration: the live object is read, a plan from its
entries to the saved ones is made and written by ``kube.writes.execute`` (resourceVersion-tested,
re-planned on concurrent changes, and the pre-undo state saved as a backup of its own, so an undo
can be undone). Only ownership is restored, never a field value: writes made since the backup stay.
A backup of another object with the same name (a different uid: deleted and created again) is
refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .errors import handle_errors
from .migrate import (
    BackupDir,
    DryRunOption,
    MaxRetries,
    Output,
    RunConfig,
    Selected,
    Verbose,
    WriteOutput,
    make_backups,
    open_client,
    parse_retries,
    run_all,
    write_options,
)

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..kube.writes import Backup, ObjectTarget, WriteOutcome
    from ..migration import Migration

__all__ = ["register", "restore_plan", "undo"]


def restore_plan(backup: Backup, server: str) -> Callable[[dict[str, Any]], Migration]:
    """From the live object to the saved managedFields and annotation."""
    from ..managedfields import LAST_APPLIED_ANNOTATION, decode_entries
    from ..migration import Migration, MigrationError, ObjectRef

    saved_md = backup.object.get("metadata") or {}

    def plan(live: dict[str, Any]) -> Migration:
        md = live.get("metadata") or {}
        uid = str(md.get("uid") or "")
        if backup.uid and uid != backup.uid:
            raise MigrationError(
                f"is not the object that was saved (uid {uid}, the backup's is {backup.uid}: deleted and created "
                "again, or another cluster); refusing to restore")
        entries = decode_entries(md.get("managedFields"))
        after = decode_entries(saved_md.get("managedFields"))
        la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        la_after = (saved_md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        rv = str(md.get("resourceVersion") or "")
        notes = [f"restore {len(after)} managedFields entr{'y' if len(after) == 1 else 'ies'}"
                 + (" and the last-applied annotation" if la_after is not None else ", no last-applied annotation")
                 + f" from {backup.path}"]
        if backup.server and backup.server != server:
            notes.append(f"the backup was taken on {backup.server}")
        if rv != backup.resource_version:
            notes.append(f"written since the backup (resourceVersion {backup.resource_version} -> {rv}): only "
                         "ownership is restored, the values stay as they are now")
        return Migration(ObjectRef.of(live), rv, entries, after, la if isinstance(la, str) else None,
                         la_after if isinstance(la_after, str) else None, reset=not after, notes=notes)

    return plan


HELP = """Put back the managedFields and last-applied annotation saved before a write.

\b
BACKUP is a backup file or a run directory (every file in it); each write command prints its
run directory. Field values are never touched: only ownership is restored, guarded by the
object's resourceVersion like every write. The state before the undo is saved too."""

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
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import backup_files, execute, load_backup
    from .errors import UsageError

    if not backups:
        raise UsageError("name the backups to restore: files or run directories")
    retries = parse_retries(max_retries)
    files = backup_files(backups)
    cfg = RunConfig("undo", dry_run, output, verbose, backup_dir, retries)
    client = open_client(options.ClusterArgs(kubeconfig, context))
    try:
        items: list[Selected] = []
        plans: dict[int, Callable[[dict[str, Any]], Migration]] = {}
        for f in files:
            try:
                b = load_backup(f)
                target = _target(client, b)
            except KubeError as e:  # a file that is no backup, a type the server no longer has
                if is_fatal(e):
                    raise
                items.append(Selected(str(f), error=e))
                continue
            plans[id(target)] = restore_plan(b, client.server)
            items.append(Selected(str(f), target))
        store = make_backups(client, cfg)
        wopts = write_options(cfg)

        def act(t: ObjectTarget) -> WriteOutcome:
            return execute(client, t, plans[id(t)], wopts, store)

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
    app.command("undo", help=HELP, epilog=EPILOG, no_args_is_help=True)(undo)
