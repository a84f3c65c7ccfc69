"""The merge half of apimachinery's strategic merge patch (``mergeMap`` and what it calls).

The API server applies a strategic merge patch with it (``StrategicMergeMapPatch``: parallel lists
applied, unmatched nulls dropped), and kubectl merges its two diffs with it when it computes the
three-way patch (``CreateThreeWayMergePatch``: nulls and directives kept). See :mod:`.strategic`
for the whole. Functions mutate their arguments where Go mutates its maps and slices in place:
callers pass private copies.
"""

from __future__ import annotations

from typing import Any

from .smpgo import deep_equal, go_eq, go_sort, go_stable_sort, go_type, sprint_s, sprint_v
from .smpmeta import PatchMeta, PatchMetaError, StructMeta

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS = "retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
RETAIN_KEYS_DIRECTIVE = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"

Map = dict[str, Any]

NIL_PANIC = "runtime error: invalid memory address or nil pointer dereference"
"""The Go panic of a null item in a list the patch inspects."""



class StrategicPatchError(ValueError):
    """The patch library failed; ``status`` is what the API server answers with it (its
    ``interpretStrategicMergePatchError``: 400 for malformed patches, 422 for lists of lists, 500
    for every other error, which is not an API status)."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


def _bad_primitive_list() -> StrategicPatchError:
    return StrategicPatchError("invalid patch format of primitive list", 400)


def _bad_retain_keys() -> StrategicPatchError:
    return StrategicPatchError("invalid patch format of retainKeys", 400)


def _bad_set_order() -> StrategicPatchError:
    return StrategicPatchError("invalid patch format of setElementOrder list", 400)


def _no_list_of_lists() -> StrategicPatchError:
    return StrategicPatchError("lists of lists are not supported", 422)


def _no_merge_key(m: Any, key: str) -> StrategicPatchError:
    return StrategicPatchError(f"map: {sprint_v(m)} does not contain declared merge key: {key}")


def _bad_arg_type(expected: str, actual: Any) -> StrategicPatchError:
    return StrategicPatchError(f"expected a {expected}, but received a {go_type(actual)}")


def _bad_patch_type(t: Any, m: Any) -> StrategicPatchError:
    return StrategicPatchError(f"unknown patch type: {sprint_s(t)} in map: {sprint_v(m)}")


def _meta_struct(schema: StructMeta, key: str) -> tuple[StructMeta, PatchMeta]:
    try:
        return schema.for_struct(key)
    except PatchMetaError as e:
        raise StrategicPatchError(str(e)) from None


def _meta_slice(schema: StructMeta, key: str) -> tuple[StructMeta, PatchMeta]:
    try:
        return schema.for_slice(key)
    except PatchMetaError as e:
        raise StrategicPatchError(str(e)) from None


def _retain_keys_strategy(strategies: tuple[str, ...]) -> tuple[bool, str]:
    """``extractRetainKeysPatchStrategy``: (retainKeys?, the other strategy)."""
    if not strategies:
        return False, ""
    if len(strategies) == 1:
        return (True, "") if strategies[0] == RETAIN_KEYS else (False, strategies[0])
    if len(strategies) == 2:
        if strategies[0] == RETAIN_KEYS:
            return True, strategies[1]
        if strategies[1] == RETAIN_KEYS:
            return True, strategies[0]
    raise StrategicPatchError(f"unexpected patch strategy: [{' '.join(strategies)}]")


def _sort_scalars(items: list[Any]) -> list[Any]:
    return go_sort(items, sprint_v)


def _dedup_scalars(s: list[Any]) -> list[Any]:
    """``deduplicateScalars``: in place, a duplicate replaced by the last item."""
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if go_eq(s[i], s[j]):
                s[j] = s[length]
                del s[length:]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _element_kind(*lists: list[Any]) -> str:
    """``sliceElementType``: the one type of every item ("map", "slice" refused, or a scalar's)."""
    prev: str | None = None
    for lst in lists:
        for v in lst:
            if v is None and prev is None:
                # a null first item: reflect.TypeOf(nil).Kind() dereferences nil (kubectl crashes,
                # the server's handler recovers and answers 500); a later one is another type
                raise StrategicPatchError(NIL_PANIC)
            t = go_type(v)
            if prev is None:
                prev = t
                if isinstance(v, list):
                    raise _no_list_of_lists()
            elif prev != t:
                raise StrategicPatchError("list element types are not identical: "
                                          + sprint_v(list(lists)))
    if prev is None:
        raise StrategicPatchError("no elements in any of the given slices")
    return "map" if prev.startswith("map") else prev


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    def val(x: Any) -> Any:
        if kind == "map":
            return x.get(merge_key) if isinstance(x, dict) else None
        return x

    target = val(value)
    for i, v in enumerate(items):
        if go_eq(target, val(v)) or (target is None and val(v) is None):
            return i
    return -1


def _validate_merge_key(merge_key: str, *lists: list[Any]) -> None:
    for lst in lists:
        for item in lst:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)


