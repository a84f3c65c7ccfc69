"""The CRD validator's value checks: what a custom resource's OpenAPI schema forbids beyond types.

The API server validates every write of a custom resource against the CRD version's
``openAPIV3Schema`` (apiextensions ``ValidateCustomResource`` / ``ValidateCustomResourceUpdate``,
kube-openapi's ``validate`` package) and answers 422 with one cause per violation. This module
reproduces the value constraints of that validation, with the server's texts:

* ``enum`` — ``Unsupported value: "x": supported values: "a", "b"``;
* numbers — ``multipleOf``, ``maximum``/``exclusiveMaximum``, ``minimum``/``exclusiveMinimum``, each
  checked on its own on the value as the server holds it (an int64, else a float64), with Go's
  native-type quirks: an int64 value is checked against the constraint truncated to an integer
  (``multipleOf: 0.5`` on a ``number`` given an integer is a factor of 0, "must be positive"),
  while an ``integer`` schema's constraint that is no int64 (``maximum: 1.5``) is itself reported,
  at ``<nil>``, for every value, and compared as a float64;
* strings — ``maxLength`` (``Too long: may not be more than N bytes``, counting characters),
  ``minLength``, ``pattern`` — the first that fails is the only one reported;
* lists — ``maxItems`` (``Too many: N: must have at most M items``, ``item`` for 1), ``minItems``;
* objects — ``maxProperties`` (reported as ``Too many``, like lists), ``minProperties``, ``required``
  (``Required value``).

**Ratcheting** (CRDValidationRatcheting, on by default since 1.30): on an update, a violation at a
value that did not change is not reported. A value is compared with the old one at the same place:
object fields by name, list-map items by their keys; set and atomic list items are not correlated
(only the whole list, when it is equal). "Did not change" is apiserver's, along the schema
(:mod:`.ratchet`: a reordered list-map is unchanged, a preserve-unknown-fields map with keys never
is).

* ``allOf``/``anyOf``/``oneOf``/``not`` of flat subschemas (:func:`_composites`).

Elsewhere: type errors, the ``Checked`` range of a value and string formats (``typed/validate.py``,
``typed/formats.py``). Not modelled: ``x-kubernetes-validations`` (CEL), composites whose subschemas
have properties, items or composites of their own, ``uniqueItems``.
The server lists violations in Go's map order, which varies: callers sort them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeGuard

from ..base.record import Record
from ..base.value import go_format_float_v, go_quote
from .formats import format_valid
from .numbers import enum_match, go_int64, held, is_json_integer, range_error
from .ratchet import correlated, unchanged_in_schema
from .validate import format_message, type_message, type_problem, validator_format

__all__ = ["ValueError_", "constraint_errors"]

#: what the apiextensions validator's 422 causes say for each kind of violation
INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"

_NOT_CORRELATED = object()


class ValueError_(Record):
    """One cause of the 422: the field (as the server prints it), the message, the reason."""

    __slots__ = ("field", "message", "reason")
    field: Final[str]
    message: Final[str]
    reason: Final[str]

    def __init__(self, field: str, message: str, reason: str) -> None:
        self.field = field
        self.message = message
        self.reason = reason


def constraint_errors(new: Any, schema: Mapping[str, Any] | None, old: Any = _NOT_CORRELATED,
                      path: str = "") -> list[ValueError_]:
    """The violations of ``schema``'s value constraints in ``new`` (the whole object, or the value
    at ``path``, ``.status``, with its schema), ratcheted against ``old`` (the stored value) on an
    update; pass no ``old`` for a create."""
    if (type(schema) is not dict and not isinstance(schema, Mapping)) or not _constrains(schema):
        return []
    out = _node(new, schema, path, old, root=not path)
    seen: set[tuple[str, str]] = set()
    unique: list[ValueError_] = []
    for e in out:
        if (e.field, e.message) not in seen:
            seen.add((e.field, e.message))
            unique.append(e)
    return sorted(unique, key=lambda e: (e.field, e.message))


#: every keyword a check below reads: a schema with none of them anywhere finds nothing in any value
_KEYWORDS = frozenset({"enum", "exclusiveMaximum", "exclusiveMinimum", "maxItems", "maxLength", "maxProperties",
                       "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "pattern",
                       "required", "anyOf", "oneOf", "allOf", "not"})
#: schemas seen, by identity (each kept, so that its id is no other's): a kind's schema is read for
#: every write the engine plays
_SEEN: dict[int, tuple[Mapping[str, Any], bool]] = {}


def _constrains(schema: Mapping[str, Any]) -> bool:
    """Whether a constraint keyword appears anywhere in ``schema`` (in a default too: then the walk
    below decides, as it always did)."""
    hit = _SEEN.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    found = False
    stack: list[Any] = [schema]
    walked: set[int] = set()  # a schema read from YAML may hold one part in two places (an alias)
    while stack and not found:
        x = stack.pop()
        if id(x) in walked:
            continue
        if isinstance(x, Mapping):
            walked.add(id(x))
            found = not _KEYWORDS.isdisjoint(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            walked.add(id(x))
            stack.extend(x)
    if len(_SEEN) >= 256:
        _SEEN.clear()
    _SEEN[id(schema)] = (schema, found)
    return found


def _field(path: str) -> str:
    """kube-openapi's error name as apiextensions prints it (``field.Path``, ``<nil>`` at the root)."""
    name = path[1:] if path.startswith(".") else path
    return name if name else "<nil>"


