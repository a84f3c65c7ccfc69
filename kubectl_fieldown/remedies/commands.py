"""The write commands as data: what each one plans for an object, and its command line.

The command line interface parses its flags into one of these, and the fix chooser builds them:
both plan through the same :meth:`plan`, so a fix the tool prints is exactly what the command
does when it is run (and is checked by the same verification there).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..appliers import Applier, ApplierKind, applier_for_manager
from ..fieldpath import FieldSet, Path, path_string
from ..managedfields import (
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    STRIPPED_METADATA,
    UPDATE,
    decode_entries,
)
from ..schema.types import Type
from ..typed.tofieldset import to_field_set
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
]


@dataclass(frozen=True)
class PlanContext:
    """What planning needs beyond the object: its schema, the fields a write to the main resource
    cannot own (the status, where the kind has a status subresource), and the manifest the user gave
    (``-f``) for the object, if any."""

    root: Type
    reset_fields: FieldSet | None = None
    manifest: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MigrateToServerSide:
    sources: tuple[str, ...] = (KUBECTL_CLIENT_SIDE_APPLY,)
    target: str = KUBECTL
    keep_last_applied: bool | None = None
    all_fields: bool = False
    """Move every field of the sources, not only those the target's manifest sets."""

    name = "migrate"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(self.target)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        fields = None if self.all_fields else target_manifest_fields(obj, self.applier, ctx)
        if fields is not None and any(fnmatch.fnmatchcase(self.target, g) for g in self.sources):
            # the target's own Update entry (Helm 4's same-name upgrade) is what that applier wrote
            for e in decode_entries((obj.get("metadata") or {}).get("managedFields")):
                if e.manager == self.target and e.operation == UPDATE and not e.subresource:
                    fields = fields.union(e.fields.difference(STRIPPED_METADATA))
        return plan_to_server_side(obj, ctx.root, source_managers=self.sources, target=self.target,
                                   keep_last_applied=self.keep_last_applied, manifest_fields=fields)

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


@dataclass(frozen=True)
class MigrateFor:
    """What ``for_applier`` does to an object on its first server-side sync, done ahead of time as a
    guarded write: the same sources folded into the same Apply entry (Argo CD's ClientSideApplyMigration
    manager, Flux's kubectl*/before-first-apply/own/--override-manager entries, Helm 4's own Update
    entry, kubectl's client-side manager), but only the fields its manifest sets and never a
    subresource entry — where that differs from the applier's own migration, the plan's notes say
    what the applier would have done (:mod:`.forapplier`)."""

    for_applier: Applier

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
            return MigrateToServerSide((a.manager,), a.manager)
        if a.kind is ApplierKind.kubectl:
            return MigrateToServerSide((KUBECTL_CLIENT_SIDE_APPLY,), a.manager)
        raise ValueError(f"migrate --for takes {', '.join(k.value for k in MIGRATE_FOR_KINDS)}, not {a.kind.value}")

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return self.migration().plan(obj, ctx)

    def args(self) -> list[str]:
        a = self.for_applier
        words = ["--for", a.kind.value if a.manager == Applier.of(a.kind).manager else f"{a.kind.value}:{a.manager}"]
        if a.kind is ApplierKind.argocd and a.csa_manager != KUBECTL_CLIENT_SIDE_APPLY:
            words += ["--from-manager", a.csa_manager]
        for o in a.override_managers:
            words += ["--from-manager", o]
        return words


@dataclass(frozen=True)
class MigrateToClientSide:
    manager: str = KUBECTL

    name = "migrate"

    @property
    def applier(self) -> Applier:
        return applier_for_manager(KUBECTL_CLIENT_SIDE_APPLY)

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_to_client_side(obj, ctx.root, manager=self.manager)

    def args(self) -> list[str]:
        return ["--to", "client-side"] + (["--from-manager", self.manager] if self.manager != KUBECTL else [])


@dataclass(frozen=True)
class StripLastApplied:
    paths: tuple[Path, ...]
    managers: tuple[str, ...] = (KUBECTL_CLIENT_SIDE_APPLY,)

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


@dataclass(frozen=True)
class Handover:
    paths: tuple[Path, ...]
    to: str

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


@dataclass(frozen=True)
class Reset:
    to_manager: str | None = None

    name = "reset"

    @property
    def applier(self) -> Applier | None:
        return applier_for_manager(self.to_manager) if self.to_manager else None

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_reset(obj, ctx.root, to_manager=self.to_manager, reset_fields=ctx.reset_fields)

    def args(self) -> list[str]:
        return ["--to-manager", self.to_manager] if self.to_manager else []


@dataclass(frozen=True)
class DropManagers:
    managers: tuple[str, ...]

    name = "reset"

    @property
    def applier(self) -> Applier | None:
        return None

    def plan(self, obj: Mapping[str, Any], ctx: PlanContext) -> Migration:
        return plan_drop_managers(obj, self.managers)

    def args(self) -> list[str]:
        return [w for m in self.managers for w in ("--drop-manager", m)]


FixCommand = MigrateToServerSide | MigrateFor | MigrateToClientSide | StripLastApplied | Handover | Reset | DropManagers


def target_manifest_fields(obj: Mapping[str, Any], applier: Applier, ctx: PlanContext) -> FieldSet | None:
    """The fields the target applier's manifest sets: before (what it applied, read off the object)
    and after (the manifest given with ``-f``). None when neither is known: then a migration moves
    every field of its sources, as the user asked."""
    fields: FieldSet | None = None
    for doc in (inferred_manifest(obj, applier, ctx.root), ctx.manifest):
        if doc is None:
            continue
        try:
            fs = to_field_set(doc, ctx.root).difference(STRIPPED_METADATA)
        except ValueError:
            continue
        fields = fs if fields is None else fields.union(fs)
    return fields
