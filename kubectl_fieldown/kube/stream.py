"""Streaming LIST of many resource types at once, with bounded concurrency and bounded memory.

``workers`` threads each take one resource type at a time and page through it
(:meth:`ClusterClient.list_pages`: ``limit``/``continue``, retries with backoff); every page goes
into a queue of at most ``max_pending`` pages that the consuming thread drains. So at any moment at
most ``workers + max_pending + 1`` pages are in memory, whatever the size of the cluster, and the
server works on several types while the consumer analyses the previous pages.

The threads are daemons and look at a stop flag between requests, so that Ctrl-C in the consumer
ends the program at once instead of waiting for in-flight LISTs (a ThreadPoolExecutor's workers
would be joined at exit).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..base.record import Record
from .errors import ConfigError, KubeError, Unauthorized, Unreachable

if TYPE_CHECKING:
    from .client import AllNamespaces, ClusterClient
    from .discovery import ResourceInfo

__all__ = ["FATAL_ERRORS", "PageEvent", "PageStream"]

#: errors that every further request would repeat: the stream stops and raises them
FATAL_ERRORS: tuple[type[KubeError], ...] = (ConfigError, Unauthorized, Unreachable)

_POLL = 0.1  # seconds between looks at the stop flag while blocked on a queue


class PageEvent(Record):
    """One step of one type: a page of ``items``; or ``done`` (the type was listed completely);
    or ``error`` (listing stopped there; earlier pages of the type were delivered)."""

    __slots__ = ("done", "error", "items", "resource")
    resource: Final[ResourceInfo]
    items: Final[list[dict[str, Any]] | None]
    done: Final[bool]
    error: Final[KubeError | None]

    def __init__(
        self,
        resource: ResourceInfo,
        items: list[dict[str, Any]] | None = None,
        done: bool = False,
        error: KubeError | None = None,
    ) -> None:
        self.resource = resource
        self.items = items
        self.done = done
        self.error = error


class _WorkerExit:
    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class PageStream:
    """Iterate over :class:`PageEvent` objects of ``resources`` (in no particular order).

    Use as a context manager (or call :meth:`close`) so that the threads stop when the consumer
    stops early. A fatal error (:data:`FATAL_ERRORS`) or an unexpected exception in a worker is
    raised from the iteration after the other workers were told to stop."""

    def __init__(
        self,
        client: ClusterClient,
        resources: Sequence[ResourceInfo],
        namespace: str | AllNamespaces | None,
        *,
        label_selector: str | None = None,
        limit: int = 500,
        workers: int = 4,
        max_pending: int = 2,
        first_page: Callable[[ResourceInfo], None] | None = None,
    ) -> None:
        self._client = client
        # called by the worker once the first page of a type with objects is handed over
        self._first_page = first_page
        self._namespace = namespace
        self._selector = label_selector
        self._limit = limit
        self._todo: queue.SimpleQueue[ResourceInfo] = queue.SimpleQueue()
        for r in resources:
            self._todo.put(r)
        self._out: queue.Queue[PageEvent | _WorkerExit] = queue.Queue(maxsize=max(1, max_pending))
        self._stop = threading.Event()
        self._n_workers = max(1, min(workers, len(resources))) if resources else 0
        self._threads: list[threading.Thread] = []
        self._started = False

    def __enter__(self) -> PageStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Tell the workers to stop after their current request; does not wait for them."""
        self._stop.set()
        # unblock workers waiting to hand over a page
        while True:
            try:
                self._out.get_nowait()
            except queue.Empty:
                break

    def start(self) -> None:
        """Start listing now, before the iteration (which starts it otherwise): the first pages are
        on their way while the consumer gets ready. At most ``max_pending`` pages wait for it."""
        if self._threads or self._stop.is_set():
            return
        for i in range(self._n_workers):
            t = threading.Thread(target=self._work, name=f"fieldown-list-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def __iter__(self) -> Iterator[PageEvent]:
        if self._started:
            raise RuntimeError("a PageStream can be iterated once")
        self._started = True
        self.start()
        running = len(self._threads)
        while running:
            try:
                ev = self._out.get(timeout=_POLL)
            except queue.Empty:
                continue  # a timeout keeps Ctrl-C deliverable on every platform
            if isinstance(ev, _WorkerExit):
                running -= 1
                if ev.error is not None:
                    self.close()
                    raise ev.error
                continue
            yield ev

    # -- worker side ----------------------------------------------------------------------------

    def _put(self, ev: PageEvent | _WorkerExit) -> bool:
        while not self._stop.is_set():
            try:
                self._out.put(ev, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _work(self) -> None:
        error: BaseException | None = None
        try:
            while not self._stop.is_set():
                try:
                    res = self._todo.get_nowait()
                except queue.Empty:
                    break
                if not self._list_one(res):
                    break
        except BaseException as e:  # handed to the consumer, which re-raises it
            error = e
        # the exit marker must arrive even when the queue is full: the consumer counts them
        while True:
            try:
                self._out.put(_WorkerExit(error), timeout=_POLL)
                return
            except queue.Full:
                if self._stop.is_set():
                    return

    def _list_one(self, res: ResourceInfo) -> bool:
        first = self._first_page
        try:
            for items in self._client.list_pages(res, self._namespace, label_selector=self._selector,
                                                 limit=self._limit):
                if not self._put(PageEvent(res, items=items)):
                    return False
                if self._stop.is_set():
                    return False
                if first is not None and items:
                    first(res)
                    first = None
        except FATAL_ERRORS:
            raise
        except KubeError as e:
            return self._put(PageEvent(res, error=e))
        return self._put(PageEvent(res, done=True))
