"""render/styled.py: PlainText behaves as rich's Text does for every operation the renderers use,
so a line built once prints the same through a plain console and, with its styles, through rich."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rich.text import Text as RichText

from kubectl_fieldown.render.styled import PlainText


def _ops() -> list[tuple[str, Callable[[Callable[..., Any]], Any]]]:
    def appended(T: Callable[..., Any]) -> Any:
        t = T("guide ", "dim")
        t.append("name", style="bold")
        t.append(": ")
        t.append(T("owner", "red"))
        t.append("", style="blue")  # empty: no span
        return t

    def added(T: Callable[..., Any]) -> Any:
        return T("a", "dim") + "bc" + T("de", "green")

    def joined(T: Callable[..., Any]) -> Any:
        return T("\n", "dim").join([appended(T), T("x"), T("", "red"), added(T)])

    def joined_empty_separator(T: Callable[..., Any]) -> Any:
        return T("").join([appended(T), added(T)])

    def sliced(T: Callable[..., Any]) -> Any:
        return appended(T)[3:12]

    def sliced_to_nothing(T: Callable[..., Any]) -> Any:
        return appended(T)[5:2]

    def stripped(T: Callable[..., Any]) -> Any:
        t = T("value", "dim")
        t.append("   ", style="red")
        t.append("  ")
        t.rstrip()
        return t

    def append_text(T: Callable[..., Any]) -> Any:
        return T("x").append_text(appended(T))

    return [("append", appended), ("add", added), ("join", joined), ("join-empty", joined_empty_separator),
            ("slice", sliced), ("slice-empty", sliced_to_nothing), ("rstrip", stripped),
            ("append_text", append_text)]


@pytest.mark.parametrize("name, build", _ops(), ids=[n for n, _ in _ops()])
def test_plain_text_is_rich_text(name: str, build: Callable[[Callable[..., Any]], Any]) -> None:
    ours = build(lambda text="", style=None: PlainText(text, style))
    theirs = build(lambda text="", style=None: RichText(text, style=style or ""))
    assert str(ours) == theirs.plain and len(ours) == len(theirs)
    converted = ours.__rich__()
    assert converted.plain == theirs.plain
    assert str(converted.style) == str(theirs.style)
    assert [(s.start, s.end, str(s.style)) for s in converted.spans] == \
        [(s.start, s.end, str(s.style)) for s in theirs.spans]


def test_appending_text_with_a_style_is_refused_as_rich_refuses_it() -> None:
    with pytest.raises(ValueError):
        PlainText("a").append(PlainText("b"), style="red")
    with pytest.raises(ValueError):
        RichText("a").append(RichText("b"), style="red")
