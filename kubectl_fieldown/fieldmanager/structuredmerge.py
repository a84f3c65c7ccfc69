"""The structured-merge step of a write (apimachinery ``structuredmerge.go`` around
structured-merge-diff's ``Updater``).

:func:`update` is ``structuredMergeManager.Update``: the writer takes the fields it changed from
everyone else. :func:`apply` is ``structuredMergeManager.Apply`` with the version check
(``versioncheck.go``), the strip of metadata (``stripmeta.go``) and the entry's time
(``managedfieldsupdater.go``): merge, prune, conflicts, force.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fieldpath import FieldSet
from ..managedfields import APPLY, STRIPPED_METADATA, UPDATE, ManagerIdentity
from ..typed.compare import Comparison, compare
from ..typed.merge import merge
from ..typed.remove import ensure_named_fields_are_members, reconcile_with_schema, remove_items
from ..typed.tofieldset import to_field_set
from ..typed.validate import typed_errors
from ..value import values_equal
from .capmanagers import cap_update_managers
from .errors import ApplyConflict, BadRequest, FieldConflict, FieldManagerError
from .jsondata import api_version
from .managed import Managed, Owned, strip
from .request import WriteRequest
from .rules import ResourceRules

# --- update ------------------------------------------------------------------------------------


def update(
    live: dict[str, Any],
    new: dict[str, Any],
    managed: Managed,
    req: WriteRequest,
) -> Managed:
    """The managed set after ``req.manager`` writes ``new`` over ``live`` with a non-apply request
    (``req.force`` plays no part: an update always takes the fields it changes)."""
    rules, subresource = req.rules, req.subresource
    gv = rules.api_version
    ident = ManagerIdentity(req.manager, UPDATE, gv, subresource)
    ignored = rules.reset(subresource)
    m = managed.copy()
    if any(rules.unknown_version(o.api_version) for o in m.fields.values()):
        # SMD cannot convert the object to that version, the Update fails, and UpdateNoErrors writes
        # the object with no managedFields at all
        return Managed()
    _reconcile(m, live, rules)
    current = ManagerIdentity("current-operation", UPDATE, gv, subresource)
    c = _update_managers(live, new, m, current, True, rules, ignored)
    # SMD's Update for the temporary current-operation manager: its (empty) set less the removed
    # fields, union the modified and added ones — so a path both removed and added (an item that
    # becomes or stops being duplicated) is the writer's
    written = c.modified.union(c.added).recursive_difference(ignored)
    written = written.difference(STRIPPED_METADATA)
    m.fields.pop(current, None)
    if not written.is_empty():
        prev = m.fields.get(ident)
        fs = written.union(prev.fields) if prev is not None else written
        m.fields[ident] = Owned(fs, gv, False)
        m.times[ident] = req.now
    cap_update_managers(m)
    return m


# --- apply -------------------------------------------------------------------------------------


def apply(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: Managed,
    req: WriteRequest,
) -> tuple[dict[str, Any] | None, Managed]:
    """The object after ``req.manager`` applies ``cfg`` to ``live`` (None: unchanged) and the managed set."""
    rules = req.rules
    ident = ManagerIdentity(req.manager, APPLY, "", req.subresource)
    gv = rules.api_version
    if api_version(cfg) != gv:
        raise BadRequest(
            f"Incorrect version specified in apply patch. Specified patch version: {api_version(cfg)}, "
            f"expected: {gv}"
        )
    errs = typed_errors(cfg, rules.root)
    if errs:
        raise FieldManagerError(
            f"failed to create typed patch object ({_object_ref(cfg, rules)}): "
            + (errs[0] if len(errs) == 1 else "errors:\n" + "\n".join("  " + e for e in errs))
        )
    m = managed.copy()
    new_obj, m = _smd_apply(live, cfg, gv, m, ident, req.force, rules, rules.reset(req.subresource))
    # strip metadata from the applier's set
    strip(m, ident)
    if new_obj is not None:
        m.times[ident] = req.now
    return new_obj, m


def _smd_apply(
    live: dict[str, Any],
    cfg: dict[str, Any],
    gv: str,
    managed: Managed,
    ident: ManagerIdentity,
    force: bool,
    rules: ResourceRules,
    ignored: FieldSet,
) -> tuple[dict[str, Any] | None, Managed]:
    t = rules.root
    _reconcile(managed, live, rules)
    merged = merge(live, cfg, t)
    last = managed.fields.get(ident)
    s = to_field_set(cfg, t)
    if not ignored.is_empty():
        s = s.recursive_difference(ignored)
    managed.fields[ident] = Owned(s, gv, True)
    managed.times.setdefault(ident, None)
    if last is not None:
        merged = _prune(merged, managed, last, rules, s, gv)
    c = _update_managers(live, merged, managed, ident, force, rules, ignored)
    managed.last_comparison = c
    if values_equal(live, merged):
        return None, managed
    return merged, managed


def _prune(merged: Any, managed: Managed, last: Owned, rules: ResourceRules, applied: FieldSet, gv: str) -> Any:
    """Delete what the applier owned last time, no longer applies, and nobody else owns (SMD
    ``prune``): the applier's previous set is read at its own version, and every manager's fields
    are added back at theirs. With conversion None the object is the same at every version; only
    the schema that names its fields changes."""
    versions = {o.api_version for o in managed.fields.values()} | {last.api_version}
    one_schema = all(rules.root_at(v) is rules.root for v in versions)
    if last.fields.is_empty() or (one_schema and last.fields.difference(applied).is_empty()):
        # Nothing the applier owned is dropped: N(last) ⊆ N(applied) ⊆ N(all owned), so SMD's
        # remove-and-add-back below would put every removed node back.
        return merged
    lv = last.api_version
    tl = rules.root_at(lv)
    n_last = ensure_named_fields_are_members(last.fields, tl)
    pruned = remove_items(merged, n_last, tl)
    # add back what any manager (including the applier's new set) still owns, version by version,
    # the last set's version first (SMD addBackOwnedItems)
    owned_at: dict[str, FieldSet] = {}
    for o in managed.fields.values():
        owned_at[o.api_version] = owned_at.get(o.api_version, FieldSet()).union(o.fields)
    order = ([lv] if lv in owned_at else []) + sorted(v for v in owned_at if v != lv)
    for v in order:
        tv = rules.root_at(v)
        merged_set = ensure_named_fields_are_members(to_field_set(merged, tv), tv)
        pruned_set = ensure_named_fields_are_members(to_field_set(pruned, tv), tv)
        owned = ensure_named_fields_are_members(owned_at[v], tv)
        pruned = remove_items(merged, merged_set.difference(pruned_set.union(owned)), tv)
    # and only remove what the applier owned last time (SMD addBackDanglingItems, at its version)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, tl), tl)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, tl), tl)
    return remove_items(merged, merged_set.difference(pruned_set).intersection(n_last), tl)


# --- both --------------------------------------------------------------------------------------


def _update_managers(
    old: Any,
    new: Any,
    managed: Managed,
    ident: ManagerIdentity,
    force: bool,
    rules: ResourceRules,
    ignored: FieldSet,
) -> Comparison:
    """SMD ``update``: every other manager's fields that the write changes conflict (or are taken,
    with force), and those it removes are let go — each compared at the manager's own version."""
    c = compare(old, new, rules.root).exclude(ignored)
    by_version: dict[str, tuple[FieldSet, FieldSet]] = {}

    def at(version: str) -> tuple[FieldSet, FieldSet]:
        t = rules.root_at(version)
        if version not in by_version:
            cv = c if t is rules.root else compare(old, new, t).exclude(ignored)
            by_version[version] = (cv.modified.union(cv.added), cv.removed)
        return by_version[version]

    conflicts: dict[ManagerIdentity, FieldSet] = {}
    for other, owned in managed.fields.items():
        if other == ident:
            continue
        cs = owned.fields.intersection(at(owned.api_version)[0])
        if cs:
            conflicts[other] = cs
    if conflicts and not force:
        raise ApplyConflict([FieldConflict(o, p) for o, cs in conflicts.items() for p in cs])
    for other in list(managed.fields):
        if other == ident:
            continue
        owned = managed.fields[other]
        fs = owned.fields
        if other in conflicts:
            fs = fs.difference(conflicts[other])
        removed = at(owned.api_version)[1]
        if removed:
            fs = fs.difference(removed)
        if fs is not owned.fields:
            managed.fields[other] = Owned(fs, owned.api_version, owned.applied)
    for other in list(managed.fields):
        if managed.fields[other].fields.is_empty():
            del managed.fields[other]
    return c


def _reconcile(managed: Managed, live: Any, rules: ResourceRules) -> None:
    for ident, owned in list(managed.fields.items()):
        r = reconcile_with_schema(owned.fields, live, rules.root_at(owned.api_version))
        if r is not None:
            managed.fields[ident] = Owned(r, owned.api_version, owned.applied)


def _object_ref(obj: Mapping[str, Any], rules: ResourceRules) -> str:
    md = obj.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    gvk = rules.schema.gvk
    return f"{ns}/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}" if ns else \
        f"/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}"
