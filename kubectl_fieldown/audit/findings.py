"""What the audit reports: findings, and the one verified fix of each object (pure data)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base.objects import group_of, type_name
from .catalogue import ORDER, RULES, Severity

__all__ = ["Finding", "ObjectFix", "sort_findings", "type_finding", "type_ref"]


@functools.lru_cache(maxsize=1024)
def type_ref(api_version: str, kind: str) -> str:
    """``widget.example.com``, ``secret``: how kubectl names a kind (singular.group resolves like the plural)."""
    return type_name(group_of(api_version), kind)


@dataclass(frozen=True, slots=True)
class ObjectFix:
    """The one remedy of an object, for one applier, checked by the engine (see
    :func:`kubectl_fieldown.remedies.choose.choose_fix`). The renderer turns :meth:`argv` into a
    command line; ``drop`` are edits to the manifest (another writer keeps those fields)."""

    resource: str
    name: str
    namespace: str | None
    applier: str
    """The applier the fix is for, as a person reads it (``kubectl apply --server-side``)."""
    applier_named: bool
    """The user named the applier (``--applier``/``--field-manager``); else it was detected."""
    command: str | None
    args: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    verified: bool = True
    problems: tuple[str, ...] = ()
    """Why no safe fix was found (the fix is then not offered)."""
    notes: tuple[str, ...] = ()
    at_risk: tuple[str, ...] = ()
    """What the applier's next apply will change that nobody asked for, when no fix keeps every value
    (the engine's simulation of the best candidate): the ``values-at-risk`` finding."""
    stays: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Fields the manifest dropped that only the applier's previous configuration set, and that stay
    after the fix and the next apply (path, owners afterwards): the ``dropped-fields-stay`` error."""
    unclaimed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Fields the manifest does not set that the next apply keeps, owned only by writers of a whole
    configuration or by nobody: the ``unclaimed-fields-stay`` error (whose they are, the user knows)."""
    inferred_deletions: tuple[str, ...] = ()
    """Fields the next apply deletes because the manifest no longer sets them, whose owner was judged the
    applier's previous identity only by what it recorded: the ``inferred-deletions`` error."""
    superseded_deletions: tuple[str, ...] = ()
    """Fields the next apply deletes that only an older configuration of the applier set (its latest
    apply, under another manager, did not): the ``superseded-deletions`` error."""
    stays_alone: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The same for the applier's next apply alone, when the fix's command makes them go: the
    ``dropped-fields-stay`` warning (run the fix first)."""
    manifest_file: str | None = None
    """The ``-f`` file holding the manifest the fix was checked with: the command names it
    (``--manifest``), so that it checks the same next apply."""
    connection: tuple[str, ...] = ()
    """``--kubeconfig``/``--context`` as the audit was given them: the command names the cluster the
    object was found in (several contexts in one audit, or another than the current one)."""

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


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem of one object (or, for ``type-*`` ids, of one resource type: name is None).

    ``resource`` is the kubectl-style type of the object (``widget.example.com``), ``fix`` the
    object's one fix (shared by all its findings), ``details`` id-specific data (docs/audit.md)."""

    id: str
    severity: Severity
    api_version: str
    kind: str
    namespace: str | None
    name: str | None
    message: str
    fix: ObjectFix | None = None
    resource: str = ""
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    context: str | None = None
    """The kubeconfig context the object was found in, when one audit ran over several."""

    def with_fix(self, fix: ObjectFix | None) -> Finding:
        # dataclasses.replace, without its introspection (called for every finding of an audit)
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
