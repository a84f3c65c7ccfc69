"""``--help`` at the terminal's width, as kubectl's.

click wraps running text to ``min(terminal, max_content_width) - 2`` columns but prints the
paragraphs marked ``\\b`` (examples, lists, hand-made line breaks) as they are, so a help written
for 100 columns overflowed an 80-column terminal. Here the width is the terminal's (``COLUMNS``,
else the tty's size, else 80, as click and kubectl read it), and a line of a ``\\b`` paragraph
that does not fit is wrapped at a space with a hanging indent; an example command line is
continued with ``\\`` so that it can still be pasted into a shell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from typer._click import Context
from typer._click.formatting import HelpFormatter, wrap_text

from .helptext import fit_lines

__all__ = ["HelpContext", "WrappingFormatter", "fit_lines", "install_help_formatter"]

#: no upper bound of our own: the terminal decides, as in kubectl
_NO_LIMIT = 1_000_000


#: stands in for a hyphen inside a word while click wraps (its wrapper breaks after any hyphen, so
#: ``--fail-on`` or ``kubectl-client-side-apply`` could end one line and go on in the next); one
#: character for one, so that the widths stay the same, and a private-use one, which no help holds
_HYPHEN = "\ue000"
_IN_WORD_HYPHEN = re.compile(r"(?<=\S)-(?=\S)")


def _unbreakable(text: str) -> str:
    return _IN_WORD_HYPHEN.sub(_HYPHEN, text)


class WrappingFormatter(HelpFormatter):
    """click's formatter, at the terminal's full width, that also fits ``\\b`` paragraphs and never
    wraps a line at a hyphen."""

    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        del max_width
        super().__init__(indent_increment=indent_increment, width=width, max_width=_NO_LIMIT)

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        wrapped = wrap_text(_unbreakable(text), self.width, initial_indent=indent, subsequent_indent=indent,
                            preserve_paragraphs=True)
        self.write(fit_lines(wrapped, self.width))
        self.write("\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(term, _unbreakable(definition)) for term, definition in rows], col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(_HYPHEN, "-")


class HelpContext(Context):
    formatter_class = WrappingFormatter


def install_help_formatter(command: Any) -> None:
    """Give ``command`` and its subcommands the wrapping formatter."""
    command.context_class = HelpContext
    for sub in (getattr(command, "commands", None) or {}).values():
        install_help_formatter(sub)
