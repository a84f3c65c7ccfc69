"""managedFields entries (ssa-semantics §4, §9): decoding errors, identity, order on write, wire form."""

from __future__ import annotations

import json
from pathlib import Path as FsPath
from typing import Any

import pytest

from kubectl_fieldown.base.identitymemo import IdentityMemo
from kubectl_fieldown.fieldpath import CANONICAL, UNSTRUCTURED, FieldSet, key, path_from_fields
from kubectl_fieldown.ownership.managedfields import (
    APPLY,
    UPDATE,
    ManagedFieldsEntry,
    ManagedFieldsError,
    ManagerIdentity,
    decode_entries,
    decode_entry,
    encode_entries,
    format_time,
    object_entries,
    parse_time,
    sort_entries,
)

F = path_from_fields
CONFORMANCE = FsPath(__file__).resolve().parent.parent / "conformance"


def raw(manager: str = "bob", operation: str = "Apply", api_version: str = "v1", **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version}
    d["fieldsType"] = "FieldsV1"
    d.update(extra)
    return d


# --- decoding errors ----------------------------------------------------------------------------

BAD_ENTRIES = [
    # (entry, words in the reason)
    (raw(operation="Patch"), ["operation must be Apply or Update", "'Patch'"]),
    (raw(operation="apply"), ["operation must be Apply or Update"]),
    (raw(operation=""), ["operation must be Apply or Update"]),
    ({k: v for k, v in raw().items() if k != "operation"}, ["operation must be Apply or Update"]),
    (raw(api_version=""), ["apiVersion is empty"]),
    ({k: v for k, v in raw().items() if k != "apiVersion"}, ["apiVersion is empty"]),
    (raw(fieldsType="FieldsV2"), ["fieldsType must be FieldsV1", "'FieldsV2'"]),
    (raw(fieldsType=""), ["fieldsType is missing"]),
    ({k: v for k, v in raw().items() if k != "fieldsType"}, ["fieldsType is missing"]),
    (raw(fieldsV1={"f:a": 1}), ["must be a JSON object", "at fieldsV1 (top level)"]),
    (raw(fieldsV1={"f:spec": {"i:x": {}}}), ["index", "at fieldsV1 f:spec > i:x"]),
    (raw(fieldsV1=[]), ["must be a JSON object"]),
    (raw(time=5), ["time is not a string"]),
    # issue 9: each of these was an internal error further on
    (raw(subresource=[1]), ["subresource is not a string"]),
    (raw(api_version=["v1"]), ["apiVersion is not a string"]),
    (raw(fieldsV1='{"f:a":{}}'), ["fieldsV1 must be a JSON object, not a string"]),
]


@pytest.mark.parametrize(("entry", "words"), BAD_ENTRIES)
def test_decode_errors_name_entry_and_manager(entry: dict[str, Any], words: list[str]) -> None:
    good = raw("alice", "Update", "apps/v1")
    with pytest.raises(ManagedFieldsError) as ei:
        decode_entries([good, entry])
    err = ei.value
    assert err.entry_index == 1
    assert err.manager == "bob"
    assert str(err).startswith("managedFields[1] (manager 'bob'): ")
    for w in words:
        assert w in err.reason


def test_decode_errors_without_a_manager() -> None:
    with pytest.raises(ManagedFieldsError) as ei:
        decode_entries([raw(manager="", operation="Nope")])
    assert str(ei.value) == "managedFields[0]: operation must be Apply or Update, not 'Nope'"
    with pytest.raises(ManagedFieldsError, match=r"managedFields\[0\]: entry is not an object"):
        decode_entries(["x"])
    with pytest.raises(ManagedFieldsError, match="manager is not a string"):
        decode_entries([raw(manager=3)])  # type: ignore[arg-type]
    with pytest.raises(ManagedFieldsError, match="managedFields is not a list"):
        decode_entries({"manager": "x"})


