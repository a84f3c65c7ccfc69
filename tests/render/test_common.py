"""render/common.py: durations and times as kubectl prints them, manager colours (distinct in every
output, 16-colour terminals too), owner labels, values on one line, cells fitted to a width, control
characters escaped, and JSON/YAML writers that escape what the stream cannot carry."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

import pytest
import yaml

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.ownership.managedfields import ManagedFieldsEntry, decode_entries
from kubectl_fieldown.ownership.tree import Owner
from kubectl_fieldown.render.common import (
    ManagerColours,
    ObjectView,
    display_value,
    format_time,
    human_duration,
    owner_label,
    terminal_safe,
    unicode_ok,
    write_json,
    write_yaml,
)
from render.helpers import codes_per_owner


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "<invalid>"), (-0.5, "0s"), (0, "0s"), (59, "59s"), (119, "119s"), (120, "2m"), (125, "2m5s"),
     (600, "10m"), (179 * 60, "179m"), (3 * 3600, "3h"), (3 * 3600 + 20 * 60, "3h20m"), (8 * 3600, "8h"),
     (47 * 3600, "47h"), (48 * 3600, "2d"), (3 * 86400 + 5 * 3600, "3d5h"), (8 * 86400, "8d"),
     (400 * 86400, "400d"), (730 * 86400, "2y"), (800 * 86400, "2y70d"), (9 * 365 * 86400, "9y")],
)
def test_human_duration_matches_kubectl(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_format_time_modes() -> None:
    now = dt.datetime(2024, 6, 10, 9, 10, tzinfo=dt.timezone.utc)
    assert format_time("2024-06-10T09:05:00Z", "relative", now) == "5m"
    assert format_time("2024-06-10T09:05:00Z", "full", now) == "2024-06-10T09:05:00Z"
    assert format_time("2024-06-10T09:05:00Z", "none", now) == ""
    assert format_time(None, "relative", now) == "-"
    assert format_time("yesterday", "relative", now) == "yesterday"


def test_colours_are_stable_and_distinct() -> None:
    names = [f"manager-{i}" for i in range(12)]
    a, b = ManagerColours(), ManagerColours()
    a.assign(names)
    b.assign(list(reversed(names)))
    assert len({a.get(n) for n in names}) == 12, "distinct while the palette lasts"
    assert ManagerColours().get("helm") == ManagerColours().get("helm"), "same colour every run"
    assert a.get("manager-3") == a.get("manager-3")


def test_owner_label_qualifies_only_when_needed() -> None:
    def entry(manager: str, operation: str, api_version: str = "v1", subresource: str = "") -> dict[str, Any]:
        return {"manager": manager, "operation": operation, "apiVersion": api_version, "subresource": subresource,
                "fieldsType": "FieldsV1", "fieldsV1": {}}

    entries = decode_entries([
        entry("kubectl", "Apply"), entry("kubectl", "Update", subresource="scale"), entry("helm", "Update"),
        entry("ctl", "Update"), entry("ctl", "Update", "v2"), entry("kcm", "Update", subresource="status"),
    ])
    labels = [owner_label(e, entries) for e in entries]
    assert labels == ["kubectl (Apply)", "kubectl (Update, scale)", "helm", "ctl (v1)", "ctl (v2)", "kcm (status)"]
    assert owner_label(Owner("helm", "Update", "", "v1", 2), entries) == "helm"
    assert owner_label(Owner("nobody", "Apply", "", "v1", 9), entries) == "nobody"


class _CountedEntries(list[ManagedFieldsEntry]):
    """A list of entries that counts how often it is walked."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


@pytest.mark.parametrize("output", ["tree", "table", "blame"])
def test_labelling_owners_is_linear_in_the_entries(output: str) -> None:
    """3,000 identical managedFields entries (one YAML anchor, 21 KB) took 3-10 s to render: every
    owner label looked at every entry. The entries are now walked a fixed number of times."""
    from kubectl_fieldown.render.blame import render_blame
    from kubectl_fieldown.render.table import render_table
    from kubectl_fieldown.render.tree import render_tree

    raw = {"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    entries = _CountedEntries(decode_entries([raw] * 3000))
    view = build_view(obj, entries)
    assert len(view.fields) == 2 and len(view.fields[0].owners) == 3000
    view.entries = entries
    _CountedEntries.walks = 0
    out = io.StringIO()
    {"tree": render_tree, "table": render_table, "blame": render_blame}[output]([view], out)
    assert out.getvalue().count("m") >= 2
    assert _CountedEntries.walks <= 5


def test_display_value() -> None:
    assert display_value("web") == "web"
    assert display_value("5") == '"5"'
    assert display_value("true") == '"true"'
    assert display_value("") == '""'
    assert display_value(" padded") == '" padded"'
    assert display_value(5) == "5" and display_value(None) == "null" and display_value(False) == "false"
    assert display_value({"a": [1, 2]}) == '{"a":[1,2]}'
    assert display_value("x" * 100, limit=10) == "x" * 9 + "…"
    assert display_value("line1\nline2") == '"line1\\nline2"'


def _many_managers_view(n: int) -> ObjectView:
    raw = [{"manager": f"manager-{i}", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {f"f:k{i}": {}}}} for i in range(n)]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
           "data": {f"k{i}": str(i) for i in range(n)}}
    return build_view(obj, decode_entries(raw))


