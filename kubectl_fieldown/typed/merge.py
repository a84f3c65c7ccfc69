"""Merge(live, config): the object an apply would produce before pruning (SMD ``typed/merge.go``).

Scalars take the config's value whenever the config has the key (even null); atomic containers
and containers empty or null on both sides are replaced whole; granular maps merge key by key;
associative lists merge item by item, in the order SMD produces (see :func:`_merge_list`).
"""

from __future__ import annotations

from typing import Any, cast

from ..fieldpath.element import FIELD, PathElement
from ..schema.types import ListType, MapType, Type
from .compare import Comparison, Walker
from .items import ABSENT as _ABSENT
from .items import LIST, MAP, KnownIndexes, index_items, indexed_items, key_type, same_scalar, side

_SCALARS = frozenset((str, int, float, bool))


def merge(live: Any, config: Any, t: Type) -> Any:
    """The merged value; ``live``/``config`` may be absent only below the root."""
    return _merge(live, config, t)


def merge_compared(live: Any, config: Any, t: Type, known: KnownIndexes | None = None) -> tuple[Any, Comparison]:
    """The merged value and ``compare(live, merged, t)``, found on the way: only where the
    configuration has a key or an item can the merge change anything, and where it changes a map or
    a list item by item it records what it changed there, as compare would (anywhere else, a
    changed node is handed to compare's own walk). Compare would walk every key of every map on
    the way to a change and index each list of items twice. ``known``: the configuration's lists
    indexed already (by :func:`~.validate.typed_errors`)."""
    w = Walker(known)
    if type(live) is dict and type(config) is dict and t.map is not None:
        out = _merge_map(live, config, t.map, w, None, None)
    else:
        out = _merge(live, config, t)
        w.node(None, None, live, out, t)
    return out, w.comparison()


def _merge(lhs: Any, rhs: Any, t: Type) -> Any:
    if rhs is _ABSENT:
        return lhs
    s = side(t, rhs)
    if lhs is not _ABSENT and not _compatible(lhs, s):
        # kinds differ (untyped positions): the config's kind decides and the live value is ignored
        lhs = _ABSENT
    if s == MAP:
        m = t.map
        assert m is not None
        return _merge_map(lhs, rhs, m)
    if s == LIST:
        lt = t.list
        assert lt is not None
        return _merge_list(lhs, rhs, lt)
    if same_scalar(lhs, rhs):
        # the live scalar, equal and of one type: its container can then be shared as unchanged
        return lhs
    return rhs


def _compatible(v: Any, s: int) -> bool:
    if s == MAP:
        return type(v) is dict or v is None
    if s == LIST:
        return type(v) is list or v is None
    return True


def _merge_map(lhs: Any, rhs: Any, m: MapType, w: Walker | None = None, frame: Any = None,
               here: PathElement | None = None) -> Any:
    """With ``w``: ``lhs`` and ``rhs`` are both maps, the node ``here`` (None: the root) in compare's
    ``frame``, and the changes at and below it are recorded in ``w``."""
    lm = lhs if type(lhs) is dict else None
    rm = rhs if type(rhs) is dict else None
    if m.atomic or (not lm and not rm):
        if w is not None and lhs is not rhs:
            w.leaf(frame, here, lhs, rhs)
        return rhs
    if not rm:
        # config null or {} on a non-empty granular map keeps the live content (the live map itself)
        return lm
    if not lm:
        lm = {}
    # Only the configuration's keys can change anything: the live map's other keys are copied whole
    # (in C) once some key changed, and a changed key keeps its place while a new one goes last, in
    # the configuration's order — the order a key-by-key copy of the live map then of the new keys
    # would give.
    changed: dict[str, Any] | None = None
    get = lm.get
    inner = (frame, here) if here is not None else None  # compare's frame of this map's keys
    for k, rv in rm.items():
        lv = get(k, _ABSENT)
        tl = type(lv)
        if tl is type(rv) and (tl is str or tl is int or tl is bool) and lv == rv:  # same_scalar, inline
            # _merge's answer for the same scalar on both sides (whatever the type: see
            # test_an_unchanged_scalar_merges_to_the_live_one), without its walk
            continue
        kt = key_type(m, k)
        trv = type(rv)
        # a dict (list) on both sides under a type with a map (list) side: _merge's own choice,
        # without the call (and :func:`_merge_item`'s, with ``w``)
        if trv is dict and type(lv) is dict and kt.map is not None:
            v = _merge_map(lv, rv, kt.map) if w is None else _merge_map(lv, rv, kt.map, w, inner, (FIELD, k))
        elif trv is list and type(lv) is list and kt.list is not None:
            v = _merge_list(lv, rv, kt.list) if w is None else _merge_list(lv, rv, kt.list, w, inner, (FIELD, k))
        elif trv in _SCALARS and kt.scalar is not None:
            # a scalar under a type with a scalar side: _merge's answer is the configuration's value,
            # and where the live value is a scalar too (or absent), compare's node is a leaf
            v = rv
            if w is not None:
                if lv is _ABSENT or type(lv) in _SCALARS:
                    w.leaf(inner, (FIELD, k), lv, rv)
                else:
                    w.node(inner, (FIELD, k), lv, rv, kt)
        else:
            v = _merge(lv, rv, kt)
            if w is not None and v is not lv:
                w.node(inner, (FIELD, k), lv, v, kt)
        if v is lv:
            continue
        if changed is None:
            changed = {}
        changed[k] = v
    if changed is None:
        # nothing changed: the live map itself, so that compare and equality need not walk it (a
        # null or absent live map always changes: every configuration key is new to it)
        return lhs
    out = dict(lm)
    out.update(changed)
    return out


