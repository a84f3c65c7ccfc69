"""Guarded ownership writes: backup, resourceVersion-tested JSON patches, re-plan and retry.

The one place where migrations touch a cluster. For one object, :func:`execute` runs::

    GET → plan (a pure function: object → Migration) → unchanged? done
        → save a backup (once per object and run, before its first write)
        → send each JSON patch of the plan, the resourceVersion returned by one write filling in
          the test of the next (``migration.RESOURCE_VERSION``)
        → check that the server recorded the planned managedFields

Every patch starts with a ``test`` of ``metadata.resourceVersion``, so nothing written since the
object was read can be overwritten. When the object changed meanwhile — 409, or the 422 this API
server answers when a ``test`` op fails — the object is read again and the plan made again (plans
are idempotent, so a half-written plan re-plans to the rest of it), at most ``max_retries`` times
with a jittered backoff; then the object is reported as failed. A 422 whose object did not change
is a real rejection and fails at once.

Dry runs: ``client`` plans and returns the patches, sends nothing and saves nothing; ``server``
sends every patch with ``dryRun=All`` against the live object. The first patch of a two-patch
plan is not persisted by a dry run, so each later patch is tested against the live resourceVersion
instead of the one the first would have returned: the server checks each step on its own, and since
the later patch (managedFields) changes no field, its answer shows exactly the planned entries.

Backups: one JSON file per object and run, ``<root>/<UTC time>-<run id>/<group>_<kind>_<namespace>_<name>.json``
(directory 0700, files 0600: they hold whole objects, Secrets included), the full object as read
plus a header (command, server, context, resourceVersion, uid, time). ``root`` is ``--backup-dir``,
else ``$FIELDOWN_BACKUP_DIR``, else ``~/.kube/fieldown/backups`` — not under the cache directory,
which people and tools wipe freely.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import enum
import json
import os
import random
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import Conflict, Invalid, KubeError, is_fatal

if TYPE_CHECKING:
    from ..managedfields import ManagedFieldsEntry
    from ..migration import Migration
    from .client import ClusterClient
    from .discovery import ResourceInfo

__all__ = [
    "BACKUP_DIR_ENV",
    "BACKUP_FORMAT",
    "Backup",
    "BackupError",
    "BackupRun",
    "DryRunMode",
    "ObjectTarget",
    "Result",
    "WriteOptions",
    "WriteOutcome",
    "backup_files",
    "default_backup_root",
    "execute",
    "load_backup",
    "resolve_placeholder",
]

BACKUP_DIR_ENV = "FIELDOWN_BACKUP_DIR"
BACKUP_FORMAT = "fieldown.backup/v1"

DryRunMode = Literal["none", "client", "server"]


class Result(str, enum.Enum):
    changed = "changed"
    unchanged = "unchanged"
    failed = "failed"


@dataclass(frozen=True)
class ObjectTarget:
    """One object to write. ``initial`` is a copy already read (a LIST item), used as the first
    read instead of a GET: if it is stale, the resourceVersion test fails and it is read again."""

    res: ResourceInfo
    name: str
    namespace: str | None
    initial: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        ns = f" -n {self.namespace}" if self.namespace and self.res.namespaced else ""
        return f"{self.res.group_resource}/{self.name}{ns}"


@dataclass
class WriteOutcome:
    """What happened to one object; ``patches`` are filled for dry runs only."""

    api_version: str
    kind: str
    namespace: str | None
    name: str
    result: Result
    retries: int = 0
    patches_sent: int = 0
    backup: Path | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    patches: list[list[dict[str, Any]]] = field(default_factory=list)
    dry_run: DryRunMode = "none"
    steps: list[dict[str, Any]] = field(default_factory=list)
    """Commands of several writes (handover) describe each step here."""

    @property
    def is_secret(self) -> bool:
        return self.kind == "Secret" and self.api_version == "v1"

    @classmethod
    def for_target(cls, target: ObjectTarget, result: Result, **kw: Any) -> WriteOutcome:
        return cls(api_version=target.res.api_version, kind=target.res.kind,
                   namespace=target.namespace if target.res.namespaced else None, name=target.name,
                   result=result, **kw)


@dataclass(frozen=True)
class WriteOptions:
    dry_run: DryRunMode = "none"
    max_retries: int = 5
    backoff_base: float = 0.05
    backoff_max: float = 1.0
    sleep: Callable[[float], None] = time.sleep

    def backoff(self, attempt: int) -> float:
        """Seconds before retry ``attempt`` (from 1), jittered so that bulk runs racing the same
        writer do not retry in lockstep."""
        return float(min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5))


# --- backups -------------------------------------------------------------------------------------


class BackupError(KubeError):
    """A backup that cannot be written or read; nothing is written to the cluster without one."""


def default_backup_root() -> Path:
    explicit = os.environ.get(BACKUP_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path.home() / ".kube" / "fieldown" / "backups"


_UNSAFE = re.compile(r"[^A-Za-z0-9.\-]+")


def _file_part(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-") or "_"


@dataclass
class BackupRun:
    """The backups of one command run, in one directory made at the first save."""

    root: Path
    command: str
    server: str = ""
    context: str | None = None
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    started: float = field(default_factory=time.time)
    _saved: dict[str, Path] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        stamp = _dt.datetime.fromtimestamp(self.started, tz=_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        return self.root / f"{stamp}-{self.run_id}"

    @property
    def used(self) -> bool:
        return bool(self._saved)

    def save(self, res: ResourceInfo, obj: Mapping[str, Any]) -> Path:
        """Write ``obj``'s backup; an object already saved in this run keeps its first backup (the
        state before the run), so a command that writes an object in several steps can be undone
        as a whole."""
        md = obj.get("metadata") or {}
        uid = str(md.get("uid") or "")
        key = uid or f"{res.group_resource}/{md.get('namespace')}/{md.get('name')}"
        done = self._saved.get(key)
        if done is not None:
            return done
        directory = self.directory
        try:
            if not self.root.exists():
                # the root of everyone's backups holds whole objects too: private from the start
                self.root.mkdir(parents=True, mode=0o700)
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with contextlib.suppress(OSError):
                os.chmod(directory, 0o700)
            # "_" never occurs in a namespace, so "_cluster" cannot be mistaken for one
            ns = _file_part(str(md["namespace"])) if md.get("namespace") else "_cluster"
            stem = "_".join((_file_part(res.group or "core"), _file_part(res.kind), ns,
                             _file_part(str(md.get("name")))))
            path = directory / f"{stem}.json"
            n = 1
            while path.exists():  # two objects whose names flatten to the same file name
                n += 1
                path = directory / f"{stem}.{n}.json"
            doc = {
                "format": BACKUP_FORMAT,
                "command": self.command,
                "server": self.server,
                "context": self.context,
                "takenAt": _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "resource": {"group": res.group, "version": res.version, "resource": res.resource,
                             "kind": res.kind, "namespaced": res.namespaced},
                "uid": uid,
                "resourceVersion": str(md.get("resourceVersion") or ""),
                "object": obj,
            }
            data = (json.dumps(doc, indent=1, sort_keys=False) + "\n").encode()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise BackupError(f"cannot save the backup of {md.get('name')!r} under {directory}: "
                              f"{e.strerror or e}; nothing was written") from None
        self._saved[key] = path
        return path


@dataclass(frozen=True)
class Backup:
    """A backup file as read back by ``undo``."""

    path: Path
    command: str
    server: str
    context: str | None
    uid: str
    resource_version: str
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    object: dict[str, Any]

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
    try:
        doc = json.loads(path.read_bytes())
    except OSError as e:
        raise BackupError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise BackupError(f"{path}: not a fieldown backup (not JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != BACKUP_FORMAT or not isinstance(doc.get("object"), dict):
        raise BackupError(f"{path}: not a fieldown backup (no format {BACKUP_FORMAT!r} with an object)")
    r = doc.get("resource") if isinstance(doc.get("resource"), dict) else {}
    assert isinstance(r, dict)
    obj = doc["object"]
    return Backup(
        path=path, command=str(doc.get("command") or ""), server=str(doc.get("server") or ""),
        context=doc.get("context") if isinstance(doc.get("context"), str) else None,
        uid=str(doc.get("uid") or (obj.get("metadata") or {}).get("uid") or ""),
        resource_version=str(doc.get("resourceVersion") or ""),
        group=str(r.get("group") or ""), version=str(r.get("version") or ""), resource=str(r.get("resource") or ""),
        kind=str(r.get("kind") or obj.get("kind") or ""), namespaced=bool(r.get("namespaced", True)), object=obj,
    )


def backup_files(paths: Iterable[str | Path]) -> list[Path]:
    """Backup files named directly, or every ``*.json`` of a run directory (sorted)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p).expanduser()
        if path.is_dir():
            found = sorted(f for f in path.glob("*.json") if f.is_file())
            if not found:
                raise BackupError(f"{path}: no backup files (*.json) in this directory")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise BackupError(f"{path}: no such file or directory")
    return out


