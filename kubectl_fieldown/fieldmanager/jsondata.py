"""JSON objects as the field manager reads and copies them.

The pipeline only reads its inputs and copies a result once, where something writes into it;
these are the reads and the copy every step shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.value import copy_json as copy_json  # the one JSON copy, shared with the schema's Go round trip


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
