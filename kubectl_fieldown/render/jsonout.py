"""``-o json`` / ``-o yaml``: the machine-readable contract of ``show`` (docs/show.md).

Scripts and acceptance checks depend on these exact keys; add nothing here without a version bump
of the contract::

    {"apiVersion": "fieldown.dev/v1", "kind": "FieldownShow", "version": 1,   (docs/output.md)
     "items": [{"apiVersion", "kind", "namespace", "name",
                "managers": [{"manager", "operation", "apiVersion", "subresource", "time", "fieldCount"}],
                "fields": [{"path", "owners": [{"manager", "operation", "subresource"}], "value"?}]}]}

``value`` is left out (not null) when the path is not set in the object: null is a real value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from ..fieldpath import path_string
from ..fieldpath.lookup import MISSING
from ..ownership.tree import OwnedField
from .common import ObjectView, write_json, write_yaml
from .envelope import envelope

__all__ = ["render_json", "render_yaml", "to_document", "view_to_dict"]


def _field_dict(f: OwnedField) -> dict[str, Any]:
    d: dict[str, Any] = {
        "path": path_string(f.path),
        "owners": [{"manager": o.manager, "operation": o.operation, "subresource": o.subresource} for o in f.owners],
    }
    if f.value is not MISSING:
        d["value"] = f.value
    return d


def view_to_dict(view: ObjectView) -> dict[str, Any]:
    return {
        "apiVersion": view.api_version,
        "kind": view.kind,
        "namespace": view.namespace,
        "name": view.name,
        "managers": [
            {
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "subresource": e.subresource,
                "time": e.time,
                "fieldCount": len(e.fields),
            }
            for e in view.entries
        ],
        "fields": [_field_dict(f) for f in view.fields],
    }


def to_document(views: Sequence[ObjectView]) -> dict[str, Any]:
    return envelope("FieldownShow", {"items": [view_to_dict(v) for v in views]})


def render_json(views: Sequence[ObjectView], out: TextIO) -> None:
    write_json(to_document(views), out)


def render_yaml(views: Sequence[ObjectView], out: TextIO) -> None:
    write_yaml(to_document(views), out)
