"""A fake API server on 127.0.0.1 that misbehaves on purpose (issue 18, items 9-11): it answers
discovery like a real one (one type, ``widgets.example.com``), and every other request with what
the test scripts — HTML, broken JSON, redirects, endless or trickling bodies, gzip bombs, a continue
token that never changes. Raw sockets, so that nothing in the way tidies the answers up.

Only for behaviour no real server shows; everything else is tested against the lab."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

GROUP = "example.com"
WIDGETS = "/apis/example.com/v1/namespaces/ns/widgets"


@dataclass
class Request:
    method: str
    path: str  # without the query
    query: str
    headers: dict[str, str]


Answer = Callable[[socket.socket, "HostileServer"], None]
Route = Callable[[Request], Answer]


def answer(status: int, body: bytes | str, content_type: str = "application/json",
           headers: dict[str, str] | None = None, reason: str = "") -> Answer:
    data = body.encode() if isinstance(body, str) else body

    def send(conn: socket.socket, server: HostileServer) -> None:
        head = [f"HTTP/1.1 {status} {reason or 'Whatever'}", f"Content-Type: {content_type}",
                f"Content-Length: {len(data)}", "Connection: close"]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        server.send(conn, ("\r\n".join(head) + "\r\n\r\n").encode() + data)

    return send


def json_answer(doc: Any, status: int = 200) -> Answer:
    return answer(status, json.dumps(doc))


def raw_answer(head: str, body_chunks: Callable[[], Iterator[bytes]], pause: float = 0.0) -> Answer:
    """``head`` (status line and headers, without the blank line), then the chunks as they come,
    ``pause`` seconds apart, until the chunks end or the client goes away."""

    def send(conn: socket.socket, server: HostileServer) -> None:
        server.send(conn, (head.rstrip("\r\n") + "\r\n\r\n").encode())
        for chunk in body_chunks():
            if pause:
                if server.stopping.wait(pause):
                    return
            if not server.send(conn, chunk):
                return

    return send


def endless(content_type: str = "application/json") -> Answer:
    """A 200 without a length whose body never ends: ``[{"a":1},{"a":1},...``."""
    def chunks() -> Iterator[bytes]:
        yield b"["
        piece = b'{"a":1},' * 8192
        while True:
            yield piece

    return raw_answer(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close", chunks)


def trickle(interval: float, head_too: bool = False) -> Answer:
    """One byte every ``interval`` seconds: of the body (``head_too``: of the status line already)."""
    doc = b'{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{},"items":[]}'
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(doc)}\r\nConnection: close"
    if not head_too:
        def body() -> Iterator[bytes]:
            for i in range(len(doc)):
                yield doc[i:i + 1]
        return raw_answer(head, body, pause=interval)

    whole = (head + "\r\n\r\n").encode() + doc

    def send(conn: socket.socket, server: HostileServer) -> None:
        for i in range(len(whole)):
            if server.stopping.wait(interval) or not server.send(conn, whole[i:i + 1]):
                return

    return send


def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of ``expanded`` zero bytes (about 1,000 times smaller)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    parts = [z.compress(block) for _ in range(expanded // len(block))]
    parts.append(z.flush())
    return b"".join(parts)


def _discovery(req: Request) -> Answer | None:
    if req.path == "/api":
        return json_answer({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                            "reason": "NotFound", "message": "the server could not find the requested resource"},
                           404)
    if req.path == "/apis":
        return json_answer({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": GROUP, "versions": [{"groupVersion": f"{GROUP}/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": f"{GROUP}/v1", "version": "v1"}}]})
    if req.path == f"/apis/{GROUP}/v1":
        return json_answer({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/v1",
                            "resources": [{"name": "widgets", "singularName": "widget", "namespaced": True,
                                           "kind": "Widget",
                                           "verbs": ["get", "list", "patch", "create", "update", "delete"]}]})
    return None


@dataclass
class HostileServer:
    """Serve until closed; ``route`` answers everything but discovery. ``sent`` counts the bytes
    written to clients, ``requests`` what they asked."""

    route: Route
    sock: socket.socket = field(default_factory=socket.socket)
    stopping: threading.Event = field(default_factory=threading.Event)
    sent: int = 0
    port: int = 0
    requests: list[Request] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)
    _conns: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def send(self, conn: socket.socket, data: bytes) -> bool:
        try:
            conn.sendall(data)
        except OSError:
            return False  # the client went away
        with self._lock:
            self.sent += len(data)
        return True

    def start(self) -> None:
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self._conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, rest = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            need = int(headers.get("content-length") or 0) - len(rest)
            while need > 0:
                more = conn.recv(65536)
                if not more:
                    return
                need -= len(more)
            path, _, query = target.partition("?")
            req = Request(method, path, query, headers)
            with self._lock:
                self.requests.append(req)
            (_discovery(req) or self.route(req))(conn, self)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def close(self) -> None:
        self.stopping.set()
        for c in list(self._conns):
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        for t in self._threads:
            t.join(timeout=30)
        self.sock.close()

    def kubeconfig(self, tmp_path: Path) -> Path:
        path = tmp_path / "hostile.kubeconfig"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "x",
            "clusters": [{"name": "c", "cluster": {"server": self.url}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "ns"}}]}))
        return path


@contextlib.contextmanager
def hostile_server(route: Route) -> Iterator[HostileServer]:
    server = HostileServer(route)
    server.start()
    try:
        yield server
    finally:
        server.close()


def wait_until(condition: Callable[[], bool], limit: float = 60.0) -> bool:
    """Poll ``condition`` (for a server thread to notice a client leaving), bounded generously."""
    ends = time.monotonic() + limit
    while time.monotonic() < ends:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
