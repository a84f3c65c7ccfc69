"""The ``-f`` objects of an audit checked in worker processes (``audit --jobs``).

With ``-f`` every object's next apply is played, and its fix chosen and verified: about a
millisecond of pure-Python CPU per object, ten times what its LIST costs (issue 24). One process
holds the GIL, so those checks use one core; forked workers use the others.

Each worker is a fork of the audit taken once its context is ready (the manifests read, the rules of
their kinds resolved) and before any thread starts (the LIST's, the progress bar's): a worker
inherits no thread and no lock held by one. It never touches the connections to the cluster it
inherits either: the context it checks with answers only the kinds' rules the audit held when it
forked (:class:`_KnownRules`), and an object that needs another kind's fails in the worker. A
batch that fails in a worker for any reason (that, an error of the engine, a worker killed) is
checked again in the audit's own process, so the findings, and an error, are the serial audit's.
The batches come back in any order; the report sorts the findings.

Memory stays bounded: a worker holds at most :data:`IN_FLIGHT` batches of :data:`BATCH` objects,
and the audit waits for one to come back before it sends more. Each batch carries its objects'
manifests: a worker never reads the audit's copy of them all, whose pages a read would copy into
the worker (a reference count is a write) — so a worker costs its working set, ~20 MiB, not the
manifests again.

Only where ``fork`` exists and is the usual start method (Linux) and only from a process with one
thread; anywhere else, and with ``--jobs 1``, the objects are checked in the audit's process.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ..audit import AuditContext, Finding, ObjectKey
    from ..fieldmanager import ResourceRules

__all__ = ["AUTO_MIN_OBJECTS", "BATCH", "IN_FLIGHT", "ObjectJobs", "auto_jobs", "start_jobs"]

#: objects per message to a worker: enough that pickling and waking up cost little per object,
#: few enough that the last batches do not leave the other workers idle at the end
BATCH = 16
#: batches a worker holds at once: one it checks, one waiting, so that it never waits for the audit
IN_FLIGHT = 2
#: with fewer -f objects than this, forking the workers costs about what they save (~10 ms each)
AUTO_MIN_OBJECTS = 64
_MAX_AUTO = 8


def auto_jobs(objects: int) -> int:
    """The workers ``--jobs auto`` starts for ``objects`` -f objects: one per usable CPU (up to 8),
    none (1: the audit's own process) on one CPU or for a few objects."""
    if objects < AUTO_MIN_OBJECTS or not _can_fork():
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(_MAX_AUTO, cpus))


def _can_fork() -> bool:
    return sys.platform == "linux" and hasattr(os, "fork")


class _NotKnownHere(Exception):
    """A worker was asked for a kind's rules its context did not hold when it forked."""


class _KnownRules:
    """A worker's ``rules_for``: the rules the audit held when it forked, and no lookup (one would
    use a connection the worker shares with the audit)."""

    def __init__(self, rules_for: Callable[[str, str], ResourceRules | None],
                 known: Callable[[str, str], bool]) -> None:
        self._rules_for = rules_for
        self._known = known

    def __call__(self, api_version: str, kind: str) -> ResourceRules | None:
        if not self._known(api_version, kind):
            raise _NotKnownHere(api_version, kind)
        return self._rules_for(api_version, kind)


class _Worker:
    __slots__ = ("conn", "pending", "pid")

    def __init__(self, pid: int, conn: Connection) -> None:
        self.pid = pid
        self.conn = conn
        self.pending: deque[list[Mapping[str, Any]]] = deque()


def _serve(conn: Connection, ctx: AuditContext) -> None:
    """A worker's life: check each batch it is sent, answer with its findings (pickled) or with
    nothing when the check raised; end when the audit closes its end."""
    import signal

    from ..audit import audit_object

    # Ctrl-C is the audit's to handle: it stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            objs, manifests, files = pickle.loads(data)
            # the batch's own manifests, sent with it: the worker leaves the audit's copy of all of them
            # untouched, so that their pages stay shared instead of copied into every worker
            here = ctx.replace(manifests=manifests, manifest_files=files)
            found = [f for obj in objs for f in audit_object(obj, here)]
            reply = pickle.dumps(found, pickle.HIGHEST_PROTOCOL)
        except Exception:  # the audit's process checks the batch again, and shows any error itself
            reply = b""
        conn.send_bytes(reply)


