"""Ownership plans: pure functions from a live object to the managedFields and annotation it should have.

Every plan is a :class:`Migration`: the entries and last-applied annotation the object should end
up with. :meth:`Migration.requests` turns it into the requests that get it there
(:mod:`.requests`): each guarded by the object's resourceVersion, and ordered so that a run
interrupted between two of them leaves a state the same plan, made again, completes.

* :func:`plan_to_server_side` — client-go ``csaupgrade``, generalised: Update entries and the Apply
  entries of previous appliers (Flux's ``--override-manager``), a manager's own Update entry into
  its Apply entry (Helm 4), several sources (globs), every apiVersion; only the fields the target's
  manifest sets move (the rest stays with its owner, so no value can be pruned by surprise); never
  on a subresource (a ``/scale`` writer keeps ``replicas``); the last-applied annotation kept alive
  as kubectl 1.36 does it, or removed.
* :func:`plan_to_client_side` — the reverse: the annotation kubectl would have written for the
  applier's manifest, and a ``kubectl-client-side-apply`` Update entry.
* :func:`plan_strip_last_applied` — forget fields in the annotation and the client-side manager.
* :func:`plan_handover` — give fields to a manager's Apply entry; everyone else lets go.
* :func:`plan_reset` — ``[{}]``, or one manager owns all; :func:`plan_drop_managers` — remove the
  entries of stale managers (their fields stay, unowned).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..fieldmanager import copy_json
from ..fieldpath import FIELD, KEY, FieldSet, Path, encode_fields_v1, key_fields, path_from_fields, path_string
from ..fieldpath.lookup import MISSING, Lookup, child_value, value_at
from ..managedfields import (
    APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
    decode_entries,
)
from ..objects import ObjectRef
from ..schema.types import NO_DEFAULT, Type
from ..typed.items import LIST, MAP, ItemError, item_element, key_type, side
from ..typed.remove import extract_owned
from ..typed.tofieldset import to_field_set
from ..value import go_json, values_equal

__all__ = [
    "ANNOTATIONS_PATH",
    "LAST_APPLIED_PATH",
    "Migration",
    "MigrationError",
    "entries_differ",
    "last_applied_fields",
    "last_applied_manifest",
    "last_applied_text",
    "plan_drop_managers",
    "plan_handover",
    "plan_reset",
    "plan_strip_last_applied",
    "plan_to_client_side",
    "plan_to_server_side",
]

LAST_APPLIED_PATH: Path = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)
ANNOTATIONS_PATH: Path = path_from_fields("metadata", "annotations")
_LAC = FieldSet([LAST_APPLIED_PATH])


class MigrationError(ValueError):
    """The object cannot be migrated as asked (the message says why, in one line)."""


@dataclass
class Migration:
    """The managedFields and last-applied annotation an object should have, and why.

    ``after`` is the ownership the plan wants; the requests that write it may add what the server
    records by itself (the ``time`` of an entry that writes the annotation), which is no change of
    ownership (:func:`entries_differ` ignores times and order)."""

    ref: ObjectRef
    resource_version: str
    before: list[ManagedFieldsEntry]
    after: list[ManagedFieldsEntry]
    last_applied_before: str | None
    last_applied_after: str | None
    reset: bool = False
    """True when the plan clears managedFields (``[{}]``): nothing is tracked until the next apply."""
    notes: list[str] = field(default_factory=list)
    annotations_present: bool = True
    """The object has a non-empty annotations map (an annotation is then added into it)."""

    @property
    def managed_fields_changed(self) -> bool:
        if self.reset:
            return bool(self.before)
        return entries_differ(self.before, self.after)

    @property
    def last_applied_changed(self) -> bool:
        return self.last_applied_before != self.last_applied_after

    @property
    def changed(self) -> bool:
        return self.managed_fields_changed or self.last_applied_changed


def entries_differ(a: Sequence[ManagedFieldsEntry], b: Sequence[ManagedFieldsEntry]) -> bool:
    """Are two lists of entries a different state for the server? Neither order (the server sorts
    entries on every write) nor times count: the API server ignores a write whose only change is
    managedFields timestamps (it keeps the stored ones; observed on 1.36), so a plan that differs
    only there would be a no-op that can never converge."""

    def key(entries: Sequence[ManagedFieldsEntry]) -> list[tuple[str, ...]]:
        return sorted((e.manager, e.operation, e.api_version, e.subresource, encode_fields_v1(e.fields))
                      for e in entries if not e.fields.is_empty())

    return key(a) != key(b)


def _start(obj: Mapping[str, Any]) -> tuple[ObjectRef, str, list[ManagedFieldsEntry], str | None, bool]:
    md = obj.get("metadata") or {}
    entries = decode_entries(md.get("managedFields"))
    annotations = md.get("annotations")
    la = annotations.get(LAST_APPLIED_ANNOTATION) if isinstance(annotations, Mapping) else None
    present = isinstance(annotations, Mapping) and bool(annotations)
    return (ObjectRef.of(obj), str(md.get("resourceVersion") or ""), entries, la if isinstance(la, str) else None,
            present)


def _matches(name: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def _finish(obj: Mapping[str, Any], before: list[ManagedFieldsEntry], after: list[ManagedFieldsEntry],
            la_after: str | None, notes: list[str]) -> Migration:
    """A plan whose annotation ownership follows the one rule every plan keeps (see
    :func:`canonical_last_applied_owner`) when the plan writes the annotation."""
    ref, rv, _, la, present = _start(obj)
    api_version = ref.api_version
    before_annotations = (obj.get("metadata") or {}).get("annotations")
    if la_after is not None and la_after != la:
        after = _give_annotation(after, api_version, created=la is None and not present)
    elif la_after is None and la is not None and not _other_annotations(before_annotations):
        # the annotations map goes with its last key (an empty map is not stored), and so does any
        # ownership of the map itself
        after = _without_paths(after, FieldSet([ANNOTATIONS_PATH]), lambda e: True)
    after = [e for e in after if not e.fields.is_empty()]
    return Migration(ref, rv, before, after, la, la_after, notes=notes, annotations_present=present)


def _other_annotations(annotations: Any) -> bool:
    return bool(annotations) and any(k != LAST_APPLIED_ANNOTATION for k in annotations or {})


def canonical_last_applied_owner(entries: Sequence[ManagedFieldsEntry], api_version: str) -> ManagedFieldsEntry:
    """Who owns the annotation after a plan writes it: ``kubectl-last-applied`` (Apply) where kubectl
    keeps the annotation next to a server-side applier, else ``kubectl-client-side-apply`` (Update)
    at the object's apiVersion — the identities kubectl itself writes it with. Writing the annotation
    *as* that identity (:mod:`.requests`) attributes it to the owner the plan already names, so a
    run interrupted after that write is completed by the same plan, made again."""
    for e in entries:
        if e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY and not e.subresource:
            return e
    for e in entries:
        if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and not e.subresource \
                and e.api_version == api_version:
            return e
    return ManagedFieldsEntry(KUBECTL_CLIENT_SIDE_APPLY, UPDATE, api_version, FieldSet())


def _give_annotation(entries: list[ManagedFieldsEntry], api_version: str, *, created: bool) -> list[ManagedFieldsEntry]:
    owner = canonical_last_applied_owner(entries, api_version)
    give = FieldSet([LAST_APPLIED_PATH, ANNOTATIONS_PATH]) if created and owner.operation == UPDATE else _LAC
    out: list[ManagedFieldsEntry] = []
    found = False
    for e in entries:
        if e.identity == owner.identity:
            e = e.with_fields(e.fields.union(give))
            found = True
        elif e.fields.has(LAST_APPLIED_PATH):
            e = e.with_fields(e.fields.difference(_LAC))
        out.append(e)
    if not found:
        out.append(owner.with_fields(owner.fields.union(give)))
    return out


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
        if not _matches(e.manager, source_managers):
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
            new.append(replace(e, fields=union))
            placed = True
        elif i in rest:
            if not placed and tgt is None and i == sources[0]:
                new.append(replace(target_entry, fields=union))
                placed = True
            if not rest[i].is_empty():
                new.append(e.with_fields(rest[i]))
        else:
            new.append(e)
    if not placed:
        new.append(replace(target_entry, fields=union))
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
    if la is None:
        return None
    try:
        doc = json.loads(la)
    except ValueError:
        return None
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


# --- to client-side ------------------------------------------------------------------------------


def plan_to_client_side(
    obj: Mapping[str, Any],
    root: Type,
    *,
    manager: str = KUBECTL,
    namespaced: bool | None = None,
) -> Migration:
    """Turn ``manager``'s Apply entry into the state a client-side ``kubectl apply`` would leave."""
    ref, rv, entries, la, present = _start(obj)
    idx = next((i for i, e in enumerate(entries) if e.manager == manager and e.operation == APPLY
                and not e.subresource), None)
    if idx is None:
        if la is not None and any(e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE for e in entries):
            # done already (a second run, or a retry after the write went through)
            return Migration(ref, rv, entries, list(entries), la, la, annotations_present=present,
                             notes=[f"no server-side apply entry of {manager}: already managed by client-side apply"])
        raise MigrationError(f"{ref}: no server-side apply entry of manager {manager!r} to migrate")
    entry = entries[idx]
    manifest = last_applied_manifest(obj, entry.fields, root, namespaced=namespaced)
    la_after = last_applied_text(manifest)
    owned = entry.fields.difference(_LAC)
    after: list[ManagedFieldsEntry] = []
    merged = False
    for i, e in enumerate(entries):
        if i == idx:
            continue
        if e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY:
            continue  # the annotation is the client-side manager's again
        if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and not e.subresource \
                and e.api_version == ref.api_version:
            after.append(e.with_fields(e.fields.union(owned)))
            merged = True
        else:
            after.append(e)
    if not merged:
        after.append(ManagedFieldsEntry(KUBECTL_CLIENT_SIDE_APPLY, UPDATE, ref.api_version, owned, entry.time))
    notes = [f"rebuilt the last-applied annotation from the {len(entry.fields)} field(s) {manager} owns",
             f"turned {manager} (Apply) into {KUBECTL_CLIENT_SIDE_APPLY} (Update)"]
    return _finish(obj, entries, after, la_after, notes)