# --- the executor ------------------------------------------------------------------------------


_RV_POINTER = "/metadata/resourceVersion"


def resolve_placeholder(patch: Sequence[Mapping[str, Any]], resource_version: str) -> list[dict[str, Any]]:
    """The patch with the previous write's resourceVersion in place of the plan's placeholder."""
    from ..migration import RESOURCE_VERSION

    out = []
    for op in patch:
        op = dict(op)
        if op.get("op") == "test" and op.get("path") == _RV_POINTER and op.get("value") == RESOURCE_VERSION:
            op["value"] = resource_version
        out.append(op)
    return out


class _Changed(Exception):
    """The object changed since it was read: read it again and re-plan."""

    def __init__(self, latest: dict[str, Any] | None = None) -> None:
        super().__init__("the object changed")
        self.latest = latest


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def execute(
    client: ClusterClient,
    target: ObjectTarget,
    plan: Callable[[dict[str, Any]], Migration],
    options: WriteOptions,
    backups: BackupRun | None,
) -> WriteOutcome:
    """Plan and write one object (see the module docstring). Never raises for a failure of this
    object (it is in the outcome), only for the errors :func:`is_fatal` names."""
    from ..managedfields import ManagedFieldsError
    from ..migration import MigrationError

    retries = 0
    sent = 0
    backup: Path | None = None
    first_uid: str | None = None
    latest: dict[str, Any] | None = dict(target.initial) if target.initial is not None else None
    notes: list[str] = []
    residue: _Residue | None = None
    while True:
        try:
            obj = latest if latest is not None else client.get(target.res, target.name, target.namespace)
            latest = None
            if first_uid is None:
                first_uid = _uid(obj)
            elif _uid(obj) != first_uid:
                return WriteOutcome.for_target(
                    target, Result.failed, retries=retries, patches_sent=sent, backup=backup, notes=notes,
                    error="the object was deleted and created again while being migrated; nothing more was written")
            planned_from = obj if residue is None else residue.taken_back(obj)
            m = plan(planned_from)
            if planned_from is not obj:
                # the plan starts from the ownership we meant; the write starts from what is there
                m = dataclasses.replace(m, before=_entries_of(obj))
            notes = list(m.notes)
            if not m.changed:
                # a retry can find its work done (a half-written plan finished by the re-plan)
                result = Result.changed if sent else Result.unchanged
                return WriteOutcome.for_target(target, result, retries=retries, patches_sent=sent, backup=backup,
                                               notes=notes, dry_run=options.dry_run)
            annotations = (obj.get("metadata") or {}).get("annotations")
            patches = m.patches(annotations_present=isinstance(annotations, Mapping) and bool(annotations))
            if options.dry_run == "client":
                shown = [resolve_placeholder(p, "<resourceVersion of the previous write>") for p in patches]
                return WriteOutcome.for_target(target, Result.changed, notes=notes, patches=shown, dry_run="client")
            if options.dry_run == "server":
                return _server_dry_run(client, target, m, patches, notes)
            if backups is not None and backup is None:
                backup = backups.save(target.res, obj)
            rv = m.resource_version
            out: dict[str, Any] | None = None
            for i, patch in enumerate(patches):
                body = resolve_placeholder(patch, rv)
                tested = str(body[0].get("value"))
                out = _send(client, target, body, m.field_manager, tested)
                sent += 1
                rv = _rv(out)
                if i == 0 and len(patches) > 1 and m.last_applied_after is not None:
                    residue = _Residue(_entries_of(planned_from), m.field_manager, m.last_applied_after)
            assert out is not None
            mismatch = _check_written(out, m)
            if mismatch:
                return WriteOutcome.for_target(target, Result.failed, retries=retries, patches_sent=sent,
                                               backup=backup, notes=notes, error=mismatch)
            return WriteOutcome.for_target(target, Result.changed, retries=retries, patches_sent=sent, backup=backup,
                                           notes=notes)
        except _Changed as e:
            retries += 1
            if retries > options.max_retries:
                return WriteOutcome.for_target(
                    target, Result.failed, retries=retries - 1, patches_sent=sent, backup=backup, notes=notes,
                    error=f"the object kept changing while being written; gave up after {options.max_retries} "
                          f"retries (run the command again)")
            latest = e.latest
            if retries > 1 or latest is None:
                # the first retry has a fresh read in hand (most often the first read was a stale LIST
                # copy); waiting only pays when the object keeps changing
                options.sleep(options.backoff(retries))
        except (MigrationError, ManagedFieldsError, BackupError) as e:
            return WriteOutcome.for_target(target, Result.failed, retries=retries, patches_sent=sent, backup=backup,
                                           notes=notes, error=_unprefixed(str(e), target))
        except KubeError as e:
            if is_fatal(e):
                raise
            return WriteOutcome.for_target(target, Result.failed, retries=retries, patches_sent=sent, backup=backup,
                                           notes=notes, error=str(e))


