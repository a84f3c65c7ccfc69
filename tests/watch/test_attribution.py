"""Table tests of watch attribution: which leaves a write changed and which entry wrote them."""

from __future__ import annotations

from typing import Any

import pytest
from engine.schemas import WIDGET

from kubectl_fieldown.fieldpath import FieldSet, Path, fields_v1_object, parse_path, path_from_fields, path_string
from kubectl_fieldown.fieldpath.lookup import MISSING
from kubectl_fieldown.ownership.managedfields import decode_entries
from kubectl_fieldown.watch.attribution import (
    ADDED,
    MODIFIED,
    REMOVED,
    Writer,
    attribute,
    changed_entries,
    object_version,
)


def entry(manager: str, op: str, sub: str, time: str, *paths: str | Path) -> dict[str, Any]:
    fs = FieldSet(parse_path(p) if isinstance(p, str) else p for p in paths)
    e: dict[str, Any] = {"manager": manager, "operation": op, "apiVersion": "example.com/v1", "time": time,
                         "fieldsType": "FieldsV1", "fieldsV1": fields_v1_object(fs)}
    if sub:
        e["subresource"] = sub
    return e


def obj(spec: dict[str, Any] | None, entries: list[dict[str, Any]], rv: str = "1",
        annotations: dict[str, str] | None = None, kind: str = "Widget", api: str = "example.com/v1",
        **top: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "w", "namespace": "ns", "uid": "u1", "resourceVersion": rv,
                          "managedFields": entries}
    if annotations is not None:
        md["annotations"] = annotations
    out: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": md, **top}
    if spec is not None:
        out["spec"] = spec
    return out


T0, T1 = "2024-01-01T00:00:00Z", "2024-01-01T00:00:05Z"


def W(manager: str, op: str = "Update", sub: str = "") -> Writer:
    return Writer(manager, op, sub)


# (name, old object, new object, expected [(path, change, old, new, writers, owners, ambiguous?)])
CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[Any, ...]]]] = [
    ("a /scale writer changes replicas",
     obj({"replicas": 3}, [entry("kubectl-client-side-apply", "Update", "", T0, ".spec.replicas")]),
     obj({"replicas": 5}, [entry("kubectl", "Update", "scale", T1, ".spec.replicas")], rv="2"),
     [(".spec.replicas", MODIFIED, 3, 5, [W("kubectl", sub="scale")], [W("kubectl", sub="scale")], False)]),
    ("the time of the entry changed, its set did not",
     obj({"color": "red"}, [entry("ed", "Update", "", T0, ".spec.color")]),
     obj({"color": "blue"}, [entry("ed", "Update", "", T1, ".spec.color")], rv="2"),
     [(".spec.color", MODIFIED, "red", "blue", [W("ed")], [W("ed")], False)]),
    ("an added map is its leaves",
     obj({}, [entry("a", "Apply", "", T0, ".spec")]),
     obj({"labels": {"x": "1", "y": "2"}}, [entry("a", "Apply", "", T1, ".spec.labels.x", ".spec.labels.y")],
         rv="2"),
     [(".spec.labels.x", ADDED, MISSING, "1", [W("a", "Apply")], [W("a", "Apply")], False),
      (".spec.labels.y", ADDED, MISSING, "2", [W("a", "Apply")], [W("a", "Apply")], False)]),
    ("an atomic list is one value",
     obj({"args": ["a"]}, [entry("a", "Apply", "", T0, ".spec.args")]),
     obj({"args": ["a", "b"]}, [entry("a", "Apply", "", T1, ".spec.args")], rv="2"),
     [(".spec.args", MODIFIED, ["a"], ["a", "b"], [W("a", "Apply")], [W("a", "Apply")], False)]),
    ("an applier drops a field from its manifest: the remover owned it before",
     obj({"color": "red", "replicas": 1}, [entry("a", "Apply", "", T0, ".spec.color", ".spec.replicas")]),
     obj({"replicas": 1}, [entry("a", "Apply", "", T1, ".spec.replicas")], rv="2"),
     [(".spec.color", REMOVED, "red", MISSING, [W("a", "Apply")], [], False)]),
    ("a co-owned field names every owner; the writer is the changed entry",
     obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color"), entry("b", "Apply", "", T0, ".spec.color")]),
     obj({"color": "blue"}, [entry("a", "Apply", "", T1, ".spec.color"), entry("b", "Apply", "", T0, ".spec.color")],
         rv="2"),
     [(".spec.color", MODIFIED, "red", "blue", [W("a", "Apply")], [W("a", "Apply"), W("b", "Apply")], False)]),
    ("an entry that only lost fields is not a writer (forced apply takes them)",
     obj({"color": "red"}, [entry("ctl", "Update", "", T0, ".spec.color")]),
     obj({"color": "blue"}, [entry("ctl", "Update", "", T0), entry("a", "Apply", "", T1, ".spec.color")], rv="2"),
     [(".spec.color", MODIFIED, "red", "blue", [W("a", "Apply")], [W("a", "Apply")], False)]),
    ("two entries changed in one write and both own it: ambiguous",
     obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color")]),
     obj({"color": "blue"}, [entry("a", "Apply", "", T1, ".spec.color"), entry("b", "Update", "", T1, ".spec.color")],
         rv="2"),
     [(".spec.color", MODIFIED, "red", "blue", [W("a", "Apply"), W("b")], [W("a", "Apply"), W("b")], True)]),
    ("a removal by an Update that then owns nothing: no entry changed",
     obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color")]),
     obj({}, [entry("a", "Apply", "", T0)], rv="2"),
     [(".spec.color", REMOVED, "red", MISSING, [], [], True)]),
    ("no entry changed: the one owner wrote it (a /scale entry has no time)",
     obj({"replicas": 5}, [dict(entry("kubectl", "Update", "scale", T0, ".spec.replicas"), time=None)]),
     obj({"replicas": 6}, [dict(entry("kubectl", "Update", "scale", T0, ".spec.replicas"), time=None)], rv="2"),
     [(".spec.replicas", MODIFIED, 5, 6, [W("kubectl", sub="scale")], [W("kubectl", sub="scale")], False)]),
    ("no entry changed and two own it: ambiguous between the owners",
     obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color"), entry("b", "Apply", "", T0, ".spec.color")]),
     obj({"color": "blue"}, [entry("a", "Apply", "", T0, ".spec.color"), entry("b", "Apply", "", T0, ".spec.color")],
         rv="2"),
     [(".spec.color", MODIFIED, "red", "blue", [W("a", "Apply"), W("b", "Apply")], [W("a", "Apply"), W("b", "Apply")],
       True)]),
    ("a change in no changed entry's set names the changed entries, ambiguous",
     obj({"color": "red", "replicas": 1}, [entry("a", "Apply", "", T0, ".spec.color")]),
     obj({"color": "red", "replicas": 2}, [entry("a", "Apply", "", T0, ".spec.color"),
                                           entry("b", "Update", "", T1, ".spec.color")], rv="2"),
     [(".spec.replicas", MODIFIED, 1, 2, [W("b")], [], True)]),
    ("bookkeeping (resourceVersion, managedFields times) is no field change",
     obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color")]),
     obj({"color": "red"}, [entry("a", "Apply", "", T1, ".spec.color")], rv="9"),
     []),
    ("annotations are fields; a key with dots and slashes",
     obj(None, [], annotations={"example.com/x": "1"}),
     obj(None, [entry("e", "Update", "", T1, path_from_fields("metadata", "annotations", "example.com/x"))], rv="2",
         annotations={"example.com/x": "2"}),
     [(".metadata.annotations.example.com/x", MODIFIED, "1", "2", [W("e")], [W("e")], False)]),
]


