"""kubectl_fieldown.manifests.safeyaml: YAML as kubectl reads it, built from parser events within limits."""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubectl_fieldown.manifests import safeyaml
from kubectl_fieldown.manifests.safeyaml import MAX_DEPTH, YAMLReadError, allowed_alias_ratio, load_all


def load(text: str) -> list[Any]:
    return list(load_all(text))


def error(text: str) -> YAMLReadError:
    with pytest.raises(YAMLReadError) as e:
        load(text)
    assert "\n" not in str(e.value)
    return e.value


@pytest.fixture(params=["libyaml", "python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on libyaml's parser and on PyYAML's pure-Python one (no libyaml installed)."""
    if request.param == "python":
        import yaml._yaml as cyaml

        monkeypatch.delattr(cyaml, "CParser")
    return str(request.param)


# --- what is read ------------------------------------------------------------------------------------


# what the lab's kubectl 1.36 gives for each (tests/cli/test_yaml_as_kubectl.py compares a few
# hundred forms with the real kubectl; these run on both parsers without a cluster)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\nb: 0x1F\nc: 017\nd: 1_000\ne: 1:30\nf: -0b101\ng: 0o17\nh: 018\ni: 08\n",
         {"a": 1, "b": 31, "c": 15, "d": 1000, "e": "1:30", "f": -5, "g": 15, "h": 18, "i": 8}),
        ("a: yes\nb: off\nc: On\nd: ~\ne: null\nf: ''\ng:\nh: y\ni: N\n",
         {"a": True, "b": False, "c": True, "d": None, "e": None, "f": "", "g": None, "h": True, "i": False}),
        ("a: 1.5\nb: 1e3\nc: 1.0e3\nd: -.5\ne: 6.8523015e+5\nf: 190:20:30.15\ng: +.5\nh: 1.0\ni: 12e03\n",
         {"a": 1.5, "b": 1000, "c": 1000, "d": -0.5, "e": 685230.15, "f": "190:20:30.15", "g": 0.5, "h": 1,
          "i": 12000}),
        ("a: 18446744073709551615\nb: 99999999999999999999\nc: 1e21\nd: -0.0\ne: 1e999\n",
         {"a": 18446744073709552000, "b": 100000000000000000000, "c": 1e21, "d": 0, "e": "1e999"}),
        ("t: 2024-01-01T00:00:00Z\nd: 2024-01-02\n", {"t": "2024-01-01T00:00:00Z", "d": "2024-01-02"}),
        ("s: !!str 12\ni: !!int '7'\nf: !!float '2.5'\nb: !!bool 'yes'\nr: !Ref x\nm: ! 12\n",
         {"s": "12", "i": 7, "f": 2.5, "b": True, "r": "x", "m": "12"}),
        ("1: a\n2.5: b\nfalse: d\non: e\n1.0: f\n018: g\n1e6: h\n3.14159265358979: i\n",
         {"1": "f", "2.5": "b", "false": "d", "true": "e", "18": "g", "1e+06": "h", "3.1415927": "i"}),
        ("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\n  c: 4\n",
         {"base": {"a": 1, "b": 2}, "x": {"a": 1, "b": 3, "c": 4}}),
        # go-yaml merges where the << key is: keys before it lose, keys after it win
        ("x: {<<: [{a: 1}, {a: 2, z: 0}], q: 1}\nz: {q: 0, <<: {q: 1, r: 2}}\n",
         {"x": {"a": 1, "z": 0, "q": 1}, "z": {"q": 1, "r": 2}}),
        ("l: &l [1, 2]\nm: [*l, *l]\n", {"l": [1, 2], "m": [[1, 2], [1, 2]]}),
        ("a: |\n  text\n  more\nb: >\n  folded\n  line\n", {"a": "text\nmore\n", "b": "folded line\n"}),
        ("- [a, {b: c}]\n- - d\n  - e\n", [["a", {"b": "c"}], ["d", "e"]]),
    ],
)
def test_reads_as_kubectl(parser: str, text: str, expected: Any) -> None:
    (doc,) = load(text)
    assert doc == expected
    assert json.dumps(doc, sort_keys=True) == json.dumps(expected, sort_keys=True)  # 1 and not 1.0


