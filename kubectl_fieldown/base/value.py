"""Typed JSON values as structured-merge-diff sees them.

Objects arrive as plain Python JSON data (dict, list, str, int, float, bool, None). Python's own
equality and ordering disagree with the API server's in ways that matter for ownership:
``True == 1`` (and they hash alike), ``1 == 1.0`` is fine but ``"a" < 1`` raises, and there is no
total order over mixed types. This module supplies the server's rules (SMD ``value``):

* equality: numbers compare numerically across int and float; bool is never a number;
* a total order: numbers < strings < bools < lists < maps < null;
* Go's text forms: ``%q`` strings and ``%v`` floats for path strings, ``encoding/json`` for the
  JSON written inside ``k:``/``v:`` path elements.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from marshal import dumps as _marshal_dumps
from marshal import loads as _marshal_loads

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None
"""A decoded JSON value. Kept as ``Any`` at runtime boundaries for speed; this alias documents intent."""

if TYPE_CHECKING:
    ValueKey: TypeAlias = tuple[Any, ...]
    """A hashable, totally ordered stand-in for a value (see :func:`value_key`)."""
else:  # at run time, where typing's Any is not imported, only for aliases built from it
    ValueKey = tuple

# Rank of each kind in the server's total order (SMD value.Compare).
RANK_NUMBER = 0
RANK_STRING = 1
RANK_BOOL = 2
RANK_LIST = 3
RANK_MAP = 4
RANK_NULL = 5

_NULL_KEY: ValueKey = (RANK_NULL,)


MAX_DEPTH = 100
"""Nesting levels of maps and lists that the tool reads in an object, or in a value inside a FieldsV1
key (the root object is level 1); deeper input is refused with an error (docs/show.md, "Input limits").

