"""Styled lines for human output, importing rich only when there is colour to show.

Plain output — a pipe, a file, ``NO_COLOR`` — is what scripts, CI logs and ``grep`` see, and
importing rich costs ~60 ms of start-up (a quarter of ``show -i``). :class:`PlainText` (styled
text with rich's semantics, handed to rich through ``__rich__`` when there is colour) and
:class:`PlainConsole` cover the small part of ``rich.text.Text`` and ``rich.console.Console`` that
the renderers use, and print exactly what rich prints without colour. :func:`Text` builds a line;
the console it is printed on decides whether its styles are shown.
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from collections.abc import Iterable

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TextIO

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


# The styles the renderers give, word by word, as rich's SGR parameters: rich prints the sixteen
# named colours with the same 16-colour codes whatever the terminal supports (truecolor, 256, 16).
_ATTRIBUTES = {"bold": (1, "1"), "dim": (2, "2"), "italic": (4, "3"), "underline": (8, "4")}
_COLOUR_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
_COLOURS = {**{name: str(30 + n) for n, name in enumerate(_COLOUR_NAMES)},
            **{f"bright_{name}": str(90 + n) for n, name in enumerate(_COLOUR_NAMES)}}
#: characters rich treats specially (tabs are expanded, control codes kept as they are): rich prints these
_SPECIAL = frozenset(chr(c) for c in (*range(0x20), 0x7F)) - {"\n"}


def _style_codes(style: str) -> tuple[int, str | None] | None:
    """(attribute bits, colour code) of a style string, or None for one outside the words above."""
    bits, colour = 0, None
    for word in style.split():
        if word in _ATTRIBUTES:
            bits |= _ATTRIBUTES[word][0]
        elif word in _COLOURS:
            colour = _COLOURS[word]  # as rich parses: the last colour named wins
        else:
            return None
    return bits, colour


def _sgr(bits: int, colour: str | None) -> str:
    codes = [code for bit, code in _ATTRIBUTES.values() if bits & bit]
    if colour is not None:
        codes.append(colour)
    return ";".join(codes)


def ansi_lines(text: PlainText, colour: bool) -> str | None:
    """``text`` and a newline as a rich console prints it with ``soft_wrap=True`` on a terminal of
    16 colours or more (``colour``) or with no colour system (TERM=dumb), or None when the text
    needs rich (a style or a character outside what this follows).

    As rich does it: the text is split into lines, each keeping the base style, the newlines
    between them unstyled; within a line every stretch between span boundaries gets the styles of
    the spans over it combined in span order (attributes add up, the last colour wins), printed as
    ``ESC[<codes>m...ESC[0m``, or bare when it has no codes."""
    raw = text._text
    if not raw.isascii() or not raw.isprintable():
        if any(ch in _SPECIAL for ch in raw):
            return None
    parsed: dict[str, tuple[int, str | None]] = {}
    for style in {text._style, *(st for _, _, st in text._spans)}:
        codes = _style_codes(style)
        if codes is None:
            return None
        parsed[style] = codes
    if not colour:
        return raw + "\n"
    base = parsed[text._style]
    lines = raw.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    # each span's part on each line it covers (most cover one), in span order
    on_line: list[list[tuple[int, int, int]]] = [[] for _ in lines]
    for n, (a, b, _) in enumerate(text._spans, 1):
        for i in range(max(bisect.bisect_right(starts, a) - 1, 0), len(lines)):
            start = starts[i]
            if start >= b:
                break
            lo, hi = max(a, start), min(b, start + len(lines[i]))
            if lo < hi:
                on_line[i].append((lo, hi, n))
    out: list[str] = []
    for line, start, spans in zip(lines, starts, on_line, strict=True):
        # (offset, leaving, span number): entering before leaving at one offset, as rich sorts them
        events = [(start, False, 0), (start + len(line), True, 0)]
        for lo, hi, n in spans:
            events += [(lo, False, n), (hi, True, n)]
        events.sort(key=lambda e: (e[0], e[1]))
        active: set[int] = set()
        for (offset, leaving, n), (next_offset, _, _) in itertools.pairwise(events):
            if leaving:
                active.discard(n)
            else:
                active.add(n)
            if next_offset > offset:
                bits, fg = 0, None
                for m in sorted(active):
                    b_bits, b_fg = base if m == 0 else parsed[text._spans[m - 1][2]]
                    bits |= b_bits
                    fg = b_fg if b_fg is not None else fg
                piece = raw[offset:next_offset]
                sgr = _sgr(bits, fg)
                out.append(f"\x1b[{sgr}m{piece}\x1b[0m" if sgr else piece)
        out.append("\n")
    return "".join(out)


class AnsiConsole:
    """A colour console for the renderers' lines without importing rich: ``print(line,
    soft_wrap=True)`` of a :class:`PlainText` or a string is written as rich would write it
    (:func:`ansi_lines`); any other call goes to the rich console ``make_rich`` builds, on first
    need. rich's import is a fifth of a ``show -i`` on a terminal."""

    def __init__(self, file: TextIO, color_system: str | None, make_rich: Any) -> None:
        self.file = file
        self.color_system = color_system
        self._make_rich = make_rich
        self._rich: Any = None

    def print(self, *objects: Any, **options: Any) -> None:
        if len(objects) == 1 and options == {"soft_wrap": True}:
            obj = objects[0]
            text = obj if isinstance(obj, PlainText) else PlainText(obj) if isinstance(obj, str) else None
            written = ansi_lines(text, self.color_system is not None) if text is not None else None
            if written is not None:
                self.file.write(written)
                return
        if self._rich is None:
            self._rich = self._make_rich()
        self._rich.print(*objects, **options)


if not TYPE_CHECKING:

    def Text(text: str = "", style: str | None = None) -> Any:
        return PlainText(text, style)
