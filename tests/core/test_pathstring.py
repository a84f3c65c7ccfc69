"""Path strings as the server prints them in conflicts (ssa-semantics §3), and parsing them back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path as FsPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_fieldown.fieldpath import (
    FIELD,
    FieldSet,
    Path,
    PathElement,
    PathSyntaxError,
    element_string,
    field,
    index,
    is_prefix,
    key,
    parse_path,
    path_from_fields,
    path_string,
    set_value,
)
from kubectl_fieldown.fieldpath.fieldsv1 import decode
from kubectl_fieldown.fieldpath.lookup import names_in
from kubectl_fieldown.ownership.managedfields import object_entries

from .strategies import dotted_names, printable_elements

F = path_from_fields
CONFORMANCE = FsPath(__file__).resolve().parent.parent / "conformance"

CONTAINER = (*F("spec", "template", "spec", "containers"), key({"name": "nginx"}))

RENDER = [
    (F("spec", "replicas"), ".spec.replicas"),
    ((*CONTAINER, field("image")), '.spec.template.spec.containers[name="nginx"].image'),
    (
        (*CONTAINER, field("ports"), key({"protocol": "TCP", "containerPort": 80}), field("hostPort")),
        '.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].hostPort',
    ),
    ((*F("metadata", "finalizers"), set_value("example.com/x")), '.metadata.finalizers[="example.com/x"]'),
    ((*F("spec", "args"), index(0)), ".spec.args[0]"),
    (F("metadata", "labels", "app.kubernetes.io/name"), ".metadata.labels.app.kubernetes.io/name"),
    ((*F("spec", "rules"), key({"id": 2.0}), field("action")), ".spec.rules[id=2].action"),
    ((field("x"), set_value(1e6)), ".x[=1e+06]"),
    ((field("x"), set_value(1000000)), ".x[=1000000]"),  # an int is decimal, a float is %v
    ((field("x"), set_value(1.5)), ".x[=1.5]"),
    ((field("x"), set_value(True)), ".x[=true]"),
    ((field("x"), set_value(None)), ".x[=null]"),
    ((field("x"), set_value([1, "a"])), '.x[=[1,"a"]]'),
    ((field("x"), set_value({"b": 1, "a": "x"})), '.x[=a="x"b=1]'),
    ((field("x"), key({"ready": False, "n": None})), ".x[n=null,ready=false]"),
    ((field("x"), key({"name": 'a\tb"\\\x01\u200b😀é<'})), '.x[name="a\\tb\\"\\\\\\x01\\u200b😀é<"]'),
    ((field(""),), "."),
    ((field("a b"), field("<x>")), ".a b.<x>"),
    ((), ""),
]


@pytest.mark.parametrize(("path", "text"), RENDER)
def test_render(path: Path, text: str) -> None:
    assert path_string(path) == text
    assert "".join(element_string(pe) for pe in path) == text


def test_stored_sets_render_floats_with_go_v() -> None:
    # conflict paths come from the stored set, where every number was read as a float64
    s = decode(
        '{"f:spec":{"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{"f:hostPort":{}}},'
        '"f:sizes":{"v:1000000":{},"v:80":{},"v:0.5":{}}}}'
    )
    assert [path_string(p) for p in s.sorted_paths()] == [
        '.spec.ports[containerPort=80,protocol="TCP"].hostPort',
        ".spec.sizes[=0.5]",
        ".spec.sizes[=80]",
        ".spec.sizes[=1e+06]",
    ]


@pytest.mark.parametrize("first", ["int", "float"])
def test_equal_elements_keep_their_own_spelling_whichever_is_printed_first(first: str) -> None:
    # 1000000 and 1e+06 are one element (the server's equality) spelled two ways; the text an element
    # is printed with once must not become the other's
    as_int = [key({"port": 1000000}), set_value(1000000), key({"on": True}), set_value(None), index(3)]
    as_float = [key({"port": 1e6}), set_value(1e6), key({"on": True}), set_value(None), index(3)]
    assert as_int[0] == as_float[0] and as_int[1] == as_float[1]
    want_int = ["[port=1000000]", "[=1000000]", "[on=true]", "[=null]", "[3]"]
    want_float = ["[port=1e+06]", "[=1e+06]", "[on=true]", "[=null]", "[3]"]
    for _ in range(2):  # the second time from what was kept
        for pes, want in ((as_int, want_int), (as_float, want_float))[::1 if first == "int" else -1]:
            assert [element_string(pe) for pe in pes] == want


def _names_in(*sources: Any) -> Any:
    """Field names backed by objects and FieldSets."""
    owned = FieldSet()
    for src in sources:
        if isinstance(src, FieldSet):
            owned = owned | src
    return names_in([s for s in sources if not isinstance(s, FieldSet)], owned)


PARSE_EXISTS = [
    F("metadata", "labels", "app.kubernetes.io/name"),
    F("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"),
    F("spec", "a.b", "c"),
    F("spec", "a", "b.c"),
    (*F("metadata", "labels", "example.com/x.y"), field("z")),
    (*F("spec", "k.s"), key({"name": "a.b"}), field("x.y")),
]


@pytest.mark.parametrize("path", PARSE_EXISTS)
def test_parse_dotted_names_with_field_names(path: Path) -> None:
    text = path_string(path)
    assert parse_path(text, _names_in(FieldSet([path]))) == path


def test_the_longest_existing_name_wins() -> None:
    text = ".metadata.labels.app.kubernetes.io/name"
    both = FieldSet([F("metadata", "labels", "app"), F("metadata", "labels", "app.kubernetes.io/name")])
    assert parse_path(text, _names_in(both)) == F("metadata", "labels", "app.kubernetes.io/name")
    obj = {"metadata": {"labels": {"app.kubernetes.io/name": "web"}}}
    assert parse_path(text, _names_in(obj)) == F("metadata", "labels", "app.kubernetes.io/name")
    # without a callback every dot separates
    assert parse_path(text) == F("metadata", "labels", "app", "kubernetes", "io/name")
    # nothing exists: one segment at a time
    assert parse_path(text, names_in([], FieldSet())) == F("metadata", "labels", "app", "kubernetes", "io/name")
    # an escaped dot stays in its segment, and segments with dots still group
    assert parse_path(".metadata.labels.app\\.kubernetes.io/name", _names_in(obj)) == \
        F("metadata", "labels", "app.kubernetes.io/name")
    # a name longer than the path, or one that only starts like it, does not match
    longer = {"spec": {"a.b.c": 1, "a.bx": 2}}
    assert parse_path(".spec.a.b", _names_in(longer)) == F("spec", "a", "b")


class _CountingNames:
    """Field names that count the work asked of them: positions walked and names offered."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.steps = 0
        self.offered = 0

    def root(self) -> Any:
        return self.inner.root()

    def below(self, at: Any, pe: PathElement) -> Any:
        self.steps += 1
        return self.inner.below(at, pe)

    def dotted(self, at: Any) -> Any:
        for name in self.inner.dotted(at):
            self.offered += 1
            yield name