def _node(v: Any, s: Mapping[str, Any], path: str, old: Any, *, root: bool = False) -> list[ValueError_]:
    if v is None:
        return []  # nulls are the type validator's (validate.type_errors)
    if v is old and (type(v) is dict or type(v) is list) and unchanged_in_schema(v, old, s):
        # the stored container itself (a write shares what it leaves as it was), unchanged as
        # ratcheting counts it: whatever is found below it would be ratcheted away at the end
        return []
    errs: list[ValueError_] = []
    typ = s.get("type")
    if isinstance(v, str) and typ in (None, "string"):
        errs += _string(v, s, path)
    if _is_number(v) and typ in (None, "number", "integer"):
        errs += _number(held(v), s, path)
    if isinstance(v, list) and typ in (None, "array"):
        errs += _array(v, s, path, old)
    enum = s.get("enum")
    if isinstance(enum, list) and enum and not any(enum_match(v, e) for e in enum):
        errs.append(_not_supported(path, v, enum))
    if (type(v) is dict or isinstance(v, Mapping)) and typ in (None, "object"):
        errs += _object(v, s, path, old, root)
    if "anyOf" in s or "oneOf" in s or "allOf" in s or "not" in s:
        errs += _composites(v, s, path)
    if errs and old is not _NOT_CORRELATED and unchanged_in_schema(v, old, s):
        return []  # ratcheting: an unchanged value (as apiserver compares: typed/ratchet.py) keeps what it had
    return errs


# --- allOf, anyOf, oneOf, not (kube-openapi schemaPropsValidator) ----------------------------

#: what makes a subschema more than a node's own checks: the engine plays only flat ones
_NESTED = ("properties", "additionalProperties", "patternProperties", "items", "anyOf", "oneOf", "allOf", "not",
           "dependencies")


