"""RemoveItems(value, set) and the schema-aware set helpers used by apply's prune.

``remove_items`` follows the API server's structured-merge-diff (v6.4): a key or item whose path
is a member of the set is dropped with its subtree; below a node with only children in the set,
recursion; a container that loses its last child becomes null (not ``{}``) — the server then
rejects the object if null is not allowed there (observed on the real server, see
``cur-drop-last-map-key-map-owned-by-update``).
"""

from __future__ import annotations

from typing import Any

from ..base.identitymemo import CHECK
from ..fieldpath.element import FIELD, KEY, Path, PathElement
from ..fieldpath.fieldsv1 import keep_answer, kept_answer
from ..fieldpath.set import FieldSet
from ..schema.types import DEDUCED, Type
from .items import LIST, MAP, ItemError, item_element, key_type, side


def remove_items(v: Any, to_remove: FieldSet, t: Type) -> Any:
    if to_remove.is_empty():
        return v
    return _remove(v, to_remove, t)


def _remove(v: Any, rm: FieldSet, t: Type) -> Any:
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if type(v) is not dict:
            return None
        if not v or m.atomic:
            return None
        out: dict[str, Any] = {}
        members, children = rm.members, rm.children
        for k, x in v.items():
            pe = (FIELD, k)
            if pe in members:
                continue
            sub = children.get(pe)
            if sub is not None:
                x = _remove(x, sub, key_type(m, k))
            out[k] = x
        return out if out else None
    if s == LIST:
        lt = t.list
        assert lt is not None
        if type(v) is not list:
            return None
        if not v or lt.relationship == "atomic":
            return None
        items: list[Any] = []
        members, children = rm.members, rm.children
        for item in v:
            try:
                pe = item_element(lt, item)
            except ItemError:
                items.append(item)
                continue
            if pe in members:
                continue
            sub = children.get(pe)
            if sub is not None:
                item = _remove(item, sub, lt.item)
            items.append(item)
        return items if items else None
    return v


def ensure_named_fields_are_members(s: FieldSet, t: Type | None) -> FieldSet:
    """Add every proper prefix whose last element is a field declared by its parent struct.

    Owning ``spec.template.spec.x`` then also means owning the struct fields ``spec``,
    ``spec.template`` and ``spec.template.spec`` — but not plain-map keys or list items.
    """
    if not s.children:
        return s  # nothing below a member: nothing to add (sets are values, so it is shared)
    members = set(s.members)
    children: dict[PathElement, FieldSet] = {}
    m = t.map if t is not None else None
    lt = t.list if t is not None else None
    for pe, c in s.children.items():
        ct: Type | None = None
        if pe[0] == FIELD and m is not None:
            f = m.fields.get(pe[1])
            if f is not None:
                members.add(pe)
                ct = f.type
            else:
                ct = m.element
        elif pe[0] == KEY and lt is not None:
            ct = lt.item
        children[pe] = ensure_named_fields_are_members(c, ct)
    return FieldSet._node(members, children)


def reconcile_with_schema(s: FieldSet, live: Any, t: Type) -> FieldSet | None:
    """Collapse owned sub-paths of nodes that the current schema makes atomic (None: no change).

    Entries written under an older schema may own pieces of what is now an atomic map or list;
    the server then treats the whole node as owned (SMD ``ReconcileFieldSetWithSchema``).
    Deduced maps are skipped.
    """
    question = ("reconcile_with_schema", id(t))
    hit = kept_answer(s, question)
    known = hit is not None and hit[0] is t
    kept: FieldSet | None = hit[1] if known else None
    if known and not CHECK:
        return kept
    changed = False
    read_value = False  # whether an untyped node made the answer depend on the live value

    # The live value is only needed under types with both a map and a list side (untyped ones), so
    # it is looked up lazily: ``ref`` is the value itself or ``(_LAZY, parent_ref, element)``.
    def walk(node: FieldSet, ref: Any, nt: Type) -> FieldSet:
        # a node with nothing to collapse below it is returned itself (most entries, most of the time)
        nonlocal changed, read_value
        if not node.children:
            return node
        members: set[PathElement] | None = None  # copies, made on the first change
        children: dict[PathElement, FieldSet] = node.children
        m = nt.map
        lt = nt.list
        for pe, c in node.children.items():
            if pe[0] == FIELD:
                if m is None:
                    continue
                f = m.fields.get(pe[1])
                ct = f.type if f is not None else m.element
            else:
                if lt is None:
                    continue
                ct = lt.item
            if ct is None or ct is DEDUCED:
                continue
            child_ref = (_LAZY, ref, pe)
            if ct.map is not None and ct.list is not None:
                read_value = True  # (_atomic_at resolves the value for such a type)
            if _atomic_at(ct, child_ref):
                changed = True
                if members is None:
                    members, children = set(node.members), dict(node.children)
                members.add(pe)
                del children[pe]
                continue
            w = walk(c, child_ref, ct)
            if w is not c:
                if members is None:
                    members, children = set(node.members), dict(node.children)
                children[pe] = w
        return node if members is None else FieldSet._node(members, children)

    out = walk(s, live, t)
    result = out if changed else None
    if known:  # (the developers' check: the kept answer, walked again)
        assert result == kept, "a field set or a schema type changed in place"
        return kept
    if not read_value:
        # the answer depends on the set and the schema alone: the next object's entry with the same
        # FieldsV1 (one decoded set per text) is answered from here. The type is kept with the
        # answer, so that its id is no other type's meanwhile; sets are values nobody changes
        keep_answer(s, question, (t, result))
    return result


