"""YAML scalars and map keys as kubectl turns them into JSON, and JSON numbers as kubectl re-reads them.

kubectl 1.36 reads a manifest with sigs.k8s.io/yaml: go-yaml v2 (go.yaml.in/yaml/v2 2.4) decodes
each document into Go values, sigs.k8s.io/yaml makes the map keys strings and encodes the result
with encoding/json, and the API machinery decodes that JSON into an unstructured object (an integer
literal that fits int64 stays an int64, every other number becomes a float64). That object is what
``kubectl apply`` sends and what ``kubectl create --dry-run=client -o json`` prints. This module
reproduces that chain for one scalar; tests/cli/test_yaml_as_kubectl.py checks it against the real
kubectl on every form below.

go-yaml v2's rules (YAML 1.1-ish, not PyYAML's):

* a quoted or block scalar without a tag is a string; so is any scalar with a tag other than the
  core ones (``!Ref x`` is ``"x"``), and ``!!str``;
* plain scalars: ``y``/``Y``/``yes``/``on``/``true`` (three casings each) and their negatives are
  bools, ``~``/``null``/empty are null, ``.inf``/``.nan`` are floats (which JSON refuses);
* a plain scalar that starts with a digit or a sign: a timestamp (``2001-12-14``; kept as the text),
  else Go's ``ParseInt(s, 0, 64)`` with ``_`` removed (``0x1F``, ``0o17``, ``0b101``, ``017``),
  else ``ParseUint``, else a float when it matches ``[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?``
  (so ``018`` is 18, ``1e3`` is 1000, ``+.5`` is 0.5) and is within a float64, else a string
  (``12:30``: no sexagesimal numbers; ``1e999``);
* a plain scalar that starts with ``.``: a float if Go's ``ParseFloat`` reads it;
* ``!!binary`` is base64 decoded into text (invalid UTF-8 becoming U+FFFD, byte by byte);
  ``!!float`` on an integer gives a float; any other tag that does not fit is an error.

Then JSON: a float that is a whole number below 1e21 is written without a fraction and read back
as an integer (``1.0`` and ``1e3`` reach the server as ``1`` and ``1000``), an integer beyond int64
becomes the nearest float64, written in full (``18446744073709551615`` becomes
``18446744073709552000``). Map keys: integers in decimal, floats in the shortest form of their
float32 value (``1.0`` is ``"1"``, ``1e6`` is ``"1e+06"``), bools ``"true"``/``"false"``; null and
integers beyond int64 are refused as keys.
"""

from __future__ import annotations

import codecs
import math
import re

from ..base.value import json_float

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ScalarError", "json_number", "key_text", "resolve"]

TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (TAG + t for t in ("str", "int", "float", "bool", "null"))
BINARY, TIMESTAMP, MERGE = (TAG + t for t in ("binary", "timestamp", "merge"))
_RESOLVABLE = frozenset((STR, BOOL, INT, FLOAT, NULL, TIMESTAMP))

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


class ScalarError(ValueError):
    """A scalar go-yaml refuses (``!!int 1.5``, bad ``!!binary``)."""


class _Float(float):
    """A float64 from go-yaml: still a float for a map key (which is formatted as a float32)."""


class _Uint(int):
    """An integer go-yaml decodes as uint64 (beyond int64): not allowed as a map key."""


_MAP: dict[str, Any] = {}
for _words, _v in (
    (("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    (("", "~", "null", "Null", "NULL"), None),
    ((".nan", ".NaN", ".NAN"), _Float("nan")),
    ((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), _Float("inf")),
    (("-.inf", "-.Inf", "-.INF"), _Float("-inf")),
):
    for _w in _words:
        _MAP[_w] = _v

_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
# what Go's ParseFloat reads of a text that starts with ".": digits with Go's underscore rule
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?\Z")
# a timestamp go-yaml recognises: YYYY-M-D, optionally [Tt ]h:m:s[.frac] and, after T, a zone
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:([Tt])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,][0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})"
    r"| ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,][0-9]+)?)?\Z"
)
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _go_parse_int(s: str, signed: bool) -> int | None:
    """Go's ``strconv.ParseInt(s, 0, 64)`` (``signed``) or ``ParseUint(s, 0, 64)``; None for an error.
    ``s`` has no underscores (go-yaml removes them first)."""
    neg = False
    if signed and s[:1] in ("+", "-"):
        neg = s[0] == "-"
        s = s[1:]
    base = 10
    if len(s) >= 2 and s[0] == "0":
        p = s[1].lower()
        base = {"x": 16, "o": 8, "b": 2}.get(p, 8)
        if p in "xob":
            s = s[2:]
    if not s or any(c not in _DIGITS[base] for c in s):
        return None
    v = int(s, base)
    if neg:
        v = -v
    if signed:
        return v if _INT64_MIN <= v <= _INT64_MAX else None
    return v if v <= _UINT64_MAX else None


def _valid_date(m: re.Match[str]) -> bool:
    """Go's time.Parse checks the ranges too (month 1-12, a day of that month, hour < 24...)."""
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    if not 1 <= mo <= 12:
        return False
    days = [31, 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28, 31, 30, 31, 30, 31, 31, 30, 31,
            30, 31][mo - 1]
    if not 1 <= d <= days:
        return False
    hms = (m[5], m[6], m[7]) if m[4] else (m[8], m[9], m[10])
    return hms[0] is None or (int(hms[0]) <= 23 and int(hms[1]) <= 59 and int(hms[2]) <= 59)


