"""A simulated write shares with the object it was made from every part it leaves as it was.

Defaulting (:func:`with_defaults`) and the custom resource decoder's two prunings make new
containers only where they change something, so that the walks after them (compare, ratcheted
validation, equality, the next write) skip the shared parts by identity. Each is checked against
the in-place or rebuilding way it replaced, on values shaped by a schema (exact types: marshal's
bytes tell 1, 1.0 and True apart), and the input must come out unchanged."""

from __future__ import annotations

import marshal
from typing import Any

from hypothesis import given, settings

from kubectl_fieldown.base.value import copy_json
from kubectl_fieldown.fieldmanager.strategy import with_defaults
from kubectl_fieldown.schema.types import NO_DEFAULT, Type
from kubectl_fieldown.typed.constraints import constraint_errors
from kubectl_fieldown.typed.items import LIST, MAP, key_type, side
from kubectl_fieldown.typed.validate import prune_non_nullable_nulls, prune_undeclared

from .schemas import PORT, WIDGET, struct
from .shaped import shaped


def exact(v: Any) -> bytes:
    return marshal.dumps(v, 2)


def shares_unchanged_parts(before: Any, after: Any) -> bool:
    """Every container of ``after`` equal to the one at the same place of ``before`` is that one."""
    if type(before) is not type(after) or type(before) not in (dict, list):
        return True
    if exact(before) == exact(after):
        return after is before
    if type(before) is dict:
        return all(shares_unchanged_parts(before[k], after[k]) for k in after if k in before)
    return len(before) != len(after) or all(shares_unchanged_parts(b, a) for b, a in zip(before, after, strict=True))


def _defaulted_in_place(obj: Any, t: Type) -> None:
    """Defaulting as the engine did it before (into a copy of the whole object), kept as the oracle."""
    s = side(t, obj)
    if s == MAP and type(obj) is dict and t.map is not None:
        for name, f in t.map.fields.items():
            if name not in obj and f.default is not NO_DEFAULT:
                obj[name] = copy_json(f.default)
        for k, v in obj.items():
            sf = t.map.fields.get(k)
            ct = sf.type if sf is not None else t.map.element
            if ct is not None and isinstance(v, (dict, list)):
                _defaulted_in_place(v, ct)
    elif s == LIST and type(obj) is list and t.list is not None:
        for item in obj:
            if isinstance(item, (dict, list)):
                _defaulted_in_place(item, t.list.item)


# a schema whose defaults hold defaults of their own: defaulting must reach into what it adds
NESTED = struct({"spec": struct({"port": PORT}, defaults={"port": {"containerPort": 80}})})


@settings(max_examples=300)
@given(shaped(WIDGET, 6))
def test_defaults_are_those_set_in_place_and_the_value_is_left_alone(v: Any) -> None:
    for t in (WIDGET, NESTED):
        before = exact(v)
        out = with_defaults(v, t)
        expected = copy_json(v)
        _defaulted_in_place(expected, t)
        assert exact(out) == exact(expected)
        assert exact(v) == before
        assert shares_unchanged_parts(v, out)


def test_a_default_inside_an_added_default_is_set() -> None:
    out = with_defaults({"spec": {}}, NESTED)
    assert out == {"spec": {"port": {"containerPort": 80, "protocol": "TCP"}}}
    unchanged = {"spec": {"port": {"containerPort": 1, "protocol": "UDP"}}}
    assert with_defaults(unchanged, NESTED) is unchanged


def _rebuilt_prune(v: Any, t: Type) -> Any:
    """The decoder's structural pruning as it was written before: every container rebuilt."""
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None and not t.map.atomic:
        m = t.map
        return {k: _rebuilt_prune(x, key_type(m, k)) for k, x in v.items() if k in m.fields or m.element is not None}
    if s == LIST and type(v) is list and t.list is not None:
        return [_rebuilt_prune(x, t.list.item) for x in v]
    return v


