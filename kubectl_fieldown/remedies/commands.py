"""The write commands as data: what each one plans for an object, and its command line.

The command line interface parses its flags into one of these, and the fix chooser builds them:
both plan through the same :meth:`plan`, so a fix the tool prints is exactly what the command
does when it is run (and is checked by the same verification there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..appliers import Applier, ApplierKind, applier_for_manager
from ..base.identitymemo import memo, remembered
from ..base.record import Record
from ..fieldpath import FieldSet, Path, path_string
from ..ownership.managedfields import (
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    ManagedFieldsEntry,
    decode_entries,
)
from ..schema.types import Type
from .intent import annotation_is_its, is_own_identity, manifest_fields
from .manifests import inferred_manifest
from .plans import (
    Migration,
    MigrationError,
    plan_drop_managers,
    plan_handover,
    plan_reset,
    plan_strip_last_applied,
    plan_to_client_side,
    plan_to_server_side,
)
from .requests import WriteRequest, requests_for

__all__ = [
    "DropManagers",
    "FixCommand",
    "Handover",
    "MigrateFor",
    "MigrateToClientSide",
    "MigrateToServerSide",
    "PlanContext",
    "Reset",
    "StripLastApplied",
    "checked_applier",
]


class PlanContext(Record):
    """What planning needs beyond the object: its schema, the fields a write to the main resource
    cannot own (the status, where the kind has a status subresource), and the manifest the user gave
    (``-f``) for the object, if any."""

    __slots__ = ("manifest", "reset_fields", "root")
    root: Final[Type]
    reset_fields: Final[FieldSet | None]
    manifest: Final[Mapping[str, Any] | None]

    def __init__(
        self,
        root: Type,
        reset_fields: FieldSet | None = None,
        manifest: Mapping[str, Any] | None = None,
    ) -> None:
        self.root = root
        self.reset_fields = reset_fields
        self.manifest = manifest


class MigrateToServerSide(Record):
    __slots__ = ("all_fields", "keep_last_applied", "sources", "target")
    sources: Final[tuple[str, ...]]
    target: Final[str]
    keep_last_applied: Final[bool | None]
    all_fields: Final[bool]
    """Move every field of the sources, not only those the target's manifest sets."""

    def __init__(
        self,
        sources: tuple[str, ...] = (KUBECTL_CLIENT_SIDE_APPLY,),
        target: str = KUBECTL,
        keep_last_applied: bool | None = None,
        all_fields: bool = False,
    ) -> None:
        self.sources = sources
        self.target = target
        self.keep_last_applied = keep_last_applied
        self.all_fields = all_fields

    name = "migrate"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(self.target)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        """The user's intent (:mod:`.intent`) decides what moves: every field of the target's own
        previous identities (its client-side manager when the annotation is its configuration, its
        own Update entry, its old names), and of any other source only the fields the target's next
        manifest sets (``-f``, else the one it applied last) — a field only another writer set must
        keep its owner, or the target's next apply would delete it."""
        applier = self.applier
        fields = None if self.all_fields else target_manifest_fields(obj, applier, ctx, next_only=True)
        whole = None
        if not self.all_fields:
            nxt = ctx.manifest if ctx.manifest is not None else inferred_manifest(obj, applier, ctx.root)
            its = annotation_is_its(obj, applier, nxt, ctx.root)
            mine = manifest_fields(nxt, ctx.root)
            peers = decode_entries((obj.get("metadata") or {}).get("managedFields"))

            def whole(e: ManagedFieldsEntry) -> bool:
                return is_own_identity(e, applier, its, (), mine, peers)

            unknown = fields is None
            if fields is None:
                fields = FieldSet()  # no manifest known: only the target's own identities move
        m = plan_to_server_side(obj, ctx.root, source_managers=self.sources, target=self.target,
                                keep_last_applied=self.keep_last_applied, manifest_fields=fields,
                                whole_source=whole)
        if whole is not None and unknown:
            m.notes.append(f"no manifest of {self.target} is known: of sources other than its own previous "
                           "identities nothing moves (give its manifest with -f, or --all-fields)")
        return m

    def args(self) -> list[str]:
        words = ["--to", "server-side"]
        if self.sources != (KUBECTL_CLIENT_SIDE_APPLY,):
            for s in self.sources:
                words += ["--from-manager", s]
        if self.target != KUBECTL:
            words += ["--field-manager", self.target]
        if self.keep_last_applied is True:
            words.append("--keep-last-applied")
        elif self.keep_last_applied is False:
            words.append("--drop-last-applied")
        if self.all_fields:
            words.append("--all-fields")
        return words


