"""Hiding a Secret's values wherever the tool prints them: one rule, one placeholder.

What is a Secret is :func:`kubectl_fieldown.objects.is_secret` (the core ``v1`` Secret only). Its
``data`` and ``stringData`` values and its last-applied annotation (which holds the data in clear)
become ``<redacted>``. Keys stay visible: they are what ownership is about, and FieldsV1 shows them
anyway. Pure: callers decide whether the user asked to see the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .fieldpath import FIELD, Path
from .managedfields import LAST_APPLIED_ANNOTATION
from .objects import is_secret_object

__all__ = [
    "LAST_APPLIED_POINTER",
    "REDACTED",
    "SECRET_SECTIONS",
    "is_secret_value_path",
    "redact_patch_op",
    "redact_request_body",
    "redact_secret",
]

REDACTED = "<redacted>"
SECRET_SECTIONS = ("data", "stringData")
LAST_APPLIED_POINTER = "/metadata/annotations/" + LAST_APPLIED_ANNOTATION.replace("~", "~0").replace("/", "~1")
"""The JSON pointer of the last-applied annotation, as a JSON patch names it."""


def _redact_last_applied(annotations: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (REDACTED if k == LAST_APPLIED_ANNOTATION else v) for k, v in annotations.items()}


def redact_secret(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """A copy of a Secret with every ``data``/``stringData`` value and the last-applied annotation
    replaced by ``<redacted>`` (a null value stays null: it says the key is being removed, not what
    it held); any other object is returned as is, keys in their order."""
    if not is_secret_object(obj):
        return obj
    out = dict(obj)
    for section in SECRET_SECTIONS:
        v = out.get(section)
        if isinstance(v, Mapping):
            out[section] = {k: (None if x is None else REDACTED) for k, x in v.items()}
        elif v is not None:
            out[section] = REDACTED
    md = out.get("metadata")
    if isinstance(md, Mapping):
        ann = md.get("annotations")
        if isinstance(ann, Mapping) and LAST_APPLIED_ANNOTATION in ann:
            md = dict(md)
            md["annotations"] = _redact_last_applied(ann)
            out["metadata"] = md
    return out


def redact_request_body(body: Any) -> Any:
    """A request body sent for a Secret (an apply's manifest) as it may be shown: every
    ``data``/``stringData`` value, null or not, and the last-applied annotation redacted; the
    sections move after the other keys (the order the write outputs have always printed)."""
    if not isinstance(body, Mapping):
        return body
    out = {k: v for k, v in body.items() if k not in SECRET_SECTIONS}
    for section in SECRET_SECTIONS:
        v = body.get(section)
        if isinstance(v, Mapping):
            out[section] = {k: REDACTED for k in v}
        elif section in body:
            out[section] = REDACTED
    md = body.get("metadata")
    if isinstance(md, Mapping) and isinstance(md.get("annotations"), Mapping):
        out["metadata"] = {**md, "annotations": _redact_last_applied(md["annotations"])}
    return out


def redact_patch_op(op: Mapping[str, Any]) -> dict[str, Any]:
    """One JSON patch operation on a Secret as it may be shown: a value that is (or holds) the
    last-applied annotation redacted; ``test`` operations compare, they reveal nothing new."""
    out = dict(op)
    path = str(op.get("path", ""))
    if "value" in out and out.get("op") != "test":
        if path == LAST_APPLIED_POINTER:
            out["value"] = REDACTED
        elif path == "/metadata/annotations" and isinstance(out["value"], Mapping):
            out["value"] = _redact_last_applied(out["value"])
    return out


def is_secret_value_path(path: Path) -> bool:
    """Does a Secret's field at ``path`` hold secret values: under ``data``/``stringData``, or the
    last-applied annotation?"""
    in_data = bool(path) and path[0][0] == FIELD and path[0][1] in SECRET_SECTIONS
    last_applied = len(path) >= 3 and path[-1] == (FIELD, LAST_APPLIED_ANNOTATION)
    return in_data or last_applied
