"""The output flags of one run that every renderer obeys: ``--color`` and ``--no-headers``.

They are set by the flags' callbacks when the command line is parsed (cli/options.py) and put back
to their defaults before each run (cli/main.py), so that the renderers need no extra parameter
through every layer. Nothing here imports anything: the startup stays as small as it was.
"""

from __future__ import annotations

__all__ = ["color_mode", "no_headers", "reset", "set_color_mode", "set_no_headers"]

_state = {"color": "auto", "no_headers": False}


def reset() -> None:
    _state["color"] = "auto"
    _state["no_headers"] = False


def set_color_mode(mode: str) -> None:
    """``auto`` (a terminal, unless NO_COLOR), ``always`` (even into a pipe) or ``never``."""
    _state["color"] = mode


def color_mode() -> str:
    return str(_state["color"])


def set_no_headers(value: bool) -> None:
    _state["no_headers"] = value


def no_headers() -> bool:
    return bool(_state["no_headers"])
