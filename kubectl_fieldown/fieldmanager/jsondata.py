"""JSON objects as the field manager reads and copies them.

The pipeline only reads its inputs and copies a result once, where something writes into it;
these are the reads and the copy every step shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def copy_json(v: Any) -> Any:
    """A deep copy of JSON data (much cheaper than ``copy.deepcopy`` on this hot path)."""
    t = type(v)
    if t is dict:
        return {k: copy_json(x) for k, x in v.items()}
    if t is list:
        return [copy_json(x) for x in v]
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    if isinstance(v, Mapping):
        return {k: copy_json(x) for k, x in v.items()}
    return v


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