def _merge_item(lv: Any, rv: Any, t: Type, w: Walker, frame: Any, here: PathElement) -> Any:
    """One key's or item's merge, its changes recorded in ``w``: a map or list on both sides is
    merged and recorded where it changes; any other node that changes is handed to compare."""
    trv = type(rv)
    if trv is dict and type(lv) is dict and t.map is not None:
        return _merge_map(lv, rv, t.map, w, frame, here)
    if trv is list and type(lv) is list and t.list is not None:
        return _merge_list(lv, rv, t.list, w, frame, here)
    v = _merge(lv, rv, t)
    if v is not lv:
        w.node(frame, here, lv, v, t)
    return v


def _merge_list(lhs: Any, rhs: Any, lt: ListType, w: Walker | None = None, frame: Any = None,
                here: PathElement | None = None) -> Any:
    """With ``w``: as :func:`_merge_map`."""
    ll = lhs if type(lhs) is list else None
    rl = rhs if type(rhs) is list else None
    if lt.relationship == "atomic" or (not ll and not rl):
        if w is not None and lhs is not rhs:
            w.leaf(frame, here, lhs, rhs)
        return rhs
    if not rl:
        return ll  # as for maps: the live list itself
    ll = ll or []
    # SMD's visitListItems: the live side keeps every item, duplicates included (a duplicated element
    # is merged against null, and a live item the configuration does not name is kept as it is);
    # the configuration side keeps the first occurrence of each element
    lpes_all, lfirst, ldups = index_items(lt, ll)
    rpes_all, rfirst, _rdups = indexed_items(lt, rl, w.known) if w is not None else index_items(lt, rl)
    it = lt.item
    # a duplicated live element collapses into one item: compare's walk of the whole list records that
    wi = w if not ldups else None
    inner = (frame, here) if here is not None else None
    if lpes_all == rpes_all and not ldups and not _rdups and None not in lpes_all:
        # one sequence of elements on both sides (a manifest applied again, most of the time): SMD's
        # order (_merged_in_order) pairs the items one by one
        pes = cast("list[PathElement]", lpes_all)  # (no None among them)
        out = [_merge(lv, rv, it) if wi is None else _merge_item(lv, rv, it, wi, inner, pe)
               for pe, lv, rv in zip(pes, ll, rl, strict=True)]
    else:
        out = _merged_in_order(ll, rl, lpes_all, lfirst, ldups, rpes_all, rfirst, it, wi, inner)
    if lhs is ll and len(out) == len(ll) and all(a is b for a, b in zip(out, ll, strict=True)):
        return lhs  # nothing changed (as for maps)
    if w is not None and wi is None:
        w.list_node(frame, here, lhs, out, lt)
    return out


def _merged_in_order(ll: list[Any], rl: list[Any], lpes_all: list[Any], lfirst: dict[Any, int], ldups: set[Any],
                     rpes_all: list[Any], rfirst: dict[Any, int], it: Type, wi: Walker | None, inner: Any) -> list[Any]:
    """The merged items of two associative lists in SMD's order (see :func:`_merge_list`)."""
    lpes = [(pe, i) for i, pe in enumerate(lpes_all) if pe is not None]
    rorder = [pe for i, pe in enumerate(rpes_all) if pe is not None and rfirst[pe] == i]
    shared = [pe for pe in rorder if pe in lfirst]
    si = 0
    next_shared = shared[si] if shared else None
    merged: set[Any] = set()
    out: list[Any] = []
    li = ri = 0
    ln, rn = len(lpes), len(rorder)

    def observed(pe: Any) -> Any:
        return None if pe in ldups else ll[lfirst[pe]]

    while li < ln or ri < rn:
        if li < ln and ri < rn:
            pe = lpes[li][0]
            if pe == rorder[ri]:
                merged.add(pe)
                out.append(_merge(observed(pe), rl[rfirst[pe]], it) if wi is None else
                           _merge_item(observed(pe), rl[rfirst[pe]], it, wi, inner, pe))
                li += 1
                ri += 1
                si += 1
                next_shared = shared[si] if si < len(shared) else None
                continue
            if pe in rfirst and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < ln:
            pe, index = lpes[li]
            if pe not in rfirst:
                out.append(ll[index])
                li += 1
                continue
            if pe in merged:
                li += 1  # already merged with the configuration's item; SMD goes on to the next one
        if ri < rn:
            pe = rorder[ri]
            merged.add(pe)
            lv = observed(pe) if pe in lfirst else _ABSENT
            rv = rl[rfirst[pe]]
            out.append(_merge(lv, rv, it) if wi is None else _merge_item(lv, rv, it, wi, inner, pe))
            ri += 1
            if next_shared is not None and next_shared == pe:
                si += 1
                next_shared = shared[si] if si < len(shared) else None
    return out
