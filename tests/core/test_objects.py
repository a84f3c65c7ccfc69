"""One answer to "is this a Secret" for every output and check (objects.py)."""

from __future__ import annotations

import pytest

from kubectl_fieldown.objects import is_secret, is_secret_object
from kubectl_fieldown.redact import redact_secret


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