#: the appliers ``migrate --for`` prepares objects for (each migrates on its first server-side sync)
MIGRATE_FOR_KINDS: tuple[ApplierKind, ...] = (ApplierKind.argocd, ApplierKind.flux, ApplierKind.helm,
                                              ApplierKind.kubectl)


class MigrateFor(Record):
    """What ``for_applier`` does to an object on its first server-side sync, done ahead of time as a
    guarded write: the same sources folded into the same Apply entry (Argo CD's ClientSideApplyMigration
    manager, Flux's kubectl*/before-first-apply/own/--override-manager entries, Helm 4's own Update
    entry, kubectl's client-side manager), but only the fields its manifest sets and never a
    subresource entry — where that differs from the applier's own migration, the plan's notes say
    what the applier would have done (:mod:`.forapplier`)."""

    __slots__ = ("for_applier",)
    for_applier: Final[Applier]

    def __init__(self, for_applier: Applier) -> None:
        self.for_applier = for_applier

    name = "migrate"

    @property
    def applier(self) -> Applier:
        return self.for_applier

    def migration(self) -> MigrateToServerSide:
        a = self.for_applier
        if a.kind is ApplierKind.argocd:
            return MigrateToServerSide((a.csa_manager,), a.manager)
        if a.kind is ApplierKind.flux:
            sources = ("kubectl*", KUBECTL_LAST_APPLIED, BEFORE_FIRST_APPLY, a.manager,
                       *(f"{o}*" for o in a.override_managers))
            return MigrateToServerSide(sources, a.manager)
        if a.kind is ApplierKind.helm:
            # its own Update entry (Helm 4's csaupgrade); helm-controller's --override-manager names too
            return MigrateToServerSide((a.manager, *a.override_managers), a.manager)
        if a.kind is ApplierKind.kubectl:
            return MigrateToServerSide((KUBECTL_CLIENT_SIDE_APPLY,), a.manager)
        raise ValueError(f"migrate --for takes {', '.join(k.value for k in MIGRATE_FOR_KINDS)}, not {a.kind.value}")

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return self.migration().plan(obj, ctx)

    def args(self) -> list[str]:
        a = self.for_applier
        words = ["--for", a.spec(previous=False)]
        if a.kind is ApplierKind.argocd and a.csa_manager != KUBECTL_CLIENT_SIDE_APPLY:
            words += ["--from-manager", a.csa_manager]
        for o in a.override_managers:
            words += ["--from-manager", o]
        return words


class MigrateToClientSide(Record):
    __slots__ = ("manager",)
    manager: Final[str]

    def __init__(self, manager: str = KUBECTL) -> None:
        self.manager = manager

    name = "migrate"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(KUBECTL_CLIENT_SIDE_APPLY)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_to_client_side(obj, ctx.root, manager=self.manager)

    def args(self) -> list[str]:
        return ["--to", "client-side"] + (["--from-manager", self.manager] if self.manager != KUBECTL else [])


class StripLastApplied(Record):
    __slots__ = ("managers", "paths")
    paths: Final[tuple[Path, ...]]
    managers: Final[tuple[str, ...]]

    def __init__(self, paths: tuple[Path, ...], managers: tuple[str, ...] = (KUBECTL_CLIENT_SIDE_APPLY,)) -> None:
        self.paths = paths
        self.managers = managers

    name = "strip-last-applied"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(KUBECTL_CLIENT_SIDE_APPLY)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_strip_last_applied(obj, self.paths, client_side_managers=self.managers)

    def args(self) -> list[str]:
        words = [w for p in self.paths for w in ("--field", path_string(p))]
        if self.managers != (KUBECTL_CLIENT_SIDE_APPLY,):
            for m in self.managers:
                words += ["--client-side-manager", m]
        return words


