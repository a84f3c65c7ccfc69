"""One audit over several kubeconfig contexts: the per-context parts put together (pure).

Each context is audited on its own (the shell, :mod:`kubectl_fieldown.cli.fleet`); here its
findings get the context's name, a context that could not be read becomes a ``context-unreachable``
finding (so a cluster nobody looked at never passes for a clean one), and the parts become one
report with a summary per context (docs/fleet.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..base.record import Record
from .catalogue import RULES, Severity
from .findings import Finding, sort_findings

__all__ = ["TYPE_FAILURES", "UNREACHABLE", "ContextPart", "context_summary", "merged_findings",
           "unreachable_finding"]

UNREACHABLE = "context-unreachable"
TYPE_FAILURES = frozenset({"type-forbidden", "type-error"})


class ContextPart(Record):
    """What one context's audit gave: ``error`` says why it could not be read (then nothing else counts)."""

    __slots__ = ("complete_types", "context", "error", "findings", "interrupted", "objects", "objects_by_type",
                 "seconds", "server", "sources", "types")
    context: Final[str]
    findings: Final[Sequence[Finding]]
    objects: Final[int]
    types: Final[Sequence[str]]
    complete_types: Final[Sequence[str]]
    objects_by_type: Final[dict[str, int]]
    seconds: Final[float]
    server: Final[str]
    error: Final[str | None]
    interrupted: Final[bool]
    sources: Final[Mapping[Any, Any]]
    """Where the ``-f`` manifests were read, by object key (for ``-o sarif``)."""

    def __init__(
        self,
        context: str,
        findings: Sequence[Finding] = (),
        objects: int = 0,
        types: Sequence[str] = (),
        complete_types: Sequence[str] = (),
        objects_by_type: dict[str, int] | None = None,
        seconds: float = 0.0,
        server: str = "",
        error: str | None = None,
        interrupted: bool = False,
        sources: Mapping[Any, Any] | None = None,
    ) -> None:
        self.context = context
        self.findings = findings
        self.objects = objects
        self.types = types
        self.complete_types = complete_types
        self.objects_by_type = objects_by_type if objects_by_type is not None else {}
        self.seconds = seconds
        self.server = server
        self.error = error
        self.interrupted = interrupted
        self.sources = sources if sources is not None else {}

    @property
    def reachable(self) -> bool:
        return self.error is None

    @property
    def complete(self) -> bool:
        return self.reachable and not self.interrupted and len(self.complete_types) == len(self.types)


def unreachable_finding(context: str, message: str) -> Finding:
    """``context-unreachable``: an error finding about the context itself (kind ``Context``)."""
    return Finding(UNREACHABLE, RULES[UNREACHABLE].severity, "", "Context", None, context, message,
                   resource="context", details={"context": context}, context=context)


def merged_findings(parts: Sequence[ContextPart]) -> list[Finding]:
    """Every context's findings in context order (each in report order), tagged with its context."""
    out: list[Finding] = []
    for part in parts:
        found = [f.replace(context=part.context) for f in part.findings]
        if part.error is not None:
            found.append(unreachable_finding(part.context, part.error))
        out.extend(sort_findings(found))
    return out


def context_summary(part: ContextPart, findings: Sequence[Finding]) -> dict[str, Any]:
    """The ``contexts[]`` entry of ``-o json`` for one context (``findings``: the run's, all contexts)."""
    mine = [f for f in findings if f.context == part.context]
    by_severity = Counter(f.severity.value for f in mine)
    return {
        "context": part.context,
        "server": part.server or None,
        "reachable": part.reachable,
        "error": part.error,
        "complete": part.complete,
        "objects": part.objects,
        "types": len(part.types),
        "typesFailed": sum(1 for f in mine if f.id in TYPE_FAILURES and f.name is None),
        "findings": len(mine),
        "bySeverity": {s.value: by_severity.get(s.value, 0) for s in Severity},
        "seconds": round(part.seconds, 3),
    }
