"""Hiding a Secret's values wherever the tool prints them: one rule, one placeholder.

What is a Secret is :func:`kubectl_fieldown.base.objects.is_secret` (the core ``v1`` Secret only). Its
``data`` and ``stringData`` values and its last-applied annotation (which holds the data in clear)
become ``<redacted>``. Keys stay visible: they are what ownership is about, and FieldsV1 shows them
anyway. Pure: callers decide whether the user asked to see the values.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..fieldpath import FIELD, Path
from ..ownership.managedfields import LAST_APPLIED_ANNOTATION
from .objects import is_secret_object

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "LAST_APPLIED_POINTER",
    "REDACTED",
    "SECRET_SECTIONS",
    "is_secret_value_path",
    "redact_patch_op",
    "redact_request_body",
    "redact_secret",
    "remember_credential",
    "scrub",
    "scrub_credentials",
    "scrub_value",
    "secret_texts",
    "shown_value",
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


def shown_value(path: Path, value: Any) -> Any:
    """A Secret's value at ``path`` as it may be shown (in a refusal, a note, a changed value): a
    value under ``data``/``stringData`` or the last-applied annotation is ``<redacted>`` (a null
    stays null: it says the key is being removed, not what it held), and a value that holds them
    (the whole object, its ``metadata`` or annotations) is shown with them redacted."""
    if value is None:
        return None
    if is_secret_value_path(path):
        return REDACTED
    if not path and isinstance(value, Mapping):
        return redact_secret({**value, "apiVersion": "v1", "kind": "Secret"})
    if path == ((FIELD, "metadata"),) and isinstance(value, Mapping) and isinstance(value.get("annotations"), Mapping):
        return {**value, "annotations": _redact_last_applied(value["annotations"])}
    if path == ((FIELD, "metadata"), (FIELD, "annotations")) and isinstance(value, Mapping):
        return _redact_last_applied(value)
    return value


#: shorter values are not scrubbed from text: replacing every "a" in a message would garble it,
#: and the structural redaction above already hides them wherever a value is shown
_SCRUB_MIN = 4


def secret_texts(*objs: Any) -> frozenset[str]:
    """The texts a Secret's values can appear as in a message: each ``data``/``stringData`` value
    (as it is, and JSON-quoted without its quotes) and the last-applied annotation, of every Secret
    among ``objs`` (None and other objects give none). For :func:`scrub`, the last resort behind the
    structural redaction."""
    out: set[str] = set()
    for obj in objs:
        if (type(obj) is not dict and not isinstance(obj, Mapping)) or not is_secret_object(obj):
            continue
        values: list[Any] = []
        for section in SECRET_SECTIONS:
            v = obj.get(section)
            values.extend(v.values() if isinstance(v, Mapping) else [v])
        md = obj.get("metadata")
        ann = md.get("annotations") if isinstance(md, Mapping) else None
        if isinstance(ann, Mapping):
            values.append(ann.get(LAST_APPLIED_ANNOTATION))
        for v in values:
            _texts_of(v, out)
    return frozenset(out)


def _texts_of(v: Any, out: set[str]) -> None:
    """Each string in ``v`` (a value may be a list or map in a bad manifest, and an error quotes its
    strings), and ``v`` as JSON."""
    import json

    if v is None:
        return
    if isinstance(v, str):
        forms = [v, json.dumps(v, ensure_ascii=False)[1:-1]]
    else:
        forms = [json.dumps(v, sort_keys=True, ensure_ascii=False)]
        for x in v.values() if isinstance(v, Mapping) else v if isinstance(v, list) else ():
            _texts_of(x, out)
    out.update(f for f in forms if len(f) >= _SCRUB_MIN)


def scrub(text: str, texts: frozenset[str] | set[str]) -> str:
    """``text`` with every occurrence of ``texts`` (longest first) replaced by ``<redacted>``."""
    for t in sorted(texts, key=len, reverse=True):
        if t in text:
            text = text.replace(t, REDACTED)
    return text


def scrub_value(value: Any, texts: frozenset[str] | set[str]) -> Any:
    """:func:`scrub` applied to every string (keys too) in a JSON value."""
    if isinstance(value, str):
        return scrub(value, texts)
    if isinstance(value, Mapping):
        return {scrub(str(k), texts): scrub_value(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, texts) for v in value]
    return value


# The credentials this process uses (bearer tokens, passwords), remembered by the cluster layer as it
# loads them: the error printer scrubs them from every message, whatever its cause (issue 18: a
# library error quoted the Authorization header). The only state of this module.
_CREDENTIALS: set[str] = set()


def remember_credential(text: str | None) -> None:
    """Never print ``text`` (nor the same text stripped of surrounding whitespace) in an error."""
    for form in (text, text.strip() if text else None):
        if form and len(form) >= _SCRUB_MIN:
            _CREDENTIALS.add(form)
            _CREDENTIALS.add(repr(form)[1:-1])  # as a repr quotes it (b'...\n', '...')


def scrub_credentials(text: str) -> str:
    """``text`` without any credential remembered by :func:`remember_credential`."""
    return scrub(text, _CREDENTIALS) if _CREDENTIALS else text
