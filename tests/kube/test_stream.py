"""kubectl_fieldown.kube.stream.PageStream with a fake client: every page arrives once, per-type
errors are events, fatal errors are raised, memory is bounded, and closing stops the threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubectl_fieldown.kube.discovery import ResourceInfo
from kubectl_fieldown.kube.errors import Forbidden, RequestContext, Unreachable
from kubectl_fieldown.kube.stream import PageStream


def res(name: str) -> ResourceInfo:
    return ResourceInfo(group="example.com", version="v1", resource=name, kind=name.title(), namespaced=True,
                        verbs=frozenset({"list", "patch"}))


class FakeClient:
    """``list_pages`` of ``pages[type]`` pages of 2 items; ``fail[type]`` raises after that many pages."""

    def __init__(self, pages: dict[str, int], fail: dict[str, tuple[int, Exception]] | None = None,
                 delay: float = 0.0) -> None:
        self.pages = pages
        self.fail = fail or {}
        self.delay = delay
        self.lock = threading.Lock()
        self.produced = 0
        self.consumed = 0
        self.max_outstanding = 0
        self.namespaces: list[Any] = []

    def list_pages(self, r: ResourceInfo, namespace: Any, *, label_selector: str | None = None,
                   limit: int = 500) -> Iterator[list[dict[str, Any]]]:
        self.namespaces.append((namespace, label_selector, limit))
        for i in range(self.pages[r.resource]):
            if r.resource in self.fail and i == self.fail[r.resource][0]:
                raise self.fail[r.resource][1]
            time.sleep(self.delay)
            with self.lock:
                self.produced += 1
                self.max_outstanding = max(self.max_outstanding, self.produced - self.consumed)
            yield [{"n": f"{r.resource}-{i}-{j}"} for j in range(2)]


def forbidden(name: str) -> Forbidden:
    ctx = RequestContext(verb="list", server="https://x", path=f"/apis/example.com/v1/{name}", resource=name)
    return Forbidden(f"forbidden to list {name}", code=403, reason="Forbidden", status=None, context=ctx)


def test_every_page_once_and_one_end_event_per_type() -> None:
    client = FakeClient({"a": 5, "b": 0, "c": 3})
    items: list[str] = []
    done: list[str] = []
    with PageStream(client, [res("a"), res("b"), res("c")], "ns", label_selector="x=y", workers=2) as stream:
        for ev in stream:
            if ev.items is not None:
                items.extend(i["n"] for i in ev.items)
            if ev.done:
                done.append(ev.resource.resource)
    assert sorted(items) == sorted([f"a-{i}-{j}" for i in range(5) for j in range(2)]
                                   + [f"c-{i}-{j}" for i in range(3) for j in range(2)])
    assert sorted(done) == ["a", "b", "c"]
    assert {n for n in client.namespaces} == {("ns", "x=y", 500)}


def test_first_page_is_told_once_for_each_type_with_objects_after_its_first_page() -> None:
    client = FakeClient({"a": 5, "b": 0, "c": 3})
    told: list[tuple[str, int]] = []

    def first_page(r: ResourceInfo) -> None:
        with client.lock:
            told.append((r.resource, client.produced))

    with PageStream(client, [res("a"), res("b"), res("c")], "ns", workers=2, first_page=first_page) as stream:
        pages = sum(1 for ev in stream if ev.items is not None)
    assert pages == 8
    assert sorted(r for r, _ in told) == ["a", "c"]
    assert all(produced >= 1 for _, produced in told)


def test_errors_of_one_type_are_events_after_its_earlier_pages() -> None:
    client = FakeClient({"a": 4, "b": 2}, fail={"a": (2, forbidden("a"))})
    events = list(PageStream(client, [res("a"), res("b")], "ns"))
    a = [ev for ev in events if ev.resource.resource == "a"]
    assert [bool(ev.items) for ev in a] == [True, True, False]
    assert isinstance(a[-1].error, Forbidden) and not a[-1].done
    assert [ev.done for ev in events if ev.resource.resource == "b"][-1] is True


def test_fatal_errors_are_raised() -> None:
    client = FakeClient({"a": 3, "b": 50}, fail={"a": (1, Unreachable("https://x", "connection refused"))},
                        delay=0.01)
    with pytest.raises(Unreachable), PageStream(client, [res("a"), res("b")], "ns") as stream:
        for _ in stream:
            pass


def test_unexpected_exceptions_are_raised() -> None:
    client = FakeClient({"a": 3}, fail={"a": (0, RuntimeError("bug"))})
    with pytest.raises(RuntimeError, match="bug"):
        list(PageStream(client, [res("a")], "ns"))


def test_memory_is_bounded_by_workers_and_pending_pages() -> None:
    client = FakeClient({f"t{i}": 40 for i in range(6)})
    stream = PageStream(client, [res(f"t{i}") for i in range(6)], "ns", workers=3, max_pending=2)
    n = 0
    for ev in stream:
        if ev.items is not None:
            time.sleep(0.002)  # a slow consumer: producers must wait, not pile pages up
            n += 1
            with client.lock:
                client.consumed += 1
    assert n == 240
    # each worker holds at most one page it cannot hand over, the queue two, the consumer one
    assert client.max_outstanding <= 3 + 2 + 1


def test_closing_stops_the_workers() -> None:
    client = FakeClient({f"t{i}": 1000 for i in range(4)}, delay=0.001)
    before = {t for t in threading.enumerate() if t.name.startswith("fieldown-list-")}
    with PageStream(client, [res(f"t{i}") for i in range(4)], "ns", workers=4) as stream:
        for i, _ in enumerate(stream):
            if i == 5:
                break
    deadline = time.monotonic() + 60  # only a failure waits that long: a loaded machine is slow to schedule
    while time.monotonic() < deadline:
        alive = {t for t in threading.enumerate() if t.name.startswith("fieldown-list-")} - before
        if not alive:
            break
        time.sleep(0.02)
    assert not alive
    assert client.produced < 4000


def test_no_types() -> None:
    assert list(PageStream(FakeClient({}), [], "ns")) == []


class GatedClient(FakeClient):
    """A FakeClient whose LISTs say when they began, and wait for the test to let them answer."""

    def __init__(self, pages: dict[str, int]) -> None:
        super().__init__(pages)
        self.began = threading.Event()
        self.answer = threading.Event()

    def list_pages(self, r: ResourceInfo, namespace: Any, *, label_selector: str | None = None,
                   limit: int = 500) -> Iterator[list[dict[str, Any]]]:
        self.began.set()
        assert self.answer.wait(60)
        yield from super().list_pages(r, namespace, label_selector=label_selector, limit=limit)


def test_start_lists_before_the_iteration_and_the_iteration_gets_every_page_once() -> None:
    """audit starts the LIST, then loads the engine (fleet.audit_cluster): the requests are out
    before anyone iterates, and starting twice (or iterating after) starts no second set of workers."""
    client = GatedClient({"a": 3, "b": 2})
    with PageStream(client, [res("a"), res("b")], "ns", workers=2) as stream:
        stream.start()
        assert client.began.wait(60)  # nobody has iterated yet
        stream.start()
        client.answer.set()
        items = sorted(i["n"] for ev in stream if ev.items is not None for i in ev.items)
    assert items == sorted([f"a-{i}-{j}" for i in range(3) for j in range(2)] + [f"b-{i}-{j}" for i in range(2)
                                                                                 for j in range(2)])
    assert len(client.namespaces) == 2  # one LIST per type


def test_a_stream_closed_before_it_starts_lists_nothing() -> None:
    client = FakeClient({"a": 3})
    stream = PageStream(client, [res("a")], "ns")
    stream.close()
    stream.start()
    assert list(stream) == []
    assert client.namespaces == []
