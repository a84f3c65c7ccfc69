"""Without colour the renderers print through plain stand-ins instead of rich (start-up time):
what they print must be exactly what rich prints without colour."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import pytest

from kubectl_fieldown.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _run(args: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    return buf.getvalue()


def _rich_without_colour(stream: TextIO | None = None) -> Any:
    """The console make_console made before the plain stand-ins: rich, no colour, no wrapping."""
    from rich.console import Console

    return Console(file=stream if stream is not None else sys.stdout, color_system=None, no_color=True,
                   highlight=False, emoji=False, markup=False, width=10_000, soft_wrap=True)


@pytest.mark.parametrize(
    "args",
    [
        ["show", "-i", str(EXAMPLES / "deployment.yaml")],
        ["show", "-i", str(EXAMPLES / "deployment.yaml"), "-o", "blame", "--time", "full"],
        ["show", "-i", str(EXAMPLES / "deployment.yaml"), "-o", "table"],
        ["show", "-i", str(EXAMPLES / "deployment.yaml"), "--show-unowned", "--time", "none"],
        ["show", "-i", str(EXAMPLES / "secret.yaml")],
    ],
    ids=["tree", "blame", "table", "unowned", "secret"],
)
def test_plain_equals_rich_without_colour(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    from kubectl_fieldown.render import blame, common, table, tree

    monkeypatch.setenv("NO_COLOR", "1")
    plain = _run(args)
    for module in (common, tree, blame, table):
        monkeypatch.setattr(module, "make_console", _rich_without_colour)
    rich_plain = _run(args)
    assert plain == rich_plain
    assert not ANSI.search(plain)


def test_plain_show_does_not_import_rich() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from kubectl_fieldown.cli.main import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): main(['show', '-i', {str(EXAMPLES / 'deployment.yaml')!r}])\n"
        "print(any(m == 'rich' or m.startswith('rich.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
