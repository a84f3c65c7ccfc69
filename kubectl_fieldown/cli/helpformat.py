"""``--help`` at the terminal's width, as kubectl's.

click wraps running text to ``min(terminal, max_content_width) - 2`` columns but prints the
paragraphs marked ``\\b`` (examples, lists, hand-made line breaks) as they are, so a help written
for 100 columns overflowed an 80-column terminal. Here the width is the terminal's (``COLUMNS``,
else the tty's size, else 80, as click and kubectl read it), and a line of a ``\\b`` paragraph
that does not fit is wrapped at a space with a hanging indent; an example command line is
continued with ``\\`` so that it can still be pasted into a shell.
"""

from __future__ import annotations

import textwrap
from typing import Any

from typer._click import Context
from typer._click.formatting import HelpFormatter, wrap_text

__all__ = ["HelpContext", "WrappingFormatter", "fit_lines", "install_help_formatter"]

#: no upper bound of our own: the terminal decides, as in kubectl
_NO_LIMIT = 1_000_000


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


class WrappingFormatter(HelpFormatter):
    """click's formatter, at the terminal's full width, that also fits ``\\b`` paragraphs."""

    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        del max_width
        super().__init__(indent_increment=indent_increment, width=width, max_width=_NO_LIMIT)

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        wrapped = wrap_text(text, self.width, initial_indent=indent, subsequent_indent=indent,
                            preserve_paragraphs=True)
        self.write(fit_lines(wrapped, self.width))
        self.write("\n")


class HelpContext(Context):
    formatter_class = WrappingFormatter


def install_help_formatter(command: Any) -> None:
    """Give ``command`` and its subcommands the wrapping formatter."""
    command.context_class = HelpContext
    for sub in (getattr(command, "commands", None) or {}).values():
        install_help_formatter(sub)
