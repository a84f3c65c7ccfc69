"""``kubectl fieldown version``."""

from __future__ import annotations

import platform

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


@handle_errors
def options() -> None:
    """Print the list of flags inherited by all commands (kubectl's generic flags)."""
    typer.echo(options_text())


def register(app: typer.Typer) -> None:
    app.command("version", epilog=EPILOG)(version)
    app.command("options", epilog=OPTIONS_EPILOG)(options)
