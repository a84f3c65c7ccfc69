"""Test-only fault injection for the write tests (tests/cli/test_write_kills.py): interruptions and
failures at exact points of a write run, not timings. ``FIELDOWN_TEST_FAULT=N:ACTION`` acts right
after the N-th write the server committed:

* ``kill`` sends SIGKILL to this process, ``int`` SIGINT (Ctrl-C), ``term`` SIGTERM (CI cancelling);
* ``down``: every later write fails as if the server had gone away (nothing more is written);
* ``504``: the write's answer is lost — the server committed it, the tool gets a 504 Gateway Timeout
  (a proxy or load balancer gave up waiting), as the issue 18 reporter saw;
* ``timeout``: the same, as a read timeout (no answer at all);
* ``504-blind``: a 504, and reading the object back fails too (503), so the tool cannot tell.
"""

from __future__ import annotations

import os

__all__ = ["FAULT_ENV", "after_write", "read_back_fails", "writes_down"]

FAULT_ENV = "FIELDOWN_TEST_FAULT"
_state = {"writes": 0, "down": False, "blind": False}


def after_write(server: str) -> None:
    """Called after each write the server answered with success."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    _state["writes"] += 1
    count, _, action = spec.partition(":")
    if _state["writes"] != int(count):
        return
    import signal

    from .errors import RequestContext, Unreachable, error_from_response

    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "int":
        os.kill(os.getpid(), signal.SIGINT)
    elif action == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    elif action == "down":
        _state["down"] = True
    elif action in ("504", "504-blind"):
        _state["blind"] = action == "504-blind"
        raise error_from_response(504, b"<html><body>504 Gateway Time-out</body></html>",
                                  RequestContext(verb="patch", server=server, path="(FIELDOWN_TEST_FAULT)"))
    elif action == "timeout":
        raise Unreachable(server, "no answer within 60s (read timeout; FIELDOWN_TEST_FAULT)", delivered=True)


def writes_down() -> bool:
    return bool(_state["down"])


def read_back_fails(server: str) -> None:
    """After ``504-blind``: reading the object back answers 503 (once)."""
    if _state["blind"]:
        _state["blind"] = False
        from .errors import RequestContext, error_from_response

        raise error_from_response(503, b"", RequestContext(verb="get", server=server, path="(FIELDOWN_TEST_FAULT)"))
