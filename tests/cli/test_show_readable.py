"""Human output of ``show`` that a person reads (issue 11): what is dim and what is coloured, colours
that stay apart in 16-colour terminals, long values fitted to the terminal, one table for many
objects, and ownership of a map or list item itself told apart from ownership of all of it."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.managedfields import decode_entries
from kubectl_fieldown.render.common import ManagerColours, ObjectView
from kubectl_fieldown.render.styled import cell_len

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
SECRET = REPO / "examples" / "secret.yaml"
SGR = re.compile(r"\x1b\[([0-9;]*)m")


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    yield


def styled_runs(line: str) -> list[tuple[frozenset[str], str]]:
    """A line of rich's output as (SGR parameters, text) runs; rich resets after every styled run."""
    runs: list[tuple[frozenset[str], str]] = []
    params: frozenset[str] = frozenset()
    pos = 0
    for m in SGR.finditer(line):
        if m.start() > pos:
            runs.append((params, line[pos:m.start()]))
        codes = frozenset(c for c in m.group(1).split(";") if c)
        params = frozenset() if codes <= {"0"} else params | codes
        pos = m.end()
    if pos < len(line):
        runs.append((params, line[pos:]))
    return runs


# --- 1. only the guides are dim ----------------------------------------------------------------------


def test_tree_dims_only_the_guides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    tree_lines = [line for line in out.splitlines() if "── " in SGR.sub("", line)]
    assert len(tree_lines) > 50
    for line in tree_lines:
        (guide_params, guide), (label_params, label), *_ = styled_runs(line)
        assert set(guide) <= set("│├└─ ") and "2" in guide_params, f"guides dim: {line!r}"
        assert label.strip() and "2" not in label_params, f"{label!r} must not be dim in {line!r}"
    image = next(line for line in tree_lines if "image: registry.example.com" in line)
    runs = {text: params for params, text in styled_runs(image)}
    assert runs["image: registry.example.com/shop/web:1.8.2"] == frozenset(), "field and value in normal weight"
    assert "2" not in runs["kubectl-edit"] and runs["kubectl-edit"] - {"1"}, "owners coloured, not dim"


# --- 2. colours that stay apart in 16-colour terminals -------------------------------------------


def _many_managers_view(n: int) -> ObjectView:
    raw = [{"manager": f"manager-{i}", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {f"f:k{i}": {}}}} for i in range(n)]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
           "data": {f"k{i}": str(i) for i in range(n)}}
    return build_view(obj, decode_entries(raw))


def _codes_per_owner(text: str, owners: list[str]) -> dict[str, frozenset[str]]:
    """The SGR parameters each owner label is printed with (each must be printed one way)."""
    seen: dict[str, set[frozenset[str]]] = {}
    for line in text.splitlines():
        for params, run_text in styled_runs(line):
            if run_text in owners:
                seen.setdefault(run_text, set()).add(params)
    assert set(seen) == set(owners)
    assert all(len(p) == 1 for p in seen.values()), seen
    return {o: next(iter(p)) for o, p in seen.items()}


@pytest.mark.parametrize("color_system", ["standard", "256", "truecolor"])
@pytest.mark.parametrize("output", ["tree", "table", "blame"])
def test_managers_keep_distinct_colours(color_system: str, output: str) -> None:
    from rich.console import Console

    from kubectl_fieldown.render import styled
    from kubectl_fieldown.render.blame import blame_lines, owner_cell
    from kubectl_fieldown.render.table import table_rows
    from kubectl_fieldown.render.tree import legend, object_tree

    n = ManagerColours.distinct()
    assert n >= 16
    view = _many_managers_view(n)
    styled.use_plain(False)
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
    codes = _codes_per_owner(buf.getvalue(), [e.manager for e in view.entries])
    assert len(set(codes.values())) == n, "every manager printed its own way"
    colour_codes = {c for params in codes.values() for c in params if c not in ("1", "4")}
    if color_system == "standard":
        assert colour_codes <= {str(c) for c in (*range(30, 38), *range(90, 98))}, "16-colour codes only"


