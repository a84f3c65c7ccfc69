"""``migrate --to client-side`` as a plan (:func:`plan_to_client_side`) and the last-applied
annotation kubectl would have written for a manifest (:func:`last_applied_manifest`,
:func:`last_applied_text`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.value import go_json, values_equal
from ..fieldmanager import copy_json
from ..fieldpath import FIELD, FieldSet
from ..ownership.managedfields import (
    APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
    ManagedFieldsEntry,
)
from ..schema.types import NO_DEFAULT, Type
from ..typed.items import LIST, MAP, ItemError, item_element, key_type, side
from ..typed.remove import extract_owned
from .migration import _LAC, Migration, MigrationError, _finish, _start

__all__ = ["last_applied_manifest", "last_applied_text", "plan_to_client_side"]

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
