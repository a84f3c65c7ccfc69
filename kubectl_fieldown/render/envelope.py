"""The one envelope of every command's machine output (``-o json`` / ``-o yaml``; docs/output.md).

Every document starts with ``apiVersion: fieldown.dev/v1``, a ``kind`` naming what it is and the
``version`` of that kind's keys — the convention ``conflicts`` (``FieldownConflicts``, version 2)
and ``audit`` (``FieldownAudit``, version 1) already followed, now kept by every command. The keys
a document had before are unchanged, so scripts that read them keep working; ``kind`` lets a
script that is handed any document tell which one it is, as a Kubernetes object's does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["API_VERSION", "KINDS", "envelope"]

API_VERSION = "fieldown.dev/v1"

#: kind -> the version of its keys (bumped only if a key is ever renamed or removed)
KINDS: dict[str, int] = {
    "FieldownShow": 1,            # show
    "FieldownConflicts": 2,       # conflicts
    "FieldownAudit": 1,           # audit
    "FieldownWrite": 1,           # migrate, strip-last-applied, handover, reset, undo (``command`` says which)
    "FieldownBackupRuns": 1,      # undo --list
}


def envelope(kind: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` under the envelope's keys (which come first)."""
    return {"apiVersion": API_VERSION, "kind": kind, "version": KINDS[kind],
            **{k: v for k, v in body.items() if k not in ("apiVersion", "kind", "version")}}
