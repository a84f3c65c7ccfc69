"""Fields the next apply keeps that no manifest claims, and fields the manifest dropped that stay.

Both are judged on the object once a fix and the applier's next apply are done (a
:class:`.verify.Verification`): :func:`stays` names what the applier's previous configuration set
and the manifest dropped but that stays; :func:`unclaimed` what the next apply keeps although no
manifest sets it and only writers of a whole configuration (or nobody) own it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..appliers import Applier
from ..appliers.model import HELM_MANAGER
from ..fieldmanager import ResourceRules, comes_back_defaulted
from ..fieldpath import FIELD, KEY, FieldSet, Path, is_prefix, key_fields, path_from_fields
from ..fieldpath.lookup import value_at
from ..ownership.managedfields import (
    ANCIENT_CHANGES,
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    ManagedFieldsEntry,
    decode_entries,
)
from ..typed.tofieldset import to_field_set
from .intent import under_leaf
from .plans import LAST_APPLIED_PATH
from .verify import Verification

__all__ = ["CONFIGURATION_WRITERS", "entries", "stays", "unclaimed"]


def entries(obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    """The managedFields entries of ``obj``."""
    return decode_entries((obj.get("metadata") or {}).get("managedFields"))


def stays(v: Verification) -> list[tuple[Path, tuple[str, ...]]]:
    """Fields only the applier's previous configuration set, dropped by the manifest, that stay (with
    their owners afterwards): the user's intent is that they go, so a fix that removes them is preferred."""
    if v.intent is None:
        return []
    return [(p, owners) for p, owners in v.dropped_kept if not v.intent.others_set(p)]


#: writers that record a whole configuration — another tool's, or this applier's under an old name —
#: and the server's names for writers nobody knows: whether a field only they set is the applier's
#: to drop (gone with its manifest) or another writer's to keep, the object cannot say
CONFIGURATION_WRITERS: tuple[str, ...] = (BEFORE_FIRST_APPLY, ANCIENT_CHANGES, HELM_MANAGER, "kubectl-create",
                                          "kubectl-replace", KUBECTL_CLIENT_SIDE_APPLY)
_STATUS = path_from_fields("status")
_METADATA = path_from_fields("metadata")
_METADATA_VALUES = (path_from_fields("metadata", "labels"), path_from_fields("metadata", "annotations"),
                    path_from_fields("metadata", "finalizers"))


def unclaimed(live: Mapping[str, Any], v: Verification, manifest: Mapping[str, Any] | None, applier: Applier,
              rules: ResourceRules) -> list[tuple[Path, tuple[str, ...]]]:
    """Fields the next apply keeps although the manifest does not set them, that only writers of a
    whole configuration (:data:`CONFIGURATION_WRITERS`, other appliers' Apply entries) or nobody (an
    untracked object) owns once the fix and the apply are done: if one of them was this applier under
    another name, the manifest dropped them and no apply will ever remove them; if not, they keep
    another writer's value. The object cannot tell which: the user must. Fields :func:`stays` already
    names are left out, and so is a field at the value the server's defaulting gives it: no apply can
    remove it (the server sets it again), whoever owns it."""
    root = rules.root
    final = v.final
    if final is None or manifest is None or v.intent is None:
        return []
    try:
        live_set, wanted = to_field_set(live, root), to_field_set(manifest, root)
        # what is kept is a part of what was live: when no live field could be named, the final
        # object's set (a new object each time, never remembered) need not be built
        if not any(_nameable(p) for p in _configuration_part(live_set).not_prefixes_of(wanted).sorted_paths()):
            return []
        final_set = to_field_set(final, root)
    except ValueError:
        return []
    # who owns them once the fix and the next apply are done
    writers = [e for e in entries(final) if e.manager != KUBECTL_LAST_APPLIED]

    def configuration_writer(e: ManagedFieldsEntry) -> bool:
        if e.subresource:
            return False  # a scaler's or a status writer's: a live writer's value
        if e.operation == APPLY:
            return e.manager != applier.manager
        return e.manager in CONFIGURATION_WRITERS and e.manager != applier.manager

    named = {p for p, _ in stays(v)}
    found: list[tuple[Path, tuple[str, ...]]] = []
    kept = _configuration_part(final_set.intersection(live_set))
    for p in kept.not_prefixes_of(wanted).sorted_paths():
        if not _nameable(p) or any(is_prefix(q, p) for q in named):
            continue
        # by the schema: a map the manifest left empty (``spec: {}``, its last field dropped) is a
        # member of these sets but no value covering what lies below it
        if under_leaf(wanted, p, root):
            continue
        if value_at(final, p) in ({}, []):
            continue  # an empty map or list (a defaulted template's metadata) holds no value anyone set
        if comes_back_defaulted(final, p, rules):
            continue  # the schema's default, which the server sets again whatever an apply prunes
        owners = [e for e in writers if e.fields.has(p) or under_leaf(e.fields, p, root)]
        # the applier's own Apply entry still holding a field its manifest does not set is a skipped
        # apply's leftover (Flux applies only when a value changes): its next real apply lets go of it
        owners = [e for e in owners if not (e.manager == applier.manager and e.operation == APPLY)] or owners
        if all(configuration_writer(e) for e in owners):  # nobody at all: never pruned either
            found.append((p, tuple(sorted({e.manager + ("" if e.operation == APPLY else " (Update)")
                                            for e in owners}))))
    if not found:
        return []
    # a list item is named whole when all of it is unclaimed (its key fields are never listed)
    members = list(kept.sorted_paths())
    hit = {p for p, _ in found}
    whole = {p for p in hit if all(q in hit or _is_key(q) for q in members if is_prefix(p, q) and q != p)}
    out: list[tuple[Path, tuple[str, ...]]] = []
    for p, names in found:
        if out and is_prefix(out[-1][0], p) and out[-1][0] in whole:
            continue
        out.append((p, names))
    return out


def _configuration_part(s: FieldSet) -> FieldSet:
    """``s`` without status and without metadata but for what lies below its labels, annotations
    and finalizers: the fields a configuration sets."""
    children = {pe: c for pe, c in s.children.items() if pe != _STATUS[0] and pe != _METADATA[0]}
    md = s.children.get(_METADATA[0])
    if md is not None:
        values = {m[1]: md.children[m[1]] for m in _METADATA_VALUES if m[1] in md.children}
        if values:
            children[_METADATA[0]] = FieldSet._node(set(), values)
    return FieldSet._node({pe for pe in s.members if pe != _STATUS[0] and pe != _METADATA[0]}, children)


def _nameable(p: Path) -> bool:
    """Not the annotation kubectl keeps, nor a list item's key field."""
    return p != LAST_APPLIED_PATH and not _is_key(p)


def _is_key(p: Path) -> bool:
    """``...[name="x"].name``: a key field goes and stays with its item."""
    return len(p) >= 2 and p[-1][0] == FIELD and p[-2][0] == KEY and p[-1][1] in key_fields(p[-2])
