"""``kubectl fieldown version``."""

from __future__ import annotations

import platform

import typer

from .. import __version__
from .errors import handle_errors

__all__ = ["register", "version"]

EPILOG = """\b
Examples:
  kubectl fieldown version"""


@handle_errors
def version() -> None:
    """Print the version of kubectl-fieldown and of the Python running it."""
    typer.echo(f"kubectl-fieldown {__version__} (Python {platform.python_version()})")


def register(app: typer.Typer) -> None:
    app.command("version", epilog=EPILOG)(version)
