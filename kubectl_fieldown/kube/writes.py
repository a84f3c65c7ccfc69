"""Guarded ownership writes: backup, resourceVersion-tested JSON patches, re-plan and retry.

The one place where ownership rewrites touch a cluster. For one object, :func:`execute` runs::

    GET → plan (a pure function: object → WritePlan: the plan, its requests and the engine's check
          of the values) → unchanged? done → values lost? refused, unless allowed
        → save a backup (before its first write; the object as first read in the run)
        → send each request, the resourceVersion returned by one filling in the guard of the next
          (``remedies.requests.RESOURCE_VERSION``)
          and record each in the backup
        → check that the server recorded what the engine predicted (or, without merge rules, the
          planned managedFields)

Every patch starts with a ``test`` of ``metadata.resourceVersion``, so nothing written since the
object was read can be overwritten. When the object changed meanwhile — 409, or the 422 this API
server answers when a ``test`` op fails — the object is read again and the plan made again (plans
are idempotent, so a half-written plan re-plans to the rest of it), at most ``max_retries`` times
with a jittered backoff; then the object is reported as failed. A 422 whose object did not change
is a real rejection and fails at once. A write answered 5xx or not at all may have been made: the
object is read again (:mod:`._uncertain`) and re-planned if it changed; if it cannot be read, it
fails as ``maybe_written``, and running the command again reads it and converges.

Dry runs: ``client`` plans and returns the patches, sends nothing and saves nothing; ``server``
sends every patch with ``dryRun=All`` against the live object. The first patch of a two-patch
plan is not persisted by a dry run, so each later patch is tested against the live resourceVersion
instead of the one the first would have returned: the server checks each step on its own, and since
the later patch (managedFields) changes no field, its answer shows exactly the planned entries.

Backups (:mod:`.backups`): the object as read is saved before its first write, whole or not at all
(nothing is sent without it), and each request sent is recorded in it, so that ``undo`` can tell the
tool's writes from later writers'.
"""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..base.objects import ObjectRef, is_secret
from . import _faults
from ._uncertain import MaybeWritten, Uncertain, read_back
from .backups import (
    BACKUP_DIR_ENV,
    BACKUP_FORMAT,
    Backup,
    BackupError,
    BackupRun,
    backup_files,
    default_backup_root,
    load_backup,
)
from .errors import ApiError, Conflict, Invalid, KubeError, Unreachable, is_fatal
from .target import ObjectTarget

if TYPE_CHECKING:
    from ..ownership.managedfields import ManagedFieldsEntry
    from ..remedies.requests import WriteRequest
    from ..remedies.writeplan import OwnershipMove, WritePlan
    from .client import ClusterClient

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
]

DryRunMode = Literal["none", "client", "server"]


class Result(str, enum.Enum):
    changed = "changed"
    unchanged = "unchanged"
    failed = "failed"


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
    patches: list[Any] = field(default_factory=list)
    """Dry runs: each request as it would be sent (a JSON patch's operations, an apply's body)."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Dry runs: each request with its type, fieldManager and purpose."""
    changes: list[str] = field(default_factory=list)
    """Who gains and who loses which fields (one line per entry)."""
    moves: list[OwnershipMove] = field(default_factory=list)
    """The same per field: each field whose owners change, with its owners before and after."""
    problems: list[str] = field(default_factory=list)
    """Values the write or the applier's next apply would lose (refused unless allowed)."""
    dry_run: DryRunMode = "none"
    alternative: list[str] = field(default_factory=list)
    """A refused write: the words after ``kubectl fieldown`` of a fix that keeps every value (empty: none)."""
    alternative_edits: list[str] = field(default_factory=list)
    """What to change in the manifest along with ``alternative``."""
    edits: list[str] = field(default_factory=list)
    """What to change in the manifest for the write's check to hold (a scaler's field to leave out)."""
    maybe_written: bool = False
    """A failed write that the server may have made all the same: answered 5xx or not at all, and
    the object could not be read back to tell (running the command again does)."""

    @property
    def is_secret(self) -> bool:
        return is_secret(self.api_version, self.kind)

    @classmethod
    def for_target(cls, target: ObjectTarget, result: Result, **kw: Any) -> WriteOutcome:
        return cls(api_version=target.res.api_version, kind=target.res.kind,
                   namespace=target.namespace if target.res.namespaced else None, name=target.name,
                   result=result, **kw)


