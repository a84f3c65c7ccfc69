"""Checks the API server runs on values, with its error texts.

* :func:`typed_errors` — what SMD's ``ObjectToTyped`` refuses in an applied configuration
  (duplicate list keys, unidentifiable list items): the server answers 500
  ``failed to create typed patch object (...): <path>: <error>``.
* :func:`type_errors` — explicit nulls where the schema allows none (``<path> in body must be of
  type <type>: "null"``), values of another JSON type than the schema's (a string where an integer
  goes, a number in a set of strings, ``1.5`` or ``123456789012345678901`` where an integer goes):
  the CRD validator answers 422 ``<path> in body must be of type <type>: "<the value's type>"``
  (``<format>: "<the value's Go format>"`` where the schema has a format the server keeps; a string
  its format refuses, ``<format>: "<the string>"``: :mod:`.formats`), and for
  a number out of its type's range ``<nil>: ... Checked value must be of type integer ...``; except
  where the value is unchanged from the old object (validation ratcheting, on by default since
  Kubernetes 1.30).
* :func:`scale_errors` — the values at a scale subresource's paths (apiextensions
  ``ValidateScaleSpec``/``ValidateScaleStatus``): replicas must be integers in int32's range, the
  label selector a string.
* :func:`duplicate_errors` — repeated items of a set or a list-map (the CRD validator's list-type
  check): 422 ``<path>[i]: Duplicate value: <value>``.
* :func:`prune_non_nullable_nulls` — what the custom resource decoder drops from a create, an update
  or a patched object before defaulting: nulls of schema fields that are neither nullable nor
  defaulted (apiextensions ``PruneNonNullableNullsWithoutDefaults``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.value import go_format_float_v, go_json, go_quote
from ..fieldpath.element import FIELD, Path, PathElement
from ..fieldpath.pathstring import path_string
from ..schema.types import DEDUCED, NO_DEFAULT, MapType, Type
from .formats import format_valid
from .items import LIST, MAP, SCALAR, ItemError, KnownIndexes, item_element, key_type, side
from .numbers import held, is_json_integer, range_error
from .ratchet import correlated, unchanged


def typed_errors(v: Any, t: Type, path: Path = (), *, undeclared: bool = False,
                 indexes: KnownIndexes | None = None) -> list[str]:
    """``undeclared``: a key that a closed map (declared fields, no element type) does not declare
    is ``field not declared in schema`` — what a CRD's schema gives the server; the rest of that map
    is not looked at (SMD stops there). ``indexes``: filled with the item index of each list of
    ``v`` it checks (:data:`~.items.KnownIndexes`; complete only when there is no error)."""
    # every applied configuration is checked and nearly all are valid: a first walk only looks for a
    # problem (no paths, no sorted keys, the first one ends it); the walk that words them follows it
    found: list[str] = []
    _typed(v, t, path, found, undeclared, False, indexes)
    if not found:
        return []
    out: list[str] = []
    _typed(v, t, path, out, undeclared)
    return out


def typed_message(errs: list[str]) -> str:
    """SMD ``ValidationErrors.Error()``: one error as it is, several as a list."""
    return errs[0] if len(errs) == 1 else "errors:\n" + "\n".join("  " + e for e in errs)


def prune_undeclared(obj: dict[str, Any], t: Type) -> dict[str, Any]:
    """The object without the fields its schema does not declare (the structural pruning of a custom
    resource stored at a version whose schema lacks them); apiVersion, kind and metadata are kept.
    Nothing pruned: the object itself, whose parts a write then shares with the live object."""
    m = t.map
    if m is None:
        return obj
    return _pruned_map(obj, m, ("apiVersion", "kind", "metadata"))


def _pruned(v: Any, t: Type) -> Any:
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None and not t.map.atomic:
        return _pruned_map(v, t.map)
    if s == LIST and type(v) is list and t.list is not None:
        lt = t.list
        return _kept(v, [_pruned(x, lt.item) for x in v])
    return v


def _pruned_map(v: Mapping[str, Any], m: MapType, keep: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    same = True
    for k, x in v.items():
        if k in keep:
            out[k] = x
        elif k in m.fields or m.element is not None:
            px = out[k] = _pruned(x, key_type(m, k))
            same = same and px is x
        else:
            same = False
    return v if same and type(v) is dict else out


def _kept(v: list[Any], items: list[Any]) -> list[Any]:
    """``v`` itself when each of its items came out as it was (nothing pruned below), else ``items``."""
    return v if all(a is b for a, b in zip(items, v, strict=True)) else items


def _typed(v: Any, t: Type, path: Path, out: list[str], undeclared: bool = False, words: bool = True,
           known: KnownIndexes | None = None) -> None:
    # SMD's validating walker: the value picks the side of the type it fits, else the type's first
    # side (map, scalar, list) and a type error; map keys in sorted order, as the server reports.
    # Without ``words`` it only tells whether there is a problem: it stops at the first, records ""
    # for it, and neither builds paths nor sorts keys (``path`` stays what it was given)
    tv = type(v)
    if tv in _FITS:
        kind = t.scalar
        if kind is not None and (kind == _FITS[tv] or kind not in _CHECKED):
            return  # a scalar where its kind of scalar (or an untyped one) is expected: fine
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if v is None:
            return
        if type(v) is not dict:
            out.append(f"{path_string(path)}: expected map, got &{{{_go_v(v)}}}" if words else "")
            return
        if m.atomic:
            return
        for k in sorted(v) if words else v:
            if undeclared and m.element is None and k not in m.fields:
                out.append(f"{path_string((*path, (FIELD, k)))}: field not declared in schema" if words else "")
                return
            x = v[k]
            f = m.fields.get(k)  # (key_type without the call: most keys of most objects come here)
            kt = f.type if f is not None else m.element if m.element is not None else DEDUCED
            tx = type(x)
            if tx in _FITS:
                kind = kt.scalar
                if kind is not None and (kind == _FITS[tx] or kind not in _CHECKED):
                    continue  # the call's own first answer (a fitting scalar: most keys), without the call
            _typed(x, kt, (*path, (FIELD, k)) if words else path, out, undeclared, words, known)
            if out and not words:
                return
    elif s == SCALAR:
        problem = _scalar_error(t.scalar, v)
        if problem:
            out.append(f"{path_string(path)}: {problem}" if words else "")
    elif s == LIST:
        lt = t.list
        assert lt is not None
        if v is None:
            return
        if type(v) is not list:
            out.append(f"{path_string(path)}: expected list, got &{{{_go_v(v)}}}" if words else "")
            return
        if lt.relationship == "atomic":
            return
        # (the first index of each element: index_items's answer for a list without errors)
        seen: dict[PathElement, int] = {}
        pes: list[PathElement | None] = []
        for i, item in enumerate(v):
            try:
                pe = item_element(lt, item)
            except ItemError as e:
                out.append(f"{path_string(path)}: element {i}: {e}" if words else "")
                if not words:
                    return
                continue
            if pe in seen:
                from ..fieldpath.pathstring import element_string

                out.append(f"{path_string(path)}: duplicate entries for key {element_string(pe)[0:]}" if words else "")
                if not words:
                    return
                continue
            seen[pe] = i
            pes.append(pe)
            _typed(item, lt.item, (*path, pe) if words else path, out, undeclared, words, known)
            if out and not words:
                return
        if known is not None and not out:
            known[id(v)] = (v, lt, (pes, seen, set()))


#: the scalar kind each JSON scalar type satisfies; _scalar_error checks only the kinds in _CHECKED
_FITS = {str: "string", int: "numeric", float: "numeric", bool: "boolean"}
_CHECKED = ("numeric", "string", "boolean")


def _scalar_error(kind: str | None, v: Any) -> str:
    """SMD ``validateScalar``, with its Go formatting of the offending value."""
    if v is None:
        return ""
    if kind == "numeric":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"expected numeric (int or float), got {_go_type(v)}"
    elif kind == "string":
        if not isinstance(v, str):
            return f"expected string, got &value.valueUnstructured{{Value:{_go_sharp_v(v)}}}"
    elif kind == "boolean" and not isinstance(v, bool):
        return f"expected boolean, got &{{{_go_v(v)}}}"
    elif kind == "untyped" and isinstance(v, (list, dict)):
        return f"expected any scalar, got &{{{_go_v(v)}}}"
    return ""


def _go_type(v: Any) -> str:
    """Go ``%T`` of a decoded JSON value."""
    v = held(v)
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _go_v(v: Any) -> str:
    """Go ``%v`` of a decoded JSON value."""
    v = held(v)
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
    if isinstance(v, list):
        return "[" + " ".join(_go_v(x) for x in v) + "]"
    return "map[" + " ".join(f"{k}:{_go_v(v[k])}" for k in sorted(v)) + "]"


def _go_sharp_v(v: Any) -> str:
    """Go ``%#v`` of a decoded JSON value held in an ``interface{}``."""
    v = held(v)
    if v is None:
        return "interface {}(nil)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_format_float_v(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list):
        return "[]interface {}{" + ", ".join(_go_sharp_v(x) for x in v) + "}"
    return "map[string]interface {}{" + ", ".join(f"{go_quote(k)}:{_go_sharp_v(v[k])}" for k in sorted(v)) + "}"


