"""The FieldsV1 codec: managedFields' JSON form of a :class:`FieldSet`.

Decoding follows SMD ``readIterV1``/``DeserializePathElement``; encoding follows ``emitContentsV1``
byte for byte (canonical element order, ``"."`` first, Go's two escaping layers). See
docs/ownership-model.md and the SSA semantics notes, section 2.
"""

from __future__ import annotations

import json
import marshal
import math
import re
from _thread import allocate_lock
from collections.abc import Hashable, Mapping

from ..base.value import (
    MAX_DEPTH,
    escape_controls,
    excerpt,
    go_json,
    go_json_float,
    go_json_string_html,
    go_json_string_plain,
    key_value,
    nesting_depth,
    valid_text,
)
from .element import FIELD, INDEX, KEY, VALUE, PathElement, keys_spelled_by_value
from .set import FieldSet

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeAlias


class FieldsV1Error(ValueError):
    """FieldsV1 that the API server would refuse to decode.

    ``position`` names where: the chain of FieldsV1 keys from the top (for parsed input) or a
    character offset (for text input that is not JSON).
    """

    def __init__(self, message: str, position: str = "") -> None:
        self.reason = message
        self.position = position
        super().__init__(f"{message} at {position}" if position else message)


class _UnknownElement(Exception):
    """A key with an unknown prefix letter: the server drops it and its subtree silently."""


UNKNOWN_KEY_REASON = ("the API server never writes one (it drops such keys, and everything below them, "
                      "when it reads managedFields)")


_INDEX_RE = re.compile(r"[+-]?[0-9]+\Z")
_WS = " \t\n\r"


def _no_constants(name: str) -> Any:
    raise ValueError(f"invalid JSON literal {name}")


_json_decoder = json.JSONDecoder(parse_constant=_no_constants, parse_int=float)  # Go: float64, "-0" too


