"""Backups of the objects the write commands change, and the reading of them for ``undo``.

One JSON file per object and run, ``<root>/<UTC time>-<run id>/<group>_<kind>_<namespace>_<name>.json``
(the time to the millisecond, so that runs sort in the order they ran; directory 0700, files 0600:
they hold whole objects, Secrets included): the full object as read, a header (command, server,
context, time), the plan's target, and the record of the tool's writes (each request's
resourceVersion before and after, and what the last one returned), with a digest
(``remedies.restore.backup_document``). ``root`` is ``--backup-dir``, else ``$FIELDOWN_BACKUP_DIR``,
else ``~/.kube/fieldown/backups`` — not under the cache directory, which people and tools wipe freely.

Every file is written whole or not at all (a temporary file, fsync, rename): a full disk fails the
object's write before anything is sent and leaves no empty or cut backup behind.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import KubeError

if TYPE_CHECKING:
    from ..remedies.plans import Migration
    from ..remedies.restore import BackupContent
    from .discovery import ResourceInfo

__all__ = [
    "BACKUP_DIR_ENV",
    "BACKUP_FORMAT",
    "Backup",
    "BackupError",
    "BackupRun",
    "BadBackupArgument",
    "RunInfo",
    "backup_files",
    "default_backup_root",
    "last_run",
    "list_runs",
    "load_backup",
    "same_object_backups",
]

BACKUP_DIR_ENV = "FIELDOWN_BACKUP_DIR"
BACKUP_FORMAT = "fieldown.backup/v2"


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class BackupError(KubeError):
    """A backup that cannot be written or read; nothing is written to the cluster without one."""


class BadBackupArgument(BackupError):
    """``undo`` named something that is not a backup it may restore from: an input error (exit 2)."""

    exit_code = 2


def default_backup_root() -> Path:
    explicit = os.environ.get(BACKUP_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path.home() / ".kube" / "fieldown" / "backups"


_UNSAFE = re.compile(r"[^A-Za-z0-9.\-]+")


def _file_part(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-") or "_"


def _stem(group: str, kind: str, namespace: str | None, name: str) -> str:
    # "_" never occurs in a namespace, so "_cluster" cannot be mistaken for one
    ns = _file_part(namespace) if namespace else "_cluster"
    return "_".join((_file_part(group or "core"), _file_part(kind), ns, _file_part(name)))


def _write_atomic(path: Path, data: bytes, *, replace: bool) -> None:
    """Write ``path`` whole or not at all: a temporary file in the same directory, written and fsynced,
    then renamed over ``path`` (``replace``) or linked to it (fails if it exists), and the directory
    fsynced. On any error the temporary file is removed: a full disk leaves no empty or cut backup."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
            os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@dataclass
class _Saved:
    """A backup of this run: its file, the object saved, and the record of the writes since."""

    path: Path
    obj: Mapping[str, Any]
    res: ResourceInfo
    header: dict[str, Any]
    plan: Migration | None
    writes: list[tuple[str, str]] = field(default_factory=list)
    returned: Mapping[str, Any] | None = None
    complete: bool = False


