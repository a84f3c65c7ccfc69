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

from ..base.identitymemo import CHECK
from ..base.value import values_equal
from ..fieldpath import FieldSet
from ..fieldpath.pathstring import spelled_paths
from ..ownership.managedfields import APPLY, STRIPPED_METADATA, UPDATE, ManagerIdentity
from ..schema.types import Type
from ..typed.compare import Comparison, compare
from ..typed.items import KnownIndexes
from ..typed.merge import merge_compared
from ..typed.remove import ensure_named_fields_are_members, reconcile_with_schema, remove_items
from ..typed.tofieldset import to_field_set
from ..typed.validate import typed_errors, typed_message
from .capmanagers import cap_update_managers
from .errors import ApplyConflict, BadRequest, FieldConflict, FieldManagerError
from .jsondata import api_version
from .managed import Managed, Owned, strip
from .request import WriteRequest
from .rules import ConversionError, MissingVersion, ResourceRules

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
    ignored = rules.ignored(subresource, gv)
    m = managed.copy()
    if any(rules.unknown_version(o.api_version) for o in m.fields.values()):
        # SMD cannot convert the object to that version, the Update fails, and UpdateNoErrors writes
        # the object with no managedFields at all
        return Managed()
    current = ManagerIdentity("current-operation", UPDATE, gv, subresource)
    try:
        _reconcile(m, live, rules)
        c = _update_managers(live, new, m, current, True, rules, subresource)
    except (ConversionError, _Failed):
        # a conversion the field manager needs fails: UpdateNoErrors drops managedFields
        return Managed()
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
    # the validation identifies every item of the configuration's lists: the merge and its field set
    # take the indexes from it
    known: KnownIndexes = {}
    errs = typed_errors(cfg, rules.root, undeclared=rules.custom_resource, indexes=known)
    if errs:
        raise FieldManagerError(f"failed to create typed patch object ({_object_ref(cfg, rules)}): "
                                + typed_message(errs))
    m = managed.copy()
    try:
        new_obj, m = _smd_apply(live, cfg, gv, m, ident, req.force, rules, req.subresource, known)
    except _Failed as e:
        raise FieldManagerError(str(e)) from None
    except ConversionError as e:  # reconciling an entry: the converter's error as it is
        raise FieldManagerError(str(e)) from None
    # strip metadata from the applier's set
    strip(m, ident)
    if new_obj is not None:
        m.times[ident] = req.now
    return new_obj, m


class _Failed(Exception):
    """An error of SMD's Updater, with its message (the server answers it as a 500)."""


def _smd_apply(
    live: dict[str, Any],
    cfg: dict[str, Any],
    gv: str,
    managed: Managed,
    ident: ManagerIdentity,
    force: bool,
    rules: ResourceRules,
    subresource: str,
    known: KnownIndexes | None = None,
) -> tuple[dict[str, Any] | None, Managed]:
    t = rules.root
    ignored = rules.ignored(subresource, gv)
    _reconcile(managed, live, rules)
    merged, merge_comparison = merge_compared(live, cfg, t, known)
    if CHECK:  # the developers' check (the test run): the merge's record is compare's own answer
        assert merge_comparison == compare(live, merged, t), "merge_compared disagrees with compare"
    compared: Comparison | None = merge_comparison
    last = managed.fields.get(ident)
    if last is not None:
        s = _record_applied(managed, ident, cfg, t, ignored, gv, known)
        try:
            pruned = _prune(merged, managed, last, rules, s, gv)
        except _Failed as e:
            raise _Failed(f"failed to prune fields: {e}") from None
        if pruned is not merged:
            merged, compared = pruned, None  # the merge's comparison is not the prune's
    c = _update_managers(live, merged, managed, ident, force, rules, subresource, compared)
    if last is None:
        # with nothing to prune, no step before reads the applier's new set (the others' conflicts
        # and losses are the object's changes): it is built once the apply is known to go through
        _record_applied(managed, ident, cfg, t, ignored, gv, known)
    managed.last_comparison = c
    if values_equal(live, merged):
        return None, managed
    return merged, managed


def _record_applied(managed: Managed, ident: ManagerIdentity, cfg: dict[str, Any], t: Type, ignored: FieldSet,
                    gv: str, known: KnownIndexes | None = None) -> FieldSet:
    """The applier's new entry: the configuration's set, less the fields the strategy ignores."""
    s = managed.config_set = to_field_set(cfg, t, known)
    if not ignored.is_empty():
        s = s.recursive_difference(ignored)
    managed.fields[ident] = Owned(s, gv, True)
    managed.times.setdefault(ident, None)
    return s


def _convert(rules: ResourceRules, obj: Any, version: str, what: str) -> Any:
    """``obj`` at ``version``; a failure as SMD words it (``failed to convert <what>: ...``)."""
    try:
        return rules.convert(obj, version)
    except MissingVersion:
        raise
    except ConversionError as e:
        raise _Failed(f"failed to convert {what}: {e}") from None