@pytest.mark.parametrize("n", [100, 2_000])
def test_parsing_is_linear_in_the_path(n: int) -> None:
    """--path with 2,000 segments took 35 s: every split of every dotted run was tried, each
    looked up from the root. Now each segment is one step and each name is offered once."""
    obj = {"a": {"a": {"x.y": 1}}, "spec": {"dotted.name": {"k": 1}}}
    owned = FieldSet([F("a", "a", "x.y"), F("spec", "dotted.name", "k")])
    names = _CountingNames(names_in([obj], owned))
    p = parse_path("." + ".".join(["a"] * n), names)
    assert p == F(*(["a"] * n))
    assert names.steps == n
    assert names.offered <= 4  # "x.y" twice (object and owned set), at the one position that has it
    names = _CountingNames(names_in([obj], owned))
    assert parse_path(".spec.dotted.name.k", names) == F("spec", "dotted.name", "k")
    assert names.steps == 3


def test_backslash_escapes() -> None:
    assert parse_path(r".metadata.labels.app\.kubernetes\.io/name") == F("metadata", "labels", "app.kubernetes.io/name")
    assert parse_path(r".a\[0]") == F("a[0]")
    assert parse_path(r".a\[0\]") == F("a[0\\]")  # only ".", "[" and "\\" are escaped
    assert parse_path(r".a\\.b") == F("a\\", "b")
    assert parse_path(r".a\b") == F("a\\b")  # a backslash before anything else is kept


PARSE = [
    ('.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].hostPort', None),
    ('.metadata.finalizers[="example.com/x"]', None),
    (".spec.args[0]", None),
    (".spec.args[-1]", None),
    (".x[=1e+06]", (field("x"), set_value(1e6))),
    (".x[=80]", (field("x"), set_value(80.0))),
    (".x[=-2.5]", (field("x"), set_value(-2.5))),
    (".x[=-0]", (field("x"), set_value(-0.0))),
    (".x[=true]", (field("x"), set_value(True))),
    (".x[=false]", (field("x"), set_value(False))),
    (".x[=null]", (field("x"), set_value(None))),
    ('.x[="a\\tb\\"\\\\\\x01\\u200b\\U0001f600é"]', (field("x"), set_value('a\tb"\\\x01\u200b😀é'))),
    ('.x[="\\a\\b\\f\\n\\r\\v"]', (field("x"), set_value("\a\b\f\n\r\v"))),
    ('.x[="\\xc3\\xa9"]', (field("x"), set_value("é"))),  # \x bytes form UTF-8
    ('.x[b=2,a="x"]', (field("x"), key({"a": "x", "b": 2}))),
    ('.x[a="],="]', (field("x"), key({"a": "],="}))),
    ("[0]", (index(0),)),
    ('[="v"].f', (set_value("v"), field("f"))),
    (".a]", (field("a]"),)),
]


