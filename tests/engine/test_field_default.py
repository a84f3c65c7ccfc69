"""What the server's defaulting puts back where a field is absent (:func:`field_default`), and whether a
write's result holds it (:func:`comes_back_defaulted`): a field an apply prunes and the schema defaults
is set again in the same write, so no apply removes it (docs/ownership-model.md, "Defaulted fields").

The oracle is the engine's defaulting itself: the field removed from the value, the value defaulted
(:func:`with_defaults`, which simulate_apply and simulate_update run on every write), and what lands
at the path must be :func:`field_default`'s answer."""

from __future__ import annotations

import dataclasses
import marshal
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings

from kubectl_fieldown.base.value import copy_json
from kubectl_fieldown.fieldmanager import ResourceRules, comes_back_defaulted
from kubectl_fieldown.fieldmanager.strategy import field_default, with_defaults
from kubectl_fieldown.fieldpath import FIELD, KEY, FieldSet, key_fields, path_from_fields
from kubectl_fieldown.fieldpath.lookup import MISSING, value_at
from kubectl_fieldown.schema.types import NO_DEFAULT, GroupVersionKind, KindSchema, Type
from kubectl_fieldown.typed.tofieldset import to_field_set

from .schemas import PORT, STRING, WIDGET, struct
from .shaped import shaped

NESTED = struct({"spec": struct({"port": PORT, "mode": STRING}, defaults={"port": {"containerPort": 80},
                                                                        "mode": "auto"})})
RULES = ResourceRules.for_kind(KindSchema(GroupVersionKind("example.com", "v1", "Nested"), NESTED, "test", True),
                               False)


def _exact(v: Any) -> bytes:
    return marshal.dumps(v, 2)


def _removable(p: tuple[Any, ...]) -> bool:
    """A map's field, not a list-map item's key field (without it the item is another item)."""
    if not p or p[-1][0] != FIELD:
        return False
    return not (len(p) >= 2 and p[-2][0] == KEY and p[-1][1] in key_fields(p[-2]))


def _every_node(fs: FieldSet, prefix: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every path of the set's trie: its members and the fields with members below them (a map that
    holds fields is no member of the set, but it is a field defaulting may put back whole)."""
    for pe in fs.members.union(fs.children):
        yield (*prefix, pe)
        c = fs.children.get(pe)
        if c is not None:
            yield from _every_node(c, (*prefix, pe))


@settings(max_examples=300)
@given(shaped(WIDGET, 6), shaped(NESTED, 4))
def test_what_defaulting_puts_where_a_field_was_is_the_fields_default(widget: Any, nested: Any) -> None:
    for v, t in ((widget, WIDGET), (nested, NESTED)):
        try:
            paths = list(_every_node(to_field_set(v, t), ()))
        except ValueError:
            continue  # a value the server refuses (duplicated keys): no write result holds it
        for p in paths:
            if not _removable(p):
                continue
            doc = copy_json(v)
            parent = value_at(doc, p[:-1]) if len(p) > 1 else doc
            if type(parent) is not dict or p[-1][1] not in parent:
                continue
            del parent[p[-1][1]]
            back = value_at(with_defaults(doc, t), p)
            default = field_default(t, p)
            if default is NO_DEFAULT:
                assert back is MISSING, (p, back)
            else:
                assert _exact(back) == _exact(default), (p, back, default)


SPEC = path_from_fields("spec")


@pytest.mark.parametrize(("obj", "path", "expected"), [
    ({"spec": {"mode": "auto"}}, (*SPEC, (FIELD, "mode")), True),
    ({"spec": {"mode": "manual"}}, (*SPEC, (FIELD, "mode")), False),  # a value someone chose
    ({"spec": {}}, (*SPEC, (FIELD, "mode")), False),  # absent: nothing comes back to speak of
    # a default that holds a default of its own: the whole of it, as defaulting sets it
    ({"spec": {"port": {"containerPort": 80, "protocol": "TCP"}}}, (*SPEC, (FIELD, "port")), True),
    ({"spec": {"port": {"containerPort": 80}}}, (*SPEC, (FIELD, "port")), False),
    ({"spec": {"port": {"containerPort": 81, "protocol": "TCP"}}}, (*SPEC, (FIELD, "port", )), False),
    ({"spec": {"port": {"containerPort": 81, "protocol": "TCP"}}}, (*SPEC, (FIELD, "port"), (FIELD, "protocol")),
     True),
    ({"spec": {"port": {"containerPort": 80}}}, (*SPEC, (FIELD, "port"), (FIELD, "containerPort")), False),
    ({"spec": {"other": "x"}}, (*SPEC, (FIELD, "other")), False),  # undeclared: no schema, no default
])
def test_a_result_holds_what_defaulting_gives_back(obj: dict[str, Any], path: tuple[Any, ...],
                                                    expected: bool) -> None:
    assert comes_back_defaulted(obj, path, RULES) is expected


def test_without_the_servers_defaulting_nothing_comes_back() -> None:
    # structured-merge-diff alone (its own test suites): defaults only complete a list item's key
    smd = dataclasses.replace(RULES, defaults_objects=False)
    assert not comes_back_defaulted({"spec": {"mode": "auto"}}, (*SPEC, (FIELD, "mode")), smd)


def test_only_a_maps_declared_field_has_a_default() -> None:
    t: Type = NESTED
    assert field_default(t, ()) is NO_DEFAULT
    assert field_default(t, (*SPEC, (FIELD, "port"), (FIELD, "containerPort"))) is NO_DEFAULT
    assert field_default(t, (*SPEC, (FIELD, "mode"))) == "auto"
