"""The Go value semantics a strategic merge patch depends on, for JSON decoded by apimachinery.

apimachinery's ``json.Unmarshal`` into ``interface{}`` yields ``map[string]interface{}``,
``[]interface{}``, ``string``, ``bool``, ``int64`` (whole numbers), ``float64`` and ``nil``; Python's
``json`` gives dict, list, str, bool, int, float and None, one for one. What the patch code then
does with them:

* ``reflect.TypeOf`` / ``reflect.DeepEqual``: an int64 and a float64 are different types, so ``1``
  and ``1.0`` differ (:func:`go_type`, :func:`deep_equal`); ``==`` on interfaces likewise
  (:func:`go_eq`);
* ``fmt.Sprintf("%v")`` and ``%s`` (:func:`sprint_v`, :func:`sprint_s`): merge keys and scalars
  are compared and sorted as these strings, and error messages print values so;
* ``sort.Sort`` with ``sort.StringsAreSorted`` as ``Less`` (true for equal strings: Go's insertion
  sort, used up to 12 items, then moves an item before its equals) and ``sort.SliceStable``
  (:func:`go_sort`, :func:`go_stable_sort`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.value import go_json_float

__all__ = ["deep_equal", "go_eq", "go_sort", "go_stable_sort", "go_type", "sprint_s", "sprint_v"]


def go_type(v: Any) -> str:
    """The dynamic type's name (``reflect.TypeOf``); ``"nil"`` for null."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of two decoded JSON values."""
    ta, tb = go_type(a), go_type(b)
    if ta != tb:
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def go_eq(a: Any, b: Any) -> bool:
    """``==`` on two ``interface{}`` values of scalars: same dynamic type and value. (Go panics on
    maps and slices; they are never equal here.)"""
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return go_type(a) == go_type(b) and bool(a == b)


def _float_v(f: float) -> str:
    # %v of a float64 is %g with the shortest digits: exponent form below 1e-4 and from 1e21
    a = abs(f)
    if a != 0 and (a < 1e-4 or a >= 1e21):
        mant, _, exp = repr(f).partition("e")
        if not exp:
            return repr(f)
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").lstrip("0")
        return f"{mant}e{sign}{digits.zfill(2)}"
    return go_json_float(f)


def sprint_v(v: Any) -> str:
    """``fmt.Sprintf("%v", v)``."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float_v(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "[" + " ".join(sprint_v(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{sprint_v(v[k])}" for k in sorted(v)) + "]"
    return str(v)


def sprint_s(v: Any) -> str:
    """``fmt.Sprintf("%s", v)``: strings as they are, other scalars as ``%!s(type=value)``."""
    if isinstance(v, str):
        return v
    if v is None:
        return "%!s(<nil>)"
    if isinstance(v, (dict, list)):
        return sprint_v(v)
    return f"%!s({go_type(v)}={sprint_v(v)})"


def _insertion_sort(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
    for i in range(1, len(items)):
        j = i
        while j > 0 and less(items[j], items[j - 1]):
            items[j], items[j - 1] = items[j - 1], items[j]
            j -= 1


def go_sort(items: list[Any], key: Callable[[Any], str]) -> list[Any]:
    """``sort.Sort`` in place with ``Less(i, j) = StringsAreSorted(key(i), key(j))`` (i.e. ``<=``).
    Up to 12 items Go runs an insertion sort, which puts an item before the equal ones already
    sorted; beyond, pdqsort orders equal keys in a way not reproduced (a plain sort: only lists of
    more than 12 items with repeated keys can differ)."""
    if len(items) <= 12:
        _insertion_sort(items, lambda a, b: key(a) <= key(b))
    else:
        items.sort(key=key)
    return items


def go_stable_sort(items: list[Any], less: Callable[[Any, Any], bool]) -> list[Any]:
    """``sort.SliceStable`` in place: insertion sort of blocks of 20, then in-place merges
    (``symMerge``), as Go does."""
    n = len(items)
    block = 20
    a = 0
    while a + block <= n:
        part = items[a:a + block]
        _insertion_sort(part, less)
        items[a:a + block] = part
        a += block
    part = items[a:]
    _insertion_sort(part, less)
    items[a:] = part
    while block < n:
        a = 0
        while a + 2 * block <= n:
            _sym_merge(items, a, a + block, a + 2 * block, less)
            a += 2 * block
        if a + block < n:
            _sym_merge(items, a, a + block, n, less)
        block *= 2
    return items


def _sym_merge(d: list[Any], a: int, m: int, b: int, less: Callable[[Any, Any], bool]) -> None:
    # Go's symMerge (sort/zsortfunc.go), same comparisons in the same order
    if m - a == 1:
        i, j = m, b
        while i < j:
            h = (i + j) // 2
            if less(d[h], d[a]):
                i = h + 1
            else:
                j = h
        for k in range(a, i - 1):
            d[k], d[k + 1] = d[k + 1], d[k]
        return
    if b - m == 1:
        i, j = a, m
        while i < j:
            h = (i + j) // 2
            if not less(d[m], d[h]):
                i = h + 1
            else:
                j = h
        for k in range(m, i, -1):
            d[k], d[k - 1] = d[k - 1], d[k]
        return
    mid = (a + b) // 2
    n = mid + m
    if m > mid:
        start, r = n - b, mid
    else:
        start, r = a, m
    p = n - 1
    while start < r:
        c = (start + r) // 2
        if not less(d[p - c], d[c]):
            start = c + 1
        else:
            r = c
    end = n - start
    if start < m < end:
        _rotate(d, start, m, end)
    if a < start < mid:
        _sym_merge(d, a, start, mid, less)
    if mid < end < b:
        _sym_merge(d, mid, end, b, less)


def _rotate(d: list[Any], a: int, m: int, b: int) -> None:
    d[a:b] = d[m:b] + d[a:m]
