"""What every step of one write reads: who writes, through which endpoint of which resource, when."""

from __future__ import annotations

from typing import Final

from ..base.record import Record
from .rules import ResourceRules


class WriteRequest(Record):
    """One write's facts, as the steps of the pipeline pass them on (the object and the managed set
    travel beside it, since each step returns new ones)."""

    __slots__ = ("force", "manager", "now", "rules", "subresource")
    manager: Final[str]
    rules: Final[ResourceRules]
    now: Final[str]
    """The time the server records on the entries the write touches."""
    subresource: Final[str]
    """The endpoint written through: "" (the main resource), "status" or "scale"."""
    force: Final[bool]
    """An apply's ``force``: take the fields other managers own instead of failing with 409."""

    def __init__(
        self,
        manager: str,
        rules: ResourceRules,
        now: str,
        subresource: str = "",
        force: bool = False,
    ) -> None:
        self.manager = manager
        self.rules = rules
        self.now = now
        self.subresource = subresource
        self.force = force
