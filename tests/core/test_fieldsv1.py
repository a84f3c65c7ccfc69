"""The FieldsV1 codec (ssa-semantics §2): canonical bytes, decoding rules, both encode styles."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_fieldown.base.value import MAX_DEPTH
from kubectl_fieldown.fieldpath import (
    CANONICAL,
    KEY,
    UNSTRUCTURED,
    FieldSet,
    FieldsV1Error,
    Path,
    element_key,
    element_value,
    field,
    index,
    key,
    key_fields,
    parse_element,
    path_from_fields,
    set_value,
)
from kubectl_fieldown.fieldpath.fieldsv1 import decode, encode, to_json_object

F = path_from_fields


def fs(*paths: Path) -> FieldSet:
    return FieldSet(paths)


# --- §2.3 worked examples, byte for byte --------------------------------------------------------

CONTAINER = (*F("spec", "template", "spec", "containers"), key({"name": "nginx"}))
PORT = (*CONTAINER, field("ports"), key({"containerPort": 80, "protocol": "TCP"}))

DEPLOYMENT_APPLY = fs(
    F("metadata", "labels", "app"),
    F("spec", "replicas"),
    F("spec", "selector"),
    F("spec", "template", "metadata", "labels", "app"),
    CONTAINER,
    (*CONTAINER, field("image")),
    (*CONTAINER, field("name")),
    PORT,
    (*PORT, field("containerPort")),
)
DEPLOYMENT_APPLY_JSON = (
    '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":'
    '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":'
    '{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":'
    '{".":{},"f:containerPort":{}}}}}}}}}'
)

CONFIGMAP_UPDATE = fs(F("data"), F("data", "k"), F("metadata", "labels"), F("metadata", "labels", "a"))
CONFIGMAP_UPDATE_JSON = '{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}'

VALUE_ORDER = fs(*[(field("x"), set_value(v)) for v in ["a", True, 10, "10", False, 2]])
VALUE_ORDER_JSON = '{"f:x":{"v:2":{},"v:10":{},"v:\\"10\\"":{},"v:\\"a\\"":{},"v:false":{},"v:true":{}}}'

KEY_ORDER = fs(
    *[
        (field("p"), key(k))
        for k in [
            {"port": 443, "protocol": "TCP"},
            {"port": 80, "protocol": "UDP"},
            {"name": "z"},
            {"protocol": "TCP", "port": 80},
        ]
    ]
)
KEY_ORDER_JSON = (
    '{"f:p":{"k:{\\"name\\":\\"z\\"}":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{},'
    '"k:{\\"port\\":80,\\"protocol\\":\\"UDP\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"TCP\\"}":{}}}'
)

ESCAPING = fs((*F("l"), key({"name": 'a<b&"c'})), F('a"b'), F("<x>"))
ESCAPING_JSON = '{"f:<x>":{},"f:a\\"b":{},"f:l":{"k:{\\"name\\":\\"a\\\\u003cb\\\\u0026\\\\\\"c\\"}":{}}}'

EMPTY_MAP = fs(F("metadata", "labels"))
EMPTY_MAP_JSON = '{"f:metadata":{"f:labels":{}}}'

WORKED = [
    ("deployment-apply", DEPLOYMENT_APPLY, DEPLOYMENT_APPLY_JSON),
    ("configmap-update", CONFIGMAP_UPDATE, CONFIGMAP_UPDATE_JSON),
    ("value-order", VALUE_ORDER, VALUE_ORDER_JSON),
    ("key-order", KEY_ORDER, KEY_ORDER_JSON),
    ("escaping", ESCAPING, ESCAPING_JSON),
    ("empty-map", EMPTY_MAP, EMPTY_MAP_JSON),
    ("empty-set", FieldSet(), "{}"),
]


@pytest.mark.parametrize(("name", "s", "text"), WORKED, ids=[w[0] for w in WORKED])
def test_worked_examples_encode_byte_for_byte(name: str, s: FieldSet, text: str) -> None:
    assert encode(s) == text
    assert encode(s, CANONICAL) == text


@pytest.mark.parametrize(("name", "s", "text"), WORKED, ids=[w[0] for w in WORKED])
def test_worked_examples_decode(name: str, s: FieldSet, text: str) -> None:
    assert decode(text) == s
    assert decode(json.loads(text)) == s
    assert decode(text.encode()) == s
    assert encode(decode(text)) == text


def test_deployment_example_reads_as_documented() -> None:
    s = decode(DEPLOYMENT_APPLY_JSON)
    # structs are not members, list items are, the defaulted key field is in the key but not owned
    assert not s.has(F("spec")) and not s.has(F("spec", "template"))
    assert s.has(CONTAINER) and s.has(PORT)
    assert not s.has((*PORT, field("protocol")))
    assert len(s) == 9
    assert key_fields(PORT[-1]) == {"containerPort": 80, "protocol": "TCP"}


def test_escaping_layers() -> None:
    pe = key({"name": 'a<b&"c'})
    # inner: HTML-escaped JSON; outer: plain JSON escaping of that text
    assert element_key(pe) == 'k:{"name":"a\\u003cb\\u0026\\"c"}'
    assert element_key(field("<x>")) == "f:<x>"  # field names are raw
    assert element_key(set_value("\b")) == 'v:"\\u0008"'
    assert element_key(set_value("\u2028")) == 'v:"\\u2028"'
    assert element_key(key({"<": "x"})) == 'k:{"<":"x"}'  # key names: jsoniter WriteObjectField, no HTML escaping
    assert encode(fs((field("a\nb"),))) == '{"f:a\\nb":{}}'
    assert encode(fs((field("a\bb"),))) == '{"f:a\\u0008b":{}}'


ELEMENT_KEYS = [
    (field("spec"), "f:spec"),
    (field(""), "f:"),
    (field(" x "), "f: x "),
    (key({"name": "nginx"}), 'k:{"name":"nginx"}'),
    (key({"protocol": "TCP", "containerPort": 80}), 'k:{"containerPort":80,"protocol":"TCP"}'),
    (key({"containerPort": 80.0}), 'k:{"containerPort":80}'),
    (key({"a": None, "b": True, "c": 1.5}), 'k:{"a":null,"b":true,"c":1.5}'),
    (key({"j": {"b": 1, "a": [1, "x"]}}), 'k:{"j":{"a":[1,"x"],"b":1}}'),
    (key({}), "k:{}"),
    (set_value("example.com/x"), 'v:"example.com/x"'),
    (set_value(8080), "v:8080"),
    (set_value(8080.0), "v:8080"),
    (set_value(1e21), "v:1e+21"),
    (set_value(1e-7), "v:1e-7"),
    (set_value(0.5), "v:0.5"),
    (set_value(True), "v:true"),
    (set_value(None), "v:null"),
    (set_value({"some": "json"}), 'v:{"some":"json"}'),
    (index(0), "i:0"),
    (index(1234), "i:1234"),
]


@pytest.mark.parametrize(("pe", "text"), ELEMENT_KEYS)
def test_element_key_and_parse_element(pe: Any, text: str) -> None:
    assert element_key(pe) == text
    assert parse_element(text) == pe


def test_equal_keys_keep_their_own_spelling() -> None:
    # element_key caches keys by element only where equal elements are spelled alike
    for first, second, texts in [
        (10**21, 1e21, ('k:{"p":1000000000000000000000}', 'k:{"p":1e+21}')),
        (0, -0.0, ('k:{"p":0}', 'k:{"p":-0}')),
        ("a", "a", ('k:{"p":"a"}', 'k:{"p":"a"}')),
    ]:
        a, b = key({"p": first}), key({"p": second})
        assert a == b
        for _ in range(2):  # the second time from the cache, where there is one
            assert (element_key(a), element_key(b)) == texts
            assert (element_key(b), element_key(a)) == texts[::-1]


# --- ordering -----------------------------------------------------------------------------------


def test_canonical_order_is_element_order_not_string_order() -> None:
    s = fs(
        (field("l"), index(0)),
        (field("l"), set_value(2)),
        (field("l"), key({"n": 1})),
        (field("l"), field("z")),
        (field("l"), set_value(10)),
    )
    # f < k < v < i, numbers numerically
    assert encode(s) == '{"f:l":{"f:z":{},"k:{\\"n\\":1}":{},"v:2":{},"v:10":{},"i:0":{}}}'
    # unstructured: the keys sorted as strings
    assert encode(s, UNSTRUCTURED) == '{"f:l":{"f:z":{},"i:0":{},"k:{\\"n\\":1}":{},"v:10":{},"v:2":{}}}'


def test_dot_comes_first_in_both_styles() -> None:
    s = fs(F("a"), F("a", "b"), (field("a"), index(3)))
    assert encode(s) == '{"f:a":{".":{},"f:b":{},"i:3":{}}}'
    assert encode(s, UNSTRUCTURED) == '{"f:a":{".":{},"f:b":{},"i:3":{}}}'


def test_unstructured_style_sorts_keys_as_go_encoding_json_does() -> None:
    ports = (*F("spec", "ports"),)
    s = fs(
        (*ports, key({"containerPort": 80, "protocol": "TCP"})),
        (*ports, key({"containerPort": 443, "protocol": "TCP"})),
        (*ports, key({"containerPort": 443, "protocol": "TCP"}), field("containerPort")),
    )
    k443 = '"k:{\\"containerPort\\":443,\\"protocol\\":\\"TCP\\"}"'
    k80 = '"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}"'
    item443 = k443 + ':{".":{},"f:containerPort":{}}'
    assert encode(s, UNSTRUCTURED) == '{"f:spec":{"f:ports":{' + item443 + "," + k80 + ":{}}}}"
    assert encode(s, CANONICAL) == '{"f:spec":{"f:ports":{' + k80 + ":{}," + item443 + "}}}"
    assert decode(encode(s, UNSTRUCTURED)) == s


def test_unstructured_style_html_escapes_keys() -> None:
    assert encode(ESCAPING, UNSTRUCTURED) == (
        '{"f:\\u003cx\\u003e":{},"f:a\\"b":{},"f:l":{"k:{\\"name\\":\\"a\\\\u003cb\\\\u0026\\\\\\"c\\"}":{}}}'
    )
    assert decode(encode(ESCAPING, UNSTRUCTURED)) == ESCAPING
    assert encode(VALUE_ORDER, UNSTRUCTURED) == (
        '{"f:x":{"v:\\"10\\"":{},"v:\\"a\\"":{},"v:10":{},"v:2":{},"v:false":{},"v:true":{}}}'
    )


def test_unknown_style() -> None:
    with pytest.raises(ValueError):
        encode(FieldSet(), "pretty")


def _ordered(obj: Any) -> Any:
    return [(k, _ordered(v)) for k, v in obj.items()] if isinstance(obj, dict) else obj


@pytest.mark.parametrize("style", [CANONICAL, UNSTRUCTURED])
@pytest.mark.parametrize(("name", "s", "text"), WORKED, ids=[w[0] for w in WORKED])
def test_to_json_object_order_equals_encode_order(name: str, s: FieldSet, text: str, style: str) -> None:
    obj = to_json_object(s, style)
    assert _ordered(obj) == _ordered(json.loads(encode(s, style)))
    assert decode(obj) == s


@pytest.mark.parametrize("style", [CANONICAL, UNSTRUCTURED])
@pytest.mark.parametrize(("name", "s", "text"), WORKED, ids=[w[0] for w in WORKED])
def test_a_decoded_sets_encoding_is_remembered_as_a_fresh_copy_each_time(name: str, s: FieldSet, text: str,
                                                                         style: str) -> None:
    # the set decode hands out for this FieldsV1 (kept: the same set again), its encoding kept with it
    decoded = decode(json.loads(text))
    assert decode(json.loads(text)) is decoded
    first = to_json_object(decoded, style)
    again = to_json_object(decoded, style)
    assert _ordered(again) == _ordered(first) == _ordered(json.loads(encode(s, style)))
    assert again is not first
    # a reader that changes its copy changes nobody else's
    again["f:changed"] = {}
    assert _ordered(to_json_object(decoded, style)) == _ordered(first)


# --- decoding rules -----------------------------------------------------------------------------

DECODES = [
    # membership
    ('{"f:a":{}}', [F("a")]),
    ('{"f:a":{".":{}}}', [F("a")]),
    ('{"f:a":{"f:b":{}}}', [F("a", "b")]),
    ('{"f:a":{".":{},"f:b":{}}}', [F("a"), F("a", "b")]),
    ('{"f:a":{"f:b":{},".":{}}}', [F("a"), F("a", "b")]),  # key order does not matter
    ('{"f:a":{".":{"f:ignored":{}},"f:b":{}}}', [F("a"), F("a", "b")]),  # the value of "." is ignored
    ('{".":{}}', []),  # "." at the root is ignored
    ('{".":{},"f:a":{}}', [F("a")]),
    ("{}", []),
    # unknown prefixes are dropped with their subtree
    ('{"r:x":{}}', []),
    ('{"r:x":{"f:a":{}},"f:b":{}}', [F("b")]),
    ('{"f:a":{"r:x":{"f:b":{}}}}', [F("a")]),  # only unknown keys below: a member
    ('{"f:a":{"r:x":{},"f:b":{}}}', [F("a", "b")]),
    ('{"F:a":{},"x:y":{},"f:b":{}}', [F("b")]),
    # null where an object is expected reads as {}
    ('{"f:a":null}', [F("a")]),
    ('{"f:a":{"f:b":null,".":null}}', [F("a"), F("a", "b")]),
    # whitespace anywhere JSON allows it
    (' { "f:a" : { "." : { } , "f:b" : { } } } ', [F("a"), F("a", "b")]),
    # element contents
    ('{"f:":{}}', [(field(""),)]),
    ('{"f: sp ":{}}', [(field(" sp "),)]),
    ('{"v: 3":{}}', [(set_value(3),)]),
    ('{"v:3 ":{}}', [(set_value(3),)]),
    ('{"v:\\n3":{}}', [(set_value(3),)]),
    ('{"k: {\\"name\\":\\"x\\"}":{}}', [(key({"name": "x"}),)]),
    ('{"k:{\\"b\\":1,\\"a\\":2}":{}}', [(key({"a": 2, "b": 1}),)]),
    ('{"k:{}":{}}', [(key({}),)]),
    ('{"k:null":{}}', [(key({}),)]),  # jsoniter ReadObjectCB reads null as an empty object
    ('{"v:null":{}}', [(set_value(None),)]),
    ('{"v:{\\"some\\":\\"json\\"}":{}}', [(set_value({"some": "json"}),)]),
    ('{"v:[1,\\"a\\"]":{}}', [(set_value([1, "a"]),)]),
    ('{"v:\\"\\\\u003c\\"":{}}', [(set_value("<"),)]),
    ('{"v:\\"<\\"":{}}', [(set_value("<"),)]),  # both escapings read alike
    ('{"i:0":{}}', [(index(0),)]),
    ('{"i:1234":{}}', [(index(1234),)]),
    ('{"i:-1":{}}', [(index(-1),)]),
    ('{"i:+7":{}}', [(index(7),)]),  # strconv.Atoi accepts a sign
    # the same element written two ways is one element
    ('{"v:3":{},"v:3.0":{}}', [(set_value(3),)]),
    ('{"v:3":{},"v:3.0":{"f:a":{}}}', [(set_value(3),), (set_value(3), field("a"))]),
]


@pytest.mark.parametrize(("text", "paths"), DECODES)
def test_decode(text: str, paths: list[Path]) -> None:
    s = decode(text)
    assert s == FieldSet(paths)
    assert sorted(s) == sorted(paths)


def test_decode_empty_inputs() -> None:
    assert decode(None) == FieldSet()
    assert decode("null") == FieldSet()  # FromJSON: a top-level null is the empty set
    assert decode({}) == FieldSet()
    assert decode(b"{}") == FieldSet()


def test_numbers_decode_as_float64() -> None:
    s = decode('{"f:p":{"k:{\\"port\\":80}":{"f:x":{}}},"f:s":{"v:8080":{},"v:[1]":{},"v:{\\"n\\":2}":{}}}')
    (kpe,) = s.child(field("p")).children
    assert kpe[0] == KEY
    assert type(key_fields(kpe)["port"]) is float
    values = [element_value(pe) for pe in s.child(field("s")).members]
    assert sorted(map(repr, values)) == ["8080.0", "[1.0]", "{'n': 2.0}"]
    # and they still equal the ints a schema walk produces
    assert s.has((field("s"), set_value(8080)))
    assert s.has((field("p"), key({"port": 80}), field("x")))


BAD = [
    # (text, the key chain named in the position, a word in the reason)
    ('{"i: 0":{}}', "i: 0", "index"),
    ('{"i:0 ":{}}', "i:0 ", "index"),
    ('{"i:1.5":{}}', "i:1.5", "index"),
    ('{"i:x":{}}', "i:x", "index"),
    ('{"i:":{}}', "i:", "index"),
    ('{"v:":{}}', "v:", "JSON"),
    ('{"v:3 4":{}}', "v:3 4", "trailing"),
    ('{"v:{\\"a\\":1} x":{}}', 'v:{"a":1} x', "trailing"),
    ('{"k:{\\"name\\":\\"x\\"} {}":{}}', 'k:{"name":"x"} {}', "trailing"),
    ('{"v:\\"x":{}}', 'v:"x', "JSON"),
    ('{"v:NaN":{}}', "v:NaN", "JSON"),
    ('{"v:1e400":{}}', "v:1e400", "range"),
    ('{"k:[1]":{}}', "k:[1]", "object"),
    ('{"k:\\"x\\"":{}}', 'k:"x"', "object"),
    ('{"k:1":{}}', "k:1", "object"),
    ('{"k:{\\"name\\":invalid}":{}}', 'k:{"name":invalid}', "JSON"),
    ('{"x":{}}', "x", "short"),
    ('{"f":{}}', "f", "short"),
    ('{"fx:y":{}}', "fx:y", "':'"),
]


@pytest.mark.parametrize(("text", "where", "word"), BAD)
def test_malformed_elements_fail_the_whole_decode(text: str, where: str, word: str) -> None:
    with pytest.raises(FieldsV1Error) as ei:
        decode(text)
    assert ei.value.position == f"fieldsV1 {where}"
    assert word in ei.value.reason
    assert str(ei.value).endswith(f"at fieldsV1 {where}")


def test_error_position_is_the_chain_of_keys() -> None:
    with pytest.raises(FieldsV1Error) as ei:
        decode('{"f:spec":{"f:containers":{"k:{\\"name\\":\\"a\\"}":{"f:env":{"i:x":{}}}}}}')
    assert ei.value.position == 'fieldsV1 f:spec > f:containers > k:{"name":"a"} > f:env > i:x'


@pytest.mark.parametrize(
    ("text", "where", "kind"),
    [
        ('{"f:a":1}', "(top level)", "a number"),
        ('{"f:a":"x"}', "(top level)", "a string"),
        ('{"f:a":true}', "(top level)", "a boolean"),
        ('{"f:s":{"f:a":[]}}', "f:s", "an array"),
        ('{"f:s":{"f:t":{"f:a":{"f:b":2.5}}}}', "f:s > f:t > f:a", "a number"),
    ],
)
def test_non_object_values_are_errors(text: str, where: str, kind: str) -> None:
    with pytest.raises(FieldsV1Error) as ei:
        decode(text)
    assert ei.value.position == f"fieldsV1 {where}"
    assert kind in ei.value.reason
    assert ei.value.reason.startswith("the value of 'f:")


@pytest.mark.parametrize(
    ("data", "kind"),
    [("[]", "an array"), ('"x"', "a string"), ("3", "a number"), ("true", "a boolean"), ([], "an array")],
)
def test_top_level_must_be_an_object(data: Any, kind: str) -> None:
    with pytest.raises(FieldsV1Error) as ei:
        decode(data)
    assert kind in str(ei.value)


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ('{"f:a":', 7),
        ('{"f:a":{}} {}', 11),
        ('{"f:a":{}}x', 10),
        ("not json", 0),
        ('{"f:a":{},}', 10),
        ("", 0),
    ],
)
def test_text_that_is_not_json_names_a_character_position(text: str, pos: int) -> None:
    with pytest.raises(FieldsV1Error) as ei:
        decode(text)
    assert ei.value.position == f"character {pos}"
    assert "not valid JSON" in ei.value.reason


def test_equal_elements_keep_their_own_spelling() -> None:
    # 0 and -0.0 (or 10**21 and 1e21) are one element but are written differently; encoding one must
    # not change how the other is written later (a cache keyed by the element would)
    assert encode(fs((set_value(-0.0),))) == '{"v:-0":{}}'
    assert encode(fs((set_value(0),))) == '{"v:0":{}}'
    assert encode(fs((key({"n": 1e21}),))) == '{"k:{\\"n\\":1e+21}":{}}'
    assert encode(fs((key({"n": 10**21}),))) == '{"k:{\\"n\\":1000000000000000000000}":{}}'
    assert decode('{"v:-0":{}}') == fs((set_value(0),))
    assert encode(decode('{"v:-0":{}}')) == '{"v:-0":{}}'  # Go reads -0 as a float64 -0


# --- strictness and limits (issue 9) -------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"r:x":{}}', '{"f:a":{"x:bogus":{}}}', '{"f:a":{"r:x":{},"f:b":{}}}'])
def test_strict_refuses_unknown_prefixes(text: str) -> None:
    """The server drops them (lenient is its rule, kept by default); a file that has one was not
    written by a server, and dropping ``x:bogus`` below ``f:a`` would count ``.a`` as owned."""
    decode(text)  # the server's rule: no error
    with pytest.raises(FieldsV1Error) as e:
        decode(text, strict=True)
    assert "unknown key" in str(e.value) and "the API server never writes one" in str(e.value)
    assert decode('{"f:a":{"f:x:bogus":{}}}', strict=True) == FieldSet([F("a", "x:bogus")])  # a field name


def test_strict_names_where_the_unknown_key_is() -> None:
    with pytest.raises(FieldsV1Error) as e:
        decode({"f:spec": {"f:a": {"x:bogus": {}}}}, strict=True)
    assert e.value.position == "fieldsV1 f:spec > f:a"


def _nested(n: int, key: str) -> dict[str, Any]:
    v: dict[str, Any] = {}
    for _ in range(n):
        v = {key: v}
    return v


@pytest.mark.parametrize("n", [MAX_DEPTH + 1, 700, 5_000])
def test_nesting_limit_of_parsed_fields_v1(n: int) -> None:
    with pytest.raises(FieldsV1Error, match=f"nested more than {MAX_DEPTH} levels deep"):
        decode(_nested(n, "f:a"))
    assert len(decode(_nested(MAX_DEPTH, "f:a"))) == 1


@pytest.mark.parametrize("n", [MAX_DEPTH + 1, 700, 100_000])
def test_nesting_limit_of_fields_v1_text(n: int) -> None:
    text = '{"f:a":' * n + "{}" + "}" * n
    with pytest.raises(FieldsV1Error, match=f"nested more than {MAX_DEPTH} levels deep"):
        decode(text)


@pytest.mark.parametrize("prefix", ["v:", 'k:{"a":'])
@pytest.mark.parametrize("n", [MAX_DEPTH + 1, 2_000])
def test_nesting_limit_of_values_in_keys(prefix: str, n: int) -> None:
    body = prefix + "[" * n + "]" * n + ("}" if prefix.startswith("k") else "")
    with pytest.raises(FieldsV1Error, match=f"nested more than {MAX_DEPTH} levels deep"):
        decode({"f:list": {body: {}}})
    m = MAX_DEPTH - 1 if prefix.startswith("k") else MAX_DEPTH  # a key's object is a level too
    ok = prefix + "[" * m + "]" * m + ("}" if prefix.startswith("k") else "")
    assert len(decode({"f:list": {ok: {}}})) == 1


def test_lone_surrogates_in_keys_read_as_the_replacement_character() -> None:
    s = decode({"f:a\ud800": {'v:"x\\udfffy"': {}, 'k:{"n\\ud800":"v"}': {}}})
    assert s == FieldSet([(field("a\ufffd"), set_value("x\ufffdy")), (field("a\ufffd"), key({"n\ufffd": "v"}))])


@pytest.mark.parametrize("index", ["9" * 5000, "9223372036854775808", "-9223372036854775809"])
def test_index_out_of_an_ints_range_is_an_error_not_a_crash(index: str) -> None:
    """Go's strconv.Atoi refuses them; Python refuses to read more than 4,300 digits at all."""
    with pytest.raises(FieldsV1Error, match="out of range") as ei:
        decode({"f:spec": {f"i:{index}": {}}})
    assert len(str(ei.value)) < 400


