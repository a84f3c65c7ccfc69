"""kubectl's ``-o name``, ``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC`` over a command's
JSON document (pure: text in, text out; docs/output.md).

The semantics are client-go's ``util/jsonpath`` as kubectl runs it (missing keys allowed), for the
subset kubectl users write: ``{.a.b}``, ``{.a['b.c']}``, ``{.items[*].x}``, ``{.items[0]}``,
slices ``[1:3]``, ``..`` (recursive descent), ``{range .items[*]}...{end}`` and quoted text
(``{"\\n"}``, ``{"\\t"}``). Filters (``[?(...)]``) and unions (``[a,b]``) are refused with a usage
error rather than guessed at. What is printed, as kubectl prints it:

* each ``{...}`` prints its results separated by one space; a map or a list as compact JSON
  (Go's ``encoding/json``: sorted keys), a string as is, null as ``<nil>``, a float as Go's ``%v``;
* custom columns: one row per item, a column's results joined by ``,`` in Go's ``%v`` form
  (``map[k:v]``, ``[a b]``), ``<none>`` when there are none; columns aligned as kubectl's
  tabwriter does (3 spaces of padding, at least 6 wide, the last column not padded);
* ``-o name``: ``kind.group/name`` (``deployment.apps/web``, ``secret/s``), one line per object.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.value import go_format_float_v, go_json

__all__ = [
    "Column",
    "Template",
    "TemplateError",
    "custom_columns",
    "go_print",
    "parse_columns",
    "parse_template",
]


class TemplateError(ValueError):
    """A template or column spec that does not parse, or that does not fit the data."""


# --- the parsed template ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Index:
    start: int | None
    stop: int | None
    step: int | None
    single: bool  # [n] rather than a slice


@dataclass(frozen=True)
class Recursive:
    pass


Step = Field | Wildcard | Index | Recursive


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Path:
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Range:
    path: Path
    body: tuple[Node, ...]


Node = Text | Path | Range


@dataclass(frozen=True)
class Template:
    nodes: tuple[Node, ...]

    def execute(self, data: Any) -> str:
        return "".join(_run(self.nodes, data))

    def results(self, data: Any) -> list[list[Any]]:
        """The values of each node (kubectl's FindResults), for custom columns."""
        return [_eval_path(n, data) if isinstance(n, Path) else [n.text] for n in self.nodes
                if not isinstance(n, Range)]


# --- parsing ---------------------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
_TERMINATORS = frozenset(" \t\n.,[]$@{}")


def parse_template(text: str) -> Template:
    """A kubectl JSONPath template (``{...}`` actions between literal text)."""
    actions: list[tuple[str, Any]] = []  # ("text", str) | ("path", Path) | ("range", Path) | ("end", None)
    i = 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            actions.append(("text", text[i:]))
            break
        if start > i:
            actions.append(("text", text[i:start]))
        end = _closing_brace(text, start)
        actions.append(_action(text[start + 1:end].strip(), text))
        i = end + 1
    nodes, rest = _nest(actions, 0, inside=False)
    del rest
    return Template(tuple(nodes))


def _closing_brace(text: str, start: int) -> int:
    quote: str | None = None
    i = start + 1
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "}":
            return i
        i += 1
    raise TemplateError(f"unclosed action in {text!r}")


def _action(inner: str, template: str) -> tuple[str, Any]:
    if inner == "end":
        return ("end", None)
    if inner.startswith("range ") or inner == "range":
        return ("range", _parse_path(inner[len("range"):].strip(), template))
    if len(inner) >= 2 and inner[0] == '"' and inner[-1] == '"':
        return ("text", _unquote(inner[1:-1], template))
    return ("path", _parse_path(inner, template))


def _unquote(s: str, template: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt not in _ESCAPES:
                raise TemplateError(f"unknown escape sequence \\{nxt} in {template!r}")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _nest(actions: list[tuple[str, Any]], i: int, inside: bool) -> tuple[list[Node], int]:
    nodes: list[Node] = []
    while i < len(actions):
        kind, value = actions[i]
        i += 1
        if kind == "text":
            nodes.append(Text(value))
        elif kind == "path":
            nodes.append(value)
        elif kind == "range":
            body, i = _nest(actions, i, inside=True)
            nodes.append(Range(value, tuple(body)))
        else:  # end
            if not inside:
                raise TemplateError("{end} without {range}")
            return nodes, i
    if inside:
        raise TemplateError("{range} without {end}")
    return nodes, i


_SLICE = re.compile(r"^\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?$")


def _parse_path(expr: str, template: str) -> Path:
    if not expr:
        raise TemplateError(f"empty action {{}} in {template!r}")
    steps: list[Step] = []
    i = 0
    if expr[0] in "$@":
        i = 1
    while i < len(expr):
        c = expr[i]
        if expr.startswith("..", i):
            steps.append(Recursive())
            i += 2
            if i < len(expr) and expr[i] not in ".[":
                i = _field(expr, i, steps)
        elif c == ".":
            i += 1
            if i < len(expr) and expr[i] == "*":
                steps.append(Wildcard())
                i += 1
            elif i < len(expr) and expr[i] not in ".[":
                i = _field(expr, i, steps)
        elif c == "[":
            end = expr.find("]", i)
            if end < 0:
                raise TemplateError(f"unclosed [ in {template!r}")
            steps.append(_subscript(expr[i + 1:end].strip(), template))
            i = end + 1
        elif c.isspace():
            raise TemplateError(f"unsupported expression {expr!r} in {template!r}")
        else:
            i = _field(expr, i, steps)
    return Path(tuple(steps))


def _field(expr: str, i: int, steps: list[Step]) -> int:
    name: list[str] = []
    while i < len(expr) and expr[i] not in _TERMINATORS:
        if expr[i] == "\\" and i + 1 < len(expr):
            name.append(expr[i + 1])
            i += 2
            continue
        name.append(expr[i])
        i += 1
    steps.append(Field("".join(name)))
    return i


def _subscript(inner: str, template: str) -> Step:
    if inner == "*":
        return Wildcard()
    if inner.startswith("?"):
        raise TemplateError(f"filters ([{inner}]) are not supported in {template!r}")
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        if "," in inner:
            raise TemplateError(f"unions ([{inner}]) are not supported in {template!r}")
        return Field(inner[1:-1])
    m = _SLICE.match(inner)
    if m is None or not inner:
        raise TemplateError(f"unsupported subscript [{inner}] in {template!r}")
    start, stop, step = (int(g) if g is not None else None for g in m.groups())
    return Index(start, stop, step, single=":" not in inner)


# --- evaluation ------------------------------------------------------------------------------------


def _eval_path(path: Path, root: Any) -> list[Any]:
    values = [root]
    for step in path.steps:
        values = _step(step, values)
    return values


def _children(v: Any) -> list[Any]:
    if isinstance(v, Mapping):
        return list(v.values())
    if isinstance(v, list):
        return list(v)
    return []


def _step(step: Step, values: list[Any]) -> list[Any]:
    out: list[Any] = []
    if isinstance(step, Field):
        # a missing key, a null or a non-map gives nothing (kubectl allows missing keys)
        return [v[step.name] for v in values if isinstance(v, Mapping) and step.name in v]
    if isinstance(step, Wildcard):
        for v in values:
            out += _children(v)
        return out
    if isinstance(step, Recursive):
        for v in values:
            out += _descend(v)
        return out
    for v in values:
        if v is None:
            continue
        if not isinstance(v, list):
            raise TemplateError(f"{_go_type(v)} is not array or slice")
        out += _slice(step, v)
    return out


def _descend(v: Any) -> list[Any]:
    kids = _children(v)
    if not kids:
        return []
    out = [v]
    for k in kids:
        out += _descend(k)
    return out


def _slice(ix: Index, v: list[Any]) -> list[Any]:
    n = len(v)
    start = 0 if ix.start is None else ix.start
    if start < 0:
        start += n
    if ix.single:
        stop = start + 1
    else:
        stop = n if ix.stop is None else ix.stop
        if stop < 0:
            stop += n
    if stop == start:
        return []
    if start >= n or start < 0:
        raise TemplateError(f"array index out of bounds: index {start}, length {n}")
    if stop > n or stop < 0:
        raise TemplateError(f"array index out of bounds: index {stop - 1}, length {n}")
    if start > stop:
        raise TemplateError(f"starting index {start} is greater than ending index {stop}")
    step = 1 if ix.step is None else ix.step
    if step <= 0:
        raise TemplateError("step must be > 0")
    return v[start:stop:step]


def _go_type(v: Any) -> str:
    if isinstance(v, Mapping):
        return "map[string]interface {}"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    return "string" if isinstance(v, str) else type(v).__name__


def _run(nodes: Sequence[Node], data: Any) -> Iterable[str]:
    for node in nodes:
        if isinstance(node, Text):
            yield node.text
        elif isinstance(node, Path):
            yield " ".join(_text(v) for v in _eval_path(node, data))
        else:
            for value in _eval_path(node.path, data):
                yield from _run(node.body, value)


def _text(v: Any) -> str:
    """A result as kubectl's jsonpath prints it."""
    if isinstance(v, (Mapping, list)):
        return go_json(v)
    return go_print(v)


def go_print(v: Any) -> str:
    """Go's ``fmt.Sprint`` of a JSON value as client-go decodes it (``map[k:v]``, ``[a b]``)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_format_float_v(v)
    if isinstance(v, str):
        return v
    if isinstance(v, Mapping):
        return "map[" + " ".join(f"{k}:{go_print(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_print(x) for x in v) + "]"
    return str(v)


# --- custom columns --------------------------------------------------------------------------------

_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


@dataclass(frozen=True)
class Column:
    header: str
    template: Template


def parse_columns(spec: str) -> list[Column]:
    """``NAME:.path,OTHER:.path`` as kubectl reads it (the path with or without ``{}`` and ``.``)."""
    if not spec:
        raise TemplateError("custom-columns format specified but no custom columns given")
    columns = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep:
            raise TemplateError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        if not path:
            columns.append(Column(header, Template(())))
            continue
        m = _RELAXED.match(path)
        if m is None:
            raise TemplateError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                                "'{name1.name2}' or '{.name1.name2}'")
        columns.append(Column(header, parse_template("{." + (m.group(1) or m.group(2)) + "}")))
    return columns


def custom_columns(columns: Sequence[Column], items: Sequence[Any], headers: bool = True) -> str:
    """The rows of ``items`` (kubectl prints nothing, not even the header, for no items)."""
    if not items:
        return ""
    rows: list[list[str]] = [[c.header for c in columns]] if headers else []
    for item in items:
        row = []
        for c in columns:
            found = c.template.results(item)
            if not found or not found[0]:
                row.append("<none>")
            else:
                row.append(",".join(go_print(v) for values in found for v in values))
        rows.append(row)
    return tabulate(rows)


def tabulate(rows: Sequence[Sequence[str]]) -> str:
    """Rows aligned as kubectl's tabwriter (min width 6, padding 3; the last cell unpadded)."""
    if not rows:
        return ""
    ncols = max(len(r) for r in rows)
    widths = [max(6, max(len(r[i]) for r in rows if i < len(r)) + 3) for i in range(ncols - 1)]
    lines = []
    for r in rows:
        cells = [cell.ljust(widths[i]) if i < len(r) - 1 else cell for i, cell in enumerate(r)]
        lines.append("".join(cells))
    return "\n".join(lines) + "\n"