def test_decode_good_entries() -> None:
    assert decode_entries(None) == []
    assert decode_entries([]) == []
    e = decode_entry(raw("bob", "Update", "apps/v1", time="2024-05-06T07:08:09Z", subresource="scale"))
    assert (e.manager, e.operation, e.api_version, e.time, e.subresource) == (
        "bob",
        "Update",
        "apps/v1",
        "2024-05-06T07:08:09Z",
        "scale",
    )
    assert e.fields == FieldSet()  # missing fieldsV1: the empty set
    assert decode_entry(raw(fieldsV1=None)).fields == FieldSet()
    assert decode_entry(raw(fieldsV1={})).fields == FieldSet()
    e = decode_entry(raw(fieldsV1={"f:spec": {"f:replicas": {}}}))
    assert e.fields == FieldSet([F("spec", "replicas")])
    # an Update without a manager decodes (the server names such writers "unknown" before storing)
    assert decode_entry(raw("", "Update")).manager == ""


def test_object_entries() -> None:
    obj = {"metadata": {"managedFields": [raw("a"), raw("b", "Update")]}}
    assert [e.manager for e in object_entries(obj)] == ["a", "b"]
    assert object_entries({"metadata": {}}) == []
    assert object_entries({}) == []


# --- identity -----------------------------------------------------------------------------------


def test_identity_apply_ignores_api_version() -> None:
    a1 = decode_entry(raw("bob", APPLY, "example.com/v1"))
    a2 = decode_entry(raw("bob", APPLY, "example.com/v2"))
    assert a1.identity == a2.identity
    assert a1.identity.json() == '{"manager":"bob","operation":"Apply"}'


def test_identity_update_includes_api_version() -> None:
    u1 = decode_entry(raw("bob", UPDATE, "example.com/v1"))
    u2 = decode_entry(raw("bob", UPDATE, "example.com/v2"))
    assert u1.identity != u2.identity
    assert u1.identity.json() == '{"manager":"bob","operation":"Update","apiVersion":"example.com/v1"}'


def test_identity_subresource_separates() -> None:
    main = decode_entry(raw("kubectl", UPDATE, "example.com/v1"))
    scale = decode_entry(raw("kubectl", UPDATE, "example.com/v1", subresource="scale"))
    applied = decode_entry(raw("kubectl", APPLY, "example.com/v1"))
    applied_status = decode_entry(raw("kubectl", APPLY, "example.com/v1", subresource="status"))
    assert len({main.identity, scale.identity, applied.identity, applied_status.identity}) == 4
    assert scale.identity.json() == (
        '{"manager":"kubectl","operation":"Update","apiVersion":"example.com/v1","subresource":"scale"}'
    )
    assert applied_status.identity.json() == '{"manager":"kubectl","operation":"Apply","subresource":"status"}'


def test_identity_json_escapes_like_encoding_json() -> None:
    assert ManagerIdentity("a<b&\"c", APPLY, "").json() == '{"manager":"a\\u003cb\\u0026\\"c","operation":"Apply"}'
    assert ManagerIdentity("", UPDATE, "v1").json() == '{"operation":"Update","apiVersion":"v1"}'


DESCRIBE = [
    (
        ManagerIdentity("kubectl", UPDATE, "example.com/v1", "scale"),
        '"kubectl" with subresource "scale" using example.com/v1',
    ),
    (ManagerIdentity("helm", UPDATE, "apps/v1"), '"helm" using apps/v1'),
    (ManagerIdentity("bob", APPLY, ""), '"bob"'),
    (ManagerIdentity("status-applier", APPLY, "", "status"), '"status-applier" with subresource "status"'),
    (ManagerIdentity("before-first-apply", UPDATE, "v1"), '"before-first-apply" using v1'),
    # printManager uses %q: no HTML escaping, Go escapes for the rest
    (ManagerIdentity("a<b&c", APPLY, ""), '"a<b&c"'),
    (ManagerIdentity('x"y\\z\n\x01é', APPLY, ""), '"x\\"y\\\\z\\n\\x01é"'),
]


@pytest.mark.parametrize(("identity", "text"), DESCRIBE)
def test_describe(identity: ManagerIdentity, text: str) -> None:
    assert identity.describe() == text


def _cases() -> list[dict[str, Any]]:
    return [
        json.loads(f.read_text())
        for f in sorted(CONFORMANCE.glob("*.json")) + sorted(CONFORMANCE.glob("builtin/*.json"))
    ]


def test_describe_matches_every_recorded_conflict() -> None:
    seen = 0
    for case in _cases():
        answer = case["expect"]
        if answer.get("status") != 409:
            continue
        for c in answer["conflicts"]:
            api_version = c.get("apiVersion", "")
            ident = ManagerIdentity(c["manager"], c["operation"], api_version, c.get("subresource", ""))
            assert ident.describe() == c["managerText"], case["id"]
            seen += 1
    assert seen >= 100