def _extract_deletes(items: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    delete: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        if v.get(DIRECTIVE, _MISSING) == DELETE:
            delete.append(v)
        else:
            keep.append(v)
    return keep, delete


_MISSING: Any = object()


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    deletes: list[Any] = []
    if kind == "map":
        _validate_merge_key(merge_key, to_sort, order)
        to_sort, deletes = _extract_deletes(to_sort)

    def less(a: Any, b: Any) -> bool:
        ia = _index(order, a, merge_key, kind)
        if ia >= 0:
            ib = _index(order, b, merge_key, kind)
            if ib >= 0:
                return ia < ib
        return True

    go_stable_sort(to_sort, less)
    return to_sort + deletes


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return go_eq(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type("map[string]interface {}", left)
    if not isinstance(right, dict):
        raise _bad_arg_type("map[string]interface {}", right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return go_eq(left[merge_key], right[merge_key]) or (left[merge_key] is None and right[merge_key] is None)


def _merge_map(original: Map | None, patch: Map, schema: StructMeta, *, merge_parallel: bool,
               ignore_unmatched_nulls: bool) -> Map:
    if DIRECTIVE in patch:
        d = patch[DIRECTIVE]
        if d == REPLACE:
            del patch[DIRECTIVE]
            return patch
        if d == DELETE:
            return {}
        raise _bad_patch_type(d, patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch, merge_parallel)
    _merge_set_element_order(original, patch, schema, merge_parallel, ignore_unmatched_nulls)
    for k in list(patch):
        if k not in patch:
            continue
        pv = patch[k]
        is_delete_list = False
        if k.startswith(DELETE_FROM_PRIMITIVE_LIST):
            if not merge_parallel:
                original[k] = pv
                continue
            k = _extract_key(k, DELETE_FROM_PRIMITIVE_LIST)
            is_delete_list = True
        if pv is None:
            original.pop(k, None)
            if ignore_unmatched_nulls:
                continue
        if k not in original:
            if not is_delete_list:
                if ignore_unmatched_nulls:
                    _discard_nulls(pv)
                kept, keep = _remove_directives(pv)
                if keep:
                    original[k] = kept
                else:
                    original.pop(k, None)
            continue
        ov = original[k]
        if go_type(ov) != go_type(pv):
            if not is_delete_list:
                if ignore_unmatched_nulls:
                    _discard_nulls(pv)
                kept, keep = _remove_directives(pv)
                if keep:
                    original[k] = kept
                else:
                    original.pop(k, None)
            continue
        if isinstance(ov, dict):
            sub, meta = _meta_struct(schema, k)
            _, strategy = _retain_keys_strategy(meta.strategies)
            if strategy != REPLACE:
                original[k] = _merge_map(ov, pv, sub, merge_parallel=merge_parallel,
                                         ignore_unmatched_nulls=ignore_unmatched_nulls)
            else:
                original[k] = pv
        elif isinstance(ov, list):
            sub, meta = _meta_slice(schema, k)
            _, strategy = _retain_keys_strategy(meta.strategies)
            original[k] = _merge_slice_handler(ov, pv, sub, strategy, meta.merge_key, is_delete_list,
                                               merge_parallel, ignore_unmatched_nulls)
        else:
            kept, keep = _remove_directives(pv)
            if keep:
                original[k] = kept
            else:
                original.pop(k, None)
    return original


def _extract_key(s: str, prefix: str) -> str:
    head, sep, rest = s.partition("/")
    if not sep or head != prefix:
        if prefix == DELETE_FROM_PRIMITIVE_LIST:
            raise _bad_primitive_list()
        raise _bad_set_order()
    return rest


def _discard_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in list(v):
            if v[k] is None:
                del v[k]
            else:
                _discard_nulls(v[k])
    elif isinstance(v, list):
        for x in v:
            _discard_nulls(x)


def _remove_directives(obj: Any) -> tuple[Any, bool]:
    if isinstance(obj, dict):
        if DIRECTIVE in obj:
            return None, False
        for k in list(obj):
            v, keep = _remove_directives(obj[k])
            if keep:
                obj[k] = v
            else:
                del obj[k]
        return obj, True
    if isinstance(obj, list):
        out = []
        for v in obj:
            nv, keep = _remove_directives(v)
            if keep:
                out.append(nv)
        return out, True
    return obj, True


def _apply_retain_keys(original: Map, patch: Map, merge_parallel: bool) -> None:
    if RETAIN_KEYS_DIRECTIVE not in patch:
        return
    in_patch = patch.pop(RETAIN_KEYS_DIRECTIVE)
    if not merge_parallel:
        if RETAIN_KEYS_DIRECTIVE in original:
            if not deep_equal(original[RETAIN_KEYS_DIRECTIVE], in_patch):
                raise StrategicPatchError(f"{sprint_v(original[RETAIN_KEYS_DIRECTIVE])} and {sprint_v(in_patch)} "
                                          "are not deep equal: this may happen when calculating the 3-way diff patch")
        else:
            original[RETAIN_KEYS_DIRECTIVE] = in_patch
        return
    if not isinstance(in_patch, list):
        raise _bad_retain_keys()
    keys = list(in_patch)
    for k, v in patch.items():
        if v is None or k.startswith(DELETE_FROM_PRIMITIVE_LIST) or k.startswith(SET_ELEMENT_ORDER):
            continue
        if not any(go_eq(k, x) for x in keys):
            raise _bad_retain_keys()
    for k in list(original):
        if not any(go_eq(k, x) for x in keys):
            del original[k]


def _merge_set_element_order(original: Map, patch: Map, schema: StructMeta, merge_parallel: bool,
                             ignore_unmatched_nulls: bool) -> None:
    for key in list(patch):
        if key not in patch or not key.startswith(SET_ELEMENT_ORDER):
            continue
        order = patch[key]
        if not merge_parallel:
            if key in original:
                if not deep_equal(original[key], order):
                    raise _bad_set_order()
            else:
                original[key] = order
        del patch[key]
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        okey = _extract_key(key, SET_ELEMENT_ORDER)
        found_o, found_p = okey in original, okey in patch
        ofield: list[Any] = []
        pfield: list[Any] = []
        if found_o:
            if not isinstance(original[okey], list):
                raise _bad_arg_type("[]interface {}", original[okey])
            ofield = original[okey]
        if found_p:
            if not isinstance(patch[okey], list):
                raise _bad_arg_type("[]interface {}", patch[okey])
            pfield = patch[okey]
        sub, meta = _meta_slice(schema, okey)
        _, strategy = _retain_keys_strategy(meta.strategies)
        _validate_with_order(pfield, order, meta.merge_key)
        if found_o and not found_p:
            merged = ofield
        elif found_p and not found_o:
            merged, _ = _remove_directives(pfield)
        elif found_o and found_p:
            merged = _merge_slice_handler(ofield, pfield, sub, strategy, meta.merge_key, False,
                                          merge_parallel, ignore_unmatched_nulls)
        else:
            continue
        if not meta.merge_key:
            items, server_only = _partition_primitives(merged, order)
        else:
            items, server_only = _partition_maps(merged, order, meta.merge_key)
        kind = _element_kind(ofield, pfield)
        original[okey] = _normalize_element_order(items, server_only, order, ofield, meta.merge_key, kind)
        patch.pop(okey, None)


def _validate_with_order(plist: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not plist:
        return
    non_delete = _extract_deletes(plist)[0] if merge_key else plist
    pi = si = 0
    while pi < len(non_delete) and si < len(order):
        if isinstance(non_delete[pi], dict) and DIRECTIVE in non_delete[pi]:
            pi += 1
            continue
        if _merge_key_equal(non_delete[pi], order[si], merge_key):
            pi += 1
        si += 1
    if pi < len(non_delete) and si >= len(order):
        raise StrategicPatchError(f"The order in patch list:\n{sprint_v(plist)}\n doesn't match "
                                  f"{SET_ELEMENT_ORDER} list:\n{sprint_v(order)}\n")


def _partition_primitives(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    server_only: list[Any] = []
    for v in items:
        (inside if any(go_eq(v, x) for x in by) else server_only).append(v)
    return inside, server_only


def _partition_maps(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    server_only: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        (inside if _find_by_key(by, merge_key, v[merge_key]) >= 0 else server_only).append(v)
    return inside, server_only


def _find_by_key(items: list[Any], key: str, value: Any) -> int:
    for i, v in enumerate(items):
        if not isinstance(v, dict):
            raise StrategicPatchError(f"value for key {i} is not a map")
        if key in v and (go_eq(v[key], value) or (v[key] is None and value is None)):
            return i
    return -1


def _normalize_element_order(items: list[Any], server_only: list[Any], order: list[Any], server_order: list[Any],
                             merge_key: str, kind: str) -> list[Any]:
    items = _normalize_slice_order(items, order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted(server_only, items, server_order, merge_key, kind)


def _merge_sorted(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str,
                  kind: str) -> list[Any]:
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _merge_slice_handler(original: Any, patch: Any, schema: StructMeta, strategy: str, merge_key: str,
                         is_delete_list: bool, merge_parallel: bool, ignore_unmatched_nulls: bool) -> list[Any]:
    if not isinstance(original, list):
        raise _bad_arg_type("[]interface {}", original)
    if not isinstance(patch, list):
        raise _bad_arg_type("[]interface {}", patch)
    if strategy == MERGE or is_delete_list:
        return _merge_slice(original, patch, schema, merge_key, is_delete_list, merge_parallel,
                            ignore_unmatched_nulls)
    return patch


def _merge_slice(original: list[Any], patch: list[Any], schema: StructMeta, merge_key: str, is_delete_list: bool,
                 merge_parallel: bool, ignore_unmatched_nulls: bool) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map":
        if merge_parallel and is_delete_list:
            return [v for v in original if not any(go_eq(v, d) for d in patch)]
        merged = _dedup_scalars(original + patch)
        server_order = original
    else:
        if not merge_key:
            raise StrategicPatchError(f"cannot merge lists without merge key for {schema.name()}")
        # Go slices share their backing array: a deletion shifts the caller's items in place, and an
        # item appended after a deletion overwrites the caller's next one (its length unchanged). The
        # orders computed afterwards (here and in a $setElementOrder merge) read those arrays, so
        # ``backing`` is the caller's list itself and ``n`` the length of this function's slice
        backing, n, patch = _merge_special_elements(original, patch, merge_key)
        merged = _merge_without_special_elements(backing, n, patch, merge_key, schema, merge_parallel,
                                                 ignore_unmatched_nulls)
        server_order = backing[:n]
    if not merge_key:
        items, server_only = _partition_primitives(merged, patch)
    else:
        items, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_element_order(items, server_only, patch, server_order, merge_key, kind)


def _merge_special_elements(original: list[Any], patch: list[Any], merge_key: str) -> tuple[list[Any], int, list[Any]]:
    """``mergeSliceWithSpecialElements``: the items ``$patch: delete`` removes from ``original``
    (in place: the backing array and the slice's new length), or the patch's items alone for a
    ``$patch: replace``; and the patch without its directive items."""
    plain: list[Any] = []
    replace = False
    n = len(original)
    for v in patch:
        if DIRECTIVE not in v:
            plain.append(v)
            continue
        d = v[DIRECTIVE]
        if d == DELETE:
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            n = _delete_matching(original, n, merge_key, v[merge_key])
        elif d == REPLACE:
            replace = True
        elif d == MERGE:
            raise StrategicPatchError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(d, v)
    if replace:
        return plain, len(plain), []
    return original, n, plain


def _delete_matching(backing: list[Any], n: int, key: str, value: Any) -> int:
    """``deleteMatchingEntries`` on ``backing[:n]``: Go's ``append(s[:i], s[i+1:]...)`` shifts the
    items left within the backing array, whose last item stays as it was. The new length."""
    while True:
        i = _find_by_key(backing[:n], key, value)
        if i < 0:
            return n
        backing[i:n - 1] = backing[i + 1:n]
        n -= 1


def _merge_without_special_elements(backing: list[Any], n: int, patch: list[Any], merge_key: str,
                                    schema: StructMeta, merge_parallel: bool,
                                    ignore_unmatched_nulls: bool) -> list[Any]:
    """``mergeSliceWithoutSpecialElements`` on the slice ``backing[:n]``: an item with a known key is
    merged in place; a new one is appended, into the backing array while it has room (the
    caller's own length: decoded slices have no spare room the caller can see), else into a new
    array."""
    current = backing
    for v in patch:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        i = _find_by_key(current[:n], merge_key, v[merge_key])
        if i >= 0:
            current[i] = _merge_map(current[i], v, schema, merge_parallel=merge_parallel,
                                    ignore_unmatched_nulls=ignore_unmatched_nulls)
        elif n < len(current):
            current[n] = v
            n += 1
        else:
            current = [*current[:n], v]
            n += 1
    return current[:n]
