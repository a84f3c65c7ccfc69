"""What the audit reports: findings, and the one verified fix of each object (pure data)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..base.objects import group_of, type_name
from ..base.record import Record
from .catalogue import ORDER, RULES, Severity

__all__ = ["Finding", "ObjectFix", "sort_findings", "type_finding", "type_ref"]


@functools.lru_cache(maxsize=1024)
def type_ref(api_version: str, kind: str) -> str:
    """``widget.example.com``, ``secret``: how kubectl names a kind (singular.group resolves like the plural)."""
    return type_name(group_of(api_version), kind)


class ObjectFix(Record):
    """The one remedy of an object, for one applier, checked by the engine (see
    :func:`kubectl_fieldown.remedies.choose.choose_fix`). The renderer turns :meth:`argv` into a
    command line; ``drop`` are edits to the manifest (another writer keeps those fields)."""

    __slots__ = ("applier", "applier_named", "args", "at_risk", "command", "connection", "drop", "inferred_deletions",
                 "manifest_file", "name", "namespace", "notes", "problems", "resource", "stays", "stays_alone",
                 "superseded_deletions", "unclaimed", "verified")
    resource: Final[str]
    name: Final[str]
    namespace: Final[str | None]
    applier: Final[str]
    """The applier the fix is for, as a person reads it (``kubectl apply --server-side``)."""
    applier_named: Final[bool]
    """The user named the applier (``--applier``/``--field-manager``); else it was detected."""
    command: Final[str | None]
    args: Final[tuple[str, ...]]
    drop: Final[tuple[str, ...]]
    verified: Final[bool]
    problems: Final[tuple[str, ...]]
    """Why no safe fix was found (the fix is then not offered)."""
    notes: Final[tuple[str, ...]]
    at_risk: Final[tuple[str, ...]]
    """What the applier's next apply will change that nobody asked for, when no fix keeps every value
    (the engine's simulation of the best candidate): the ``values-at-risk`` finding."""
    stays: Final[tuple[tuple[str, tuple[str, ...]], ...]]
    """Fields the manifest dropped that only the applier's previous configuration set, and that stay
    after the fix and the next apply (path, owners afterwards): the ``dropped-fields-stay`` error."""
    unclaimed: Final[tuple[tuple[str, tuple[str, ...]], ...]]
    """Fields the manifest does not set that the next apply keeps, owned only by writers of a whole
    configuration or by nobody: the ``unclaimed-fields-stay`` error (whose they are, the user knows)."""
    inferred_deletions: Final[tuple[str, ...]]
    """Fields the next apply deletes because the manifest no longer sets them, whose owner was judged the
    applier's previous identity only by what it recorded: the ``inferred-deletions`` error."""
    superseded_deletions: Final[tuple[str, ...]]
    """Fields the next apply deletes that only an older configuration of the applier set (its latest
    apply, under another manager, did not): the ``superseded-deletions`` error."""
    stays_alone: Final[tuple[tuple[str, tuple[str, ...]], ...]]
    """The same for the applier's next apply alone, when the fix's command makes them go: the
    ``dropped-fields-stay`` warning (run the fix first)."""
    manifest_file: Final[str | None]
    """The ``-f`` file holding the manifest the fix was checked with: the command names it
    (``--manifest``), so that it checks the same next apply."""
    connection: Final[tuple[str, ...]]
    """``--kubeconfig``/``--context`` as the audit was given them: the command names the cluster the
    object was found in (several contexts in one audit, or another than the current one)."""

    def __init__(
        self,
        resource: str,
        name: str,
        namespace: str | None,
        applier: str,
        applier_named: bool,
        command: str | None,
        args: tuple[str, ...] = (),
        drop: tuple[str, ...] = (),
        verified: bool = True,
        problems: tuple[str, ...] = (),
        notes: tuple[str, ...] = (),
        at_risk: tuple[str, ...] = (),
        stays: tuple[tuple[str, tuple[str, ...]], ...] = (),
        unclaimed: tuple[tuple[str, tuple[str, ...]], ...] = (),
        inferred_deletions: tuple[str, ...] = (),
        superseded_deletions: tuple[str, ...] = (),
        stays_alone: tuple[tuple[str, tuple[str, ...]], ...] = (),
        manifest_file: str | None = None,
        connection: tuple[str, ...] = (),
    ) -> None:
        self.resource = resource
        self.name = name
        self.namespace = namespace
        self.applier = applier
        self.applier_named = applier_named
        self.command = command
        self.args = args
        self.drop = drop
        self.verified = verified
        self.problems = problems
        self.notes = notes
        self.at_risk = at_risk
        self.stays = stays
        self.unclaimed = unclaimed
        self.inferred_deletions = inferred_deletions
        self.superseded_deletions = superseded_deletions
        self.stays_alone = stays_alone
        self.manifest_file = manifest_file
        self.connection = connection

    @property
    def runnable(self) -> bool:
        return self.verified and self.command is not None

    def argv(self) -> list[str]:
        """The words after ``kubectl fieldown`` (empty when there is nothing to run)."""
        if not self.runnable:
            return []
        assert self.command is not None
        target = [f"{self.resource}/{self.name}"] + (["-n", self.namespace] if self.namespace else [])
        manifest = ["--manifest", self.manifest_file] if self.manifest_file is not None else []
        return [self.command, *target, *self.args, *manifest, *self.connection]

    def edits(self) -> list[str]:
        return [f"remove {p} from the manifest (its writer keeps it)" for p in self.drop] if self.verified else []

    def to_json(self) -> dict[str, Any]:
        return {"applier": self.applier, "applierNamed": self.applier_named, "verified": self.verified,
                "command": self.argv(), "edits": self.edits(), "drop": list(self.drop) if self.verified else [],
                "problems": list(self.problems),
                "notes": list(self.notes)}


class Finding(Record, uncompared=("details",)):
    """One problem of one object (or, for ``type-*`` ids, of one resource type: name is None).

    ``resource`` is the kubectl-style type of the object (``widget.example.com``), ``fix`` the
    object's one fix (shared by all its findings), ``details`` id-specific data (docs/audit.md)."""

    __slots__ = ("api_version", "context", "details", "fix", "id", "kind", "message", "name", "namespace", "resource",
                 "severity")
    id: Final[str]
    severity: Final[Severity]
    api_version: Final[str]
    kind: Final[str]
    namespace: Final[str | None]
    name: Final[str | None]
    message: Final[str]
    fix: Final[ObjectFix | None]
    resource: Final[str]
    details: Final[Mapping[str, Any]]
    context: Final[str | None]
    """The kubeconfig context the object was found in, when one audit ran over several."""

    def __init__(
        self,
        id: str,
        severity: Severity,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str | None,
        message: str,
        fix: ObjectFix | None = None,
        resource: str = "",
        details: Mapping[str, Any] | None = None,
        context: str | None = None,
    ) -> None:
        self.id = id
        self.severity = severity
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.message = message
        self.fix = fix
        self.resource = resource
        self.details = details if details is not None else {}
        self.context = context

    def with_fix(self, fix: ObjectFix | None) -> Finding:
        # replace(), without building its keywords (called for every finding of an audit)
        return Finding(self.id, self.severity, self.api_version, self.kind, self.namespace, self.name, self.message,
                       fix, self.resource, self.details, self.context)


def type_finding(rule_id: str, api_version: str, kind: str, resource: str, namespace: str | None,
                 message: str) -> Finding:
    """``type-forbidden`` / ``type-error``: a resource type the audit could not (fully) list."""
    return Finding(rule_id, RULES[rule_id].severity, api_version, kind, namespace, None, message, None, resource,
                   {"resource": resource})


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Stable report order whatever order the types were listed in: by object, then catalogue."""
    return sorted(findings, key=lambda f: (f.api_version.rpartition("/")[0], f.kind, f.namespace or "", f.name or "",
                                           ORDER.get(f.id, len(ORDER)), f.message))
