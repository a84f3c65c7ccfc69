"""``unclaimed``'s shortcut: it leaves before building the final object's field set when no live
field could be named. That holds only if what it would look at afterwards (the configuration part of
the final and live sets' intersection, less what the manifest covers) is always a part of what it
looked at before (the same of the live set alone): checked here on generated sets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_fieldown.fieldpath import FieldSet, field, key
from kubectl_fieldown.remedies.plans import LAST_APPLIED_PATH
from kubectl_fieldown.remedies.unclaimed import _configuration_part, _nameable

# the names _configuration_part treats apart, and a list item with its key field
ELEMENTS = st.sampled_from([field(n) for n in ("metadata", "labels", "annotations", "finalizers", "status",
                                               "spec", "a", "name")] + [key({"name": "x"})])
PATHS = st.one_of(st.lists(ELEMENTS, min_size=1, max_size=4).map(tuple), st.just(LAST_APPLIED_PATH))
SETS = st.lists(PATHS, max_size=10).map(FieldSet)


def _named(s: FieldSet) -> set[tuple[object, ...]]:
    return {p for p in s if _nameable(p)}


@settings(max_examples=300, deadline=None)
@given(SETS, SETS, SETS)
def test_what_is_kept_is_a_part_of_what_was_live(live: FieldSet, final: FieldSet, wanted: FieldSet) -> None:
    before = _named(_configuration_part(live).not_prefixes_of(wanted))
    after = _named(_configuration_part(final.intersection(live)).not_prefixes_of(wanted))
    assert after <= before
    if not before:
        assert not after


def test_the_annotation_and_key_fields_are_never_named() -> None:
    item = (field("spec"), field("ports"), key({"name": "x"}))
    assert not _nameable(LAST_APPLIED_PATH)
    assert not _nameable((*item, field("name")))
    assert _nameable((*item, field("port")))
    assert _nameable((field("spec"), field("name")))
