"""JSON objects as the field manager reads and copies them.

The pipeline only reads its inputs and copies a result once, where something writes into it;
these are the reads and the copy every step shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.value import copy_json as copy_json  # the one JSON copy, shared with the schema's Go round trip
from ..base.value import json_float


def as_dict(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object itself when it is a plain dict (read only), else a plain copy."""
    return obj if type(obj) is dict else _plain(obj)


def _plain(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = copy_json(dict(obj))
    return out


def api_version(obj: Mapping[str, Any]) -> str:
    """The object's ``apiVersion``, "" when it has none (or not a string)."""
    v = obj.get("apiVersion")
    return v if isinstance(v, str) else ""


def decoded_numbers(v: Any) -> Any:
    """``v`` as the server decodes an apply body (YAML, turned into JSON by Go before it is read):
    a whole float below 1e21 comes back an integer (``10.0`` is validated as the int64 10; a PUT's
    JSON keeps it a float64). Containers without such a float are returned as they are."""
    t = type(v)
    if t is float:
        return json_float(v)
    if t is not dict and t is not list:
        return v
    out: Any = None
    for k, x in v.items() if t is dict else enumerate(v):
        tx = type(x)
        if tx is float or tx is dict or tx is list:
            n = decoded_numbers(x)
            if n is not x:
                if out is None:
                    out = dict(v) if t is dict else list(v)
                out[k] = n
    return v if out is None else out
