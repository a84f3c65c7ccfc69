"""Ctrl-C at every moment of a run: a quiet exit 130, never a traceback; an ignored SIGINT stays
ignored (issue 9). The audit's partial results are tested in test_audit_robustness.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

# the child stands for a command typed in a terminal: SIGINT has Python's default handler
_TERMINAL = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)


def test_ctrl_c_while_the_command_line_is_being_imported() -> None:
    """A KeyboardInterrupt from inside typer's or click's import printed a traceback (exit 1)."""
    proc = _run(_TERMINAL + "import os\nimport kubectl_fieldown.cli\nos.kill(os.getpid(), signal.SIGINT)\n"
                "import kubectl_fieldown.cli.main\nprint('not reached')\n")
    assert proc.returncode == 130
    assert proc.stdout == "" and proc.stderr == "\n"


@pytest.mark.parametrize(
    ("start", "after_import", "after_main"),
    [
        ("signal.default_int_handler", "_interrupted_while_starting", "default_int_handler"),
        ("signal.SIG_IGN", "1", "1"),  # SIG_IGN: nohup, background jobs
        ("lambda *a: None", "<lambda>", "<lambda>"),  # a program that embeds the CLI keeps its own
    ],
)
def test_sigint_handlers(start: str, after_import: str, after_main: str) -> None:
    proc = _run(
        "import signal, contextlib, io\n"
        f"signal.signal(signal.SIGINT, {start})\n"
        "def name():\n"
        "    h = signal.getsignal(signal.SIGINT)\n"
        "    return h.__name__ if callable(h) else str(int(h))\n"
        "import kubectl_fieldown.cli.main as m\n"
        "print(name())\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    m.main(['version'])\n"
        "print(name())\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [after_import, after_main]
