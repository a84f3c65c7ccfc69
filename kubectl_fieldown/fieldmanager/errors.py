"""What the server answers when it refuses a write: the field manager's errors and the 409 text.

The ``status`` and ``reason`` of each error are the HTTP code and ``metav1.StatusReason`` the
server would answer; :func:`conflict_message` is apimachinery's ``NewConflictError`` text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..base.record import Record
from ..fieldpath import Path, path_string
from ..ownership.managedfields import ManagerIdentity


class FieldManagerError(Exception):
    """The API server would refuse the request. ``status`` is the HTTP code it would answer."""

    status = 500
    reason: str | None = None

    def __init__(self, message: str, causes: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.causes = causes or []


class BadRequest(FieldManagerError):
    status = 400
    reason = "BadRequest"


class Invalid(FieldManagerError):
    status = 422
    reason = "Invalid"


class FieldConflict(Record):
    """Another manager owns a field the apply would change."""

    __slots__ = ("identity", "path")
    identity: Final[ManagerIdentity]
    path: Final[Path]

    def __init__(self, identity: ManagerIdentity, path: Path) -> None:
        self.identity = identity
        self.path = path

    @property
    def manager(self) -> str:
        return self.identity.manager

    @property
    def path_string(self) -> str:
        return path_string(self.path)


class ApplyConflict(FieldManagerError):
    status = 409
    reason = "Conflict"

    def __init__(self, conflicts: list[FieldConflict], paths: list[str] | None = None) -> None:
        """``paths``: each conflict's path string, when the caller spelled them already."""
        self.conflicts = conflicts
        described: dict[ManagerIdentity, str] = {}  # a few managers, many paths each
        for c in conflicts:
            if c.identity not in described:
                described[c.identity] = c.identity.describe()
        if paths is None:
            paths = [c.path_string for c in conflicts]  # each spelled once, for the message and the causes
        message = conflict_message(conflicts, described, paths)
        # not FieldManagerError's __init__: the causes are built when read (a prediction reads the
        # message alone)
        Exception.__init__(self, message)
        self.message = message
        self._described = described
        self._paths = paths
        self._causes: list[dict[str, str]] | None = None

    @property
    def causes(self) -> list[dict[str, str]]:  # type: ignore[override]
        if self._causes is None:
            described = self._described
            self._causes = [
                {"reason": "FieldManagerConflict", "message": f"conflict with {described[c.identity]}", "field": p}
                for c, p in zip(self.conflicts, self._paths, strict=True)
            ]
        return self._causes


def conflict_message(conflicts: list[FieldConflict], described: Mapping[ManagerIdentity, str] | None = None,
                     paths: list[str] | None = None) -> str:
    """The server's 409 message (AM ``NewConflictError``): managers sorted by identity JSON
    (``described``: each identity's :meth:`~ManagerIdentity.describe`, ``paths``: each conflict's
    path string, when known already)."""
    strings = paths if paths is not None else [c.path_string for c in conflicts]
    if len(conflicts) == 1:
        c = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {c.identity.describe()}: {strings[0]}"
    by: dict[ManagerIdentity, list[str]] = {}
    for c, p in zip(conflicts, strings, strict=True):
        by.setdefault(c.identity, []).append(p)
    lines = []
    for ident in sorted(by, key=lambda i: i.json()):
        text = described.get(ident) if described is not None else None
        lines.append(f"conflicts with {text if text is not None else ident.describe()}:")
        lines.extend(f"- {p}" for p in by[ident])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
