"""What the client does with answers no API server gives (issue 18, items 9-11), against a fake
server started in the test (tests/hostile_server.py): one line that says what came, bounded memory
(a size limit per answer, decompression included) and bounded time (a repeated continue token, a
whole-request timeout that a trickling server cannot stretch). No assertion on durations: each test
checks the error, and what was read or asked."""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_server import (
    WIDGETS,
    Answer,
    HostileServer,
    Request,
    Route,
    answer,
    endless,
    gzip_bomb,
    hostile_server,
    json_answer,
    raw_answer,
    trickle,
)

from kubectl_fieldown.kube import ClusterClient, ClusterOptions
from kubectl_fieldown.kube.client import MAX_RESPONSE_BYTES, RetryPolicy
from kubectl_fieldown.kube.discovery import ResourceInfo
from kubectl_fieldown.kube.errors import BadResponse, Unreachable

WIDGET_TYPE = ResourceInfo(group="example.com", version="v1", resource="widgets", kind="Widget", namespaced=True,
                           verbs=frozenset({"get", "list", "patch"}))


def widget(name: str) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "ns"}}


def client_for(server: HostileServer, tmp_path: Path, **options: Any) -> ClusterClient:
    options.setdefault("retry", RetryPolicy(max_attempts=1))
    return ClusterClient(ClusterOptions(kubeconfig=str(server.kubeconfig(tmp_path)), **options))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))


@contextlib.contextmanager
def session(route: Route, tmp_path: Path, **options: Any) -> Iterator[tuple[HostileServer, ClusterClient]]:
    """The fake server answering with ``route``, and a client of it."""
    with hostile_server(route) as server, client_for(server, tmp_path, **options) as c:
        yield server, c


# --- item 9: what came instead of JSON ------------------------------------------------------------------

LOGIN_PAGE = "<!DOCTYPE html>\n<html><head><title>Sign in to the corporate proxy</title></head><body>" + "x" * 5000


@pytest.mark.parametrize(("reply", "said"), [
    (answer(200, LOGIN_PAGE, "text/html; charset=utf-8"),
     ': the server answered 200 OK (text/html; charset=utf-8), not JSON: "<!DOCTYPE html> '
     '<html><head><title>Sign in to the corporate proxy</title></head>…"'),
    (answer(200, '{"kind":"Widget","metadata":{"name":"w"', "application/json"),
     ': the server answered 200 OK (application/json), not JSON: "{\\"kind\\":\\"Widget\\",\\"metadata\\":{\\"name\\":'
     '\\"w\\""'),
    (answer(200, b"", "application/json"), ": the server answered 200 OK (application/json), not JSON: an empty body"),
    (answer(200, "[1, 2]"),
     ': the server answered 200 OK (application/json) with a JSON list, not an object: "[1, 2]"'),
])
def test_an_answer_that_is_not_an_object_says_what_came(reply: Answer, said: str, tmp_path: Path, cache: None) -> None:
    with session(lambda req: reply, tmp_path) as (server, c), pytest.raises(BadResponse) as caught:
        c.get(WIDGET_TYPE, "w", "ns")
    message = str(caught.value)
    where = "GET " + server.url + WIDGETS + "/w" if "list" not in said else "get widgets.example.com"
    assert message.startswith(where), message
    assert message.endswith(said), message
    assert "\n" not in message and len(message) < 300


def test_a_redirect_is_not_followed_and_says_where_it_pointed(tmp_path: Path, cache: None) -> None:
    def route(req: Request) -> Answer:
        if req.path == "/stolen":
            return json_answer({})
        return answer(302, "", "text/html", headers={"Location": f"http://localhost:{server.port}/stolen"},
                      reason="Found")

    with session(route, tmp_path) as (server, c):
        with pytest.raises(BadResponse) as caught:
            c.get(WIDGET_TYPE, "w", "ns")
        assert str(caught.value) == (
            f"GET {server.url}{WIDGETS}/w: the server answered 302 Found (text/html), a redirect to "
            f'"http://localhost:{server.port}/stolen"; not followed (the credentials would go with it)')
        with pytest.raises(BadResponse, match="a redirect to"):
            c.patch(WIDGET_TYPE, "w", "ns", [], "json")
        assert [r.path for r in server.requests if r.path == "/stolen"] == []


@pytest.mark.parametrize(("page", "said"), [
    ({"kind": "WidgetList", "items": [widget("a"), "b"]}, "whose items[1] is a JSON string, not an object"),
    ({"kind": "WidgetList", "items": [None]}, "whose items[0] is a JSON null, not an object"),
    ({"kind": "WidgetList", "items": {"a": 1}}, "whose items are a JSON object, not a list"),
    ({"kind": "WidgetList", "metadata": "x", "items": []}, "whose metadata is a JSON string, not an object"),
    ([widget("a")], 'with a JSON list, not a list object: "[{\\"apiVersion\\"'),
])
def test_a_list_whose_items_are_not_objects_says_so(page: Any, said: str, tmp_path: Path, cache: None) -> None:
    with session(lambda req: json_answer(page), tmp_path) as (server, c), pytest.raises(BadResponse) as caught:
        c.list(WIDGET_TYPE, "ns")
    message = str(caught.value)
    assert message.startswith(f"GET {server.url}{WIDGETS}: the server answered 200 OK (application/json) "), message
    assert said in message, message


# --- item 10: bounded memory -----------------------------------------------------------------------------