def test_colours_follow_first_appearance_in_the_object() -> None:
    colours = ManagerColours()
    colours.assign(["helm", "kubectl", "helm", "argocd"])
    assert [colours.get(m) for m in ("helm", "kubectl", "argocd")] == list(ManagerColours.PALETTE[:3])
    assert colours.get("late") == ManagerColours.PALETTE[3]


def test_example_managers_distinct_in_16_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    """The complaint: kubectl-edit and kubectl's scale entry were the same bright green."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm")  # rich picks the 16-colour system for it
    monkeypatch.delenv("COLORTERM", raising=False)
    out = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    assert "\x1b[38;5;" not in out and "\x1b[38;2;" not in out
    managers = ["argocd-controller", "kubectl (Apply)", "handover-to-hpa", "helm", "kubectl-client-side-apply",
                "kubectl-label", "kubectl-edit", "kube-controller-manager"]
    codes = _codes_per_owner(out, [*managers, "kubectl (Update, scale)", "kube-controller-manager (status)"])
    assert len({codes[m] for m in managers}) == len(managers)
    assert codes["kubectl (Update, scale)"] == codes["kubectl (Apply)"], "one colour per manager name"


# --- 3. long values at the width of a terminal ----------------------------------------------------------

LONG = "".join("abcdefghij"[i % 10] for i in range(500))
MULTI = "first line\nsecond line\nthird line\n"


def long_widget() -> dict[str, Any]:
    fields_v1 = {"f:spec": {".": {}, "f:long": {}, "f:multi": {}}}
    return {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "long", "namespace": "shop", "managedFields": [
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "example.com/v1",
             "time": "2024-06-10T09:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields_v1},
            {"manager": "a-controller-with-a-rather-long-manager-name", "operation": "Apply",
             "apiVersion": "example.com/v1", "time": "2024-06-10T09:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:size": {}}}}]},
        "spec": {"long": LONG, "multi": MULTI, "size": 3},
    }


def _render(output: str, obj: dict[str, Any], width: int | None, colour: bool) -> list[str]:
    from kubectl_fieldown.render.blame import render_blame
    from kubectl_fieldown.render.table import render_table

    view = build_view(obj, decode_entries(obj["metadata"]["managedFields"]))
    buf = io.StringIO()
    if output == "table":
        render_table([view], buf, width=width)
    else:
        render_blame([view], buf, width=width, time_mode="none")
    return SGR.sub("", buf.getvalue()).splitlines()


@pytest.mark.parametrize("colour", [False, True])
def test_table_fits_long_values_to_the_terminal(monkeypatch: pytest.MonkeyPatch, colour: bool) -> None:
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    lines = _render("table", long_widget(), 80, colour)
    assert len(lines) == 5, "a header and one line per row"
    assert all(cell_len(line) <= 80 for line in lines), lines
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows[".spec.long"].endswith("…") and "abcdefghij" in rows[".spec.long"]
    assert rows[".spec.multi"].startswith(".spec.multi") and '"first line\\nsecon' in rows[".spec.multi"]
    assert rows[".spec.size"].endswith("   3"), "a short value is whole"
    assert "a-controller-with-a-rather-long-manager-name" in rows[".spec.size"], "owners are cut last"
    value_column = lines[0].index("VALUE")
    assert all(line[value_column - 3:value_column] == "   " for line in lines[1:]), "columns stay columns"
    whole = run("show", "-i", "-", "-o", "json", stdin=json.dumps(long_widget())).item()["fields"]
    assert {f["path"]: f["value"] for f in whole}[".spec.long"] == LONG, "-o json has the whole value"


def test_table_cuts_owners_then_path_starts_on_a_narrow_terminal() -> None:
    lines = _render("table", long_widget(), 60, False)
    assert all(cell_len(line) <= 60 for line in lines), lines
    assert re.split(r"\s{3,}", lines[1])[:2] == [".spec", "(created by kubectl-client-sid…"]
    deep = long_widget()
    deep["spec"] = {"a-rather-long-field-name": {"with-a-longer-field-name-below-it": {"and-another": 1}}}
    del deep["metadata"]["managedFields"][1:]
    deep["metadata"]["managedFields"][0]["fieldsV1"] = {"f:spec": {"f:a-rather-long-field-name": {
        "f:with-a-longer-field-name-below-it": {"f:and-another": {}}}}}
    (row,) = _render("table", deep, 60, False)[1:]
    path = row.split("   ")[0]
    assert cell_len(row) <= 60 and path.startswith("…") and path.endswith("-below-it.and-another"), "paths keep ends"
    narrow = _render("table", long_widget(), 40, False)
    assert len(narrow) == 5, "too narrow to fit: rows are as narrow as they go, never split by the tool"


def test_table_off_a_terminal_keeps_whole_lines() -> None:
    lines = _render("table", long_widget(), None, False)
    long_row = next(line for line in lines if line.startswith(".spec.long"))
    assert long_row.endswith(LONG[:79] + "…"), "values cut at 80 characters as before"


@pytest.mark.parametrize("colour", [False, True])
def test_blame_keeps_its_gutter_on_long_values(monkeypatch: pytest.MonkeyPatch, colour: bool) -> None:
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    lines = _render("blame", long_widget(), 80, colour)
    assert all(cell_len(line) <= 80 for line in lines), lines
    assert len({line.index("│") for line in lines}) == 1, "the owner column is the same width on every line"
    texts = {line.split("│ ", 1)[1].strip().split(":")[0]: line for line in lines}
    assert texts["long"].endswith("…")
    assert '"first line\\nsecond' in texts["multi"], "a multi-line string stays on its line"
    assert texts["size"].startswith("a-controller-with-a-rather-long-manager…"), "long owners cut in the column"
    assert len(lines) == len(_render("blame", long_widget(), None, colour)), "one line per YAML line"


def _on_a_terminal(columns: int, *args: str) -> str:
    """``kubectl-fieldown ARGS`` with its stdout on a pseudo-terminal ``columns`` wide."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_fieldown", *args], stdout=slave,
                            stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    return SGR.sub("", out.decode().replace("\r\n", "\n"))