def last_applied_manifest(
    obj: Mapping[str, Any], owned: FieldSet, root: Type, *, namespaced: bool | None = None
) -> dict[str, Any]:
    """The manifest that owns ``owned`` with the live values, shaped as kubectl would record it."""
    body = extract_owned(copy_json(obj), owned.difference(_LAC), root)
    if not isinstance(body, dict):
        body = {}
    _omit_defaulted_keys(body, owned, root)
    md_live = obj.get("metadata") or {}
    md = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    assert isinstance(md, dict)
    md = {k: v for k, v in md.items() if k not in ("managedFields", "resourceVersion", "uid")}
    md["name"] = md_live.get("name")
    if md_live.get("namespace") and namespaced is not False:
        md["namespace"] = md_live["namespace"]
    ann = md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
    assert isinstance(ann, dict)
    ann.pop(LAST_APPLIED_ANNOTATION, None)
    # kubectl sets the annotations map before serialising, so an empty one is always recorded
    md["annotations"] = ann
    body["metadata"] = md
    body["apiVersion"] = obj.get("apiVersion")
    body["kind"] = obj.get("kind")
    return body


def _omit_defaulted_keys(v: Any, owned: FieldSet, t: Type) -> None:
    """Drop the key fields of list items that the owner did not set (in place).

    An item's key fields are copied into the extracted manifest so that it can be identified, but
    a key field the owner does not own and whose value is the schema default was filled in by the
    server (``ports[].protocol``): the manifest had left it out, and the item is identified by the
    default all the same. Keeping it would make the rebuilt annotation differ from what kubectl
    writes for the same manifest, and the next ``kubectl apply`` rewrite it.
    """
    s = side(t, v)
    if s == MAP and type(v) is dict and t.map is not None and not t.map.atomic:
        m = t.map
        for k, x in v.items():
            sub = owned.children.get((FIELD, k))
            if sub is not None:
                _omit_defaulted_keys(x, sub, key_type(m, k))
    elif s == LIST and type(v) is list and t.list is not None and t.list.relationship != "atomic" and t.list.keys:
        lt = t.list
        item_map = lt.item.map
        for item in v:
            try:
                pe = item_element(lt, item)
            except ItemError:
                continue
            sub = owned.children.get(pe)
            if sub is None or type(item) is not dict:
                continue
            for k in lt.keys:
                f = item_map.fields.get(k) if item_map is not None else None
                default = f.default if f is not None else NO_DEFAULT
                if (k in item and (FIELD, k) not in sub.members and default is not NO_DEFAULT
                        and values_equal(default, item[k])):
                    del item[k]
            _omit_defaulted_keys(item, sub, lt.item)