@dataclass(frozen=True)
class WriteOptions:
    dry_run: DryRunMode = "none"
    max_retries: int = 5
    allow_value_changes: bool = False
    backoff_base: float = 0.05
    backoff_max: float = 1.0
    sleep: Callable[[float], None] = time.sleep

    def backoff(self, attempt: int) -> float:
        """Seconds before retry ``attempt`` (from 1), jittered so that bulk runs racing the same
        writer do not retry in lockstep."""
        return float(min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5))


# --- the executor ------------------------------------------------------------------------------


class _Changed(Exception):
    """The object changed since it was read: read it again and re-plan."""

    def __init__(self, latest: dict[str, Any] | None = None) -> None:
        super().__init__("the object changed")
        self.latest = latest


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _entries_of(obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    from ..ownership.managedfields import decode_entries

    return decode_entries((obj.get("metadata") or {}).get("managedFields"))


def execute(
    client: ClusterClient,
    target: ObjectTarget,
    plan: Callable[[dict[str, Any]], WritePlan],
    options: WriteOptions,
    backups: BackupRun | None,
) -> WriteOutcome:
    """Plan and write one object (see the module docstring). Never raises for a failure of this
    object (it is in the outcome), only for the errors :func:`is_fatal` names."""
    from ..ownership.managedfields import ManagedFieldsError
    from ..remedies.plans import MigrationError
    from ..remedies.writeplan import ownership_changes, ownership_moves

    retries = 0
    sent = 0
    backup: Path | None = None
    first_uid: str | None = None
    latest: dict[str, Any] | None = dict(target.initial) if target.initial is not None else None
    notes: list[str] = []
    edits: list[str] = []
    answered: list[str] = []  # writes answered 5xx (or not at all) that the server had made

    def outcome(result: Result, **kw: Any) -> WriteOutcome:
        return WriteOutcome.for_target(target, result, retries=retries, patches_sent=sent, backup=backup,
                                       notes=[*notes, *answered], dry_run=options.dry_run, edits=edits, **kw)

    while True:
        try:
            obj = latest if latest is not None else client.get(target.res, target.name, target.namespace)
            latest = None
            if first_uid is None:
                first_uid = _uid(obj)
            elif _uid(obj) != first_uid:
                return outcome(Result.failed, error="the object was deleted and created again while being written; "
                                                    "nothing more was written")
            wp = plan(obj)
            m = wp.migration
            if m.ref.api_version and m.ref.api_version != target.res.api_version:
                # planned at the version its applier applies at (another version of the same CRD,
                # conversion None): read and write there, guarded by the same resourceVersion
                target = replace(target, res=client.discovery.resolve_kind(m.ref.api_version,
                                                                         target.res.kind))
            notes = list(m.notes)
            edits = list(wp.edits)
            if not m.changed:
                # a retry can find its work done (a half-written plan finished by the re-plan)
                return outcome(Result.changed if sent else Result.unchanged)
            changes = ownership_changes(m.before, [] if m.reset else m.after)
            moves = ownership_moves(m.before, [] if m.reset else m.after)
            if wp.problems and not options.allow_value_changes:
                alt, edits = _alternative(wp, target)
                return outcome(Result.failed, problems=list(wp.problems), changes=changes, moves=moves,
                               alternative=alt, alternative_edits=edits,
                               error="refused: " + "; ".join(wp.problems)
                               + " (--allow-value-changes writes it anyway)")
            requests = [r.to_json() for r in wp.requests]
            if options.dry_run == "client":
                shown = [_shown(r, "<resourceVersion of the previous write>") for r in wp.requests]
                return outcome(Result.changed, patches=shown, requests=requests, changes=changes, moves=moves,
                               problems=list(wp.problems))
            if options.dry_run == "server":
                return _server_dry_run(client, target, wp, notes, changes, moves)
            if backups is not None:
                # on every (re)plan: the newest plan's target, and the object as read while not yet written
                backup = backups.save(target.res, obj, m)
            rv = m.resource_version
            out: dict[str, Any] | None = None
            unrecorded: str | None = None
            try:
                for i, req in enumerate(wp.requests):
                    out = _send(client, target, req.with_resource_version(rv), rv)
                    sent += 1
                    if backups is not None and backup is not None:
                        # what this request did, for undo to tell the tool's writes from later writers'
                        unrecorded = backups.record(backup, rv, out, complete=i == len(wp.requests) - 1) \
                            or unrecorded
                    rv = _rv(out)
            except MaybeWritten as e:
                sent += 1
                # read it again: changed (the write was made, or another writer's) → re-plan, which
                # finds the work done or finishes it; unchanged → this write was not made. The backup
                # does not record it: which writer made the change read back cannot be told, so undo
                # treats it as a later writer's (it asks for --force rather than undo someone else's)
                latest = read_back(client, target, e, rv)
                answered.append(f"a write {e.answered} ({e.error}); read back, the object had changed (the write "
                                "was made, or another writer's): planned again from it")
                if len(answered) > options.max_retries:
                    return outcome(Result.failed, maybe_written=True,
                                   error=f"{e.error}; gave up after {len(answered)} writes answered so "
                                         "(run the command again)")
                continue
            assert out is not None
            if backups is not None and backup is not None:
                unrecorded = backups.completed(backup) or unrecorded
            if unrecorded:
                notes.append(f"the write is done but its record in the backup is not: {unrecorded} (undo then "
                             "judges later changes from the planned ownership)")
            mismatch = _check_written(out, wp)
            if mismatch:
                return outcome(Result.failed, error=mismatch, changes=changes, moves=moves)
            return outcome(Result.changed, changes=changes, moves=moves, problems=list(wp.problems))
        except _Changed as e:
            retries += 1
            if retries > options.max_retries:
                retries -= 1
                return outcome(Result.failed, error=f"the object kept changing while being written; gave up after "
                                                    f"{options.max_retries} retries (run the command again)")
            latest = e.latest
            if retries > 1 or latest is None:
                # the first retry has a fresh read in hand (most often the first read was a stale LIST
                # copy); waiting only pays when the object keeps changing
                options.sleep(options.backoff(retries))
        except Uncertain as e:
            return outcome(Result.failed, error=str(e), maybe_written=e.maybe)
        except (MigrationError, ManagedFieldsError, BackupError) as e:
            return outcome(Result.failed, error=_unprefixed(str(e), target))
        except KubeError as e:
            if is_fatal(e):
                raise
            return outcome(Result.failed, error=str(e))


def _alternative(wp: WritePlan, target: ObjectTarget) -> tuple[list[str], list[str]]:
    fix = wp.alternative
    if fix is None:
        return [], []
    words: list[str] = []
    if fix.command is not None:
        words = [fix.command.name, f"{target.res.group_resource}/{target.name}"]
        if target.namespace and target.res.namespaced:
            words += ["-n", target.namespace]
        words += fix.command.args()
    return words, fix.edits()


def _unprefixed(message: str, target: ObjectTarget) -> str:
    """A planner's message without the object's name in front: the outcome line names it already."""
    ref = ObjectRef(target.res.api_version, target.res.kind, target.namespace if target.res.namespaced else None,
                    target.name).display()
    return message[len(ref) + 2:] if message.startswith(ref + ": ") else message


def _shown(req: WriteRequest, placeholder: str) -> list[dict[str, Any]] | dict[str, Any]:
    """A request as a dry run prints it: a JSON patch's operations, an apply's body."""
    from ..remedies.requests import ApplyRequest, JsonPatchRequest

    if isinstance(req, JsonPatchRequest):
        return list(req.with_resource_version(placeholder).ops)
    assert isinstance(req, ApplyRequest)
    return req.body


def _send(client: ClusterClient, target: ObjectTarget, req: WriteRequest, tested: str, *,
          dry_run: bool = False) -> dict[str, Any]:
    from ..remedies.requests import ApplyRequest

    server = str(getattr(client, "server", "the server"))
    if _faults.writes_down():
        raise Unreachable(server, "connection refused (FIELDOWN_TEST_FAULT)")
    try:
        if not dry_run:
            _faults.before_write(server)
        if isinstance(req, ApplyRequest):
            out = client.patch(target.res, target.name, target.namespace, req.body, "apply",
                               field_manager=req.field_manager, force=req.force, dry_run=dry_run)
        else:
            out = client.patch(target.res, target.name, target.namespace, list(req.ops), "json",
                               field_manager=req.field_manager, dry_run=dry_run)
        if not dry_run:
            _faults.after_write(server)
        return out
    except Conflict:
        raise _Changed() from None
    except Invalid as e:
        # the server answers a failed ``test`` op with a bare 422; only a changed resourceVersion
        # tells it from a patch the server really rejects
        latest = client.get(target.res, target.name, target.namespace)
        if _rv(latest) != tested:
            raise _Changed(latest) from None
        raise e
    except (ApiError, Unreachable) as e:
        # a 5xx (a proxy's 504, an API server timing out on etcd) or an answer that never came: the
        # server may have committed the write all the same
        uncertain = e.code >= 500 if isinstance(e, ApiError) else e.delivered
        if uncertain and not dry_run:
            raise MaybeWritten(e) from None
        raise


def _check_written(out: Mapping[str, Any], wp: WritePlan) -> str | None:
    """Why the object the server returned is not what was predicted (None: it is)."""
    from ..ownership.managedfields import LAST_APPLIED_ANNOTATION
    from ..remedies.plans import entries_differ

    m = wp.migration
    expected = wp.expected
    want = _entries_of(expected) if expected is not None else ([] if m.reset else m.after)
    md = out.get("metadata") or {}
    if entries_differ(_entries_of(out), want):
        return ("the server recorded other managedFields than predicted (an admission webhook or a server "
                "with other rules?); the backup can undo the write")
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if la != m.last_applied_after:
        return "the server recorded another last-applied annotation than planned; the backup can undo the write"
    return None


def _server_dry_run(client: ClusterClient, target: ObjectTarget, wp: WritePlan, notes: list[str],
                    changes: list[str], moves: list[OwnershipMove]) -> WriteOutcome:
    m = wp.migration
    shown: list[list[dict[str, Any]] | dict[str, Any]] = []
    out: dict[str, Any] | None = None
    for req in wp.requests:
        # nothing is persisted, so every step is tested against the live resourceVersion
        r = req.with_resource_version(m.resource_version)
        shown.append(_shown(r, m.resource_version))
        out = _send(client, target, r, m.resource_version, dry_run=True)
    assert out is not None
    requests = [r.to_json() for r in wp.requests]
    if len(wp.requests) == 1:
        mismatch = _check_written(out, wp)
        if mismatch:
            return WriteOutcome.for_target(target, Result.failed, notes=notes, patches=shown, requests=requests,
                                           dry_run="server", changes=changes, moves=moves,
                                           error="the server's dry run " + mismatch.removeprefix("the server "))
    notes = [*notes, f"the server accepted {len(shown)} request(s) with dryRun=All"]
    return WriteOutcome.for_target(target, Result.changed, notes=notes, patches=shown, requests=requests,
                                   edits=list(wp.edits), dry_run="server", changes=changes, moves=moves,
                                   problems=list(wp.problems))
