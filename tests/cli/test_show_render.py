"""The pieces of ``show`` below the CLI: render helpers, unowned leaves, blame attribution."""

from __future__ import annotations

import copy
import datetime as dt
import io
from typing import Any

import pytest
import yaml

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.fieldpath import FieldSet, field, key, path_string, set_value
from kubectl_fieldown.fieldpath.element import index
from kubectl_fieldown.managedfields import ManagedFieldsEntry, decode_entries
from kubectl_fieldown.ownership import Owner, item_elements, unowned_leaves
from kubectl_fieldown.render.blame import blame_lines, yaml_scalar
from kubectl_fieldown.render.common import (
    REDACTED,
    ManagerColours,
    display_value,
    format_time,
    human_duration,
    owner_label,
    redact_secret,
)


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


def test_redact_secret_copies_and_keeps_keys() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "data": {"a": "c2VjcmV0", "b": None}, "stringData": {"c": "x"},
              "metadata": {"name": "s", "annotations": {
                  "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"a":"c2VjcmV0"}}', "other": "keep"}}}
    before = copy.deepcopy(secret)
    out = redact_secret(secret)
    assert secret == before, "the input is not modified"
    assert out["data"] == {"a": REDACTED, "b": None}
    assert out["stringData"] == {"c": REDACTED}
    assert out["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": REDACTED,
                                              "other": "keep"}
    cm = {"kind": "ConfigMap", "data": {"a": "b"}}
    assert redact_secret(cm) is cm


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


def test_item_elements_from_owned_set() -> None:
    items = [{"name": "a", "port": 80}, {"name": "b"}, "stray"]
    owned = FieldSet([(key({"name": "a"}),)])
    assert item_elements(items, owned) == [key({"name": "a"}), key({"name": "b"}), index(2)]
    two_keys = FieldSet([(key({"port": 80, "protocol": "TCP"}),)])
    assert item_elements([{"port": 80, "protocol": "TCP"}], two_keys) == [key({"port": 80, "protocol": "TCP"})]
    assert item_elements(["x", "y"], FieldSet([(set_value("x"),)])) == [set_value("x"), set_value("y")]
    assert item_elements(["x", "y"], FieldSet()) == [index(0), index(1)]


def _entries(*sets: tuple[str, list[tuple[Any, ...]]]) -> list[ManagedFieldsEntry]:
    return [ManagedFieldsEntry(m, "Apply", "v1", FieldSet(paths)) for m, paths in sets]


def test_unowned_leaves_lists_maps_and_atomic_nodes() -> None:
    obj = {
        "apiVersion": "v1", "kind": "X", "metadata": {"name": "x", "uid": "u", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "finalizers": ["f1", "f2"],
            "containers": [{"name": "c1", "image": "i", "pull": "Always"}, {"name": "c2", "image": "j"}],
            "args": ["--x"],
            "selector": {"matchLabels": {"k": "v"}},
            "empty": {},
            "nothing": None,
        },
    }
    s, c = field("spec"), field("containers")
    owned = FieldSet([
        (field("metadata"), field("labels"), field("a")),
        (s, field("finalizers"), set_value("f1")),
        (s, c, key({"name": "c1"})), (s, c, key({"name": "c1"}), field("image")),
        (s, field("selector")),
    ])
    got = {path_string(f.path): f.value for f in unowned_leaves(obj, owned)}
    assert got == {
        ".metadata.labels.b": "2",
        '.spec.finalizers[="f2"]': "f2",
        '.spec.containers[name="c1"].name': "c1",
        '.spec.containers[name="c1"].pull': "Always",
        '.spec.containers[name="c2"].name': "c2",
        '.spec.containers[name="c2"].image': "j",
        ".spec.args": ["--x"],  # nobody owns any part of it: one leaf
        ".spec.empty": {},
        ".spec.nothing": None,
    }
    assert all(not f.owners for f in unowned_leaves(obj, owned))


def test_build_view_filters_and_unowned_in_canonical_order() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"},
           "data": {"b": "2", "a": "1", "c": "3"}}
    entries = _entries(("alice", [(field("data"), field("c"))]), ("bob", [(field("data"), field("a"))]))
    view = build_view(obj, entries, show_unowned=True)
    assert [(path_string(f.path), [o.manager for o in f.owners]) for f in view.fields] == [
        (".data.a", ["bob"]), (".data.b", []), (".data.c", ["alice"])]
    assert (view.namespace, view.name, view.kind, view.title) == ("n", "c", "ConfigMap", "ConfigMap n/c")
    only_bob = build_view(obj, entries, managers=["bo*"], show_unowned=True)
    assert [path_string(f.path) for f in only_bob.fields] == [".data.a"]
    assert len(only_bob.entries) == 2


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