def last_applied_text(manifest: Mapping[str, Any]) -> str:
    """The annotation value as kubectl writes it: Go json (sorted keys, HTML escaping) and a newline."""
    return go_json(manifest) + "\n"


# --- strip-last-applied --------------------------------------------------------------------------


def plan_strip_last_applied(
    obj: Mapping[str, Any],
    paths: Sequence[Path],
    *,
    client_side_managers: Sequence[str] = (KUBECTL_CLIENT_SIDE_APPLY,),
) -> Migration:
    """Forget ``paths`` in the last-applied annotation and in the client-side managers' entries."""
    ref, _, entries, la, _ = _start(obj)
    if la is None:
        raise MigrationError(f"{ref}: has no last-applied annotation (it is not managed by client-side apply)")
    try:
        la_obj = json.loads(la)
    except ValueError as e:
        raise MigrationError(f"{ref}: the last-applied annotation is not valid JSON: {e}") from None
    notes = []
    outcome = remove_paths(la_obj, paths)
    removed = any(o == REMOVED for o in outcome.values())
    for p in paths:
        if outcome[p] == REMOVED:
            notes.append(f"removed {path_string(p)} from the last-applied annotation")
        elif outcome[p] == KEY_KEPT:
            notes.append(f"{path_string(p)} stays in the last-applied annotation: the item's other fields there "
                         "need their key")
        else:
            notes.append(f"{path_string(p)} was not in the last-applied annotation")

    def client_side(e: ManagedFieldsEntry) -> bool:
        return e.operation == UPDATE and _matches(e.manager, client_side_managers)

    after = _without_paths(entries, FieldSet(paths), client_side, recursive=True)
    if entries_differ(after, entries):
        notes.append(f"removed the field(s) from {', '.join(client_side_managers)}")
    new_la = last_applied_text(la_obj) if removed else la
    return _finish(obj, entries, after, new_la, notes)


