"""JSON for data paths: orjson when installed (several times faster on large LIST pages),
else the standard library. Both parse to plain dicts, lists, str, int, float, bool, None."""

from __future__ import annotations

import json
from typing import Any

_orjson: Any
try:  # optional speed-up, not a dependency
    import orjson as _orjson  # type: ignore[import-not-found, no-redef, unused-ignore]
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

BACKEND = "orjson" if _orjson is not None else "json"


def loads(data: bytes | str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except ValueError:
            pass  # e.g. an integer beyond 64 bits, which the stdlib parser accepts; else it re-raises
    return json.loads(data)


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes for request bodies."""
    if _orjson is not None:
        try:
            return bytes(_orjson.dumps(obj))
        except TypeError:
            pass  # big integers, non-str keys: let the stdlib encoder decide
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
