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


# --- AnsiConsole: colour without rich, byte for byte what rich's console writes ----------------------

_WORDS = ["bold", "dim", "italic", "underline", "red", "cyan", "bright_blue", "bright_red", "magenta", "green"]
_PIECES = ["├── ", "│   ", "spec", "replicas: 3", "  ← ", "名前", "é", " ", "", "\n", "a\nb", "x  "]


def _random_text(rnd: Any) -> PlainText:
    def style() -> str:
        return " ".join(rnd.sample(_WORDS, rnd.randint(0, 3)))

    t = PlainText(rnd.choice(_PIECES), style())
    for _ in range(rnd.randint(0, 8)):
        piece = rnd.choice(_PIECES)
        if rnd.random() < 0.3:
            inner = PlainText(piece, style())
            inner.append(rnd.choice(_PIECES), style=style())
            t.append(inner)
        else:
            t.append(piece, style=style())
    if rnd.random() < 0.3:
        t = PlainText("\n", style()).join([t, t[1:5], PlainText(rnd.choice(_PIECES), style())])
    return t


def _rich_output(objects: tuple[Any, ...], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    import io

    from kubectl_fieldown.render.common import _rich_console

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = io.StringIO()
    _rich_console(out).print(*objects, soft_wrap=True)
    return out.getvalue()


TERMINALS = [{"TERM": "xterm"}, {"TERM": "xterm-256color"}, {"TERM": "xterm-16color"},
             {"TERM": "xterm", "COLORTERM": "truecolor"}, {"TERM": "dumb"}, {"TERM": "unknown"}, {"TERM": ""}]


@pytest.mark.parametrize("env", TERMINALS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_ansi_console_writes_what_rich_writes(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import random

    from kubectl_fieldown.render.common import make_console
    from kubectl_fieldown.render.styled import AnsiConsole

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    for k in ("COLORTERM", "TERM"):
        monkeypatch.delenv(k, raising=False)
    rnd = random.Random(24)
    for _ in range(300):
        text = _random_text(rnd)
        objects: tuple[Any, ...] = (text,) if rnd.random() < 0.8 else (str(text),)
        expected = _rich_output(objects, env, monkeypatch)
        out = io.StringIO()
        console = make_console(out)
        assert isinstance(console, AnsiConsole)
        console.print(*objects, soft_wrap=True)
        assert out.getvalue() == expected, (text.plain, text._style, text._spans)
        assert console._rich is None, "rich was not needed"


def test_ansi_console_hands_what_it_does_not_follow_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from kubectl_fieldown.render.common import make_console
    from kubectl_fieldown.render.styled import AnsiConsole

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((PlainText("x", "bold on red"),), {"soft_wrap": True}),  # a background: not followed
        ((PlainText("x", "not bold"),), {"soft_wrap": True}),
        ((PlainText("a\tb", "red"),), {"soft_wrap": True}),  # tabs are expanded by rich
        ((PlainText("a\x1b[31mb"),), {"soft_wrap": True}),
        ((PlainText("x", "red"),), {}),  # may wrap: rich's
        ((), {}),
        ((PlainText("a", "red"), PlainText("b")), {"soft_wrap": True}),
    ]
    for objects, options in cases:
        expected = _rich_output(objects, {}, monkeypatch) if options else None
        out = io.StringIO()
        console = make_console(out)
        console.print(*objects, **options)
        assert isinstance(console, AnsiConsole) and console._rich is not None, objects
        if expected is not None:
            assert out.getvalue() == expected