def test_index_at_the_edge_of_the_range() -> None:
    fs = decode({"f:spec": {"i:9223372036854775807": {}, "i:-9223372036854775808": {}}})
    assert {p[-1] for p in fs.sorted_paths()} == {index(2**63 - 1), index(-(2**63))}


# --- decoded sets remembered by content --------------------------------------------------------------


def test_a_remembered_set_is_handed_out_only_for_the_same_data_with_the_same_types() -> None:
    """Decoded sets are remembered by their FieldsV1's exact content (marshal's bytes), so that one
    object's managedFields read many times are decoded once; data that JSON would spell alike but
    that the server reads apart is decoded anew."""
    assert decode({"f:a": {}, "v:1": {}}) == decode('{"f:a": {}, "v:1": {}}')
    for data in ({"f:a": {}, 1: {}}, {"f:a": {}, True: {}}):  # JSON would spell the key "1", "true"
        for _ in range(2):  # a refusal is not remembered either
            with pytest.raises(FieldsV1Error, match="is not a string"):
                decode(data)
    assert decode({"f:a": None}) == decode({"f:a": {}}) == FieldSet([F("a")])  # null reads as {}
    assert decode({"f:a": {"f:b": {}}}) == decode({"f:a": {"f:b": {}}}) == FieldSet([F("a", "b")])
    assert decode({"f:a": {}, "x:bogus": {}}) == FieldSet([F("a")])
    with pytest.raises(FieldsV1Error, match="unknown key"):
        decode({"f:a": {}, "x:bogus": {}}, strict=True)  # strictness is part of what is remembered


