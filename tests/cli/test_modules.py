"""One module per command, none importing another: running a command loads its own module (and the
libraries it uses, such as cli/writes.py and cli/select.py), never the other commands'."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from kubectl_fieldown.cli import main as cli_main

COMMAND_MODULES = cli_main.COMMAND_MODULES

# prints the command modules loaded after the import of argv[1] (a cli module name)
_IMPORT_ONE = (
    "import importlib, sys\n"
    "from kubectl_fieldown.cli.main import COMMAND_MODULES\n"
    "importlib.import_module('kubectl_fieldown.cli.' + sys.argv[1])\n"
    "print(' '.join(sorted(m for m in COMMAND_MODULES if 'kubectl_fieldown.cli.' + m in sys.modules)))\n"
)

# prints the command modules loaded after main(argv[1:]) ran
_RUN = (
    "import contextlib, io, sys\n"
    "from kubectl_fieldown.cli.main import COMMAND_MODULES, main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(sys.argv[1:])\n"
    "print(code, ' '.join(sorted(m for m in COMMAND_MODULES if 'kubectl_fieldown.cli.' + m in sys.modules)))\n"
)


def _python(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_command_modules_are_listed_in_the_order_of_the_help() -> None:
    commands = [name for name, _ in cli_main.COMMAND_SUMMARIES if name not in ("options", "completion")]
    assert [m.replace("_", "-") for m in COMMAND_MODULES] == commands


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_a_command_module_imports_no_other_command_module(module: str) -> None:
    assert _python(_IMPORT_ONE, module) == module


# cli/version.py also holds 'options', the list of kubectl's generic flags, and 'completion', the
# shell scripts (run with every module: cli/completion.py is the completion machinery every command
# imports, not a command module)
_ALSO_REGISTERED = {"version": ["options", "completion"]}


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_register_registers_exactly_the_modules_command(module: str) -> None:
    command = typer.main.get_command(cli_main.build_app((module,)))
    # a group of one command is still a group here: build_app always sets a callback
    assert list(getattr(command, "commands", {})) == [module.replace("_", "-"), *_ALSO_REGISTERED.get(module, [])]


@pytest.mark.parametrize("module", ["reset", "strip_last_applied", "handover", "undo", "migrate"])
def test_a_write_commands_help_loads_only_its_module(module: str) -> None:
    assert _python(_RUN, module.replace("_", "-"), "--help") == f"0 {module}"
