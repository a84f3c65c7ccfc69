"""``kubectl fieldown undo BACKUP...``: put back the ownership a write changed (files, or whole run
directories; ``--last`` the newest run, ``--list`` the runs).

Each backup is checked (:func:`kubectl_fieldown.remedies.restore.read_backup_document`: written by
this tool, unchanged since, of an object with a uid) and must lie under the backup directory
(``--backup-dir`` names another). The backups named of one object are restored together, from the
oldest, with its other backups in the backup directory to follow the tool's later writes. The live
object must be the one saved (uid, name, namespace, kind). The plan
(:func:`kubectl_fieldown.remedies.restore.plan_undo`) gives back the original when only this tool
wrote the object since; when anything else did, it names what changed and refuses unless
``--force`` (then it restores around it). It is written like any other plan (``kube.writes.execute``:
resourceVersion-guarded, re-planned on concurrent changes, the pre-undo state saved as a backup of
its own, so an undo can be undone). Field values are never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .completion import complete_backup_runs
from .errors import handle_errors
from .select import Selected
from .writeflags import BackupDir, DryRunOption, MaxRetries, Output, Verbose, WriteOutput, parse_retries
from .writes import WriteConfig, write_objects

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..kube.writes import Backup, ObjectTarget
    from ..remedies.writeplan import WritePlan

__all__ = ["register", "restore_plan", "undo"]


def restore_plan(named: Sequence[Backup], found: Sequence[Backup], server: str,
                 force: bool) -> Callable[[dict[str, Any]], WritePlan]:
    """From the live object back to its ownership before the oldest of ``named`` (backups of one
    object); ``found``: its other backups in the backup directory (see the module docstring)."""
    from ..remedies.requests import requests_for
    from ..remedies.restore import Saved, plan_undo
    from ..remedies.writeplan import WritePlan

    saved = [Saved(str(b.path), b.content) for b in named] + [Saved(str(b.path), b.content, named=False)
                                                              for b in found]

    def plan(live: dict[str, Any]) -> WritePlan:
        m = plan_undo(live, saved[:len(named)], saved[len(named):], force=force)
        if len(named) == 1:
            m.notes[0] += f" from {named[0].path}"
        servers = sorted({b.server for b in named if b.server and b.server != server})
        if servers:
            m.notes.append(f"the backup was taken on {', '.join(servers)}")
        return WritePlan(m, requests_for(m))

    return plan


HELP = """Put back the managedFields and last-applied annotation a write changed.

BACKUP is a backup file or a run directory (every file in it); each write command prints its
run directory, under the backup directory (--backup-dir, else $FIELDOWN_BACKUP_DIR, else
~/.kube/fieldown/backups), where backups must lie. --list shows the runs there, newest first;
--last undoes the newest. Each backup is checked first: written by this tool and unchanged since,
of the same object (uid, name, namespace, kind). When nothing but this tool wrote the object since
its backup, the original comes back whole (backups of one object from several runs are followed
from the oldest). When anything else wrote it since, undo names what changed and refuses; --force
restores around it (later writers keep their fields). Field values are never touched; the state
before the undo is saved too."""

EPILOG = """\b
Examples:
  kubectl fieldown undo --list
  kubectl fieldown undo --last --dry-run=client
  kubectl fieldown undo ~/.kube/fieldown/backups/20260101T120000.000Z-1a2b3c4d
  cd ~/.kube/fieldown/backups && kubectl fieldown undo 20260101T120000.000Z-1a2b3c4d/apps_Deployment_shop_web.json"""


@handle_errors
def undo(
    backups: Annotated[
        list[str] | None,
        typer.Argument(metavar="BACKUP...", help="Backup files or run directories.", show_default=False,
                       autocompletion=complete_backup_runs),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Restore even when the object was written after the backup (what was "
                     "written since is kept: its writers keep their fields)."),
    ] = False,
    list_runs_: Annotated[
        bool,
        typer.Option("--list", help="List the backup runs (newest first: time, command, objects) and exit."),
    ] = False,
    last: Annotated[
        bool,
        typer.Option("--last", help="Undo the newest backup run."),
    ] = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
    no_headers: options.NoHeaders = False,
) -> int:
    del no_headers  # read by the renderers (render/prefs.py), set when the flags are parsed
    from ..kube.writes import backup_files, default_backup_root
    from .errors import UsageError

    root = Path(backup_dir).expanduser() if backup_dir else default_backup_root()
    if list_runs_:
        if backups or last:
            raise UsageError("--list takes no BACKUP and no --last")
        _print_runs(root, output)
        return 0
    if last:
        from ..kube.backups import last_run

        if backups:
            raise UsageError("--last undoes the newest run: name no BACKUP with it")
        backups = [str(last_run(root))]
    if not backups:
        raise UsageError("name the backups to restore: files or run directories (or --last; --list shows them)")
    retries = parse_retries(max_retries)
    files = backup_files(backups, root)
    cfg = WriteConfig("undo", dry_run, output, verbose, backup_dir, retries)
    cluster = options.ClusterArgs(kubeconfig, context)
    code = write_objects(cluster, cfg, lambda client: _plan_all(client, files, root, force))
    if code:
        raise typer.Exit(code)
    return 0


def _plan_all(client: ClusterClient, files: Sequence[Path], root: Path,
              force: bool) -> tuple[list[Selected], Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]]:
    """One item per object: the backups named of one object (same uid) are restored together, from the
    oldest, so several runs undone at once give back the original rather than undo each other."""
    from ..kube.backups import same_object_backups
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import load_backup

    items: list[Selected] = []
    groups: dict[tuple[str, str], list[Backup]] = {}
    order: list[tuple[str, str] | Selected] = []
    for f in files:
        try:
            b = load_backup(f)
        except KubeError as e:  # a file that is no backup
            order.append(Selected(str(f), error=e))
            continue
        key = (b.server, b.uid)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(b)
    plans: dict[int, Callable[[dict[str, Any]], WritePlan]] = {}
    for entry in order:
        if isinstance(entry, Selected):
            items.append(entry)
            continue
        named = groups[entry]
        where = str(named[0].path) + (f" (+{len(named) - 1} later backups of the object)" if len(named) > 1 else "")
        try:
            target = _target(client, named[0])
        except KubeError as e:  # a type the server no longer has
            if is_fatal(e):
                raise
            items.append(Selected(where, error=e))
            continue
        found = same_object_backups(root, named[0], skip=[b.path for b in named])
        plans[id(target)] = restore_plan(named, found, client.server, force)
        items.append(Selected(where, target))
    return items, lambda t: plans[id(t)]


def _print_runs(root: Path, output: WriteOutput) -> None:
    import sys

    from ..kube.backups import list_runs
    from ..render.common import terminal_safe, write_json, write_yaml

    runs = list_runs(root)
    if output is not WriteOutput.text:
        from ..render.envelope import envelope

        doc = envelope("FieldownBackupRuns", {"backupRoot": str(root), "runs": [
            {"directory": str(r.directory), "time": r.started, "command": r.command, "objects": r.objects,
             "server": r.server} for r in runs]})
        (write_yaml if output is WriteOutput.yaml else write_json)(doc, sys.stdout)
        return
    if not runs:
        sys.stdout.write(f"no backup runs under {root}\n")
        return
    from ..render.prefs import no_headers

    rows = [] if no_headers() else [("TIME", "COMMAND", "OBJECTS", "DIRECTORY")]
    rows += [(r.started, terminal_safe(r.command) or "?", str(r.objects), str(r.directory)) for r in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3] + "\n")


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
