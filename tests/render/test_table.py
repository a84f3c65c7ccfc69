"""render/table.py: long values and paths fitted to the width of a terminal."""

from __future__ import annotations

import re

from kubectl_fieldown.render.styled import cell_len
from render.helpers import LONG, long_widget, render_object


def test_table_cuts_owners_then_path_starts_on_a_narrow_terminal() -> None:
    lines = render_object("table", long_widget(), 60, False)
    assert all(cell_len(line) <= 60 for line in lines), lines
    assert re.split(r"\s{3,}", lines[1])[:2] == [".spec", "(created by kubectl-client-sid…"]
    deep = long_widget()
    deep["spec"] = {"a-rather-long-field-name": {"with-a-longer-field-name-below-it": {"and-another": 1}}}
    del deep["metadata"]["managedFields"][1:]
    deep["metadata"]["managedFields"][0]["fieldsV1"] = {"f:spec": {"f:a-rather-long-field-name": {
        "f:with-a-longer-field-name-below-it": {"f:and-another": {}}}}}
    (row,) = render_object("table", deep, 60, False)[1:]
    path = row.split("   ")[0]
    assert cell_len(row) <= 60 and path.startswith("…") and path.endswith("-below-it.and-another"), "paths keep ends"
    narrow = render_object("table", long_widget(), 40, False)
    assert len(narrow) == 5, "too narrow to fit: rows are as narrow as they go, never split by the tool"


def test_table_off_a_terminal_keeps_whole_lines() -> None:
    lines = render_object("table", long_widget(), None, False)
    long_row = next(line for line in lines if line.startswith(".spec.long"))
    assert long_row.endswith(LONG[:79] + "…"), "values cut at 80 characters as before"
