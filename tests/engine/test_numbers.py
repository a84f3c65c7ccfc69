"""typed/numbers.py: JSON numbers as the API server's validator holds and tests them (Go's int64 and
float64, swag's and strconv's rules), value for value."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kubectl_fieldown.typed.numbers import enum_match, go_deep_equal, go_int64, held, is_json_integer, range_error


@pytest.mark.parametrize(("v", "want"), [
    (7, 7), (2**63 - 1, 2**63 - 1), (-(2**63), -(2**63)),
    (2**63, 9.223372036854775808e18), (-(2**63) - 1, -9.223372036854775808e18),
    (123456789012345678901, 1.2345678901234568e20), (10**400, math.inf), (-(10**400), -math.inf),
    (1.5, 1.5), ("x", "x"), (True, True), (None, None),
])
def test_held_gives_the_go_type_of_a_decoded_number(v: Any, want: Any) -> None:
    got = held(v)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(("f", "want"), [
    (2.0, True), (-3.0, True), (0.0, True), (1.5, False), (0.5, False), (-0.5, False),
    # swag's relative tolerance: within 1e-9 of a non-zero integer counts
    (1.0000000001, True), (1.00000001, False), (1e-10, False),
    (2.0**53 - 1, True), (2.0**53, False), (1e21, False), (math.inf, False), (math.nan, False),
])
def test_is_json_integer_is_swags(f: float, want: bool) -> None:
    assert is_json_integer(f) is want


@pytest.mark.parametrize(("v", "type_name", "fmt", "want"), [
    (5, "integer", "", ""),
    (2.0, "integer", "", ""),
    (1.5, "integer", "", "Checked value must be of type integer (default format) in spec.x"),
    (1.0000000001, "integer", "", "Checked value must be of type integer (default format) in spec.x"),
    (1e18, "integer", "", ""),  # its text is 1000000000000000000: an int64
    (9223372036854776000, "integer", "", "Checked value must be of type integer (default format) in spec.x"),
    (2**31 - 1, "integer", "int32", ""),
    (2**31, "integer", "int32", "Checked value must be of type integer with format int32 in spec.x"),
    (-(2**31) - 1, "integer", "int32", "Checked value must be of type integer with format int32 in spec.x"),
    (2**40, "integer", "int64", ""),
    # a format that is not the type's counts as none
    (2**40, "integer", "date-time", ""),
    (3.4e38, "number", "float", ""),
    (3.5e38, "number", "float", "Checked value must be of type number with format float in spec.x"),
    (-1e39, "number", "float", "Checked value must be of type number with format float in spec.x"),
    (1e-50, "number", "float", ""),  # strconv reports no underflow
    (1e300, "number", "double", ""), (1e300, "number", "", ""), (1e300, "", "", ""),
])
def test_range_error_is_kube_openapis(v: Any, type_name: str, fmt: str, want: str) -> None:
    assert range_error(v, type_name, fmt, "Checked", "spec.x") == want


@pytest.mark.parametrize(("f", "want"), [
    (2.9, 2), (-2.9, -2), (0.5, 0), (1e30, -(2**63)), (-1e30, -(2**63)), (math.nan, -(2**63)),
    (2.0**63, -(2**63)), (-(2.0**63), -(2**63)),
])
def test_go_int64_converts_as_amd64_does(f: float, want: int) -> None:
    assert go_int64(f) == want


@pytest.mark.parametrize(("a", "b", "want"), [
    (10, 10, True), (10, 10.0, False), (1.5, 1.5, True), (True, 1, False), ("a", "a", True),
    (2**64, 18446744073709552000, True),  # both the float64 2**64
    ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}, True), ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}, False),
    ({"a": 1}, {"a": 1, "b": None}, False), ([1, 2], [1, 2, 3], False), (None, None, True), (None, {}, False),
])
def test_go_deep_equal_tells_int64_from_float64(a: Any, b: Any, want: bool) -> None:
    assert go_deep_equal(a, b) is want


@pytest.mark.parametrize(("v", "e", "want"), [
    (1, 1, True), (2.0, 2, True), (1.5, 1, True),  # float64 -> int64 truncates: the lab accepts 1.5
    (1, 1.5, False), (2, 2.0, True), (3, 2, False), ("a", "a", True), (65, "A", True), (-1, "\ufffd", True),
    ("1", 1, False), (True, 1, False), (True, True, True), ([1], [1], True), ([1], [1.0], False),
])
def test_enum_match_converts_as_go_does(v: Any, e: Any, want: bool) -> None:
    assert enum_match(v, e) is want
