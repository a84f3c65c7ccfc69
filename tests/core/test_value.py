"""Typed values: the server's equality, total order and Go text forms (ssa-semantics §1, §2.1, §3)."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kubectl_fieldown.base.value as value
from kubectl_fieldown.base.value import (
    RANK_BOOL,
    RANK_LIST,
    RANK_MAP,
    RANK_NULL,
    RANK_NUMBER,
    RANK_STRING,
    ValueError_,
    compare_values,
    go_format_float_v,
    go_json,
    go_json_float,
    go_json_string_html,
    go_json_string_plain,
    go_quote,
    go_value_string,
    key_value,
    value_key,
    value_on_one_line,
    values_equal,
)

from .strategies import floats, json_values

# --- equality ----------------------------------------------------------------------------------

EQUALITY = [
    # (a, b, equal?)
    (1, 1.0, True),
    (3, 3.0, True),
    (0, -0.0, True),
    (2, 2.5, False),
    (True, 1, False),
    (True, 1.0, False),
    (False, 0, False),
    (False, 0.0, False),
    (True, True, True),
    (False, True, False),
    ("1", 1, False),
    ("", None, False),
    (None, None, True),
    (None, 0, False),
    (None, False, False),
    ([], [], True),
    ([], {}, False),
    ([1, 2], [1.0, 2.0], True),
    ([1], [1, 2], False),
    ([1, 2], [2, 1], False),
    ([True], [1], False),
    ([None], [], False),
    ({}, {}, True),
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ({"a": None}, {"b": None}, False),
    ({"a": None}, {}, False),
    ({"a": True}, {"a": 1}, False),
    ({"a": [1, {"b": [2, "x", None]}]}, {"a": [1.0, {"b": [2.0, "x", None]}]}, True),
    ({"a": [1, {"b": [2, "x", None]}]}, {"a": [1.0, {"b": [2.0, "y", None]}]}, False),
    ([{"k": [[]]}], [{"k": [[]]}], True),
    ([{"k": [[]]}], [{"k": [{}]}], False),
]


@pytest.mark.parametrize(("a", "b", "equal"), EQUALITY)
def test_values_equal(a: Any, b: Any, equal: bool) -> None:
    assert values_equal(a, b) is equal
    assert values_equal(b, a) is equal


@pytest.mark.parametrize(("a", "b", "equal"), EQUALITY)
def test_value_key_matches_equality_and_hash(a: Any, b: Any, equal: bool) -> None:
    ka, kb = value_key(a), value_key(b)
    assert (ka == kb) is equal
    if equal:
        assert hash(ka) == hash(kb)
    assert (compare_values(a, b) == 0) is equal


def test_bool_and_number_keys_never_collide_in_python_sets() -> None:
    # Python: True == 1 and hash(True) == hash(1), so {True, 1} has one element. The server: two.
    assert len({True, 1}) == 1  # noqa: B033
    assert len({value_key(True), value_key(1)}) == 2
    assert len({value_key(False), value_key(0), value_key(0.0), value_key(None), value_key("")}) == 4


def test_value_key_ranks() -> None:
    assert value_key(1)[0] == value_key(1.5)[0] == RANK_NUMBER
    assert value_key("x")[0] == RANK_STRING
    assert value_key(True)[0] == RANK_BOOL
    assert value_key([1])[0] == value_key((1,))[0] == RANK_LIST
    assert value_key({"a": 1})[0] == RANK_MAP
    assert value_key(None) == (RANK_NULL,)


@pytest.mark.parametrize(
    "v", [0, 1, 1.5, -2, "s", True, False, None, [1, "a", [None]], {"b": {"c": [1.5, True]}, "a": 1}]
)
def test_key_value_inverts_value_key(v: Any) -> None:
    back = key_value(value_key(v))
    assert back == v
    assert values_equal(back, v)
    # the Python type survives (an int stays an int: its text form differs from a float's)
    assert json.dumps(back, sort_keys=True) == json.dumps(v, sort_keys=True)


def test_unsupported_types() -> None:
    with pytest.raises(ValueError_):
        value_key(object())
    with pytest.raises(ValueError_):
        go_json({1, 2})
    with pytest.raises(ValueError_):
        go_value_string(object())


# --- total order -------------------------------------------------------------------------------

ASCENDING: list[Any] = [
    # numbers, ints and floats compared numerically
    -5,
    -2.5,
    0,
    1,
    1.5,
    2,
    10,
    1e21,
    # strings, bytewise (== code point order)
    "",
    "10",
    "2",
    "a",
    "ab",
    "b",
    "é",
    "😀",
    # bools
    False,
    True,
    # lists: elementwise, a prefix first
    [],
    [1],
    [1, 2],
    [1, "a"],
    [2],
    ["a"],
    [False],
    [[]],
    [{}],
    [None],
    # maps (SMD MapCompareUsing): sorted keys walked together; at each key, a missing key on one side
    # decides (the side that has the smaller key is smaller), else the values decide; a prefix first
    {},
    {"a": 1},
    {"a": 1, "b": 1},
    {"a": 1, "b": 5},
    {"a": 1, "c": 0},
    {"a": 2},
    {"a": None},  # null is the greatest value
    {"b": 0},
    # null
    None,
]


def test_ascending_table_is_strictly_ascending() -> None:
    for i, j in itertools.combinations(range(len(ASCENDING)), 2):
        a, b = ASCENDING[i], ASCENDING[j]
        assert compare_values(a, b) == -1, (a, b)
        assert compare_values(b, a) == 1, (b, a)
        assert value_key(a) < value_key(b)
    for a in ASCENDING:
        assert compare_values(a, a) == 0


def test_sorting_by_value_key_restores_the_table() -> None:
    shuffled = list(ASCENDING)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=value_key) == ASCENDING


def test_map_order_interleaves_keys_and_values() -> None:
    # Neither "fewer keys first" nor "compare the key lists, then the values": the first key decides
    # by its value before the second key is looked at.
    assert compare_values({"a": 2}, {"a": 1, "b": 1}) == 1
    assert compare_values({"a": 1}, {"a": 1, "b": 1}) == -1
    assert compare_values({"b": 0}, {"a": 9, "c": 9}) == 1
    assert compare_values({"a": 1, "c": 0}, {"a": 1, "b": 9}) == 1
    assert compare_values({"a": {"x": 1}}, {"a": {"x": 1.0}}) == 0


def test_numbers_compare_across_int_and_float() -> None:
    assert compare_values(1, 1.0) == 0
    assert compare_values(2, 1.5) == 1
    assert compare_values(-0.0, 0) == 0
    assert compare_values(1e300, "") == -1  # any number < any string
    assert compare_values(True, 2) == 1  # bools after numbers, never numeric


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=4))
def test_order_equality_and_json_agree(vs: list[Any]) -> None:
    for a, b in itertools.product(vs, repeat=2):
        c = compare_values(a, b)
        assert c in (-1, 0, 1)
        assert compare_values(b, a) == -c
        assert (c == 0) == values_equal(a, b)
        assert (value_key(a) == value_key(b)) == values_equal(a, b)
    # sorting by value_key and comparing pairwise agree for every pair (a total order), not only neighbours
    ordered = sorted(vs, key=value_key)
    for x, y in itertools.combinations(ordered, 2):
        assert compare_values(x, y) <= 0
    for v in vs:
        text = go_json(v)
        assert values_equal(json.loads(text, parse_int=float), v)  # the server reads float64s
        # compact: no whitespace outside strings
        assert not re.search(r"\s", re.sub(r'"(\\.|[^"\\])*"', '""', text))


# --- Go %v floats (path strings) ---------------------------------------------------------------

GO_V = [
    (80.0, "80"),
    (1.5, "1.5"),
    (1e6, "1e+06"),
    (123456.0, "123456"),
    (999999.0, "999999"),
    (1234567.0, "1.234567e+06"),
    (12345678.9, "1.23456789e+07"),
    (1e-05, "1e-05"),
    (0.0001, "0.0001"),
    (0.00012345, "0.00012345"),
    (-2.5, "-2.5"),
    (1e21, "1e+21"),
    (1e20, "1e+20"),
    (1e100, "1e+100"),
    (-1e-7, "-1e-07"),
    (0.1, "0.1"),
    (1 / 3, "0.3333333333333333"),
    (0.0, "0"),
    (-0.0, "-0"),
    (100000.0, "100000"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
]


@pytest.mark.parametrize(("f", "text"), GO_V)
def test_go_format_float_v(f: float, text: str) -> None:
    assert go_format_float_v(f) == text


# --- Go encoding/json floats (inside k:/v:) ----------------------------------------------------

GO_JSON_FLOATS = [
    (80.0, "80"),
    (443.0, "443"),
    (1.5, "1.5"),
    (-2.5, "-2.5"),
    (1e6, "1000000"),
    (123456789.0, "123456789"),
    (1e20, "100000000000000000000"),
    (9.99e20, "999000000000000000000"),
    (1e21, "1e+21"),
    (1.2345e22, "1.2345e+22"),
    (1e-6, "0.000001"),
    (1.5e-6, "0.0000015"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (-1e-7, "-1e-7"),
    (1e-10, "1e-10"),
    (5e-324, "5e-324"),
    (0.0, "0"),
    (-0.0, "-0"),
    (0.1, "0.1"),
]


@pytest.mark.parametrize(("f", "text"), GO_JSON_FLOATS)
def test_go_json_float(f: float, text: str) -> None:
    assert go_json_float(f) == text
    assert go_json(f) == text
    assert float(text) == f


@pytest.mark.parametrize("f", [math.nan, math.inf, -math.inf])
def test_go_json_float_rejects_non_finite(f: float) -> None:
    with pytest.raises(ValueError_):
        go_json_float(f)


@settings(max_examples=200, deadline=None)
@given(floats)
def test_go_float_forms_round_trip_and_pick_the_right_notation(f: float) -> None:
    j = go_json_float(f)
    assert float(j) == f
    a = abs(f)
    if a == 0 or 1e-6 <= a < 1e21:
        assert "e" not in j
    else:
        assert re.fullmatch(r"-?\d(\.\d+)?e[-+][1-9]\d*", j), j
    v = go_format_float_v(f)
    assert float(v) == f
    if "e" in v:
        assert re.fullmatch(r"-?\d(\.\d+)?e[-+]\d{2,}", v), v
    assert not v.endswith(".0") and not j.endswith(".0")


@settings(max_examples=500, deadline=None)
@given(floats)
def test_shortest_digits_read_from_repr_agree_with_decimal(f: float) -> None:
    from decimal import Decimal

    from kubectl_fieldown.base.value import _shortest_digits

    if f == 0 or math.isinf(f) or math.isnan(f):
        return
    _, digits, exp = Decimal(repr(abs(f))).as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    expected = text.rstrip("0") or "0"
    assert _shortest_digits(f) == (expected, len(expected) + exp + len(text) - len(expected))
    assert float(f"0.{expected}e{len(expected) + exp + len(text) - len(expected)}") == abs(f)


def test_go_json_of_composite_values() -> None:
    assert go_json({"b": 1, "a": [1.5, True, None, "<"]}) == '{"a":[1.5,true,null,"\\u003c"],"b":1}'
    assert go_json(10**21) == "1000000000000000000000"  # an int is never written in exponent form
    assert go_json(1e21) == "1e+21"
    assert go_json({"<": {}}) == '{"\\u003c":{}}'
    assert go_json([]) == "[]"
    assert go_json({}) == "{}"
    assert go_json(False) == "false"


# --- strconv.Quote (%q in path strings and conflict messages) ----------------------------------

GO_QUOTE = [
    ("nginx", '"nginx"'),
    ("a b", '"a b"'),
    ("\a", '"\\a"'),
    ("\b", '"\\b"'),
    ("\f", '"\\f"'),
    ("\n", '"\\n"'),
    ("\r", '"\\r"'),
    ("\t", '"\\t"'),
    ("\v", '"\\v"'),
    ("\x00", '"\\x00"'),
    ("\x01", '"\\x01"'),
    ("\x1b", '"\\x1b"'),
    ("\x7f", '"\\x7f"'),
    ("\u0085", '"\\u0085"'),
    ("\u00a0", '"\\u00a0"'),
    ("\u200b", '"\\u200b"'),
    ("\u2028", '"\\u2028"'),
    ("\ufeff", '"\\ufeff"'),
    ("\U000e0001", '"\\U000e0001"'),
    ("😀", '"😀"'),
    ("é", '"é"'),
    ("日本", '"日本"'),
    ('"', '"\\""'),
    ("\\", '"\\\\"'),
    ("<&>", '"<&>"'),  # %q does no HTML escaping
    ("\ud800", '"\\xed\\xa0\\x80"'),  # a lone surrogate is invalid UTF-8: one \x per byte
    ('a"b\\c\nd', '"a\\"b\\\\c\\nd"'),
]


@pytest.mark.parametrize(("s", "quoted"), GO_QUOTE)
def test_go_quote(s: str, quoted: str) -> None:
    assert go_quote(s) == quoted


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text(alphabet=st.sampled_from('ab "\\\x7f\t')))
def test_go_quote_of_ascii_is_gos(s: str) -> None:
    # printable ASCII takes a shortcut: it must still be what Go prints (the oracle, char by char)
    from fieldsv1_oracle import _go_quote

    assert go_quote(s) == _go_quote(s)


# --- JSON strings: HTML-escaped (encoding/json, jsoniter WriteStringWithHTMLEscaped) and plain ----

JSON_HTML = [
    ("<", '"\\u003c"'),
    (">", '"\\u003e"'),
    ("&", '"\\u0026"'),
    ("a<b&\"c", '"a\\u003cb\\u0026\\"c"'),
    ("\u2028", '"\\u2028"'),
    ("\u2029", '"\\u2029"'),
    ("\b", '"\\u0008"'),
    ("\f", '"\\u000c"'),
    ("\x00", '"\\u0000"'),
    ("\x1f", '"\\u001f"'),
    ("\n", '"\\n"'),
    ("\r", '"\\r"'),
    ("\t", '"\\t"'),
    ('"', '"\\""'),
    ("\\", '"\\\\"'),
    ("\x7f", '"\x7f"'),
    ("é😀", '"é😀"'),
    ("\u200b", '"\u200b"'),
    ("\ud800", '"\\ufffd"'),
]


@pytest.mark.parametrize(("s", "encoded"), JSON_HTML)
def test_go_json_string_html(s: str, encoded: str) -> None:
    assert go_json_string_html(s) == encoded
    assert go_json(s) == encoded


JSON_PLAIN = [
    ("<>&", '"<>&"'),
    ("\u2028", '"\u2028"'),
    ("\b", '"\\u0008"'),
    ("\n\r\t", '"\\n\\r\\t"'),
    ('"\\', '"\\"\\\\"'),
    ("é", '"é"'),
]


@pytest.mark.parametrize(("s", "encoded"), JSON_PLAIN)
def test_go_json_string_plain(s: str, encoded: str) -> None:
    assert go_json_string_plain(s) == encoded


@given(st.text(alphabet=st.sampled_from(list(' az~09<>&"\\\x7f\x1f\n\u2028\ud800é'))) | st.text(), st.booleans())
def test_json_string_shortcut_agrees_with_the_escaping_loop(s: str, html: bool) -> None:
    # printable ASCII without quote, backslash (or <>& for HTML) is returned as it is, unescaped
    assert value._json_string(s, html) == value._escaped_json_string(s, html)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_json_strings_parse_back(s: str) -> None:
    assert json.loads(go_json_string_html(s)) == s
    assert json.loads(go_json_string_plain(s)) == s
    html = go_json_string_html(s)
    assert not any(c in html for c in "<>&\u2028\u2029")
    assert not any(ord(c) < 0x20 for c in html + go_json_string_plain(s))


# --- value.ToString (values inside [...] in path strings) --------------------------------------

TO_STRING = [
    (None, "null"),
    (True, "true"),
    (False, "false"),
    (80, "80"),
    (80.0, "80"),
    (1e6, "1e+06"),
    (-1.5, "-1.5"),
    ("nginx", '"nginx"'),
    ("a\tb", '"a\\tb"'),
    ([1, "a", None], '[1,"a",null]'),
    ([], "[]"),
    ({"b": 1, "a": "x"}, 'a="x"b=1'),
    ({}, ""),
]


@pytest.mark.parametrize(("v", "text"), TO_STRING)
def test_go_value_string(v: Any, text: str) -> None:
    assert go_value_string(v) == text


def test_integers_beyond_2_53_meet_floats_as_float64() -> None:
    # the server reads numbers in managedFields as float64 and SMD compares int with float as
    # float64: an object's id 2**53+1 is the stored key 2**53 (tests/conformance/regressions/diff-807693)
    from kubectl_fieldown.base.value import key_value

    big, stored = 2**53 + 1, float(2**53)
    assert value_key(big) == value_key(stored) and hash(value_key(big)) == hash(value_key(stored))
    assert values_equal(big, stored)
    assert value_key(big) != value_key(2**53)  # two ints compare exactly, as two int64 do
    assert key_value(value_key(big)) == big and type(key_value(value_key(big))) is int
    assert sorted([value_key(stored + 4096), value_key(big), value_key(1)]) == [
        value_key(1), value_key(big), value_key(stored + 4096)
    ]


@pytest.mark.parametrize(("v", "limit", "text"), [
    ("plain", 80, "plain"),
    ("42", 80, '"42"'),
    ("true", 80, '"true"'),
    (" padded", 80, '" padded"'),
    ("", 80, '""'),
    (None, 80, "null"),
    (False, 80, "false"),
    (3, 80, "3"),
    (1.5, 80, "1.5"),
    ({"a": [1, "x"]}, 80, '{"a":[1,"x"]}'),
    ("\x1b[31mred", 80, '"\\u001b[31mred"'),
    ("abcdef", 4, "abc…"),
    ("abcdef", 0, "abcdef"),
])
def test_value_on_one_line(v: object, limit: int, text: str) -> None:
    assert value_on_one_line(v, limit) == text


def test_excerpt_and_bounded_message() -> None:
    from kubectl_fieldown.base.value import MESSAGE_LIMIT, bounded_message, excerpt

    assert excerpt("short") == "short"
    long = "9" * 5000
    assert excerpt(long) == "9" * 79 + "… (5,000 characters)"
    assert bounded_message(f"--x must be small, not {long}") == f"--x must be small, not {excerpt(long)}"
    words = " ".join(["word"] * 2000)  # a long message of short words loses its middle
    out = bounded_message(words)
    assert len(out) < MESSAGE_LIMIT + 60 and "characters left out" in out
    assert out.startswith("word word") and out.endswith("word word")
