"""An Apply to an object nobody manages yet (apimachinery ``skipnonapplied.go``).

When the live object's managedFields are empty, its current fields are first recorded as
written by ``before-first-apply``, so the first applier does not silently take them all.
"""

from __future__ import annotations

from typing import Any

from ..ownership.managedfields import BEFORE_FIRST_APPLY
from . import structuredmerge
from .managed import Managed
from .request import WriteRequest
from .rules import empty_object


def apply_skip_non_applied(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: Managed,
    req: WriteRequest,
) -> tuple[dict[str, Any] | None, Managed]:
    if not managed.fields:
        empty = empty_object(req.rules)
        managed = structuredmerge.update(empty, live, managed, req.replace(manager=BEFORE_FIRST_APPLY))
    return structuredmerge.apply(live, cfg, managed, req)
