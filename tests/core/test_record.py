"""Records behave as the frozen dataclasses they stand in for (base/record.py)."""

from __future__ import annotations

import pytest

from kubectl_fieldown.base.objects import ObjectRef
from kubectl_fieldown.base.record import Record
from kubectl_fieldown.fieldpath import FieldSet, parse_path
from kubectl_fieldown.ownership.managedfields import ManagedFieldsEntry, ManagerIdentity
from kubectl_fieldown.ownership.tree import OwnerTree


class Point(Record):
    __slots__ = ("_cache", "x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y
        self._cache = None


class Labelled(Record, uncompared=("label",)):
    __slots__ = ("label", "n")

    def __init__(self, n: int, label: str = "") -> None:
        self.n = n
        self.label = label


class Box(Record, mutable=True):
    __slots__ = ("items",)

    def __init__(self, items: list[int]) -> None:
        self.items = items


def test_fields_are_the_init_parameters_in_order() -> None:
    assert Point._fields == ("x", "y")
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"


@pytest.mark.parametrize(("a", "b", "equal"), [
    (Point(1, 2), Point(1, 2), True),
    (Point(1, 2), Point(1, 3), False),
    (Point(1), Point(2), False),
    (Labelled(1, "a"), Labelled(1, "b"), True),
    (Labelled(1, "a"), Labelled(2, "a"), False),
])
def test_equality_and_hash_by_the_compared_fields(a: Record, b: Record, equal: bool) -> None:
    assert (a == b) is equal
    assert (a != b) is not equal
    if equal:
        assert hash(a) == hash(b)


def test_other_classes_are_never_equal() -> None:
    class Other(Record):
        __slots__ = ("x", "y")

        def __init__(self, x: int, y: int = 0) -> None:
            self.x = x
            self.y = y

    assert Point(1, 2) != Other(1, 2)
    assert Point(1, 2) != (1, 2)
    assert Point(1, 2).__eq__((1, 2)) is NotImplemented


def test_a_mutable_record_is_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(Box([1]))
    assert Box([1]) == Box([1])


def test_replace_builds_a_new_record_through_init() -> None:
    p = Point(1, 2)
    p._cache = "x"
    q = p.replace(y=5)
    assert (q.x, q.y, q._cache) == (1, 5, None)  # a cache is not a field: not copied
    assert (p.x, p.y) == (1, 2)
    with pytest.raises(TypeError, match="has no field 'z'"):
        p.replace(z=1)


def test_replace_of_records_with_one_field_and_none() -> None:
    class One(Record):
        __slots__ = ("x",)

        def __init__(self, x: int) -> None:
            self.x = x

    class Empty(Record):
        __slots__ = ()

        def __init__(self) -> None:
            pass

    assert One(1).replace(x=2) == One(2) and One(3).replace().x == 3
    assert Empty().replace() == Empty()
    with pytest.raises(TypeError, match="has no field 'x'"):
        Empty().replace(x=1)


def test_a_field_without_a_slot_is_refused() -> None:
    with pytest.raises(TypeError, match="no slot or no field"):
        class Bad(Record):
            __slots__ = ("x",)

            def __init__(self, x: int, y: int) -> None:
                self.x = x

    with pytest.raises(TypeError, match="no slot or no field"):
        class AlsoBad(Record, uncompared=("nope",)):
            __slots__ = ("x",)

            def __init__(self, x: int) -> None:
                self.x = x


def test_the_tools_records_keep_their_dataclass_semantics() -> None:
    a = ManagedFieldsEntry("m", "Apply", "v1", FieldSet([parse_path(".spec.a")]))
    b = ManagedFieldsEntry("m", "Apply", "v1")
    assert a == b and hash(a) == hash(b)  # entries compare without their field sets
    assert a.with_fields(FieldSet()).fields.is_empty() and not a.fields.is_empty()
    assert {ObjectRef("v1", "ConfigMap", "ns", "x"): 1}[ObjectRef("v1", "ConfigMap", "ns", "x")] == 1
    ids = [ManagerIdentity("b", "Update", "v1"), ManagerIdentity("a", "Update", "v2"),
           ManagerIdentity("a", "Apply", "")]
    assert sorted(ids) == [ids[2], ids[1], ids[0]]
    assert ids[1] < ids[0] and ids[0] > ids[1] and ids[1] <= ids[1] and ids[1] >= ids[1]
    with pytest.raises(TypeError):
        hash(OwnerTree({}, []))
