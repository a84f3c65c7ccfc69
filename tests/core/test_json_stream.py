"""kubectl_fieldown.manifests.sources.json_stream: a YAML stream of JSON documents read with json.

Whatever the text, the fast reading must give exactly what the YAML reader gives (values, their
types, key order), or step aside (None) so that the YAML reader's values and errors stand.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from kubectl_fieldown.manifests.safeyaml import MAX_DEPTH, YAMLReadError, load_all
from kubectl_fieldown.manifests.sources import _LONG_RUN, _digits_as_zeros, json_stream, parse_text


def exact(v: Any) -> str:
    """A value with its types (1, 1.0 and True are equal in Python, not in a manifest) and key order."""
    return json.dumps(v, allow_nan=True)


def yaml_reading(text: str) -> list[Any] | None:
    try:
        return list(load_all(text))
    except YAMLReadError:
        return None


def check(text: str) -> list[Any] | None:
    fast = json_stream(text)
    if fast is not None:
        slow = yaml_reading(text)
        assert slow is not None, f"the YAML reader refuses what json read: {text!r}"
        assert exact(fast) == exact(slow), text
    return fast


scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(), st.sampled_from(["<<", "true", "null", "1e3", "0x10", "~", "y", "on", "2024-01-01T00:00:00Z",
                                "---", "...", "# x", "a: b", "- x", "\u2028", "\x85", "\ufeff", "\t", "\\"]),
    st.text(min_size=1000, max_size=1100, alphabet="k"),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.text(), scalars.filter(lambda x: type(x) is str)),
                                                 inner, max_size=4)), max_leaves=12)
documents = st.one_of(st.dictionaries(st.text(), values, max_size=5), st.lists(values, max_size=4))


def render(docs: list[Any], seed: int) -> str:
    rnd = random.Random(seed)
    out = []
    for d in docs:
        indent = rnd.choice([None, None, 0, 1, 2, "\t", "  \n"])
        separators = rnd.choice([None, (",", ":"), (", ", ": "), (" ,", " : ")])
        try:
            out.append(json.dumps(d, indent=indent, separators=separators, ensure_ascii=rnd.random() < 0.3))
        except ValueError:
            out.append("{}")
    text = "\n---\n".join(out)
    if rnd.random() < 0.3:
        text = "---\n" + text
    return text + rnd.choice(["", "\n", "\n...\n", "\n---\n", "\n\n"])


@given(st.lists(documents, min_size=1, max_size=4), st.integers(0, 2**16))
def test_json_reads_what_yaml_reads_or_steps_aside(docs: list[Any], seed: int) -> None:
    check(render(docs, seed))


@given(st.text(alphabet='{}[]":,-.\n\t 01aeE+\\u#<>', max_size=60))
@example('{"a"\n: 1}')
@example('{"a": 1}\n---\n')
@example('{"a": 1}\n---\n\n---\n{}')
@example('{"a": 18446744073709551615}\n---\n{}')
@example('{"a": 1}\n---\n{"a": 1e400}')
@example('{"a": NaN}\n---\n{}')
@example('{"<<": {"b": 1}}\n---\n{}')
def test_any_text_is_read_as_yaml_reads_it_or_left_to_yaml(text: str) -> None:
    check(text)


def test_machine_written_streams_take_the_fast_reading() -> None:
    # what generators write: jsonnet -y (--- before each document, ... at the end), one JSON per document
    docs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"},
             "data": {"k": "v é ✓", "n": "1"}, "x": [1, 2.5, 1.0, -0, 1e3, True, None]} for i in range(3)]
    jsonnet = "".join("---\n" + json.dumps(d, indent=3, ensure_ascii=False) + "\n" for d in docs) + "...\n"
    one_per_line = "---\n".join(json.dumps(d) + "\n" for d in docs)
    for text in (jsonnet, one_per_line):
        fast = check(text)
        assert fast is not None
        assert [d["metadata"]["name"] for d in fast] == ["c0", "c1", "c2"]
        assert fast[0]["x"] == [1, 2.5, 1, 0, 1000, True, None] and type(fast[0]["x"][2]) is int
        result = parse_text("gen.yaml", text)
        assert [d.document for d in result.documents] == [1, 2, 3] and not result.errors


def test_what_json_and_yaml_read_apart_is_left_to_yaml() -> None:
    one = json.dumps({"a": 1})
    for text in (
        one + "\n---\n{\"s\": \"\\ud83d\\ude00\"}",      # an escaped surrogate pair (YAML refuses it)
        one + "\n---\n{\"s\": \"a\tb\"}",                # a raw tab
        one + '\n---\n{"s": "\u2028"}',                # a YAML line break inside a string
        one + '\n---\n{"a"\n: 1}',                     # a key whose ':' is on the next line
        one + '\n---\n{"' + "k" * 1030 + '": 1}',      # a key longer than libyaml's implicit keys
        one + '\n---\n{"<<": {"b": 1}}',               # the merge key
        one + '\n---\n{"n": 18446744073709551615}',    # beyond int64
        one + "\n---\n",                               # an empty document: YAML's null
        one + "\n---\nkind: List",                     # YAML
        one + '\n---\n{"n": 1e400}',                   # beyond float64: the YAML reader's error
    ):
        assert json_stream(text) is None, text


def test_errors_and_limits_stay_the_yaml_readers() -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for text, reason in (
        ('{"a": 1}\n---\n' + deep, "nested more than 100 levels deep (line 3, column 101)"),
        ('{"a": 1}\n---\n{"b": ]', "invalid YAML: while parsing a flow node, did not find expected node content "
                                    "(line 3, column 7)"),
    ):
        assert json_stream(text) is None
        result = parse_text("f.yaml", text)
        assert [d.document for d in result.documents] == [1]
        assert [(e.document, e.reason) for e in result.errors] == [(2, reason)]
    # YAML reads an empty value as null, and so does the stream
    assert [d.obj for d in parse_text("f.yaml", '{"a": 1}\n---\n{"b": }').documents] == [{"a": 1}, {"b": None}]


@given(st.text(alphabet="0123456789٣０¹x-.", max_size=60))
@example("1" * 19)
@example("9" * 18 + "x" + "9")
@example("1234567890123456789")
def test_a_long_run_of_digits_is_found_as_the_pattern_finds_it(text: str) -> None:
    # ASCII digits only, as [0-9] in a str pattern: other digits (٣, ０, ¹) never make an integer of JSON
    assert (_LONG_RUN in _digits_as_zeros(text)) == (re.search("[0-9]{19}", text) is not None)
