"""``show -i FILE`` in its common forms, read without typer.

Offline ``show`` is the command people run most and in loops, and typer (with its vendored click)
is a third of that run's start-up. :func:`parse` reads the command lines made only of the options
below, exactly as the typer command reads them; any other word (a flag it does not know, a name,
``--help``, a value it is unsure of, an option given twice) returns None, and typer reads the
line instead, so that every message and every other form stays typer's.
tests/cli/test_show_fast.py runs each accepted line both ways and compares the results.
"""

from __future__ import annotations

from collections.abc import Sequence

from .fastwords import read_words
from .showrun import ShowOutput, ShowRequest, TimeMode

__all__ = ["parse"]

#: the single-valued options, by every spelling, and the field of the request they set
_SINGLE = {"-i": "input", "--input": "input", "-o": "output", "--output": "output", "--time": "time"}
#: the repeatable ones
_REPEATED = {"--manager": "managers", "--path": "paths"}
_SWITCHES = {"--show-unowned": "show_unowned", "--show-secret-values": "show_secret_values"}
#: the -o formats printed without a template; the kubectl ones (name, jsonpath=...) go through typer
_OUTPUTS = {o.value: o for o in (ShowOutput.tree, ShowOutput.blame, ShowOutput.table, ShowOutput.json,
                                 ShowOutput.yaml)}
_TIMES = {t.value: t for t in TimeMode}


def parse(args: Sequence[str]) -> ShowRequest | None:
    """The request of ``show ARGS...`` (``args[0] == "show"``) when typer is not needed to read it."""
    if not args or args[0] != "show":
        return None
    words = read_words(args[1:], _SINGLE, _REPEATED, _SWITCHES)
    if words is None:
        return None
    single, repeated, switches = words.single, words.repeated, words.switches
    if "input" not in single:
        return None
    output = _OUTPUTS.get(single.get("output", "tree"))
    time = _TIMES.get(single.get("time", "relative"))
    if output is None or time is None:
        return None  # another spelling, a kubectl format or a wrong one: typer's to read or to refuse
    return ShowRequest(input_file=single["input"], output=output, time=time, managers=repeated["managers"],
                       paths=repeated["paths"], show_unowned="show_unowned" in switches,
                       show_secret_values="show_secret_values" in switches)
