"""Strategic merge patches as kubectl computes them and the API server applies them (apimachinery
``pkg/util/strategicpatch``): client-side ``kubectl apply`` of a built-in kind.

* :func:`three_way_strategic_patch` is ``CreateThreeWayMergePatch(original, modified, current,
  meta, overwrite=true)``: the changes and additions from the live object to the new configuration
  (``diffMaps`` ignoring deletions), the deletions from the last-applied configuration to the new
  one (ignoring changes), merged (``mergeMap`` keeping nulls and directives). Lists with the
  ``merge`` strategy are diffed item by item by their merge key (``$patch: delete`` items,
  ``$setElementOrder/<list>``), lists of scalars with it as sets (``$deleteFromPrimitiveList/<list>``),
  ``retainKeys`` maps get ``$retainKeys``, ``replace`` and untagged lists are replaced whole.
* :func:`apply_strategic_patch` is ``StrategicMergeMapPatch`` (the server side: the parallel lists
  and directives are applied, unmatched nulls dropped).

Both mutate private deep copies exactly where Go mutates its maps and slices in place (a scalar
list sorted in place before it is compared, a slice shifted by a deletion), since the results
depend on it. Values are JSON decoded as apimachinery decodes it (:mod:`.smpgo`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fieldmanager.jsondata import copy_json
from .smpgo import deep_equal, go_sort, go_type, sprint_v
from .smpmerge import (
    DELETE,
    DELETE_FROM_PRIMITIVE_LIST,
    DIRECTIVE,
    MERGE,
    REPLACE,
    RETAIN_KEYS_DIRECTIVE,
    SET_ELEMENT_ORDER,
    Map,
    StrategicPatchError,
    _bad_arg_type,
    _dedup_scalars,
    _element_kind,
    _merge_key_equal,
    _merge_map,
    _no_merge_key,
    _normalize_slice_order,
    _retain_keys_strategy,
    _sort_scalars,
)
from .smpmeta import PatchMetaError, StructMeta

__all__ = [
    "StrategicPatchError",
    "apply_strategic_patch",
    "client_side_strategic_patch",
    "go_decoded",
    "three_way_strategic_patch",
    "two_way_strategic_patch",
]


class _Diff:
    def __init__(self, set_element_order: bool = False, ignore_changes: bool = False,
                 ignore_deletions: bool = False, retain_keys: bool = False) -> None:
        self.set_element_order = set_element_order
        self.ignore_changes = ignore_changes
        self.ignore_deletions = ignore_deletions
        self.retain_keys = retain_keys

    def with_retain_keys(self, retain: bool) -> _Diff:
        return _Diff(self.set_element_order, self.ignore_changes, self.ignore_deletions, retain)


def _diff_maps(original: Map, modified: Map, schema: StructMeta, opts: _Diff) -> Map:
    patch: Map = {}
    retain: list[Any] = []
    for key, mv in modified.items():
        if opts.retain_keys and mv is not None:
            retain.append(key)
        if key not in original:
            if not opts.ignore_changes:
                patch[key] = mv
            continue
        ov = original[key]
        if key == DIRECTIVE:
            if not isinstance(ov, str) or not isinstance(mv, str):
                raise StrategicPatchError(f"invalid value for special key: {DIRECTIVE}")
            if mv != ov:
                patch[DIRECTIVE] = mv
            continue
        if go_type(ov) != go_type(mv):
            if not opts.ignore_changes:
                patch[key] = mv
            continue
        if isinstance(ov, dict):
            _handle_map_diff(key, ov, mv, patch, schema, opts)
        elif isinstance(ov, list):
            _handle_slice_diff(key, ov, mv, patch, schema, opts)
        elif not opts.ignore_changes and not deep_equal(ov, mv):
            patch[key] = mv
    if not opts.ignore_deletions:
        for key in original:
            if key not in modified:
                patch[key] = None
    if retain and (patch or any(v is not None and k not in modified for k, v in original.items())):
        patch[RETAIN_KEYS_DIRECTIVE] = _sort_scalars(retain)
    return patch


def _handle_map_diff(key: str, ov: Map, mv: Map, patch: Map, schema: StructMeta, opts: _Diff) -> None:
    try:
        sub, meta = schema.for_struct(key)
    except PatchMetaError as e:
        if deep_equal(ov, mv):
            return
        raise StrategicPatchError(str(e)) from None
    retain, strategy = _retain_keys_strategy(meta.strategies)
    o = opts.with_retain_keys(retain)
    if strategy == REPLACE:
        if not o.ignore_changes:
            patch[key] = mv
        return
    value = _diff_maps(ov, mv, sub, o)
    if value:
        patch[key] = value


def _handle_slice_diff(key: str, ov: list[Any], mv: list[Any], patch: Map, schema: StructMeta,
                       opts: _Diff) -> None:
    try:
        sub, meta = schema.for_slice(key)
    except PatchMetaError as e:
        if deep_equal(ov, mv):
            return
        raise StrategicPatchError(str(e)) from None
    retain, strategy = _retain_keys_strategy(meta.strategies)
    if strategy == MERGE:
        add, deletions, order = _diff_lists(ov, mv, sub, meta.merge_key, opts.with_retain_keys(retain))
        if add:
            patch[key] = add
        if deletions:
            patch[f"{DELETE_FROM_PRIMITIVE_LIST}/{key}"] = deletions
        if order:
            patch[f"{SET_ELEMENT_ORDER}/{key}"] = order
    elif not opts.ignore_changes and not deep_equal(ov, mv):
        patch[key] = mv


def _diff_lists(original: list[Any], modified: list[Any], schema: StructMeta, merge_key: str,
                opts: _Diff) -> tuple[list[Any], list[Any], list[Any]]:
    if not original:
        if not modified or opts.ignore_changes:
            return [], [], []
        return modified, [], []
    kind = _element_kind(original, modified)
    order: list[Any] = []
    if kind == "map":
        add, deletions = _diff_lists_of_maps(original, modified, schema, merge_key, opts)
        add = _normalize_slice_order(add, modified, merge_key, kind)
        same = _order_same(original, modified, merge_key)
        add = add + deletions
        deletions = []
        if opts.set_element_order and ((not opts.ignore_changes and (add or not same))
                                       or (not opts.ignore_deletions and add)):
            order = [{merge_key: v[merge_key]} for v in modified]
        return add, deletions, order
    add, deletions = _diff_lists_of_scalars(original, modified, opts)
    add = _normalize_slice_order(add, modified, merge_key, kind)
    # ``original`` was sorted in place by the diff: an unchanged list in another order than sorted
    # still counts as a change here, as in Go
    if opts.set_element_order and ((not opts.ignore_deletions and deletions)
                                   or (not opts.ignore_changes and not deep_equal(original, modified))):
        order = modified
    return add, deletions, order


def _order_same(original: list[Any], modified: list[Any], merge_key: str) -> bool:
    if len(original) != len(modified):
        return False
    for o, m in zip(original, modified, strict=True):
        if not _merge_key_equal(o, m, merge_key):
            return False
    return True


def _diff_lists_of_scalars(original: list[Any], modified: list[Any], opts: _Diff) -> tuple[list[Any], list[Any]]:
    orig = _sort_scalars(original)  # in place, as Go does
    mod = _sort_scalars(list(modified))
    oi = mi = 0
    add: list[Any] = []
    deletions: list[Any] = []
    while oi < len(orig) or mi < len(mod):
        o_in, m_in = oi < len(orig), mi < len(mod)
        os_ = sprint_v(orig[oi]) if o_in else ""
        ms = sprint_v(mod[mi]) if m_in else ""
        if o_in and m_in and os_ == ms:
            oi += 1
            mi += 1
        elif not o_in or (m_in and os_ > ms):
            if not opts.ignore_changes:
                add.append(mod[mi])
            mi += 1
        else:
            if not opts.ignore_deletions:
                deletions.append(orig[oi])
            oi += 1
    return add, _dedup_scalars(deletions)


def _sort_maps_by_key(items: list[Any], merge_key: str) -> list[Any]:
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
    return go_sort(list(items), lambda m: sprint_v(m.get(merge_key)))


def _diff_lists_of_maps(original: list[Any], modified: list[Any], schema: StructMeta, merge_key: str,
                        opts: _Diff) -> tuple[list[Any], list[Any]]:
    patch: list[Any] = []
    deletions: list[Any] = []
    osorted = _sort_maps_by_key(original, merge_key) if original else original
    msorted = _sort_maps_by_key(modified, merge_key) if modified else modified
    oi = mi = 0
    while oi < len(osorted) or mi < len(msorted):
        o_in, m_in = oi < len(osorted), mi < len(msorted)
        oe: Map = {}
        me: Map = {}
        okv: Any = None
        mkv: Any = None
        os_ = ms = ""
        if o_in:
            oe, okv = _map_and_key(osorted[oi], merge_key)
            os_ = sprint_v(okv)
        if m_in:
            me, mkv = _map_and_key(msorted[mi], merge_key)
            ms = sprint_v(mkv)
        if o_in and m_in and os_ == ms:
            value = _diff_maps(oe, me, schema, opts)
            if value:
                value[merge_key] = mkv
                patch.append(value)
            oi += 1
            mi += 1
        elif not o_in or (m_in and os_ > ms):
            if not opts.ignore_changes:
                patch.append(me)
            mi += 1
        else:
            if not opts.ignore_deletions:
                deletions.append({merge_key: okv, DIRECTIVE: DELETE})
            oi += 1
    return patch, deletions


def _map_and_key(item: Any, merge_key: str) -> tuple[Map, Any]:
    if not isinstance(item, dict):
        raise _bad_arg_type("map[string]interface {}", item)
    if merge_key not in item:
        raise _no_merge_key(item, merge_key)
    return item, item[merge_key]


def three_way_strategic_patch(original: Map | None, modified: Map, current: Map, schema: StructMeta) -> Map:
    """``CreateThreeWayMergePatch(original, modified, current, schema, overwrite=true)``; ``original``
    None or ``{}`` when there is no last-applied configuration. An empty result: kubectl sends
    nothing."""
    orig = copy_json(original or {})
    mod = copy_json(modified)
    cur = copy_json(current)
    delta = _diff_maps(cur, mod, schema, _Diff(set_element_order=True, ignore_deletions=True))
    deletions = _diff_maps(orig, copy_json(modified), schema, _Diff(set_element_order=True, ignore_changes=True))
    return _merge_map(deletions, delta, schema, merge_parallel=False, ignore_unmatched_nulls=False)


def two_way_strategic_patch(original: Map | None, modified: Map | None, schema: StructMeta) -> Map:
    """``CreateTwoWayMergePatch(original, modified, meta)``: what turns ``original`` into ``modified``
    (``diffMaps`` with ``$setElementOrder``); None reads as ``{}``."""
    return _diff_maps(copy_json(original or {}), copy_json(modified or {}), schema,
                      _Diff(set_element_order=True))


def apply_strategic_patch(live: Map, patch: Map, schema: StructMeta) -> Map:
    """``StrategicMergeMapPatch`` of ``patch`` on the live object (the server side)."""
    return _merge_map(copy_json(live), copy_json(patch), schema, merge_parallel=True,
                      ignore_unmatched_nulls=True)


def go_decoded(value: Any) -> Any:
    """A value after Go's JSON round trip (encoded, then decoded by apimachinery): whole floats
    come back as integers. Always a fresh copy."""
    import json

    from ..base.value import go_json

    return json.loads(go_json(value))


def client_side_strategic_patch(modified: Mapping[str, Any], live: Mapping[str, Any],
                                original: Mapping[str, Any] | None,
                                schema: StructMeta) -> Map | StrategicPatchError:
    """The patch ``kubectl apply`` sends for a built-in kind: ``modified`` is the new configuration
    carrying its last-applied annotation, ``original`` the live object's annotation decoded (None:
    none), the live object is ``current``. kubectl stops on an error (returned, not raised)."""
    try:
        return three_way_strategic_patch(go_decoded(original) if original is not None else None,
                                         go_decoded(modified), go_decoded(live), schema)
    except StrategicPatchError as e:
        return e