def test_a_huge_content_length_is_refused_before_reading(tmp_path: Path, cache: None) -> None:
    def body() -> Iterator[bytes]:
        yield b"[" + b" " * 65536  # then nothing: the client must not wait for 3 GB

    huge = raw_answer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3000000000", body)
    with session(lambda req: huge, tmp_path) as (server, c), pytest.raises(BadResponse) as caught:
        c.get(WIDGET_TYPE, "w", "ns")
    assert str(caught.value) == (
        f"GET {server.url}{WIDGETS}/w: the server announced an answer of 2.79397 GiB (Content-Length 3000000000), "
        f"more than the 1 GiB this tool reads per answer")
    assert MAX_RESPONSE_BYTES == 1 << 30


def test_an_endless_body_stops_at_the_limit(tmp_path: Path, cache: None) -> None:
    limit = 1 << 20
    with session(lambda req: endless(), tmp_path, max_response_bytes=limit) as (server, c), \
            pytest.raises(BadResponse) as caught:
        c.get(WIDGET_TYPE, "w", "ns")
    assert str(caught.value) == (f"GET {server.url}{WIDGETS}/w: the answer is larger than the 1 MiB this tool "
                                 "reads per answer; stopped reading")
    # the client hung up: the server could not write much more than the limit and the socket buffers
    assert server.sent < 64 * limit


def test_a_gzip_bomb_is_decompressed_within_the_limit(tmp_path: Path, cache: None) -> None:
    bomb = gzip_bomb(64 << 20)  # 64 MiB of zeros in about 64 KB
    assert len(bomb) < 1 << 20
    reply = answer(200, bomb, headers={"Content-Encoding": "gzip"})
    with session(lambda req: reply, tmp_path, max_response_bytes=4 << 20) as (server, c), \
            pytest.raises(BadResponse) as caught:
        c.get(WIDGET_TYPE, "w", "ns")
    assert str(caught.value) == (f"GET {server.url}{WIDGETS}/w: the answer is larger than the 4 MiB this tool "
                                 "reads per answer once decompressed; stopped reading")


def test_gzip_answers_are_still_read(tmp_path: Path, cache: None) -> None:
    doc = {"kind": "WidgetList", "metadata": {}, "items": [widget(f"w{i}") for i in range(2000)]}
    data = json.dumps(doc).encode()
    # two gzip members, as a server may write them: Go's reader reads both
    body = gzip.compress(data[:1000]) + gzip.compress(data[1000:])
    reply = answer(200, body, headers={"Content-Encoding": "gzip"})
    with session(lambda req: reply, tmp_path) as (_, c):
        items = c.list(WIDGET_TYPE, "ns")
    assert [i["metadata"]["name"] for i in items] == [f"w{i}" for i in range(2000)]


def test_a_broken_gzip_body_says_so(tmp_path: Path, cache: None) -> None:
    reply = answer(200, b"\x1f\x8b\x08\x00garbage-not-deflate", headers={"Content-Encoding": "gzip"})
    with session(lambda req: reply, tmp_path) as (_, c), \
            pytest.raises(BadResponse, match=r"^GET .*/widgets/w: the server's gzip body does not decompress \("):
        c.get(WIDGET_TYPE, "w", "ns")


# --- item 11: bounded time ------------------------------------------------------------------------------


def test_a_continue_token_that_never_changes_ends_the_list(tmp_path: Path, cache: None) -> None:
    page = {"kind": "WidgetList", "metadata": {"continue": "same-token"}, "items": [widget("a")]}
    with session(lambda req: json_answer(page), tmp_path) as (server, c), pytest.raises(BadResponse) as caught:
        c.list(WIDGET_TYPE, "ns", limit=1)
    assert str(caught.value) == ('list widgets.example.com in namespace "ns": the server answered a continue token '
                                 "it had already given (after 2 pages); stopped instead of listing the same pages "
                                 "forever")
    assert len([r for r in server.requests if r.path == WIDGETS]) == 2


def test_a_cycle_of_continue_tokens_ends_the_list(tmp_path: Path, cache: None) -> None:
    def route(req: Request) -> Answer:
        token = "b" if "continue=a" in req.query else "a"
        return json_answer({"kind": "WidgetList", "metadata": {"continue": token}, "items": []})

    with session(route, tmp_path) as (_, c), pytest.raises(BadResponse, match=r"already given \(after 3 pages\)"):
        c.list(WIDGET_TYPE, "ns")


@pytest.mark.parametrize("head_too", [False, True], ids=["body", "status-line"])
def test_the_request_timeout_bounds_a_trickling_answer(head_too: bool, tmp_path: Path, cache: None) -> None:
    # one byte every 0.3 s: each read gets its byte well within its 1 s, so only a limit on the
    # whole request ends it (the answer would take about 30 s)
    with session(lambda req: trickle(0.3, head_too=head_too), tmp_path, connect_timeout=1, read_timeout=1,
                 request_timeout=1) as (server, c), pytest.raises(Unreachable) as caught:
        c.get_json(WIDGETS)
    got = "" if head_too else "; 200 received, the body incomplete"
    assert str(caught.value) == f"cannot reach the API server at {server.url}: no complete answer within 1s " \
                                f"(request timeout{got})"
    assert caught.value.delivered


def test_the_request_timeout_covers_the_retries(tmp_path: Path, cache: None) -> None:
    # a 503 with Retry-After 30: the retry would start after the request's time is up, so it is not made
    busy = answer(503, json.dumps({"kind": "Status", "code": 503, "message": "busy"}), headers={"Retry-After": "30"})
    with session(lambda req: busy, tmp_path, request_timeout=5, retry=RetryPolicy(max_attempts=5)) as (server, c), \
            pytest.raises(Exception, match="busy"):
        c.get_json(WIDGETS)
    assert len([r for r in server.requests if r.path == WIDGETS]) == 1