class ObjectJobs:
    """Objects handed to worker processes in batches; their findings gathered in :attr:`findings`.

    :meth:`add` may block until a worker has room (it then gathers what came back);
    :meth:`finish` sends what is left and waits for everything; :meth:`close` stops the workers
    (call it in a ``finally``)."""

    def __init__(self, ctx: AuditContext, workers: list[_Worker]) -> None:
        self._ctx = ctx
        self._workers = workers
        self._batch: list[Mapping[str, Any]] = []
        self._keys: list[ObjectKey] = []
        self.findings: list[Finding] = []
        #: batches checked again in this process (a worker failed them or died)
        self.redone = 0

    @property
    def size(self) -> int:
        """Workers alive (one that died is not replaced)."""
        return len(self._workers)

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    def add(self, obj: Mapping[str, Any], key: ObjectKey) -> None:
        """Check ``obj``, whose manifest is ``ctx.manifests[key]``."""
        self._batch.append(obj)
        self._keys.append(key)
        if len(self._batch) >= BATCH:
            self._send()

    def finish(self) -> list[Finding]:
        if self._batch:
            self._send()
        while any(w.pending for w in self._workers):
            self._gather(block=True)
        return self.findings

    def close(self) -> None:
        for w in self._workers:
            w.conn.close()
        for w in self._workers:
            _reap(w.pid)
        self._workers = []

    # --

    def _send(self) -> None:
        batch, self._batch = self._batch, []
        keys, self._keys = self._keys, []
        manifests, files = self._ctx.manifests, self._ctx.manifest_files
        payload = (batch, {k: manifests[k] for k in keys}, {k: files[k] for k in keys if k in files})
        while True:
            if not self._workers:
                self._check_here(batch)
                return
            w = min(self._workers, key=lambda w: len(w.pending))
            if len(w.pending) < IN_FLIGHT:
                break
            self._gather(block=True)
        try:
            w.conn.send_bytes(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL))
        except OSError:
            self._lost(w)
            self._check_here(batch)
            return
        w.pending.append(batch)
        self._gather(block=False)

    def _gather(self, block: bool) -> None:
        from multiprocessing.connection import wait

        busy = {w.conn: w for w in self._workers if w.pending}
        if not busy:
            return
        for conn in wait(list(busy), timeout=None if block else 0):
            w = busy[conn]  # type: ignore[index]
            try:
                data = w.conn.recv_bytes()
            except (EOFError, OSError):
                self._lost(w)
                continue
            batch = w.pending.popleft()
            if data:
                self.findings.extend(pickle.loads(data))
            else:
                self._check_here(batch)

    def _lost(self, w: _Worker) -> None:
        """A worker that died (killed, out of memory): its batches are checked here, and it gets no more."""
        self._workers.remove(w)
        w.conn.close()
        _reap(w.pid)
        while w.pending:
            self._check_here(w.pending.popleft())

    def _check_here(self, batch: list[Mapping[str, Any]]) -> None:
        from ..audit import audit_object

        self.redone += 1
        for obj in batch:
            self.findings.extend(audit_object(obj, self._ctx))


def _reap(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError, OSError):
        pass


def start_jobs(ctx: AuditContext, jobs: int, known: Callable[[str, str], bool]) -> ObjectJobs | None:
    """Fork ``jobs`` workers that check objects with ``ctx`` (None: check them in this process —
    ``jobs`` below 2, no ``fork``, or another thread running, which a fork would leave its locks)."""
    if jobs < 2 or not _can_fork() or threading.active_count() != 1:
        return None
    import gc
    from multiprocessing.connection import Pipe

    here = ctx.replace(rules_for=_KnownRules(ctx.rules_for, known))
    # what the audit holds now (the manifests, the rules) lives to its end: out of the collector's
    # sight, so that no worker's collection writes to (and so copies) the pages it shares with it
    gc.freeze()
    workers: list[_Worker] = []
    for _ in range(jobs):
        mine, theirs = Pipe(duplex=True)
        # what a buffered stream holds would be written twice: once by the worker, which must not
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                mine.close()
                for w in workers:  # so that each worker sees the audit's end close, not a sibling's copy
                    w.conn.close()
                _serve(theirs, here)
            except BaseException:
                code = 1
            finally:
                # no exit handler, no flush, no finaliser: what the worker inherited is the audit's
                os._exit(code)
        theirs.close()
        workers.append(_Worker(pid, mine))
    return ObjectJobs(ctx, workers)
