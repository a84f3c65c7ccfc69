"""An independent FieldsV1 decoder for the tests that compare the product with the server.

The product's codec (``kubectl_fieldown.fieldpath``) must not judge itself: where a test compares
managedFields the server returned with managedFields the product predicted, both sides are decoded
here, by a few lines written from the format's definition (structured-merge-diff's FieldsV1: a JSON
object whose keys are path elements ``f:NAME``, ``k:{JSON}``, ``v:JSON`` or ``i:N``; a key whose value
is ``{}`` is a member, and a ``"."`` key marks its parent node as a member), sharing no code with it.

A path is a tuple of ``(kind, payload)`` with ``kind`` one of ``f``, ``k``, ``v``, ``i`` and the payload
in one canonical text (JSON re-encoded with sorted keys), so that the two spellings the server uses
(custom resources: keys sorted as strings and HTML-escaped; built-ins: SMD's canonical bytes) decode
to the same set.
"""

from __future__ import annotations

import json
from typing import Any

OraclePath = tuple[tuple[str, str], ...]


def _element(key: str) -> tuple[str, str]:
    kind, sep, payload = key.partition(":")
    if not sep or kind not in ("f", "k", "v", "i"):
        raise ValueError(f"not a FieldsV1 key: {key!r}")
    if kind == "f":
        return ("f", payload)
    if kind == "i":
        return ("i", str(int(payload)))
    return (kind, json.dumps(json.loads(payload), sort_keys=True, separators=(",", ":")))


def oracle_paths(fields_v1: Any) -> frozenset[OraclePath]:
    """Every member path of a FieldsV1 value (a dict, or its JSON text)."""
    if fields_v1 is None:
        return frozenset()
    if isinstance(fields_v1, str):
        fields_v1 = json.loads(fields_v1)
    if not isinstance(fields_v1, dict):
        raise ValueError(f"FieldsV1 is not an object: {fields_v1!r}")
    out: set[OraclePath] = set()
    stack: list[tuple[OraclePath, dict[str, Any]]] = [((), fields_v1)]
    while stack:
        prefix, node = stack.pop()
        for key, child in node.items():
            if key == ".":
                continue
            if not isinstance(child, dict):
                raise ValueError(f"FieldsV1 child of {key!r} is not an object")
            path = (*prefix, _element(key))
            if not child or "." in child:
                out.add(path)
            stack.append((path, child))
    return frozenset(out)


def oracle_entries(obj: dict[str, Any]) -> dict[tuple[str, str, str, str], frozenset[OraclePath]]:
    """An object's managedFields as {(manager, operation, apiVersion, subresource): paths}."""
    out = {}
    for e in (obj.get("metadata") or {}).get("managedFields") or []:
        key = (e["manager"], e["operation"], e.get("apiVersion", ""), e.get("subresource", ""))
        out[key] = oracle_paths(e.get("fieldsV1"))
    return out