def type_errors(v: Any, t: Type, old: Any = None, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``(field, message)`` for each null the schema does not allow, each value whose JSON type is
    not the schema's, and each number out of its schema type's range, in the CRD validator's words
    (kube-openapi ``typeValidator`` and ``numberValidator``'s range check). ``old`` is the object
    before an update (None: a create): a value equal to the old one at the same position is not
    checked (ratcheting, as apiserver's ``CorrelatedObject``: list-map items are matched by their
    keys; set and atomic list items not at all, only the whole list; a stored null is a value)."""
    out: list[tuple[str, str]] = []
    _types(v, t, _UNSET if old is None else old, path, out)
    return out


_UNSET: Any = object()

#: the formats the CRD validator keeps, by schema type (apiextensions strips every other one, with
#: an "unrecognized format" warning when the CRD is written); dashes do not count in string formats
_KEPT_FORMATS = {
    "integer": frozenset({"int32", "int64"}),
    "number": frozenset({"float", "double"}),
    "string": frozenset({"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
                         "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
                         "rgbcolor", "byte", "password", "date", "duration", "datetime", "k8sshortname",
                         "k8slongname"}),
}


def validator_format(json_type: str | None, fmt: str) -> str:
    """The format the CRD validator checks for a schema of ``json_type`` written with ``fmt``."""
    if not fmt or json_type is None:
        return ""
    kept = _KEPT_FORMATS.get(json_type)
    if kept is None:
        return ""
    return fmt if (fmt.replace("-", "") if json_type == "string" else fmt) in kept else ""


def _go_schema_info(v: Any) -> tuple[str, str]:
    """kube-openapi ``schemaInfoForType``: the JSON type and format of a decoded value's Go type."""
    if isinstance(v, bool):
        return "boolean", ""
    if isinstance(v, int):
        return ("integer", "int64") if type(held(v)) is int else ("number", "float64")
    if isinstance(v, float):
        return "number", "float64"
    if isinstance(v, str):
        return "string", ""
    if isinstance(v, list):
        return "array", ""
    return "object", ""


def type_problem(want: str | None, fmt: str, v: Any) -> tuple[str, str] | None:
    """kube-openapi ``typeValidator`` on a non-null value for a schema of type ``want`` and
    validator format ``fmt``: None, or the error's value and the type it names."""
    if not want:
        return None  # no type: only a kept format would apply, and formats are kept by type
    got, got_format = _go_schema_info(v)
    types = want.split(",") if "," in want else (want,)
    float_int = got == "number" and "integer" in types and is_json_integer(float(held(v)))
    int_float = got == "integer" and "number" in types
    plain = got in ("string", "array")
    if fmt and not plain and not (got in types or got_format == fmt or float_int or int_float):
        return got_format, fmt
    if fmt and plain and "number" not in types and "integer" not in types:
        return None  # a string or a list passes any formatted non-numeric type
    if not (got in types or float_int or int_float):
        return got, want
    return None


def type_message(field: str, got: str, named: str) -> str:
    """The type validator's cause for a value of Go type ``got`` where ``named`` goes."""
    return f'Invalid value: "{got}": {field} in body must be of type {named}: "{got}"'


def format_message(field: str, fmt: str, v: str) -> str:
    """The format validator's cause for a string ``v`` its format ``fmt`` refuses."""
    q = go_quote(v)
    return f"Invalid value: {q}: {field} in body must be of type {fmt}: {q}"


def _types(v: Any, t: Type, old: Any, path: tuple[str, ...], out: list[tuple[str, str]]) -> None:
    if t is DEDUCED:
        return
    if old is not _UNSET and unchanged(v, old, t):
        return  # ratcheting: an unchanged value (as apiserver compares: typed/ratchet.py) keeps what it was
    want = t.json_type
    if v is None:
        if want and not t.nullable:
            field = ".".join(path)
            out.append((field, type_message(field, "null", want)))
        return
    if want == "string" and type(v) is str:
        if t.format:
            fmt = validator_format(want, t.format)
            if fmt and format_valid(fmt, v) is False:
                field = ".".join(path)
                out.append((field, format_message(field, fmt, v)))
        return  # the common case (no format) decided first
    fmt = validator_format(want, t.format) if t.format else ""
    problem = type_problem(want, fmt, v)
    if problem is not None:
        field = ".".join(path)
        out.append((field, type_message(field, *problem)))
    if (want == "integer" or want == "number") and type(v) in (int, float):
        # (a range is checked for one type only: int-or-string's numbers are not)
        checked = range_error(v, want, fmt, "Checked", ".".join(path))
        if checked:
            out.append(("<nil>", f'Invalid value: "": {checked}'))
    if problem is not None:
        return
    s = side(t, v)
    if s == MAP:
        m = t.map
        if m is None or type(v) is not dict:
            return
        old_map = old if isinstance(old, dict) else {}
        for k, x in v.items():
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is not None:
                _types(x, ct, old_map.get(k, _UNSET), (*path, k), out)
    elif s == LIST:
        lt = t.list
        if lt is None or type(v) is not list:
            return
        # only list-map items correlate with old ones (by their keys); set and atomic list items not
        olds = correlated(v, old, lt.keys) if lt.is_map and isinstance(old, list) else [None] * len(v)
        for i, (item, o) in enumerate(zip(v, olds, strict=True)):
            _types(item, lt.item, _UNSET if o is None else o, _child_path(path, i), out)


def scale_errors(obj: Any, paths: tuple[str, str, str] | None) -> list[tuple[str, str]]:
    """``(field, message)`` for the scale subresource's values (the field is the CRD's path as
    written, ``.spec.replicas``), after the schema's errors: the replicas paths hold an int64
    between 0 and 2**31-1 (or nothing), the label selector path a string (or nothing)."""
    if paths is None:
        return []
    spec_path, status_path, selector_path = paths
    out: list[tuple[str, str]] = []
    for path in (spec_path, status_path):
        value, err = _nested(obj, path, "int64")
        if err:
            out.append((path, f"Invalid value: 0: {err}"))
        elif isinstance(value, int) and value < 0:
            out.append((path, f"Invalid value: {value}: should be a non-negative integer"))
        elif isinstance(value, int) and value > 2**31 - 1:
            out.append((path, f"Invalid value: {value}: should be less than or equal to {2**31 - 1}"))
    if selector_path:
        _, err = _nested(obj, selector_path, "string")
        if err:
            out.append((selector_path, f'Invalid value: "": {err}'))
    return out


def _nested(obj: Any, path: str, want: str) -> tuple[Any, str]:
    """apimachinery ``unstructured.NestedInt64``/``NestedString`` at a ``.a.b`` path: the value
    (None when absent) and the accessor's error text."""
    fields = path.removeprefix(".").split(".")
    val: Any = obj
    for i, name in enumerate(fields):
        if val is None:
            return None, ""
        if type(val) is not dict:
            where = "." + ".".join(fields[: i + 1])
            return None, (f"{where} accessor error: {_go_v(val)} is of the type {_go_type(val)}, "
                          "expected map[string]interface{}")
        if name not in val:
            return None, ""
        val = val[name]
    val = held(val)
    ok = isinstance(val, str) if want == "string" else isinstance(val, int) and not isinstance(val, bool)
    if not ok:
        return None, f".{'.'.join(fields)} accessor error: {_go_v(val)} is of the type {_go_type(val)}, expected {want}"
    return val, ""


def _child_path(path: tuple[str, ...], i: int) -> tuple[str, ...]:
    return (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",)


def duplicate_errors(v: Any, t: Type, path: tuple[str, ...] = (), old: Any = None) -> list[tuple[str, str]]:
    """``(field, message)`` for each repeated item of a set or repeated key of a list-map
    (apiextensions ``ValidateListSetsAndMaps``: the second occurrence of each value is reported;
    a list-map key is the map of the item's key fields). With ``old`` (the object an update
    replaces), parts of ``v`` that are the old object's own (shared, at the same place) are not
    looked at: the caller reports nothing where the old object has repeated items anyway."""
    out: list[tuple[str, str]] = []
    _duplicates(v, t, path, out, _UNSET if old is None else old)
    return out


def _duplicates(v: Any, t: Type, path: tuple[str, ...], out: list[tuple[str, str]], old: Any = _UNSET) -> None:
    if v is None or v is old or t is DEDUCED:
        return
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if type(v) is not dict:
            return
        old_map = old if type(old) is dict else {}
        for k, x in v.items():
            tx = type(x)
            if tx is not dict and tx is not list:
                continue  # a scalar or null holds no list (the call would find nothing)
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is not None:
                _duplicates(x, ct, (*path, k), out, old_map.get(k, _UNSET))
    elif s == LIST:
        lt = t.list
        assert lt is not None
        if type(v) is not list:
            return
        if lt.is_set or lt.is_map:
            seen: dict[str, int] = {}
            for i, item in enumerate(v):
                value: Any = item
                if lt.is_map:
                    item_map = item if isinstance(item, dict) else {}
                    value = {k: item_map[k] for k in lt.keys if k in item_map}
                # Go compares scalars as interface values (an int64 is no float64) and compounds by
                # their JSON
                text = f"{type(value).__name__}:{go_json(value)}"
                seen[text] = seen.get(text, 0) + 1
                if seen[text] == 2:
                    field = ".".join(_child_path(path, i))
                    out.append((field, f"Duplicate value: {go_json(value)}"))
        old_list = old if type(old) is list else []
        for i, item in enumerate(v):
            _duplicates(item, lt.item, _child_path(path, i), out, old_list[i] if i < len(old_list) else _UNSET)


def prune_non_nullable_nulls(v: Any, t: Type, keep: tuple[str, ...] = ()) -> Any:
    """``v`` without the nulls of schema fields (declared properties, or the values of a map with
    a schema for them) that are not nullable and have no default, at any depth; the rest of the
    value is shared. Preserve-unknown-fields regions (no schema) keep their nulls, and so do the
    members of ``v`` named in ``keep``."""
    if t is DEDUCED:
        return v
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None:
        m = t.map
        out: dict[str, Any] = {}
        same = True
        for k, x in v.items():
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is None or ct is DEDUCED or k in keep:
                out[k] = x
            elif x is None:
                has_default = f is not None and f.default is not NO_DEFAULT
                if ct.nullable or has_default:
                    out[k] = x
                else:
                    same = False
            elif type(x) is not dict and type(x) is not list:
                out[k] = x  # a scalar: nothing below it to prune (the call's answer, without it)
            else:
                px = out[k] = prune_non_nullable_nulls(x, ct)
                same = same and px is x
        # nothing pruned: the map itself (shared, as the rest of the value is)
        return v if same else out
    if s == LIST and type(v) is list and t.list is not None:
        return _kept(v, [x if x is None else prune_non_nullable_nulls(x, t.list.item) for x in v])
    return v
