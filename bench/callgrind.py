"""The instructions a command runs, counted by valgrind's callgrind: the one measure of the benches
that load on a shared machine does not disturb (wall and CPU times move by 2x from hour to hour)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence


def instructions(cmd: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None) -> int:
    """Instructions of ``cmd`` run to its end (its output is dropped); SystemExit when it or valgrind fails."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    found = [line.split()[-1] for line in proc.stderr.splitlines() if "Collected :" in line]
    if proc.returncode != 0 or not found:
        raise SystemExit(f"valgrind {' '.join(cmd)} failed: {proc.stderr.strip()[-300:]}")
    return int(found[-1])