def _is_timestamp(s: str) -> bool:
    m = _TIMESTAMP.match(s)
    return m is not None and _valid_date(m)


def _float(s: str) -> _Float | None:
    f = float(s)
    return None if math.isinf(f) else _Float(f)  # Go: out of range is an error, so not a float


def _resolve_untagged(tag: str, s: str) -> tuple[str, Any]:
    """go-yaml's ``resolve`` for a plain scalar or a core tag other than !!str/!!binary."""
    hit = _MAP.get(s, _MAP)
    if hit is not _MAP:
        return (NULL if hit is None else BOOL if type(hit) is bool else FLOAT), hit
    first = s[0]
    if first == ".":
        if _DOT_FLOAT.match(s):
            f = _float(s)
            if f is not None:
                return FLOAT, f
    elif first in "+-0123456789":
        if tag == TIMESTAMP and _is_timestamp(s):
            # (untagged, a timestamp is the same text as the string it would otherwise be)
            return TIMESTAMP, s
        plain = s.replace("_", "")
        v = _go_parse_int(plain, True)
        if v is not None:
            return INT, v
        v = _go_parse_int(plain, False)
        if v is not None:
            return INT, _Uint(v)
        if _YAML_FLOAT.match(plain):
            f = _float(plain)
            if f is not None:
                return FLOAT, f
        # go-yaml's extra 0b/-0b branch reads nothing ParseInt's base prefixes did not already read
    return STR, s


def _go_replace(e: UnicodeError) -> tuple[str, int]:
    """Go's JSON encoder replaces each byte of invalid UTF-8 with U+FFFD (Python's "replace"
    replaces a maximal invalid sequence with one)."""
    assert isinstance(e, UnicodeDecodeError)
    return "\ufffd", e.start + 1


codecs.register_error("fieldown-go-replace", _go_replace)


def resolve(tag: str | None, value: str, plain: bool) -> Any:
    """The Go value go-yaml decodes a scalar into (before JSON): ``tag`` as the parser reports it
    (None without one), ``plain`` when the parser reports it plain-implicit (an untagged plain
    scalar, or the non-specific tag ``!``). Raises :class:`ScalarError`."""
    if not tag and not plain:
        return value  # quoted or block, untagged
    if tag == BINARY:
        import base64  # (here: rare, and ``show -i``'s start-up need not pay for it)
        import binascii

        try:
            data = base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            raise ScalarError("!!binary value contains invalid base64 data") from None
        return data.decode("utf-8", "fieldown-go-replace")
    t = tag or ""
    if t and t not in _RESOLVABLE:
        return value  # an unknown tag (or !): the text as it is
    rtag, out = (STR, value) if t == STR else _resolve_untagged(t, value)
    if t in ("", rtag, STR):
        return out
    if t == FLOAT and rtag == INT:
        return _Float(out)
    raise ScalarError(f"cannot decode !!{rtag[len(TAG):]} `{value}` as a !!{t[len(TAG):]}")


def json_number(v: Any) -> Any:
    """A number as it comes out of kubectl: encoded by Go's encoding/json, decoded by the API machinery."""
    if type(v) is int or type(v) is bool or v is None or isinstance(v, str):
        return v
    if isinstance(v, _Uint) or (isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX):
        v = float(v)
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        raise ScalarError(f"{f} is not a number Kubernetes can store (JSON has no NaN or infinity)")
    return json_float(f)


def key_text(v: Any) -> str:
    """A decoded scalar as sigs.k8s.io/yaml makes it a JSON object key; ScalarError for null and uint64."""
    if isinstance(v, str):
        return v
    if v is None:
        raise ScalarError("a map key cannot be null (kubectl: unsupported map key)")
    if type(v) is bool:
        return "true" if v else "false"
    if isinstance(v, _Uint):
        raise ScalarError(f"the map key {v} is beyond int64 (kubectl: unsupported map key of type uint64)")
    if isinstance(v, float):
        return _float32_g(v)
    return str(v)


def _float32_g(f: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'g', -1, 32)``, with go-yaml's names for infinities and NaN."""
    if math.isnan(f):
        return ".nan"
    import struct  # (here: rare, and ``show -i``'s start-up need not pay for it)

    try:
        f32 = struct.unpack("<f", struct.pack("<f", f))[0]
    except OverflowError:
        f32 = math.copysign(math.inf, f)
    if math.isinf(f32):
        return ".inf" if f32 > 0 else "-.inf"
    if f32 == 0:
        return "-0" if math.copysign(1, f32) < 0 else "0"
    for digits in range(1, 10):  # the shortest decimal that reads back as the same float32
        s = f"{f32:.{digits - 1}e}"
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == f32:
            break
    mantissa, exp_text = s.split("e")
    exp = int(exp_text)
    mantissa = mantissa.replace(".", "").rstrip("0") or "0"
    neg = mantissa.startswith("-")
    ds = mantissa.lstrip("-")
    sign = "-" if neg else ""
    if exp < -4 or exp >= 6:  # %e (Go: the exponent has at least two digits)
        m = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{sign}{m}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{ds}"
    whole = ds[: exp + 1].ljust(exp + 1, "0")
    frac = ds[exp + 1:]
    return f"{sign}{whole}{'.' + frac if frac else ''}"
