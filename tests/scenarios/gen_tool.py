"""``kubectl fieldown ...`` run in a worker process of test_generated.py: the command line in-process
(tests/cli/cli_helpers.py ``run``), so that several run at once without paying for an interpreter
start each time (``main()`` redirects stdout and handles Ctrl-C, so one call per process at a time)."""

from __future__ import annotations

import os
from collections.abc import Mapping


def call(argv: list[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    os.environ.update(env)
    from cli.cli_helpers import run

    r = run(*argv)
    return r.code, r.out, r.err
