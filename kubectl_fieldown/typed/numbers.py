"""JSON numbers as the API server's validator holds them.

The server decodes a JSON number into an int64 when it is an integer that fits, else into a
float64. The engine reads numbers as Python ints and floats; an int outside int64's range stands
for the float64 the server holds (the manifest reader and the server's own JSON both give such ints
for whole float64 values). kube-openapi's checks then depend on that Go type: an int64 is an
``integer``, a float64 a ``number`` — an integer field given ``123456789012345678901`` fails its
type check and the range check of ``IsValueValidAgainstRange`` — and the float tests are swag's,
with their tolerance.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

from ..base.value import go_format_float_f

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: swag's ``maxJSONFloat``: beyond it a float64 is never a JSON integer
_MAX_JSON_FLOAT = float(2**53 - 1)
_EPSILON = 1e-9


def held(v: Any) -> Any:
    """``v`` as the server holds it: an int outside int64 becomes its float64 (inf beyond the
    float range); anything else is returned as it is."""
    if type(v) is int and not INT64_MIN <= v <= INT64_MAX:
        try:
            return float(v)
        except OverflowError:
            return math.inf if v > 0 else -math.inf
    return v


def is_json_integer(f: float) -> bool:
    """swag ``IsFloat64AJSONInteger``: finite, within 2**53-1, and integral up to a relative 1e-9
    (so ``1.0000000001`` counts as an integer)."""
    if math.isnan(f) or math.isinf(f) or abs(f) > _MAX_JSON_FLOAT:
        return False
    rounded = _go_round(f)
    if f == rounded:
        return True
    if rounded == 0:
        return False
    return abs(f - rounded) < _EPSILON * abs(rounded)


def _go_round(f: float) -> float:
    """Go ``math.Round``: half away from zero (Python's ``round`` rounds half to even)."""
    t = float(math.trunc(f))
    if abs(f - t) >= 0.5:
        t += math.copysign(1.0, f)
    return t


def go_int64(f: float) -> int:
    """Go's ``int64(f)`` conversion on amd64: truncation; NaN and values out of range give
    math.MinInt64 (the CPU's "integer indefinite")."""
    if math.isnan(f) or not -(2.0**63) <= f < 2.0**63:
        return INT64_MIN
    return int(f)


def range_error(v: int | float, type_name: str, fmt: str, prefix: str, path: str) -> str:
    """kube-openapi ``IsValueValidAgainstRange``: "" when ``v``'s text (an int64's digits, a
    float64's shortest fixed form) parses as the type and format, else the plain error the CRD
    validator reports (apiextensions prints it at field ``<nil>``). ``fmt`` counts only where it is
    int32/int64 for an integer, float/double for a number; a ``number`` of any other format is not
    checked (nothing is wider than a float64)."""
    v = held(v)
    if type_name == "integer":
        if fmt not in ("int32", "int64"):
            fmt = ""
        bits = 32 if fmt == "int32" else 64
        ok = _parses_as_int(v, bits)
    elif type_name == "number":
        if fmt not in ("float", "double"):
            fmt = ""
        ok = fmt != "float" or _fits_float32(v)
    else:
        return ""
    if ok:
        return ""
    if fmt:
        return f"{prefix} value must be of type {type_name} with format {fmt} in {path}"
    return f"{prefix} value must be of type {type_name} (default format) in {path}"


def _parses_as_int(v: int | float, bits: int) -> bool:
    """strconv.ParseInt(text, 10, bits) of the value's Go text succeeds."""
    n: int
    if type(v) is int:
        n = int(v)
    else:
        text = go_format_float_f(float(v))
        if "." in text or not text.lstrip("-").isdigit():
            return False  # a fraction, NaN, +Inf
        n = int(text)
    return -(1 << (bits - 1)) <= n <= (1 << (bits - 1)) - 1


def _fits_float32(v: int | float) -> bool:
    """strconv.ParseFloat(text, 32) succeeds: the value does not round to a float32 infinity
    (Go reports no underflow)."""
    if type(v) is int:
        return True
    if math.isinf(v) or math.isnan(v):
        return True  # "+Inf"/"NaN" parse as such, without a range error
    try:
        struct.pack("<f", v)
    except OverflowError:
        return False
    return True


def go_deep_equal(a: Any, b: Any) -> bool:
    """Go's ``reflect.DeepEqual`` of two decoded JSON values, as validation ratcheting compares an
    old value with a new one: an int64 is never equal to a float64 (``10`` and ``10.0`` differ)."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is dict or (ta is not list and isinstance(a, Mapping)):
        if (type(b) is not dict and not isinstance(b, Mapping)) or len(a) != len(b):
            return False
        for k, x in a.items():
            y = b.get(k, _MISSING)
            if y is _MISSING or not go_deep_equal(x, y):
                return False
        return True
    if ta is list:
        return tb is list and len(a) == len(b) and all(go_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if (ta is int or ta is float) and (tb is int or tb is float):
        ha, hb = held(a), held(b)
        same: bool = type(ha) is type(hb) and ha == hb
        return same
    same_scalar: bool = ta is tb and a == b
    return same_scalar


_MISSING: Any = object()


def enum_match(v: Any, e: Any) -> bool:
    """kube-openapi ``Enum`` for one allowed value: Go's DeepEqual, or DeepEqual after converting the
    value to the allowed value's Go type where Go converts (an int64 to a float64, a float64 to an
    int64 by truncation — so ``1.5`` matches ``enum: [1]`` — and an int64 to the string of that
    rune)."""
    hv, he = held(v), held(e)
    if go_deep_equal(hv, he):
        return True
    tv, te = type(hv), type(he)
    if tv is int and te is float:
        return bool(float(hv) == he)
    if tv is float and te is int:
        return go_int64(float(hv)) == int(he)
    if tv is int and te is str:
        return _go_rune_string(int(hv)) == str(he)
    return False


def _go_rune_string(n: int) -> str:
    """Go's ``string(rune)`` conversion of an int64: the character, or U+FFFD where it is none."""
    if 0 <= n <= 0x10FFFF and not 0xD800 <= n <= 0xDFFF:
        return chr(n)
    return "\ufffd"
