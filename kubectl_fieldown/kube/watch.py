"""LIST then WATCH resource types, surviving expired versions and a server that goes away.

One :class:`TypeWatch` per watched scope (a type in a namespace, with a label selector, or one
object by name through ``fieldSelector=metadata.name``) runs in a daemon thread:

1. LIST (paged, :meth:`ClusterClient.list_pages`) and hand over the items as a :class:`Snapshot`
   with the list's ``resourceVersion``;
2. WATCH from that version with ``allowWatchBookmarks=true`` (a bookmark moves the version on
   without an object); each ADDED / MODIFIED / DELETED is an :class:`Event`;
3. when the server ends the watch (``timeoutSeconds``), watch again from the last version;
4. when the version is too old (``410 Gone``, as the HTTP status or as an ERROR event: etcd
   compacted it), LIST again and hand over a Snapshot marked ``relist`` — the consumer compares it
   with what it holds (:class:`kubectl_fieldown.watch.tracker.Tracker`) so that only real changes
   come out, none twice;
5. when the connection fails, the server is unreachable or answers as a server does while it
   starts or is overloaded (429, 500, 502, 503, 504), wait (backoff 0.5 s doubling to 8 s, reset
   after an event) and start again from step 2 (or 4, if a list was due); a :class:`Notice` says
   so, and another one when a watch is running again. A server that has just started may not serve
   the type yet (404: a CRD's handler waits for its informer) nor authorize (403): for up to
   :data:`_STARTING_GRACE` seconds after an interruption, or while the type's CRD is there, those
   answers are waited out the same way.

Errors that every further request would repeat (no right to list or watch, an unknown type) end the
scope with an :class:`Failed` item. Reading is bounded: an event line may hold at most
:data:`MAX_EVENT_BYTES`.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ApiError, BadResponse, KubeError, Unreachable

if TYPE_CHECKING:
    from .client import AllNamespaces, ClusterClient
    from .discovery import ResourceInfo

__all__ = ["MAX_EVENT_BYTES", "Event", "Failed", "Notice", "Snapshot", "TypeWatch", "WatchItem"]

#: one watch event holds one object (etcd: at most 1.5 MiB, a little more as JSON with escapes)
MAX_EVENT_BYTES = 64 << 20

_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 8.0
#: answers of a server that is starting, stopping or overloaded: the next request may succeed
_TRANSIENT = frozenset({429, 500, 502, 503, 504})
#: answers of a server that has just started, before it serves every type (a CRD's handler waits for
#: its informer) or authorizes: waited out for :data:`_STARTING_GRACE` seconds after the server went
#: away, or while the type's CRD is still there
_STARTING = frozenset({403, 404})
_STARTING_GRACE = 60.0


@dataclass(frozen=True)
class Snapshot:
    scope: int
    res: ResourceInfo
    items: list[dict[str, Any]]
    resource_version: str
    relist: bool


@dataclass(frozen=True)
class Event:
    scope: int
    res: ResourceInfo
    type: str
    obj: dict[str, Any]


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not a change (reconnecting, relisting)."""

    scope: int
    text: str


@dataclass(frozen=True)
class Failed:
    scope: int
    error: BaseException


WatchItem = Snapshot | Event | Notice | Failed


class _Gone(Exception):
    """The watched version is no longer kept (410): list again."""


