"""Styled lines for human output, importing rich only when there is colour to show.

Plain output — a pipe, a file, ``NO_COLOR`` — is what scripts, CI logs and ``grep`` see, and
importing rich costs ~60 ms of start-up (a quarter of ``show -i``). :class:`PlainText` and
:class:`PlainConsole` cover the small part of ``rich.text.Text`` and ``rich.console.Console`` that
the renderers use, and print exactly what rich prints without colour.

:func:`Text` builds the current kind of text: :func:`kubectl_fieldown.render.common.make_console`
chooses, when it makes the console for an output stream, so build lines after making it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.text import Text as Text


class PlainText:
    """A line of text without styles (styles given to it are ignored)."""

    __slots__ = ("_text",)

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self._text = text

    @property
    def plain(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def __len__(self) -> int:
        return len(self._text)

    def __add__(self, other: str | PlainText) -> PlainText:
        return PlainText(self._text + (other._text if isinstance(other, PlainText) else other))

    def append(self, text: str | PlainText, style: str | None = None) -> PlainText:
        self._text += text._text if isinstance(text, PlainText) else text
        return self

    def __getitem__(self, part: slice) -> PlainText:
        return PlainText(self._text[part])

    def append_text(self, text: PlainText) -> PlainText:
        self._text += text._text
        return self

    def rstrip(self) -> None:
        self._text = self._text.rstrip()

    def join(self, lines: Iterable[PlainText]) -> PlainText:
        return PlainText(self._text.join(line._text for line in lines))

    @property
    def cell_len(self) -> int:
        return cell_len(self._text)


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


_plain = False


def use_plain(plain: bool) -> None:
    """Make :func:`Text` build plain (True) or rich (False) text from now on."""
    global _plain
    _plain = plain


if not TYPE_CHECKING:

    def Text(text: str = "", style: str | None = None) -> Any:
        if _plain:
            return PlainText(text, style)
        from rich.text import Text as RichText

        return RichText(text, style=style or "")