def _composites(v: Any, s: Mapping[str, Any], path: str) -> list[ValueError_]:
    """The value against ``anyOf``, ``oneOf``, ``allOf`` and ``not``, in that order: each subschema
    validated as a whole schema at the same path. anyOf: when none passes, ``"<path>" must validate at
    least one schema (anyOf)`` and the errors of the failing subschema with the most checks run
    (kube-openapi's MatchCount; the first of equals); oneOf: the same unless exactly one passes; allOf:
    every subschema's errors, and a message when one fails; not: a message when it passes. Only flat
    subschemas are played (no properties, items or composites of their own, as in kubebuilder's
    int-or-string): a node with another is not checked for its composites."""
    subs: list[tuple[str, list[Mapping[str, Any]]]] = []
    for key in ("anyOf", "oneOf", "allOf"):
        listed = s.get(key)
        if isinstance(listed, list) and listed:
            subs.append((key, [x for x in listed if isinstance(x, Mapping)]))
    negated = s.get("not")
    if isinstance(negated, Mapping):
        subs.append(("not", [negated]))
    if any(k in sub for _, group in subs for sub in group for k in _NESTED):
        return []
    name = go_quote(_field(path) if path else "")
    out: list[ValueError_] = []
    for key, group in subs:
        results = [(_flat(v, sub, path), _checks_run(v, sub)) for sub in group]
        passed = [not errs for errs, _ in results]
        if key == "not":
            if passed[0]:
                out.append(_composite(f"{name} must not validate the schema (not)"))
            continue
        if key == "allOf":
            for errs, _ in results:
                out += errs
            if not all(passed):
                out.append(_composite(f"{name} must validate all the schemas (allOf)"
                                      + ("" if any(passed) else ". None validated")))
            continue
        valid = sum(passed)
        if (key == "anyOf" and valid) or (key == "oneOf" and valid == 1):
            continue
        if key == "anyOf":
            out.append(_composite(f"{name} must validate at least one schema (anyOf)"))
        else:
            found = "Found none valid" if not valid else f"Found {valid} valid alternatives"
            out.append(_composite(f"{name} must validate one and only one schema (oneOf). {found}"))
        if not valid:
            best = max(range(len(results)), key=lambda i: (results[i][1], -i))
            out += results[best][0]
    return out


def _composite(message: str) -> ValueError_:
    return ValueError_("<nil>", f'Invalid value: "": {message}', INVALID)


def _flat(v: Any, sub: Mapping[str, Any], path: str) -> list[ValueError_]:
    """A flat subschema's errors for ``v`` (not null): its type (and a number's range for it), its
    format, its value constraints."""
    typ, fmt = _type_and_format(sub)
    field = _field(path)
    out: list[ValueError_] = []
    problem = type_problem(typ, fmt if typ is not None else "", v)
    if problem is not None:
        out.append(ValueError_(field, type_message(field, *problem), INVALID))
    if typ in ("integer", "number") and _is_number(v):
        checked = range_error(v, typ, fmt, "Checked", field)
        if checked:
            out.append(ValueError_("<nil>", f'Invalid value: "": {checked}', INVALID))
    if isinstance(v, str) and fmt and format_valid(fmt, v) is False:
        out.append(ValueError_(field, format_message(field, fmt, v), INVALID))
    return out + _node(v, sub, path, _NOT_CORRELATED)


def _checks_run(v: Any, sub: Mapping[str, Any]) -> int:
    """The part of kube-openapi's MatchCount that differs between flat subschemas for one value:
    the type validator runs where the subschema has a type or a format (two counts), the format
    validator on a string where it has a string format (one)."""
    typ, fmt = _type_and_format(sub)
    return 2 * (typ is not None or bool(fmt)) + (isinstance(v, str) and bool(fmt) and typ in (None, "string"))


def _type_and_format(sub: Mapping[str, Any]) -> tuple[str | None, str]:
    """A subschema's type and the format the validator keeps for it (a string format without a type)."""
    raw_type, raw_fmt = sub.get("type"), sub.get("format")
    typ = raw_type if isinstance(raw_type, str) and raw_type else None
    return typ, validator_format(typ or "string", raw_fmt) if isinstance(raw_fmt, str) else ""


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --- value formatting (apimachinery field.Error, kube-openapi messages) ----------------------


def _go_v(v: Any) -> str:
    """Go's ``%v`` of a JSON number as the validator holds it (int64 or float64)."""
    if isinstance(v, float):
        return go_format_float_v(v)
    return str(v)


