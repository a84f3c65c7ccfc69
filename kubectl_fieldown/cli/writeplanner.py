"""The planning path every write command goes through (:func:`write_planner`): the command's plan
on each read of the object, checked against the applier's next apply, at the version that applier
applies at (:func:`applier_version`); schemas from :class:`kubectl_fieldown.kube.kindrules.KindRules`.
The run loop that calls it is :mod:`.writes`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..fieldmanager import ResourceRules
    from ..kube.kindrules import KindRules
    from ..kube.writes import ObjectTarget
    from ..remedies.commands import FixCommand
    from ..remedies.writeplan import WritePlan
    from ..schema.types import GroupVersionKind

__all__ = ["DEDUCED_SOURCE", "applier_version", "own_applier", "write_planner"]


# the source of a schema the tool made up for want of one (every list atomic)
DEDUCED_SOURCE = "deduced"


def _now() -> str:
    import time

    from ..ownership.managedfields import format_time

    return format_time(time.time())


def write_planner(
    spec_for: Callable[[dict[str, Any]], FixCommand],
    *,
    applier: Applier | None,
    default_applier: Callable[[dict[str, Any], FixCommand], Applier | None],
    needs_schema: bool = True,
) -> Callable[[KindRules], Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]]:
    """The planning function of a write command: for each object, the command's plan
    (:mod:`kubectl_fieldown.remedies.commands`), its requests, and the check that neither they nor
    the applier's next apply (``--applier``, else the command's own, else the one in use) lose a
    value (:func:`kubectl_fieldown.remedies.writeplan.command_plan`: fields handed to another writer
    leave the applier's next manifest and their values must stay, unless the applier is that writer)."""

    def factory(kinds: KindRules) -> Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]:
        from ..fieldpath import FieldSet, path_from_fields
        from ..kube.kindrules import rules_for
        from ..remedies.commands import PlanContext
        from ..remedies.plans import MigrationError
        from ..remedies.writeplan import command_plan
        from ..schema.types import DEDUCED, GroupVersionKind

        client = kinds.client
        assert client is not None
        # every read of an object is planned again: build each kind's engine rules once
        kind_rules: dict[GroupVersionKind, ResourceRules | None] = {}

        def for_target(target: ObjectTarget) -> Callable[[dict[str, Any]], WritePlan]:
            def plan(obj: dict[str, Any]) -> WritePlan:
                spec = spec_for(obj)
                api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
                gvk = GroupVersionKind.from_api_version(api_version, kind)
                res = client.discovery.resolve_kind(api_version, kind)
                schema = kinds.lookup(gvk, res)
                chosen = applier or default_applier(obj, spec)
                at = applier_version(obj, chosen, target.manifest)
                if at != api_version and at in kinds.versions(gvk) and kinds.converts_by_renaming(gvk):
                    # The applier applies at another version of this CRD than the one read (discovery's
                    # preferred): plan, check and write there, where its entries and manifest name their
                    # fields by that version's schema. Conversion None: the object only renames its
                    # apiVersion, and the executor sends the write to that version's endpoint.
                    obj = {**obj, "apiVersion": at}
                    api_version = at
                    gvk = GroupVersionKind.from_api_version(api_version, kind)
                    res = client.discovery.resolve_kind(api_version, kind)
                    schema = kinds.lookup(gvk, res)
                deduced = schema.source.startswith(DEDUCED_SOURCE)
                if needs_schema and deduced:
                    # planning on a deduced schema (every list atomic) would record wrong ownership
                    raise MigrationError(f"no schema is known for {obj.get('kind')} {obj.get('apiVersion')}: "
                                         "ownership cannot be planned exactly (the server publishes no OpenAPI v3 "
                                         "for it)")
                if gvk not in kind_rules:
                    # without a real schema nothing is simulated
                    kind_rules[gvk] = None if deduced else rules_for(schema, "status" in res.subresources,
                                                                     kinds.is_builtin(gvk), kinds.versions(gvk))
                rules = kind_rules[gvk]
                root = schema.root if needs_schema else DEDUCED
                # a write to the main resource cannot own the status of a kind with a status subresource
                reset = FieldSet([path_from_fields("status")]) if "status" in res.subresources else None
                return command_plan(spec, obj, PlanContext(root, reset, target.manifest), rules, now=_now(),
                                    applier=chosen)

            return plan

        return for_target

    return factory


def applier_version(obj: Mapping[str, Any], applier: Applier | None, manifest: Mapping[str, Any] | None) -> str:
    """The apiVersion ``applier`` will apply ``obj`` at: its manifest's (``-f``), else the version of
    its own entries (its Apply entry; else the newest Update entry of its name or of the client-side
    manager: Helm 3, kubectl before it went server-side), else that of the last-applied annotation,
    else the version the object was read at."""
    import json

    from ..ownership.managedfields import (
        APPLY,
        KUBECTL_CLIENT_SIDE_APPLY,
        LAST_APPLIED_ANNOTATION,
        UPDATE,
        ManagedFieldsError,
        decode_entries,
    )

    read = str(obj.get("apiVersion") or "")
    if manifest is not None and isinstance(manifest.get("apiVersion"), str):
        return str(manifest["apiVersion"])
    if applier is None:
        return read
    try:
        entries = [e for e in decode_entries((obj.get("metadata") or {}).get("managedFields")) if not e.subresource]
    except ManagedFieldsError:
        return read
    applies = [e for e in entries if e.manager == applier.manager and e.operation == APPLY]
    if applies:
        return applies[0].api_version
    updaters = {applier.manager, KUBECTL_CLIENT_SIDE_APPLY}
    updates = sorted((e for e in entries if e.manager in updaters and e.operation == UPDATE),
                     key=lambda e: e.time or "")
    if updates:
        return updates[-1].api_version
    la = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    try:
        doc = json.loads(la) if isinstance(la, str) else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str):
        return str(doc["apiVersion"])
    return read


def own_applier(obj: dict[str, Any], spec: FixCommand) -> Applier | None:
    """The command's own applier (the migration's target), else the one in use; for a handover the
    one in use (:func:`kubectl_fieldown.remedies.commands.checked_applier`)."""
    from ..remedies.commands import checked_applier

    return checked_applier(spec, obj)

