"""``--help`` at the terminal's width, as kubectl's.

click wraps running text to ``min(terminal, max_content_width) - 2`` columns but prints the
paragraphs marked ``\\b`` (examples, lists, hand-made line breaks) as they are, so a help written
for 100 columns overflowed an 80-column terminal. Here the width is the terminal's (``COLUMNS``,
else the tty's size, else 80, as click and kubectl read it), and a line of a ``\\b`` paragraph
that does not fit is wrapped at a space with a hanging indent; an example command line is
continued with ``\\`` so that it can still be pasted into a shell.
"""

from __future__ import annotations

from typing import Any

from typer._click import Context
from typer._click.formatting import HelpFormatter, wrap_text

from .helptext import fit_lines

__all__ = ["HelpContext", "WrappingFormatter", "fit_lines", "install_help_formatter"]

#: no upper bound of our own: the terminal decides, as in kubectl
_NO_LIMIT = 1_000_000


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
