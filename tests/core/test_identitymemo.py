"""base/identitymemo.py: what is remembered by identity inside a block, and the check the tests run with."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.base import identitymemo
from kubectl_fieldown.base.identitymemo import IdentityMemo
from kubectl_fieldown.schema.types import DEDUCED
from kubectl_fieldown.typed.tofieldset import to_field_set


def _widget() -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"color": "blue", "labels": {"a": "x"}}}


def test_the_test_run_checks_every_remembered_result() -> None:
    assert identitymemo.CHECK


def test_inside_a_block_the_set_of_a_value_seen_before_is_the_same_set() -> None:
    obj = _widget()
    root = DEDUCED
    with IdentityMemo():
        first = to_field_set(obj, root)
        assert to_field_set(obj, root) is first
        assert to_field_set(dict(obj), root) is not first  # another dict: computed
        with IdentityMemo():  # nested: the same memory
            assert to_field_set(obj, root) is first
    # outside a block every call computes: a caller may change its dict in place meanwhile
    obj["spec"]["size"] = 3
    assert to_field_set(obj, root) != first


def test_a_value_changed_in_place_inside_a_block_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identitymemo, "CHECK", True)
    obj = _widget()
    root = DEDUCED
    with IdentityMemo():
        to_field_set(obj, root)
        obj["spec"]["size"] = 3  # what the block promises never happens
        with pytest.raises(AssertionError, match="changed in place"):
            to_field_set(obj, root)
