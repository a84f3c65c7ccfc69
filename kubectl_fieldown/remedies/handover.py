"""Plans that move or drop ownership of named fields or managers: ``strip-last-applied``
(:func:`plan_strip_last_applied`), ``handover`` (:func:`plan_handover`), ``reset``
(:func:`plan_reset`) and dropping stale managers (:func:`plan_drop_managers`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..base.globs import matches_any
from ..fieldmanager import copy_json
from ..fieldpath import FIELD, KEY, FieldSet, Path, key_fields, path_from_fields, path_string
from ..fieldpath.lookup import MISSING, Lookup, child_value, value_at
from ..ownership.managedfields import (
    APPLY,
    KUBECTL_CLIENT_SIDE_APPLY,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
)
from ..schema.types import Type
from ..typed.tofieldset import to_field_set
from .migration import Migration, MigrationError, _finish, _start, _without_paths, entries_differ
from .toclientside import last_applied_text

__all__ = [
    "applied_fields",
    "plan_drop_managers",
    "plan_handover",
    "plan_reset",
    "plan_strip_last_applied",
    "remove_paths",
]

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
        return e.operation == UPDATE and matches_any(e.manager, client_side_managers)

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
                                 matches_any(e.manager, client_side_managers), recursive=True)
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
    body: dict[str, Any] = {}
    set_live(body, look, path)
    return body


def set_live(doc: dict[str, Any], look: Lookup, path: Path) -> None:
    """Make ``doc`` set ``path`` to its value in ``look``'s object, in place. A list item on the way is
    found in ``doc``'s list by its key (a set item by its value), not by equality — two fields of one
    item are one item — and added reduced to its key where ``doc`` lacks it."""
    from ..fieldpath import KEY, VALUE, key_fields

    node: Any = doc
    live: Any = look.obj
    for i, pe in enumerate(path):
        last = i == len(path) - 1
        child = look.child(live, pe)
        if child is MISSING:
            raise MigrationError(f"{path_string(path)} is not set on the object")
        if pe[0] == FIELD:
            if last:
                node[pe[1]] = copy_json(child)
                return
            if not isinstance(node.get(pe[1]), (dict, list)):
                node[pe[1]] = {} if isinstance(child, dict) else []
            node = node[pe[1]]
        elif pe[0] == KEY or (pe[0] == VALUE and last):
            mine = child_value(node, pe)
            if mine is MISSING:
                mine = copy_json(child) if last else dict(key_fields(pe))
                node.append(mine)
            if last:
                return
            node = mine
        else:
            raise MigrationError(f"{path_string(path)}: a list index cannot be handed over (the whole list is one "
                                 "field: hand over the list)")
        live = child


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
    gone = [e for e in entries if matches_any(e.manager, managers)]
    after = [e for e in entries if not matches_any(e.manager, managers)]
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
