"""The ``kubectl fieldown`` command line (typer).

One module per command (``cli/<command>.py``, each with a ``register(app)``), registered in
:mod:`.main`; shared flags in :mod:`.options`; error reporting and exit codes in :mod:`.errors`.
Command modules import only typer and the pure core at import time: the cluster layer, rich and
PyYAML are imported inside the command body, when they are needed.

Importing this package makes Ctrl-C during the start-up imports a quiet exit 130 (instead of a
KeyboardInterrupt traceback from inside typer or click); :func:`.main.main` restores the usual
KeyboardInterrupt before it runs a command.
"""

import os as _os
import signal as _signal
import sys as _sys
from types import FrameType as _FrameType


def _interrupted_while_starting(signum: int, frame: _FrameType | None) -> None:
    # Ctrl-C while the command line is still being imported: exit as an interrupted run does (130),
    # without the traceback of a KeyboardInterrupt raised inside some import; nothing is written yet
    _sys.stderr.write("\n")
    _sys.stderr.flush()
    _os._exit(130)


def _restore_interrupts() -> None:
    """Ctrl-C raises KeyboardInterrupt again (main() calls this once it can report it)."""
    if _signal.getsignal(_signal.SIGINT) is _interrupted_while_starting:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def _quiet_interrupts_while_starting() -> None:
    """Only where Python itself turns Ctrl-C into KeyboardInterrupt: an ignored SIGINT (nohup, a
    background job) stays ignored, and a program that handles SIGINT itself keeps its handler."""
    if _signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler:
        return
    try:
        _signal.signal(_signal.SIGINT, _interrupted_while_starting)
    except ValueError:
        return  # imported by another thread than the main one, where no handler can be set


_quiet_interrupts_while_starting()
