"""Path strings as the API server prints them in conflict messages, and a parser for them.

``.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].hostPort``,
``.metadata.finalizers[="example.com/x"]``, ``.spec.args[0]``.

Field names are printed raw, so ``.metadata.labels.app.kubernetes.io/name`` is ambiguous on its
own. :func:`parse_path` therefore takes optional :class:`FieldNames` (usually backed by an object
and a FieldSet, :func:`kubectl_fieldown.fieldpath.lookup.names_in`) to decide how dotted segments
group into field names; a backslash before a dot (``app\\.kubernetes\\.io/name``) forces it to
stay inside the name. Parsing takes time linear in the path and in the dotted names met on the way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..base.value import excerpt, go_value_string, key_value
from .element import (
    FIELD,
    INDEX,
    KEY,
    VALUE,
    Path,
    PathElement,
    keys_spelled_by_value,
    value_spelled_by_value,
)

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeAlias

    from .set import FieldSet


def element_string(pe: PathElement) -> str:
    """One element as the server prints it. Elements whose values are strings, integers, booleans or
    null are spelled by their value alone, so equal ones are spelled alike and the text is kept per
    element (a conflict's paths share their elements); a float can equal an integer and be spelled
    otherwise (``1e+21``), so it is spelled each time."""
    kind, payload = pe
    if kind == FIELD:
        return "." + str(payload)
    kept = keys_spelled_by_value(payload) if kind == KEY else value_spelled_by_value(payload) if kind == VALUE \
        else kind == INDEX
    s = _element_strings.get(pe) if kept else None
    if s is None:
        s = _element_string(kind, payload)
        if kept and len(_element_strings) < 65536:
            _element_strings[pe] = s
    return s


_element_strings: dict[PathElement, str] = {}


def _element_string(kind: int, payload: Any) -> str:
    if kind == KEY:
        return "[" + ",".join(f"{n}={go_value_string(key_value(v))}" for n, v in payload) + "]"
    if kind == VALUE:
        return "[=" + go_value_string(key_value(payload)) + "]"
    if kind == INDEX:
        return f"[{payload}]"
    raise ValueError(f"invalid path element {(kind, payload)!r}")


def path_string(path: Path) -> str:
    """The server's form of a path (SMD ``Path.String``)."""
    return "".join([element_string(pe) for pe in path])  # a list: join builds one anyway


def spelled_paths(s: FieldSet) -> list[tuple[Path, str]]:
    """The paths of ``s`` in its iteration order (SMD ``Iterate``, as ``iter(s)``), each with its
    :func:`path_string`: the prefixes a set's paths share are spelled once, not once per path (a
    conflict's paths are mostly siblings and cousins)."""
    out: list[tuple[Path, str]] = []
    _spell(s, (), "", out)
    return out


def _spell(s: FieldSet, prefix: Path, text: str, out: list[tuple[Path, str]]) -> None:
    for pe in sorted(s.members):
        out.append(((*prefix, pe), text + element_string(pe)))
    children = s.children
    for pe in sorted(children):
        _spell(children[pe], (*prefix, pe), text + element_string(pe), out)


class PathSyntaxError(ValueError):
    def __init__(self, text: str, pos: int, why: str) -> None:
        self.text = text
        self.pos = pos
        super().__init__(f"invalid path {excerpt(text)!r} at character {pos + 1}: {why}")


if TYPE_CHECKING:  # (only annotations name it: typing.Protocol is not imported at run time)
    class FieldNames(Protocol):
        """Which field names with a dot exist where, walked one path element at a time from the root.

        ``root()`` and ``below(at, element)`` are positions (anything); ``dotted(at)`` are the field
        names that contain a dot directly at a position. A position below something that does not exist
        has no names."""

        def root(self) -> Any: ...

        def below(self, at: Any, pe: PathElement) -> Any: ...

        def dotted(self, at: Any) -> Iterable[str]: ...


if TYPE_CHECKING:
    _Token: TypeAlias = tuple[str, Any]  # ("dots", [segment, ...]) for field names, or ("elem", PathElement)


def parse_path(text: str, names: FieldNames | None = None) -> Path:
    """Parse a path string. Dotted runs are grouped by ``names``: at each step the longest name that
    exists there wins, else one segment is one field name."""
    tokens = _tokenize(text)
    out: list[PathElement] = []
    at = names.root() if names is not None else None
    for kind, tok in tokens:
        if kind == "elem":
            out.append(tok)
            if names is not None:
                at = names.below(at, tok)
            continue
        segs: list[str] = tok
        i = 0
        while i < len(segs):
            take = _longest_name(segs, i, names.dotted(at)) if names is not None else 1
            pe = (FIELD, segs[i] if take == 1 else ".".join(segs[i : i + take]))
            out.append(pe)
            if names is not None:
                at = names.below(at, pe)
            i += take
    return tuple(out)


def _longest_name(segs: Sequence[str], i: int, dotted: Iterable[str]) -> int:
    """How many segments from ``segs[i]`` the longest of ``dotted`` spans (1 when none matches); each
    name is compared once, character by character, so the cost is the length of the names."""
    best = 1
    first = segs[i]
    for name in dotted:
        if not name.startswith(first):
            continue
        pos, j = 0, i
        while j < len(segs):
            seg = segs[j]
            if not name.startswith(seg, pos):
                break
            pos += len(seg)
            if pos == len(name):
                best = max(best, j - i + 1)
                break
            if name[pos] != ".":
                break
            pos += 1
            j += 1
    return best


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    if n == 0:
        raise PathSyntaxError(text, 0, "empty path")
    if text[0] not in ".[":
        raise PathSyntaxError(text, 0, "a path starts with '.' or '['")
    dots: list[str] = []
    while i < n:
        c = text[i]
        if c == ".":
            i += 1
            start = i
            seg: list[str] = []
            while i < n and text[i] not in ".[":
                if text[i] == "\\" and i + 1 < n and text[i + 1] in ".[\\":
                    seg.append(text[i + 1])
                    i += 2
                    continue
                seg.append(text[i])
                i += 1
            if i == start:
                raise PathSyntaxError(text, start, "empty field name")
            dots.append("".join(seg))
        elif c == "[":
            if dots:
                tokens.append(("dots", dots))
                dots = []
            pe, i = _bracket(text, i + 1)
            tokens.append(("elem", pe))
        else:
            raise PathSyntaxError(text, i, f"unexpected {c!r}")
    if dots:
        tokens.append(("dots", dots))
    return tokens


def _bracket(text: str, i: int) -> tuple[PathElement, int]:
    from ..base.value import value_key

    n = len(text)
    if i < n and text[i] == "=":
        v, i = _scalar(text, i + 1)
        return _close(text, i, (VALUE, value_key(v)))
    j = i
    while j < n and (text[j].isdigit() or (j == i and text[j] == "-")):
        j += 1
    if j > i and j < n and text[j] == "]":
        digits = text[i:j]
        if len(digits.lstrip("-0")) > 19 or not -(2**63) <= int(digits) < 2**63:
            raise PathSyntaxError(text, i, "the index is out of range")
        return (INDEX, int(digits)), j + 1
    pairs: list[tuple[str, Any]] = []
    while True:
        start = i
        while i < n and text[i] not in "=]":
            i += 1
        if i >= n or text[i] != "=" or i == start:
            raise PathSyntaxError(text, start, "expected name=value, =value or an index inside [...]")
        name = text[start:i]
        v, i = _scalar(text, i + 1)
        pairs.append((name, value_key(v)))
        if i < n and text[i] == ",":
            i += 1
            continue
        break
    return _close(text, i, (KEY, tuple(sorted(pairs))))


def _close(text: str, i: int, pe: PathElement) -> tuple[PathElement, int]:
    if i >= len(text) or text[i] != "]":
        raise PathSyntaxError(text, i, "expected ']'")
    return pe, i + 1


def _scalar(text: str, i: int) -> tuple[Any, int]:
    n = len(text)
    if i < n and text[i] == '"':
        return _go_unquote(text, i)
    j = i
    while j < n and text[j] not in ",]":
        j += 1
    word = text[i:j]
    if word == "true":
        return True, j
    if word == "false":
        return False, j
    if word == "null":
        return None, j
    try:
        if any(c in word for c in ".eE") or word in ("NaN", "+Inf", "-Inf"):
            return float(word), j
        n = int(word)
        # only a float prints as "-0" (%v); an int zero has no sign
        return (-0.0 if n == 0 and word.startswith("-") else n), j
    except ValueError:
        pass
    if word and not any(c in word for c in '"[=\\'):
        # people type keys the way kubectl prints selectors: [name=web] for [name="web"]
        return word, j
    raise PathSyntaxError(text, i, f"{excerpt(word)!r} is not a quoted string, number, bool or null")


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}