Kubernetes objects rarely pass 30 (a CRD's own schema); the API server accepts 10,000. Everything
downstream (value keys, FieldsV1, the owner tree, the engine, YAML output) is recursive by design and
must stay well inside Python's recursion limit."""

TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep, more than the tool analyses"
"""What is said of a live object deeper than :data:`MAX_DEPTH` (the server keeps such objects)."""


def too_deep(v: Any) -> bool:
    """Nested deeper than :data:`MAX_DEPTH` (:data:`TOO_DEEP`): the engine and the renderers, which
    recurse, do not take it."""
    return nesting_depth(v) > MAX_DEPTH

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(s: str) -> str:
    """``s`` with each lone surrogate (what an escape such as ``"\\ud800"`` decodes to in Python)
    replaced by U+FFFD, as Go's JSON and YAML decoders read it: it is not UTF-8 and would fail every
    output."""
    if not s.isascii() and _SURROGATE.search(s):
        return _SURROGATE.sub("\ufffd", s)
    return s


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


#: how much of an input an error message quotes (a path, a flag's value, a key)
EXCERPT_LIMIT = 80


def excerpt(text: str, limit: int = EXCERPT_LIMIT) -> str:
    """``text`` as an error may quote it: whole when short, else its start, an ellipsis and its length
    (a 5,000-digit number must not make a 5 KB "one-line" error)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text):,} characters)"


#: a run of text without spaces longer than this in an error is echoed input (a number, a value, a
#: path), cut to an excerpt; and no message is longer than MESSAGE_LIMIT (its middle is cut)
WORD_LIMIT = 300
MESSAGE_LIMIT = 4000
_LONG_WORD = re.compile(r"\S{" + str(WORD_LIMIT + 1) + ",}")


def bounded_message(message: str) -> str:
    """An error ``message`` with every echoed input bounded, whichever code path quoted it: long runs
    without spaces become excerpts, and a message longer than :data:`MESSAGE_LIMIT` loses its middle."""
    message = _LONG_WORD.sub(lambda m: excerpt(m.group()), message)
    if len(message) > MESSAGE_LIMIT:
        cut = len(message) - MESSAGE_LIMIT
        head = MESSAGE_LIMIT * 3 // 4
        message = f"{message[:head]} … ({cut:,} characters left out) … {message[head + cut:]}"
    return message


def escape_controls(text: str) -> str:
    """``text`` with its control characters (C0, DEL, C1) written as JSON escapes (``\\u001b``).

    For text from a cluster or a file on its way to a terminal: an escape sequence in a name or a
    value would drive the terminal (retitle it, clear it, hide lines)."""
    return _CONTROL.sub(_escape_control, text) if _CONTROL.search(text) else text


def _escape_control(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def value_on_one_line(v: Any, limit: int = 80) -> str:
    """A value on one line for a person: scalars bare (strings JSON-quoted only when ambiguous),
    containers as compact JSON, control characters escaped; cut at ``limit`` characters with an
    ellipsis."""
    if isinstance(v, str):
        text = v if _bare_ok(v) else json.dumps(v, ensure_ascii=False)
    elif v is None:
        text = "null"
    elif isinstance(v, bool):
        text = "true" if v else "false"
    elif isinstance(v, (int, float)):
        text = json.dumps(v)
    else:
        text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    text = escape_controls(text)
    if limit and len(text) > limit:
        text = text[: max(limit - 1, 1)] + "…"
    return text


_NUMBER = re.compile(r"[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?")


def _bare_ok(s: str) -> bool:
    """Can a string be shown without quotes and still not be mistaken for a number, bool or null?"""
    if not s or s.strip() != s or escape_controls(s) is not s or s.startswith(('"', "{", "[")):
        return False
    return s not in ("true", "false", "null") and not _NUMBER.fullmatch(s)


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def copy_json(v: Any) -> Any:
    """A deep copy of JSON data (much cheaper than ``copy.deepcopy`` on this hot path)."""
    t = type(v)
    if t is dict or t is list:
        try:
            # marshal's C walk, format 2: no references, so nothing the original shared is shared in
            # the copy; it refuses anything but plain dicts, lists and scalars
            return _marshal_loads(_marshal_dumps(v, 2))
        except ValueError:
            pass
    return _copy_json(v)


def copy_plain_json(v: Any) -> Any:
    """:func:`copy_json` of plain JSON data (dicts, lists and scalars); ValueError for anything else."""
    return _marshal_loads(_marshal_dumps(v, 2))


def plain_json(v: Any) -> bool:
    """Whether ``v`` is data :func:`copy_json` copies as it is (plain dicts, lists and scalars: what
    marshal takes), so that a copy would change nothing but the identity of its containers."""
    try:
        _marshal_dumps(v, 2)
    except ValueError:
        return False
    return True


def _copy_json(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return {k: _copy_json(x) for k, x in v.items()}
    if t is list:
        return [_copy_json(x) for x in v]
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    if isinstance(v, Mapping):
        return {k: _copy_json(x) for k, x in v.items()}
    return v


def nesting_depth(v: Any, limit: int = MAX_DEPTH) -> int:
    """The levels of maps and lists in ``v`` (0 for a scalar), counted without recursion and only as
    far as ``limit + 1``: enough to tell that a value is too deep without walking all of it."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(v, 1)]
    while stack:
        node, depth = stack.pop()
        tn = type(node)  # dict and list first: isinstance against the Mapping ABC is slow
        children = node.values() if tn is dict else node if tn is list else \
            node.values() if isinstance(node, Mapping) else node if isinstance(node, tuple) else None
        if children is None:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        for c in children:
            tc = type(c)
            if tc is dict or tc is list or (tc not in _SCALAR_TYPES and isinstance(c, (Mapping, tuple))):
                stack.append((c, depth + 1))
    return deepest


class ValueError_(ValueError):
    """A value that the API server could not represent (NaN, an unsupported Python type)."""


_EXACT_FLOAT_LIMIT = 2**53


@functools.total_ordering
class BigInt:
    """An integer beyond 2**53 inside a :func:`value_key`.

    SMD compares an int with a float by converting the int to float64, and the server decodes the
    numbers of managedFields (``k:``/``v:``) as float64 — so ``k:{"id":9007199254740992}`` read back
    from an entry must equal the object's int ``9007199254740993``. Two ints still compare exactly,
    as Go compares two int64. Hash is that of the float64, so all of them meet in sets and dicts.
    """

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def _other(self, other: object) -> int | float | None:
        if isinstance(other, BigInt):
            return other.value
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return other
        return None

    def __eq__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if type(o) is float:
            return float(self.value) == o
        return self.value == o

    def __lt__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if type(o) is float:
            return float(self.value) < o
        return self.value < o

    def __hash__(self) -> int:
        return hash(float(self.value))

    def __repr__(self) -> str:
        return f"BigInt({self.value})"


def value_key(v: Any) -> ValueKey:
    """A hashable key with the server's equality and order.

    ``value_key(1) == value_key(1.0)`` and they hash alike; ``value_key(True) != value_key(1)``.
    Keys of different kinds order by kind; within a kind by the server's rules, so sorting keys
    sorts values exactly as SMD does. The original Python value is kept inside the key (an int stays
    an int) because its text form can differ (``1e+06`` for a float, ``1000000`` for an int).
    """
    if v is None:
        return _NULL_KEY
    t = type(v)
    if t is str:
        return (RANK_STRING, v)
    if t is bool:
        return (RANK_BOOL, v)
    if t is float:
        return (RANK_NUMBER, v)
    if t is int:
        return (RANK_NUMBER, v if -_EXACT_FLOAT_LIMIT <= v <= _EXACT_FLOAT_LIMIT else BigInt(v))
    if isinstance(v, Mapping):
        return (RANK_MAP, tuple(sorted((k, value_key(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return (RANK_LIST, tuple(value_key(x) for x in v))
    if isinstance(v, bool):
        return (RANK_BOOL, bool(v))
    if isinstance(v, (int, float)):
        return value_key(float(v) if isinstance(v, float) else int(v))
    if isinstance(v, str):
        return (RANK_STRING, str(v))
    raise ValueError_(f"unsupported value of type {type(v).__name__}")


def key_value(k: ValueKey) -> Any:
    """The plain value a :func:`value_key` stands for."""
    rank = k[0]
    if rank == RANK_NULL:
        return None
    if rank == RANK_LIST:
        return [key_value(x) for x in k[1]]
    if rank == RANK_MAP:
        return {name: key_value(x) for name, x in k[1]}
    if type(k[1]) is BigInt:
        return k[1].value
    return k[1]


def values_equal(a: Any, b: Any) -> bool:
    """Deep equality with the server's rules (SMD ``value.Equals``)."""
    if a is b and type(a) in (dict, list):
        return True  # shared by merge or prune (no NaN in JSON, so a value equals itself)
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int):
        return bool(a == b)
    if ta is float or tb is float:
        if ta in (int, float) and tb in (int, float):
            # Go compares an int with a float as float64 (exact below 2**53, rounded above)
            return bool(float(a) == float(b))
        return False
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if a is None or b is None:
        return a is None and b is None
    # a list is tested first: isinstance against the Mapping ABC is slow, and lists are common here
    if ta is list or (ta is not dict and isinstance(a, list)):
        if not (tb is list or isinstance(b, list)) or len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            if not values_equal(x, y):
                return False
        return True
    if ta is dict or isinstance(a, Mapping):
        if not (tb is dict or (tb is not list and isinstance(b, Mapping))) or len(a) != len(b):
            return False
        for k, x in a.items():
            if k not in b or not values_equal(x, b[k]):
                return False
        return True
    if ta is not tb:
        return False
    return bool(a == b)


def compare_values(a: Any, b: Any) -> int:
    """-1, 0 or 1 in the server's total order."""
    ka, kb = value_key(a), value_key(b)
    if ka == kb:
        return 0
    return -1 if ka < kb else 1


# --- Go text forms -----------------------------------------------------------------------------


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of a finite, non-zero float and the decimal point position.

    ``1500.0 -> ("15", 4)``: the value is ``0.15 * 10**4``. Python's ``repr`` and Go's shortest
    formatting both produce the shortest digit string that round-trips, so they agree.
    """
    # repr is "123.45" or "1.2345e+67": read its digits and exponent as text (decimal's import is
    # a tenth of ``show -i``'s start-up, and list keys with numbers come through here)
    mantissa, _, exponent = repr(abs(f)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0")
    # value = 0.<digits> * 10**(len(whole) + exponent); leading zeros move the point left
    dp = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(significant))
    return significant.rstrip("0") or "0", dp


def _go_special(f: float) -> str | None:
    """Go's text for NaN, the infinities and the zeros (the same in every float format), else None."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    return None


def go_format_float_v(f: float) -> str:
    """Go ``fmt.Sprintf("%v", f)`` for a float64: ``%g`` with the shortest precision."""
    special = _go_special(f)
    if special is not None:
        return special
    neg = f < 0
    digits, dp = _shortest_digits(f)
    exp = dp - 1
    if exp < -4 or exp >= 6:
        # strconv 'g' with the shortest precision switches to %e at exponent 6 (1e+06)
        out = _exp_form(digits, exp)
    else:
        out = _fixed_form(digits, dp)
    return ("-" if neg else "") + out


def go_format_float_f(f: float) -> str:
    """Go ``strconv.FormatFloat(f, 'f', -1, 64)``: the shortest digits, in fixed notation."""
    special = _go_special(f)
    if special is not None:
        return special
    digits, dp = _shortest_digits(f)
    return ("-" if f < 0 else "") + _fixed_form(digits, dp)


def json_float(f: float) -> int | float:
    """A finite float64 after a trip through Go's encoding/json and the API machinery's decoder: a
    whole value below 1e21 is written without a fraction or exponent (its shortest digits, then
    zeros) and read back as an integer (an int64, or an int beyond it standing for the float64 that
    prints the same digits again); any other value stays a float."""
    if f.is_integer() and abs(f) < 1e21:
        return int(f) if abs(f) < 2**53 else int(go_format_float_f(f))
    return f


def _exp_form(digits: str, exp: int) -> str:
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exp < 0 else "+"
    e = abs(exp)
    return f"{mant}e{sign}{e:02d}"


def _fixed_form(digits: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * (-dp) + digits
    if dp >= len(digits):
        return digits + "0" * (dp - len(digits))
    return digits[:dp] + "." + digits[dp:]


def go_json_float(f: float) -> str:
    """Go ``encoding/json`` for a float64: fixed notation in [1e-6, 1e21), else exponent form."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError_(f"unsupported float value: {f!r}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    neg = f < 0
    a = abs(f)
    digits, dp = _shortest_digits(a)
    if a < 1e-6 or a >= 1e21:
        out = _exp_form(digits, dp - 1)
        # encoding/json shortens a one-digit negative exponent: e-07 becomes e-7
        if len(out) >= 4 and out[-4:-1] == "e-0":
            out = out[:-2] + out[-1]
    else:
        out = _fixed_form(digits, dp)
    return ("-" if neg else "") + out


_GO_QUOTE_SHORT = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def go_quote(s: str) -> str:
    """Go ``strconv.Quote`` (what ``%q`` prints in conflict paths)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'  # the usual case: printable ASCII (0x20-0x7e) is its own quote
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif c < 0x80:
            if 0x20 <= c < 0x7F:
                out.append(ch)
            elif c in _GO_QUOTE_SHORT:
                out.append(_GO_QUOTE_SHORT[c])
            else:
                out.append(f"\\x{c:02x}")
        elif 0xD800 <= c <= 0xDFFF:
            # a lone surrogate is invalid UTF-8 for Go: one \xNN per byte of its WTF-8 form
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
        elif ch.isprintable():
            out.append(ch)
        elif c < 0x10000:
            out.append(f"\\u{c:04x}")
        else:
            out.append(f"\\U{c:08x}")
    out.append('"')
    return "".join(out)


def go_value_string(v: Any) -> str:
    """SMD ``value.ToString``: the form of a value inside ``[...]`` in a path string."""
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        return go_quote(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return go_format_float_v(v)
    if isinstance(v, Mapping):
        return "".join(f"{k}={go_value_string(v[k])}" for k in sorted(v))
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(go_value_string(x) for x in v) + "]"
    raise ValueError_(f"unsupported value of type {type(v).__name__}")


def _json_string(s: str, html: bool) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s and not (
            html and ("<" in s or ">" in s or "&" in s)):
        return f'"{s}"'  # the usual case: printable ASCII (0x20-0x7e) needing no escape is itself
    return _escaped_json_string(s, html)


def _escaped_json_string(s: str, html: bool) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            if ch == "\n":
                out.append("\\n")
            elif ch == "\r":
                out.append("\\r")
            elif ch == "\t":
                out.append("\\t")
            else:
                out.append(f"\\u{c:04x}")
        elif (html and ch in "<>&") or (html and (c == 0x2028 or c == 0x2029)):
            out.append(f"\\u{c:04x}")
        elif 0xD800 <= c <= 0xDFFF:
            # invalid UTF-8 becomes the replacement character
            out.append("\\ufffd" if html else "\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json_string_html(s: str) -> str:
    """A JSON string as Go ``encoding/json`` writes it (HTML-escaped, ``\\u00xx`` controls)."""
    return _json_string(s, html=True)


def go_json_string_plain(s: str) -> str:
    """A JSON string escaped only for ``"``, ``\\`` and control bytes (json-iterator ``WriteString``)."""
    return _json_string(s, html=False)


def go_json(v: Any) -> str:
    """Compact JSON of a value as Go ``encoding/json`` writes it (sorted map keys, HTML escaping)."""
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        return go_json_string_html(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return go_json_float(v)
    if isinstance(v, Mapping):
        return "{" + ",".join(f"{go_json_string_html(k)}:{go_json(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, Sequence):
        return "[" + ",".join(go_json(x) for x in v) + "]"
    raise ValueError_(f"unsupported value of type {type(v).__name__}")
