"""JSON patch (RFC 6902) as the API server applies the operations this tool and the appliers send:
``test``, ``add``, ``replace`` and ``remove`` on object members (pure; never mutates its input)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..base.value import values_equal
from .jsondata import copy_json

__all__ = ["JsonPatchError", "apply_json_patch", "pointer"]


class JsonPatchError(ValueError):
    """The patch cannot be applied: a ``test`` failed or a path does not exist."""


def pointer(*parts: str) -> str:
    """A JSON pointer from unescaped segments (``~`` and ``/`` escaped as RFC 6901 says)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _segments(path: str) -> list[str]:
    if not path.startswith("/"):
        raise JsonPatchError(f"not a JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def apply_json_patch(obj: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The object after ``ops``; raises :class:`JsonPatchError` where the server answers 422."""
    # copied on write: only the maps and lists on an operation's path are copied (once each), the
    # rest of the result is shared with ``obj``, which nobody changes
    doc: dict[str, Any] = dict(obj)
    copied = {id(doc)}
    for op in ops:
        parts = _segments(str(op["path"]))
        if not parts:
            raise JsonPatchError("the root cannot be patched here")
        parent: Any = doc
        for p in parts[:-1]:
            if isinstance(parent, list):
                key: Any = int(p)
                child = parent[key]
            elif isinstance(parent, dict) and p in parent:
                key = p
                child = parent[p]
            else:
                raise JsonPatchError(f"{op['path']}: {p!r} does not exist")
            if id(child) not in copied and isinstance(child, (Mapping, list)):
                child = dict(child) if isinstance(child, Mapping) else list(child)
                copied.add(id(child))
                parent[key] = child
            parent = child
        last = parts[-1]
        kind = op["op"]
        if kind == "test":
            current = parent.get(last) if isinstance(parent, dict) else parent[int(last)]
            if not values_equal(current, op["value"]):
                raise JsonPatchError(f"test of {op['path']} failed")
        elif kind == "add":
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), copy_json(op["value"]))
            else:
                parent[last] = copy_json(op["value"])
        elif kind == "replace":
            if isinstance(parent, dict) and last not in parent:
                raise JsonPatchError(f"{op['path']}: replace of a member that does not exist")
            parent[int(last) if isinstance(parent, list) else last] = copy_json(op["value"])
        elif kind == "remove":
            if isinstance(parent, dict):
                if last not in parent:
                    raise JsonPatchError(f"{op['path']}: remove of a member that does not exist")
                del parent[last]
            else:
                del parent[int(last)]
        else:
            raise JsonPatchError(f"unsupported operation {kind!r}")
    return doc
