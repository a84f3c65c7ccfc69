"""Checks the API server runs on values, with its error texts.

* :func:`typed_errors` — what SMD's ``ObjectToTyped`` refuses in an applied configuration
  (duplicate list keys, unidentifiable list items): the server answers 500
  ``failed to create typed patch object (...): <path>: <error>``.
* :func:`null_errors` — explicit nulls where the schema allows none: the CRD validator answers 422
  ``<path> in body must be of type <type>: "null"``.
"""

from __future__ import annotations

from typing import Any

from ..fieldpath.element import FIELD, Path
from ..fieldpath.pathstring import path_string
from ..schema.types import Type
from .items import LIST, MAP, ItemError, item_element, key_type, side


def typed_errors(v: Any, t: Type, path: Path = ()) -> list[str]:
    out: list[str] = []
    _typed(v, t, path, out)
    return out


def _typed(v: Any, t: Type, path: Path, out: list[str]) -> None:
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if type(v) is not dict or m.atomic:
            return
        for k, x in v.items():
            _typed(x, key_type(m, k), (*path, (FIELD, k)), out)
    elif s == LIST:
        lt = t.list
        assert lt is not None
        if type(v) is not list or lt.relationship == "atomic":
            return
        seen = set()
        for i, item in enumerate(v):
            try:
                pe = item_element(lt, item)
            except ItemError as e:
                out.append(f"{path_string(path)}: element {i}: {e}")
                continue
            if pe in seen:
                from ..fieldpath.pathstring import element_string

                out.append(f"{path_string(path)}: duplicate entries for key {element_string(pe)[0:]}")
                continue
            seen.add(pe)
            _typed(item, lt.item, (*path, pe), out)


def null_errors(v: Any, t: Type, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``(field, message)`` for each null the schema does not allow, in the CRD validator's words."""
    out: list[tuple[str, str]] = []
    _nulls(v, t, path, out)
    return out


def _nulls(v: Any, t: Type, path: tuple[str, ...], out: list[tuple[str, str]]) -> None:
    if v is None:
        json_type = t.json_type
        if json_type and not t.nullable:
            field = ".".join(path)
            out.append((field, f'Invalid value: "null": {field} in body must be of type {json_type}: "null"'))
        return
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if type(v) is not dict:
            return
        for k, x in v.items():
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is None:
                continue
            _nulls(x, ct, (*path, k), out)
    elif s == LIST:
        lt = t.list
        assert lt is not None
        if type(v) is not list:
            return
        for i, item in enumerate(v):
            _nulls(item, lt.item, (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",), out)