def _read_json_value(text: str, what: str) -> Any:
    """Exactly one JSON value (surrounding whitespace allowed), numbers as float64 like Go, lone
    surrogates as U+FFFD like json-iterator, at most :data:`~kubectl_fieldown.base.value.MAX_DEPTH` deep."""
    s = text.lstrip(_WS)
    try:
        v, end = _json_decoder.raw_decode(s)
    except RecursionError:
        raise FieldsV1Error(f"the JSON in {what} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as e:
        raise FieldsV1Error(f"invalid JSON in {what}: {e.args[0] if e.args else e}") from None
    if s[end:].strip(_WS):
        raise FieldsV1Error(f"trailing data after the JSON value in {what}")
    if nesting_depth(v) > MAX_DEPTH:
        raise FieldsV1Error(f"the JSON in {what} is nested more than {MAX_DEPTH} levels deep")
    try:
        return _as_float64(v)
    except ValueError as e:
        raise FieldsV1Error(f"invalid JSON in {what}: {e}") from None


def _as_float64(v: Any) -> Any:
    t = type(v)
    if t is int or t is float:
        # Go reads every JSON number as a float64 and rejects one out of its range
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if math.isinf(f):
            raise ValueError(f"number {v} is out of the range of a float64")
        return f
    if t is list:
        return [_as_float64(x) for x in v]
    if t is dict:
        return {valid_text(k): _as_float64(x) for k, x in v.items()}
    if t is str:
        return valid_text(v)
    return v


_element_cache: dict[str, PathElement] = {}


def parse_element(s: str) -> PathElement:
    """One FieldsV1 key (``f:name``, ``k:{...}``, ``v:...``, ``i:N``) as a path element.

    Raises :class:`FieldsV1Error` for malformed keys and ``_UnknownElement`` for an unknown letter.
    """
    pe = _element_cache.get(s)
    if pe is not None:
        return pe
    if len(s) < 2:
        raise FieldsV1Error(f"path element {s!r} is too short (want a letter, ':' and content)")
    if s[1] != ":":
        raise FieldsV1Error(f"path element {s!r} has no ':' after its type letter")
    kind = s[0]
    body = s[2:]
    if kind == "f":
        pe = (FIELD, valid_text(body))
    elif kind == "v":
        from ..base.value import value_key

        pe = (VALUE, value_key(_read_json_value(body, f"value element {s!r}")))
    elif kind == "k":
        from ..base.value import value_key

        v = _read_json_value(body, f"key element {s!r}")
        if v is None:
            v = {}  # json-iterator's ReadObjectCB reads null as an empty object
        if not isinstance(v, dict):
            raise FieldsV1Error(f"key element {s!r} is not a JSON object")
        pe = (KEY, tuple(sorted((n, value_key(x)) for n, x in v.items())))
    elif kind == "i":
        if not _INDEX_RE.match(body):
            raise FieldsV1Error(f"index element {excerpt(s)!r} is not a decimal integer")
        if len(body.lstrip("+-0")) > 19 or not -(2**63) <= int(body) < 2**63:
            # Go's strconv.Atoi: out of an int's range (and Python refuses to read 4,300+ digits)
            raise FieldsV1Error(f"index element {excerpt(s)!r} is out of range")
        pe = (INDEX, int(body))
    else:
        raise _UnknownElement(s)
    if len(_element_cache) < 65536:
        _element_cache[s] = pe
    return pe


def decode(data: Mapping[str, Any] | str | bytes | None, *, strict: bool = False) -> FieldSet:
    """Decode FieldsV1 (parsed JSON, or its text) into a set. ``None`` is the empty set.

    As the server decodes it, a key with an unknown type letter (``x:bogus``) is dropped with its
    subtree; ``strict`` refuses it instead, for FieldsV1 that does not come from a server (a file):
    the server never writes one, so it is a mistake, and dropping it can make its parent a member.
    Nesting beyond :data:`~kubectl_fieldown.base.value.MAX_DEPTH` levels is refused either way."""
    if data is None:
        return FieldSet()
    if isinstance(data, (str, bytes)):
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        try:
            parsed = json.loads(text, parse_constant=_no_constants)
        except RecursionError:
            raise FieldsV1Error(f"FieldsV1 is nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as e:
            pos = getattr(e, "pos", None)
            raise FieldsV1Error(
                f"FieldsV1 is not valid JSON: {getattr(e, 'msg', e)}",
                f"character {pos}" if pos is not None else "",
            ) from None
        if parsed is None:
            return FieldSet()  # FromJSON reads a top-level null as the empty set
        data = parsed
    if type(data) is not dict and not isinstance(data, Mapping):
        raise FieldsV1Error(f"FieldsV1 must be a JSON object, not {_kind(data)}")
    key = _decoded_key(data, strict)
    if key is not None:
        hit = _decoded.sets.get(key)
        if hit is not None:
            return hit
    node, _ = _decode_node(data, None, 1, strict)
    out = node if node is not None else FieldSet()
    if key is not None:
        _decoded.keep(key, out)
    return out


# The sets decoded lately, by their FieldsV1's exact content: one object's managedFields are read
# several times over (by the write that is simulated, the explanation, each candidate fix), and
# entries alike across objects (a scaler's, a controller's) are common. marshal's bytes are the key
# because they tell every type apart (1, 1.0, True and "1"; a key that is not a string), so equal
# bytes are equal data; it refuses anything but the built-in types (a Mapping subclass: not kept).
# A FieldSet is a value that nothing changes once built, so one can be handed to every reader.
class _Recent:
    """The sets decoded last, oldest out first (objects are read in turn, not revisited), bounded
    in number and in the size of their FieldsV1 (a set takes some ten times its bytes).

    A write the engine plays encodes every entry again, most of them holding a set decoded from
    the object as it was: their encodings are kept too (as marshal's bytes, so that each reader gets
    its own copy of the JSON, which it may change), by the set's FieldsV1 and the style.

    Readers look up without a lock (one dict read each); what adds or evicts takes :attr:`lock`, for
    threads that simulate at once (a library's host, the replay tests' workers): two evictions of one
    oldest set raced before it."""

    __slots__ = ("answers", "encodings", "key_of", "lock", "max_bytes", "max_sets", "sets", "size")

    def __init__(self, max_sets: int, max_bytes: int) -> None:
        self.sets: dict[bytes, FieldSet] = {}
        self.key_of: dict[int, bytes] = {}
        """id of a kept set -> its key (the set is kept alive with it, so the id is no other's)"""
        self.encodings: dict[tuple[bytes, str], bytes] = {}
        self.answers: dict[bytes, dict[Hashable, Any]] = {}
        """what other modules worked out from a kept set alone (:func:`kept_answer`), by its key"""
        self.size = 0
        self.max_sets = max_sets
        self.max_bytes = max_bytes
        self.lock = allocate_lock()

    def keep(self, key: bytes, s: FieldSet) -> None:
        if len(key) > self.max_bytes // 8:
            return
        with self.lock:
            self._keep(key, s)

    def _keep(self, key: bytes, s: FieldSet) -> None:
        if key in self.sets:
            return
        self.sets[key] = s
        self.key_of[id(s)] = key
        self.size += len(key)
        while self.size > self.max_bytes or len(self.sets) > self.max_sets:
            oldest = next(iter(self.sets))
            gone = self.sets.pop(oldest)
            del self.key_of[id(gone)]
            for style in _STYLES:
                if self.encodings.pop((oldest, style), None) is not None:
                    self.size -= len(oldest)
            self.answers.pop(oldest, None)
            self.size -= len(oldest)

    def key(self, s: FieldSet) -> bytes | None:
        """The key of ``s`` when it is a set kept here (None: any other set)."""
        k = self.key_of.get(id(s))
        return k if k is not None and self.sets.get(k) is s else None

    def remember_encoding(self, key: bytes, style: str, obj: dict[str, Any]) -> None:
        data = marshal.dumps(obj)
        with self.lock:
            if key in self.sets and (key, style) not in self.encodings:
                self.encodings[key, style] = data
                self.size += len(key)  # about the encoding's size: counted, and given back with the set

    def keep_answer(self, key: bytes, question: Hashable, answer: Any) -> None:
        with self.lock:
            if key in self.sets:  # (still: a set evicted meanwhile takes no answer it would not give back)
                self.answers.setdefault(key, {})[question] = answer


_decoded = _Recent(max_sets=512, max_bytes=2 << 20)


def kept_answer(s: FieldSet, question: Hashable) -> Any:
    """What :func:`keep_answer` kept for ``s`` and ``question`` (None: nothing). Only a set the
    decoder keeps (one set per FieldsV1 text, for the next object with the same entry) has any."""
    key = _decoded.key(s)
    if key is None:
        return None
    answers = _decoded.answers.get(key)
    return answers.get(question) if answers is not None else None


def keep_answer(s: FieldSet, question: Hashable, answer: Any) -> None:
    """Keep ``answer`` (not None) to ``question`` about ``s``, a function of the set alone (and of
    values the question names), while the decoder keeps the set; it goes with the set."""
    key = _decoded.key(s)
    if key is not None:
        _decoded.keep_answer(key, question, answer)


def _decoded_key(data: Mapping[str, Any], strict: bool) -> bytes | None:
    if type(data) is not dict:
        return None
    try:
        return (b"s" if strict else b"l") + marshal.dumps(data)
    except ValueError:
        return None


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return type(v).__name__


if TYPE_CHECKING:
    _Where: TypeAlias = Any
    """Where a node is, as a linked chain ``(key, parent)`` (None at the top): built only as cheaply as
    a pair per level, turned into text only for an error message."""


def _decode_node(obj: Mapping[str, Any], where: _Where, depth: int, strict: bool) -> tuple[FieldSet | None, bool]:
    """Returns (the children below this entry or None, whether the entry itself is a member)."""
    if depth > MAX_DEPTH:
        raise FieldsV1Error(f"nested more than {MAX_DEPTH} levels deep", _where(where))
    members: set[PathElement] = set()
    children: dict[PathElement, FieldSet] = {}
    is_member = False
    cache = _element_cache
    for k, v in obj.items():
        if k == ".":
            is_member = True
            continue
        pe = cache.get(k)
        if pe is None:
            if type(k) is not str:
                raise FieldsV1Error(f"key {k!r} is not a string", _where(where))
            try:
                pe = parse_element(k)
            except _UnknownElement:
                if strict:
                    raise FieldsV1Error(f"unknown key {k!r}, {UNKNOWN_KEY_REASON},", _where(where)) from None
                continue
            except FieldsV1Error as e:
                raise FieldsV1Error(e.reason, _where((k, where))) from None
        if type(v) is not dict:
            if v is None:
                # json-iterator reads null where it expects an object as an empty object
                v = {}
            elif not isinstance(v, Mapping):
                raise FieldsV1Error(f"the value of {k!r} must be a JSON object, not {_kind(v)}", _where(where))
        if not v:
            # a leaf ({}): the common case, no recursion needed
            members.add(pe)
            continue
        sub, sub_member = _decode_node(v, (k, where), depth + 1, strict)
        if sub_member:
            members.add(pe)
        if sub is not None:
            prev = children.get(pe)
            children[pe] = sub if prev is None else prev.union(sub)
    if not members and not children:
        return None, True
    return FieldSet._node(members, children), is_member


def _where(where: _Where) -> str:
    chain: list[str] = []
    while where is not None:
        chain.append(where[0])
        where = where[1]
    chain.reverse()
    if len(chain) > 8:
        # one readable line, however deep: the start says where, the end what
        chain = [*chain[:4], f"… ({len(chain) - 6} more)", *chain[-2:]]
    # the keys come from the input: each is an escaped excerpt, so that an error is one short line
    # whatever they hold (a newline, an escape sequence, 5,000 characters)
    return "fieldsV1 " + (" > ".join(excerpt(escape_controls(k)) for k in chain) if chain else "(top level)")


# --- encoding ----------------------------------------------------------------------------------


def element_key(pe: PathElement) -> str:
    """The raw FieldsV1 key of an element, before the outer JSON escaping."""
    kind, payload = pe
    if kind == FIELD:
        return "f:" + str(payload)
    if kind == KEY:
        # equal elements spelled alike: cached by the element
        plain = keys_spelled_by_value(payload)
        if plain:
            s = _raw_key_cache.get(pe)
            if s is not None:
                return s
        s = "k:{" + ",".join(f"{go_json_string_plain(n)}:{_inner(v)}" for n, v in payload) + "}"
        if plain and len(_raw_key_cache) < 65536:
            _raw_key_cache[pe] = s
        return s
    if kind == VALUE:
        return "v:" + _inner(payload)
    if kind == INDEX:
        return "i:" + str(payload)
    raise ValueError(f"invalid path element {pe!r}")


def _inner(vk: tuple[Any, ...]) -> str:
    v = key_value(vk)
    if type(v) is float:
        return go_json_float(v)
    if type(v) is str:
        return go_json_string_html(v)
    return go_json(v)


_encoded_key_cache: dict[Any, str] = {}
_raw_key_cache: dict[PathElement, str] = {}


def _outer(pe: PathElement) -> str:
    # Equal keys and values can be spelled differently (0 and -0.0, 10**21 and 1e21), so those are
    # cached by their spelling; field names and indexes by the element itself.
    ck: Any = pe if pe[0] == FIELD or pe[0] == INDEX else element_key(pe)
    s = _encoded_key_cache.get(ck)
    if s is None:
        s = go_json_string_plain(ck if type(ck) is str else element_key(pe))
        if len(_encoded_key_cache) < 65536:
            _encoded_key_cache[ck] = s
    return s


CANONICAL = "canonical"
"""SMD's ``ToJSON``: elements in path-element order, ``"."`` first. Stored as-is for built-in types."""

UNSTRUCTURED = "unstructured"
"""What the API server returns for custom resources: their managedFields live in an unstructured
map, so Go's ``encoding/json`` writes the keys sorted as strings (``k:{..443..}`` before
``k:{..80..}``) and HTML-escapes them."""

_STYLES = (CANONICAL, UNSTRUCTURED)


def encode(s: FieldSet, style: str = CANONICAL) -> str:
    """Compact FieldsV1 text, byte for byte as the server writes it in the given style."""
    out: list[str] = ["{"]
    if style == CANONICAL:
        _encode_contents(s, False, out)
    elif style == UNSTRUCTURED:
        _encode_sorted(s, False, out)
    else:
        raise ValueError(f"unknown FieldsV1 style {style!r}")
    out.append("}")
    return "".join(out)


def _encode_contents(s: FieldSet, include_self: bool, out: list[str]) -> None:
    first = True
    if include_self and (s.members or s.children):
        out.append('".":{}')
        first = False
    members, children = s.members, s.children
    for pe in sorted(members.union(children)):
        if not first:
            out.append(",")
        first = False
        out.append(_outer(pe))
        c = children.get(pe)
        if c is None:
            out.append(":{}")
        else:
            out.append(":{")
            _encode_contents(c, pe in members, out)
            out.append("}")


def _encode_sorted(s: FieldSet, include_self: bool, out: list[str]) -> None:
    entries: list[tuple[str, FieldSet | None, bool]] = []
    if include_self and (s.members or s.children):
        entries.append((".", None, False))
    members, children = s.members, s.children
    for pe in members.union(children):
        entries.append((element_key(pe), children.get(pe), pe in members))
    entries.sort(key=lambda e: e[0])
    for i, (k, c, member) in enumerate(entries):
        if i:
            out.append(",")
        out.append(go_json_string_html(k))
        if c is None:
            out.append(":{}")
        else:
            out.append(":{")
            _encode_sorted(c, member, out)
            out.append("}")


def to_json_object(s: FieldSet, style: str = CANONICAL) -> dict[str, Any]:
    """FieldsV1 as parsed JSON; dict insertion order is the order :func:`encode` writes in that style.
    Each call returns new dicts."""
    key = _decoded.key(s)
    if key is not None:
        known = _decoded.encodings.get((key, style))
        if known is not None:
            obj: dict[str, Any] = marshal.loads(known)
            return obj
    if style == CANONICAL:
        obj = _to_obj(s, False)
    elif style == UNSTRUCTURED:
        obj = _to_sorted_obj(s, False)
    else:
        raise ValueError(f"unknown FieldsV1 style {style!r}")
    if key is not None:
        _decoded.remember_encoding(key, style, obj)
    return obj


def _to_obj(s: FieldSet, include_self: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if include_self and (s.members or s.children):
        out["."] = {}
    members, children = s.members, s.children
    for pe in sorted(members.union(children)):
        c = children.get(pe)
        out[element_key(pe)] = {} if c is None else _to_obj(c, pe in members)
    return out


def _to_sorted_obj(s: FieldSet, include_self: bool) -> dict[str, Any]:
    members, children = s.members, s.children
    # "." sorts before every "<letter>:" key, as Go's encoding/json sorts map keys
    out: dict[str, Any] = {".": {}} if include_self and (members or children) else {}
    for k, pe in sorted((element_key(pe), pe) for pe in members.union(children)):
        c = children.get(pe)
        out[k] = {} if c is None else _to_sorted_obj(c, pe in members)
    return out
