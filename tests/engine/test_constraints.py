"""typed/constraints.py: the CRD validator's value checks, message for message.

Every expected text here was answered by the lab server (kube-openapi + apiextensions 1.36) for the
Check CRD of check-crd.yaml; test_constraints_differential.py compares generated writes with the
server itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_fieldown.typed.constraints import constraint_errors

CRD = yaml.safe_load((Path(__file__).resolve().parent / "check-crd.yaml").read_text())
SCHEMA = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def errors(spec: dict[str, Any], old_spec: dict[str, Any] | None = None) -> set[tuple[str, str]]:
    obj = {"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": "c"}, "spec": spec}
    if old_spec is None:
        return {(e.field, e.message) for e in constraint_errors(obj, SCHEMA)}
    old = {**obj, "spec": old_spec}
    return {(e.field, e.message) for e in constraint_errors(obj, SCHEMA, old)}


@pytest.mark.parametrize(("spec", "want"), [
    ({"mode": "fast"}, set()),
    ({"mode": "medium"}, {("spec.mode", 'Unsupported value: "medium": supported values: "fast", "slow"')}),
    ({"size": 0}, {("spec.size", "Invalid value: 0: spec.size in body should be greater than or equal to 1"),
                   ("spec.mode", "Required value")}),
    # an integer against multipleOf 0.5: Go truncates the factor to int64(0.5) = 0
    ({"mode": "fast", "size": 101, "ratio": 0, "name": "ABCDEFG"}, {
        ("spec.name", "Too long: may not be more than 5 bytes"),
        ("spec.ratio", "Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0"),
        ("spec.ratio", "Invalid value: 0: spec.ratio in body should be greater than 0"),
        ("spec.size", "Invalid value: 101: spec.size in body should be less than or equal to 100")}),
    ({"mode": "fast", "ratio": 0.7, "name": "a"}, {
        ("spec.name", 'Invalid value: "a": spec.name in body should be at least 2 chars long'),
        ("spec.ratio", "Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5")}),
    ({"mode": "fast", "tags": ["a", "b", "c"], "labels": {}}, {
        ("spec.tags", "Too many: 3: must have at most 2 items"),
        ("spec.labels", "Invalid value: 0: spec.labels in body should have at least 1 properties")}),
    ({"mode": "fast", "tags": [], "labels": {"a": "1", "b": "2", "c": "3"}}, {
        ("spec.labels", "Too many: 3: must have at most 2 items"),
        ("spec.tags", "Invalid value: 0: spec.tags in body should have at least 1 items")}),
    ({"mode": "fast", "ports": [{"port": 70000, "proto": "SCTP"}]}, {
        ("spec.ports[0].port",
         "Invalid value: 70000: spec.ports[0].port in body should be less than or equal to 65535"),
        ("spec.ports[0].proto", 'Unsupported value: "SCTP": supported values: "TCP", "UDP"')}),
    ({"mode": "fast", "name": "héllo"},
     {("spec.name", "Invalid value: \"héllo\": spec.name in body should match '^[a-z]+$'")}),
    # characters, not bytes, are counted (the message says bytes all the same)
    ({"mode": "fast", "name": "ééééé"},
     {("spec.name", "Invalid value: \"ééééé\": spec.name in body should match '^[a-z]+$'")}),
    ({"mode": "fast", "limit": 10}, {("spec.limit", "Invalid value: 10: spec.limit in body should be less than 10")}),
    ({"mode": "fast", "limit": 9.5, "ratio": 1.5}, set()),
    # an integer schema's constraints that are no int64 are themselves reported, for every value,
    # and compared as float64 (maximum 7.5: 7 passes, 8 does not; multipleOf 2.5: 5 passes)
    ({"mode": "fast", "coarse": 5}, {
        ("<nil>", 'Invalid value: "": Maximum boundary value must be of type integer (default format) in spec.coarse'),
        ("<nil>", 'Invalid value: "": MultipleOf value must be of type integer (default format) in spec.coarse')}),
    ({"mode": "fast", "coarse": 8}, {
        ("<nil>", 'Invalid value: "": Maximum boundary value must be of type integer (default format) in spec.coarse'),
        ("<nil>", 'Invalid value: "": MultipleOf value must be of type integer (default format) in spec.coarse'),
        ("spec.coarse", "Invalid value: 8: spec.coarse in body should be a multiple of 2.5"),
        ("spec.coarse", "Invalid value: 8: spec.coarse in body should be less than or equal to 7.5")}),
    # a float in an integer field is still held to the bounds (its type error is validate.py's)
    ({"mode": "fast", "size": 100.5},
     {("spec.size", "Invalid value: 100.5: spec.size in body should be less than or equal to 100")}),
    # an int beyond int64 is a float64: compared as one, printed as one
    ({"mode": "fast", "size": 123456789012345680000},
     {("spec.size", "Invalid value: 1.2345678901234568e+20: spec.size in body should be less than or equal to 100")}),
    # a float64 multiple beyond 2**53 is no JSON integer for swag: not a multiple
    # an enum compares after Go's conversion: 1.5 becomes int64 1 (its type error is validate.py's)
    ({"mode": "fast", "level": 1.5}, set()),
    ({"mode": "fast", "level": 3}, {("spec.level", 'Unsupported value: 3: supported values: "1", "2"')}),
    ({"mode": "fast", "ratio": 3e17},
     {("spec.ratio", "Invalid value: 3e+17: spec.ratio in body should be a multiple of 0.5")}),
])
def test_messages_as_the_server_writes_them(spec: dict[str, Any], want: set[tuple[str, str]]) -> None:
    assert errors(spec) == want


def test_ratcheting_keeps_an_unchanged_invalid_value_and_reports_a_changed_one() -> None:
    old = {"mode": "medium", "size": 500, "ports": [{"port": 70000}, {"port": 80, "proto": "SCTP"}]}
    assert errors(old, old) == set()
    # the size changes (still invalid): reported; the mode and the ports stay: not reported
    assert errors({**old, "size": 600}, old) == {
        ("spec.size", "Invalid value: 600: spec.size in body should be less than or equal to 100")}
    # list-map items are correlated by key, whatever their position
    moved = {**old, "ports": [{"port": 80, "proto": "SCTP"}, {"port": 70000}, {"port": 1, "proto": "X"}]}
    assert errors(moved, old) == {("spec.ports[2].proto", 'Unsupported value: "X": supported values: "TCP", "UDP"'),
                                  ("spec.ports", "Too many: 3: must have at most 2 items")}
    # reordered, the same list-map: unchanged for ratcheting
    assert errors({**old, "ports": old["ports"][::-1]}, old) == set()
    # a set's items are not correlated: a changed set reports each invalid item... and its size
    assert errors({"mode": "fast", "tags": ["a", "b", "c"]}, {"mode": "fast", "tags": ["a", "b", "c", "d"]}) == {
        ("spec.tags", "Too many: 3: must have at most 2 items")}
    # a required field missing before and after: the spec changed, so it is reported
    assert errors({"size": 5}, {"size": 4}) == {("spec.mode", "Required value")}
    assert errors({"size": 4}, {"size": 4}) == set()


def test_ratcheting_compares_as_go_does_an_int64_is_no_float64() -> None:
    # a PUT of 10.0 over a stored 10 changed the value (reflect.DeepEqual): its violation is reported
    assert errors({"mode": "fast", "limit": 10.0}, {"mode": "fast", "limit": 10}) == {
        ("spec.limit", "Invalid value: 10: spec.limit in body should be less than 10")}
    assert errors({"mode": "fast", "limit": 10}, {"mode": "fast", "limit": 10}) == set()


def test_a_status_write_is_validated_against_the_status_schema_alone() -> None:
    # the lab: a stored spec with a preserve-unknown-fields map holding keys is never "unchanged", so
    # the main resource's write is refused for its required key; a status write is not
    from kubectl_fieldown.fieldmanager import Invalid, ResourceRules, simulate_update
    from kubectl_fieldown.schema.crd import kinds_from_crd
    from kubectl_fieldown.schema.types import GroupVersionKind

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "stats.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Stat", "plural": "stats", "singular": "stat", "listKind": "StatList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "properties": {"cfg": {
                                          "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                          "required": ["must"]}}},
                                      "status": {"type": "object", "properties": {
                                          "phase": {"type": "string", "maxLength": 3}}}}}}}]}}
    rules = ResourceRules.for_kind(kinds_from_crd(crd)[GroupVersionKind("example.com", "v1", "Stat")], False)
    live = {"apiVersion": "example.com/v1", "kind": "Stat",
            "metadata": {"name": "s", "namespace": "d", "uid": "u", "resourceVersion": "1"},
            "spec": {"cfg": {"free": 1}}}
    new = {**live, "status": {"phase": "Ok"}}
    simulate_update(live, new, "m", rules, now="2026-01-01T00:00:00Z", subresource="status")
    with pytest.raises(Invalid) as main:
        simulate_update(live, new, "m", rules, now="2026-01-01T00:00:00Z")
    assert [(c["field"], c["message"]) for c in main.value.causes] == [("spec.cfg.must", "Required value")]
    with pytest.raises(Invalid) as status:
        simulate_update(live, {**live, "status": {"phase": "Ready"}}, "m", rules, now="2026-01-01T00:00:00Z",
                        subresource="status")
    assert [(c["field"], c["message"]) for c in status.value.causes] == [
        ("status.phase", "Too long: may not be more than 3 bytes")]


@pytest.mark.parametrize(("value_bytes", "refused"), [(262143, False), (262144, True)])
def test_annotations_over_256_kib_in_all_are_refused(value_bytes: int, refused: bool) -> None:
    # the lab: key "a" plus a value of 262,143 bytes is created, of 262,144 refused (keys count too)
    from kubectl_fieldown.fieldmanager import Invalid, ResourceRules, simulate_apply, simulate_update
    from kubectl_fieldown.schema.crd import kinds_from_crd
    from kubectl_fieldown.schema.types import GroupVersionKind

    rules = ResourceRules.for_kind(kinds_from_crd(CRD)[GroupVersionKind("example.com", "v1", "Check")], False)
    obj = {"apiVersion": "example.com/v1", "kind": "Check",
           "metadata": {"name": "c", "namespace": "d", "annotations": {"a": "x" * value_bytes}},
           "spec": {"mode": "fast"}}
    for write in (simulate_update, simulate_apply):
        if not refused:
            write(None, obj, "m", rules, now="2026-01-01T00:00:00Z")
            continue
        with pytest.raises(Invalid) as e:
            write(None, obj, "m", rules, now="2026-01-01T00:00:00Z")
        assert str(e.value) == ('Check.example.com "c" is invalid: metadata.annotations: '
                                "Too long: may not be more than 262144 bytes")
