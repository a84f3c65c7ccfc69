"""The watch's held objects: duplicates and relists give only real transitions."""

from __future__ import annotations

from typing import Any

from kubectl_fieldown.watch.tracker import Tracker


def o(name: str, rv: str, color: str = "red", uid: str | None = None) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"color": color},
            "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}", "resourceVersion": rv}}


def summary(ts: list[Any]) -> list[tuple[str | None, str | None, bool]]:
    return [(t.old.resource_version if t.old else None, t.new.resource_version if t.new else None, t.coalesced)
            for t in ts]


def test_first_list_is_held_silently() -> None:
    t = Tracker()
    assert t.snapshot(0, [o("a", "5"), o("b", "6")], relist=False) == []
    assert len(t) == 2


def test_events_and_duplicates() -> None:
    t = Tracker()
    t.snapshot(0, [o("a", "5")], relist=False)
    assert summary(t.event(0, "MODIFIED", o("a", "7", "blue"))) == [("5", "7", False)]
    assert t.event(0, "MODIFIED", o("a", "7", "blue")) == []  # delivered again after a reconnect
    assert t.event(0, "MODIFIED", o("a", "6")) == []  # older than held
    assert summary(t.event(0, "ADDED", o("c", "8"))) == [(None, "8", False)]
    (deleted,) = t.event(0, "DELETED", o("c", "9"))
    assert summary([deleted]) == [("8", None, False)] and deleted.deleted_at == "9"
    assert t.event(0, "DELETED", o("c", "9")) == []


def test_relist_gives_only_real_changes() -> None:
    t = Tracker()
    t.snapshot(0, [o("same", "5"), o("changed", "6"), o("gone", "7")], relist=False)
    got = t.snapshot(0, [o("same", "5"), o("changed", "9", "blue"), o("new", "10")], relist=True)
    assert summary(got) == [("6", "9", True), (None, "10", True), ("7", None, True)]
    # nothing changed since: a second relist is silent
    assert t.snapshot(0, [o("same", "5"), o("changed", "9", "blue"), o("new", "10")], relist=True) == []


def test_relist_older_than_held_keeps_ours() -> None:
    t = Tracker()
    t.snapshot(0, [o("a", "5")], relist=False)
    t.event(0, "MODIFIED", o("a", "8", "blue"))
    assert t.snapshot(0, [o("a", "5")], relist=True) == []
    assert summary(t.event(0, "MODIFIED", o("a", "9", "green"))) == [("8", "9", False)]


def test_scopes_are_apart() -> None:
    t = Tracker()
    t.snapshot(0, [o("a", "5")], relist=False)
    t.snapshot(1, [o("b", "6")], relist=False)
    assert summary(t.snapshot(1, [], relist=True)) == [("6", None, True)]
    assert len(t) == 1


def test_same_name_new_uid_is_a_new_object() -> None:
    t = Tracker()
    t.snapshot(0, [o("a", "5")], relist=False)
    assert summary(t.snapshot(0, [o("a", "9", uid="other")], relist=True)) == [(None, "9", True), ("5", None, True)]


def test_keep_holds_only_the_named_top_level_fields() -> None:
    t = Tracker(keep=frozenset({"spec"}))
    obj = dict(o("a", "5"), status={"phase": "x"})
    obj["metadata"] = {**obj["metadata"], "annotations": {"big": "x" * 1000}}
    t.snapshot(0, [obj], relist=False)
    (tr,) = t.event(0, "MODIFIED", dict(o("a", "6", "blue"), status={"phase": "y"}))
    assert tr.old is not None and tr.new is not None
    assert tr.old.body == {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"color": "red"},
                           "metadata": {"name": "a", "namespace": "ns"}}
    assert tr.new.body["spec"] == {"color": "blue"} and "status" not in tr.new.body
