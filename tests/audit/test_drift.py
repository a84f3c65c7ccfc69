"""Drift between the last-applied annotation and the live object (kubectl_fieldown.audit.drift)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.audit import AuditContext, audit_object, last_applied_drift

from .test_rules import CSA, SPEC, ids, manifest, one, widget

CTX = AuditContext(fixes=False)


@pytest.mark.parametrize(("la_spec", "live_spec", "drifted"), [
    ({"color": "red"}, {"color": "red"}, []),
    ({"color": "red"}, {"color": "blue"}, [".spec.color"]),
    ({"color": "red"}, {}, [".spec.color"]),  # removed by someone
    ({"color": None}, {"color": "blue"}, []),  # null: the applier does not set it
    ({"color": "red"}, {"color": "red", "size": 1, "strategy": {"type": "x"}}, []),  # defaults, other writers
    ({"replicas": 1}, {"replicas": 1.0}, []),
    ({"replicas": 1}, {"replicas": "1"}, []),  # an int-or-string / quantity stored as a string
    ({"cpu": "1000m"}, {"cpu": "1"}, []),
    ({"memory": "1Gi"}, {"memory": "1024Mi"}, []),
    ({"memory": "1G"}, {"memory": "1Gi"}, [".spec.memory"]),
    ({"replicas": 1}, {"replicas": 2}, [".spec.replicas"]),
    ({"flag": True}, {"flag": 1}, [".spec.flag"]),
    ({"config": {}}, {"config": {"a": 1}}, []),
    ({"config": {}}, {}, []),
    ({"config": {"a": 1}}, {"config": "x"}, [".spec.config"]),
    ({"args": ["a", "b"]}, {"args": ["a", "b"]}, []),
    ({"args": ["a", "b"]}, {"args": ["b", "a"]}, [".spec.args[0]", ".spec.args[1]"]),
    ({"args": ["a", "b"]}, {"args": ["a", "b", "c"]}, [".spec.args"]),  # positional lists must match in length
    ({"args": []}, {}, []),
    # lists of named items are matched by name: defaults inside items and extra live items are not drift
    ({"containers": [{"name": "web", "image": "nginx:1"}]},
     {"containers": [{"name": "sidecar", "image": "envoy"}, {"name": "web", "image": "nginx:1", "ports": []}]}, []),
    ({"containers": [{"name": "web", "image": "nginx:1"}]},
     {"containers": [{"name": "web", "image": "nginx:2"}]}, ['.spec.containers[name="web"].image']),
    ({"containers": [{"name": "web", "image": "nginx:1"}, {"name": "db", "image": "pg"}]},
     {"containers": [{"name": "web", "image": "nginx:1"}]}, ['.spec.containers[name="db"]']),  # an item is gone
    ({"ports": [{"containerPort": 80}]}, {"ports": [{"containerPort": 80, "protocol": "TCP"}]}, []),
])
def test_drift(la_spec: dict[str, Any], live_spec: dict[str, Any], drifted: list[str]) -> None:
    la = manifest(la_spec)
    live = widget(CSA, la=la, spec=live_spec)
    assert [d.path for d in last_applied_drift(la, live)] == drifted
    found = [f for f in audit_object(live, CTX) if f.id == "last-applied-drift"]
    assert [f.details["fields"] for f in found] == ([drifted] if drifted else [])


def test_drift_message() -> None:
    obj = widget(CSA, la=manifest({"color": "red", "size": 1, "args": ["a"], "x": 1}),
                 spec={"color": "blue", "size": 2, "args": ["b"], "x": 2})
    f = one(obj, "last-applied-drift")
    assert f.message == ('4 fields differ from the last-applied annotation: .spec.args[0] (annotation "a", live "b"), '
                         ".spec.color, .spec.size (+1 more): "
                         "the next client-side apply restores the annotation's values")


def test_drift_of_metadata_labels_and_annotations_only() -> None:
    la = manifest(SPEC, labels={"app": "a", "tier": "web"}, annotations={"note": "x"},
                  creationTimestamp=None, uid="other")
    obj = widget(CSA, la=la, spec=SPEC, labels={"app": "b"}, annotations={"note": "x", "added": "y"})
    assert [d.path for d in last_applied_drift(la, obj)] == [".metadata.labels.app", ".metadata.labels.tier"]


def test_drift_ignores_status_and_other_versions() -> None:
    la = {**manifest(SPEC), "status": {"phase": "x"}}
    assert last_applied_drift(la, widget(spec=SPEC)) == []
    old = {**manifest({"color": "green"}), "apiVersion": "example.com/v1beta1"}
    assert "last-applied-drift" not in ids(widget(CSA, la=old, spec=SPEC))


def test_invalid_annotation_is_reported() -> None:
    f = one(widget(CSA, la="{not json"), "last-applied-drift")
    assert f.details["invalid"] is True
    assert f.message == "the last-applied annotation is not a JSON object: kubectl apply cannot compute its patch"