REMOVED, KEY_KEPT, ABSENT = "removed", "key kept", "absent"


def remove_paths(doc: Any, paths: Iterable[Path]) -> dict[Path, str]:
    """Remove the values at ``paths`` from a plain document (a manifest, a last-applied annotation),
    saying of each path whether it was removed, absent, or kept as a key.

    A list-map item cannot exist without its key fields (the server refuses the apply): a key field
    goes only with its whole item, when nothing but keys is left of it once every other path is
    removed; else it stays (``KEY_KEPT``)."""
    out: dict[Path, str] = {}
    paths = list(paths)
    keyed = [p for p in paths if len(p) >= 2 and p[-2][0] == KEY and p[-1][0] == FIELD
             and p[-1][1] in key_fields(p[-2])]
    for p in keyed:
        out[p] = ABSENT if value_at(doc, p) is MISSING else KEY_KEPT
    for p in paths:
        if p not in out:
            out[p] = REMOVED if _remove_path(doc, p) else ABSENT
    for p in keyed:
        if out[p] == ABSENT:
            continue
        item = value_at(doc, p[:-1])
        if item is MISSING:
            out[p] = REMOVED  # its item went whole
        elif isinstance(item, dict) and set(item) <= set(key_fields(p[-2])):
            _remove_path(doc, p[:-1])
            out[p] = REMOVED
    return out


