"""``--help`` at the terminal's width, as kubectl's.

click wraps running text to ``min(terminal, max_content_width) - 2`` columns but prints the
paragraphs marked ``\\b`` (examples, lists, hand-made line breaks) as they are, so a help written
for 100 columns overflowed an 80-column terminal. Here the width is the terminal's (``COLUMNS``,
else the tty's size, else 80, as click and kubectl read it), and a line of a ``\\b`` paragraph
that does not fit is wrapped at a space with a hanging indent; an example command line is
continued with ``\\`` so that it can still be pasted into a shell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typer._click import Context
from typer._click.formatting import HelpFormatter

from .helptext import definition_list, fit_lines, text_block

__all__ = ["HelpContext", "WrappingFormatter", "fit_lines", "install_help_formatter"]

#: no upper bound of our own: the terminal decides, as in kubectl
_NO_LIMIT = 1_000_000


class WrappingFormatter(HelpFormatter):
    """click's formatter, at the terminal's full width, that also fits ``\\b`` paragraphs and never
    wraps a line inside a hyphenated word (the text and lists laid out by :mod:`.helptext`)."""

    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        del max_width
        super().__init__(indent_increment=indent_increment, width=width, max_width=_NO_LIMIT)

    def write_text(self, text: str) -> None:
        self.write(text_block(text, " " * self.current_indent, self.width))

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        # helptext's layout, the one the root help printed without typer uses: one wrapping rule
        # (never inside a hyphenated word) for both
        self.write(definition_list(rows, self.current_indent, self.width, col_max, col_spacing))


class HelpContext(Context):
    formatter_class = WrappingFormatter


def install_help_formatter(command: Any) -> None:
    """Give ``command`` and its subcommands the wrapping formatter."""
    command.context_class = HelpContext
    for sub in (getattr(command, "commands", None) or {}).values():
        install_help_formatter(sub)