def _rebuilt_nulls(v: Any, t: Type, keep: tuple[str, ...] = ()) -> Any:
    if t.is_deduced:
        return v
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None:
        m = t.map
        out: dict[str, Any] = {}
        for k, x in v.items():
            f = m.fields.get(k)
            ct = f.type if f is not None else m.element
            if ct is None or ct.is_deduced or k in keep:
                out[k] = x
            elif x is None:
                if ct.nullable or (f is not None and f.default is not NO_DEFAULT):
                    out[k] = x
            else:
                out[k] = _rebuilt_nulls(x, ct)
        return out
    if s == LIST and type(v) is list and t.list is not None:
        return [x if x is None else _rebuilt_nulls(x, t.list.item) for x in v]
    return v


@settings(max_examples=300)
@given(shaped(WIDGET, 6))
def test_prunings_keep_what_they_do_not_drop_shared(v: Any) -> None:
    if type(v) is not dict:
        return
    before = exact(v)
    m = WIDGET.map
    assert m is not None
    top = {k: (x if k in ("apiVersion", "kind", "metadata") else _rebuilt_prune(x, key_type(m, k)))
           for k, x in v.items() if k in ("apiVersion", "kind", "metadata") or k in m.fields or m.element is not None}
    pruned = prune_undeclared(v, WIDGET)
    assert exact(pruned) == exact(top)
    nulls = prune_non_nullable_nulls(v, WIDGET, keep=("metadata",))
    assert exact(nulls) == exact(_rebuilt_nulls(v, WIDGET, keep=("metadata",)))
    assert exact(v) == before
    assert shares_unchanged_parts(v, pruned) and shares_unchanged_parts(v, nulls)


@settings(max_examples=300)
@given(shaped(WIDGET, 6), shaped(WIDGET, 6))
def test_ratcheting_by_identity_is_ratcheting_by_value(old: Any, other: Any) -> None:
    # a write that keeps some of the stored object's parts as they are: those are the same containers
    if type(old) is not dict or type(other) is not dict:
        return
    new = {**old, **{k: v for i, (k, v) in enumerate(other.items()) if i % 2}}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 2}, "color": {"type": "string", "enum": ["red"]},
        "ports": {"type": "array", "maxItems": 1}}}}}
    assert constraint_errors(new, schema, old) == constraint_errors(copy_json(new), schema, copy_json(old))


UNCONSTRAINED = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "replicas": {"type": "integer"}, "color": {"type": "string", "default": "red"},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "additionalProperties": {"type": "string"}}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}


@settings(max_examples=200)
@given(shaped(WIDGET, 6), shaped(WIDGET, 6))
def test_a_schema_without_a_constraint_keyword_finds_nothing_in_any_value(v: Any, old: Any) -> None:
    # what lets constraint_errors skip the walk for such a schema: the walk finds nothing either
    from kubectl_fieldown.typed.constraints import _node

    assert constraint_errors(v, UNCONSTRAINED, old) == []
    assert _node(v, UNCONSTRAINED, "", old, root=True) == []


def test_a_keyword_anywhere_in_the_schema_is_checked() -> None:
    nested = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string",
                                                                                        "maxLength": 2}}}}}}}}
    errs = constraint_errors({"spec": {"ports": [{"name": "long"}]}}, nested)
    assert [e.field for e in errs] == ["spec.ports[0].name"]


def test_a_schema_that_holds_itself_is_read_to_its_end() -> None:
    # YAML aliases can make a schema hold one of its parts in two places, or itself
    looped: dict[str, Any] = {"type": "object", "properties": {}}
    looped["properties"]["again"] = looped
    assert constraint_errors({"again": {"again": {}}}, looped) == []
    looped["properties"]["size"] = {"type": "integer", "minimum": 3}
    assert [e.field for e in constraint_errors({"size": 1}, {**looped})] == ["size"]