def _remove_path(doc: Any, path: Path) -> bool:
    """Remove the value at ``path`` from a plain document (a last-applied manifest)."""
    if not path:
        return False
    parent = value_at(doc, path[:-1])
    if parent is MISSING:
        return False
    pe = path[-1]
    if pe[0] == FIELD:
        if isinstance(parent, dict) and pe[1] in parent:
            del parent[pe[1]]
            return True
        return False
    if isinstance(parent, list):
        target = child_value(parent, pe)
        if target is not MISSING:
            for i, item in enumerate(parent):
                if item is target:
                    del parent[i]
                    return True
    return False


# --- handover ------------------------------------------------------------------------------------


def plan_handover(
    obj: Mapping[str, Any],
    paths: Sequence[Path],
    to: str,
    root: Type,
    *,
    client_side_managers: Sequence[str] = (KUBECTL_CLIENT_SIDE_APPLY,),
) -> Migration:
    """``to`` owns ``paths`` through its Apply entry (as if it had applied them with their current
    values), and every other entry — ``to``'s own Update entries included — lets go of them; they
    also leave the last-applied annotation and the client-side manager, so neither ``kubectl
    apply`` nor ``kubectl apply --server-side`` of a manifest without them removes or resets them.
    No value changes: the plan only writes managedFields (and the annotation)."""
    ref, _, entries, la, _ = _start(obj)
    if to == KUBECTL_CLIENT_SIDE_APPLY:
        raise MigrationError(f"{KUBECTL_CLIENT_SIDE_APPLY} cannot take fields over: it only ever updates")
    look = Lookup(obj)
    for p in paths:
        if look.at(p) is MISSING:
            raise MigrationError(f"{path_string(p)} is not set on the object: there is nothing to hand over")
    notes: list[str] = []
    la_after = la
    working = list(entries)
    if la is not None:
        stripped = plan_strip_last_applied(obj, paths, client_side_managers=client_side_managers)
        if stripped.last_applied_changed:
            la_after = stripped.last_applied_after
            notes.extend(n for n in stripped.notes if n.startswith("removed "))
        working = _without_paths(working, FieldSet(paths), lambda e: e.operation == UPDATE and
                                 _matches(e.manager, client_side_managers), recursive=True)
    # a field the receiver already writes through a subresource (a scaler's /scale) is its own: an
    # Apply entry would only be taken back at its next write
    via_subresource = [p for p in paths if any(e.manager == to and e.subresource and _owns(e.fields, p)
                                               for e in working)]
    skipped = set(via_subresource)
    taking = [p for p in paths if p not in skipped]
    handed = FieldSet(taking)
    owned = applied_fields(obj, taking, root) if taking else FieldSet()

    def lets_go(e: ManagedFieldsEntry) -> bool:
        return not _is_target(e, to) and not (e.manager == to and e.subresource)

    losers = sorted({e.manager + ("" if e.operation == APPLY else " (Update)")
                     + (f" (subresource {e.subresource})" if e.subresource else "")
                     for e in working if lets_go(e) and any(_owns(e.fields, p) for p in taking)})
    working = _without_paths(working, handed, lets_go, recursive=True)
    if taking:
        idx = next((i for i, e in enumerate(working) if _is_target(e, to)), None)
        if idx is None:
            working.append(ManagedFieldsEntry(to, APPLY, ref.api_version, owned, None, ""))
        else:
            working[idx] = working[idx].with_fields(working[idx].fields.union(owned))
    shown = ", ".join(path_string(p) for p in taking)
    if taking:
        notes.append(f"{to} (Apply) owns {shown}")
    if via_subresource:
        notes.append(f"{to} already writes {', '.join(path_string(p) for p in via_subresource)} through a "
                     "subresource")
    if losers:
        notes.append(f"{', '.join(losers)} no longer own{'s' if len(losers) == 1 else ''} {shown}")
    return _finish(obj, entries, working, la_after, notes)


def _is_target(e: ManagedFieldsEntry, to: str) -> bool:
    return e.manager == to and e.operation == APPLY and not e.subresource


def _owns(fields: FieldSet, path: Path) -> bool:
    return fields.has(path) or not fields.descend(path).is_empty()


def applied_fields(obj: Mapping[str, Any], paths: Sequence[Path], root: Type) -> FieldSet:
    """The fields an apply of ``paths`` with their current values would own: the leaves at and
    below each path, and the list items along it with their key fields."""
    look = Lookup(obj)
    # one set built from all (a union per path copies the growing set each time: quadratic)
    return FieldSet(p for path in paths
                    for p in to_field_set(_manifest_of(look, path), root).difference(STRIPPED_METADATA))


