"""The text lines and JSON documents of ``watch`` (render/watch.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.base.objects import ObjectRef
from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.fieldpath.lookup import MISSING
from kubectl_fieldown.render.watch import (
    Tally,
    change_document,
    change_line,
    lifecycle_document,
    lifecycle_line,
    summary_document,
    summary_lines,
)
from kubectl_fieldown.watch.attribution import ADDED, CREATED, DELETED, MODIFIED, FieldChange, Lifecycle, Write, Writer

REF = ObjectRef("example.com/v1", "Widget", "ns", "w")
A = Writer("a", "Update")
B = Writer("b", "Apply")
S = Writer("kubectl", "Update", "scale")
P = parse_path(".spec.color")


def write(c: FieldChange, time: str | None = "2026-01-01T00:00:00Z") -> Write:
    return Write(REF, "7", (c,), c.writers, time)


LINES: list[tuple[str, FieldChange, str | None, str]] = [
    ("one writer", FieldChange(P, MODIFIED, "red", "blue", (A,), (A,)), "2026-01-01T00:00:00Z",
     '2026-01-01T00:00:00Z  widget.example.com/w -n ns  .spec.color: "red" → "blue"  by a (Update)'),
    ("co-owned", FieldChange(P, MODIFIED, 1, 2, (B,), (A, B)), "2026-01-01T00:00:00Z",
     "2026-01-01T00:00:00Z  widget.example.com/w -n ns  .spec.color: 1 → 2  by b (Apply); co-owned with a (Update)"),
    ("ambiguous", FieldChange(P, MODIFIED, 1, 2, (A, B), (A, B), "2 changed managedFields entries own it"), None,
     "OBS  widget.example.com/w -n ns  .spec.color: 1 → 2  by a (Update) or b (Apply) "
     "(ambiguous: 2 changed managedFields entries own it)"),
    ("unknown, added, subresource, no entry time", FieldChange(P, ADDED, MISSING, {"x": [1]}, (), (S,), "why"), None,
     'OBS  widget.example.com/w -n ns  .spec.color: (absent) → {"x":[1]}  by an unknown writer (why); '
     "co-owned with kubectl (Update, /scale)"),
    ("long values are cut, control characters escaped", FieldChange(P, MODIFIED, "x" * 100, "a\x1bb", (A,), (A,)),
     "T", 'T  widget.example.com/w -n ns  .spec.color: "' + "x" * 58 + '… → "a\\u001bb"  by a (Update)'),
]


@pytest.mark.parametrize(("name", "change", "time", "line"), LINES, ids=[x[0] for x in LINES])
def test_change_lines(name: str, change: FieldChange, time: str | None, line: str) -> None:
    assert change_line(write(change, time), change, False, "OBS") == line


def test_relisted_changes_say_so() -> None:
    c = FieldChange(P, MODIFIED, 1, 2, (A,), (A,))
    assert change_line(write(c), c, True, "OBS").endswith("[relisted: several writes seen as one]")
    assert change_document(write(c), c, True, "OBS")["coalesced"] is True


def test_change_document_leaves_absent_values_out() -> None:
    c = FieldChange(P, ADDED, MISSING, "v", (S,), (S,))
    doc: dict[str, Any] = change_document(write(c), c, False, "OBS")
    assert doc == {"kind": "FieldownChange", "version": 1, "time": "2026-01-01T00:00:00Z", "observed": "OBS",
                   "object": {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "namespace": "ns"},
                   "resourceVersion": "7", "path": ".spec.color", "change": "added", "new": "v",
                   "writers": [{"manager": "kubectl", "operation": "Update", "subresource": "scale"}],
                   "owners": [{"manager": "kubectl", "operation": "Update", "subresource": "scale"}],
                   "ambiguous": None, "coalesced": False}


def test_summary_counts_per_writer_with_unknown_last() -> None:
    t = Tally()
    t.count(write(FieldChange(P, MODIFIED, 1, 2, (), (), "why")))
    t.count(write(FieldChange(P, MODIFIED, 2, 3, (A,), (A,))))
    t.count(write(FieldChange(P, MODIFIED, 3, 4, (A,), (A,))))
    t.count(Write(REF, "9", (), (A,), None))  # a write without a change
    doc = summary_document(t, [], [], interrupted=True, failed=None)
    assert (doc["writes"], doc["changes"], doc["objects"], doc["interrupted"]) == (4, 3, 1, True)
    assert [(b["writer"], b["changes"]) for b in doc["byWriter"]] == [({"manager": "a", "operation": "Update"}, 2),
                                                                       (None, 1)]
    lines = summary_lines(t, [], [], interrupted=True)
    assert lines[1] == "Summary (interrupted): 3 field changes in 4 writes of 1 object"
    assert lines[2] == "  a (Update): 2 changes: widget.example.com/w -n ns .spec.color (2×)"
    assert lines[3] == "  ambiguous or unknown writers: 1 change: widget.example.com/w -n ns .spec.color (1×)"
    assert lines[4] == "Fights: none"


def test_summary_text_shows_the_ten_most_changed_fields_per_writer() -> None:
    t = Tally()
    for i in range(12):
        for _ in range(i + 1):
            t.count(write(FieldChange(parse_path(f".spec.f{i:02d}"), MODIFIED, 1, 2, (A,), (A,))))
    line = summary_lines(t, [], [], interrupted=False)[2]
    assert line.startswith("  a (Update): 78 changes: widget.example.com/w -n ns .spec.f11 (12×), ")
    assert line.endswith(".spec.f02 (3×) and 2 more fields (-o json lists them all)")
    assert len(summary_document(t, [], [], interrupted=False, failed=None)["byWriter"][0]["fields"]) == 12


def test_created_and_deleted_objects() -> None:
    made = Lifecycle(REF, CREATED, "7", (A, B), "2026-01-01T00:00:00Z")
    gone = Lifecycle(REF, DELETED, "9", (), None)
    assert lifecycle_line(made, False, "OBS") == \
        "2026-01-01T00:00:00Z  widget.example.com/w -n ns  created by a (Update), b (Apply)"
    assert lifecycle_line(gone, False, "OBS") == "OBS  widget.example.com/w -n ns  deleted"
    assert lifecycle_line(gone, True, "OBS").endswith("deleted [relisted: deleted while the watch was away]")
    assert lifecycle_document(made, True, "OBS") == {
        "kind": "FieldownObject", "version": 1, "event": "created", "time": "2026-01-01T00:00:00Z",
        "observed": "OBS", "object": {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "namespace": "ns"},
        "resourceVersion": "7", "writers": [{"manager": "a", "operation": "Update"},
                                             {"manager": "b", "operation": "Apply"}], "coalesced": True}
    t = Tally()
    t.count_lifecycle(made)
    t.count_lifecycle(gone)
    t.count_lifecycle(made)
    doc = summary_document(t, [], [], interrupted=False, failed=None)
    assert (doc["created"], doc["deleted"], doc["changes"], doc["writes"]) == (2, 1, 0, 0)
    assert "Objects created: 2, deleted: 1" in summary_lines(t, [], [], interrupted=False)
    assert not any(line.startswith("Objects created") for line in summary_lines(Tally(), [], [], interrupted=False))
