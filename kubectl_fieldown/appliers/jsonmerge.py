"""JSON merge patches as kubectl and the API server compute them (client-side apply of custom resources).

``kubectl apply`` (client-side) of a kind the client has no Go type for — every custom resource —
sends a JSON merge patch (RFC 7386) computed three ways (apimachinery ``jsonmergepatch``):

* the additions and changes from the live object to the new manifest (``CreateMergePatch(current,
  modified)`` without its nulls),
* the deletions from the last-applied manifest to the new one (``CreateMergePatch(original,
  modified)``, only its nulls),
* merged into one patch, refused when the two disagree (``mergepatch.HasConflicts``) or when the
  patch would change ``apiVersion``, ``kind`` or ``metadata.name``.

The server applies it with evanphx/json-patch ``MergePatch``. Both sides use json-patch's v4 API
(gopkg.in/evanphx/json-patch.v4 v4.13 upstream; the root package of github.com/evanphx/json-patch
5.7 in the lab's Debian builds of kubectl 1.36 and the API server), whose ``matchesValue`` tells
``{"a": null}`` from ``{}`` and whose ``pruneNulls`` keeps the null items of lists (older releases
did neither; tests/appliers replays kubectl to check). Both sides decode numbers as float64
(``encoding/json`` into ``interface{}``), so ``1`` and ``1.0`` are the same value here, integers
beyond 2**53 lose precision as they do in Go, and whole floats come back as integers after the
server's decoding. Values are plain Python JSON data; nothing here mutates its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MergePatchError", "apply_merge_patch", "create_merge_patch", "three_way_merge_patch"]


class MergePatchError(ValueError):
    """kubectl refuses to compute the patch (the message is kubectl's reason)."""


def _same(a: Any, b: Any) -> bool:
    """json-patch ``matchesValue``: same JSON kind and equal; maps need the same keys (a key set to
    null is not a missing key), lists equal element by element, null equals null."""
    ta, tb = _kind(a), _kind(b)
    if ta != tb:
        return False
    if ta == "map":
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if ta == "list":
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if ta == "number":
        return float(a) == float(b)
    same: bool = a == b
    return same


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, Mapping):
        return "map"
    raise MergePatchError(f"unknown type: {type(v).__name__}")


def create_merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """evanphx ``CreateMergePatch``: what turns ``original`` into ``modified`` (removed keys as null,
    lists and scalars replaced whole, maps recursed into)."""
    out: dict[str, Any] = {}
    for key, bv in modified.items():
        if key not in original:
            out[key] = bv
            continue
        av = original[key]
        ka, kb = _kind(av), _kind(bv)
        if ka != kb:
            out[key] = bv
        elif ka == "map":
            sub = create_merge_patch(av, bv)
            if sub:
                out[key] = sub
        elif ka == "null":
            continue
        elif not _same(av, bv):
            out[key] = bv
    for key in original:
        if key not in modified:
            out[key] = None
    return out


def _keep_or_delete_nulls(patch: Mapping[str, Any], keep_nulls: bool) -> dict[str, Any]:
    """apimachinery ``keepOrDeleteNullInObj``: only the nulls (deletions), or everything but them.
    An explicitly empty map is a value, kept with the additions."""
    out: dict[str, Any] = {}
    for key, val in patch.items():
        if val is None:
            if keep_nulls:
                out[key] = None
        elif isinstance(val, Mapping):
            if not val:
                if not keep_nulls:
                    out[key] = {}
                continue
            sub = _keep_or_delete_nulls(val, keep_nulls)
            if sub:
                out[key] = sub
        elif not keep_nulls:
            out[key] = val
    return out


def _has_conflicts(left: Any, right: Any) -> bool:
    """apimachinery ``mergepatch.HasConflicts``: a key both patches set to different things."""
    if isinstance(left, Mapping):
        if not isinstance(right, Mapping):
            return True
        return any(k in right and _has_conflicts(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        if not isinstance(right, list) or len(left) != len(right):
            return True
        return any(_has_conflicts(a, b) for a, b in zip(left, right, strict=True))
    return not _deep_equal(left, right)


def _deep_equal(a: Any, b: Any) -> bool:
    # reflect.DeepEqual on values decoded by apimachinery's json (int64 for whole numbers, float64
    # otherwise): an int and a float are different types there
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _prune_nulls(v: Any) -> Any:
    # json-patch ``pruneNulls``: null members of maps go, at any depth; a null item of a list stays
    if isinstance(v, Mapping):
        return {k: _prune_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_prune_nulls(x) for x in v]
    return v


def apply_merge_patch(doc: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """evanphx ``MergePatch`` (the server side of ``application/merge-patch+json``) of two objects:
    null deletes a key, a map merges into a map, anything else replaces."""
    out = dict(doc)
    for key, val in patch.items():
        if val is None:
            out.pop(key, None)
        elif key not in out:
            out[key] = _prune_nulls(val)
        else:
            out[key] = _merge(out[key], val)
    return out


def _merge(cur: Any, patch: Any) -> Any:
    # evanphx ``merge``: a value that is not an object is replaced by the patch with its nulls
    # pruned; an object replaced by a non-object takes the patch as it is
    if not isinstance(cur, Mapping):
        return _prune_nulls(patch)
    if not isinstance(patch, Mapping):
        return patch
    return apply_merge_patch(cur, patch)


def _go_numbers(v: Any) -> Any:
    """A patch value after the JSON round trip: Go writes a whole float64 without a fraction
    (``3``, not ``3.0``), and the server's decoder reads that back as an integer."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() and abs(v) < 1e21 else v
    if isinstance(v, Mapping):
        return {k: _go_numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_go_numbers(x) for x in v]
    return v


def _float64(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return float(v)
    if isinstance(v, Mapping):
        return {k: _float64(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_float64(x) for x in v]
    return v


_PRECONDITION_KEYS = ("apiVersion", "kind")


def three_way_merge_patch(
    original: Mapping[str, Any] | None, modified: Mapping[str, Any], current: Mapping[str, Any]
) -> dict[str, Any]:
    """apimachinery ``CreateThreeWayJSONMergePatch`` with kubectl's preconditions (apiVersion, kind
    and metadata.name unchanged). ``original`` is the last-applied manifest (None: there is none).
    An empty result means kubectl sends nothing ("unchanged")."""
    orig = _float64(original or {})
    mod = _float64(modified)
    cur = _float64(current)
    add_and_change = _keep_or_delete_nulls(create_merge_patch(cur, mod), keep_nulls=False)
    deletions = _keep_or_delete_nulls(create_merge_patch(orig, mod), keep_nulls=True)
    add_and_change = _go_numbers(add_and_change)
    if _has_conflicts(add_and_change, deletions):
        raise MergePatchError("the last-applied configuration and the new manifest disagree with the live object "
                              "(kubectl: patch conflict)")
    # evanphx MergePatch(deletePatch, addAndChangePatch): the deletion patch is the document, so its
    # nulls (the deletions) stay, and a key both set takes the addition
    patch = apply_merge_patch(deletions, add_and_change)
    md = patch.get("metadata")
    if any(k in patch for k in _PRECONDITION_KEYS) or (isinstance(md, Mapping) and "name" in md):
        raise MergePatchError("At least one of apiVersion, kind and name was changed")
    return patch
