"""``-o table``: one row per path — PATH, OWNERS, VALUE — in kubectl's borderless column style
(no trailing blanks, so ``awk``/``cut`` and diffs of saved output behave)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ..fieldpath.lookup import MISSING
from .common import ManagerColours, ObjectView, columns, display_value, make_console, path_label, print_lines

if TYPE_CHECKING:
    from .styled import Text

__all__ = ["render_table", "table_rows"]

VALUE_WIDTH = 80


def table_rows(view: ObjectView, colours: ManagerColours) -> list[list[Text]]:
    """PATH, OWNERS and VALUE cells of every field of ``view`` (styled, not padded)."""
    from .styled import Text

    rows: list[list[Text]] = []
    for f in view.fields:
        owners = Text()
        if not f.owners:
            owners.append("(unowned)", style="dim italic")
        for i, o in enumerate(f.owners):
            if i:
                owners.append(", ")
            owners.append(view.owner_label(o), style=colours.get(o.manager))
        value = Text("(not set)", style="dim") if f.value is MISSING else Text(display_value(f.value, VALUE_WIDTH))
        rows.append([Text(path_label(f.path)), owners, value])
    return rows


def render_table(views: Sequence[ObjectView], out: TextIO, colours: ManagerColours | None = None) -> None:
    from .styled import Text

    console = make_console(out)
    colours = colours or ManagerColours()
    for n, view in enumerate(views):
        colours.assign([e.manager for e in view.entries])
        if n:
            console.print()
        if len(views) > 1:
            console.print(Text(view.title, style="bold"))
        if not view.fields:
            why = "no managedFields" if not view.entries else "no fields match the filters"
            console.print(Text(f"{view.title}: {why}", style="dim"))
            continue
        header = [Text(h, style="bold") for h in ("PATH", "OWNERS", "VALUE")]
        print_lines(console, columns([header, *table_rows(view, colours)]))