class TypeWatch:
    """LIST + WATCH of one scope, in a daemon thread, into ``out``."""

    def __init__(self, client: ClusterClient, scope: int, res: ResourceInfo,
                 namespace: str | AllNamespaces | None, out: queue.Queue[WatchItem], stop: threading.Event, *,
                 label_selector: str | None = None, name: str | None = None, timeout_seconds: int = 300) -> None:
        self.client = client
        self.scope = scope
        self.res = res
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = f"metadata.name={name}" if name else None
        self.timeout_seconds = timeout_seconds
        self.out = out
        self.stop = stop
        self.resource_version = ""
        self._stream: Any = None
        self._lock = threading.Lock()
        self._resume: str | None = None
        self._interrupted = False
        self._starting_since: float | None = None
        self._delay = _BACKOFF_FIRST
        self.thread = threading.Thread(target=self._run, name=f"fieldown-watch-{scope}", daemon=True)

    def start(self, resume_from: str | None = None) -> None:
        """Start: LIST then WATCH, or WATCH from ``resume_from`` (a version of an earlier list, whose
        objects the consumer holds: if it is too old, the 410 lists again)."""
        self._resume = resume_from
        self.thread.start()

    def close(self) -> None:
        """Stop: the blocked read returns at once (its socket is shut down)."""
        self.stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            _shutdown(stream)

    # -- the thread -------------------------------------------------------------------------------

    def _put(self, item: WatchItem) -> None:
        self.out.put(item)

    def _list(self, relist: bool) -> None:
        meta: dict[str, Any] = {}

        def keep(m: Mapping[str, Any]) -> None:
            if not meta:
                meta.update(m)  # the first page's version is the whole list's (continue keeps it)

        items: list[dict[str, Any]] = []
        try:
            for page in self.client.list_pages(self.res, self.namespace, label_selector=self.label_selector,
                                               field_selector=self.field_selector, on_meta=keep):
                items.extend(page)
        except ApiError as e:
            if relist and e.code == 410:  # the continue token's version was compacted: list anew
                raise _Gone() from None
            if relist and e.code in _TRANSIENT:
                raise _Transient(e) from None
            raise
        rv = meta.get("resourceVersion")
        if not isinstance(rv, str) or not rv:
            raise BadResponse(f"list {self.res.group_resource}: the server answered a list without a resourceVersion; "
                              "there is nothing to watch from")
        self.resource_version = rv
        self._put(Snapshot(self.scope, self.res, items, rv, relist))

    def _run(self) -> None:
        try:
            if self._resume:
                self.resource_version = self._resume
            else:
                self._list(relist=False)  # unreachable at the start: the consumer fails at once
            need_list = False
            self._delay = _BACKOFF_FIRST
            self._interrupted = False
            empty = _BACKOFF_FIRST  # the wait after a watch that the server ended at once with nothing
            while not self.stop.is_set():
                try:
                    if need_list:
                        self._list(relist=True)
                        need_list = False
                    elif self._watch_once():
                        empty = _BACKOFF_FIRST
                    elif self.stop.wait(empty):  # ended at once with nothing: do not spin
                        return
                    else:
                        empty = min(empty * 2, _BACKOFF_MAX)
                except _Gone:
                    self._put(Notice(self.scope, f"{self.res.group_resource}: resourceVersion "
                                                 f"{self.resource_version} is too old (410 Gone); listing again"))
                    need_list = True
                except ApiError as e:
                    if e.code not in _STARTING or not self._starting(e):
                        raise
                    if self.stop.is_set():
                        return
                    again = "listing" if need_list else "watching"
                    self._put(Notice(self.scope, f"{self.res.group_resource}: the server does not serve it yet "
                                                 f"({e.code}: it may be starting); {again} again in {self._delay:g}s"))
                    if self._back_off():
                        return
                except (Unreachable, _Broken, _Transient) as e:
                    if self.stop.is_set():
                        return
                    again = "listing" if need_list else "watching"
                    self._put(Notice(self.scope, f"{self.res.group_resource}: watch interrupted ({e}); "
                                                 f"{again} again in {self._delay:g}s"))
                    self._interrupted = True
                    if self._back_off():
                        return
        except KubeError as e:
            if not self.stop.is_set():
                self._put(Failed(self.scope, e))
        except Exception as e:  # a bug: handed to the consumer, which reports it
            if not self.stop.is_set():
                self._put(Failed(self.scope, e))

    def _back_off(self) -> bool:
        """Wait the current delay and double it (up to the maximum); True if stopped meanwhile."""
        if self.stop.wait(self._delay):
            return True
        self._delay = min(self._delay * 2, _BACKOFF_MAX)
        return False

    def _starting(self, error: ApiError) -> bool:
        """Is ``error`` (403, 404) the answer of a server that has just started? So it is, for a
        while, after the server went away (the watch was interrupted) or while the type's CRD is
        there (its handler is not installed yet); a type whose CRD was deleted is gone."""
        import time

        now = time.monotonic()
        if self._starting_since is None:
            self._starting_since = now
        if now - self._starting_since > _STARTING_GRACE:
            return False
        return self._interrupted or (error.code == 404 and self._crd_exists())

    def _crd_exists(self) -> bool:
        if not self.res.group or "." not in self.res.group:
            return False  # a built-in group: no CRD
        try:
            crds = self.client.discovery.resolve_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            crd = self.client.get(crds, f"{self.res.resource}.{self.res.group}")
        except KubeError:
            return False
        md = crd.get("metadata")
        return isinstance(md, dict) and not md.get("deletionTimestamp")  # a CRD being deleted is going

    def _watch_once(self) -> bool:
        """One WATCH request until the server ends it; True if it delivered anything."""
        try:
            stream = self.client.open_watch(self.res, self.namespace, resource_version=self.resource_version,
                                            label_selector=self.label_selector, field_selector=self.field_selector,
                                            timeout_seconds=self.timeout_seconds)
        except ApiError as e:
            if e.code == 410:
                raise _Gone() from None
            if e.code in _TRANSIENT:
                raise _Transient(e) from None
            raise
        self._starting_since = None
        self._delay = _BACKOFF_FIRST  # the server answers: the next interruption starts the backoff afresh
        if self._interrupted:
            self._interrupted = False
            self._put(Notice(self.scope, f"{self.res.group_resource}: watching again from resourceVersion "
                                         f"{self.resource_version}"))
        with self._lock:
            self._stream = stream
        if self.stop.is_set():
            _shutdown(stream)
        delivered = False
        try:
            for line in _lines(stream, self.res.group_resource):
                if self.stop.is_set():
                    return delivered
                delivered |= self._event(line)
        finally:
            with self._lock:
                self._stream = None
            _shutdown(stream)
        return delivered

    def _event(self, line: bytes) -> bool:
        try:
            doc = json.loads(line)
        except ValueError:
            raise BadResponse(f"watch {self.res.group_resource}: the server sent a line that is not JSON: "
                              f"{line[:200]!r}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("object"), dict):
            raise BadResponse(f"watch {self.res.group_resource}: the server sent an event without an object")
        typ, obj = doc.get("type"), doc["object"]
        if typ == "ERROR":
            if obj.get("code") == 410:
                raise _Gone()
            raise BadResponse(f"watch {self.res.group_resource}: the server ended the watch: "
                              f"{obj.get('code')} {obj.get('reason')}: {obj.get('message')}")
        md = obj.get("metadata")
        rv = md.get("resourceVersion") if isinstance(md, dict) else None
        if isinstance(rv, str) and rv:
            self.resource_version = rv
        if typ == "BOOKMARK":
            return True
        if typ not in ("ADDED", "MODIFIED", "DELETED"):
            raise BadResponse(f"watch {self.res.group_resource}: the server sent an event of type {typ!r}")
        obj.setdefault("kind", self.res.kind)
        obj.setdefault("apiVersion", self.res.api_version)
        self._put(Event(self.scope, self.res, typ, obj))
        return True


class _Broken(Exception):
    """The connection broke in the middle of a watch."""


class _Transient(Exception):
    """The server answered as one that is starting, stopping or overloaded (429, 5xx)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(f"{error.code}: {error}")


def _shutdown(stream: Any) -> None:
    import contextlib

    with contextlib.suppress(Exception):
        stream.shutdown()  # urllib3 >= 2.3: unblocks a read in another thread
    with contextlib.suppress(Exception):
        stream.release_conn()


def _lines(stream: Any, what: str) -> Any:
    """The newline-separated event documents of a watch answer, as they arrive; a line longer than
    :data:`MAX_EVENT_BYTES` is refused."""
    from urllib3.exceptions import HTTPError

    buf = bytearray()
    while True:
        try:
            chunk = stream.read1(1 << 16)
        except (HTTPError, OSError, ValueError) as e:
            raise _Broken(type(e).__name__) from None
        if not chunk:
            return
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            if line.strip():
                yield line
        if len(buf) > MAX_EVENT_BYTES:
            raise BadResponse(f"watch {what}: an event larger than {MAX_EVENT_BYTES >> 20} MiB; stopped reading")
