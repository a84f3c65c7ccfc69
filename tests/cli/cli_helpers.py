"""Running the command line in-process for tests: exit code, stdout and stderr, as the console
script would produce them."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from kubectl_fieldown.cli.main import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def item(self) -> dict[str, Any]:
        """The one item of a JSON output."""
        (item,) = self.json()["items"]
        assert isinstance(item, dict)
        return item

    @property
    def text(self) -> str:
        """Standard output without colour codes."""
        return ANSI.sub("", self.out)

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def run(*args: str, stdin: str = "") -> Result:
    """``kubectl-fieldown ARGS`` in this process, with ``stdin`` as standard input."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = saved
    return Result(code, out.getvalue(), err.getvalue())