def _manifest_of(look: Lookup, path: Path) -> dict[str, Any]:
    """The smallest document that sets ``path`` to its value in ``obj`` (list items reduced to
    their keys along the way)."""
    from ..fieldpath import KEY, VALUE, key_fields

    body: dict[str, Any] = {}
    node: Any = body
    live: Any = look.obj
    for i, pe in enumerate(path):
        last = i == len(path) - 1
        child = look.child(live, pe)
        if child is MISSING:
            raise MigrationError(f"{path_string(path)} is not set on the object")
        if pe[0] == FIELD:
            if last:
                node[pe[1]] = copy_json(child)
            else:
                node = node.setdefault(pe[1], {} if isinstance(child, dict) else [])
        elif pe[0] == KEY:
            keys = key_fields(pe)
            if last:
                node.append(copy_json(child))
            else:
                item = dict(keys)
                node.append(item)
                node = item
        elif pe[0] == VALUE and last:
            node.append(copy_json(child))
        else:
            raise MigrationError(f"{path_string(path)}: a list index cannot be handed over (the whole list is one "
                                 "field: hand over the list)")
        live = child
    return body


# --- reset and dropping managers -----------------------------------------------------------------


def plan_reset(
    obj: Mapping[str, Any],
    root: Type,
    *,
    to_manager: str | None = None,
    reset_fields: FieldSet | None = None,
) -> Migration:
    """Clear managedFields, or give every field currently set to one manager (an Apply entry)."""
    ref, rv, entries, la, present = _start(obj)
    if to_manager is None:
        return Migration(ref, rv, entries, [], la, la, reset=True, annotations_present=present, notes=[
            "cleared managedFields: nothing is tracked until the next server-side apply, which will record "
            "every existing field as owned by before-first-apply"])
    owned = to_field_set(obj, root).difference(STRIPPED_METADATA)
    notes = []
    if reset_fields is not None:
        kept_out = owned.recursive_difference(reset_fields)
        if kept_out != owned:
            notes.append("the status is left out: it is written through the status subresource")
        owned = kept_out
    owned = owned.recursive_difference(FieldSet([path_from_fields("metadata", "managedFields")]))
    after = [ManagedFieldsEntry(to_manager, APPLY, ref.api_version, owned, None)]
    notes.insert(0, f"{to_manager} (Apply) now owns all {len(owned)} field(s) currently set")
    return Migration(ref, rv, entries, after, la, la, notes=notes, annotations_present=present)


def plan_drop_managers(obj: Mapping[str, Any], managers: Sequence[str]) -> Migration:
    """Remove every entry of ``managers`` (globs; Apply and Update, every subresource): fields only
    they owned stay with their values and become unowned (flux-operator ``migrate owner``)."""
    ref, rv, entries, la, present = _start(obj)
    gone = [e for e in entries if _matches(e.manager, managers)]
    after = [e for e in entries if not _matches(e.manager, managers)]
    notes = []
    if gone:
        notes.append("removed the entries of " + ", ".join(sorted({_label(e) for e in gone}))
                     + ": the fields only they owned keep their values, unowned")
    else:
        notes.append(f"no entries of {', '.join(managers)}")
    return Migration(ref, rv, entries, after, la, la, notes=notes, annotations_present=present)


def _label(e: ManagedFieldsEntry) -> str:
    out = f"{e.manager} ({e.operation})"
    return out + (f" (subresource {e.subresource})" if e.subresource else "")


def _without_paths(
    entries: Sequence[ManagedFieldsEntry],
    paths: FieldSet,
    which: Callable[[ManagedFieldsEntry], bool],
    recursive: bool = False,
) -> list[ManagedFieldsEntry]:
    out = []
    for e in entries:
        if which(e):
            fs = e.fields.recursive_difference(paths) if recursive else e.fields.difference(paths)
            if fs.is_empty():
                continue
            e = e.with_fields(fs)
        out.append(e)
    return out