@pytest.mark.parametrize("color_system", ["standard", "256", "truecolor"])
@pytest.mark.parametrize("output", ["tree", "table", "blame"])
def test_managers_keep_distinct_colours(color_system: str, output: str) -> None:
    from rich.console import Console

    from kubectl_fieldown.render.blame import blame_lines, owner_cell
    from kubectl_fieldown.render.table import table_rows
    from kubectl_fieldown.render.tree import legend, object_tree

    n = ManagerColours.distinct()
    assert n >= 16
    view = _many_managers_view(n)
    buf = io.StringIO()
    console = Console(file=buf, color_system=color_system, force_terminal=True, width=200,  # type: ignore[arg-type]
                      highlight=False, markup=False, emoji=False)
    colours = ManagerColours()
    colours.assign([e.manager for e in view.entries])
    if output == "tree":
        lines = object_tree(view, colours) + legend(view, colours, time_mode="none")
    elif output == "table":
        lines = [r[1] for r in table_rows(view, colours)]
    else:
        lines = [owner_cell(line, view, colours) for line in blame_lines(view) if line.owners]
    for line in lines:
        console.print(line, soft_wrap=True)
    codes = codes_per_owner(buf.getvalue(), [e.manager for e in view.entries])
    assert len(set(codes.values())) == n, "every manager printed its own way"
    colour_codes = {c for params in codes.values() for c in params if c not in ("1", "4")}
    if color_system == "standard":
        assert colour_codes <= {str(c) for c in (*range(30, 38), *range(90, 98))}, "16-colour codes only"


def test_colours_follow_first_appearance_in_the_object() -> None:
    colours = ManagerColours()
    colours.assign(["helm", "kubectl", "helm", "argocd"])
    assert [colours.get(m) for m in ("helm", "kubectl", "argocd")] == list(ManagerColours.PALETTE[:3])
    assert colours.get("late") == ManagerColours.PALETTE[3]


def test_fit_cells_counts_terminal_cells() -> None:
    from kubectl_fieldown.render import styled
    from kubectl_fieldown.render.common import fit_cells

    line = styled.Text("abc")
    line.append("defgh", style="red")
    assert [fit_cells(line, w).plain for w in (1, 4, 8)] == ["…", "abc…", "abcdefgh"]
    assert fit_cells(line, 4, keep_end=True).plain == "…fgh"
    # the styles stay on what is left of the text they were given to
    assert [(s.start, s.end, str(s.style)) for s in fit_cells(line, 5).__rich__().spans] == [(3, 4, "red")]
    wide = fit_cells(styled.Text("日本語テキスト"), 6)
    assert (wide.plain, wide.cell_len) == ("日本…", 5), "a wide character is not split"


def test_terminal_safe() -> None:
    assert terminal_safe("plain é ✓") == "plain é ✓"
    assert terminal_safe("\x00\x1b\x7f\x80\x9f\xa0") == "\\u0000\\u001b\\u007f\\u0080\\u009f\xa0"


def test_writers_escape_what_the_stream_cannot_carry() -> None:
    doc = {"name": "café ✓ \x9b", "list": ["ü"]}
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert not unicode_ok(ascii_out) and unicode_ok(io.StringIO())
    assert unicode_ok(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    for write, load in ((write_json, json.loads), (write_yaml, yaml.safe_load)):
        out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        write(doc, out)  # no UnicodeEncodeError
        out.flush()
        assert load(out.buffer.getvalue().decode("ascii")) == doc  # type: ignore[attr-defined]
        text = io.StringIO()
        write(doc, text)
        assert "café ✓" in text.getvalue() and load(text.getvalue()) == doc
