"""cli/show.py below the command line: the view of an object that every output of show renders."""

from __future__ import annotations

from typing import Any

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.fieldpath import FieldSet, field, path_string
from kubectl_fieldown.ownership.managedfields import ManagedFieldsEntry


def _entries(*sets: tuple[str, list[tuple[Any, ...]]]) -> list[ManagedFieldsEntry]:
    return [ManagedFieldsEntry(m, "Apply", "v1", FieldSet(paths)) for m, paths in sets]


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
