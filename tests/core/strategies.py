"""Hypothesis strategies for path elements, paths and path sets, shared by the core tests.

Each strategy mixes a small pool of interesting constants (escaping, number forms, bool vs 1)
with free draws, which keeps generation cheap enough for ~200 examples per property.

Numbers are kept within +-2**53 (and floats finite) because FieldsV1 stores every number as a
float64: an int beyond that range would come back as a different number, on the server too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kubectl_fieldown.fieldpath import FieldSet, Path, PathElement, field, index, key, set_value

MAX_EXACT_INT = 2**53

NAMES = ["", "a", "b", "spec", "<x>", 'a"b', "a\\b", "é", "😀", "app.kubernetes.io/name", "x\ny", " sp ", "\b"]
STRINGS = ["", "x", "10", 'a<b&"c', "é", "\u2028", "\b", "\x01", "example.com/x", "😀"]
NUMBERS = [0, 1, 2, 10, 80, 443, -1, MAX_EXACT_INT, 0.5, 1.0, 80.0, 1e6, 1e21, 1e-7, -0.0, 1.5e-6]

ints = st.integers(-MAX_EXACT_INT, MAX_EXACT_INT)
floats = st.floats(allow_nan=False, allow_infinity=False)
texts = st.one_of(st.sampled_from(STRINGS), st.text(max_size=6))
names = st.one_of(st.sampled_from(NAMES), st.text(max_size=6))
numbers = st.one_of(st.sampled_from(NUMBERS), ints, floats)
scalars: st.SearchStrategy[Any] = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=5,
)


def paths(elements: st.SearchStrategy[PathElement], max_depth: int = 4) -> st.SearchStrategy[Path]:
    return st.lists(elements, min_size=1, max_size=max_depth).map(tuple)


def field_sets(elements: st.SearchStrategy[PathElement], max_paths: int) -> st.SearchStrategy[FieldSet]:
    return st.lists(paths(elements), max_size=max_paths).map(FieldSet)


# --- wide: anything FieldsV1 can carry ------------------------------------------------------------

ELEMENT_POOL: list[PathElement] = [
    *(field(n) for n in NAMES),
    key({"name": "nginx"}),
    key({"containerPort": 80, "protocol": "TCP"}),
    key({"containerPort": 443.0, "protocol": "TCP"}),
    key({"id": True}),
    key({"id": 1}),
    key({"name": 'a<b&"c', "n": None}),
    key({}),
    *(set_value(v) for v in [*STRINGS, *NUMBERS, True, False, None, [1, "a"], {"b": 1, "a": [True]}]),
    index(0),
    index(1),
    index(10_000),
]

free_elements: st.SearchStrategy[PathElement] = st.one_of(
    st.builds(field, st.text(max_size=6)),
    st.builds(key, st.dictionaries(st.sampled_from(["name", "port", "protocol", "<k>"]), scalars, max_size=3)),
    st.builds(set_value, json_values),
    st.builds(index, st.integers(0, 10_000)),
)
# mostly interesting constants (cheap to draw, and they collide), sometimes anything
wide_elements = st.one_of(st.sampled_from(ELEMENT_POOL), st.sampled_from(ELEMENT_POOL), free_elements)
wide_sets = field_sets(wide_elements, max_paths=8)

# --- small pools: sets that overlap often, for the algebra laws --------------------------------------

small_elements: st.SearchStrategy[PathElement] = st.sampled_from(
    [
        field("a"),
        field("b"),
        field("c"),
        key({"name": "x"}),
        key({"name": "y"}),
        # 1 and 1.0 are one element; True and 1 are not
        set_value(1),
        set_value(1.0),
        set_value(True),
        set_value("1"),
        set_value(None),
        index(0),
        index(1),
    ]
)
small_sets = field_sets(small_elements, max_paths=8)

# --- path strings: what parse_path can read back ----------------------------------------------------

_plain_name = st.one_of(
    st.sampled_from(["a", "spec", "<x>", 'a"b', "é", "x]y", "k=v", " sp ", "😀", "0"]),
    st.text(st.characters(blacklist_characters=".[\\", blacklist_categories=("Cs",)), min_size=1, max_size=6),
)
_key_name = st.one_of(
    st.sampled_from(["name", "containerPort", "protocol", "a.b", "x,y"]),
    st.text(st.characters(blacklist_characters="=]", blacklist_categories=("Cs",)), min_size=1, max_size=5),
)

printable_elements: st.SearchStrategy[PathElement] = st.one_of(
    st.builds(field, _plain_name),
    st.builds(key, st.dictionaries(_key_name, scalars, min_size=1, max_size=3)),
    st.builds(set_value, scalars),
    st.builds(index, st.integers(0, 10_000)),
)

dotted_names = st.lists(_plain_name, min_size=1, max_size=3).map(".".join)
