"""``leaf_path`` decides one path as ``to_field_set(value).leaves()`` would, walking only that path:
for every path of the value's set, of another value's set and every prefix of them, both agree, and
a path found is spelled with the value's own elements."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from kubectl_fieldown.fieldpath import FieldSet, parse_path
from kubectl_fieldown.fieldpath.element import Path
from kubectl_fieldown.typed.tofieldset import UNKEYED, leaf_path, to_field_set

from .schemas import WIDGET
from .shaped import shaped


def _leaves(s: FieldSet) -> dict[Path, str]:
    return {p: repr(p) for p in s.leaves()}


def _candidates(*sets: FieldSet) -> set[Path]:
    out: set[Path] = set()
    for s in sets:
        for p in s:
            out.update(p[:i] for i in range(len(p) + 1))
    return out


@given(shaped(WIDGET, 6), shaped(WIDGET, 6))
def test_agrees_with_the_leaves_of_the_whole_set(value: Any, other: Any) -> None:
    mine = to_field_set(value, WIDGET)
    leaves = _leaves(mine)
    for p in _candidates(mine, to_field_set(other, WIDGET)) | {(UNKEYED,)}:
        found = leaf_path(value, WIDGET, p)
        if p in leaves:
            assert found is not None, p
            assert repr(found) == leaves[p]  # the value's own elements (1 stays 1, 1.0 stays 1.0)
        else:
            assert found is None, p


def test_table() -> None:
    value = {
        "metadata": {"labels": {"a": "1"}, "annotations": {}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "1"}},
            "config": {"deep": {"x": 1}},
            "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80.0}]},
                           {"name": "d"}, {"name": "d"}],
            "finalizers": [],
        },
    }
    cases = {
        ".spec.replicas": True,
        ".spec.selector": True,  # atomic: one leaf
        ".spec.selector.matchLabels": False,
        ".metadata.labels": False,  # walked: its keys are the leaves
        ".metadata.labels.a": True,
        ".metadata.annotations": True,  # {} is a leaf
        ".spec.config.deep": False,  # an undeclared key with fields below is a member, not a leaf
        ".spec.config.deep.x": True,
        '.spec.containers[name="c"]': False,
        '.spec.containers[name="c"].image': True,
        '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]': False,
        '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort': True,
        '.spec.containers[name="d"]': True,  # duplicated: one opaque member
        '.spec.containers[name="d"].name': False,
        '.spec.containers[name="e"]': False,
        ".spec.finalizers": False,  # an empty granular list sets nothing
        ".spec.color": False,
        ".status": False,
    }
    leaves = to_field_set(value, WIDGET).leaves()
    for text, expected in cases.items():
        p = parse_path(text)
        assert (leaf_path(value, WIDGET, p) is not None) is expected, text
        assert leaves.has(p) is expected, text
    # the item's key as the value holds it (80.0), not as the path was written (80)
    port = leaf_path(value, WIDGET, parse_path('.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]'
                                               '.containerPort'))
    assert port is not None and repr(port[-2]) == "(1, (('containerPort', (0, 80.0)), ('protocol', (1, 'TCP'))))"
