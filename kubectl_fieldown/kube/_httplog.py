"""kubectl's request log on stderr: ``-v=6`` each request with its status and time, ``-v=7`` its
headers (credentials masked as kubectl masks them), ``-v=8`` the bodies, truncated."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any

from ..base.value import escape_controls

__all__ = ["log_request", "log_response"]


def _log(line: str) -> None:
    sys.stderr.write(escape_controls(line) + "\n")
    sys.stderr.flush()


def _shown_body(data: bytes | None, limit: int = 1024) -> str:
    text = (data or b"").decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + f" [truncated {len(text) - limit} chars]"


def log_request(method: str, url: str, headers: Mapping[str, str], body: bytes | None, verbosity: int) -> None:
    """kubectl's -v=7 (headers) and -v=8 (body): credentials are masked as kubectl masks them."""
    _log(f"{method} {url}")
    for key, value in headers.items():
        if key.lower() in ("authorization", "proxy-authorization"):
            value = value.split(" ", 1)[0] + " <masked>"
        canonical = "-".join(part.capitalize() for part in key.split("-"))  # as Go prints header names
        _log(f"    {canonical}: {value}")
    if verbosity >= 8 and body:
        _log(f"Request Body: {_shown_body(body)}")


def log_response(method: str, url: str, resp: Any, data: bytes, started: float, verbosity: int) -> None:
    reason = getattr(resp, "reason", "") or ""
    took = round((time.monotonic() - started) * 1000)
    _log(f"{method} {url} {resp.status} {reason} in {took} milliseconds".replace("  ", " "))
    if verbosity >= 8:
        _log(f"Response Body: {_shown_body(data)}")
