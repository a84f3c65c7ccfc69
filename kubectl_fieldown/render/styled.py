"""Styled lines for human output, importing rich only when there is colour to show.

Plain output — a pipe, a file, ``NO_COLOR`` — is what scripts, CI logs and ``grep`` see, and
importing rich costs ~60 ms of start-up (a quarter of ``show -i``). :class:`PlainText` (styled
text with rich's semantics, handed to rich through ``__rich__`` when there is colour) and
:class:`PlainConsole` cover the small part of ``rich.text.Text`` and ``rich.console.Console`` that
the renderers use, and print exactly what rich prints without colour. :func:`Text` builds a line;
the console it is printed on decides whether its styles are shown.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.text import Text as Text


_Span = tuple[int, int, str]


class PlainText:
    """A line of text with styles, built without rich: the part of ``rich.text.Text`` the
    renderers use, with its semantics (a base style for the whole text, styled spans). A plain
    console prints ``str()`` of it; a rich console asks :meth:`__rich__` for the real thing, so
    one kind of text serves both and nothing global decides which is built."""

    __slots__ = ("_spans", "_style", "_text")

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self._text = text
        self._style = style or ""
        self._spans: list[_Span] = []

    @property
    def plain(self) -> str:
        return self._text

    @property
    def style(self) -> str:
        return self._style

    def __str__(self) -> str:
        return self._text

    def __len__(self) -> int:
        return len(self._text)

    def copy(self) -> PlainText:
        out = PlainText(self._text, self._style)
        out._spans = list(self._spans)
        return out

    def __add__(self, other: str | PlainText) -> PlainText:
        return self.copy().append(other)

    def append(self, text: str | PlainText, style: str | None = None) -> PlainText:
        offset = len(self._text)
        if isinstance(text, PlainText):
            if style is not None:
                raise ValueError("style must not be set when appending Text instance")
            return self.append_text(text)
        if text:
            self._text += text
            if style:
                self._spans.append((offset, offset + len(text), style))
        return self

    def append_text(self, text: PlainText) -> PlainText:
        offset = len(self._text)
        if text._text:
            if text._style:
                self._spans.append((offset, offset + len(text._text), text._style))
            self._spans.extend((start + offset, end + offset, st) for start, end, st in text._spans)
            self._text += text._text
        return self

    def __getitem__(self, part: slice) -> PlainText:
        start, stop, step = part.indices(len(self._text))
        if step != 1:
            raise TypeError("slices with a step are not supported")
        stop = max(start, stop)
        out = PlainText(self._text[start:stop], self._style)
        out._spans = [(max(a, start) - start, min(b, stop) - start, st) for a, b, st in self._spans
                      if a < stop and b > start]
        return out

    def rstrip(self) -> None:
        keep = len(self._text.rstrip())
        if keep < len(self._text):
            # as rich crops: spans past the end go, a span across it ends there
            self._spans = [(a, min(b, keep), st) for a, b, st in self._spans if a < keep]
            self._text = self._text[:keep]

    def join(self, lines: Iterable[PlainText]) -> PlainText:
        out = PlainText("", self._style)
        parts: list[PlainText] = []
        for i, line in enumerate(lines):
            if i and self._text:
                parts.append(self)
            parts.append(line)
        texts: list[str] = []
        offset = 0
        for part in parts:
            # as rich joins: an empty part's base style still leaves an (empty) span
            if part._style:
                out._spans.append((offset, offset + len(part._text), part._style))
            out._spans.extend((a + offset, b + offset, st) for a, b, st in part._spans)
            texts.append(part._text)
            offset += len(part._text)
        # one join: adding to an attribute string copies it each time (quadratic in the lines)
        out._text = "".join(texts)
        return out

    @property
    def cell_len(self) -> int:
        return cell_len(self._text)

    def __rich__(self) -> Any:
        from rich.text import Span
        from rich.text import Text as RichText

        return RichText(self._text, style=self._style, spans=[Span(a, b, st) for a, b, st in self._spans])


def cell_len(text: str) -> int:
    """Terminal cells the text takes, as rich counts them (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Cc", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


class PlainConsole:
    """Writes lines to a stream, as a rich console without colour and without wrapping would."""

    color_system: str | None = None

    def __init__(self, file: TextIO) -> None:
        self.file = file

    def print(self, *objects: Any, soft_wrap: bool = True, **_: Any) -> None:
        self.file.write(" ".join(str(o) for o in objects) + "\n")


if not TYPE_CHECKING:

    def Text(text: str = "", style: str | None = None) -> Any:
        return PlainText(text, style)
