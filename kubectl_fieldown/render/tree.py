"""``-o tree`` (the default): the owned part of an object as a tree, each owned node labelled with
its owners in their colours, and a legend of the managedFields entries underneath.

Only owned paths and the nodes that lead to them are drawn (plus unowned leaves with
``--show-unowned``): the tree answers "who owns what", and the full object is one ``kubectl get``
away.

The guides are drawn here and the whole tree is printed as one rich ``Text``: ``rich.tree.Tree``
renders every node through the full console pipeline, which took ~60 ms for a 10-manager
Deployment — a quarter of the time budget of the whole command. Long lines are not re-wrapped
under their guides; values are cut at :data:`LEAF_VALUE_WIDTH` instead.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from ..fieldpath import PathElement
from ..fieldpath.lookup import MISSING
from ..ownership.tree import OwnedField
from .common import (
    TIME_NONE,
    TIME_RELATIVE,
    ManagerColours,
    ObjectView,
    columns,
    display_value,
    element_label,
    format_time,
    make_console,
    print_lines,
    terminal_safe,
)

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import TextIO

    from .styled import Text

__all__ = ["legend", "object_tree", "render_tree"]

LEAF_VALUE_WIDTH = 60
BRANCH, LAST, PIPE, SPACE = "├── ", "└── ", "│   ", "    "


class _Node:
    __slots__ = ("children", "owned")

    def __init__(self) -> None:
        self.owned: OwnedField | None = None
        self.children: dict[PathElement, _Node] = {}


def _trie(fields: Sequence[OwnedField]) -> _Node:
    root = _Node()
    for f in fields:
        node = root
        for pe in f.path:
            nxt = node.children.get(pe)
            if nxt is None:
                nxt = node.children[pe] = _Node()
            node = nxt
        node.owned = f
    return root


def render_tree(
    views: Sequence[ObjectView],
    out: TextIO,
    colours: ManagerColours | None = None,
    now: _dt.datetime | None = None,
    time_mode: str = TIME_RELATIVE,
) -> None:
    from .styled import Text

    console = make_console(out)
    colours = colours or ManagerColours()
    lines: list[Text] = []
    for n, view in enumerate(views):
        if n:
            lines.append(Text())
        colours.assign([e.manager for e in view.entries])
        lines.extend(object_tree(view, colours))
        if view.entries:
            lines.extend(legend(view, colours, now, time_mode, swatch=console.color_system is not None))
    print_lines(console, lines)


def object_tree(view: ObjectView, colours: ManagerColours) -> list[Text]:
    """The tree as lines: the object's kind and name, then one line per node."""
    from .styled import Text

    lines = [Text(view.title, style="bold")]
    if not view.entries:
        lines.append(Text().append(LAST, style="dim").append("no managedFields: nothing is owned", style="dim"))
    elif not view.fields:
        lines.append(Text().append(LAST, style="dim").append("no fields match the filters", style="dim"))
    else:
        _add_children(lines, _trie(view.fields), "", view, colours)
    return lines


def _add_children(lines: list[Text], node: _Node, prefix: str, view: ObjectView, colours: ManagerColours) -> None:
    from .styled import Text

    last_index = len(node.children) - 1
    for i, (pe, child) in enumerate(node.children.items()):
        last = i == last_index
        # only the guides are dim: a style given to Text() would be the base style of the whole line
        line = Text()
        line.append(prefix + (LAST if last else BRANCH), style="dim")
        line.append_text(_label(pe, child, view, colours))
        lines.append(line)
        _add_children(lines, child, prefix + (SPACE if last else PIPE), view, colours)


def _label(pe: PathElement, node: _Node, view: ObjectView, colours: ManagerColours) -> Text:
    from .styled import Text

    text = Text(element_label(pe))
    f = node.owned
    if f is None:
        return text
    if not node.children:
        if f.value is MISSING:
            text.append("  (not set)", style="dim")
        else:
            text.append(": ")
            text.append(display_value(f.value, LEAF_VALUE_WIDTH))
    if not f.owners:
        text.append("  (unowned)", style="dim italic")
        return text
    created = view.created_only(f.path)
    text.append("  (created by " if created else "  ← ", style="dim")
    for i, o in enumerate(f.owners):
        if i:
            text.append(", ")
        text.append(view.owner_label(o), style=f"bold {colours.get(o.manager)}")
    if created:
        text.append(")", style="dim")
    return text


def legend(
    view: ObjectView,
    colours: ManagerColours,
    now: _dt.datetime | None = None,
    time_mode: str = TIME_RELATIVE,
    swatch: bool = True,
) -> list[Text]:
    """One row per managedFields entry: who, how (operation, subresource), which apiVersion, when,
    and how many paths it owns."""
    from .styled import Text

    titles = ["MANAGER", "OPERATION", "SUBRESOURCE", "API VERSION"]
    if time_mode != TIME_NONE:
        titles.append("AGE" if time_mode == TIME_RELATIVE else "TIME")
    titles.append("FIELDS")
    # a coloured block ties legend rows to tree labels; without colour it would only be noise
    lead = [Text(" ")] if swatch else []
    rows: list[list[Text]] = [lead + [Text(t, style="bold") for t in titles]]
    for e in view.entries:
        colour = colours.get(e.manager)
        row = [Text("■", style=colour)] if swatch else []
        row += [
            Text(view.owner_label(e), style=f"bold {colour}"),
            Text(terminal_safe(e.operation)),
            Text(terminal_safe(e.subresource) or "-"),
            Text(terminal_safe(e.api_version)),
        ]
        if time_mode != TIME_NONE:
            row.append(Text(format_time(e.time, time_mode, now)))
        row.append(Text(str(len(e.fields))))
        rows.append(row)
    return [Text(), *columns(rows, gap="  ", right=frozenset({len(rows[0]) - 1}))]
