"""The write commands as data: what each one plans for an object, and its command line.

The command line interface parses its flags into one of these, and the fix chooser builds them:
both plan through the same :meth:`plan`, so a fix the tool prints is exactly what the command
does when it is run (and is checked by the same verification there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..appliers import Applier, applier_for_manager
from ..fieldpath import FieldSet, Path, path_string
from ..managedfields import KUBECTL, KUBECTL_CLIENT_SIDE_APPLY, STRIPPED_METADATA
from ..schema.types import Type
from ..typed.tofieldset import to_field_set
from .manifests import inferred_manifest
from .plans import (
    Migration,
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


FixCommand = MigrateToServerSide | MigrateToClientSide | StripLastApplied | Handover | Reset | DropManagers


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
