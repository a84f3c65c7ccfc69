"""fieldpath.lookup: Lookup finds exactly what value_at finds, with each keyed list indexed once."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubectl_fieldown.fieldpath import field, index, key, set_value
from kubectl_fieldown.fieldpath.lookup import MISSING, Lookup, value_at

# items that make a list-map lookup hard: duplicates, 1 vs 1.0 vs true, missing or null key fields,
# items that are not maps
_ITEMS: list[Any] = [
    {"name": "a", "v": 1}, {"name": "a", "v": 2}, {"name": "b"}, {"name": 1}, {"name": 1.0, "x": 0},
    {"name": True}, {"name": None}, {"v": 3}, {}, "a", 1, 1.0, True, None, [1], {"name": "a", "port": 80},
    {"name": "a", "port": 80.0, "d": 1}, {"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
]
_ELEMENTS = [
    key({"name": "a"}), key({"name": "b"}), key({"name": 1}), key({"name": True}), key({"name": None}),
    key({"name": "z"}), key({}), key({"name": "a", "port": 80}), key({"port": 80, "protocol": "TCP"}),
    set_value("a"), set_value(1), set_value(True), set_value(None), set_value([1]), set_value({"v": 3}),
    index(0), index(17), index(99), field("name"),
]


@given(st.lists(st.sampled_from(_ITEMS), min_size=0, max_size=40),
       st.lists(st.tuples(st.sampled_from(_ELEMENTS), st.sampled_from([None, *_ELEMENTS])), max_size=20))
def test_lookup_finds_what_value_at_finds(items: list[Any], paths: list[tuple[Any, Any]]) -> None:
    obj = {"spec": {"items": items, "copy": list(items)}}
    look = Lookup(obj)
    for first, second in paths:
        for where in ("items", "copy"):
            path = (field("spec"), field(where), first) + ((second,) if second is not None else ())
            expected = value_at(obj, path)
            got = look.at(path)
            assert got is expected or ((got is MISSING) == (expected is MISSING) and got == expected)


def test_the_first_of_duplicate_items_is_found() -> None:
    items = [{"name": f"n{i}"} for i in range(20)] + [{"name": "n3", "second": True}]
    obj = {"items": items}
    assert Lookup(obj).at((field("items"), key({"name": "n3"}))) is items[3]
    assert Lookup(obj).at((field("items"), key({"name": "n99"}))) is MISSING


# --- linear, counted (not timed): the work of looking up every item of a list of N items ----------


def _deployment(n: int, changed: bool) -> dict[str, Any]:
    ports = [{"containerPort": 1000 + k, "protocol": "TCP", "name": f"p{k}{'x' if changed else ''}"}
             for k in range(n)]
    env = [{"name": f"V{k}", "value": f"v{k}{'x' if changed else ''}"} for k in range(n)]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "big"}}, "template": {
                "metadata": {"labels": {"app": "big"}},
                "spec": {"containers": [{"name": "main", "image": "nginx", "ports": ports, "env": env}]}}}}


def _item_visits(monkeypatch: Any, n: int) -> int:
    """How many list items the lookups look at to build the owner tree of an object with two keyed lists
    of n items, and to predict a conflicting apply of all of them (issue 18 item 13: it was n²)."""
    from kubectl_fieldown.conflicts import applyplan
    from kubectl_fieldown.fieldmanager import ResourceRules, simulate_apply
    from kubectl_fieldown.fieldpath import lookup
    from kubectl_fieldown.ownership.tree import build_owner_tree
    from kubectl_fieldown.schema.builtin import builtin_kinds
    from kubectl_fieldown.schema.types import GroupVersionKind

    ks = builtin_kinds().lookup(GroupVersionKind("apps", "v1", "Deployment"))
    assert ks is not None
    rules = ResourceRules.for_kind(ks, True, None, custom_resource=False)
    live = simulate_apply(None, _deployment(n, False), "argocd-controller", rules, now="2026-11-22T01:00:00Z").object
    visits = 0
    real = lookup.value_key

    def counting(v: Any) -> Any:
        nonlocal visits
        visits += 1
        return real(v)

    monkeypatch.setattr(lookup, "value_key", counting)
    tree = build_owner_tree(live)
    assert len(tree.fields) > 4 * n
    plan = applyplan.plan_apply(live, _deployment(n, True), "flux", rules, now="2026-11-22T02:00:00Z")
    assert len(plan.conflicts) == 2 * n
    monkeypatch.undo()
    return visits


def test_looking_up_every_item_of_a_keyed_list_is_linear(monkeypatch: Any) -> None:
    small, large = _item_visits(monkeypatch, 100), _item_visits(monkeypatch, 400)
    # linear: 4 times the items, about 4 times the visits (quadratic would be 16 times)
    assert large < 6 * small, (small, large)
