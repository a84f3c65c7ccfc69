"""What the audit rules need beyond the object (:class:`AuditContext`, and a kind's rules for one object:
:func:`object_rules`) and how ``-f`` manifests are matched to live objects (:data:`ObjectKey`,
:func:`object_key`). Below the package's ``__init__`` and
:mod:`.rules`, which both use them; ``kubectl_fieldown.audit`` re-exports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from ..base.record import Record
from .catalogue import ANNOTATIONS_LIMIT, AUTOSCALER_MANAGERS, IMPERATIVE_MANAGERS

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..fieldmanager import ResourceRules

__all__ = ["AuditContext", "ObjectKey", "object_key", "object_rules", "same_object"]

ObjectKey = tuple[str, str, str, str]
"""(apiVersion, kind, namespace or "", name): how ``-f`` manifests are matched to live objects."""


def object_key(obj: Mapping[str, Any], default_namespace: str = "") -> ObjectKey:
    md = obj.get("metadata")
    md = md if type(md) is dict or isinstance(md, Mapping) else {}
    return (str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""),
            str(md.get("namespace") or default_namespace), str(md.get("name") or ""))


def same_object(key: ObjectKey) -> ObjectKey:
    """The key without the version: one object, whichever served version it is read at (a CRD served
    at several versions, ``autoscaling/v1`` and ``v2``)."""
    return (key[0].rpartition("/")[0], key[1], key[2], key[3])


def _no_rules(api_version: str, kind: str) -> ResourceRules | None:
    return None


class AuditContext(Record, uncompared=("memo",)):
    """What the rules need beyond the object.

    ``applier`` is the applier the user names (``--applier``, ``--field-manager``): fixes are for
    it, and with ``manifests`` (keyed by :func:`object_key`, namespaces defaulted) its next apply is
    predicted. Without it, each object's fix is for the applier in use. ``rules_for`` gives a kind's
    merge rules (None: unknown, no fix can be verified); ``now`` is the simulated time; ``fixes``
    False skips fix selection (findings only)."""

    __slots__ = ("applier", "autoscaler_managers", "connection", "fixes", "ignore", "imperative_managers",
                 "manifest_files", "manifests", "memo", "now", "rules_for", "size_error", "size_warning")
    applier: Final[Applier | None]
    manifests: Final[Mapping[ObjectKey, Mapping[str, Any]]]
    manifest_files: Final[Mapping[ObjectKey, str]]
    """The file each manifest was read from, where it can be read again (not stdin): a fix names it
    with ``--manifest``, so that run as printed it is checked against the manifest audit checked with."""
    connection: Final[tuple[str, ...]]
    """The ``--kubeconfig``/``--context`` flags that reach the audited cluster, for the fixes' commands."""
    rules_for: Final[Callable[[str, str], ResourceRules | None]]
    now: Final[str]
    ignore: Final[frozenset[str]]
    fixes: Final[bool]
    size_warning: Final[int]
    size_error: Final[int]
    imperative_managers: Final[tuple[str, ...]]
    autoscaler_managers: Final[tuple[str, ...]]
    memo: Final[dict[Any, Any]]

    def __init__(
        self,
        applier: Applier | None = None,
        manifests: Mapping[ObjectKey, Mapping[str, Any]] | None = None,
        manifest_files: Mapping[ObjectKey, str] | None = None,
        connection: tuple[str, ...] = (),
        rules_for: Callable[[str, str], ResourceRules | None] = _no_rules,
        now: str = "1970-01-01T00:00:00Z",
        ignore: frozenset[str] = frozenset(),
        fixes: bool = True,
        size_warning: int = ANNOTATIONS_LIMIT * 3 // 4,
        size_error: int = ANNOTATIONS_LIMIT * 9 // 10,
        imperative_managers: tuple[str, ...] = IMPERATIVE_MANAGERS,
        autoscaler_managers: tuple[str, ...] = AUTOSCALER_MANAGERS,
        memo: dict[Any, Any] | None = None,
    ) -> None:
        self.applier = applier
        self.manifests = manifests if manifests is not None else {}
        self.manifest_files = manifest_files if manifest_files is not None else {}
        self.connection = connection
        self.rules_for = rules_for
        self.now = now
        self.ignore = ignore
        self.fixes = fixes
        self.size_warning = size_warning
        self.size_error = size_error
        self.imperative_managers = imperative_managers
        self.autoscaler_managers = autoscaler_managers
        self.memo = memo if memo is not None else {}

    @property
    def field_manager(self) -> str | None:
        return self.applier.manager if self.applier is not None else None


def object_rules(ctx: AuditContext, obj: Mapping[str, Any]) -> ResourceRules | None:
    """The kind's rules for one object, as ``conflicts`` uses them: a deduced schema (no schema known)
    refined with the list types the object's managedFields show, so that audit and ``conflicts
    --applier`` play the applier on the same schema (with atomic lists, a conflict on one list item
    was missed)."""
    rules = ctx.rules_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if rules is None or not rules.schema.deduced:
        return rules
    from ..conflicts.report import hinted_schema

    return replace(rules, schema=hinted_schema(rules.schema, obj))