def test_explicit_tags(parser: str) -> None:
    (doc,) = load("b: !!binary |\n  aGVs\n  bG8=\nt: !!timestamp 2024-01-01 10:00:00\ns: !!set {a, b}\n"
                  "x: !!binary /w==\n")
    # bytes decoded into text (invalid UTF-8 byte by byte as U+FFFD), timestamps as written, collection
    # tags ignored
    assert doc == {"b": "hello", "t": "2024-01-01 10:00:00", "s": {"a": None, "b": None}, "x": "\ufffd"}
    assert "cannot decode !!str `abc` as a !!int (line 1, column 4)" in str(error("a: !!int abc\n"))
    assert "!!binary value contains invalid base64 data" in str(error("a: !!binary '!'\n"))
    # a plain scalar folds its lines with spaces, which base64 does not allow (go-yaml refuses it too)
    assert "!!binary value contains invalid base64 data" in str(error("a: !!binary aGVs\n  bG8=\n"))


def test_merge_and_value_indicators_are_text_outside_keys(parser: str) -> None:
    assert load("a: <<\nb: =\n") == [{"a": "<<", "b": "="}]


def test_documents_and_empty_documents(parser: str) -> None:
    assert load("---\na: 1\n---\n---\nb: 2\n...\n") == [{"a": 1}, None, {"b": 2}]
    assert load("") == []


def test_errors_name_the_document(parser: str) -> None:
    e = error("a: 1\n---\nb: [\n")
    assert e.document == 2 and str(e).startswith("invalid YAML: ")
    assert "(line 3" in str(e) or "(line 4" in str(e)
    # a syntax error after a document belongs to the next one, where it would start
    assert error("a: 1\n---\n a: b\nc\n").document == 3


def test_map_keys_must_be_scalars(parser: str) -> None:
    assert "a map key must be a string, number, bool or null, not a list (line 1, column 3)" in \
        str(error("? [1, 2]\n: x\n"))


def test_anchors_can_be_redefined_as_in_go_yaml(parser: str) -> None:
    assert load("a: &x 1\nb: *x\nc: &x 2\nd: *x\n") == [{"a": 1, "b": 1, "c": 2, "d": 2}]


def test_not_a_number(parser: str) -> None:
    for text in ("a: .nan\n", "a: .inf\n", "a: -.Inf\n", "- [.NaN]\n", "a: !!float .inf\n"):
        assert "is not a number Kubernetes can store" in str(error(text)), text
    # beyond a float64 is no number for go-yaml but the text (kubectl sends "1.0e+999")
    assert load("a: 1.0e+999\n") == [{"a": "1.0e+999"}]


def test_lone_surrogates_become_the_replacement_character() -> None:
    # libyaml refuses the escape; the pure-Python scanner reads it, as Go's decoders read U+FFFD
    assert safeyaml.valid_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    text = "plain"
    assert safeyaml.valid_text(text) is text


def test_lone_surrogate_with_the_python_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml._yaml as cyaml

    monkeypatch.delattr(cyaml, "CParser")
    assert load('a: "x\\ud800y"\n') == [{"a": "x\ufffdy"}]


# --- limits ------------------------------------------------------------------------------------------


def test_depth_limit(parser: str) -> None:
    def flow(n: int) -> str:
        return "[" * n + "]" * n

    assert load(flow(MAX_DEPTH)) == [safeyaml_nested(MAX_DEPTH)]
    e = error(flow(MAX_DEPTH + 1))
    assert str(e) == f"nested more than {MAX_DEPTH} levels deep (line 1, column {MAX_DEPTH + 1})"
    block = "".join(" " * i + "a:\n" for i in range(MAX_DEPTH + 5))
    assert f"nested more than {MAX_DEPTH} levels deep (line {MAX_DEPTH + 1}," in str(error(block))
    # through aliases: a small document cannot hide a deep one
    deep = "a: &a " + flow(60) + "\nb: " + "[" * 45 + "*a" + "]" * 45 + "\n"
    assert "through the alias *a" in str(error(deep))


def safeyaml_nested(n: int) -> Any:
    v: Any = []
    for _ in range(n - 1):
        v = [v]
    return v


class _CountingParser:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.events = 0

    def get_event(self) -> Any:
        self.events += 1
        return self.inner.get_event()


