"""Label keys and values, annotation keys, names (base/qualifiednames.py): each row's messages are
the lab server's (apiextensions-apiserver v1.36.4, a dry-run create of a custom resource with that
label, annotation or name); tests/engine/test_objectmeta_differential.py draws more at random."""

from __future__ import annotations

import pytest

from kubectl_fieldown.base.qualifiednames import (
    dns1123_subdomain_errors,
    go_lower,
    label_key_errors,
    label_value_errors,
)

_KEY_RX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
           "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_VALUE_RX = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
             "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_SUBDOMAIN_RX = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize(("key", "errors"), [
    ("app", []),
    ("a.b_c-d", []),
    ("example.com/x", []),
    ("/b", ["prefix part must be non-empty"]),
    ("a/", ["name part must be non-empty", "name part " + _KEY_RX]),
    ("x-", ["name part " + _KEY_RX]),
    ("x" * 64, ["name part must be no more than 63 bytes"]),
    ("a..b/c", ["prefix part " + _SUBDOMAIN_RX]),
    ("a" * 254 + "/b", ["prefix part must be no more than 253 bytes"]),
])
def test_label_keys(key: str, errors: list[str]) -> None:
    assert label_key_errors(key) == errors


@pytest.mark.parametrize(("value", "errors"), [
    ("", []),
    ("A_b.c", []),
    ("1.2.3+b", [_VALUE_RX]),
    ("\u00e9", [_VALUE_RX]),
    ("x" * 64, ["must be no more than 63 bytes"]),
])
def test_label_values(value: str, errors: list[str]) -> None:
    assert label_value_errors(value) == errors


def test_a_name_says_characters_where_a_label_prefix_says_bytes() -> None:
    assert dns1123_subdomain_errors("a" * 254, "characters") == ["must be no more than 253 characters"]
    assert dns1123_subdomain_errors("Bad", "characters") == [_SUBDOMAIN_RX]


def test_go_lower_keeps_one_rune_for_one() -> None:
    assert go_lower("\u0130\u212aA") == "ika"