def _unprefixed(message: str, target: ObjectTarget) -> str:
    """A planner's message without the object's name in front: the outcome line names it already."""
    group = target.res.group
    kind = f"{target.res.kind.lower()}.{group}" if group else target.res.kind.lower()
    ref = f"{kind}/{target.name}" + (f" -n {target.namespace}" if target.namespace and target.res.namespaced else "")
    return message[len(ref) + 2:] if message.startswith(ref + ": ") else message


def _entries_of(obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    from ..managedfields import decode_entries

    return decode_entries((obj.get("metadata") or {}).get("managedFields"))


@dataclass(frozen=True)
class _Residue:
    """What the annotation patch of a plan left behind when the managedFields patch after it could
    not be written (the object changed in between).

    The server records the annotation change for the patch's field manager and takes it from its
    other owners (an update forces). A re-plan from that state can find nothing left to do — a
    strip has nothing more to strip — and the attribution would stay: the annotation owned by the
    client-side manager instead of ``kubectl-last-applied``. So before re-planning, the attribution
    is taken back: the annotation goes back to the owners it had when the plan was made, as long as
    nobody wrote the annotation since (its value is still the one written).
    """

    owners_before: list[ManagedFieldsEntry]
    field_manager: str
    written: str

    def taken_back(self, obj: dict[str, Any]) -> dict[str, Any]:
        from ..fieldpath import FieldSet, path_from_fields
        from ..managedfields import LAST_APPLIED_ANNOTATION, UPDATE

        md = obj.get("metadata") or {}
        if (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION) != self.written:
            return obj  # written again since, by someone else: theirs is the real attribution
        la = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)
        marker = path_from_fields("metadata", "annotations")
        entries = _entries_of(obj)

        def attributed(e: ManagedFieldsEntry) -> bool:
            return e.manager == self.field_manager and e.operation == UPDATE and not e.subresource

        had = FieldSet()
        for e in self.owners_before:
            if attributed(e):
                had = had.union(e.fields)
        gained = FieldSet([p for p in (la, marker) if not had.has(p)])
        if not any(attributed(e) and not e.fields.intersection(gained).is_empty() for e in entries):
            return obj
        out: list[ManagedFieldsEntry] = []
        for e in entries:
            if attributed(e):
                e = e.with_fields(e.fields.difference(gained))
                if e.fields.is_empty():
                    continue
            out.append(e)
        for before in self.owners_before:
            if not before.fields.has(la) or attributed(before):
                continue
            i = next((i for i, e in enumerate(out) if e.identity == before.identity), None)
            if i is None:
                out.append(before.with_fields(FieldSet([la])))
            else:
                out[i] = out[i].with_fields(out[i].fields.union(FieldSet([la])))
        return {**obj, "metadata": {**md, "managedFields": [e.to_dict() for e in out]}}


