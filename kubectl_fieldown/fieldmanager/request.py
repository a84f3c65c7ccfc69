"""What every step of one write reads: who writes, through which endpoint of which resource, when."""

from __future__ import annotations

from dataclasses import dataclass

from .rules import ResourceRules


@dataclass(frozen=True)
class WriteRequest:
    """One write's facts, as the steps of the pipeline pass them on (the object and the managed set
    travel beside it, since each step returns new ones)."""

    manager: str
    rules: ResourceRules
    now: str
    """The time the server records on the entries the write touches."""
    subresource: str = ""
    """The endpoint written through: "" (the main resource), "status" or "scale"."""
    force: bool = False
    """An apply's ``force``: take the fields other managers own instead of failing with 409."""
