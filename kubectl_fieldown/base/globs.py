"""Shell-style patterns of manager names (``kubectl-*``), matched as :func:`fnmatch.fnmatchcase`
matches them (case-sensitive, ``*``/``?``/``[...]``)."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable

__all__ = ["matches_any"]


@functools.lru_cache(maxsize=64)
def _glob_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    # one compiled alternation per tuple of patterns: the audit matches every entry of every object
    # against the same few tuples, and fnmatchcase per pattern costs a cache lookup and a call each
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs) or "(?!)")


def matches_any(name: str, globs: Iterable[str]) -> bool:
    """Does ``name`` match one of ``globs`` (none: no)?"""
    return _glob_regex(globs if type(globs) is tuple else tuple(globs)).match(name) is not None
