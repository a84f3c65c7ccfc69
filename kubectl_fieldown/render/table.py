"""``-o table``: one row per path — PATH, OWNERS, VALUE — in kubectl's borderless column style
(no trailing blanks, so ``awk``/``cut`` and diffs of saved output behave).

Several objects make one table, led by NAMESPACE and NAME columns as ``kubectl get -A`` prints
them. On a terminal every row is one line that fits its width: values, then owners, then paths (at
their start, since their ends tell rows apart) are cut with ``…``; ``-o json`` has them whole."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ..fieldpath.lookup import MISSING
from .common import (
    ManagerColours,
    ObjectView,
    columns,
    display_value,
    fit_columns,
    make_console,
    path_label,
    print_lines,
    terminal_safe,
)

if TYPE_CHECKING:
    from .styled import Text

__all__ = ["render_table", "table_rows"]

VALUE_WIDTH = 80  # off a terminal; on one, the room left in its width
GAP = "   "
# narrowest a column is cut to, in the order columns give up room to fit a terminal
NARROWEST_VALUE, NARROWEST_OWNERS, NARROWEST_PATH, NARROWEST_NAME = 12, 20, 24, 12


def table_rows(view: ObjectView, colours: ManagerColours, value_width: int = VALUE_WIDTH) -> list[list[Text]]:
    """PATH, OWNERS and VALUE cells of every field of ``view`` (styled, not padded)."""
    from .styled import Text

    rows: list[list[Text]] = []
    for f in view.fields:
        owners = Text()
        created = bool(f.owners) and view.created_only(f.path)
        if not f.owners:
            owners.append("(unowned)", style="dim italic")
        elif created:
            owners.append("(created by ", style="dim")
        for i, o in enumerate(f.owners):
            if i:
                owners.append(", ")
            owners.append(view.owner_label(o), style=colours.get(o.manager))
        if created:
            owners.append(")", style="dim")
        value = Text("(not set)", style="dim") if f.value is MISSING else Text(display_value(f.value, value_width))
        rows.append([Text(path_label(f.path)), owners, value])
    return rows


def render_table(
    views: Sequence[ObjectView],
    out: TextIO,
    colours: ManagerColours | None = None,
    width: int | None = None,
) -> None:
    """Print one table of the fields of ``views``; ``width``: a terminal's, which every row fits."""
    from .styled import Text

    console = make_console(out)
    colours = colours or ManagerColours()
    for view in views:
        colours.assign([e.manager for e in view.entries])
    value_width = VALUE_WIDTH if width is None else width
    if len(views) == 1 and not views[0].fields:
        view = views[0]
        why = "no managedFields" if not view.entries else "no fields match the filters"
        console.print(Text(f"{view.title}: {why}", style="dim"))
        return
    lead_titles: list[str] = []
    if len(views) > 1:
        if any(v.namespace for v in views):
            lead_titles.append("NAMESPACE")
        lead_titles.append("NAME")
    kinds = {v.kind for v in views}
    rows: list[list[Text]] = [[Text(h, style="bold") for h in (*lead_titles, "PATH", "OWNERS", "VALUE")]]
    for view in views:
        lead: list[Text] = []
        if lead_titles:
            if "NAMESPACE" in lead_titles:
                lead.append(Text(terminal_safe(view.namespace or "-")))
            # several kinds: kubectl's KIND/NAME, so that rows of a widget and a gadget differ
            lead.append(Text(terminal_safe(view.name if len(kinds) == 1 else f"{view.kind}/{view.name}")))
        if not view.fields:
            why = "no managedFields" if not view.entries else "no fields match the filters"
            rows.append([*lead, Text("-"), Text(f"({why})", style="dim")])
            continue
        rows.extend([*lead, *row] for row in table_rows(view, colours, value_width))
    from .prefs import no_headers

    if no_headers():
        rows = rows[1:]  # --no-headers, as kubectl's: the columns fit the rows alone
    if width is not None:
        n = len(lead_titles)
        shrink = [(n + 2, NARROWEST_VALUE, False), (n + 1, NARROWEST_OWNERS, False), (n, NARROWEST_PATH, True)]
        shrink += [(i, NARROWEST_NAME, False) for i in reversed(range(n))]
        rows = fit_columns(rows, width, shrink, gap=len(GAP))
    print_lines(console, columns(rows, gap=GAP))
