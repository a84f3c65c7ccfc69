"""Fuzzing the pure core with hostile values (issue 9): every entry point either returns or raises
its own documented error, whatever it is given. Derandomized and bounded (tests/conftest.py)."""

from __future__ import annotations

from typing import Any

from fuzz_inputs import documents, entries, fields_v1, objects, owned_objects, values
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubectl_fieldown.fieldpath import FieldSet, FieldsV1Error, PathSyntaxError, decode_fields_v1, parse_path
from kubectl_fieldown.fieldpath.lookup import names_in
from kubectl_fieldown.manifests.sources import SourceResult, parse_text, stored_object_problem
from kubectl_fieldown.ownership.managedfields import ManagedFieldsError, decode_entries
from kubectl_fieldown.ownership.tree import build_owner_tree


def examples(n: int) -> Any:
    return settings(max_examples=n, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@examples(300)
@given(st.one_of(documents(), st.text(max_size=200)))
def test_parse_text_never_raises(text: str) -> None:
    result = parse_text("fuzz", text)
    assert isinstance(result, SourceResult)
    for e in result.errors:
        assert "\n" not in str(e) and str(e).startswith("fuzz")
    for d in result.documents:
        assert isinstance(d.obj, dict)


@examples(300)
@given(st.one_of(fields_v1, st.text(max_size=60)), st.booleans())
@example({"\n": {}}, False)  # found by the explore run: the key was echoed raw in the error's location
def test_fields_v1_decodes_or_says_why(data: Any, strict: bool) -> None:
    try:
        s = decode_fields_v1(data, strict=strict)
    except FieldsV1Error as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(s, FieldSet)
        len(s)


@examples(300)
@given(st.one_of(st.lists(st.one_of(entries, values), max_size=3), values), st.booleans())
def test_entries_decode_or_say_why(raw: Any, strict: bool) -> None:
    try:
        decode_entries(raw, strict=strict)
    except ManagedFieldsError as e:
        assert str(e).startswith("managedFields")


@examples(200)
@given(st.text(max_size=40), objects())
def test_paths_parse_or_say_why(text: str, obj: Any) -> None:
    for names in (None, names_in([obj], FieldSet())):
        try:
            parse_path(text, names)
        except PathSyntaxError as e:
            assert "\n" not in str(e)


@examples(200)
@given(objects())
def test_owner_tree_of_any_stored_object(obj: Any) -> None:
    """What a file may hold once it passed the checks for objects as a server returns them: the
    tree is built or the entries are refused with the documented error (the owners themselves are
    checked on well-formed objects below)."""
    if stored_object_problem(obj) is not None:
        return
    try:
        tree = build_owner_tree(obj)
    except ManagedFieldsError as e:
        assert str(e).startswith("managedFields")
        return
    assert all(f.owners for f in tree.fields)


@examples(200)
@given(owned_objects())
def test_owner_tree_names_every_owner_of_every_owned_field(
    drawn: tuple[dict[str, Any], dict[tuple[str, str], set[str]]],
) -> None:
    """Every leaf an entry owns is in the tree with exactly the managers whose entries own it, and
    its value; the strategy always owns at least one field, so this can fail on every example."""
    obj, expected = drawn
    assert expected, "the strategy must own at least one field"
    assert stored_object_problem(obj) is None
    tree = build_owner_tree(obj)
    got: dict[tuple[str, str], set[str]] = {}
    for f in tree.fields:
        names = [e[1] for e in f.path]
        section = "spec" if names[:1] == ["spec"] else "labels"
        assert names[:-1] == (["spec"] if section == "spec" else ["metadata", "labels"]), names
        got[(section, str(names[-1]))] = {o.manager for o in f.owners}
        source = obj["spec"] if section == "spec" else obj["metadata"]["labels"]
        assert f.value == source[names[-1]]
    assert got == expected