def _bad_value(v: Any) -> str:
    """``field.Error.ErrorBody``'s rendering of a bad value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return _go_v(v)
    if isinstance(v, str):
        return go_quote(v)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _invalid(path: str, value: Any, detail: str) -> ValueError_:
    return ValueError_(_field(path), f"Invalid value: {_bad_value(value)}: {detail}", INVALID)


def _in(path: str) -> str:
    return f"{path[1:] if path.startswith('.') else path} in body"


def _not_supported(path: str, v: Any, enum: Sequence[Any]) -> ValueError_:
    allowed = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in enum]
    detail = "supported values: " + ", ".join(go_quote(a) for a in allowed)
    return ValueError_(_field(path), f"Unsupported value: {_bad_value(v)}: {detail}", NOT_SUPPORTED)


# --- the validators ------------------------------------------------------------------------


def _string(v: str, s: Mapping[str, Any], path: str) -> list[ValueError_]:
    n = len(v)  # Go counts runes (utf8.RuneCountInString); Python strings are code points
    mx = s.get("maxLength")
    if isinstance(mx, int) and n > mx:
        unit = "byte" if mx == 1 else "bytes"
        return [ValueError_(_field(path), f"Too long: may not be more than {mx} {unit}", TOO_LONG)]
    mn = s.get("minLength")
    if isinstance(mn, int) and n < mn:
        return [_invalid(path, v, f"{_in(path)} should be at least {mn} chars long")]
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            rx = re.compile(pattern)
        except re.error:
            return []  # the CRD's own validation refuses patterns Go cannot compile
        if rx.search(v) is None:
            return [_invalid(path, v, f"{_in(path)} should match '{pattern}'")]
    return []


def _number(v: int | float, s: Mapping[str, Any], path: str) -> list[ValueError_]:
    """kube-openapi ``numberValidator``'s constraints on a value as the server holds it (int64 or
    float64). Each bound is first range-checked against the schema's type (an integer schema's
    ``maximum: 1.5`` is itself an error, reported at ``<nil>`` for every value); a bound that passes
    is compared in the value's Go type (an int64 against the bound truncated to int64, as Go's
    ``int64()`` on amd64 does), one that fails is compared as float64."""
    out: list[ValueError_] = []
    typ = s.get("type")
    type_name = typ if typ in ("integer", "number") else ""
    fmt = s.get("format")
    fmt = fmt if isinstance(fmt, str) else ""
    as_int = isinstance(v, int)
    mult = s.get("multipleOf")
    if _is_number(mult):
        native = _bound_ok(float(mult), type_name, fmt, "MultipleOf", path, out)
        if as_int and native:
            factor_i = go_int64(float(mult))
            if factor_i <= 0:
                out.append(_invalid(path, factor_i, f"factor MultipleOf declared for {_field(path)} must be "
                                                    f"positive: {factor_i}"))
            elif v % factor_i != 0:
                out.append(_invalid(path, v, f"{_in(path)} should be a multiple of {factor_i}"))
        else:
            f = float(mult)
            if f <= 0:
                out.append(_invalid(path, f, f"factor MultipleOf declared for {_field(path)} must be "
                                             f"positive: {go_format_float_v(f)}"))
            else:
                data = float(v)
                m = (1 / f * data) if f < 1 else (data / f)
                if not is_json_integer(m):
                    out.append(_invalid(path, data, f"{_in(path)} should be a multiple of {go_format_float_v(f)}"))
    for key, excl_key, sign, prefix in (("minimum", "exclusiveMinimum", -1, "Minimum boundary"),
                                        ("maximum", "exclusiveMaximum", 1, "Maximum boundary")):
        bound = s.get(key)
        if not _is_number(bound):
            continue
        exclusive = s.get(excl_key) is True
        native = _bound_ok(float(bound), type_name, fmt, prefix, path, out)
        # Go checks an int64 value against int64(bound) (truncated) and prints that; a float64, or any
        # value against a bound out of the schema type's range, against the float64 bound
        limit: int | float = go_int64(float(bound)) if as_int and native else float(bound)
        value: int | float = v if as_int and native else float(v)
        beyond = (value > limit or (exclusive and value == limit)) if sign > 0 else (
            value < limit or (exclusive and value == limit))
        if beyond:
            word = ("less than" if sign > 0 else "greater than") + ("" if exclusive else " or equal to")
            out.append(_invalid(path, value, f"{_in(path)} should be {word} {_go_v(limit)}"))
    return out


def _bound_ok(bound: float, type_name: str, fmt: str, prefix: str, path: str, out: list[ValueError_]) -> bool:
    """Whether a constraint's value is in range for the schema's type; if not, its error joins ``out``."""
    problem = range_error(bound, type_name, fmt, prefix, path[1:] if path.startswith(".") else path)
    if problem:
        out.append(ValueError_("<nil>", f'Invalid value: "": {problem}', INVALID))
    return not problem


def _count(n: int, s: Mapping[str, Any], path: str, max_key: str, min_key: str, noun: str) -> list[ValueError_]:
    """maxItems/minItems and maxProperties/minProperties: apiextensions reports both maxima as
    field.TooMany ("... items"), the minima as kube-openapi's own texts."""
    out: list[ValueError_] = []
    mx = s.get(max_key)
    if isinstance(mx, int) and n > mx:
        unit = "item" if mx == 1 else "items"  # field.TooMany
        out.append(ValueError_(_field(path), f"Too many: {n}: must have at most {mx} {unit}", TOO_MANY))
    mn = s.get(min_key)
    if isinstance(mn, int) and n < mn:
        out.append(_invalid(path, n, f"{_in(path)} should have at least {mn} {noun}"))
    return out