def _prune(merged: Any, managed: Managed, last: Owned, rules: ResourceRules, applied: FieldSet, gv: str) -> Any:
    """Delete what the applier owned last time, no longer applies, and nobody else owns (SMD
    ``prune``): the merged object converted to the version of the applier's previous set, its
    items removed there, every manager's fields added back at their own versions (converting
    again), and the result converted back to the request's version."""
    if last.fields.is_empty():
        return merged
    versions = {o.api_version for o in managed.fields.values()} | {last.api_version}
    one_schema = rules.converter is None and all(rules.root_at(v) is rules.root for v in versions)
    if one_schema and last.fields.issubset(applied):
        # Nothing the applier owned is dropped: N(last) ⊆ N(applied) ⊆ N(all owned), so SMD's
        # remove-and-add-back below would put every removed node back.
        return merged
    lv = last.api_version
    tl = rules.root_at(lv)
    try:
        converted = _convert(rules, merged, lv, "merged object to last applied version")
    except MissingVersion:
        return merged
    n_last = ensure_named_fields_are_members(last.fields, tl)
    pruned = remove_items(converted, n_last, tl)
    # add back what any manager (including the applier's new set) still owns, version by version,
    # the last set's version first (SMD addBackOwnedItems)
    owned_at: dict[str, FieldSet] = {}
    for o in managed.fields.values():
        owned_at[o.api_version] = owned_at.get(o.api_version, FieldSet()).union(o.fields)
    order = ([lv] if lv in owned_at else []) + sorted(v for v in owned_at if v != lv)
    cur = converted
    try:
        for v in order:
            tv = rules.root_at(v)
            try:
                cur = _convert(rules, cur, v, f"merged object at version {v}")
                pruned = _convert(rules, pruned, v, f"pruned object at version {v}")
            except MissingVersion:
                continue
            merged_set = ensure_named_fields_are_members(to_field_set(cur, tv), tv)
            pruned_set = ensure_named_fields_are_members(to_field_set(pruned, tv), tv)
            owned = ensure_named_fields_are_members(owned_at[v], tv)
            pruned = remove_items(cur, merged_set.difference(pruned_set.union(owned)), tv)
    except _Failed as e:
        raise _Failed(f"failed add back owned items: {e}") from None
    # and only remove what the applier owned last time (SMD addBackDanglingItems, at its version)
    try:
        at_last = _convert(rules, pruned, lv, "pruned object to last applied version")
    except MissingVersion:
        out = converted
    except _Failed as e:
        raise _Failed(f"failed add back dangling items: {e}") from None
    else:
        merged_set = ensure_named_fields_are_members(to_field_set(converted, tl), tl)
        pruned_set = ensure_named_fields_are_members(to_field_set(at_last, tl), tl)
        out = remove_items(converted, merged_set.difference(pruned_set).intersection(n_last), tl)
    try:
        return rules.convert(out, gv)
    except MissingVersion:
        raise
    except ConversionError as e:
        raise _Failed(str(e)) from None


# --- both --------------------------------------------------------------------------------------


def _update_managers(
    old: Any,
    new: Any,
    managed: Managed,
    ident: ManagerIdentity,
    force: bool,
    rules: ResourceRules,
    subresource: str,
    compared: Comparison | None = None,
) -> Comparison:
    """SMD ``update``: every other manager's fields that the write changes conflict (or are taken,
    with force), and those it removes are let go — each compared at the manager's own version (the
    objects converted to it; an entry of a version the converter does not know is dropped).
    ``compared``: ``compare(old, new)`` at the request's version, when it is known already."""
    gv = rules.api_version
    c = (compared if compared is not None else compare(old, new, rules.root)).exclude(rules.ignored(subresource, gv))
    by_version: dict[str, tuple[FieldSet, FieldSet]] = {gv: (c.modified.union(c.added), c.removed)}

    def at(version: str) -> tuple[FieldSet, FieldSet]:
        if version not in by_version:
            t = rules.root_at(version)
            vo = _convert(rules, old, version, "old object")
            vn = _convert(rules, new, version, "new object")
            cv = compare(vo, vn, t).exclude(rules.ignored(subresource, version))
            by_version[version] = (cv.modified.union(cv.added), cv.removed)
        return by_version[version]

    conflicts: dict[ManagerIdentity, FieldSet] = {}
    removed_by: dict[ManagerIdentity, FieldSet] = {}
    for other, owned in list(managed.fields.items()):
        if other == ident:
            continue
        try:
            changed, removed = at(owned.api_version)
        except MissingVersion:
            del managed.fields[other]
            continue
        cs = owned.fields.intersection(changed)
        if cs:
            conflicts[other] = cs
        if removed:
            removed_by[other] = removed
    if conflicts:
        if not force:
            # the 409's message spells every path: spelled as the sets are walked, shared prefixes once
            found: list[FieldConflict] = []
            paths: list[str] = []
            for o, cs in conflicts.items():
                for p, text in spelled_paths(cs):
                    found.append(FieldConflict(o, p))
                    paths.append(text)
            raise ApplyConflict(found, paths)
        managed.taken_over = [FieldConflict(o, p) for o, cs in conflicts.items() for p in cs]
    for other in list(managed.fields):
        if other == ident:
            continue
        owned = managed.fields[other]
        fs = owned.fields
        if other in conflicts:
            fs = fs.difference(conflicts[other])
        if other in removed_by:
            fs = fs.difference(removed_by[other])
        if fs is not owned.fields:
            managed.fields[other] = Owned(fs, owned.api_version, owned.applied)
    for other in list(managed.fields):
        if managed.fields[other].fields.is_empty():
            del managed.fields[other]
    return c


def _reconcile(managed: Managed, live: Any, rules: ResourceRules) -> None:
    """SMD ``reconcileManagedFieldsWithSchemaChanges``: each entry against the live object at its
    version (an entry of a version the converter does not know is dropped)."""
    for ident, owned in list(managed.fields.items()):
        try:
            at = rules.convert(live, owned.api_version)
        except MissingVersion:
            del managed.fields[ident]
            continue
        r = reconcile_with_schema(owned.fields, at, rules.root_at(owned.api_version))
        if r is not None:
            managed.fields[ident] = Owned(r, owned.api_version, owned.applied)


def _object_ref(obj: Mapping[str, Any], rules: ResourceRules) -> str:
    md = obj.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    gvk = rules.schema.gvk
    return f"{ns}/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}" if ns else \
        f"/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}"
