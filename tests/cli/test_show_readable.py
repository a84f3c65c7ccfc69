"""Human output of ``show`` that a person reads (issue 11): what is dim and what is coloured, colours
that stay apart in 16-colour terminals, long values fitted to the terminal, one table for many
objects, and ownership of a map or list item itself told apart from ownership of all of it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from render.helpers import LONG, SGR, codes_per_owner, long_widget, render_object, styled_runs

from kubectl_fieldown.render.styled import cell_len

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
SECRET = REPO / "examples" / "secret.yaml"


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    yield


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


def test_example_managers_distinct_in_16_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    """The complaint: kubectl-edit and kubectl's scale entry were the same bright green."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm")  # rich picks the 16-colour system for it
    monkeypatch.delenv("COLORTERM", raising=False)
    out = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    assert "\x1b[38;5;" not in out and "\x1b[38;2;" not in out
    managers = ["argocd-controller", "kubectl (Apply)", "handover-to-hpa", "helm", "kubectl-client-side-apply",
                "kubectl-label", "kubectl-edit", "kube-controller-manager"]
    codes = codes_per_owner(out, [*managers, "kubectl (Update, scale)", "kube-controller-manager (status)"])
    assert len({codes[m] for m in managers}) == len(managers)
    assert codes["kubectl (Update, scale)"] == codes["kubectl (Apply)"], "one colour per manager name"


# --- 3. long values at the width of a terminal ----------------------------------------------------------


@pytest.mark.parametrize("colour", [False, True])
def test_table_fits_long_values_to_the_terminal(monkeypatch: pytest.MonkeyPatch, colour: bool) -> None:
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    lines = render_object("table", long_widget(), 80, colour)
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


