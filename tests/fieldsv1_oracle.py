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
import math
from decimal import Decimal
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


def _go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                        "\v": "\\v"}[ch])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif not ch.isprintable() and ch != " ":
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_float(f: float) -> str:
    """Go's ``%v`` of a float64 (strconv's shortest %g): exponent form below 1e-4 and from 1e6."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0"
    t = Decimal(repr(abs(f))).as_tuple()  # Python's repr is the shortest round-tripping form, as Go's
    assert isinstance(t.exponent, int)
    exponent = len(t.digits) + t.exponent - 1
    digs = "".join(map(str, t.digits)).rstrip("0") or "0"
    if exponent < -4 or exponent >= 6:
        m = digs[0] + ("." + digs[1:] if len(digs) > 1 else "")
        return f"{sign}{m}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    if exponent >= 0:
        whole = digs[: exponent + 1].ljust(exponent + 1, "0")
        frac = digs[exponent + 1:]
        return sign + whole + ("." + frac if frac else "")
    return sign + "0." + "0" * (-exponent - 1) + digs


def _go_value(v: Any) -> str:
    """structured-merge-diff ``value.ToString``."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _go_float(v)
    if isinstance(v, str):
        return _go_quote(v)
    if isinstance(v, list):
        return "[" + ",".join(_go_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "".join(f"{k}={_go_value(x)}" for k, x in v.items())
    raise ValueError(f"not a JSON value: {v!r}")


def _as_float64(v: Any) -> Any:
    """The numbers of a ``k:``/``v:`` key as the server holds them: float64 (a recorded 409 prints the
    key 9007199254740993 as ``9.007199254740992e+15``)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return float(v)
    if isinstance(v, list):
        return [_as_float64(x) for x in v]
    if isinstance(v, dict):
        return {k: _as_float64(x) for k, x in v.items()}
    return v


def oracle_path_string(path: OraclePath) -> str:
    """The server's text of a path (structured-merge-diff ``Path.String``), as conflict messages print it."""
    out = []
    for kind, payload in path:
        if kind == "f":
            out.append("." + payload)
        elif kind == "i":
            out.append(f"[{payload}]")
        elif kind == "v":
            out.append(f"[={_go_value(_as_float64(json.loads(payload)))}]")
        else:
            key = _as_float64(json.loads(payload))
            out.append("[" + ",".join(f"{n}={_go_value(key[n])}" for n in sorted(key)) + "]")
    return "".join(out)
