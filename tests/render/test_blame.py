"""render/blame.py: which owner each YAML line of blame shows, and YAML scalars as blame prints them."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.ownership.managedfields import decode_entries
from kubectl_fieldown.render.blame import blame_lines, yaml_scalar
from kubectl_fieldown.render.styled import cell_len
from render.helpers import long_widget, render_object

DEPLOY_LIKE = yaml.safe_load("""
apiVersion: v1
kind: X
metadata:
  name: x
  managedFields:
  - manager: upd
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:items": {"k:{\\"name\\":\\"a\\"}": {".": {}}}}}
  - manager: app
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:items": {"k:{\\"name\\":\\"a\\"}": {"f:value": {}}}, "f:matrix": {}}}
spec:
  items:
  - name: a
    value: 1
  matrix:
  - [1, 2]
  - [3]
""")


def test_blame_item_line_falls_back_to_the_item_owner() -> None:
    entries = decode_entries(DEPLOY_LIKE["metadata"]["managedFields"])
    view = build_view(DEPLOY_LIKE, entries)
    lines = {line.text.strip(): line for line in blame_lines(view)}
    first = lines["- name: a"]
    assert [o.manager for o in first.owners] == ["upd"] and not first.inherited
    assert [o.manager for o in lines["value: 1"].owners] == ["app"]
    nested = [line for line in blame_lines(view) if line.text.strip() in ("-", "- 1", "- 2", "- 3")]
    assert nested and all(line.inherited and [o.manager for o in line.owners] == ["app"] for line in nested)


@pytest.mark.parametrize(
    ("value", "text"),
    [("plain", "plain"), ("5", '"5"'), ("yes", '"yes"'), ("a: b", '"a: b"'), ("- x", '"- x"'), ("", '""'),
     ("multi\nline", '"multi\\nline"'), ("nginx:1.25", "nginx:1.25"), (3, "3"), (1.5, "1.5"), (None, "null"),
     (True, "true"), ({}, "{}"), ([], "[]"), ("ünïcode", "ünïcode"), ("#comment", '"#comment"')],
)
def test_yaml_scalar(value: Any, text: str) -> None:
    assert yaml_scalar(value) == text
    assert yaml.safe_load(f"k: {text}")["k"] == value


@pytest.mark.parametrize("colour", [False, True])
def test_blame_keeps_its_gutter_on_long_values(monkeypatch: pytest.MonkeyPatch, colour: bool) -> None:
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    lines = render_object("blame", long_widget(), 80, colour)
    assert all(cell_len(line) <= 80 for line in lines), lines
    assert len({line.index("│") for line in lines}) == 1, "the owner column is the same width on every line"
    texts = {line.split("│ ", 1)[1].strip().split(":")[0]: line for line in lines}
    assert texts["long"].endswith("…")
    assert '"first line\\nsecond' in texts["multi"], "a multi-line string stays on its line"
    assert texts["size"].startswith("a-controller-with-a-rather-long-manager…"), "long owners cut in the column"
    assert len(lines) == len(render_object("blame", long_widget(), None, colour)), "one line per YAML line"


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
