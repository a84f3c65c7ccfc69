"""``kube/watch.py`` against a server that breaks the way a real one does only under failure: a watch
cut off in the middle of an answer (the server went away), 410 Gone as an ERROR event, a watch the
server ends. (The real server's 410 after an etcd compaction: tests/cli/test_watch_cluster.py.)"""

from __future__ import annotations

import json
import queue
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hostile_server import (
    WIDGETS,
    Answer,
    HostileServer,
    Request,
    hostile_server,
    json_answer,
    raw_answer,
    wait_until,
)

from kubectl_fieldown.kube import ClusterClient, ClusterOptions
from kubectl_fieldown.kube.watch import Event, Failed, Notice, Snapshot, TypeWatch, WatchItem

BOUND = 60.0


def widget(rv: str, color: str) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"color": color},
            "metadata": {"name": "w", "namespace": "ns", "uid": "u1", "resourceVersion": rv}}


def chunk(doc: dict[str, Any]) -> bytes:
    data = json.dumps(doc).encode() + b"\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"


class Script:
    """Lists answer versions 10 then 11; watches: (1) an event, then the connection breaks in the
    middle of a chunk; (2) 410 Gone as an ERROR event; (3) an event and a bookmark, then the server
    ends the watch; (4) nothing until the test ends."""

    def __init__(self) -> None:
        self.lists = 0
        self.watches = 0

    def route(self, req: Request) -> Answer:
        assert req.path == WIDGETS, req.path
        if "watch=true" not in req.query:
            self.lists += 1
            return json_answer({"kind": "WidgetList", "apiVersion": "example.com/v1",
                                "metadata": {"resourceVersion": str(9 + self.lists)},
                                "items": [widget("5", "red")]})
        self.watches += 1
        n = self.watches

        def body() -> Iterator[bytes]:
            if n == 1:
                yield chunk({"type": "MODIFIED", "object": widget("11", "blue")})
                yield b"ff\r\n{\"type\":"  # cut off: the server went away
            elif n == 2:
                yield chunk({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "code": 410,
                                                         "reason": "Expired", "message": "too old"}})
                yield b"0\r\n\r\n"
            elif n == 3:
                yield chunk({"type": "MODIFIED", "object": widget("12", "green")})
                yield chunk({"type": "BOOKMARK", "object": {"kind": "Widget", "apiVersion": "example.com/v1",
                                                            "metadata": {"resourceVersion": "13"}}})
                yield b"0\r\n\r\n"
            else:
                return  # the route's caller holds nothing open: see hold()

        if n >= 4:
            return hold
        return raw_answer(HEAD, body)


def hold(conn: socket.socket, server: HostileServer) -> None:
    server.send(conn, (HEAD + "\r\n\r\n").encode())
    server.stopping.wait(BOUND)


def test_reconnects_relists_and_follows_bookmarks(tmp_path: Path) -> None:
    script = Script()
    with hostile_server(script.route) as server:
        client = ClusterClient(ClusterOptions(kubeconfig=str(server.kubeconfig(tmp_path))))
        try:
            res = client.discovery.resolve("widgets")
            q: queue.Queue[WatchItem] = queue.Queue()
            tw = TypeWatch(client, 0, res, "ns", q, threading.Event())
            tw.start()
            items: list[WatchItem] = []
            while len(items) < 7:
                item = q.get(timeout=BOUND)
                assert not isinstance(item, Failed), item.error
                items.append(item)
            assert wait_until(lambda: script.watches >= 4, BOUND)  # the watch after the bookmark
            tw.close()
            tw.thread.join(BOUND)
            assert not tw.thread.is_alive()
        finally:
            client.close()
    kinds = [type(x).__name__ for x in items]
    assert kinds == ["Snapshot", "Event", "Notice", "Notice", "Notice", "Snapshot", "Event"]
    first, modified, broken, again, gone, relisted, later = items
    assert isinstance(first, Snapshot) and not first.relist and first.resource_version == "10"
    assert isinstance(modified, Event) and modified.obj["spec"] == {"color": "blue"}
    assert isinstance(broken, Notice) and "watch interrupted" in broken.text
    assert isinstance(again, Notice) and again.text == "widgets.example.com: watching again from resourceVersion 11"
    assert isinstance(gone, Notice) and "410 Gone" in gone.text
    assert isinstance(relisted, Snapshot) and relisted.relist and relisted.resource_version == "11"
    assert isinstance(later, Event) and later.obj["spec"] == {"color": "green"}
    watches = [r.query for r in server.requests if "watch=true" in r.query]
    versions = [dict(p.split("=", 1) for p in q.split("&"))["resourceVersion"] for q in watches]
    # after the break: from the last event's version; after the 410: from the relist's; after the
    # server ended the watch: from the bookmark's
    assert versions == ["10", "11", "11", "13"]
    assert all("allowWatchBookmarks=true" in q for q in watches)