@pytest.mark.parametrize("output", ["table", "blame"])
def test_a_terminal_is_fitted(tmp_path: Path, output: str) -> None:
    path = tmp_path / "widget.json"
    path.write_text(json.dumps(long_widget()))
    lines = _on_a_terminal(80, "show", "-i", str(path), "-o", output).splitlines()
    assert lines and all(cell_len(line) <= 80 for line in lines), lines
    assert any(line.endswith("…") for line in lines)


# --- 4. several objects: one table ------------------------------------------------------------------


def _widget(name: str, namespace: str, size: int, kind: str = "Widget") -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "managedFields": [
                {"manager": f"owner-of-{name}", "operation": "Apply", "apiVersion": "example.com/v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:size": {}}}}]},
            "spec": {"size": size}}


def test_several_objects_make_one_table() -> None:
    bare = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bare", "namespace": "c"}}
    docs = [_widget("a", "shop", 1), _widget("b", "tools", 2), bare]
    r = run("show", "-i", "-", "-o", "table", stdin="\n---\n".join(json.dumps(d) for d in docs))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert [re.split(r"\s{3,}", line) for line in lines] == [
        ["NAMESPACE", "NAME", "PATH", "OWNERS", "VALUE"],
        ["shop", "a", ".spec.size", "owner-of-a", "1"],
        ["tools", "b", ".spec.size", "owner-of-b", "2"],
        ["c", "bare", "-", "(no managedFields)"],
    ]
    assert len({line.index(".spec.size") for line in lines[1:3]}) == 1, "one set of columns"


