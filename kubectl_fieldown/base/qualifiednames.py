"""Label keys and values, annotation keys and object names, as apimachinery checks them
(``api/validate/content``: ``IsLabelKey``, ``IsLabelValue``, ``IsDNS1123Subdomain``), with its words.

Each function returns the messages of what is wrong (none: valid). Lengths are Go's, in UTF-8
bytes; the regular expressions are ASCII and match the whole string (Go's ``$`` is the end of the text).
"""

from __future__ import annotations

import re

__all__ = ["dns1123_subdomain_errors", "go_lower", "label_key_errors", "label_value_errors"]

_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY = re.compile(_KEY_FMT)
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character")
_VALUE_FMT = f"({_KEY_FMT})?"
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character")
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def _max_len(n: int, unit: str = "bytes") -> str:
    # (util/validation, which checks object names, says "characters"; api/validate/content "bytes")
    return f"must be no more than {n} {unit}"


def _size(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def dns1123_subdomain_errors(value: str, unit: str = "bytes") -> list[str]:
    """``unit``: the word for the length limit (``characters`` where an object's name is checked)."""
    errs = []
    if _size(value) > 253:
        errs.append(_max_len(253, unit))
    if _SUBDOMAIN.fullmatch(value) is None:
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(value: str) -> list[str]:
    """``IsQualifiedName``: an optional DNS subdomain prefix and ``/``, and a name part."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain_errors(prefix)]
    else:
        return [f"a valid label key {_regex_error(_KEY_MSG, _KEY_FMT, 'MyName', 'my.name', '123-abc')} with an "
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part " + _max_len(63))
    if _KEY.fullmatch(name) is None:
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if _size(value) > 63:
        errs.append(_max_len(63))
    if value and _KEY.fullmatch(value) is None:
        errs.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def go_lower(s: str) -> str:
    """Go's ``strings.ToLower``: rune by rune, one rune each (Python's own maps U+0130 to two)."""
    if s.isascii():
        return s.lower()
    return "".join("i" if c == "\u0130" else c.lower() if len(c.lower()) == 1 else c for c in s)