class Handover(Record):
    __slots__ = ("paths", "to")
    paths: Final[tuple[Path, ...]]
    to: Final[str]

    def __init__(self, paths: tuple[Path, ...], to: str) -> None:
        self.paths = paths
        self.to = to

    name = "handover"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(self.to)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        for p in self.paths:
            if ctx.reset_fields is not None and any(p[: len(r)] == r for r in ctx.reset_fields.sorted_paths()):
                # the registry resets them on every write to the main resource: an Apply entry there
                # would record ownership that its own next apply can never exercise
                raise MigrationError(f"{path_string(p)} is written through the status subresource: no Apply entry "
                                     "of the main resource can own it (hand it over with its status writer)")
        return plan_handover(obj, self.paths, self.to, ctx.root)

    def args(self) -> list[str]:
        return [w for p in self.paths for w in ("--field", path_string(p))] + ["--to", self.to]


class Reset(Record):
    __slots__ = ("to_manager",)
    to_manager: Final[str | None]

    def __init__(self, to_manager: str | None = None) -> None:
        self.to_manager = to_manager

    name = "reset"

    @property
    def applier(self) -> Applier | None:
        return applier_for_manager(self.to_manager) if self.to_manager else None

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_reset(obj, ctx.root, to_manager=self.to_manager, reset_fields=ctx.reset_fields)

    def args(self) -> list[str]:
        return ["--to-manager", self.to_manager] if self.to_manager else []


class DropManagers(Record):
    __slots__ = ("managers",)
    managers: Final[tuple[str, ...]]

    def __init__(self, managers: tuple[str, ...]) -> None:
        self.managers = managers

    name = "reset"

    @property
    def applier(self) -> Applier | None:
        return None

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_drop_managers(obj, self.managers)

    def args(self) -> list[str]:
        return [w for m in self.managers for w in ("--drop-manager", m)]


FixCommand = MigrateToServerSide | MigrateFor | MigrateToClientSide | StripLastApplied | Handover | Reset | DropManagers


def planned(command: FixCommand, obj: Mapping[str, Any], ctx: PlanContext) -> tuple[Migration, list[WriteRequest]]:
    """``command.plan(obj, ctx)`` and the requests that write it. An audit plans the fix it chooses
    as it verifies it and again as its printed command checks itself (the same command, object and
    context): inside an identity block (base/identitymemo.py) that is done once. A ``MigrateFor``
    plan gains notes after it is made, so it is made afresh."""
    if isinstance(command, MigrateFor):
        return _planned(command, obj, ctx)
    return remembered(memo("planned"), (command, obj, ctx), _planned, command, obj, ctx)


def _planned(command: FixCommand, obj: Mapping[str, Any], ctx: PlanContext) -> tuple[Migration, list[WriteRequest]]:
    m = command.plan(obj, ctx)
    return m, requests_for(m)


def checked_applier(command: FixCommand, obj: Mapping[str, Any]) -> Applier | None:
    """The applier whose next apply a write command checks when run without ``--applier``: for a
    handover the one in use (the fields may go to any writer), for the others the command's own
    target, else the one in use. A printed fix for another applier must name it."""
    from .manifests import detected_applier

    own = None if isinstance(command, Handover) else command.applier
    return own or detected_applier(obj)


def target_manifest_fields(obj: Mapping[str, Any], applier: Applier, ctx: PlanContext, *,
                           next_only: bool = False) -> FieldSet | None:
    """The fields the target applier's manifest sets: before (what it applied, read off the object)
    and after (the manifest given with ``-f``); with ``next_only``, the manifest it applies next only
    (``-f``, else the one it applied last). None when neither is known."""
    fields: FieldSet | None = None
    docs: tuple[Mapping[str, Any] | None, ...] = (inferred_manifest(obj, applier, ctx.root, ctx.manifest), ctx.manifest)
    if next_only:
        docs = (ctx.manifest if ctx.manifest is not None else docs[0], None)
    for doc in docs:
        fs = manifest_fields(doc, ctx.root)
        if fs is not None:
            fields = fs if fields is None else fields.union(fs)
    return fields
