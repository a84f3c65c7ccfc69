"""What every renderer shares: the view model, manager colours, ages, owner labels, redaction.

Renderers take :class:`ObjectView` objects that the command has already filtered and redacted;
they never decode managedFields or look at files or the cluster (fetch → decode → analyse →
render). ``rich`` is imported only by :func:`make_console`, so the JSON and YAML outputs never pay
for it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence

from ..base.record import Record
from ..base.redact import REDACTED, redact_secret
from ..base.value import escape_controls, value_on_one_line
from ..base.yamlmodule import import_yaml
from ..fieldpath import FIELD, FieldSet, Path, PathElement, element_string, path_string
from ..fieldpath.lookup import MISSING
from ..ownership.managedfields import ManagedFieldsEntry, parse_time
from ..ownership.tree import OwnedField, Owner

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from rich.console import Console

    from .styled import Text


def counted(n: int, noun: str) -> str:
    """``1 object``, ``2 objects``, ``1,204 objects``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


__all__ = [
    "MISSING",
    "REDACTED",
    "ManagerColours",
    "ObjectView",
    "OwnerLabels",
    "display_value",
    "element_label",
    "format_time",
    "human_duration",
    "make_console",
    "owner_label",
    "path_label",
    "redact_secret",
    "terminal_safe",
    "write_json",
    "write_yaml",
]


TIME_RELATIVE = "relative"
TIME_FULL = "full"
TIME_NONE = "none"
TIME_MODES = (TIME_RELATIVE, TIME_FULL, TIME_NONE)


class ObjectView(Record, mutable=True):
    """One object ready to render.

    ``obj`` is the object as it should be shown (already redacted); ``entries`` are all of its
    managedFields entries (filters never hide a manager from the legend); ``fields`` are the rows
    to show, in canonical order — owned paths, plus unowned leaves (``owners == ()``) when asked
    for; ``owned`` is the union of every entry's set, which renderers need to name list items the
    way the server does."""

    __slots__ = ("_labels", "api_version", "entries", "fields", "kind", "name", "namespace", "obj", "owned")
    api_version: str
    kind: str
    namespace: str | None
    name: str
    obj: Mapping[str, Any]
    entries: list[ManagedFieldsEntry]
    fields: list[OwnedField]
    owned: FieldSet
    _labels: OwnerLabels | None  # a cache

    def __init__(self, api_version: str, kind: str, namespace: str | None, name: str, obj: Mapping[str, Any],
                 entries: list[ManagedFieldsEntry], fields: list[OwnedField], owned: FieldSet | None = None) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.obj = obj
        self.entries = entries
        self.fields = fields
        self.owned = FieldSet() if owned is None else owned
        self._labels = None

    @property
    def title(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return terminal_safe(f"{self.kind} {ns}{self.name}")

    def owner_label(self, owner: Owner | ManagedFieldsEntry) -> str:
        """:func:`owner_label` among this view's entries (computed for all of them once)."""
        if self._labels is None:
            self._labels = OwnerLabels(self.entries)
        return self._labels(owner)

    def created_only(self, path: Path) -> bool:
        """Do the owners of ``path`` own only the map or list item itself, not what is in it?

        That is FieldsV1's ``"."`` marker: the entry created the map (an Update) or lists the item
        in its manifest (an Apply), and what is below has owners of its own. Shown as
        "owner of path", a reader takes it for the whole subtree. Without anything owned below,
        an owned node is owned whole (an atomic value, or a leaf)."""
        return bool(path) and not self.owned.descend(path).is_empty()


# --- secrets -----------------------------------------------------------------------------------


# --- machine output ------------------------------------------------------------------------------


_C1_AND_DEL = re.compile("[\x7f-\x9f]")


def unicode_ok(out: TextIO) -> bool:
    """Can ``out`` carry any text? False for a stream in ASCII or Latin-1 (``PYTHONIOENCODING=ascii``):
    machine output then escapes what it cannot write (losslessly) instead of failing."""
    import codecs

    encoding = getattr(out, "encoding", None)
    if not isinstance(encoding, str):
        return True  # a StringIO: text, not bytes
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def write_json(doc: Any, out: TextIO) -> None:
    """JSON of a machine-readable document; C1 controls and DEL escaped as ``\\u00xx`` (JSON itself
    escapes only C0), everything else non-ASCII as is unless ``out`` cannot carry it."""
    # one write: json.dump with indent writes piecemeal through the pure-Python encoder
    text = json.dumps(doc, indent=2, ensure_ascii=not unicode_ok(out))
    if _C1_AND_DEL.search(text):
        # such characters can only be inside strings, where an escape means the same (the C0 ones
        # json has escaped, and the newlines of the indentation must stay)
        text = _C1_AND_DEL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    out.write(text + "\n")


def write_yaml(doc: Any, out: TextIO) -> None:
    """YAML of a machine-readable document, in insertion order, without anchors and aliases.

    The same object often appears twice in these documents (a field's value inside its parent's
    value, an object's managedFields next to the object): PyYAML would then write ``&id001`` and
    ``*id001``, which readers of the documented contract should not have to resolve."""
    import_yaml()
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    dumper = type("NoAliasDumper", (base,), {"ignore_aliases": lambda self, data: True})
    # YAML escapes non-printable characters itself; without unicode, every non-ASCII one too
    out.write(yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False,
                        allow_unicode=unicode_ok(out), width=1 << 30))


