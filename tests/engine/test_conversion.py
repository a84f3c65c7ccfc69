"""The field manager's conversion hook (``ResourceRules.converter``) and what conversion None does
at versions whose schemas differ (fieldmanager/rules.py, structuredmerge.py); the recorded server
cases are in test_multiversion.py, upstream's converter tests in test_smd_upstream.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubectl_fieldown.fieldmanager import (
    ConversionError,
    FieldManagerError,
    MissingVersion,
    ResourceRules,
    simulate_apply,
    simulate_update,
)
from kubectl_fieldown.ownership.managedfields import decode_entries
from kubectl_fieldown.typed.validate import prune_undeclared, typed_errors

from .schemas import SPEC, STRING, WIDGET, WIDGET_KIND, struct, widget

V1, V2 = "example.com/v1", "example.com/v2"
# v2 also has .spec.extra
WIDGET_V2 = struct({**{k: f.type for k, f in WIDGET.map.fields.items()},  # type: ignore[union-attr]
                    "spec": struct({**{k: f.type for k, f in SPEC.map.fields.items()},  # type: ignore[union-attr]
                                    "extra": STRING})})
NOW = "2026-01-01T00:00:00Z"


def rules(**kw: Any) -> ResourceRules:
    r = ResourceRules.for_kind(WIDGET_KIND, True, versions={V1: WIDGET, V2: WIDGET_V2})
    return dataclasses.replace(r, **kw)


def entry(manager: str, version: str, fields: dict[str, Any], op: str = "Apply") -> dict[str, Any]:
    return {"manager": manager, "operation": op, "apiVersion": version, "time": NOW, "fieldsType": "FieldsV1",
            "fieldsV1": fields}


def managers(obj: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e.manager, e.api_version) for e in decode_entries(obj["metadata"].get("managedFields"))}


def test_a_version_the_converter_does_not_know_drops_its_entry() -> None:
    def convert(obj: dict[str, Any], version: str) -> dict[str, Any]:
        if version == "example.com/legacy":
            raise MissingVersion("no such version")
        return {**obj, "apiVersion": version}

    live = widget({"color": "red", "replicas": 1}, managedFields=[
        entry("old", "example.com/legacy", {"f:spec": {"f:color": {}}}),
        entry("alice", V1, {"f:spec": {"f:replicas": {}}})])
    got = simulate_apply(live, widget({"color": "blue"}), "bob", rules(converter=convert), now=NOW)
    # no conflict with the dropped entry; alice's stays
    assert managers(got.object) == {("alice", V1), ("bob", V1)}
    assert got.object["spec"] == {"color": "blue", "replicas": 1}


def test_a_failing_conversion_fails_the_apply_and_clears_an_update() -> None:
    def convert(obj: dict[str, Any], version: str) -> dict[str, Any]:
        if (obj.get("spec") or {}).get("color") == "bad" and version == V2:
            raise ConversionError("no bad color at v2")
        return {**obj, "apiVersion": version}

    r = rules(converter=convert)
    live = widget({"color": "red"}, managedFields=[entry("alice", V2, {"f:spec": {"f:color": {}}})])
    with pytest.raises(FieldManagerError) as e:
        simulate_apply(live, widget({"color": "bad"}), "bob", r, now=NOW)
    assert (e.value.status, e.value.message) == (500, "failed to convert new object: no bad color at v2")
    # an Update whose conversion fails is stored without managedFields (UpdateNoErrors)
    new = widget({"color": "bad"})
    assert simulate_update(live, new, "ctl", r, now=NOW).entries == []


def test_conversion_none_types_the_object_at_the_target_version() -> None:
    r = rules()
    ok = r.convert(widget({"color": "red"}), V2)
    assert ok["apiVersion"] == V2
    with pytest.raises(ConversionError, match=r"^\.spec\.extra: field not declared in schema$"):
        # at v1 from v2: v1's spec does not declare extra
        dataclasses.replace(r, schema=dataclasses.replace(WIDGET_KIND, root=WIDGET_V2)).convert(
            {**widget({"extra": "x"}), "apiVersion": V2}, V1)


def test_reset_fields_of_the_main_endpoint_hold_at_the_request_version_only() -> None:
    r = rules()
    assert not r.ignored("", V1).is_empty()
    assert r.ignored("", V2).is_empty()
    # the status endpoint's at every version of the CRD (not at one it does not list)
    assert r.ignored("status", V2) == r.ignored("status", V1) == r.reset("status")
    assert r.ignored("status", "example.com/v9").is_empty()
    # a built-in kind's at every version
    builtin = dataclasses.replace(r, custom_resource=False)
    assert builtin.ignored("", V2) == builtin.reset("")


def test_undeclared_fields() -> None:
    obj = widget({"color": "red", "extra": "x", "zzz": 1})
    # the first undeclared key of a map (sorted), and nothing more of that map
    assert typed_errors(obj, WIDGET, undeclared=True) == [".spec.extra: field not declared in schema"]
    assert typed_errors(obj, WIDGET) == []
    assert prune_undeclared(obj, WIDGET)["spec"] == {"color": "red"}
    assert prune_undeclared(obj, WIDGET_V2)["spec"] == {"color": "red", "extra": "x"}


def test_an_update_is_pruned_to_its_version_before_the_field_manager() -> None:
    # alice's entry is at v2, which declares extra; the update at v1 does not: the decoder drops
    # extra first, so nothing needs converting with it and ctl owns replicas only
    live = widget({"color": "red"}, managedFields=[entry("alice", V2, {"f:spec": {"f:color": {}}})])
    got = simulate_update(live, widget({"color": "red", "replicas": 2, "extra": "x"}), "ctl", rules(), now=NOW)
    assert got.object["spec"] == {"color": "red", "replicas": 2}
    assert {(e.manager, e.to_dict()["fieldsV1"] == {"f:spec": {"f:replicas": {}}}) for e in got.entries
            if e.manager == "ctl"} == {("ctl", True)}
