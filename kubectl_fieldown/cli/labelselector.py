"""Label selectors checked before any request, so that a malformed one is a usage error, not an
empty result. Without typer: :mod:`.options` (the ``-l`` option) and :mod:`.auditfast` use it."""

from __future__ import annotations

import re

__all__ = ["selector_problem"]

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_KEY = rf"({_NAME}/)?{_NAME}"
_VALUE = rf"({_NAME})?"
_REQUIREMENT = re.compile(
    rf"\s*(!\s*{_KEY}|{_KEY}\s*((==?|!=)\s*{_VALUE}|\s(in|notin)\s*\(\s*{_VALUE}(\s*,\s*{_VALUE})*\s*\)"
    rf"|\s*[<>]\s*-?[0-9]+)?)\s*")


def selector_problem(text: str) -> str | None:
    """Why ``text`` is not a label selector in the syntax the API server parses (None: it is one).
    Checked before any request, so a malformed selector is a usage error, not an empty result."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if depth != 0:
        return "unbalanced parentheses"
    for part in parts:
        if not _REQUIREMENT.fullmatch(part):
            return f"cannot parse {part.strip()!r}"
    return None
