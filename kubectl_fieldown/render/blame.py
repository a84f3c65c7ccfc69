"""``-o blame``: the object's YAML with an owner column per line, like kubectl-blame.

Each YAML line stands for one path, and a line is attributed to that path's owners:

* ``key: value`` and ``key:`` lines — the path of ``key``;
* ``- name: nginx`` (the first line of a list item) — its first field, or the item itself when that
  field has no owner of its own (an Update manager that created the item owns ``.`` of it);
* lines below a node that is owned whole (an atomic list, map or struct: a member of the owned set
  with nothing owned below it) are attributed to the owners of that node, marked ``↑``;
* owners of only the map or list item that a line opens, with fields below it owned on their own
  (FieldsV1's ``"."``), say ``(created by ...)``, as in the tree and the table.

Lines that nobody owns have an empty owner column: server-managed metadata (``uid``,
``resourceVersion`` ...) is never tracked, and defaulted fields stay unowned under server-side
apply. With ``--show-unowned`` set-but-unowned leaves say ``(unowned)``. ``metadata.managedFields``
itself is not shown. On a terminal the YAML part of a line is cut to its width, never the owner column.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from ..base.yamlmodule import import_yaml
from ..fieldpath import FieldSet, Path, field
from ..ownership.tree import OwnedField, Owner, item_elements
from .common import (
    TIME_NONE,
    TIME_RELATIVE,
    ManagerColours,
    ObjectView,
    fit_cells,
    format_time,
    latest_time,
    make_console,
    terminal_safe,
)
from .styled import cell_len

if TYPE_CHECKING:
    from .styled import Text

__all__ = ["BlameLine", "blame_lines", "render_blame"]

OWNER_WIDTH = 40
MIN_TEXT_WIDTH = 20  # of the YAML part of a line, however narrow the terminal
INHERITED_MARK = " ↑"


@dataclass(frozen=True)
class BlameLine:
    """One line of YAML, the owners it is attributed to, and how: through an atomic parent
    (``inherited``), as owners of only the map or list item the line opens (``created``, see
    :meth:`ObjectView.created_only`), or not at all though set (``unowned``, for ``--show-unowned``)."""

    text: str
    owners: tuple[Owner, ...] = ()
    inherited: bool = False
    unowned: bool = False
    created: bool = False


def render_blame(
    views: Sequence[ObjectView],
    out: TextIO,
    time_mode: str = TIME_RELATIVE,
    colours: ManagerColours | None = None,
    now: _dt.datetime | None = None,
    width: int | None = None,
) -> None:
    """Print the blame of ``views``; with ``width`` (a terminal's) the YAML part of a line is cut to
    fit, so that the owner column stays a column."""
    from .styled import Text

    console = make_console(out)
    colours = colours or ManagerColours()
    for n, view in enumerate(views):
        colours.assign([e.manager for e in view.entries])
        if n:
            console.print("---")
        lines = blame_lines(view)
        gutter = min(max((cell_len(owner_text(line, view)) for line in lines), default=0), OWNER_WIDTH)
        times = [
            "" if time_mode == TIME_NONE or not line.owners else format_time(latest_time(line.owners, view.entries),
                                                                             time_mode, now)
            for line in lines
        ]
        twidth = max((len(t) for t in times), default=0)
        for line, t in zip(lines, times, strict=True):
            row = owner_cell(line, view, colours, gutter)
            if time_mode != TIME_NONE:
                row.append("  ")
                row.append(t.rjust(twidth), style="dim")
            row.append("  │ ", style="dim")
            text = Text(line.text)
            if width is not None:
                text = fit_cells(text, max(width - row.cell_len, MIN_TEXT_WIDTH))
            row.append_text(text)
            console.print(row, soft_wrap=True)


def owner_text(line: BlameLine, view: ObjectView) -> str:
    """The owner column of a line, before it is fitted to the column's width."""
    if line.unowned:
        return "(unowned)"
    if not line.owners:
        return ""
    lead, tail = _around(line)
    return lead + ", ".join(view.owner_label(o) for o in line.owners) + tail


def _around(line: BlameLine) -> tuple[str, str]:
    if line.created:
        return "(created by ", ")"
    return "", INHERITED_MARK if line.inherited else ""


def owner_cell(line: BlameLine, view: ObjectView, colours: ManagerColours, width: int | None = None) -> Text:
    """The owner column of a line in the owners' colours, padded or cut to ``width`` cells."""
    from .styled import Text

    label = owner_text(line, view)
    width = cell_len(label) if width is None else width
    cell = Text()
    if line.unowned:
        cell.append(label, style="dim italic")
    elif line.owners:
        lead, tail = _around(line)
        style_extra = " dim" if line.inherited else ""
        cell.append(lead, style="dim")
        if cell_len(label) > width:
            # too many co-owners for the column: the first one and a count keep lines aligned
            first = view.owner_label(line.owners[0])
            more = f" +{len(line.owners) - 1}" if len(line.owners) > 1 else ""
            room = width - cell_len(lead) - cell_len(more) - cell_len(tail)
            cell.append_text(fit_cells(Text(first, style=colours.get(line.owners[0].manager) + style_extra),
                                       max(room, 1)))
            cell.append(more)
        else:
            for i, o in enumerate(line.owners):
                if i:
                    cell.append(", ")
                cell.append(view.owner_label(o), style=colours.get(o.manager) + style_extra)
        cell.append(tail, style="dim")
    cell.append(" " * max(width - cell.cell_len, 0))
    return cell


# --- attribution -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Attributed:
    owners: tuple[Owner, ...] = ()
    inherited: bool = False
    unowned: bool = False
    created: bool = False


class _Attribution:
    def __init__(self, view: ObjectView) -> None:
        self.view = view
        self.by_path: dict[Path, OwnedField] = {f.path: f for f in view.fields}
        self.owned = view.owned

    def owners(self, path: Path) -> _Attributed:
        f = self.by_path.get(path)
        if f is not None:
            if not f.owners:
                return _Attributed(unowned=True)
            return _Attributed(f.owners, created=self.view.created_only(path))
        # an owned node with nothing owned below it is owned whole: its lines belong to its owners
        for i in range(len(path) - 1, 0, -1):
            anc = path[:i]
            if self.owned.has(anc) and self.owned.descend(anc).is_empty():
                af = self.by_path.get(anc)
                if af is not None and af.owners:
                    return _Attributed(af.owners, inherited=True)
                return _Attributed()
        return _Attributed()


def blame_lines(view: ObjectView) -> list[BlameLine]:
    """The YAML of ``view.obj`` (without managedFields), one :class:`BlameLine` per line."""
    obj = dict(view.obj)
    md = obj.get("metadata")
    if isinstance(md, Mapping) and "managedFields" in md:
        obj["metadata"] = {k: v for k, v in md.items() if k != "managedFields"}
    emitter = _Emitter(_Attribution(view), view.owned)
    emitter.mapping(obj, (), 0, None)
    return emitter.lines


class _Emitter:
    def __init__(self, attribution: _Attribution, owned: FieldSet) -> None:
        self.attr = attribution
        self.owned = owned
        self.lines: list[BlameLine] = []

    def _add(self, text: str, path: Path, item: Path | None = None) -> None:
        got = self.attr.owners(path)
        if item is not None and (got.inherited or not got.owners):
            # the first line of a list item stands for the item and its first field: when the field
            # has no owner of its own, the item's owners (often an Update manager's ".") speak for it
            for_item = self.attr.owners(item)
            if for_item.owners and (not got.owners or not for_item.inherited):
                got = for_item
        self.lines.append(BlameLine(text, got.owners, got.inherited, got.unowned and not got.owners, got.created))

    def mapping(self, m: Mapping[str, Any], path: Path, indent: int, item_path: Path | None) -> None:
        """Emit a map; with ``item_path`` its first key goes on the ``- `` line of that list item."""
        for i, (k, v) in enumerate(m.items()):
            if i == 0 and item_path is not None:
                prefix = " " * (indent - 2) + "- "
                extra: Path | None = item_path
            else:
                prefix = " " * indent
                extra = None
            p = (*path, field(k))
            key_text = yaml_scalar(k)
            if isinstance(v, Mapping) and v:
                self._add(f"{prefix}{key_text}:", p, extra)
                self.mapping(v, p, indent + 2, None)
            elif isinstance(v, list) and v:
                self._add(f"{prefix}{key_text}:", p, extra)
                self.sequence(v, p, indent)
            else:
                self._add(f"{prefix}{key_text}: {yaml_scalar(v)}", p, extra)

    def sequence(self, items: list[Any], path: Path, indent: int) -> None:
        elements = item_elements(items, self.owned.descend(path))
        for item, pe in zip(items, elements, strict=True):
            p = (*path, pe)
            if isinstance(item, Mapping) and item:
                self.mapping(item, p, indent + 2, p)
            elif isinstance(item, list) and item:
                self._add(" " * indent + "-", p)
                self.sequence(item, p, indent + 2)
            else:
                self._add(" " * indent + "- " + yaml_scalar(item), p)


_PLAIN_CACHE: dict[str, bool] = {}


def yaml_scalar(v: Any) -> str:
    """A value on one line of YAML: plain when YAML would read it back as the same string, else a
    double-quoted (JSON) string — multi-line strings stay on one line so that lines map to paths.
    Control characters are escaped (C1 and DEL too, which JSON leaves alone)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, Mapping):
        return "{}" if not v else terminal_safe(json.dumps(v, ensure_ascii=False))
    if isinstance(v, list):
        return "[]" if not v else terminal_safe(json.dumps(v, ensure_ascii=False))
    s = str(v)
    plain = _PLAIN_CACHE.get(s)
    if plain is None:
        plain = _PLAIN_CACHE[s] = _plain_ok(s)
    return s if plain else terminal_safe(json.dumps(s, ensure_ascii=False))


def _plain_ok(s: str) -> bool:
    import_yaml()
    import yaml

    if not s or "\n" in s or len(s) > 1000:
        return False
    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out = yaml.dump(s, Dumper=dumper, width=1 << 30, allow_unicode=True)
    first = out.split("\n", 1)[0]
    return first == s