def test_limits_stop_reading_at_once(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """30,000 nested brackets made libyaml 0.2.5's composer crash (SIGSEGV): the reader never
    composes, and stops at the first event past the limit, whatever the rest of the text holds."""
    seen: list[_CountingParser] = []
    real = safeyaml._parser

    def counting(text: str) -> Any:
        seen.append(_CountingParser(real(text)))
        return seen[-1]

    monkeypatch.setattr(safeyaml, "_parser", counting)
    n = 30_000
    # libyaml 0.2.6 has a nesting limit of its own (1,000) that its scanner may meet first
    e = str(error("a: " + "[" * n + "]" * n + "\n"))
    assert f"nested more than {MAX_DEPTH} levels" in e or "exceeded maximum nesting depth" in e
    assert seen[-1].events <= MAX_DEPTH + 5


def billion_laughs(levels: int) -> str:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_expansion_limit(parser: str) -> None:
    text = billion_laughs(9)  # 485 bytes that stand for 387 million nodes
    assert len(text) < 500
    e = error(text)
    assert "the aliases stand for too much of the document" in str(e)
    assert "excessive aliasing" in str(e)
    # as in kubectl, aliases may stand for 99% of a document up to 400,000 nodes once they are
    # more than 100 and the document more than 1,000 nodes: 9**3 = 729 nodes from three levels pass
    (doc,) = load(billion_laughs(3))
    assert len(doc["l2"]) == 9 and doc["l2"][0] == doc["l1"]
    assert "excessive aliasing" in str(error(billion_laughs(4)))  # 4,630 of 4,670 nodes are aliased


def test_alias_ratio_is_go_yamls() -> None:
    assert allowed_alias_ratio(1_000) == allowed_alias_ratio(400_000) == 0.99
    assert allowed_alias_ratio(4_000_000) == allowed_alias_ratio(10**9) == 0.10
    assert math.isclose(allowed_alias_ratio(2_200_000), 0.545)


def test_one_anchor_repeated_thousands_of_times_is_fine(parser: str) -> None:
    entry = "{manager: m, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:a: {}}}}"
    text = "managedFields:\n- &e " + entry + "\n" + "- *e\n" * 2999
    (doc,) = load(text)
    assert len(doc["managedFields"]) == 3000
    assert all(e is doc["managedFields"][0] for e in doc["managedFields"])  # shared, not copied


def test_recursive_aliases(parser: str) -> None:
    assert "the alias *a refers to the node that contains it (line 1, column 8)" in str(error("a: &a [*a]\n"))
    assert "the alias *a refers to the node that contains it" in str(error("a: &a\n  b: *a\n"))
    assert "found undefined alias *nope" in str(error("a: *nope\n"))


# --- generated documents -----------------------------------------------------------------------------

# YAML 1.1 line breaks (NEL, LS, PS) do not survive PyYAML's own dump and load either
_chars = st.characters(blacklist_characters="\x85\u2028\u2029", blacklist_categories=("Cs",))
_keys = st.text(_chars, max_size=8)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.text(_chars, max_size=12),
    st.sampled_from(["yes", "no", "on", "0x1F", "017", "1:30", "2024-01-01", "~", "<<", "=", "1_000", ".5", "-0",
                     "null", "", " a", "a: b", "- x", "#"]),
)
_values = st.recursive(
    _scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=20,
)


@given(_values, st.sampled_from([None, True, False]))
def test_what_pyyaml_writes_quoted_reads_back(value: Any, flow: bool | None) -> None:
    """Every scalar double-quoted, with its tag when it is no string. (Written plain, PyYAML leaves
    unquoted what YAML 1.1 and go-yaml read differently: ``y``, ``1e3``, ``0o10`` and ``08`` are strings
    for PyYAML and a bool or numbers for kubectl.)"""
    text = yaml.safe_dump({"v": value, "again": value}, default_flow_style=flow, allow_unicode=True,
                          default_style='"')
    (doc,) = load(text)
    expected = as_kubectl_sends(value)
    assert doc == {"v": expected, "again": expected}


def as_kubectl_sends(v: Any) -> Any:
    """A whole-number float is written by Go in its shortest digits padded with zeros, read back as an
    integer (4.545729281571863e16 is sent as 45457292815718630)."""
    if isinstance(v, dict):
        return {k: as_kubectl_sends(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_kubectl_sends(x) for x in v]
    if type(v) is float and v.is_integer() and abs(v) < 1e21:
        return int(decimal.Decimal(repr(v)))
    return v


@given(st.text(max_size=60))
def test_any_text_is_a_document_or_one_error(text: str) -> None:
    try:
        load(text)
    except YAMLReadError as e:
        assert "\n" not in str(e) and e.document >= 1
