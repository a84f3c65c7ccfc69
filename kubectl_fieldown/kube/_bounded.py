"""Bounded answers: a deadline for the whole request and a size limit for what is read.

Imported by :mod:`._transport` only (it imports ``urllib3``).

**Time.** urllib3's timeouts bound each socket operation, not the request: a server that sends one
byte every two seconds never trips a 10 s read timeout. kubectl's ``--request-timeout`` is Go's
``http.Client.Timeout``, which covers the connection, the headers and the whole body. Here the same
limit is a :class:`Deadline` per request (across its retries, as client-go's request context): a
timer that, when it runs out, shuts down the socket the request is using, so that whatever call is
blocked on it (connect, TLS handshake, headers, body) returns at once. The socket is found through
the connection classes of the pool, which tell the deadline of the calling thread which connection
it uses (:func:`watch_connections`).

**Memory.** The body is read in chunks and decompressed with a bound on each step
(:func:`read_body`), so neither an endless body, nor a huge ``Content-Length``, nor a gzip bomb
(a few MB that expand to GBs) is ever held in memory beyond :data:`MAX_RESPONSE_BYTES`.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import zlib
from typing import Any

from .errors import BadResponse, Unreachable
from .types import MAX_RESPONSE_BYTES

__all__ = [
    "MAX_RESPONSE_BYTES",
    "Deadline",
    "TooLarge",
    "current_deadline",
    "delivered",
    "discard",
    "is_timeout",
    "read_body",
    "watch_connections",
]


_CHUNK = 1 << 16


def size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


class TooLarge(BadResponse):
    """An answer above the size limit."""


class Deadline:
    """The time limit of one request: ``limit`` seconds from creation (None: no limit).

    While an attempt runs (:meth:`attempt`), the calling thread's connection is watched; when the
    time is up the socket is shut down, which ends any blocked read or write on it. ``expired``
    tells the caller that an error (or a body that ended early) was this deadline's doing."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self._ends = time.monotonic() + limit if limit else None
        self._lock = threading.Lock()
        self._conn: Any = None
        self._sock: Any = None
        self._timer: threading.Timer | None = None
        self.expired = False
        self.binding = False

    def remaining(self) -> float | None:
        if self._ends is None:
            return None
        return max(self._ends - time.monotonic(), 0.0)

    def bound(self, timeout: float | None) -> float | None:
        """``timeout`` (a connect or read timeout) no longer than what is left of the deadline."""
        left = self.remaining()
        if left is None:
            return timeout
        left = max(left, 0.001)  # a zero timeout would make the socket non-blocking
        if timeout is None or left <= timeout:
            self.binding = True  # a socket timeout from now on is this deadline running out
            return left
        return timeout

    def start(self) -> None:
        """Watch this thread's connection until :meth:`stop`."""
        _local.deadline = self
        left = self.remaining()
        if left is None:
            return
        if left <= 0:
            self.expired = True
            return
        self._timer = threading.Timer(left, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        with self._lock:
            self._conn = self._sock = None
        if getattr(_local, "deadline", None) is self:
            _local.deadline = None

    def attach(self, conn: Any) -> None:
        """The connection the current attempt uses (called by the pool's connections). Its socket
        is kept too: http.client hands the socket over to the response and forgets it when the
        server says ``Connection: close``."""
        with self._lock:
            self._conn = conn
            self._sock = getattr(conn, "sock", None) or self._sock
            if self.expired:
                self._cut()

    def _cut(self) -> None:
        for sock in (getattr(self._conn, "sock", None), self._sock):
            if sock is not None:
                # the plain socket call, also for a TLS socket: its own shutdown() would drop the TLS
                # state under the thread that is reading
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def ran_out(self, e: BaseException) -> bool:
        """Whether the failure ``e`` of an attempt is this deadline's doing: it shut the socket down,
        or a socket timeout that it had shortened to what was left ran out (whichever came first)."""
        return self.expired or (self.binding and is_timeout(e))

    def error(self, server: str, resp: Any) -> Unreachable:
        """What a request that ran out of time says (an answer may have begun: the request was sent)."""
        got = f"; {resp.status} received, the body incomplete" if resp is not None else ""
        return Unreachable(server, f"no complete answer within {self.limit or 0:g}s (request timeout{got})",
                           delivered=True)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._cut()


_local = threading.local()


def current_deadline() -> Deadline | None:
    return getattr(_local, "deadline", None)


class _Watched:
    """Mixed into urllib3's connection classes: tell the calling thread's deadline which
    connection (hence which socket) its request uses — a new one, or one reused from the pool."""

    def connect(self) -> None:
        deadline = current_deadline()
        if deadline is not None:
            deadline.attach(self)
        super().connect()  # type: ignore[misc]
        if deadline is not None:
            deadline.attach(self)  # the socket now exists: cut it if the time ran out meanwhile

    def request(self, *args: Any, **kwargs: Any) -> Any:
        deadline = current_deadline()
        if deadline is not None:
            deadline.attach(self)
        return super().request(*args, **kwargs)  # type: ignore[misc]


def is_timeout(e: BaseException) -> bool:
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError

    if isinstance(e, ReadTimeoutError | TimeoutError):
        return True
    if isinstance(e, NewConnectionError):  # urllib3 2 makes it a ConnectTimeoutError
        return isinstance(e.__cause__, TimeoutError)
    return isinstance(e, ConnectTimeoutError)


def delivered(e: BaseException, resp: Any) -> bool:
    """Whether a request that failed with ``e`` may have reached the server: an answer had begun,
    or the wait for it timed out (the request was sent); not for refused or unresolved connections,
    TLS failures or a connect timeout (nothing was sent)."""
    from urllib3.exceptions import ConnectTimeoutError, ReadTimeoutError

    return resp is not None or (isinstance(e, ReadTimeoutError) and not isinstance(e, ConnectTimeoutError))


def discard(resp: Any) -> None:
    """A response not read to its end: its connection cannot be reused."""
    if resp is None:
        return
    with contextlib.suppress(Exception):
        resp.close()
    with contextlib.suppress(Exception):
        resp.release_conn()


def watch_connections(manager: Any) -> Any:
    """``manager`` (a urllib3 PoolManager, ProxyManager or SOCKSProxyManager) with pools whose
    connections report to the calling thread's :class:`Deadline`."""
    pools: dict[str, Any] = {}
    for scheme, pool_cls in manager.pool_classes_by_scheme.items():
        conn_cls = type(f"Watched{pool_cls.ConnectionCls.__name__}", (_Watched, pool_cls.ConnectionCls), {})
        pools[scheme] = type(f"Watched{pool_cls.__name__}", (pool_cls,), {"ConnectionCls": conn_cls})
    manager.pool_classes_by_scheme = pools
    return manager


def read_body(resp: Any, limit: int, what: str) -> bytes:
    """The whole body of ``resp`` (a urllib3 response opened with ``preload_content=False``),
    decompressed as its Content-Encoding says, refusing more than ``limit`` bytes before or after
    decompression. ``what`` names the request in errors (``GET https://…/path``)."""
    length = resp.headers.get("Content-Length")
    if length is not None and length.strip().isdigit() and int(length) > limit:
        raise TooLarge(f"{what}: the server announced an answer of {size_text(int(length))} (Content-Length "
                       f"{int(length)}), more than the {size_text(limit)} this tool reads per answer")
    encoding = (resp.headers.get("Content-Encoding") or "").strip().lower()
    decoder: Any = None
    if encoding in ("gzip", "x-gzip"):
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    elif encoding not in ("", "identity"):
        raise BadResponse(f"{what}: the server answered with Content-Encoding {encoding!r}, which this tool "
                          "does not read (it asks for gzip)")
    parts: list[bytes] = []
    raw = size = 0

    def too_large() -> TooLarge:
        return TooLarge(f"{what}: the answer is larger than the {size_text(limit)} this tool reads per answer"
                        + (" once decompressed" if decoder is not None and raw <= limit else "")
                        + "; stopped reading")

    def take(data: bytes) -> None:
        nonlocal size
        size += len(data)
        if size > limit:
            raise too_large()
        parts.append(data)

    while True:
        chunk = resp.read(_CHUNK, decode_content=False)
        if not chunk:
            break
        raw += len(chunk)
        if raw > limit:
            raise too_large()
        if decoder is None:
            take(chunk)
            continue
        try:
            while chunk:
                # max_length: a chunk of a gzip bomb expands to at most _CHUNK bytes per step
                take(decoder.decompress(chunk, _CHUNK))
                chunk = decoder.unconsumed_tail
                if decoder.eof and decoder.unused_data:
                    # concatenated gzip members (Go's reader reads them all, as urllib3 does)
                    chunk = decoder.unused_data
                    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        except zlib.error as e:
            raise BadResponse(f"{what}: the server's {encoding} body does not decompress ({e})") from None
    if decoder is not None:
        try:
            take(decoder.flush())
        except zlib.error as e:
            raise BadResponse(f"{what}: the server's {encoding} body does not decompress ({e})") from None
    return b"".join(parts)
