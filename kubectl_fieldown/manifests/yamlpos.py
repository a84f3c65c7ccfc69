"""Where each field of a manifest was written: line and column of every map key and list item.

The values themselves come from :mod:`kubectl_fieldown.manifests.safeyaml` (which checks the limits); this
module reads the same text a second time, event by event and without building anything but a
table, so that a finding about ``.spec.replicas`` can point at the line that sets it (SARIF,
:mod:`kubectl_fieldown.render.sarif`). Pure: text in, positions out; nothing recurses.

Documents are numbered as :func:`kubectl_fieldown.manifests.safeyaml.load_all` numbers them (1-based, empty
ones counted), so ``InputDocument.document`` indexes :func:`document_positions`. Lines and
columns are 1-based and count Unicode code points, as the parser's marks do. An alias is located
where the alias is written; the fields a ``<<`` merge key brings in are located at the ``<<`` key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..base.yamlmodule import import_yaml
from ..fieldpath.element import FIELD, INDEX, Path, PathElement
from ..fieldpath.lookup import MISSING, child_value

__all__ = ["DocumentPositions", "Position", "document_positions", "locate_path", "locate_text"]

JSONPath = tuple[str | int, ...]
"""Map keys and list indexes from a document's root."""


@dataclass(frozen=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True)
class DocumentPositions:
    """The positions of one YAML document: ``start`` is its first node, ``fields`` every key and item."""

    start: Position
    fields: Mapping[JSONPath, Position]

    def at(self, path: JSONPath) -> Position | None:
        return self.fields.get(path) if path else self.start


def _pos(mark: Any) -> Position:
    return Position(mark.line + 1, mark.column + 1)


class _Open:
    __slots__ = ("in_key", "index", "is_map", "key", "path", "want_key")

    def __init__(self, path: JSONPath | None, is_map: bool) -> None:
        self.path = path  # None: inside a complex key, nothing recorded
        self.is_map = is_map
        self.want_key = True
        self.in_key = False  # a complex key (a map or list as a key) is open
        self.key: str | int | None = None
        self.index = 0


def document_positions(text: str) -> list[DocumentPositions]:
    """Each document's positions, in order; an unreadable text gives those read before the error."""
    import_yaml()
    import yaml
    from yaml import events as ev

    from .safeyaml import _parser

    out: list[DocumentPositions] = []
    parser = _parser(text)
    stack: list[_Open] = []
    fields: dict[JSONPath, Position] = {}
    start: Position | None = None
    try:
        while True:
            try:
                event = parser.get_event()
            except yaml.YAMLError:
                return out
            t = type(event)
            if t is ev.StreamEndEvent:
                return out
            if t is ev.DocumentStartEvent:
                stack, fields, start = [], {}, None
                continue
            if t is ev.DocumentEndEvent:
                out.append(DocumentPositions(start or _pos(event.start_mark), fields))
                continue
            if t in (ev.MappingEndEvent, ev.SequenceEndEvent):
                stack.pop()
                if stack:
                    _after_value(stack[-1])
                continue
            if not stack and start is None:
                start = _pos(event.start_mark)
            here: JSONPath | None = ()
            if stack:
                top = stack[-1]
                if top.is_map and top.want_key:
                    # a key: scalars name the field; anything else is a complex key nobody applies
                    top.want_key = False
                    if t is ev.ScalarEvent:
                        top.key = str(event.value)
                        if top.path is not None:
                            fields.setdefault((*top.path, top.key), _pos(event.start_mark))
                        continue
                    top.key = None
                    top.in_key = True
                    here = None
                elif top.is_map:
                    here = None if top.path is None or top.key is None else (*top.path, top.key)
                else:
                    here = None if top.path is None else (*top.path, top.index)
                    if here is not None:
                        fields.setdefault(here, _pos(event.start_mark))
            if t in (ev.MappingStartEvent, ev.SequenceStartEvent):
                stack.append(_Open(here, t is ev.MappingStartEvent))
            elif stack:
                _after_value(stack[-1])
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


def _after_value(top: _Open) -> None:
    """A key's value or a list item is complete."""
    if top.in_key:
        top.in_key = False  # the complex key ended: its value comes next
    elif top.is_map:
        top.want_key = True
    else:
        top.index += 1


def locate_path(obj: Any, positions: DocumentPositions, path: Path, base: JSONPath = ()) -> Position:
    """The position of the deepest part of ``path`` (a field path) that the manifest ``obj`` sets:
    the field itself, or the nearest enclosing one written in the file (a deleted field is located
    at its parent). ``base`` is where ``obj`` sits in the document (``items``, N for a List item)."""
    node = obj
    at: JSONPath = base
    best = positions.at(base) or positions.start
    for pe in path:
        step = _step(node, pe)
        if step is None:
            break
        node, part = step
        at = (*at, part)
        found = positions.fields.get(at)
        if found is None:
            break
        best = found
    return best


def _step(node: Any, pe: PathElement) -> tuple[Any, str | int] | None:
    kind, payload = pe
    if kind == FIELD:
        child = child_value(node, pe)
        return None if child is MISSING else (child, payload)
    if not isinstance(node, list):
        return None
    if kind == INDEX:
        return (node[payload], payload) if 0 <= payload < len(node) else None
    child = child_value(node, pe)
    if child is MISSING:
        return None
    for i, item in enumerate(node):
        if item is child:
            return child, i
    return None


class _ObjectNames:
    """:class:`~kubectl_fieldown.fieldpath.pathstring.FieldNames` over a manifest: the dotted field
    names (``app.kubernetes.io/name``) that exist in it, so a printed path parses back."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def root(self) -> Any:
        return self._obj

    def below(self, at: Any, pe: PathElement) -> Any:
        child = child_value(at, pe) if at is not None else MISSING
        return None if child is MISSING else child

    def dotted(self, at: Any) -> Iterable[str]:
        return [k for k in at if "." in k] if isinstance(at, Mapping) else []


def locate_text(obj: Any, positions: DocumentPositions, text: str, base: JSONPath = ()) -> Position:
    """:func:`locate_path` for a path as the tool prints it (``.spec.template.metadata.labels.app``)."""
    from ..fieldpath.pathstring import PathSyntaxError, parse_path

    try:
        path = parse_path(text, _ObjectNames(obj))
    except PathSyntaxError:
        path = ()
    return locate_path(obj, positions, path, base)