def test_several_kinds_name_their_kind_and_one_object_keeps_its_table() -> None:
    docs = [_widget("a", "shop", 1), _widget("a", "shop", 2, kind="Gadget")]
    r = run("show", "-i", "-", "-o", "table", stdin="\n---\n".join(json.dumps(d) for d in docs))
    assert [re.split(r"\s{3,}", line)[:2] for line in r.out.splitlines()[1:]] == [["shop", "Widget/a"],
                                                                                  ["shop", "Gadget/a"]]
    one = run("show", "-i", "-", "-o", "table", stdin=json.dumps(_widget("a", "shop", 1))).out.splitlines()
    assert [re.split(r"\s{3,}", line) for line in one] == [["PATH", "OWNERS", "VALUE"],
                                                           [".spec.size", "owner-of-a", "1"]]


# --- 5. a map or list item owned as such ---------------------------------------------------------------


@pytest.mark.parametrize("output", ["tree", "table", "blame"])
def test_created_maps_are_told_from_owned_ones(output: str) -> None:
    out = run("show", "-i", str(SECRET), "-o", output, "--time", "none").out
    created = "(created by kubectl-client-side-apply)"
    if output == "tree":
        assert "├── data  " + created in out and "│   └── labels  " + created in out
        assert "← kubectl-client-side-apply\n" in out, "its keys are owned as before"
    elif output == "table":
        assert re.search(r"^\.data\s+" + re.escape(created) + r"\s+\{", out, re.M)
        assert re.search(r"^\.data\.password\s+kubectl-client-side-apply\s+<redacted>$", out, re.M)
    else:
        assert re.search(r"^" + re.escape(created) + r"\s+│ data:$", out, re.M)
        assert re.search(r"^kubectl-client-side-apply\s+│   password: <redacted>$", out, re.M)
    assert out.count(created) == 3, "data, annotations and labels"


def test_an_atomic_value_is_still_owned_whole_and_json_is_unchanged() -> None:
    tree = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    assert "selector: {\"matchLabels\":{\"app\":\"web\"}}  ← argocd-controller" in tree
    assert "└── [name=\"web\"]  (created by argocd-controller, kubectl (Apply))" in tree
    fields = {f["path"]: f for f in run("show", "-i", str(SECRET), "-o", "json").item()["fields"]}
    assert fields[".data"]["owners"] == [{"manager": "kubectl-client-side-apply", "operation": "Update",
                                          "subresource": ""}]
    assert set(fields[".data"]) == {"path", "owners", "value"}


def test_blame_item_line_owned_by_its_creator() -> None:
    from kubectl_fieldown.render.blame import blame_lines, owner_text

    obj = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}, "spec": {"items": [{"name": "a", "v": 1}]}}
    raw = [{"manager": "upd", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:items": {'k:{"name":"a"}': {".": {}}}}}},
           {"manager": "app", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:items": {'k:{"name":"a"}': {"f:v": {}}}}}}]
    view = build_view(obj, decode_entries(raw))
    labels = {line.text.strip(): owner_text(line, view) for line in blame_lines(view)}
    assert labels["- name: a"] == "(created by upd)"
    assert labels["v: 1"] == "app"


@pytest.mark.parametrize("plain", [True, False])
def test_fit_cells_counts_terminal_cells(plain: bool) -> None:
    from kubectl_fieldown.render import styled
    from kubectl_fieldown.render.common import fit_cells

    styled.use_plain(plain)
    text = styled.Text("abc")
    text.append("defgh", style="red")
    assert [fit_cells(text, w).plain for w in (1, 4, 8)] == ["…", "abc…", "abcdefgh"]
    assert fit_cells(text, 4, keep_end=True).plain == "…fgh"
    wide = fit_cells(styled.Text("日本語テキスト"), 6)
    assert (wide.plain, wide.cell_len) == ("日本…", 5), "a wide character is not split"
