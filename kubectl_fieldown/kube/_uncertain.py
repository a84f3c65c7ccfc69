"""Writes whose outcome is uncertain: answered 5xx (a proxy's 504, an API server timing out on
etcd) or not at all (a read timeout, a connection broken after the request was sent). The server
may have committed them, so :func:`kubectl_fieldown.kube.writes.execute` reads the object back
(:func:`read_back`) instead of reporting "failed" as if nothing had been written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _faults
from .errors import ApiError, KubeError, Unreachable, is_fatal

if TYPE_CHECKING:
    from .client import ClusterClient
    from .target import ObjectTarget

__all__ = ["MaybeWritten", "Uncertain", "read_back"]


class MaybeWritten(Exception):
    """A write answered 5xx, or not at all: the server may have committed it."""

    def __init__(self, error: KubeError) -> None:
        super().__init__(str(error))
        self.error = error
        self.answered = f"was answered {error.code}" if isinstance(error, ApiError) else "got no answer"


class Uncertain(Exception):
    """What an outcome says after such a write: ``maybe`` — it may have been made."""

    def __init__(self, message: str, maybe: bool = True) -> None:
        super().__init__(message)
        self.maybe = maybe


def read_back(client: ClusterClient, target: ObjectTarget, e: MaybeWritten, tested: str) -> dict[str, Any]:
    """After a write that may have been made: the object as it is now, if it changed since
    ``tested`` (the write, or someone else, wrote it: re-plan from it). Raises what the outcome
    says when nothing was written or when the object cannot be read back."""
    try:
        _faults.read_back_fails(str(getattr(client, "server", "")))
        latest = client.get(target.res, target.name, target.namespace)
    except KubeError as read_error:
        if isinstance(read_error, Unreachable):
            raise Unreachable(read_error.server, f"{read_error.reason}; the write to {target.describe()} before it "
                                                 f"{e.answered} and may have been made", delivered=True) from None
        if is_fatal(read_error):
            raise
        raise Uncertain(f"{e.error}; it may have been written (reading it back failed: {read_error}); running the "
                         "command again reads it and finishes the work or finds it done") from None
    if str((latest.get("metadata") or {}).get("resourceVersion") or "") == tested:
        raise Uncertain(f"{e.error} (read back: the object is unchanged, this write was not made)", maybe=False)
    return latest
