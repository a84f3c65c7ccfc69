"""Path elements: one step from a node of an object to one of its children.

A path element is a plain tuple ``(kind, payload)`` so that Python's built-in tuple hashing and
ordering do the work in the hot loops of set algebra and merging:

========  ======================================  ============================
kind      payload                                 FieldsV1 form
========  ======================================  ============================
FIELD 0   the field name                          ``f:name``
KEY   1   ``((name, value_key), ...)`` by name    ``k:{"name":"nginx"}``
VALUE 2   ``value_key`` of the set item           ``v:"example.com/x"``
INDEX 3   the list index                          ``i:0``
========  ======================================  ============================

Tuple order then *is* the server's element order: every Field < every Key < every Value < every
Index, names bytewise (Python compares code points, which orders UTF-8 bytes the same way), keys
pairwise by name then value, values by :func:`kubectl_fieldown.base.value.value_key`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..base.value import key_value, value_key

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    PathElement: TypeAlias = tuple[Any, ...]
    """``(kind, payload)``; build with :func:`field`, :func:`key`, :func:`set_value`, :func:`index`."""

    Path: TypeAlias = tuple[PathElement, ...]
    """A path from the root of an object; the empty tuple is the root itself."""
else:  # at run time, where typing's Any is not imported, only for aliases built from them
    PathElement = Path = tuple

FIELD = 0
KEY = 1
VALUE = 2
INDEX = 3

ROOT: Path = ()


def field(name: str) -> PathElement:
    return (FIELD, name)


def key(fields: Mapping[str, Any]) -> PathElement:
    """The element of an associative-list item identified by its key fields."""
    return (KEY, tuple(sorted((n, value_key(v)) for n, v in fields.items())))


def set_value(v: Any) -> PathElement:
    """The element of a set-list item (``x-kubernetes-list-type: set``)."""
    return (VALUE, value_key(v))


def index(i: int) -> PathElement:
    return (INDEX, i)


def key_fields(pe: PathElement) -> dict[str, Any]:
    """The key fields of a KEY element as plain values."""
    return {n: key_value(k) for n, k in pe[1]}


def element_value(pe: PathElement) -> Any:
    """The plain value of a VALUE element."""
    return key_value(pe[1])


#: the value types whose text follows from the value alone: equal values of them are spelled alike
_SPELLED_BY_VALUE = (str, int, bool)


def keys_spelled_by_value(payload: Any) -> bool:
    """A KEY element's values are strings, integers, booleans or nulls, so equal elements are spelled
    alike and their text may be kept per element (a float can equal an integer and be spelled
    otherwise: ``1e+21``, ``1e+06``)."""
    return all(len(v) == 1 or type(v[1]) in _SPELLED_BY_VALUE for _, v in payload)  # (null,)


def value_spelled_by_value(payload: Any) -> bool:
    """:func:`keys_spelled_by_value` for a VALUE element's one value."""
    return len(payload) == 1 or type(payload[1]) in _SPELLED_BY_VALUE


def path_from_fields(*names: str) -> Path:
    """``path_from_fields("spec", "replicas")`` is ``.spec.replicas``."""
    return tuple((FIELD, n) for n in names)
