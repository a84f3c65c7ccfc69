"""The words of a command line read without typer (:mod:`.showfast`, :mod:`.auditfast`).

Each reader names its options in three tables (single-valued, repeatable, switches: every spelling
to the field it sets); :func:`read_words` reads the words after the command as click would read
them, or returns None at the first word it is unsure of, so that typer reads the line instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..base.record import Record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["Words", "read_words"]


class Words(Record, mutable=True):
    """What a command line's options set: a single value, the values of a repeatable option (in
    order), and the switches given, each by field name (filled in place as the words are read)."""

    __slots__ = ("repeated", "single", "switches")
    single: Final[dict[str, str]]
    repeated: Final[dict[str, list[str]]]
    switches: Final[set[str]]

    def __init__(self, single: dict[str, str], repeated: dict[str, list[str]], switches: set[str]) -> None:
        self.single = single
        self.repeated = repeated
        self.switches = switches


def read_words(words: Sequence[str], single: Mapping[str, str], repeated: Mapping[str, str],
               switches: Mapping[str, str]) -> Words | None:
    """``words`` (the command line after the command) as the options of the three tables set them;
    None for a word that is none of them, a value missing or one that looks like a flag (``-``,
    stdin, is a value), a switch with ``=``, or a single-valued option or a switch given twice."""
    out = Words({}, {field: [] for field in repeated.values()}, set())
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in switches and not eq:
            if switches[name] in out.switches:
                return None
            out.switches.add(switches[name])
            i += 1
            continue
        if name not in single and name not in repeated:
            return None
        if eq:
            value = attached
            i += 1
        elif i + 1 < len(words) and (words[i + 1] == "-" or not words[i + 1].startswith("-")):
            value = words[i + 1]
            i += 2
        else:
            return None  # a missing value, or one that looks like a flag: typer's to read or refuse
        if name in repeated:
            out.repeated[repeated[name]].append(value)
        elif single[name] in out.single:
            return None
        else:
            out.single[single[name]] = value
    return out
