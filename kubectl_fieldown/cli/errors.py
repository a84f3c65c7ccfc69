"""Turning failures into ``error: <one line>`` on stderr and an exit code, never a traceback.

Exit codes, one model for every command: 0 done; 1 could not do it (object not found, RBAC denial,
server unreachable, an object that failed) — or, for ``conflicts`` and ``audit``, "conflicts
predicted" / "findings", where every error is 2 instead (like diff: CI must not mistake an error for
a result); 2 usage or input errors (bad flags or arguments, files that cannot be read or parsed,
managedFields or FieldsV1 that do not decode, a malformed selector); 130 interrupted; 143 a write
run ended by SIGTERM.
``FIELDOWN_DEBUG=1`` lets exceptions through with their traceback, for bug reports.

Commands wrap their body in :func:`handle_errors`; commands that go on after a failed object
(partial results) use :func:`describe` and :func:`print_error` for each failure instead.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable

__all__ = [
    "DEBUG_ENV",
    "EXIT_FAILURE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Terminated",
    "UsageError",
    "debug_enabled",
    "describe",
    "handle_errors",
    "handle_errors_exiting",
    "one_line",
    "print_error",
    "whole_number",
]

DEBUG_ENV = "FIELDOWN_DEBUG"
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: SIGTERM (CI cancelling a job, ``timeout``): 128 + 15, what a shell reports for a program that a
#: SIGTERM ended — kubectl, which does not catch it, included. Write runs catch it to report first.
EXIT_TERMINATED = 143

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import ParamSpec, TypeVar

    P = ParamSpec("P")
    R = TypeVar("R")


class Terminated(KeyboardInterrupt):
    """SIGTERM during a write run: stops it like Ctrl-C (what was done, the backups), exit 143."""


class UsageError(Exception):
    """Flags or arguments that do not make sense together (exit 2)."""

    exit_code = EXIT_USAGE


def whole_number(text: str, flag: str, low: int, high: int, *, or_else: str = "") -> int:
    """``text`` as a whole number from ``low`` to ``high``, for ``flag`` (:class:`UsageError`
    otherwise; ``or_else`` names the word it also takes, for the message)."""
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number{' or ' + or_else if or_else else ''}, "
                         f"not {text!r}") from None
    if not low <= n <= high:
        raise UsageError(f"{flag} must be between {low} and {high}, not {n}")
    return n


# Input errors (exit 2, their message as it is), each looked up by its module: a module that is not
# loaded raised nothing, and nothing is imported to ask (``--help`` imports none of them). Paths
# only ever come from the command line; schemas from a --schema file or --kube-version; managedFields
# and FieldsV1 the tool cannot read; documents that are not objects.
_INPUT_ERRORS = (
    ("kubectl_fieldown.fieldpath.pathstring", "PathSyntaxError"),
    ("kubectl_fieldown.schema.registry", "SchemaFileError"),
    ("kubectl_fieldown.schema.builtin", "BuiltinSchemaError"),
    ("kubectl_fieldown.schema.crd", "CRDError"),
    ("kubectl_fieldown.schema.openapi", "SchemaError"),
    ("kubectl_fieldown.ownership.managedfields", "ManagedFieldsError"),
    ("kubectl_fieldown.fieldpath.fieldsv1", "FieldsV1Error"),
    ("kubectl_fieldown.manifests.sources", "SourceError"),
)


def _is_input_error(exc: BaseException) -> bool:
    for module, name in _INPUT_ERRORS:
        mod = sys.modules.get(module)
        if mod is not None and isinstance(exc, getattr(mod, name)):
            return True
    return False


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0", "false", "no")


def one_line(text: str) -> str:
    """Error text on one line: a message spread over lines is unreadable in CI logs and greps."""
    return " ".join(part.strip() for part in str(text).strip().splitlines() if part.strip())


def _said(message: str) -> str:
    """A message as it may be printed: on one line, bounded, no control character (messages quote
    names and values from files and clusters), and no credential this process uses, whatever put it
    there."""
    from ..base.redact import scrub_credentials
    from ..base.value import bounded_message, escape_controls

    return escape_controls(bounded_message(one_line(scrub_credentials(str(message)))))


def print_error(message: str) -> None:
    sys.stderr.write(f"error: {_said(message)}\n")
    sys.stderr.flush()


def print_note(message: str) -> None:
    """A hint beside the output (stderr, so that ``-o json`` stays a clean document)."""
    sys.stderr.write(f"note: {_said(message)}\n")
    sys.stderr.flush()


def _is_framework_exception(e: BaseException) -> bool:
    # typer's Exit/Abort and click's usage errors are handled by main.run(), which knows the
    # command path for the usage hint; typer vendors click, so match by module, not by class
    module = type(e).__module__
    return module.startswith(("typer", "click"))


def describe(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code of a known error, or None for an unexpected one (a bug)."""
    if isinstance(exc, UsageError):
        return str(exc), EXIT_USAGE
    # the cluster layer is imported only when a command talks to a cluster; if it is not loaded,
    # this cannot be one of its errors
    kube_errors = sys.modules.get("kubectl_fieldown.kube.errors")
    if kube_errors is not None and isinstance(exc, kube_errors.KubeError):
        return str(exc), int(getattr(exc, "exit_code", EXIT_FAILURE))
    if _is_input_error(exc):
        return str(exc), EXIT_USAGE
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}", EXIT_USAGE
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)", EXIT_TERMINATED
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", EXIT_INTERRUPTED
    return None


def report(exc: BaseException) -> int:
    """Print ``exc`` as one ``error:`` line and return its exit code."""
    known = describe(exc)
    if known is None:
        message = (
            f"internal error: {type(exc).__name__}: {exc} "
            f"(this is a bug; run with {DEBUG_ENV}=1 for a traceback and report it)"
        )
        code = EXIT_FAILURE
    else:
        message, code = known
    print_error(message)
    return code


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Run a command body; known errors become ``error: ...`` + exit code (via ``typer.Exit``):
    each error's own code (1 could not do it, 2 usage); Ctrl-C 130."""
    return _guarded(fn, None)


def handle_errors_exiting(failures: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """:func:`handle_errors`, but every failure exits ``failures``, for commands whose exit 1 means
    something else (``conflicts``: conflicts predicted). Ctrl-C is 130 still."""

    def decorate(body: Callable[P, R]) -> Callable[P, R]:
        return _guarded(body, failures)

    return decorate


def _guarded(body: Callable[P, R], failures: int | None) -> Callable[P, R]:
    @functools.wraps(body)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return body(*args, **kwargs)
        except BrokenPipeError:
            # the reader went away (``| head``): nothing left to say to anyone
            silence_stdout()
            raise _exit(failures or EXIT_FAILURE) from None
        except (Exception, KeyboardInterrupt) as e:
            if _is_framework_exception(e) or debug_enabled():
                raise
            code = report(e)
            if failures is not None and code not in (EXIT_INTERRUPTED, EXIT_TERMINATED):
                code = failures
            raise _exit(code) from None

    return wrapper


def _exit(code: int) -> BaseException:
    import typer

    return typer.Exit(code)


def silence_stdout() -> None:
    """After a broken pipe: Python flushes stdout at exit and would print a BrokenPipeError of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