def _go_unquote(text: str, i: int) -> tuple[str, int]:
    """Read a Go ``%q`` string starting at the opening quote; return it and the index after it."""
    out: list[str] = []
    raw_bytes: list[int] = []
    j = i + 1
    n = len(text)

    def flush() -> None:
        if raw_bytes:
            out.append(bytes(raw_bytes).decode("utf-8", "surrogateescape"))
            raw_bytes.clear()

    while j < n:
        c = text[j]
        if c == '"':
            flush()
            return "".join(out), j + 1
        if c != "\\":
            flush()
            out.append(c)
            j += 1
            continue
        if j + 1 >= n:
            break
        e = text[j + 1]
        if e in _SIMPLE_ESCAPES:
            flush()
            out.append(_SIMPLE_ESCAPES[e])
            j += 2
        elif e == "x" and j + 4 <= n:
            raw_bytes.append(int(text[j + 2 : j + 4], 16))
            j += 4
        elif e in "uU":
            width = 4 if e == "u" else 8
            flush()
            try:
                out.append(chr(int(text[j + 2 : j + 2 + width], 16)))
            except ValueError:
                raise PathSyntaxError(text, j, "bad \\u escape") from None
            j += 2 + width
        else:
            raise PathSyntaxError(text, j, f"unknown escape \\{e}")
    raise PathSyntaxError(text, i, "unterminated string")


def is_prefix(prefix: Path, path: Path) -> bool:
    return len(prefix) <= len(path) and path[: len(prefix)] == prefix