# --- order on write -----------------------------------------------------------------------------


def entry(manager: str, op: str, time: str | None = None, api_version: str = "v1", sub: str = "") -> ManagedFieldsEntry:
    return ManagedFieldsEntry(manager, op, api_version, FieldSet([F("x")]), time, sub)


def test_sort_order() -> None:
    t1, t2 = "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z"
    want = [
        entry("z", APPLY),  # Apply first; no time counts as 0
        entry("a", APPLY, t1),
        entry("b", APPLY, t1),
        entry("a", APPLY, t2),
        entry("zz", UPDATE),
        entry("m", UPDATE, t1, "apps/v1"),
        entry("m", UPDATE, t1, "v1"),
        entry("m", UPDATE, t1, "v1", "scale"),
        entry("m", UPDATE, t1, "v1", "status"),
        entry("a", UPDATE, t2),
    ]
    shuffled = [want[i] for i in (9, 3, 0, 7, 5, 1, 8, 2, 6, 4)]
    got = sort_entries(shuffled)
    assert [(e.operation, e.manager, e.time, e.api_version, e.subresource) for e in got] == [
        (e.operation, e.manager, e.time, e.api_version, e.subresource) for e in want
    ]


def test_sort_uses_whole_seconds() -> None:
    # within one second, the manager name decides even if the fractional times say otherwise
    late = entry("a", UPDATE, "2024-01-01T00:00:01.900000Z")
    early = entry("b", UPDATE, "2024-01-01T00:00:01.100000Z")
    assert [e.manager for e in sort_entries([early, late])] == ["a", "b"]


def test_times() -> None:
    assert parse_time("2024-01-01T00:00:00Z") == 1704067200
    assert parse_time("1970-01-01T00:00:00Z") == 0
    assert parse_time(None) == 0 and parse_time("") == 0 and parse_time("garbage") == 0
    assert format_time(1704067200) == "2024-01-01T00:00:00Z"
    assert format_time(1704067200.9) == "2024-01-01T00:00:00Z"
    assert entry("a", APPLY, "2024-01-01T00:00:05Z").unix_time == 1704067205


def test_recorded_entries_are_in_server_order() -> None:
    checked = 0
    for case in _cases():
        objs = [case["live"]] + [a["object"] for a in (case["expect"], case["expectForced"]) if "object" in a]
        for obj in objs:
            es = object_entries(obj)
            assert [e.identity for e in sort_entries(es)] == [e.identity for e in es], case["id"]
            checked += len(es)
    assert checked > 1000


# --- wire form ----------------------------------------------------------------------------------