@dataclass
class BackupRun:
    """The backups of one command run, in one directory made at the first save."""

    root: Path
    command: str
    server: str = ""
    context: str | None = None
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    started: float = field(default_factory=time.time)
    _saved: dict[str, _Saved] = field(default_factory=dict)
    _by_path: dict[Path, _Saved] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        t = _dt.datetime.fromtimestamp(self.started, tz=_dt.timezone.utc)
        # to the millisecond: runs started in the same second still sort in the order they ran
        return self.root / f"{t.strftime('%Y%m%dT%H%M%S')}.{t.microsecond // 1000:03d}Z-{self.run_id}"

    @property
    def used(self) -> bool:
        return bool(self._saved)

    def save(self, res: ResourceInfo, obj: Mapping[str, Any], plan: Migration | None = None) -> Path:
        """Write ``obj``'s backup, with the plan's target (what the write leaves, for ``undo``). An
        object already written in this run keeps its first backup (the state before the run) and
        takes the newer plan's target; one not written yet is saved again as read now (a re-plan after
        another writer changed it: the backup is the state the tool's first write starts from)."""
        md = obj.get("metadata") or {}
        uid = str(md.get("uid") or "")
        key = uid or f"{res.group_resource}/{md.get('namespace')}/{md.get('name')}"
        done = self._saved.get(key)
        if done is not None:
            if not done.writes:
                done.obj = obj
            done.plan = plan
            self._rewrite(done)
            return done.path
        directory = self.directory
        made = False
        try:
            if not self.root.exists():
                # the root of everyone's backups holds whole objects too: private from the start
                self.root.mkdir(parents=True, mode=0o700)
            if not directory.exists():
                directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                made = True
            with contextlib.suppress(OSError):
                os.chmod(directory, 0o700)
            stem = _stem(res.group, res.kind, str(md["namespace"]) if md.get("namespace") else None,
                         str(md.get("name")))
            header = {
                "command": self.command,
                "server": self.server,
                "context": self.context,
                "takenAt": _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            saved = _Saved(directory / f"{stem}.json", obj, res, header, plan)
            n = 1
            while True:
                try:
                    _write_atomic(saved.path, self._data(saved), replace=False)
                    break
                except FileExistsError:  # two objects whose names flatten to the same file name
                    n += 1
                    saved.path = directory / f"{stem}.{n}.json"
        except OSError as e:
            if made and not self._saved:
                with contextlib.suppress(OSError):
                    directory.rmdir()  # no run directory without a backup in it
            raise BackupError(f"cannot save the backup of {md.get('name')!r} under {directory}: "
                              f"{e.strerror or e}; nothing was written") from None
        self._saved[key] = saved
        self._by_path[saved.path] = saved
        return saved.path

    def record(self, path: Path, tested: str, returned: Mapping[str, Any], *, complete: bool = False) -> str | None:
        """Add one sent request to the backup's record of the write (the resourceVersion it tested and
        the object the server returned), so that ``undo`` can tell the tool's writes from later ones.
        Returns why the record could not be saved (None: it was); the write itself is done either way,
        and the backup file stays whole (the previous version) if it cannot be replaced."""
        saved = self._by_path.get(path)
        if saved is None:
            return None
        saved.writes.append((tested, _rv(returned)))
        saved.returned = returned
        saved.complete = complete
        return self._try_rewrite(saved)

    def completed(self, path: Path) -> str | None:
        """Every request of the object's plan was sent."""
        saved = self._by_path.get(path)
        if saved is None or saved.complete:
            return None
        saved.complete = True
        return self._try_rewrite(saved)

    def _try_rewrite(self, saved: _Saved) -> str | None:
        try:
            self._rewrite(saved)
        except BackupError as e:
            return str(e)
        return None

    def _rewrite(self, saved: _Saved) -> None:
        try:
            _write_atomic(saved.path, self._data(saved), replace=True)
        except OSError as e:
            raise BackupError(f"cannot update the backup {saved.path}: {e.strerror or e}") from None

    def _data(self, saved: _Saved) -> bytes:
        from ..remedies.restore import backup_document, written_record

        res = saved.res
        resource = {"group": res.group, "version": res.version, "resource": res.resource, "kind": res.kind,
                    "namespaced": res.namespaced}
        written = written_record(saved.writes, saved.returned, saved.complete)
        doc = backup_document(saved.obj, resource, saved.header, saved.plan, written)
        return (json.dumps(doc, indent=1, sort_keys=False) + "\n").encode()


@dataclass(frozen=True)
class Backup:
    """A backup file as read back by ``undo``."""

    path: Path
    content: BackupContent

    @property
    def object(self) -> dict[str, Any]:
        return self.content.object

    @property
    def server(self) -> str:
        return str(self.content.header.get("server") or "")

    @property
    def uid(self) -> str:
        return self.content.uid

    @property
    def resource_version(self) -> str:
        return self.content.resource_version

    @property
    def group(self) -> str:
        return str(self.content.resource.get("group") or "")

    @property
    def version(self) -> str:
        return str(self.content.resource.get("version") or "")

    @property
    def resource(self) -> str:
        return str(self.content.resource.get("resource") or "")

    @property
    def kind(self) -> str:
        return str(self.content.resource.get("kind") or self.object.get("kind") or "")

    @property
    def namespaced(self) -> bool:
        return bool(self.content.resource.get("namespaced", True))

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def name(self) -> str:
        return str((self.object.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str | None:
        ns = (self.object.get("metadata") or {}).get("namespace")
        return str(ns) if ns else None


def load_backup(path: Path) -> Backup:
    from ..remedies.restore import BackupError as ContentError
    from ..remedies.restore import read_backup_document

    try:
        doc = json.loads(path.read_bytes())
    except OSError as e:
        raise BadBackupArgument(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise BadBackupArgument(f"{path}: not a fieldown backup (not JSON: {e})") from None
    try:
        return Backup(path, read_backup_document(doc, str(path)))
    except ContentError as e:
        raise BadBackupArgument(str(e)) from None


def backup_files(paths: Iterable[str | Path], root: Path) -> list[Path]:
    """Backup files named directly, or every ``*.json`` of a run directory (sorted). Files must lie
    under ``root`` (the backup directory: ``--backup-dir``, ``$FIELDOWN_BACKUP_DIR`` or the default):
    ``undo`` restores what this tool saved, not any file that looks like it."""
    out: list[Path] = []
    top = root.expanduser().resolve()
    for p in paths:
        path = Path(p).expanduser()
        if path.is_dir():
            found = sorted(f for f in path.glob("*.json") if f.is_file())
            if not found:
                raise BadBackupArgument(f"{path}: no backup files (*.json) in this directory")
        elif path.exists():
            found = [path]
        else:
            raise BadBackupArgument(f"{path}: no such file or directory")
        for f in found:
            if not f.resolve().is_relative_to(top):
                raise BadBackupArgument(f"{f}: not under the backup directory {root}; name that directory with "
                                  "--backup-dir to restore from it")
        out.extend(found)
    return out




# --- finding backups -----------------------------------------------------------------------------------

# a run directory: the UTC time it started (to the millisecond; older versions: whole seconds) and the run id
_RUN_DIR = re.compile(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(?:\.(\d{3}))?Z-[0-9a-f]+")


def _run_key(p: Path) -> tuple[str, str, str]:
    m = _RUN_DIR.fullmatch(p.name)
    assert m is not None
    return "".join(m.groups()[:6]), m.group(7) or "000", p.name


def _runs(root: Path) -> list[Path]:
    """The run directories under ``root``, oldest first (their names start with the UTC time)."""
    try:
        found = [p for p in root.expanduser().iterdir() if _RUN_DIR.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return []
    return sorted(found, key=_run_key)


def same_object_backups(root: Path, backup: Backup, skip: Iterable[Path] = ()) -> list[Backup]:
    """The other backups of ``backup``'s object (same uid) in every run under ``root``: ``undo`` follows
    the tool's later writes of the object through them. Files that cannot be read are passed over."""
    stem = _stem(backup.group, backup.kind, backup.namespace, backup.name)
    own = re.compile(re.escape(stem) + r"(\.\d+)?\.json")
    skipped = {p.resolve() for p in skip}
    out: list[Backup] = []
    for run in _runs(root):
        try:
            names = sorted(f for f in os.listdir(run) if own.fullmatch(f))
        except OSError:
            continue
        for name in names:
            f = run / name
            if f.resolve() in skipped:
                continue
            try:
                other = load_backup(f)
            except BackupError:
                continue
            if other.uid == backup.uid:
                out.append(other)
    return out


@dataclass(frozen=True)
class RunInfo:
    """One run directory as ``undo --list`` shows it."""

    directory: Path
    started: str
    """UTC, RFC 3339."""
    command: str
    objects: int
    server: str


def list_runs(root: Path) -> list[RunInfo]:
    """Every run directory under ``root``, newest first, with the command that wrote it (read from its
    first backup) and how many objects it saved."""
    out: list[RunInfo] = []
    for run in reversed(_runs(root)):
        m = _RUN_DIR.fullmatch(run.name)
        assert m is not None
        y, mo, d, h, mi, s, _ = m.groups()
        try:
            files = sorted(f for f in os.listdir(run) if f.endswith(".json") and not f.startswith("."))
        except OSError:
            continue
        command = server = ""
        if files:
            with contextlib.suppress(BackupError):
                first = load_backup(run / files[0])
                command, server = first.content.command, first.server
        out.append(RunInfo(run, f"{y}-{mo}-{d}T{h}:{mi}:{s}Z", command, len(files), server))
    return out


def last_run(root: Path) -> Path:
    """The newest run directory under ``root``."""
    runs = _runs(root)
    if not runs:
        raise BadBackupArgument(f"no backup runs under {root}")
    return runs[-1]
