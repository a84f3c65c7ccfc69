"""The tests' own FieldsV1 decoder (tests/fieldsv1_oracle.py) on hand-written forms, and on every
entry the server returned in the recorded cases, where it must count the same members as the
product's decoder (the two share no code; a disagreement means one of them is wrong)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fieldsv1_oracle import oracle_path_string, oracle_paths

from kubectl_fieldown.fieldpath import decode_fields_v1

CONFORMANCE = Path(__file__).resolve().parent / "conformance"


@pytest.mark.parametrize(("fields", "paths"), [
    ({}, set()),
    ({"f:spec": {"f:replicas": {}}}, {(("f", "spec"), ("f", "replicas"))}),
    ({"f:spec": {".": {}, "f:a": {}}}, {(("f", "spec"),), (("f", "spec"), ("f", "a"))}),
    ({"f:l": {'k:{"name":"a","port":80}': {".": {}, "f:x": {}}}},
     {(("f", "l"), ("k", '{"name":"a","port":80}')), (("f", "l"), ("k", '{"name":"a","port":80}'), ("f", "x"))}),
    # the custom-resource spelling: keys sorted as strings, HTML-escaped
    ({"f:l": {'k:{"port":80,"name":"\\u003cb\\u003e"}': {}}}, {(("f", "l"), ("k", '{"name":"<b>","port":80}'))}),
    ({"f:s": {'v:"x"': {}, "v:1": {}}}, {(("f", "s"), ("v", '"x"')), (("f", "s"), ("v", "1"))}),
    ({"f:a": {"i:0": {}, "i:+2": {}}}, {(("f", "a"), ("i", "0")), (("f", "a"), ("i", "2"))}),
])
def test_hand_written_forms(fields: dict[str, object], paths: set[object]) -> None:
    assert oracle_paths(fields) == paths
    assert oracle_paths(json.dumps(fields)) == paths


@pytest.mark.parametrize("bad", [{"x:y": {}}, {"f:a": 1}, [1], {"k:{": {}}])
def test_malformed_is_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        oracle_paths(bad)


def test_agrees_with_the_product_on_every_recorded_entry() -> None:
    seen = 0
    for case in sorted(CONFORMANCE.rglob("*.json")):
        data = json.loads(case.read_text())
        if not isinstance(data, dict):
            continue
        objs = [data.get("live")] + [(data.get(k) or {}).get("object") for k in ("expect", "expectForced")]
        for obj in objs:
            for e in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
                assert len(oracle_paths(e.get("fieldsV1"))) == len(decode_fields_v1(e.get("fieldsV1"))), (case, e)
                seen += 1
    assert seen > 1000, seen


@pytest.mark.parametrize(("value", "text"), [
    (1.0, "1"), (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (1e21, "1e+21"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (2.5, "2.5"), (-0.5, "-0.5"), (123456.789, "123456.789"),
    (9007199254740993.0, "9.007199254740992e+15"),
])
def test_go_float_text(value: float, text: str) -> None:
    assert oracle_path_string((("v", json.dumps(value)),)) == f"[={text}]"


def test_path_strings_are_the_servers() -> None:
    """Every path the server printed in a recorded 409 is the text of a path its managedFields hold."""
    seen = 0
    for case in sorted(CONFORMANCE.rglob("*.json")):
        data = json.loads(case.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("live"), dict):
            continue
        entries = (data["live"].get("metadata") or {}).get("managedFields") or []
        if not entries:
            continue  # a reset object: the server's before-first-apply owns what no entry names
        texts = {oracle_path_string(p) for e in entries for p in oracle_paths(e.get("fieldsV1"))}
        for answer in (data.get("expect"), data.get("expectForced")):
            for c in (answer or {}).get("conflicts") or []:
                assert c["path"] in texts, (case.name, c["path"])
                seen += 1
    assert seen > 100, seen
