"""One redaction of a Secret's values for every output (base/redact.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_fieldown.base.redact import (
    LAST_APPLIED_POINTER,
    REDACTED,
    is_secret_value_path,
    redact_patch_op,
    redact_request_body,
    redact_secret,
    scrub,
    secret_texts,
    shown_value,
)
from kubectl_fieldown.fieldpath import parse_path, path_from_fields

LA = "kubectl.kubernetes.io/last-applied-configuration"


def _secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, **fields}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_secret(data={"a": "YQ==", "gone": None}), _secret(data={"a": REDACTED, "gone": None}),
                 id="data-values-null-stays-null"),
    pytest.param(_secret(stringData={"a": "x"}), _secret(stringData={"a": REDACTED}), id="stringData"),
    pytest.param(_secret(data="not-a-map"), _secret(data=REDACTED), id="badly-typed-section"),
    pytest.param(_secret(data=None), _secret(data=None), id="null-section"),
    pytest.param({**_secret(), "metadata": {"name": "s", "annotations": {LA: "{}", "o": "k"}}},
                 {**_secret(), "metadata": {"name": "s", "annotations": {LA: REDACTED, "o": "k"}}}, id="last-applied"),
    pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "x"}},
                 {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "x"}}, id="not-a-secret"),
    pytest.param({"apiVersion": "example.com/v1", "kind": "Secret", "data": {"a": "x"}},
                 {"apiVersion": "example.com/v1", "kind": "Secret", "data": {"a": "x"}}, id="custom-kind-named-secret"),
])
def test_redact_secret(obj: dict[str, Any], want: dict[str, Any]) -> None:
    assert redact_secret(obj) == want


def test_redact_secret_leaves_the_object_alone() -> None:
    obj = _secret(data={"a": "YQ=="}, metadata={"name": "s", "annotations": {LA: "{}"}})
    redact_secret(obj)
    assert obj["data"] == {"a": "YQ=="} and obj["metadata"]["annotations"] == {LA: "{}"}


@pytest.mark.parametrize(("body", "want"), [
    pytest.param({"data": {"a": "x", "b": None}, "kind": "Secret"},
                 {"kind": "Secret", "data": {"a": REDACTED, "b": REDACTED}}, id="every-value-sections-last"),
    pytest.param({"stringData": None}, {"stringData": REDACTED}, id="null-section-present"),
    pytest.param({"metadata": {"annotations": {LA: "{}", "o": "k"}}},
                 {"metadata": {"annotations": {LA: REDACTED, "o": "k"}}}, id="last-applied"),
    pytest.param({"metadata": {"name": "s"}}, {"metadata": {"name": "s"}}, id="nothing-secret"),
    pytest.param(["not", "a", "body"], ["not", "a", "body"], id="not-a-mapping"),
])
def test_redact_request_body(body: Any, want: Any) -> None:
    got = redact_request_body(body)
    assert got == want
    if isinstance(want, dict):
        assert list(got) == list(want), "the order the write outputs print"


@pytest.mark.parametrize(("op", "want"), [
    pytest.param({"op": "add", "path": LAST_APPLIED_POINTER, "value": "{}"},
                 {"op": "add", "path": LAST_APPLIED_POINTER, "value": REDACTED}, id="the-annotation"),
    pytest.param({"op": "test", "path": LAST_APPLIED_POINTER, "value": "{}"},
                 {"op": "test", "path": LAST_APPLIED_POINTER, "value": "{}"}, id="test-op-kept"),
    pytest.param({"op": "replace", "path": "/metadata/annotations", "value": {LA: "{}", "o": "k"}},
                 {"op": "replace", "path": "/metadata/annotations", "value": {LA: REDACTED, "o": "k"}},
                 id="the-annotations-map"),
    pytest.param({"op": "remove", "path": LAST_APPLIED_POINTER}, {"op": "remove", "path": LAST_APPLIED_POINTER},
                 id="no-value"),
    pytest.param({"op": "replace", "path": "/metadata/managedFields", "value": []},
                 {"op": "replace", "path": "/metadata/managedFields", "value": []}, id="other-path"),
])
def test_redact_patch_op(op: dict[str, Any], want: dict[str, Any]) -> None:
    assert redact_patch_op(op) == want


def test_last_applied_pointer_escapes_the_slash() -> None:
    assert LAST_APPLIED_POINTER == "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"


@pytest.mark.parametrize(("path", "secret"), [
    (".data.a", True),
    (".data", True),
    (".stringData.x", True),
    (".metadata.annotations.other", False),
    (".metadata.labels.data", False),
    (".type", False),
])
def test_is_secret_value_path(path: str, secret: bool) -> None:
    assert is_secret_value_path(parse_path(path)) is secret


def test_the_last_applied_annotation_is_a_secret_value_path() -> None:
    assert is_secret_value_path(path_from_fields("metadata", "annotations", LA))
    assert not is_secret_value_path(path_from_fields("metadata", LA))


def test_redact_secret_copies_and_keeps_keys() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "data": {"a": "c2VjcmV0", "b": None}, "stringData": {"c": "x"},
              "metadata": {"name": "s", "annotations": {
                  "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"a":"c2VjcmV0"}}', "other": "keep"}}}
    before = copy.deepcopy(secret)
    out = redact_secret(secret)
    assert secret == before, "the input is not modified"
    assert out["data"] == {"a": REDACTED, "b": None}
    assert out["stringData"] == {"c": REDACTED}
    assert out["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": REDACTED,
                                              "other": "keep"}
    cm = {"kind": "ConfigMap", "data": {"a": "b"}}
    assert redact_secret(cm) is cm


@pytest.mark.parametrize(("path", "value", "shown"), [
    (".data.a", "c2VjcmV0", REDACTED),
    (".data.a", None, None),  # a removal says nothing of the value
    (".stringData", {"a": "x"}, REDACTED),
    (path_from_fields("metadata", "annotations", LA), "{}", REDACTED),
    (".metadata.annotations", {LA: "{}", "o": "k"}, {LA: REDACTED, "o": "k"}),
    (".metadata", {"name": "s", "annotations": {LA: "{}"}}, {"name": "s", "annotations": {LA: REDACTED}}),
    (".metadata.labels", {"team": "a"}, {"team": "a"}),
])
def test_shown_value(path: Any, value: Any, shown: Any) -> None:
    assert shown_value(parse_path(path) if isinstance(path, str) else path, value) == shown


def test_shown_value_of_the_whole_object() -> None:
    assert shown_value((), {"data": {"a": "x"}, "type": "Opaque"}) == {
        "apiVersion": "v1", "kind": "Secret", "data": {"a": REDACTED}, "type": "Opaque"}


def test_secret_texts_and_scrub() -> None:
    la = '{"data":{"a":"c2VjcmV0"}}'
    secret = {**_secret(data={"a": "c2VjcmV0", "b": None, "c": ["nested-value"]}, stringData={"q": 'say "hi"!'}),
              "metadata": {"name": "s", "annotations": {LA: la}}}
    texts = secret_texts(secret, None, {"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "visible"}})
    assert {"c2VjcmV0", "nested-value", 'say "hi"!', 'say \\"hi\\"!', la} <= texts
    assert "visible" not in texts
    assert scrub('got "c2VjcmV0" and nested-value, \'say \\"hi\\"!\'', texts) == \
        f'got "{REDACTED}" and {REDACTED}, \'{REDACTED}\''
    # values too short to scrub without garbling every message are left to the structural redaction
    assert secret_texts(_secret(data={"a": "abc"})) == frozenset()
