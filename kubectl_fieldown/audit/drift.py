"""Drift: where the last-applied annotation and the live object disagree (pure).

Only what the annotation sets is compared, so fields the server defaulted or other writers added
never count; see :func:`last_applied_drift` for the rules (docs/audit.md, *Drift*).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..base.record import Record
from ..base.value import values_equal
from ..fieldpath import FIELD, Path, path_string
from ..fieldpath.element import field as field_pe
from ..fieldpath.element import index as index_pe
from ..fieldpath.element import key as key_pe

if TYPE_CHECKING:
    from decimal import Decimal

__all__ = ["MISSING", "Drift", "last_applied_drift"]

MISSING: Any = object()
_MISSING = MISSING


class Drift(Record):
    __slots__ = ("last_applied", "live", "path")
    path: Final[str]
    last_applied: Final[Any]
    live: Final[Any]

    def __init__(self, path: str, last_applied: Any, live: Any) -> None:
        self.path = path
        self.last_applied = last_applied
        self.live = live


def last_applied_drift(la: Mapping[str, Any], live: Mapping[str, Any], *, secret: bool = False) -> list[Drift]:
    """Fields whose value in the last-applied annotation differs from the live object.

    Only what the annotation sets is compared, so fields the server defaulted (or other writers
    added) never count. ``null`` in the annotation means "not set" and never counts; an empty map
    or list counts only when the live object has a non-container value there. Maps compare key by
    key. A list whose items are all objects with a ``name`` (containers, env, volumes, ports with
    names...) is matched item by item on ``name``: a live item the annotation lacks was added by
    someone else and is not drift, an annotation item missing from the live list is. Any other list
    is compared position by position and must have the same length. Numbers compare by value
    (``1 == 1.0``) and quantities by amount (``cpu: 1`` and ``"1000m"``). ``metadata`` is compared
    for labels and annotations only, ``status`` never. A Secret's ``stringData`` is compared with
    the decoded ``data``."""
    out: list[Drift] = []
    for k, v in la.items():
        if k in ("apiVersion", "kind", "status") or v is None:
            continue
        if k == "metadata":
            md_live = live.get("metadata")
            md_live = md_live if type(md_live) is dict else {}
            if type(v) is dict:
                for sub in ("labels", "annotations"):
                    if type(v.get(sub)) is dict:
                        _walk(v[sub], md_live.get(sub, _MISSING), (field_pe("metadata"), field_pe(sub)), out)
            continue
        if secret and k == "stringData" and isinstance(v, Mapping):
            data = live.get("data")
            data = data if isinstance(data, Mapping) else {}
            for name, text in v.items():
                if text is None:
                    continue
                decoded = _b64(data.get(name))
                if decoded != text:
                    out.append(Drift(path_string((field_pe("stringData"), field_pe(name))), _MISSING, _MISSING))
            continue
        _walk(v, live.get(k, _MISSING), (field_pe(k),), out)
    return out


def _b64(v: Any) -> str | None:
    if not isinstance(v, str):
        return None
    try:
        return base64.b64decode(v, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _walk(la: Any, live: Any, path: Path, out: list[Drift]) -> None:
    if la is None:
        return
    if type(la) is dict:
        if live is _MISSING:
            if any(v is not None for v in la.values()):
                out.append(Drift(path_string(path), la, live))  # the whole map or item is gone
            return
        if type(live) is not dict:
            out.append(Drift(path_string(path), la, live))
            return
        for k, v in la.items():
            lv = live.get(k, _MISSING)
            tv = type(v)
            # most leaves are equal strings or numbers of the same type: no call for them (bool is
            # its own type here, so True never passes for 1)
            if (tv is str or tv is int or tv is bool) and type(lv) is tv and v == lv:
                continue
            if tv is list and type(lv) is list and _same_scalars(v, lv):
                continue
            _walk(v, lv, (*path, (FIELD, k)), out)
        return
    if type(la) is list:
        if live is _MISSING:
            if la:
                out.append(Drift(path_string(path), la, live))
            return
        if type(live) is not list:
            out.append(Drift(path_string(path), la, live))
            return
        if la and all(type(i) is dict and type(i.get("name")) is str for i in la) \
                and all(type(i) is dict for i in live):
            by_name = {i.get("name"): i for i in live}
            for item in la:
                lv = by_name.get(item["name"], _MISSING)
                _walk(item, lv, (*path, key_pe({"name": item["name"]})), out)
            return
        if len(la) != len(live):
            out.append(Drift(path_string(path), la, live))
            return
        for i, (a, b) in enumerate(zip(la, live, strict=True)):
            _walk(a, b, (*path, index_pe(i)), out)
        return
    if live is _MISSING or not (values_equal(la, live) or _same_quantity(la, live)):
        out.append(Drift(path_string(path), la, live))


def _same_scalars(a: list[Any], b: list[Any]) -> bool:
    """Equal lists of strings and numbers (args, finalizers, tags), each item of the same type."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        tx = type(x)
        if not (tx is str or tx is int or tx is float) or type(y) is not tx or x != y:
            return False
    return True


_QUANTITY = r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
@functools.cache
def _quantity_regex() -> re.Pattern[str]:
    return re.compile(_QUANTITY)


@functools.cache
def _suffixes() -> dict[str, Decimal]:
    # decimal loads with the first quantity compared as text, not with every audit (2 ms of start-up)
    from decimal import Decimal

    return {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
            "P": Decimal(10) ** 15, "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20,
            "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}


def _quantity(v: Any) -> Decimal | None:
    from decimal import Decimal, InvalidOperation

    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v))
    if not isinstance(v, str):
        return None
    m = _quantity_regex().match(v)
    if m is None:
        return None
    try:
        number = Decimal(m.group(1))
        suffix = m.group(2) or ""
        if suffix[:1] in ("e", "E"):
            return number * Decimal(10) ** int(suffix[1:])
        return number * _suffixes()[suffix]
    except (InvalidOperation, ValueError, KeyError):
        return None


def _same_quantity(a: Any, b: Any) -> bool:
    """``cpu: 1`` in a manifest is stored as ``"1"``, ``"1000m"`` as ``"1"``: equal amounts are not drift.
    At least one side must be a string, so that two different numbers stay different."""
    if not (isinstance(a, str) or isinstance(b, str)):
        return False
    qa, qb = _quantity(a), _quantity(b)
    return qa is not None and qb is not None and qa == qb