def test_decoded_sets_remembered_are_bounded() -> None:
    from kubectl_fieldown.fieldpath import fieldsv1

    recent = fieldsv1._decoded
    for i in range(recent.max_sets + 100):
        assert decode({f"f:n{i}": {}}) == FieldSet([F(f"n{i}")])
    assert len(recent.sets) == recent.max_sets
    wide = {f"f:{'x' * 1000}{i}": {} for i in range(300)}  # ~300 KB: more than an eighth of the budget
    assert len(decode(wide)) == 300
    for i in range(40):
        decode({f"f:{'y' * 60_000}{i}": {}})
    assert recent.size <= recent.max_bytes
    assert recent.size == sum(len(k) for k in recent.sets)


def test_the_recent_sets_give_back_their_encodings_when_they_go() -> None:
    from kubectl_fieldown.fieldpath.fieldsv1 import _Recent

    recent = _Recent(max_sets=2, max_bytes=1 << 20)
    sets = [FieldSet([F(f"x{i}")]) for i in range(3)]
    for i, s in enumerate(sets[:2]):
        recent.keep(b"k%d" % i, s)
        recent.remember_encoding(b"k%d" % i, CANONICAL, to_json_object(s))
    assert recent.key(sets[0]) == b"k0" and recent.key(sets[2]) is None
    size = recent.size
    recent.keep(b"k2", sets[2])  # the oldest goes, with its encoding
    assert recent.key(sets[0]) is None and (b"k0", CANONICAL) not in recent.encodings
    assert recent.size == size - 2 * len(b"k0") + len(b"k2")
    assert set(recent.key_of.values()) == {b"k1", b"k2"}