_LAZY: Any = object()
_MISSING_VALUE: Any = object()


def _resolve(ref: Any) -> Any:
    if type(ref) is tuple and len(ref) == 3 and ref[0] is _LAZY:
        parent = _resolve(ref[1])
        if parent is _MISSING_VALUE:
            return _MISSING_VALUE
        from ..fieldpath.lookup import MISSING, child_value

        cv = child_value(parent, ref[2])
        return _MISSING_VALUE if cv is MISSING else cv
    return ref


def _atomic_at(t: Type, ref: Any) -> bool:
    """Is the node atomic? Only a type with both a map and a list side needs the value to tell."""
    m, lt = t.map, t.list
    if m is not None and lt is not None:
        v = _resolve(ref)
        s = side(t, None if v is _MISSING_VALUE else v)
        return m.atomic if s == MAP else (lt.relationship == "atomic" if s == LIST else False)
    if m is not None:
        return m.atomic
    if lt is not None:
        return lt.relationship == "atomic"
    return False


def extract_owned(v: Any, owned: FieldSet, t: Type) -> Any:
    """The part of ``v`` that a set owns, with its current values: a manifest that would own it.

    A member with children keeps only its owned children; a member without children keeps its
    whole value when that value is owned as one path (scalar, atomic, null, empty), else the empty
    container (an applier that owns ``labels`` but none of its keys applied ``labels: {}``).
    """
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None and not t.map.atomic:
        m = t.map
        out: dict[str, Any] = {}
        for k, x in v.items():
            pe = (FIELD, k)
            ct = key_type(m, k)
            sub = owned.children.get(pe)
            if sub is not None and not _owned_whole(x, ct):
                out[k] = extract_owned(x, sub, ct)
            elif pe in owned.members or sub is not None:
                out[k] = x if _owned_whole(x, ct) else _empty_like(x)
        return out
    if s == LIST and type(v) is list and t.list is not None and t.list.relationship != "atomic":
        lt = t.list
        items: list[Any] = []
        for item in v:
            try:
                pe = item_element(lt, item)
            except ItemError:
                continue
            sub = owned.children.get(pe)
            if sub is not None and not _owned_whole(item, lt.item):
                items.append(_with_keys(extract_owned(item, sub, lt.item), item, lt.keys))
            elif pe in owned.members:
                items.append(item if _owned_whole(item, lt.item) else _with_keys({}, item, lt.keys))
        return items
    return v


def _owned_whole(v: Any, t: Type) -> bool:
    s = side(t, v)
    if s == MAP:
        assert t.map is not None
        return t.map.atomic or type(v) is not dict or not v
    if s == LIST:
        assert t.list is not None
        return t.list.relationship == "atomic" or type(v) is not list or not v
    return True


def _empty_like(v: Any) -> Any:
    if type(v) is dict:
        return {}
    if type(v) is list:
        return []
    return v


def _with_keys(out: Any, item: Any, keys: tuple[str, ...]) -> Any:
    """An extracted list-map item always carries its key fields, or it could not be applied."""
    if type(out) is dict and type(item) is dict:
        for k in keys:
            if k in item and k not in out:
                out[k] = item[k]
    return out


def extract_items(v: Any, items: FieldSet, t: Type, *, append_key_fields: bool = False) -> Any:
    """SMD ``TypedValue.ExtractItems``: only the items of the set.

    As upstream: an atomic, empty or null container is kept whole; a map key that is a member of
    the set is extracted with the *whole* set again (not its subtree); a container left without
    items is null. ``append_key_fields`` (``WithAppendKeyFields``): for every path of the set that
    the value has, the key fields of each keyed list item on it are extracted too.
    """
    if append_key_fields:
        from .tofieldset import to_field_set

        have = to_field_set(v, t)
        keys: list[Path] = []
        for path in items:
            if not have.has(path):
                continue
            for i, pe in enumerate(path):
                if pe[0] == KEY:
                    keys.extend((*path[: i + 1], (FIELD, name)) for name, _ in pe[1])
        if keys:
            items = items.union(FieldSet(keys))
    return _extract(v, items, t)


def _extract(v: Any, items: FieldSet, t: Type) -> Any:
    s = side(t, v)
    if s == MAP:
        m = t.map
        assert m is not None
        if type(v) is not dict:
            return None
        if not v or m.atomic:
            return v
        out: dict[str, Any] = {}
        for k, x in v.items():
            pe = (FIELD, k)
            if pe in items.members:
                out[k] = _extract(x, items, key_type(m, k))
                continue
            sub = items.children.get(pe)
            if sub is not None and not sub.is_empty():
                out[k] = _extract(x, sub, key_type(m, k))
        return out if out else None
    if s == LIST:
        lt = t.list
        assert lt is not None
        if type(v) is not list:
            return None
        if not v or lt.relationship == "atomic":
            return v
        kept: list[Any] = []
        for item in v:
            try:
                ipe = item_element(lt, item)
            except ItemError:
                continue
            sub = items.children.get(ipe)
            prefix = sub is not None and not sub.is_empty()
            if prefix:
                assert sub is not None
                item = _extract(item, sub, lt.item)
            if ipe in items.members or prefix:
                kept.append(item)
        return kept if kept else None
    return v