@pytest.mark.parametrize(("text", "want"), PARSE)
def test_parse(text: str, want: Path | None) -> None:
    p = parse_path(text)
    if want is None:
        assert path_string(p) == text  # already in the server's form
    else:
        assert p == want
    assert parse_path(path_string(p)) == p


SYNTAX_ERRORS = [
    # (text, 1-based character, words in the reason)
    ("", 1, "empty path"),
    ("spec", 1, "starts with"),
    ("..x", 2, "empty field name"),
    (".spec..x", 7, "empty field name"),
    (".spec.", 7, "empty field name"),
    (".a[", 4, "name=value"),
    (".a[x]", 4, "name=value"),
    (".a[]", 4, "name=value"),
    ('.a[=x"y]', 5, "not a quoted string"),
    ('.a[name="x"', 12, "expected ']'"),
    (".a[name=1", 10, "expected ']'"),
    ('.a[="x\\q"]', 7, "unknown escape"),
    ('.a[="x\\uZZZZ"]', 7, "bad \\u escape"),
    (".a[name=a[b]", 9, "not a quoted string"),
    ('.a[="abc', 5, "unterminated string"),
    (".a[0]x", 6, "unexpected 'x'"),
    ('.a[="x"y]', 8, "expected ']'"),
]


@pytest.mark.parametrize(("text", "char", "why"), SYNTAX_ERRORS)
def test_syntax_errors_name_the_position(text: str, char: int, why: str) -> None:
    with pytest.raises(PathSyntaxError) as ei:
        parse_path(text)
    assert ei.value.pos == char - 1
    assert ei.value.text == text
    assert f"at character {char}:" in str(ei.value)
    assert why in str(ei.value)


def test_is_prefix() -> None:
    assert is_prefix((), F("a"))
    assert is_prefix(F("a"), F("a", "b")) and is_prefix(F("a", "b"), F("a", "b"))
    assert not is_prefix(F("a", "b"), F("a")) and not is_prefix(F("b"), F("a", "b"))


# --- real conflict paths ------------------------------------------------------------------------


def _conflicts() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for f in sorted(CONFORMANCE.glob("*.json")) + sorted(CONFORMANCE.glob("builtin/*.json")):
        case = json.loads(f.read_text())
        for answer in (case.get("expect"), case.get("expectForced")):
            if answer and answer.get("status") == 409:
                for c in answer["conflicts"]:
                    yield case["id"], case, c


def test_conformance_has_conflicts() -> None:
    assert sum(1 for _ in _conflicts()) >= 100


@pytest.mark.parametrize(
    ("case_id", "case", "conflict"), list(_conflicts()), ids=[f"{i}:{c['path']}" for i, _, c in _conflicts()]
)
def test_server_conflict_paths_round_trip_and_are_owned(case_id: str, case: dict[str, Any], conflict: Any) -> None:
    live = case["live"]
    entries = object_entries(live)
    owned = FieldSet()
    for e in entries:
        owned = owned | e.fields
    text = conflict["path"]
    p = parse_path(text, _names_in(owned, live, case["apply"]["manifest"]))
    assert path_string(p) == text
    # the manager named in the conflict owns exactly that path in the live object (unless the server
    # created the entry during this apply: before-first-apply after a reset)
    mine = [
        e
        for e in entries
        if e.manager == conflict["manager"]
        and e.operation == conflict["operation"]
        and e.subresource == conflict.get("subresource", "")
        and (e.operation == "Apply" or e.api_version == conflict.get("apiVersion"))
    ]
    if conflict["manager"] == "before-first-apply" and not mine:
        return
    assert len(mine) == 1, case_id
    assert mine[0].fields.has(p), (case_id, text)


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(printable_elements, dotted_names.map(field)), min_size=1, max_size=4).map(tuple))
def test_render_parse_round_trip(p: Path) -> None:
    text = path_string(p)
    # dotted field names need the callback to group their segments
    assert parse_path(text, _names_in(FieldSet([p]))) == p
    if not any(pe[0] == FIELD and "." in pe[1] for pe in p):
        assert parse_path(text) == p
    assert path_string(parse_path(text)) == text


@pytest.mark.parametrize(
    ("typed", "server_form"),
    [
        (".spec.containers[name=web].image", '.spec.containers[name="web"].image'),
        (".spec.ports[containerPort=80,protocol=TCP]", '.spec.ports[containerPort=80,protocol="TCP"]'),
        (".metadata.finalizers[=example.com/x]", '.metadata.finalizers[="example.com/x"]'),
    ],
)
def test_unquoted_strings_are_accepted_like_kubectl_selectors(typed: str, server_form: str) -> None:
    assert path_string(parse_path(typed)) == server_form