def test_answers_about_a_decoded_set_are_kept_with_it_and_go_with_it() -> None:
    from kubectl_fieldown.fieldpath import fieldsv1
    from kubectl_fieldown.fieldpath.fieldsv1 import keep_answer, kept_answer

    data = {"f:kept-answer-test": {"f:a": {}}}
    s = decode(data)
    keep_answer(s, ("question", 1), "answer")
    # the next decode of the same text is the same set, with the answer
    assert decode(data) is s and kept_answer(s, ("question", 1)) == "answer"
    assert kept_answer(s, ("question", 2)) is None
    # a set the decoder does not keep (built, or equal but not the kept one) has none, and keeps none
    built = FieldSet([F("kept-answer-test", "a")])
    assert built == s and kept_answer(built, ("question", 1)) is None
    keep_answer(built, ("question", 1), "other")
    assert kept_answer(built, ("question", 1)) is None and kept_answer(s, ("question", 1)) == "answer"
    # pushed out by newer sets: the answer goes with it, and the text decodes to a new set
    for i in range(fieldsv1._decoded.max_sets):
        decode({f"f:kept-answer-filler{i}": {}})
    key = fieldsv1._decoded_key(data, False)
    assert key not in fieldsv1._decoded.answers
    again = decode(data)
    assert again is not s and kept_answer(again, ("question", 1)) is None


def test_the_recent_sets_stay_whole_when_threads_add_at_once() -> None:
    import sys
    import threading

    from kubectl_fieldown.fieldpath.fieldsv1 import _Recent

    recent = _Recent(max_sets=4, max_bytes=1 << 20)
    sets = [FieldSet([F(f"t{i}")]) for i in range(2000)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def add(offset: int) -> None:
        start.wait()
        try:
            for i in range(offset, len(sets), 8):
                recent.keep(b"k%d" % i, sets[i])
                recent.remember_encoding(b"k%d" % i, CANONICAL, {"f:x": {}})
        except BaseException as e:  # any error of a racing eviction is the failure
            errors.append(e)

    # switch threads as often as the interpreter can, so that evictions interleave
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=add, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert len(recent.sets) <= recent.max_sets
    assert {recent.key_of[id(s)] for s in recent.sets.values()} == set(recent.sets)
    assert len(recent.key_of) == len(recent.sets)
    assert {k for k, _ in recent.encodings} <= set(recent.sets)
    assert recent.size == sum(len(k) for k in recent.sets) + sum(len(k) for k, _ in recent.encodings)