def _send(client: ClusterClient, target: ObjectTarget, body: list[dict[str, Any]], field_manager: str,
          tested: str, *, dry_run: bool = False) -> dict[str, Any]:
    try:
        return client.patch(target.res, target.name, target.namespace, body, "json",
                            field_manager=field_manager, dry_run=dry_run)
    except Conflict:
        raise _Changed() from None
    except Invalid as e:
        # the server answers a failed ``test`` op with a bare 422; only a changed resourceVersion
        # tells it from a patch the server really rejects
        latest = client.get(target.res, target.name, target.namespace)
        if _rv(latest) != tested:
            raise _Changed(latest) from None
        raise e


def _check_written(out: Mapping[str, Any], m: Migration) -> str | None:
    """Why the object the server returned does not carry the planned managedFields (None: it does)."""
    from ..managedfields import LAST_APPLIED_ANNOTATION, decode_entries
    from ..migration import entries_differ

    md = out.get("metadata") or {}
    got = decode_entries(md.get("managedFields"))
    if entries_differ(got, [] if m.reset else m.after):
        return ("the server recorded other managedFields than planned (an admission webhook or a server "
                "with other rules?); the backup can undo the write")
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if la != m.last_applied_after:
        return "the server recorded another last-applied annotation than planned; the backup can undo the write"
    return None


def _server_dry_run(client: ClusterClient, target: ObjectTarget, m: Migration,
                    patches: list[list[dict[str, Any]]], notes: list[str]) -> WriteOutcome:
    shown = []
    out: dict[str, Any] | None = None
    for patch in patches:
        # nothing is persisted, so every step is tested against the live resourceVersion
        body = resolve_placeholder(patch, m.resource_version)
        shown.append(body)
        out = _send(client, target, body, m.field_manager, m.resource_version, dry_run=True)
    assert out is not None
    from ..managedfields import decode_entries
    from ..migration import entries_differ

    got = decode_entries((out.get("metadata") or {}).get("managedFields"))
    if entries_differ(got, [] if m.reset else m.after):
        return WriteOutcome.for_target(target, Result.failed, notes=notes, patches=shown, dry_run="server",
                                       error="the server's dry run recorded other managedFields than planned")
    notes = [*notes, f"the server accepted {len(shown)} patch(es) with dryRun=All"]
    return WriteOutcome.for_target(target, Result.changed, notes=notes, patches=shown, dry_run="server")
