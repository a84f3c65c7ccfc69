"""The bare root help is built from one-line stand-ins; it must read exactly like the real thing."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest
import typer

from kubectl_fieldown.cli import main as cli_main


def _help(app: typer.Typer) -> str:
    command = typer.main.get_command(app)
    buf = io.StringIO()
    with redirect_stdout(buf):
        command.main(args=["--help"], prog_name=cli_main.PROG_NAME, standalone_mode=False)
    return buf.getvalue()


def test_root_help_equals_the_full_apps() -> None:
    assert _help(cli_main.root_help_app()) == _help(cli_main.build_app())


def test_summaries_are_the_commands_own_first_paragraphs() -> None:
    import inspect

    command = typer.main.get_command(cli_main.build_app())
    ctx = typer.Context(command)
    real = []
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        assert sub is not None
        first = inspect.cleandoc(sub.help or "").split("\n\n")[0]
        real.append((name, " ".join(first.split())))
    assert real == list(cli_main.COMMAND_SUMMARIES)


def test_root_help_does_not_import_command_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys, io, contextlib\n"
        "from kubectl_fieldown.cli import main\n"
        "for args in ([], ['--help'], ['-h'], ['help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()): main.main(args)\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubectl_fieldown.cli.')))\n"
        "print('typer' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # the bare root help is laid out by helptext, without typer (a third of the start-up)
    assert out.split() == ["['kubectl_fieldown.cli.helptext',", "'kubectl_fieldown.cli.main']", "False"]


@pytest.mark.parametrize("columns", [*range(20, 140), 150, 175, 199, 200, 201, 250, 300, 1000])
def test_root_help_without_typer_equals_typers(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    from kubectl_fieldown.cli.helptext import help_width

    assert help_width() == max(columns - 2, 50)
    command = typer.main.get_command(cli_main.root_help_app())
    from kubectl_fieldown.cli.helpformat import install_help_formatter

    install_help_formatter(command)
    buf = io.StringIO()
    with redirect_stdout(buf):
        command.main(args=["--help"], prog_name=cli_main.PROG_NAME, standalone_mode=False)
    assert cli_main.root_help(help_width()).rstrip("\n") + "\n" == buf.getvalue()


def test_root_help_texts_are_what_cleandoc_leaves() -> None:
    import inspect

    for text in (cli_main.HELP, cli_main.EPILOG, *(s for _, s in cli_main.COMMAND_SUMMARIES),
                 *(s for _, s in cli_main.ROOT_OPTIONS)):
        assert inspect.cleandoc(text) == text


def test_root_options_are_typers() -> None:
    command = typer.main.get_command(cli_main.root_help_app())
    ctx = typer.Context(command, help_option_names=["-h", "--help"])
    rows = [rv for p in command.get_params(ctx) if (rv := p.get_help_record(ctx)) is not None]
    assert tuple(rows) == cli_main.ROOT_OPTIONS


def test_bare_help_and_help_read_the_same() -> None:
    assert _run([])[1] == _run(["--help"])[1] == _run(["-h"])[1] == _run(["help"])[1]
    assert _run([])[0] == _run(["--help"])[0] == 0


def _run(args: list[str]) -> tuple[int, str, str]:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_help_command_and_version_flag_read_like_kubectl() -> None:
    from kubectl_fieldown import __version__

    code, out, _ = _run(["--version"])
    assert (code, out.split()[:2]) == (0, ["kubectl-fieldown", __version__])
    assert _run(["help"])[1] == _run(["--help"])[1]
    code, out, _ = _run(["help", "migrate"])
    assert code == 0 and out == _run(["migrate", "--help"])[1]
    assert "'kubectl fieldown help COMMAND'" in _run([])[1]
    code, _, err = _run(["help", "bogus"])
    assert code == 2 and err.strip() == "error: no such command 'bogus' (see 'kubectl fieldown --help')"


def test_usage_errors_name_the_command_without_a_doubled_stop() -> None:
    code, _, err = _run(["migrate", "--to"])
    assert code == 2
    assert err.strip() == "error: option '--to' requires an argument (see 'kubectl fieldown migrate --help')"
    _, _, err = _run(["show", "-o", "bogus", "x"])
    assert err.strip().endswith("'jsonpath', 'custom-columns' (see 'kubectl fieldown show --help')")


def _help_at(columns: int, *args: str) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LINES"}
    env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", *args, "--help"], capture_output=True,
                          text=True, env=env, check=True)
    return proc.stdout


def test_help_fits_an_80_column_terminal() -> None:
    for args in ([], *([c] for c in (*cli_main.COMMAND_MODULES, "options", "completion"))):
        cmd = [a.replace("_", "-") for a in args]
        long = [line for line in _help_at(80, *cmd).splitlines() if len(line) > 80]
        assert long == [], (cmd, long)


def test_help_never_ends_a_line_inside_a_hyphenated_word() -> None:
    """``--fail-on`` or ``kubectl-client-side-apply`` split over two lines would read as two words;
    the running text is filled, not kept at the source's line breaks (``\\b`` is for examples)."""
    import itertools
    import re

    for columns in (60, 80, 100):
        for args in ([], *([c] for c in cli_main.COMMAND_MODULES)):
            cmd = [a.replace("_", "-") for a in args]
            text = _help_at(columns, *cmd)
            split = [line for line in text.splitlines() if re.search(r"\w-$", line)]
            assert split == [], (columns, cmd, split)
            # a paragraph of running text fills its lines: the next line's first word did not fit
            paragraphs = re.split(r"\n(?:Arguments|Options|Commands):", text)[0].split("\n\n")[1:]
            for par in paragraphs:
                lines = par.splitlines()
                short = [a for a, b in itertools.pairwise(lines) if len(a) + 1 + len(b.split()[0]) <= columns - 2]
                assert short == [], (columns, cmd, par)


def test_help_uses_a_wide_terminal_and_never_cuts_the_command_list() -> None:
    import re

    for columns in (80, 200):
        text = _help_at(columns)
        listed = " ".join(text.split("Commands:")[1].split("Examples:")[0].split())
        for name, summary in cli_main.COMMAND_SUMMARIES:
            # whole, wrapped or not (click wraps a long summary at a hyphen too)
            assert re.search(re.escape(name) + r"\s+" + re.escape(summary).replace(r"\-", r"-\s?"),
                             listed.replace("- ", "-")), (columns, name)
        assert "..." not in listed
    wide = _help_at(200).splitlines()
    assert max(len(line) for line in wide) > 100  # no 100-column ceiling of our own


def test_the_command_line_collects_garbage_less_often_and_not_at_exit_and_main_leaves_the_host_alone() -> None:
    import gc
    import subprocess
    import sys

    # run() (the console script, python -m) sets the thresholds before the command runs
    code = ("import gc, sys\n"
            "from kubectl_fieldown.cli import main as m\n"
            "m.main = lambda: print(*gc.get_threshold(), gc.get_freeze_count()) or 3\n"
            "sys.exit = lambda code: print(code, gc.get_freeze_count() > 0)\n"
            "m.run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    during, at_exit = proc.stdout.splitlines()
    *thresholds, frozen = (int(x) for x in during.split())
    assert tuple(thresholds) == cli_main.GC_THRESHOLDS != (700, 10, 10)
    # the objects alive at the end are frozen before the exit (the command's code is passed on), not
    # while it runs
    assert frozen == 0 and at_exit == "3 True"
    # main() is also the library's entry (tests, embedding): it does not touch the process's collector
    before = gc.get_threshold()
    with redirect_stdout(io.StringIO()):
        assert cli_main.main(["version"]) == 0
    assert gc.get_threshold() == before