def _view(o: dict[str, Any]) -> Any:
    return object_version(o)


@pytest.mark.parametrize(("name", "old", "new", "expected"), CASES, ids=[c[0] for c in CASES])
def test_attribution_table(name: str, old: dict[str, Any], new: dict[str, Any],
                           expected: list[tuple[Any, ...]]) -> None:
    w = attribute(_view(old), _view(new), WIDGET)
    got = [(path_string(c.path), c.change, c.old, c.new, list(c.writers), list(c.owners), c.ambiguous is not None)
           for c in w.changes]
    assert got == expected
    for c in w.changes:
        assert (c.writer is None) == (c.ambiguous is not None or len(c.writers) != 1)


def test_changed_entries_rules() -> None:
    old = decode_entries([entry("a", "Apply", "", T0, ".spec.color"), entry("b", "Update", "", T0, ".spec.replicas"),
                          entry("c", "Update", "", T0, ".spec.args", ".spec.labels.x")])
    new = decode_entries([entry("a", "Apply", "", T0, ".spec.color"),  # unchanged
                          entry("b", "Update", "", T0, ".spec.replicas", ".spec.args"),  # grew, same time
                          entry("c", "Update", "", T0, ".spec.labels.x"),  # shrank: lost a field
                          entry("d", "Update", "", T0)])  # new
    assert [e.manager for e in changed_entries(old, new)] == ["b", "d"]


def test_apply_entry_moving_version_is_the_same_entry() -> None:
    old = decode_entries([entry("a", "Apply", "", T0, ".spec.color")])
    moved = dict(entry("a", "Apply", "", T0, ".spec.color"), apiVersion="example.com/v2")
    assert changed_entries(old, decode_entries([moved])) == []


def test_prefixes_keep_changes_below_them() -> None:
    old = obj({"color": "red", "replicas": 1}, [])
    new = obj({"color": "blue", "replicas": 2}, [entry("e", "Update", "", T1, ".spec.color", ".spec.replicas")], rv="2")
    w = attribute(_view(old), _view(new), WIDGET, prefixes=[parse_path(".spec.replicas")])
    assert [path_string(c.path) for c in w.changes] == [".spec.replicas"]
    assert w.writers == (W("e"),) and w.time == T1


def test_secret_values_are_redacted() -> None:
    old = obj(None, [], kind="Secret", api="v1", data={"password": "b2xk"})
    new = obj(None, [entry("e", "Update", "", T1, ".data.password")], rv="2", kind="Secret", api="v1",
              data={"password": "bmV3"})
    w = attribute(_view(old), _view(new), WIDGET)
    assert [(path_string(c.path), c.old, c.new) for c in w.changes] == [(".data.password", "<redacted>", "<redacted>")]
    shown = attribute(_view(old), _view(new), WIDGET, show_secret_values=True)
    assert [(c.old, c.new) for c in shown.changes] == [("b2xk", "bmV3")]


def test_quiet_writes() -> None:
    base = obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color")])
    status = dict(obj({"color": "red"}, [entry("a", "Apply", "", T0, ".spec.color"),
                                         entry("ctl", "Update", "status", T1, ".status.phase")], rv="2"),
                  status={"phase": "Ready"})
    assert attribute(_view(base), _view(status), WIDGET).quiet
    spec = obj({"color": "blue"}, [entry("a", "Apply", "", T1, ".spec.color")], rv="2")
    assert not attribute(_view(base), _view(spec), WIDGET).quiet
