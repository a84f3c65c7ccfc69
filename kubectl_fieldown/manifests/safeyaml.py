"""YAML documents as JSON values, read the way kubectl reads them, within explicit limits.

kubectl reads YAML with sigs.k8s.io/yaml (go-yaml v2), then passes it on as JSON: go-yaml's scalar
rules (``y``/``on`` booleans, ``018`` and ``1e3`` numbers, no sexagesimal numbers, tags other than
the core ones ignored), map keys made strings as sigs.k8s.io/yaml makes them, whole-number floats
becoming integers (see :mod:`kubectl_fieldown.manifests.goscalar`), anchors and aliases expanded, ``<<``
merge keys merged where they stand. Timestamps stay the text that was written.

The values are built straight from the parser's events (libyaml's parser when PyYAML has it),
with an explicit stack instead of PyYAML's composer and constructor, because:

* the limits are checked event by event, before anything deep or large exists: libyaml's composer
  recurses in C (libyaml 0.2.5 crashes with SIGSEGV on 30,000 nested brackets) and PyYAML's
  constructor in Python (RecursionError at a few hundred levels); nine nested aliases in 485 bytes
  stand for 387 million nodes;
* nothing recurses, whatever the input;
* it is several times faster than CSafeLoader, whose constructor is Python.

Limits (docs/show.md, "Input limits"):

* :data:`MAX_DEPTH` levels of nested maps and lists, counted through aliases;
* aliases may not stand for more of the document than go-yaml v2 allows (its
  ``allowedAliasRatio``: 99% of up to 400,000 nodes, falling to 10% at 4,000,000), and an alias
  may not refer to the node that contains it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..base.value import MAX_DEPTH, valid_text
from ..base.yamlmodule import import_yaml
from .goscalar import MERGE as _MERGE
from .goscalar import ScalarError, json_number, key_text, resolve

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_DEPTH", "YAMLReadError", "key_string", "load_all", "valid_text"]

_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


class YAMLReadError(ValueError):
    """A document that cannot be read; ``document`` is its 1-based number, ``str()`` is one line."""

    def __init__(self, message: str, document: int) -> None:
        self.document = document
        super().__init__(message)


def allowed_alias_ratio(nodes: int) -> float:
    """go-yaml v2's ``allowedAliasRatio``: the share of a document's decoded nodes that may come from
    alias expansion (what stops "billion laughs" documents in kubectl)."""
    if nodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if nodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


# --- scalars -----------------------------------------------------------------------------------------

_plain_cache: dict[str, Any] = {}


def _scalar(event: Any) -> Any:
    """The Go value go-yaml decodes a scalar event into (see :mod:`kubectl_fieldown.manifests.goscalar`)."""
    tag = event.tag
    value: str = event.value
    if tag is None:
        if not event.implicit[0]:
            return valid_text(value)
        hit = _plain_cache.get(value, _plain_cache)
        if hit is not _plain_cache:
            return hit
        result = resolve(None, value, True)
        if type(result) is str:
            result = valid_text(result)
        if len(_plain_cache) > 100_000:
            _plain_cache.clear()
        _plain_cache[value] = result
        return result
    result = resolve(tag, value, bool(event.implicit[0]))
    return valid_text(result) if isinstance(result, str) else result


def key_string(k: Any) -> str:
    """A scalar map key as sigs.k8s.io/yaml makes it a JSON object key (ValueError for null)."""
    return key_text(k)


# --- documents ---------------------------------------------------------------------------------------


class _Frame:
    """A map or list being built."""

    __slots__ = ("anchor", "container", "height", "key", "mark", "start")

    def __init__(self, container: dict[str, Any] | list[Any], anchor: str | None, start: int, mark: Any) -> None:
        self.container = container
        self.anchor = anchor
        self.start = start  # nodes counted before this one
        self.height = 0  # levels below this one
        self.key: Any = _NO_KEY
        self.mark = mark


_NO_KEY: Any = object()
_MERGE_KEY: Any = object()


class _Anchored:
    """What an anchor names: a map or list as built, or a scalar's Go value (a key or a value, by
    where its alias is)."""

    __slots__ = ("height", "scalar", "size", "value")

    def __init__(self, value: Any, size: int, height: int, scalar: bool) -> None:
        self.value = value
        self.size = size
        self.height = height
        self.scalar = scalar


def _where(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _parser(text: str) -> Any:
    import_yaml()
    import yaml

    try:
        from yaml._yaml import CParser
    except ImportError:
        class _PyParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
            def __init__(self, stream: str) -> None:
                yaml.reader.Reader.__init__(self, stream)
                yaml.scanner.Scanner.__init__(self)
                yaml.parser.Parser.__init__(self)

        return _PyParser(text)
    return CParser(text)


def load_all(text: str) -> Iterator[Any]:
    """Each document of ``text`` as a JSON value (None for an empty document), in order.

    Raises :class:`YAMLReadError` (naming the document) for invalid YAML and for documents beyond
    the limits; the documents before it have been yielded."""
    import_yaml()
    import yaml
    from yaml import events as ev

    parser = _parser(text)
    number = 0
    try:
        while True:
            try:
                event = parser.get_event()
            except yaml.YAMLError as e:
                # between documents: the error belongs to the one that would start there
                raise YAMLReadError("invalid YAML: " + yaml_reason(e), number + 1) from None
            t = type(event)
            if t is ev.DocumentStartEvent:
                number += 1
                try:
                    value = _document(parser)
                except yaml.YAMLError as e:
                    raise YAMLReadError("invalid YAML: " + yaml_reason(e), number) from None
                except _DocumentError as e:
                    raise YAMLReadError(str(e), number) from None
                yield value
            elif t is ev.StreamEndEvent:
                return
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


class _DocumentError(ValueError):
    """A document that YAML can express but that is no JSON value, or is beyond the limits."""


def _document(parser: Any) -> Any:
    """Build one document from its events (the DocumentStart event has been read)."""
    from yaml import events as ev

    stack: list[_Frame] = []
    anchors: dict[str, _Anchored] = {}
    open_anchors: set[str] = set()
    nodes = 0  # go-yaml's decodeCount: every node, aliases expanded
    alias_nodes = 0  # the part of it that comes from expanding aliases
    root: Any = None

    def add(value: Any, height: int, mark: Any, scalar: bool, alias: bool) -> None:
        """Put a node into the map or list being built: a scalar (a Go value) becomes a key or a
        JSON value by its place."""
        nonlocal root
        if not stack:
            root = json_number(value) if scalar else value
            return
        frame = stack[-1]
        if height + 1 > frame.height:
            frame.height = height + 1
        c = frame.container
        if type(c) is list:
            c.append(json_number(value) if scalar else value)
            return
        key = frame.key
        if key is _NO_KEY:
            if not scalar:
                raise _DocumentError(f"a map key must be a string, number, bool or null, not a "
                                     f"{'map' if isinstance(value, dict) else 'list'}{_where(mark)}")
            frame.key = value if type(value) is str else key_text(value)
            return
        frame.key = _NO_KEY
        if key is _MERGE_KEY:
            _merge(c, value, scalar, alias, mark)  # type: ignore[arg-type]  # (c is the dict here)
        else:
            c[key] = json_number(value) if scalar else value

    while True:
        event = parser.get_event()
        t = type(event)
        if t is ev.ScalarEvent:
            nodes += 1
            mark = event.start_mark
            if (event.value == "<<" and stack and type(stack[-1].container) is dict and stack[-1].key is _NO_KEY
                    and (event.implicit[0] or event.tag == _MERGE)):
                stack[-1].key = _MERGE_KEY  # go-yaml merges the value into the map where the key is
                continue
            try:
                value = _scalar(event)
                if event.anchor is not None:
                    anchors[event.anchor] = _Anchored(value, 1, 0, True)
                add(value, 0, mark, True, False)
            except ScalarError as e:
                raise _DocumentError(f"{e}{_where(mark)}") from None
        elif t is ev.MappingStartEvent or t is ev.SequenceStartEvent:
            nodes += 1
            if len(stack) + 1 > MAX_DEPTH:
                raise _DocumentError(f"nested more than {MAX_DEPTH} levels deep{_where(event.start_mark)}")
            container: dict[str, Any] | list[Any] = {} if t is ev.MappingStartEvent else []
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            stack.append(_Frame(container, event.anchor, nodes - 1, event.start_mark))
        elif t is ev.MappingEndEvent or t is ev.SequenceEndEvent:
            frame = stack.pop()
            value = frame.container
            if frame.anchor is not None:
                open_anchors.discard(frame.anchor)
                anchors[frame.anchor] = _Anchored(value, nodes - frame.start, frame.height, False)
            add(value, frame.height, frame.mark, False, False)
        elif t is ev.AliasEvent:
            mark = event.start_mark
            name = event.anchor
            if name in open_anchors:
                raise _DocumentError(f"the alias *{name} refers to the node that contains it{_where(mark)}")
            target = anchors.get(name)
            if target is None:
                raise _DocumentError(f"found undefined alias *{name}{_where(mark)}")
            if len(stack) + target.height > MAX_DEPTH:
                raise _DocumentError(f"nested more than {MAX_DEPTH} levels deep through the alias *{name}"
                                     f"{_where(mark)}")
            nodes += 1 + target.size
            alias_nodes += target.size
            if alias_nodes > 100 and nodes > 1000 and alias_nodes / nodes > allowed_alias_ratio(nodes):
                raise _DocumentError(f"the aliases stand for too much of the document ({alias_nodes:,} of {nodes:,} "
                                     f"nodes; kubectl refuses such documents: excessive aliasing){_where(mark)}")
            try:
                add(target.value, target.height, mark, target.scalar, True)
            except ScalarError as e:
                raise _DocumentError(f"{e}{_where(mark)}") from None
        elif t is ev.DocumentEndEvent:
            return root
        else:  # pragma: no cover - the parser guarantees the event grammar
            raise _DocumentError(f"unexpected YAML event {t.__name__}{_where(getattr(event, 'start_mark', None))}")


def _merge(into: dict[str, Any], value: Any, scalar: bool, alias: bool, mark: Any) -> None:
    """``<<: *base`` or ``<<: [*a, *b]`` as go-yaml v2 does it: the maps are written into the map at the
    place of the ``<<`` key, so keys after it win over the merged ones and merged ones over keys before
    it; of a list, earlier maps win. An alias to a list of maps is refused, as in go-yaml."""
    if not scalar and isinstance(value, dict):
        into.update(value)
        return
    if not scalar and not alias and isinstance(value, list) and all(isinstance(m, dict) for m in value):
        for m in reversed(value):
            into.update(m)
        return
    raise _DocumentError(f"map merge requires map or sequence of maps as the value{_where(mark)}")


def yaml_reason(e: Exception) -> str:
    """One line from a PyYAML error: problem, context and position."""
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None)
    context = getattr(e, "context", None)
    text = str(problem or e).strip()
    if context and problem:
        text = f"{context.strip()}, {text}"
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(text.split())