def test_to_dict_key_order_and_omission() -> None:
    fields = FieldSet([F("spec", "replicas")])
    full = ManagedFieldsEntry("m", UPDATE, "apps/v1", fields, "2024-01-01T00:00:00Z", "scale")
    d = full.to_dict()
    assert list(d) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"]
    assert d["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    bare = ManagedFieldsEntry("", APPLY, "v1").to_dict()
    assert list(bare) == ["operation", "apiVersion", "fieldsType", "fieldsV1"]
    assert bare["fieldsV1"] == {}
    assert json.dumps(full.to_dict(), separators=(",", ":")) == (
        '{"manager":"m","operation":"Update","apiVersion":"apps/v1","time":"2024-01-01T00:00:00Z",'
        '"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"subresource":"scale"}'
    )


def test_to_dict_styles() -> None:
    ports = (*F("spec", "ports"),)
    fields = FieldSet([(*ports, key({"port": 80})), (*ports, key({"port": 443}))])
    e = ManagedFieldsEntry("m", APPLY, "v1", fields)
    assert list(e.to_dict(CANONICAL)["fieldsV1"]["f:spec"]["f:ports"]) == ['k:{"port":80}', 'k:{"port":443}']
    assert list(e.to_dict(UNSTRUCTURED)["fieldsV1"]["f:spec"]["f:ports"]) == ['k:{"port":443}', 'k:{"port":80}']
    # a custom resource's entry is a plain map: its keys are sorted too
    assert list(e.to_dict(UNSTRUCTURED)) == ["apiVersion", "fieldsType", "fieldsV1", "manager", "operation"]
    assert list(e.to_dict(CANONICAL)) == ["manager", "operation", "apiVersion", "fieldsType", "fieldsV1"]
    assert encode_entries([e, e], UNSTRUCTURED) == [e.to_dict(UNSTRUCTURED)] * 2


def test_recorded_entries_round_trip_through_to_dict() -> None:
    # the recorded wire form, key order included: custom resources come back in unstructured style
    n = 0
    for case in _cases():
        style = CANONICAL if case.get("builtin") else UNSTRUCTURED
        objs = [case["live"]] + [a["object"] for a in (case["expect"], case["expectForced"]) if "object" in a]
        for obj in objs:
            mf = obj["metadata"].get("managedFields") or []
            again = encode_entries(decode_entries(mf), style)
            assert json.dumps(again, ensure_ascii=False) == json.dumps(mf, ensure_ascii=False), case["id"]
            n += len(mf)
    assert n > 1000


def test_strict_decoding_refuses_keys_the_server_would_drop() -> None:
    entry = raw(fieldsV1={"f:spec": {"x:bogus": {}}})
    (lenient,) = decode_entries([entry])
    assert lenient.fields == FieldSet([path_from_fields("spec")])  # as the server reads it
    with pytest.raises(ManagedFieldsError, match="unknown key 'x:bogus'"):
        decode_entries([entry], strict=True)


@pytest.mark.parametrize(("path", "never"), [
    (".kind", True), (".apiVersion", True), (".metadata", True), (".metadata.name", True),
    (".metadata.managedFields[0]", True), (".metadata.uid.x", True), (".kind.x", True),
    (".metadata.labels.a", False), (".metadata.annotations", False), (".spec", False), (".spec.kind", False),
])
def test_never_owned(path: str, never: bool) -> None:
    from kubectl_fieldown.fieldpath import parse_path
    from kubectl_fieldown.ownership.managedfields import never_owned

    assert (never_owned(parse_path(path)) is not None) is never
    assert never_owned(()) is not None


def test_entries_are_read_once_within_a_block_and_afresh_outside() -> None:
    def raw(manager: str) -> dict[str, Any]:
        return {"manager": manager, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:a": {}}}, "time": "2026-11-24T10:00:00Z"}

    listed = [raw("a"), raw("b")]
    with IdentityMemo():
        first = decode_entries(listed)
        assert decode_entries(listed) == first
        assert decode_entries(listed) is not first  # a list of the caller's own, each time
        with IdentityMemo():  # nested: the same memory
            assert decode_entries(listed)[0] is first[0]
        listed.append(raw("c"))  # the list changed in place: read again
        assert [e.manager for e in decode_entries(listed)] == ["a", "b", "c"]
        listed[0] = raw("z")  # an entry replaced
        assert decode_entries(listed)[0].manager == "z"
    # outside a block every call reads the entries as they are now (a test or a library user may
    # change an entry's dict in place between two calls)
    listed[0]["time"] = "2026-11-24T11:00:00Z"
    assert decode_entries(listed)[0].time == "2026-11-24T11:00:00Z"
    listed[0]["time"] = "2026-11-24T12:00:00Z"
    assert decode_entries(listed)[0].time == "2026-11-24T12:00:00Z"


def test_an_identity_hashes_by_its_fields_and_survives_a_pickle() -> None:
    import copy
    import pickle

    ident = ManagerIdentity("helm", UPDATE, "apps/v1", "scale")
    same = ManagerIdentity("helm", UPDATE, "apps/v1", "scale")
    assert ident == same and hash(ident) == hash(same)
    # the hash a record of these fields has (the one it had before it was kept)
    assert hash(ident) == hash(("helm", UPDATE, "apps/v1", "scale"))
    assert ident.replace(subresource="") == ManagerIdentity("helm", UPDATE, "apps/v1")
    assert hash(ident.replace(subresource="")) == hash(ManagerIdentity("helm", UPDATE, "apps/v1"))
    for back in (pickle.loads(pickle.dumps(ident)), copy.copy(ident), copy.deepcopy(ident)):
        assert back == ident and hash(back) == hash(ident)
        assert {ident: 1}[back] == 1
    # a pickle carries the fields alone: another process hashes them with its own string hash
    assert b"_hash" not in pickle.dumps(ident)
