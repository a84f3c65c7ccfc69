"""Planning ownership migrations: pure functions from a live object to a guarded JSON patch.

Every plan is a :class:`Migration`: the managedFields and last-applied annotation the object
should end up with, and the JSON patch that gets it there. The patch always starts with a
``test`` of ``metadata.resourceVersion``, so a write can never overwrite a change made since the
object was read (the server re-applies patches on conflict, so the test is re-checked too).

* :func:`plan_to_server_side` — client-go ``csaupgrade``, generalised: several source managers
  (globs), every subresource, fields of every apiVersion merged (csaupgrade drops those of other
  versions); the last-applied annotation kept alive the way kubectl 1.36 does it (a
  ``kubectl-last-applied`` Apply entry co-owns it) or removed.
* :func:`plan_to_client_side` — the reverse: rebuild the annotation kubectl would have written for
  the manifest the applier owns, and turn its Apply entry into a ``kubectl-client-side-apply``
  Update entry.
* :func:`plan_strip_last_applied` — forget fields in the annotation and the client-side manager,
  so that the next ``kubectl apply`` leaves them to another writer.
* :func:`plan_reset` — ``[{}]`` (nothing tracked until the next apply) or one manager owns all.
* :func:`plan_drop_ownership` — remove paths from some managers (the last step of a handover).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fieldmanager import copy_json
from .fieldpath import FIELD, FieldSet, Path, path_from_fields, path_string
from .fieldpath.lookup import MISSING, value_at
from .managedfields import (
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
from .schema.types import Type
from .typed.remove import extract_owned
from .typed.tofieldset import to_field_set
from .value import go_json, values_equal

LAST_APPLIED_PATH: Path = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)
_LAC_POINTER = "/metadata/annotations/" + LAST_APPLIED_ANNOTATION.replace("~", "~0").replace("/", "~1")


class MigrationError(ValueError):
    """The object cannot be migrated as asked (the message says why, in one line)."""


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str | None
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> ObjectRef:
        md = obj.get("metadata") or {}
        return cls(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), md.get("namespace") or None,
                   str(md.get("name", "")))

    def __str__(self) -> str:
        group = self.api_version.rpartition("/")[0]
        kind = f"{self.kind.lower()}.{group}" if group else self.kind.lower()
        return f"{kind}/{self.name}" + (f" -n {self.namespace}" if self.namespace else "")


@dataclass
class Migration:
    ref: ObjectRef
    resource_version: str
    before: list[ManagedFieldsEntry]
    after: list[ManagedFieldsEntry]
    last_applied_before: str | None
    last_applied_after: str | None
    reset: bool = False
    """True when the plan clears managedFields (``[{}]``): nothing is tracked until the next apply."""
    field_manager: str = KUBECTL_CLIENT_SIDE_APPLY
    """The fieldManager of the patch requests. Only the annotation patch changes a field; the
    server records that change for this manager (the client-side manager, as ``kubectl apply`` does),
    and a following managedFields patch replaces the entries anyway."""
    notes: list[str] = field(default_factory=list)

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

    def patches(self, annotations_present: bool = True) -> list[list[dict[str, Any]]]:
        """The guarded JSON patches, in order; empty when nothing changes.

        The server attributes a field the patch itself changes (the annotation) to the patch's field
        manager, so when the annotation gets a value it goes first and managedFields second: the
        second patch changes no field, and the server keeps exactly the entries it carries. That
        second patch is sent even when the plan keeps the entries as they were, or the attribution
        of the first would stay. Removing the annotation attributes nothing, so a removal travels
        with the managedFields in one patch: one atomic write, and a re-plan after a conflict never
        sees the annotation gone but the entries not yet moved. Each patch tests the
        resourceVersion; the executor fills in the one returned by the previous write
        (:data:`RESOURCE_VERSION`).
        """
        out: list[list[dict[str, Any]]] = []
        if not self.changed:
            return out
        value: list[dict[str, Any]] = [{}] if self.reset or not self.after else [e.to_dict() for e in self.after]
        # "add" replaces a member that exists and creates one that does not: after a reset the object
        # has no managedFields, and "replace" would be rejected (422)
        managed_fields_op = {"op": "add", "path": "/metadata/managedFields", "value": value}
        if self.last_applied_changed and self.last_applied_after is None:
            ops = [self._test(self.resource_version), self._annotation_op(annotations_present)]
            if self.managed_fields_changed:
                ops.append(managed_fields_op)
            return [ops]
        if self.last_applied_changed:
            out.append([self._test(self.resource_version), self._annotation_op(annotations_present)])
        if self.managed_fields_changed or out:
            rv = RESOURCE_VERSION if out else self.resource_version
            out.append([self._test(rv), managed_fields_op])
        return out

    @staticmethod
    def _test(rv: str) -> dict[str, Any]:
        return {"op": "test", "path": "/metadata/resourceVersion", "value": rv}

    def _annotation_op(self, annotations_present: bool) -> dict[str, Any]:
        if self.last_applied_after is None:
            return {"op": "remove", "path": _LAC_POINTER}
        if not annotations_present:
            value = {LAST_APPLIED_ANNOTATION: self.last_applied_after}
            return {"op": "add", "path": "/metadata/annotations", "value": value}
        return {"op": "add" if self.last_applied_before is None else "replace", "path": _LAC_POINTER,
                "value": self.last_applied_after}


RESOURCE_VERSION = "$RESOURCE_VERSION"
"""Stands for the resourceVersion returned by the previous patch of the same plan."""


def entries_differ(a: Sequence[ManagedFieldsEntry], b: Sequence[ManagedFieldsEntry]) -> bool:
    """Are two lists of entries a different state for the server? Neither order (the server sorts
    entries on every write) nor times count: the API server ignores a write whose only change is
    managedFields timestamps (it keeps the stored ones; observed on 1.36), so a plan that differs
    only there would be a no-op that can never converge."""
    from .fieldpath import encode_fields_v1

    def key(entries: Sequence[ManagedFieldsEntry]) -> list[tuple[str, ...]]:
        return sorted((e.manager, e.operation, e.api_version, e.subresource, encode_fields_v1(e.fields))
                      for e in entries)

    return key(a) != key(b)


def _start(obj: Mapping[str, Any]) -> tuple[ObjectRef, str, list[ManagedFieldsEntry], str | None]:
    md = obj.get("metadata") or {}
    entries = decode_entries(md.get("managedFields"))
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    return ObjectRef.of(obj), str(md.get("resourceVersion") or ""), entries, la if isinstance(la, str) else None


def _matches(name: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


# --- to server-side ------------------------------------------------------------------------------


def plan_to_server_side(
    obj: Mapping[str, Any],
    root: Type,
    *,
    source_managers: Sequence[str] = (KUBECTL_CLIENT_SIDE_APPLY,),
    target: str = KUBECTL,
    keep_last_applied: bool | None = None,
) -> Migration:
    """Move the source managers' Update fields into an Apply entry of ``target``.

    ``keep_last_applied`` None means: keep the annotation when the target is ``kubectl`` (so a later
    plain ``kubectl apply`` still works), drop it otherwise.
    """
    ref, rv, entries, la = _start(obj)
    keep = (target == KUBECTL) if keep_last_applied is None else keep_last_applied
    notes: list[str] = []
    live_set = to_field_set(obj, root)
    la_fields = _last_applied_fields(la, ref, root)
    unowned: list[FieldSet] = []
    after = list(entries)
    moved_any = False
    for sub in sorted({e.subresource for e in entries}):
        sources = [i for i, e in enumerate(after) if e.operation == UPDATE and e.subresource == sub
                   and e.manager != target and _matches(e.manager, source_managers)]
        if not sources:
            continue
        moved_any = True
        tgt = next((i for i, e in enumerate(after) if e.manager == target and e.operation == APPLY
                    and e.subresource == sub), None)
        if tgt is None:
            tgt = sources[0]
            first = after[tgt]
            after[tgt] = ManagedFieldsEntry(target, APPLY, first.api_version, _moved(first, sub, la_fields, unowned),
                                            first.time, sub)
            sources = sources[1:]
        union = after[tgt].fields
        versions = {after[tgt].api_version}
        for i in sources:
            union = union.union(_moved(after[i], sub, la_fields, unowned))
            versions.add(after[i].api_version)
        names = sorted({entries[i].manager for i in range(len(entries)) if entries[i].operation == UPDATE
                        and entries[i].subresource == sub and entries[i].manager != target
                        and _matches(entries[i].manager, source_managers)})
        where = f" (subresource {sub})" if sub else ""
        notes.append(f"moved the fields of {', '.join(names)} into {target} (Apply){where}")
        if len(versions) > 1:
            notes.append(
                f"merged fields recorded under apiVersions {', '.join(sorted(versions))}{where}; "
                "client-go's csaupgrade would have dropped those of other versions"
            )
        # Keep only what an apply of the same manifest would own, so that re-applying it changes
        # nothing: the "." markers of an Update entry (maps it created) are not apply ownership.
        union = union.intersection(live_set)
        union = union.difference(FieldSet([LAST_APPLIED_PATH])) if sub == "" else union
        base = after[tgt]
        after[tgt] = ManagedFieldsEntry(base.manager, APPLY, base.api_version, union, base.time, sub)
        after = [e for i, e in enumerate(after) if i not in set(sources)]
    if not moved_any:
        # nothing is managed client-side here: leave the object (and whoever owns its annotation) alone,
        # so that a namespace-wide run does not rewrite objects it has no business with
        notes.append(f"no Update entries of {', '.join(source_managers)} to move")
        return Migration(ref, rv, entries, list(entries), la, la, notes=notes)
    left = FieldSet()
    for u in unowned:
        left = left.union(u)
    left = left.intersection(live_set).difference(FieldSet([LAST_APPLIED_PATH]))
    if not left.is_empty():
        notes.append(f"left {len(left)} field(s) of {KUBECTL_CLIENT_SIDE_APPLY} that are not in the last-applied "
                     "manifest unowned (defaulted by the server or set by a webhook): an apply of the manifest "
                     "would not own them")
    la_after = la
    if la is not None:
        if keep:
            la_after = _server_form(la)
            if la_after != la:
                notes.append("rewrote the last-applied annotation as the server writes it after kubectl applies "
                             "(without kubectl's empty annotations map), so re-applying the manifest changes nothing")
            # only kubectl-last-applied owns the annotation (a retried plan may find another owner)
            after = _without_paths(after, FieldSet([LAST_APPLIED_PATH]),
                                   lambda e: not (e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY))
            if not any(e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY for e in after):
                api_version = next((e.api_version for e in after if e.manager == target), ref.api_version)
                after.append(ManagedFieldsEntry(KUBECTL_LAST_APPLIED, APPLY, api_version,
                                                FieldSet([LAST_APPLIED_PATH]), None, ""))
                notes.append(f"kept the last-applied annotation, co-owned by {KUBECTL_LAST_APPLIED} "
                             "(as kubectl apply --server-side does) so later applies do not remove it")
        else:
            la_after = None
            after = _without_paths(after, FieldSet([LAST_APPLIED_PATH]), lambda e: True)
            notes.append("removed the last-applied annotation")
    after = [e for e in after if not e.fields.is_empty()]
    return Migration(ref, rv, entries, after, la, la_after, notes=notes)


def _moved(e: ManagedFieldsEntry, sub: str, la_fields: FieldSet | None, unowned: list[FieldSet]) -> FieldSet:
    """The fields of a source entry that move to the applier.

    The client-side manager's fields are those of the manifest it last applied (the annotation);
    the rest of its set is what the server defaulted, or a webhook added, during its writes. An
    apply of that manifest would not own them, so owning them would make the first re-apply rewrite
    managedFields (and remove them, were they not defaulted again).
    """
    if sub == "" and la_fields is not None and e.manager == KUBECTL_CLIENT_SIDE_APPLY:
        unowned.append(e.fields.difference(la_fields))
        return e.fields.intersection(la_fields)
    return e.fields


def _last_applied_fields(la: str | None, ref: ObjectRef, root: Type) -> FieldSet | None:
    """The fields the manifest in the annotation sets (None when it cannot be used: absent, not
    JSON, or of another apiVersion, whose schema could name fields differently)."""
    if la is None:
        return None
    try:
        doc = json.loads(la)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("apiVersion") != ref.api_version:
        return None
    try:
        return to_field_set(doc, root).difference(STRIPPED_METADATA)
    except ValueError:  # items that cannot be identified: keep csaupgrade's plain union
        return None


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
    ref, rv, entries, la = _start(obj)
    idx = next((i for i, e in enumerate(entries) if e.manager == manager and e.operation == APPLY
                and not e.subresource), None)
    if idx is None:
        raise MigrationError(f"{ref}: no server-side apply entry of manager {manager!r} to migrate")
    entry = entries[idx]
    manifest = last_applied_manifest(obj, entry.fields, root, namespaced=namespaced)
    la_after = last_applied_text(manifest)
    owned = entry.fields.union(FieldSet([LAST_APPLIED_PATH]))
    after: list[ManagedFieldsEntry] = []
    merged = False
    for i, e in enumerate(entries):
        if i == idx:
            continue
        if e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY:
            continue  # the annotation is the client-side manager's again
        if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and not e.subresource \
                and e.api_version == entry.api_version:
            after.append(ManagedFieldsEntry(e.manager, UPDATE, e.api_version, e.fields.union(owned), e.time))
            merged = True
        else:
            after.append(e)
    if not merged:
        after.append(ManagedFieldsEntry(KUBECTL_CLIENT_SIDE_APPLY, UPDATE, entry.api_version, owned, entry.time))
    notes = [f"rebuilt the last-applied annotation from the {len(entry.fields)} field(s) {manager} owns",
             f"turned {manager} (Apply) into {KUBECTL_CLIENT_SIDE_APPLY} (Update)"]
    return Migration(ref, rv, entries, after, la, la_after, notes=notes)


def last_applied_manifest(
    obj: Mapping[str, Any], owned: FieldSet, root: Type, *, namespaced: bool | None = None
) -> dict[str, Any]:
    """The manifest that owns ``owned`` with the live values, shaped as kubectl would record it."""
    body = extract_owned(copy_json(obj), owned.difference(FieldSet([LAST_APPLIED_PATH])), root)
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
    from .schema.types import NO_DEFAULT
    from .typed.items import LIST, MAP, ItemError, item_element, key_type, side

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
    ref, rv, entries, la = _start(obj)
    if la is None:
        raise MigrationError(f"{ref}: has no last-applied annotation (it is not managed by client-side apply)")
    try:
        la_obj = json.loads(la)
    except ValueError as e:
        raise MigrationError(f"{ref}: the last-applied annotation is not valid JSON: {e}") from None
    notes = []
    for p in paths:
        if _remove_path(la_obj, p):
            notes.append(f"removed {path_string(p)} from the last-applied annotation")
        else:
            notes.append(f"{path_string(p)} was not in the last-applied annotation")
    strip = FieldSet(paths)
    def client_side(e: ManagedFieldsEntry) -> bool:
        return e.operation == UPDATE and _matches(e.manager, client_side_managers)

    after = _without_paths(entries, strip, client_side, recursive=True)
    if entries_differ(after, entries):
        notes.append(f"removed the field(s) from {', '.join(client_side_managers)}")
    new_la = last_applied_text(la_obj) if notes and any(n.startswith("removed ") for n in notes) else la
    return Migration(ref, rv, entries, after, la, new_la, notes=notes)


def _remove_path(doc: Any, path: Path) -> bool:
    """Remove the value at ``path`` from a plain document (a last-applied manifest)."""
    from .fieldpath.lookup import child_value

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


# --- reset and dropping ownership ----------------------------------------------------------------


def plan_reset(
    obj: Mapping[str, Any],
    root: Type,
    *,
    to_manager: str | None = None,
    reset_fields: FieldSet | None = None,
) -> Migration:
    """Clear managedFields, or give every field currently set to one manager (an Apply entry)."""
    ref, rv, entries, la = _start(obj)
    if to_manager is None:
        m = Migration(ref, rv, entries, [], la, la, reset=True, notes=[
            "cleared managedFields: nothing is tracked until the next server-side apply, which will record "
            "every existing field as owned by before-first-apply"])
        return m
    owned = to_field_set(obj, root).difference(STRIPPED_METADATA)
    if reset_fields is not None:
        owned = owned.recursive_difference(reset_fields)
    owned = owned.recursive_difference(FieldSet([path_from_fields("metadata", "managedFields")]))
    after = [ManagedFieldsEntry(to_manager, APPLY, ref.api_version, owned, None)]
    notes = [f"{to_manager} (Apply) now owns all {len(owned)} field(s) currently set"]
    return Migration(ref, rv, entries, after, la, la, notes=notes)


def plan_drop_ownership(obj: Mapping[str, Any], paths: Sequence[Path], managers: Sequence[str]) -> Migration:
    """Remove ``paths`` (and everything below) from the entries of ``managers`` (globs)."""
    ref, rv, entries, la = _start(obj)
    after = _without_paths(entries, FieldSet(paths), lambda e: _matches(e.manager, managers), recursive=True)
    notes = [f"removed {', '.join(path_string(p) for p in paths)} from {', '.join(managers)}"]
    return Migration(ref, rv, entries, after, la, la, notes=notes)


def _without_paths(
    entries: Sequence[ManagedFieldsEntry],
    paths: FieldSet,
    which: Any,
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


# --- applying a plan locally (previews, tests, undo) ---------------------------------------------


def apply_json_patch(obj: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Apply the small subset of JSON patch our plans use (test/add/replace/remove) to a copy."""
    doc: dict[str, Any] = copy_json(obj)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(op["path"]).split("/")[1:]]
        parent: Any = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.setdefault(p, {})
        last = parts[-1]
        kind = op["op"]
        if kind == "test":
            current = parent.get(last) if isinstance(parent, dict) else parent[int(last)]
            if not values_equal(current, op["value"]):
                raise MigrationError(f"test of {op['path']} failed: the object changed")
        elif kind in ("add", "replace"):
            parent[last] = copy_json(op["value"])
        elif kind == "remove":
            del parent[last]
    return doc