def _array(v: list[Any], s: Mapping[str, Any], path: str, old: Any) -> list[ValueError_]:
    out = _count(len(v), s, path, "maxItems", "minItems", "items")
    items = s.get("items")
    if isinstance(items, Mapping):
        olds = _correlated_items(v, s, old)
        for i, item in enumerate(v):
            out += _node(item, items, f"{path}[{i}]", olds[i])
    return out


def _correlated_items(v: list[Any], s: Mapping[str, Any], old: Any) -> list[Any]:
    """For each item, the old item it is compared with by ratcheting (list-maps only, by keys)."""
    none = [_NOT_CORRELATED] * len(v)
    if old is _NOT_CORRELATED or not isinstance(old, list) or s.get("x-kubernetes-list-type") != "map":
        return none
    keys = s.get("x-kubernetes-list-map-keys")
    if not isinstance(keys, list) or not keys:
        return none
    return [_NOT_CORRELATED if o is None else o for o in correlated(v, old, keys)]


def _object(v: Mapping[str, Any], s: Mapping[str, Any], path: str, old: Any, root: bool) -> list[ValueError_]:
    out = _count(len(v), s, path, "maxProperties", "minProperties", "properties")
    props = s.get("properties") if isinstance(s.get("properties"), Mapping) else {}
    assert isinstance(props, Mapping)
    additional = s.get("additionalProperties")
    old_map = old if isinstance(old, Mapping) else None
    for name, value in v.items():
        sub = props.get(name)
        if type(sub) is not dict and not isinstance(sub, Mapping):
            sub = additional if isinstance(additional, Mapping) else None
        if sub is None:
            continue
        if root and name in ("apiVersion", "kind", "metadata"):
            continue  # ObjectMeta and the type are validated elsewhere; never ratcheted
        o = old_map[name] if old_map is not None and name in old_map else _NOT_CORRELATED
        out += _node(value, sub, f"{path}.{name}", o)
    required = s.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in v:
                out.append(ValueError_(_field(f"{path}.{name}"), "Required value", REQUIRED))
    return out
