"""``kubectl fieldown version``."""

from __future__ import annotations

import enum
import platform
import sys
from typing import Annotated

import typer

from .. import __version__
from .errors import handle_errors
from .globalflags import options_text

__all__ = ["options", "register", "version"]

EPILOG = """\b
Examples:
  kubectl fieldown version"""


@handle_errors
def version() -> None:
    """Print the version of kubectl-fieldown and of the Python running it."""
    typer.echo(f"kubectl-fieldown {__version__} (Python {platform.python_version()})")


OPTIONS_EPILOG = """\b
Examples:
  kubectl fieldown options
  kubectl fieldown show widgets/w -n shop --as jane --as-group devs
  kubectl fieldown audit -A --request-timeout 30s -v=6
  kubectl fieldown conflicts -f app.yaml --server https://10.0.0.1:6443 --token "$TOKEN\""""


class Shell(str, enum.Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


COMPLETION_EPILOG = """\b
Examples:
  # bash: load it now, or for every shell
  source <(kubectl fieldown completion bash)
  kubectl fieldown completion bash > ~/.local/share/bash-completion/completions/kubectl-fieldown
\b
  # zsh (compinit loaded) and fish
  source <(kubectl fieldown completion zsh)
  kubectl fieldown completion fish > ~/.config/fish/completions/kubectl-fieldown.fish
\b
The script completes the kubectl-fieldown executable. 'kubectl fieldown <TAB>' is kubectl's own
completion, which runs kubectl_complete-fieldown (installed beside kubectl-fieldown)."""


@handle_errors
def completion(
    ctx: typer.Context,
    shell: Annotated[Shell, typer.Argument(metavar="bash|zsh|fish", help="The shell.", case_sensitive=False)],
) -> None:
    """Print the shell completion script for kubectl-fieldown (bash, zsh or fish), as 'kubectl completion'
    does for kubectl."""
    from .completion import completion_script
    from .main import COMPLETE_VAR, EXECUTABLE

    sys.stdout.write(completion_script(ctx.find_root().command, shell.value, EXECUTABLE, COMPLETE_VAR))


@handle_errors
def options() -> None:
    """Print the list of flags inherited by all commands (kubectl's generic flags)."""
    typer.echo(options_text())


def register(app: typer.Typer) -> None:
    app.command("version", epilog=EPILOG)(version)
    app.command("options", epilog=OPTIONS_EPILOG)(options)
    app.command("completion", epilog=COMPLETION_EPILOG)(completion)
