"""kubectl's jsonpath and custom-columns printers, restated (render/kubeprint.py). What kubectl
itself prints for the same templates is compared in tests/cli/test_output_formats.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.render.kubeprint import (
    TemplateError,
    custom_columns,
    go_print,
    parse_columns,
    parse_template,
)

DOC: dict[str, Any] = {
    "kind": "List",
    "items": [
        {"name": "a", "labels": {"x": "1", "b": "<2>"}, "n": 1.5, "big": 1e21, "l": [1, "two"], "none": None},
        {"name": "b", "n": 3},
    ],
}


@pytest.mark.parametrize(("template", "printed"), [
    ("{.kind}", "List"),
    ("kind is {.kind}", "kind is List"),
    ("{.items[*].name}", "a b"),
    ("{.items[0].labels}", '{"b":"\\u003c2\\u003e","x":"1"}'),  # compact JSON, sorted, HTML-escaped as Go's
    ("{.items[0].l}", '[1,"two"]'),
    ("{.items[0].none}", "<nil>"),
    ("{.items[0].big} {.items[1].n}", "1e+21 3"),
    ("{.items[*].missing}", ""),
    ("{.items[-1:].name}", "b"),
    ("{.items[0]['name']}", "a"),
    ('{range .items[*]}{.name}{"\\t"}{.n}{"\\n"}{end}', "a\t1.5\nb\t3\n"),
    ("{range .items[*]}[{.name}]{end}!", "[a][b]!"),
    ("{$.items[1].name}", "b"),
])
def test_jsonpath(template: str, printed: str) -> None:
    assert parse_template(template).execute(DOC) == printed


@pytest.mark.parametrize(("template", "message"), [
    ("{.items[?(@.name=='a')]}", "filters"),
    ("{.items[", "unclosed"),
    ("{range .items[*]}{.name}", "without {end}"),
    ("{end}", "without {range}"),
    ('{"\\q"}', "unknown escape"),
])
def test_jsonpath_refused(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("[", r"\[").replace("{", r"\{")):
        parse_template(template)


def test_jsonpath_index_out_of_bounds_is_an_error() -> None:
    with pytest.raises(TemplateError, match="array index out of bounds: index 5, length 2"):
        parse_template("{.items[5]}").execute(DOC)


def test_custom_columns() -> None:
    columns = parse_columns("NAME:.name,LABELS:{.labels},L:l,N:.n,NONE:.none,MISSING:.nope")
    # each column 3 wider than its widest cell (at least 6), the last one unpadded
    assert custom_columns(columns, DOC["items"]) == (
        "NAME   LABELS           L         N     NONE     MISSING\n"
        "a      map[b:<2> x:1]   [1 two]   1.5   <nil>    <none>\n"
        "b      <none>           <none>    3     <none>   <none>\n"
    )
    assert custom_columns(columns[:1], DOC["items"], headers=False) == "a\nb\n"
    assert custom_columns(columns, []) == ""


@pytest.mark.parametrize(("spec", "message"), [
    ("", "no custom columns given"),
    ("NAME", "expected <header>:<json-path-expr>"),
    ("NAME:{.a", "unexpected path string"),
])
def test_custom_columns_refused(spec: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        parse_columns(spec)


def test_go_print() -> None:
    assert go_print({"b": [1, None], "a": {"c": True}}) == "map[a:map[c:true] b:[1 <nil>]]"
    assert go_print(1000000.0) == "1e+06"
