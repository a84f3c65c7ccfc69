"""Help text laid out as click lays it out, without importing click (typer): the bare root help
(``kubectl fieldown``, ``--help``, ``help``) is printed from here, in about a third of the time
typer takes to start. tests/cli/test_main_help.py keeps it equal to typer's, at every width.

What is reproduced: click's paragraph wrapping (``wrap_text`` with ``preserve_paragraphs``:
``\\b`` paragraphs kept as they are), its definition lists (options, commands) and the usage line;
:func:`fit_lines` fits a ``\\b`` line that is too long. Unlike click, a line never ends inside a
hyphenated word. :mod:`.helpformat` lays out every command's help with :func:`text_block` and
:func:`definition_list` too, so that typer's help and this one follow the same rule.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence

__all__ = ["definition_list", "fit_lines", "help_width", "render_group_help", "text_block", "wrap_text"]


def help_width() -> int:
    """The width click's formatter uses with no upper bound of its own (see :mod:`.helpformat`):
    the terminal's (``COLUMNS``, else the tty's, else 80) less 2, at least 50."""
    # shutil.get_terminal_size's columns, without importing shutil
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(columns - 2, 50)


def fit_lines(text: str, width: int) -> str:
    """``text`` with every line longer than ``width`` wrapped at spaces (never inside a word): a
    command line continues with `` \\`` on lines indented 4 more, a ``#`` comment on lines that
    start with ``#`` again, other text at its own indentation."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        lead = " " * (len(line) - len(body))
        if body.startswith(("kubectl ", "cd ")):
            first, rest, tail = lead, lead + "    ", " \\"
        elif body.startswith("# "):
            first, rest, tail, body = lead + "# ", lead + "# ", "", body[2:]
        else:
            first, rest, tail = lead, lead, ""
        parts = textwrap.wrap(body, width=width - len(tail), initial_indent=first, subsequent_indent=rest,
                              break_long_words=False, break_on_hyphens=False)
        out += [p + (tail if i < len(parts) - 1 else "") for i, p in enumerate(parts)]
    return "\n".join(out)


class _Wrapper(textwrap.TextWrapper):
    # click's: a word longer than the line is cut where the line ends
    def _handle_long_word(self, reversed_chunks: list[str], cur_line: list[str], cur_len: int,
                          width: int) -> None:
        space_left = max(width - cur_len, 1)
        last = reversed_chunks[-1]
        cur_line.append(last[:space_left])
        reversed_chunks[-1] = last[space_left:]


def wrap_text(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "",
              preserve_paragraphs: bool = False) -> str:
    """click's ``wrap_text``: paragraphs (separated by empty lines) filled to ``width``, a
    paragraph that starts with a ``\\b`` line kept as it is, each at its own indentation; a line
    never ends at a hyphen inside a word."""
    text = text.expandtabs()
    # never at a hyphen inside a word: --fail-on stays whole
    wrapper = _Wrapper(width, initial_indent=initial_indent, subsequent_indent=subsequent_indent,
                       replace_whitespace=False, break_on_hyphens=False)
    if not preserve_paragraphs:
        return wrapper.fill(text)
    paragraphs: list[tuple[int, bool, str]] = []
    buf: list[str] = []
    indent: int | None = None

    def flush() -> None:
        if buf:
            if buf[0].strip() == "\b":
                paragraphs.append((indent or 0, True, "\n".join(buf[1:])))
            else:
                paragraphs.append((indent or 0, False, " ".join(buf)))
            buf.clear()

    for line in text.splitlines():
        if not line:
            flush()
            indent = None
        else:
            if indent is None:
                stripped = line.lstrip()
                indent = len(line) - len(stripped)
                line = stripped
            buf.append(line)
    flush()
    out = []
    for extra, raw, par in paragraphs:
        wrapper.initial_indent = initial_indent + " " * extra
        wrapper.subsequent_indent = subsequent_indent + " " * extra
        if raw:
            out.append("\n".join((wrapper.initial_indent if i == 0 else wrapper.subsequent_indent) + line
                                 for i, line in enumerate(par.splitlines())))
        else:
            out.append(wrapper.fill(par))
    return "\n\n".join(out)


def text_block(text: str, indent: str, width: int) -> str:
    """Running text and ``\\b`` paragraphs at ``width`` (the formatter's ``write_text``)."""
    return fit_lines(wrap_text(text, width, indent, indent, preserve_paragraphs=True), width) + "\n"


def definition_list(rows: Sequence[tuple[str, str]], indent: int, width: int, col_max: int = 30,
                    col_spacing: int = 2) -> str:
    """A definition list (options, commands) as click's ``HelpFormatter.write_dl`` lays it out, with
    this module's wrapping."""
    rows = list(rows)
    first_col = min(max(len(first) for first, _ in rows), col_max) + col_spacing
    text_width = max(width - first_col - 2, 10)
    out: list[str] = []
    for first, second in rows:
        out.append(" " * indent + first)
        if not second:
            out.append("\n")
            continue
        if len(first) <= first_col - col_spacing:
            out.append(" " * (first_col - len(first)))
        else:
            out.append("\n" + " " * (first_col + indent))
        lines = wrap_text(second, text_width, preserve_paragraphs=True).splitlines() or [""]
        out.append(lines[0] + "\n")
        out += [" " * (first_col + indent) + line + "\n" for line in lines[1:]]
    return "".join(out)


def render_group_help(prog: str, usage: str, help_text: str, options: Sequence[tuple[str, str]],
                      commands: Sequence[tuple[str, str]], epilog: str, width: int) -> str:
    """A command group's ``--help`` as typer (``rich_markup_mode=None``) prints it, with
    :mod:`.helpformat`'s formatter: usage, help, options, commands, epilog. The texts must be
    what ``inspect.cleandoc`` leaves unchanged (no common indentation, no surrounding blank lines)."""
    prefix = f"Usage: {prog} "
    parts = [wrap_text(usage, width, prefix, " " * len(prefix)) + "\n"]
    if help_text:
        parts += ["\n", text_block(help_text, "  ", width)]
    for heading, rows in (("Options", options), ("Commands", commands)):
        if rows:
            parts += ["\n", f"{heading}:\n", definition_list(rows, 2, width)]
    if epilog:
        parts += ["\n", text_block(epilog, "  ", width)]
    return "".join(parts)

