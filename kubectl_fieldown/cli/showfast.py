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
    single: dict[str, str] = {}
    repeated: dict[str, list[str]] = {"managers": [], "paths": []}
    switches: set[str] = set()
    words = list(args[1:])
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in _SWITCHES and not eq:
            if _SWITCHES[name] in switches:
                return None
            switches.add(_SWITCHES[name])
            i += 1
            continue
        if name not in _SINGLE and name not in _REPEATED:
            return None
        if eq:
            value = attached
            i += 1
        elif i + 1 < len(words) and (words[i + 1] == "-" or not words[i + 1].startswith("-")):
            value = words[i + 1]
            i += 2
        else:
            return None  # a missing value, or one that looks like a flag: typer's to read or refuse
        if name in _REPEATED:
            repeated[_REPEATED[name]].append(value)
        elif _SINGLE[name] in single:
            return None
        else:
            single[_SINGLE[name]] = value
    if "input" not in single:
        return None
    output = _OUTPUTS.get(single.get("output", "tree"))
    time = _TIMES.get(single.get("time", "relative"))
    if output is None or time is None:
        return None  # another spelling, a kubectl format or a wrong one: typer's to read or to refuse
    return ShowRequest(input_file=single["input"], output=output, time=time, managers=repeated["managers"],
                       paths=repeated["paths"], show_unowned="show_unowned" in switches,
                       show_secret_values="show_secret_values" in switches)
