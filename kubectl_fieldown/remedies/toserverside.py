"""``migrate --to server-side`` as a plan (:func:`plan_to_server_side`: client-go's ``csaupgrade``,
generalised) and reading the last-applied annotation as fields and as a document."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..base.globs import matches_any
from ..fieldpath import FieldSet, path_string
from ..ownership.managedfields import (
    APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
)
from ..schema.types import Type
from ..typed.tofieldset import to_field_set
from .migration import _LAC, Migration, _finish, _start, _without_paths, parsed_annotation
from .toclientside import last_applied_text

__all__ = ["last_applied_document", "last_applied_fields", "plan_to_server_side"]

# --- to server-side ------------------------------------------------------------------------------


def plan_to_server_side(
    obj: Mapping[str, Any],
    root: Type,
    *,
    source_managers: Sequence[str] = (KUBECTL_CLIENT_SIDE_APPLY,),
    target: str = KUBECTL,
    keep_last_applied: bool | None = None,
    manifest_fields: FieldSet | None = None,
    whole_source: Callable[[ManagedFieldsEntry], bool] | None = None,
) -> Migration:
    """Move the source managers' fields into an Apply entry of ``target`` (main resource only).

    ``whole_source`` says which sources are the target's own previous identities: all of their fields
    move (:mod:`.intent`), whatever ``manifest_fields`` says.

    Sources are the Update entries of the matching managers (the target's own Update entry too:
    Helm 4's and csaupgrade's same-name upgrade) and the Apply entries of other matching appliers
    (a previous applier, as Flux's ``--override-manager``). ``kubectl-last-applied`` only moves when
    named exactly. Entries on a subresource never move: an Apply entry on ``scale`` would conflict
    with the applier's next apply, and ``replicas`` belongs to whoever scales.

    What moves: of the client-side manager, the fields of its last-applied manifest (the rest of its
    set is what the server defaulted during its writes); of any source, only the fields in
    ``manifest_fields`` when given (the fields the target's manifest sets, before or after the
    change), so that the target's next apply can prune what its manifest dropped, and nothing else.

    ``keep_last_applied`` None means: keep the annotation when the target is ``kubectl`` (so a later
    plain ``kubectl apply`` still works), drop it otherwise.
    """
    ref, rv, entries, la, present = _start(obj)
    keep = (target == KUBECTL) if keep_last_applied is None else keep_last_applied
    if keep_last_applied is None and whole_source is not None and any(
            e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and not e.subresource
            and not whole_source(e) for e in entries):
        # the annotation is another applier's configuration (a client-side pipeline next to a partial
        # one): it stays, so that kubectl apply can still prune what that manifest drops
        keep = True
    notes: list[str] = []
    live_set = to_field_set(obj, root)
    la_fields = last_applied_fields(la, ref.api_version, root)

    def is_source(e: ManagedFieldsEntry) -> bool:
        if not matches_any(e.manager, source_managers):
            return False
        if e.manager == KUBECTL_LAST_APPLIED and KUBECTL_LAST_APPLIED not in source_managers:
            return False
        if e.operation == UPDATE:
            return True
        return e.operation == APPLY and e.manager != target

    skipped = sorted({f"{e.manager} (subresource {e.subresource})" for e in entries if e.subresource and is_source(e)})
    if skipped:
        notes.append(f"left {', '.join(skipped)} alone: an Apply entry on a subresource would conflict with the "
                     "applier's next apply; a scaler keeps replicas (drop them from the manifest)")
    sources = [i for i, e in enumerate(entries) if not e.subresource and is_source(e)]
    if not sources:
        # nothing is moved here: leave the object (and whoever owns its annotation) alone, so that a
        # namespace-wide run does not rewrite objects it has no business with — unless the
        # annotation was asked to go
        notes.append(f"no entries of {', '.join(source_managers)} to move")
        if keep_last_applied is False and la is not None:
            notes.append("removed the last-applied annotation")
            after = _without_paths(entries, _LAC, lambda e: True)
            return _finish(obj, entries, after, None, notes)
        return Migration(ref, rv, entries, list(entries), la, la, notes=notes, annotations_present=present)

    left_with_sources = FieldSet()
    unowned = FieldSet()

    def moved(e: ManagedFieldsEntry) -> FieldSet:
        nonlocal left_with_sources, unowned
        fs = e.fields
        if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and la_fields is not None:
            unowned = unowned.union(fs.difference(la_fields))
            fs = fs.intersection(la_fields)
        if manifest_fields is not None and not (whole_source is not None and whole_source(e)):
            # what the target's manifest does not set stays with its owner (the "." of a map it created
            # included, as long as the map is there)
            stay = fs.difference(manifest_fields).intersection(live_set).difference(_LAC)
            left_with_sources = left_with_sources.union(stay)
            fs = fs.intersection(manifest_fields)
        return fs.intersection(live_set).difference(_LAC)

    tgt = next((i for i, e in enumerate(entries) if e.manager == target and e.operation == APPLY
                and not e.subresource), None)
    after = list(entries)
    if tgt is None:
        first = entries[sources[0]]
        target_entry = ManagedFieldsEntry(target, APPLY, first.api_version, FieldSet(), first.time, "")
    else:
        target_entry = entries[tgt]
    union = target_entry.fields
    versions = {target_entry.api_version}
    names: list[str] = []
    for i in sources:
        e = entries[i]
        part = moved(e)
        union = union.union(part)
        versions.add(e.api_version)
        label = e.manager + (" (Apply)" if e.operation == APPLY else "")
        if label not in names and not part.is_empty():
            names.append(label)
    # the sources keep what does not move (fields the target's manifest does not set)
    rest: dict[int, FieldSet] = {}
    for i in sources:
        e = entries[i]
        keep_fs = e.fields.difference(union)
        if manifest_fields is not None and not (whole_source is not None and whole_source(e)):
            keep_fs = keep_fs.intersection(left_with_sources)
        else:
            keep_fs = FieldSet()
        rest[i] = keep_fs
    if names:
        notes.append(f"moved the fields of {', '.join(names)} into {target} (Apply)")
    if len(versions) > 1:
        notes.append(f"merged fields recorded under apiVersions {', '.join(sorted(versions))}; client-go's csaupgrade "
                     "would have dropped those of other versions")
    new: list[ManagedFieldsEntry] = []
    placed = False
    for i, e in enumerate(after):
        if i == tgt:
            new.append(e.with_fields(union))
            placed = True
        elif i in rest:
            if not placed and tgt is None and i == sources[0]:
                new.append(target_entry.with_fields(union))
                placed = True
            if not rest[i].is_empty():
                new.append(e.with_fields(rest[i]))
        else:
            new.append(e)
    if not placed:
        new.append(target_entry.with_fields(union))
    after = new
    stayed = left_with_sources.intersection(live_set).difference(_LAC)
    if not stayed.is_empty():
        notes.append(f"left {len(stayed)} field(s) the target's manifest does not set with their owners "
                     f"({_listed(stayed)}): their values stay, and an apply never prunes them")
    unowned = unowned.intersection(live_set).difference(_LAC)
    if not unowned.is_empty():
        notes.append(f"left {len(unowned)} field(s) of {KUBECTL_CLIENT_SIDE_APPLY} that are not in the last-applied "
                     "manifest unowned (defaulted by the server or set by a webhook): an apply of the manifest "
                     "would not own them")
    la_after = la
    if la is not None:
        if keep:
            la_after = _server_form(la)
            if la_after != la:
                notes.append("rewrote the last-applied annotation as the server writes it after kubectl applies "
                             "(without kubectl's empty annotations map), so re-applying the manifest changes nothing")
            after = _without_paths(after, _LAC,
                                   lambda e: not (e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY))
            if not any(e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY for e in after):
                api_version = next((e.api_version for e in after if e.manager == target), ref.api_version)
                after.append(ManagedFieldsEntry(KUBECTL_LAST_APPLIED, APPLY, api_version, FieldSet(_LAC), None, ""))
                notes.append(f"kept the last-applied annotation, co-owned by {KUBECTL_LAST_APPLIED} "
                             "(as kubectl apply --server-side does) so later applies do not remove it")
        else:
            la_after = None
            after = _without_paths(after, _LAC, lambda e: True)
            notes.append("removed the last-applied annotation")
    return _finish(obj, entries, after, la_after, notes)


def _listed(fs: FieldSet, limit: int = 3) -> str:
    paths = [path_string(p) for p in fs.sorted_paths()]
    return ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def last_applied_fields(la: str | None, api_version: str, root: Type) -> FieldSet | None:
    """The fields the manifest in the annotation sets (None when it cannot be used: absent, not
    JSON, or of another apiVersion, whose schema could name fields differently)."""
    doc = last_applied_document(la, api_version)
    if doc is None:
        return None
    try:
        return to_field_set(doc, root).difference(STRIPPED_METADATA)
    except ValueError:  # items that cannot be identified: keep csaupgrade's plain union
        return None


def last_applied_document(la: str | None, api_version: str) -> dict[str, Any] | None:
    doc = parsed_annotation(la)
    if not isinstance(doc, dict) or doc.get("apiVersion") != api_version:
        return None
    return doc


def _server_form(la: str) -> str:
    """The annotation as the server rewrites it after an apply by ``kubectl`` of the same manifest."""
    try:
        doc = json.loads(la)
    except ValueError:
        return la
    if not isinstance(doc, dict):
        return la
    md = doc.get("metadata")
    if isinstance(md, dict) and md.get("annotations") == {}:
        del md["annotations"]
    return last_applied_text(doc)