# --- owners, colours and times -----------------------------------------------------------------


class ManagerColours:
    """One colour per manager name, given in order of first appearance (the legend's order, which is
    the object's managedFields order), so the same object gets the same colours in every output and
    every run.

    The palette is the twelve ANSI colours that read on dark and light backgrounds (not black,
    white or grey): rich prints them as the same 16-colour codes whatever the terminal supports, so
    managers that differ in a truecolor terminal differ in a 16-colour one too (256-colour names
    fell onto the same few ANSI colours there: kubectl-edit and kubectl's scale entry were both
    bright green). After twelve managers the colours come again underlined, so 24 managers in one
    output stay apart; beyond that they repeat."""

    PALETTE = (
        "cyan",
        "magenta",
        "green",
        "yellow",
        "bright_blue",
        "red",
        "bright_cyan",
        "bright_magenta",
        "bright_green",
        "bright_yellow",
        "blue",
        "bright_red",
    )
    VARIANTS = ("", " underline")

    def __init__(self) -> None:
        self._by_manager: dict[str, str] = {}

    @classmethod
    def distinct(cls) -> int:
        """How many managers get a style of their own before styles repeat."""
        return len(cls.PALETTE) * len(cls.VARIANTS)

    def assign(self, managers: Sequence[str]) -> None:
        """Fix the colours of ``managers`` in this order (call with the legend order first)."""
        for m in managers:
            self.get(m)

    def get(self, manager: str) -> str:
        colour = self._by_manager.get(manager)
        if colour is None:
            n = len(self._by_manager) % self.distinct()
            colour = self.PALETTE[n % len(self.PALETTE)] + self.VARIANTS[n // len(self.PALETTE)]
            self._by_manager[manager] = colour
        return colour


def owner_label(owner: Owner | ManagedFieldsEntry, entries: Sequence[ManagedFieldsEntry]) -> str:
    """The manager name, qualified only as much as needed to tell its entries apart.

    ``kubectl`` alone when there is one kubectl entry; ``kubectl (Update, scale)`` next to a
    ``kubectl`` Apply entry. A subresource is always shown: writing through ``scale`` or
    ``status`` is what makes such entries surprising. (Renderers label many owners of one view:
    :meth:`ObjectView.owner_label` does it in time linear in the entries.)"""
    return OwnerLabels(entries)(owner)


class OwnerLabels:
    """:func:`owner_label` for many owners among the same entries: what tells entries apart is
    gathered once, so labelling every field of thousands of entries stays linear."""

    def __init__(self, entries: Sequence[ManagedFieldsEntry]) -> None:
        self._operations: dict[str, set[str]] = {}
        self._versions: dict[tuple[str, str, str], set[str]] = {}
        self._cache: dict[tuple[str, str, str, str], str] = {}
        for e in entries:
            self._operations.setdefault(e.manager, set()).add(e.operation)
            self._versions.setdefault((e.manager, e.operation, e.subresource), set()).add(e.api_version)

    def __call__(self, owner: Owner | ManagedFieldsEntry) -> str:
        manager, operation, subresource = owner.manager, owner.operation, owner.subresource
        api_version = owner.api_version
        key = (manager, operation, subresource, api_version)
        label = self._cache.get(key)
        if label is None:
            quals: list[str] = []
            if self._operations.get(manager, set()) - {operation}:
                quals.append(operation)
            if subresource:
                quals.append(subresource)
            if self._versions.get((manager, operation, subresource), set()) - {api_version}:
                quals.append(api_version)
            label = self._cache[key] = terminal_safe(manager + (f" ({', '.join(quals)})" if quals else ""))
        return label


def human_duration(seconds: float) -> str:
    """kubectl's ``duration.HumanDuration`` (what the AGE column prints): 45s, 5m, 3h20m, 3d, 2y."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        sec = s % 60
        return f"{minutes}m" if sec == 0 else f"{minutes}m{sec}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = (s // 60) % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def now_utc() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def format_time(t: str | None, mode: str, now: _dt.datetime | None = None) -> str:
    """An entry time for humans: ``5m`` (relative), the RFC 3339 text (full) or nothing (none).

    ``-`` when the entry has no time: the server leaves it out, e.g. for ``kubectl scale``."""
    if mode == TIME_NONE:
        return ""
    if not t:
        return "-"
    if mode == TIME_FULL:
        return terminal_safe(t)
    unix = parse_time(t)
    if unix == 0:
        return terminal_safe(t)  # not RFC 3339: show what is there rather than guess
    return human_duration((now or now_utc()).timestamp() - unix)


def latest_time(owners: Sequence[Owner], entries: Sequence[ManagedFieldsEntry]) -> str | None:
    """The newest time among the owners' entries (who touched this last)."""
    best: str | None = None
    best_unix = -1
    for o in owners:
        t = entries[o.entry_index].time if 0 <= o.entry_index < len(entries) else None
        if t and parse_time(t) > best_unix:
            best, best_unix = t, parse_time(t)
    return best


# --- values and path elements ------------------------------------------------------------------

def terminal_safe(text: str) -> str:
    """Human output shows cluster data — annotation values, map keys, manager names: its control
    characters (C0, DEL, C1) are written as JSON escapes (``\\u001b``), as JSON output writes them;
    blame's YAML too (:func:`kubectl_fieldown.base.value.escape_controls`)."""
    return escape_controls(text)


def path_label(path: Path) -> str:
    """A path as the server prints it, safe for a terminal (field names are printed raw)."""
    return terminal_safe(path_string(path))


def display_value(v: Any, limit: int = 80) -> str:
    """A value on one line (:func:`kubectl_fieldown.base.value.value_on_one_line`); nothing for a missing one."""
    if v is MISSING:
        return ""
    return value_on_one_line(v, limit)


def element_label(pe: PathElement) -> str:
    """How a path element is named in a tree: a field by its name, list items as in path strings."""
    if pe[0] == FIELD:
        return terminal_safe(str(pe[1]))
    return terminal_safe(element_string(pe))


def columns(rows: Sequence[Sequence[Text]], gap: str = "   ", right: frozenset[int] = frozenset()) -> list[Text]:
    """Lay out styled cells in kubectl's borderless columns: left-aligned (``right``: the column
    indexes to right-align), separated by ``gap``, no trailing blanks."""
    from .styled import Text

    if not rows:
        return []
    n = max(len(r) for r in rows)
    widths = [max((r[i].cell_len for r in rows if i < len(r)), default=0) for i in range(n)]
    lines: list[Text] = []
    for r in rows:
        line = Text()
        for i, cell in enumerate(r):
            pad = " " * (widths[i] - cell.cell_len)
            if i:
                line.append(gap)
            if i in right:
                line.append(pad)
                line.append_text(cell)
            else:
                line.append_text(cell)
                line.append(pad)
        line.rstrip()
        lines.append(line)
    return lines


def fit_cells(text: Text, width: int, keep_end: bool = False) -> Text:
    """``text`` in at most ``width`` terminal cells: cut with an ellipsis at its end, or at its start
    with ``keep_end`` (a path's last elements tell rows apart, its first ones are shared)."""
    from .styled import Text, cell_len

    if text.cell_len <= width:
        return text
    room = max(width - 1, 0)
    plain = text.plain
    used = 0
    if keep_end:
        start = len(plain)
        while start > 0 and used + cell_len(plain[start - 1]) <= room:
            start -= 1
            used += cell_len(plain[start])
        return Text("…") + text[start:]
    end = 0
    while end < len(plain) and used + cell_len(plain[end]) <= room:
        used += cell_len(plain[end])
        end += 1
    cut = text[:end]
    cut.append("…")
    return cut


def fit_columns(
    rows: Sequence[Sequence[Text]],
    width: int,
    shrink: Sequence[tuple[int, int, bool]],
    gap: int = 3,
) -> list[list[Text]]:
    """Cut cells so that rows laid out by :func:`columns` fit in ``width`` cells, one line each.

    ``shrink`` says which columns give up room, in turn: ``(column, narrowest, keep_end)``; a column
    is cut down to ``narrowest`` (or its own width) before the next one gives anything. When even
    that is too wide the lines are as narrow as they can be, and the terminal wraps them."""
    if not rows:
        return []
    n = max(len(r) for r in rows)
    widths = [max((r[i].cell_len for r in rows if i < len(r)), default=0) for i in range(n)]
    over = sum(widths) + gap * (n - 1) - width
    limits = list(widths)
    for col, narrowest, _ in shrink:
        if over <= 0:
            break
        give = min(over, max(widths[col] - narrowest, 0))
        limits[col] = widths[col] - give
        over -= give
    if limits == widths:
        return [list(r) for r in rows]
    keep_end = {col: k for col, _, k in shrink}
    return [[fit_cells(c, limits[i], keep_end.get(i, False)) for i, c in enumerate(r)] for r in rows]


def output_width(stream: TextIO) -> int | None:
    """The width of the terminal that human output goes to (``COLUMNS`` wins, as in rich), which
    tables and blame fit their lines to; None off a terminal, where lines are never cut: files and
    greps get whole values."""
    try:
        if not stream.isatty():
            return None
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    columns_env = os.environ.get("COLUMNS", "")
    if columns_env.isdigit() and int(columns_env) > 0:
        return int(columns_env)
    try:
        return os.get_terminal_size(fd).columns or None
    except OSError:
        return None


def print_lines(console: Console, lines: Sequence[Text]) -> None:
    """Print many lines in one go: rich's per-call overhead dominates when printing line by line."""
    from .styled import Text

    console.print(Text("\n").join(lines), soft_wrap=True)


# --- console -----------------------------------------------------------------------------------


def colour_enabled(stream: TextIO) -> bool:
    """``--color=always``: colour, even into a pipe; ``--color=never``: none. ``--color=auto`` (the
    default): colour when writing to a terminal; NO_COLOR (https://no-color.org) wins, FORCE_COLOR
    turns it on for pipes (CI logs, ``less -R``)."""
    from .prefs import color_mode

    mode = color_mode()
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def make_console(stream: TextIO | None = None) -> Console:
    """A console for human output. Off a terminal it never wraps: the lines end up in files and
    greps, where a wrapped path is a broken path. Without colour it is a plain writer that prints
    the renderers' :func:`.styled.Text` lines without their styles, so rich is not even imported."""
    from . import styled

    out = stream if stream is not None else sys.stdout
    colour = colour_enabled(out)
    if not colour:
        # duck-typed: it prints the renderers' lines as rich's Console does
        plain: Console = styled.PlainConsole(out)  # type: ignore[assignment]
        return plain
    if sys.platform == "win32":
        return _rich_console(out)
    # rich's colour system: none on a dumb terminal; on any other, our named colours print the same
    dumb = os.environ.get("TERM", "").lower() in ("dumb", "unknown")
    ansi: Console = styled.AnsiConsole(out, None if dumb else "standard",  # type: ignore[assignment]
                                       lambda: _rich_console(out))
    return ansi


def _rich_console(out: TextIO) -> Console:
    from rich.console import Console

    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    return Console(
        file=out,
        color_system="auto",
        force_terminal=True,
        no_color=False,
        highlight=False,
        emoji=False,
        markup=False,
        width=None if tty else 10_000,
        soft_wrap=not tty,
    )
