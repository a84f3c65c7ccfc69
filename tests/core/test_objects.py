"""One answer to "which object" and "is this a Secret" for every output and check (base/objects.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.base.objects import ObjectRef, group_of, is_secret, is_secret_object
from kubectl_fieldown.base.redact import redact_secret


@pytest.mark.parametrize(("api_version", "kind", "secret"), [
    ("v1", "Secret", True),
    ("v1", "ConfigMap", False),
    ("example.com/v1", "Secret", False),  # a custom kind that is also called Secret
    ("v1", "secret", False),
    (None, "Secret", False),
    ("v1", None, False),
])
def test_is_secret(api_version: str | None, kind: str | None, secret: bool) -> None:
    assert is_secret(api_version, kind) is secret
    assert is_secret_object({"apiVersion": api_version, "kind": kind}) is secret


def test_redaction_follows_the_same_rule() -> None:
    core = {"apiVersion": "v1", "kind": "Secret", "data": {"k": "dmFsdWU="}}
    custom = {"apiVersion": "example.com/v1", "kind": "Secret", "data": {"k": "plain"}}
    assert redact_secret(core)["data"] == {"k": "<redacted>"}
    assert redact_secret(custom) is custom


@pytest.mark.parametrize(("ref", "type_name", "display", "title"), [
    (ObjectRef("example.com/v1", "Widget", "shop", "w"), "widget.example.com", "widget.example.com/w -n shop",
     "Widget shop/w"),
    (ObjectRef("apps/v1", "Deployment", None, "web"), "deployment.apps", "deployment.apps/web", "Deployment web"),
    (ObjectRef("v1", "Secret", "ns", "s"), "secret", "secret/s -n ns", "Secret ns/s"),
    (ObjectRef("v1", "Namespace", None, "ns"), "namespace", "namespace/ns", "Namespace ns"),
])
def test_object_ref_names_the_object_as_kubectl_does(ref: ObjectRef, type_name: str, display: str,
                                                     title: str) -> None:
    assert ref.type_name == type_name
    assert ref.resource_name == f"{type_name}/{ref.name}"
    assert (ref.display(), str(ref), ref.title()) == (display, display, title)


@pytest.mark.parametrize(("api_version", "group"), [("v1", ""), ("apps/v1", "apps"), ("example.com/v1", "example.com")])
def test_group_of(api_version: str, group: str) -> None:
    assert group_of(api_version) == group
    assert ObjectRef(api_version, "K", None, "n").group == group


@pytest.mark.parametrize(("obj", "ref"), [
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}},
     ObjectRef("v1", "ConfigMap", "ns", "c")),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "namespace": ""}},
     ObjectRef("v1", "Node", None, "n")),
    ({"kind": "Widget", "metadata": "not-a-map"}, ObjectRef("", "Widget", None, "")),
])
def test_object_ref_of(obj: dict[str, Any], ref: ObjectRef) -> None:
    assert ObjectRef.of(obj) == ref


def test_object_refs_are_the_same_object_when_all_four_agree() -> None:
    a = ObjectRef("example.com/v1", "Widget", "ns", "w")
    assert a == ObjectRef("example.com/v1", "Widget", "ns", "w")
    others = {ObjectRef("example.com/v2", "Widget", "ns", "w"), ObjectRef("example.com/v1", "Widget", None, "w")}
    assert len({a, *others}) == 3


def test_migration_ref_round_trip() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "ns", "uid": "uid-1"}}
    assert str(ObjectRef.of(widget)) == "widget.example.com/w -n ns"
