"""YAML documents as JSON values, read the way kubectl reads them, within explicit limits.

kubectl reads YAML with sigs.k8s.io/yaml (go-yaml v2): YAML 1.1 scalars (``yes``/``no`` booleans,
``0x1F``, ``017``, ``1_000``), map keys made strings, anchors and aliases expanded, ``<<`` merge
keys. Timestamps stay the text that was written (the API machinery reads them into strings).

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

import base64
import math
import re
from collections.abc import Iterator
from typing import Any

from .value import MAX_DEPTH, valid_text

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

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
_MERGE, _VALUE, _BINARY, _TIMESTAMP = (_TAG + t for t in ("merge", "value", "binary", "timestamp"))
_COLLECTION_TAGS = frozenset(_TAG + t for t in ("map", "seq", "omap", "pairs", "set"))

_Resolvers = dict[Any, list[tuple[str, "re.Pattern[str]"]]]
_resolvers: _Resolvers | None = None
_constructor: Any = None
_plain_cache: dict[str, Any] = {}


def _setup() -> tuple[_Resolvers, Any]:
    """The YAML 1.1 implicit resolvers of PyYAML's SafeLoader without timestamps, and a constructor
    for the scalar tags (loaded once: importing yaml is not free)."""
    global _resolvers, _constructor
    if _resolvers is None:
        import yaml

        _resolvers = {first: [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP]
                      for first, entries in yaml.resolver.Resolver.yaml_implicit_resolvers.items()}
        _constructor = yaml.constructor.SafeConstructor()
    return _resolvers, _constructor


def _plain_tag(value: str) -> str:
    resolvers, _ = _setup()
    for tag, rx in resolvers.get(value[0] if value else "", []) + resolvers.get(None, []):
        if rx.match(value):
            return tag
    return _STR


def _construct(tag: str, value: str) -> Any:
    """A scalar of a known tag as SafeConstructor builds it; ValueError for a value the tag cannot read."""
    import yaml

    if tag in (_STR, _MERGE, _VALUE, _TIMESTAMP):
        return value  # a timestamp too: the text as written, as the API machinery keeps it
    _, ctor = _setup()
    node = yaml.ScalarNode(tag, value)
    try:
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return ctor.construct_yaml_bool(node)
        if tag == _INT:
            return ctor.construct_yaml_int(node)
        if tag == _FLOAT:
            return ctor.construct_yaml_float(node)
        if tag == _BINARY:
            # Kubernetes carries bytes as base64 text: the same bytes, in the canonical spelling
            return base64.b64encode(ctor.construct_yaml_binary(node)).decode("ascii")
    except (ValueError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ValueError(f"cannot read {value!r} as !!{tag[len(_TAG):]}") from e
    raise ValueError(f"unknown tag {tag!r}")


def _scalar(event: Any) -> Any:
    tag = event.tag
    value: str = event.value
    if tag is None or tag == "!":
        if not event.implicit[0]:
            return valid_text(value)
        hit = _plain_cache.get(value, _plain_cache)
        if hit is not _plain_cache:
            return hit
        result = _construct(_plain_tag(value), value)
        if type(result) is str:
            result = valid_text(result)
        if len(_plain_cache) > 100_000:
            _plain_cache.clear()
        _plain_cache[value] = result
        return result
    if tag in _COLLECTION_TAGS:
        raise ValueError(f"a scalar cannot have the tag {tag!r}")
    result = _construct(tag, value)
    return valid_text(result) if type(result) is str else result


def _check_number(v: Any) -> None:
    if type(v) is float and not math.isfinite(v):
        raise ValueError(f"{v} is not a number Kubernetes can store (JSON has no NaN or infinity)")


def key_string(k: Any) -> str:
    """A scalar map key as sigs.k8s.io/yaml makes it a JSON object key."""
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int):
        return str(k)
    if isinstance(k, float):
        return repr(k)
    raise ValueError(f"map key {k!r} is not a string")


# --- documents ---------------------------------------------------------------------------------------


class _Frame:
    """A map or list being built."""

    __slots__ = ("anchor", "container", "height", "key", "mark", "merges", "start")

    def __init__(self, container: dict[str, Any] | list[Any], anchor: str | None, start: int, mark: Any) -> None:
        self.container = container
        self.anchor = anchor
        self.start = start  # nodes counted before this one
        self.height = 0  # levels below this one
        self.key: Any = _NO_KEY
        self.merges: list[dict[str, Any]] | None = None
        self.mark = mark


_NO_KEY: Any = object()
_MERGE_KEY: Any = object()


class _Anchored:
    __slots__ = ("height", "size", "value")

    def __init__(self, value: Any, size: int, height: int) -> None:
        self.value = value
        self.size = size
        self.height = height


def _where(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _parser(text: str) -> Any:
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

    def add(value: Any, size: int, height: int, mark: Any) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        if height + 1 > frame.height:
            frame.height = height + 1
        c = frame.container
        if type(c) is list:
            c.append(value)
            return
        key = frame.key
        if key is _NO_KEY:
            if isinstance(value, (dict, list)):
                raise _DocumentError(f"a map key must be a string, number, bool or null, not a "
                                     f"{'map' if isinstance(value, dict) else 'list'}{_where(mark)}")
            frame.key = value if type(value) is str else key_string(value)
            return
        frame.key = _NO_KEY
        if key is _MERGE_KEY:
            _merge(frame, value, mark)
        else:
            c[key] = value

    while True:
        event = parser.get_event()
        t = type(event)
        if t is ev.ScalarEvent:
            nodes += 1
            mark = event.start_mark
            try:
                value = _scalar(event)
                _check_number(value)
            except ValueError as e:
                raise _DocumentError(f"{e}{_where(mark)}") from None
            if (stack and type(stack[-1].container) is dict and stack[-1].key is _NO_KEY
                    and event.tag is None and event.implicit[0] and event.value == "<<"):
                stack[-1].key = _MERGE_KEY  # a merge key: its value is merged at the end of the map
                if stack[-1].merges is None:
                    stack[-1].merges = []
                continue
            if event.anchor is not None:
                anchors[event.anchor] = _Anchored(value, 1, 0)
            add(value, 1, 0, mark)
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
            if frame.merges:
                merged: dict[str, Any] = {}
                for m in frame.merges:
                    merged.update(m)
                merged.update(value)  # the map's own keys win, wherever they are
                value = merged
            if frame.anchor is not None:
                open_anchors.discard(frame.anchor)
                anchors[frame.anchor] = _Anchored(value, nodes - frame.start, frame.height)
            add(value, nodes - frame.start, frame.height, frame.mark)
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
            add(target.value, target.size, target.height, mark)
        elif t is ev.DocumentEndEvent:
            return root
        else:  # pragma: no cover - the parser guarantees the event grammar
            raise _DocumentError(f"unexpected YAML event {t.__name__}{_where(getattr(event, 'start_mark', None))}")


def _merge(frame: _Frame, value: Any, mark: Any) -> None:
    """``<<: *base`` or ``<<: [*a, *b]``: earlier maps of a list win over later ones, later ``<<``
    keys over earlier ones, and the map's own keys over all of them (PyYAML's and go-yaml's rule)."""
    assert frame.merges is not None
    if isinstance(value, dict):
        frame.merges.append(value)
        return
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        frame.merges.extend(reversed(value))
        return
    raise _DocumentError(f"a merge key (<<) needs a map or a list of maps{_where(mark)}")


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