def test_answers_of_a_starting_server_are_waited_out(tmp_path: Path) -> None:
    """A server that is starting (or overloaded) answers 503 or 429: the watch waits and tries again,
    from the version it had, instead of ending."""
    state = {"lists": 0, "watches": 0}

    def route(req: Request) -> Answer:
        if "watch=true" not in req.query:
            state["lists"] += 1
            return json_answer({"kind": "WidgetList", "apiVersion": "example.com/v1",
                                "metadata": {"resourceVersion": "10"}, "items": [widget("5", "red")]})
        state["watches"] += 1
        n = state["watches"]
        if n == 1:
            return json_answer({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503,
                                "reason": "ServiceUnavailable", "message": "the server is starting"}, 503)
        if n == 2:
            return json_answer({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 429,
                                "reason": "TooManyRequests", "message": "slow down"}, 429)
        if n == 3:  # a watch that runs, then the server goes away in the middle of an answer
            return raw_answer(HEAD, lambda: iter([chunk({"type": "MODIFIED", "object": widget("11", "blue")}),
                                                  b"ff\r\n{\"type\":"]))
        if n == 4:
            return json_answer({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503,
                                "reason": "ServiceUnavailable", "message": "stopping"}, 503)
        return hold

    with hostile_server(route) as server:
        client = ClusterClient(ClusterOptions(kubeconfig=str(server.kubeconfig(tmp_path))))
        try:
            res = client.discovery.resolve("widgets")
            q: queue.Queue[WatchItem] = queue.Queue()
            tw = TypeWatch(client, 0, res, "ns", q, threading.Event())
            tw.start()
            items: list[WatchItem] = []
            while len(items) < 8:
                item = q.get(timeout=BOUND)
                assert not isinstance(item, Failed), item.error
                items.append(item)
            tw.close()
            tw.thread.join(BOUND)
        finally:
            client.close()
    kinds = [type(x).__name__ for x in items]
    assert kinds == ["Snapshot", "Notice", "Notice", "Notice", "Event", "Notice", "Notice", "Notice"]
    texts = [x.text for x in items if isinstance(x, Notice)]
    assert "503" in texts[0] and texts[0].endswith("watching again in 0.5s")
    assert "429" in texts[1] and texts[1].endswith("watching again in 1s")  # the backoff doubles
    assert texts[2].endswith("watching again from resourceVersion 10")
    # once a watch ran, the next interruption starts the backoff afresh
    assert "watch interrupted" in texts[3] and texts[3].endswith("watching again in 0.5s")
    assert "503" in texts[4] and texts[4].endswith("watching again in 1s")
    assert texts[5].endswith("watching again from resourceVersion 11")
    assert state["lists"] == 1  # no relist: the version was not too old
    versions = [dict(p.split("=", 1) for p in r.query.split("&"))["resourceVersion"]
                for r in server.requests if "watch=true" in r.query]
    assert versions[:5] == ["10", "10", "10", "11", "11"]  # each time from the last version seen
