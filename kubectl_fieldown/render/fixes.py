"""A fix as a person reads and runs it: the ``kubectl fieldown ...`` command line, and the edits."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from ..audit.findings import ObjectFix

__all__ = ["PROG", "command_line", "fix_lines"]

PROG = "kubectl fieldown"

_SAFE_WORD = re.compile(r"[\w@%+=:,./-]+\Z", re.ASCII).match  # shlex.quote's own test, in one C call


def command_line(argv: Sequence[str]) -> str:
    """``kubectl fieldown`` and the words, shell-quoted (empty when there are none)."""
    if not argv:
        return ""
    return PROG + " " + " ".join([w if _SAFE_WORD(w) else shlex.quote(w) for w in argv])


def fix_lines(fix: ObjectFix) -> list[str]:
    """What the text output says of an object's fix, one line each."""
    if not fix.verified:
        return [f"no safe fix for {fix.applier or 'this object'}: {p}" for p in fix.problems]
    out = [f"then: {e}" if fix.runnable else e for e in fix.edits()]
    line = command_line(fix.argv())
    if line:
        out.insert(0, line)
    out += fix.notes
    return out
