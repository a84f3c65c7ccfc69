"""The API server's field manager, simulated: server-side apply and updates with ownership.

This is apimachinery's ``pkg/util/managedfields`` pipeline around structured-merge-diff's
``Updater`` (see docs/ownership-model.md and the semantics notes §4, §7–§10):

* decode the live object's managedFields (Apply fails on undecodable entries; Update falls back);
* the ``kubectl`` last-applied conflict waiver and annotation sync;
* ``before-first-apply`` when an Apply meets an object whose managedFields are empty;
* SMD apply (merge, prune, conflicts, force) or update (take fields from others, record the writer);
* strip the 12 metadata paths, set ``time`` only on a real change, cap Update entries at 10
  (``ancient-changes``), sort and encode entries.

Everything here is pure: the caller passes the live object, the request and the time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .fieldpath import UNSTRUCTURED, FieldSet, Path, path_from_fields, path_string
from .fieldpath.element import FIELD
from .fieldpath.lookup import MISSING
from .managedfields import (
    ANCIENT_CHANGES,
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    LAST_APPLIED_ANNOTATION,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
    ManagedFieldsError,
    ManagerIdentity,
    decode_entries,
    sort_entries,
)
from .schema.types import KindSchema, Type
from .typed.compare import Comparison, compare
from .typed.merge import merge
from .typed.remove import ensure_named_fields_are_members, reconcile_with_schema, remove_items
from .typed.tofieldset import to_field_set
from .typed.validate import duplicate_errors, null_errors, prune_non_nullable_nulls, typed_errors
from .value import values_equal

MAX_UPDATE_MANAGERS = 10
ANNOTATIONS_SIZE_LIMIT = 256 * 1024




# --- errors ------------------------------------------------------------------------------------


class FieldManagerError(Exception):
    """The API server would refuse the request. ``status`` is the HTTP code it would answer."""

    status = 500
    reason: str | None = None

    def __init__(self, message: str, causes: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.causes = causes or []


class BadRequest(FieldManagerError):
    status = 400
    reason = "BadRequest"


class Invalid(FieldManagerError):
    status = 422
    reason = "Invalid"


@dataclass(frozen=True)
class FieldConflict:
    """Another manager owns a field the apply would change."""

    identity: ManagerIdentity
    path: Path

    @property
    def manager(self) -> str:
        return self.identity.manager

    @property
    def path_string(self) -> str:
        return path_string(self.path)


class ApplyConflict(FieldManagerError):
    status = 409
    reason = "Conflict"

    def __init__(self, conflicts: list[FieldConflict]) -> None:
        self.conflicts = conflicts
        super().__init__(conflict_message(conflicts), [
            {"reason": "FieldManagerConflict", "message": f"conflict with {c.identity.describe()}",
             "field": c.path_string}
            for c in conflicts
        ])


def conflict_message(conflicts: list[FieldConflict]) -> str:
    """The server's 409 message (AM ``NewConflictError``): managers sorted by identity JSON."""
    if len(conflicts) == 1:
        c = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {c.identity.describe()}: {c.path_string}"
    by: dict[ManagerIdentity, list[FieldConflict]] = {}
    for c in conflicts:
        by.setdefault(c.identity, []).append(c)
    lines = []
    for ident in sorted(by, key=lambda i: i.json()):
        lines.append(f"conflicts with {ident.describe()}:")
        lines.extend(f"- {c.path_string}" for c in by[ident])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# --- resource description ----------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceRules:
    """What the server needs to know about a resource beyond its schema.

    ``reset_fields`` maps an endpoint ("" for the main resource, "status") to the fields that a
    write through it never changes or owns (the main endpoint resets ``status`` when a status
    subresource exists; the status endpoint resets ``spec``).
    """

    schema: KindSchema
    reset_fields: Mapping[str, FieldSet] = field(default_factory=dict)
    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """For built-in kinds: the object as the server's Go types would hold it (zero values of
    non-omitempty fields, non-pointer structs as ``{}``). None for custom resources."""
    custom_resource: bool = True
    """Custom resources go through the CRD validator, which refuses nulls the schema does not allow
    (the only validation the simulation models). Built-in kinds are validated by Go code we do not
    reproduce."""

    @classmethod
    def for_kind(
        cls,
        schema: KindSchema,
        status_subresource: bool,
        normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        custom_resource: bool = True,
    ) -> ResourceRules:
        reset: dict[str, FieldSet] = {}
        if status_subresource:
            status_reset = [path_from_fields("spec")]
            if custom_resource:
                # apiextensions statusStrategy.GetResetFields: a status write keeps nothing but status
                status_reset = [path_from_fields(f) for f in ("apiVersion", "kind", "metadata", "spec")]
            reset = {"": FieldSet([path_from_fields("status")]), "status": FieldSet(status_reset)}
        return cls(schema, reset, normalize, custom_resource)

    @property
    def api_version(self) -> str:
        return self.schema.gvk.api_version

    @property
    def root(self) -> Type:
        return self.schema.root

    def reset(self, subresource: str) -> FieldSet:
        return self.reset_fields.get(subresource, FieldSet())


# --- the managed set -----------------------------------------------------------------------------


@dataclass
class _Owned:
    fields: FieldSet
    api_version: str
    applied: bool


class _Managed:
    """Managers by identity, with their times (apimachinery ``Managed``)."""

    def __init__(self) -> None:
        self.fields: dict[ManagerIdentity, _Owned] = {}
        self.times: dict[ManagerIdentity, str | None] = {}
        self.last_comparison: Comparison | None = None

    @classmethod
    def from_entries(cls, entries: list[ManagedFieldsEntry]) -> _Managed:
        m = cls()
        for e in entries:
            ident = e.identity
            # the later of two entries with the same identity wins
            m.fields[ident] = _Owned(e.fields, e.api_version, e.operation == APPLY)
            m.times[ident] = e.time
        return m

    def copy(self) -> _Managed:
        m = _Managed()
        m.fields = dict(self.fields)
        m.times = dict(self.times)
        m.last_comparison = self.last_comparison
        return m

    def entries(self) -> list[ManagedFieldsEntry]:
        out = []
        for ident, owned in self.fields.items():
            if owned.fields.is_empty():
                continue
            out.append(
                ManagedFieldsEntry(
                    manager=ident.manager,
                    operation=ident.operation,
                    api_version=owned.api_version,
                    fields=owned.fields,
                    time=self.times.get(ident),
                    subresource=ident.subresource,
                )
            )
        return sort_entries(out)


# --- results -----------------------------------------------------------------------------------


@dataclass
class WriteResult:
    """The object after a simulated write, and its managedFields."""

    object: dict[str, Any]
    entries: list[ManagedFieldsEntry]
    changed: bool
    """False when the server would leave the object itself unchanged (managedFields may still move)."""
    comparison: Comparison | None = None
    """live → result, at the request's version (for explanations)."""


# --- public entry points -----------------------------------------------------------------------


def simulate_apply(
    live: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    *,
    now: str,
    force: bool = False,
    subresource: str = "",
) -> WriteResult:
    """What a server-side apply of ``config`` by ``manager`` would do to ``live`` (None: create).

    Raises :class:`ApplyConflict` (409), :class:`BadRequest` (400), :class:`Invalid` (422) or
    :class:`FieldManagerError` (500) where the server would.
    """
    if not manager:
        raise Invalid(
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
              "field": "fieldManager"}],
        )
    # Inputs are only read: merge and prune build new containers where they change something and
    # share the rest, and the result is copied once before anything writes into it.
    cfg = _as_dict(config)
    if cfg.get("kind") != rules.schema.gvk.kind:
        raise BadRequest(f"invalid object type: {_gvk_text(cfg)}")
    md = cfg.get("metadata")
    if isinstance(md, dict) and md.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    creating = live is None
    live_obj: dict[str, Any] = _as_dict(live) if live is not None else _empty_object(rules)
    try:
        entries = decode_entries((live_obj.get("metadata") or {}).get("managedFields"))
    except ManagedFieldsError as e:
        raise FieldManagerError(f"failed to decode managed fields: {e}") from None
    live_obj = _without_managed_fields(live_obj)
    managed = _Managed.from_entries(entries)

    result_obj, managed = _apply_with_last_applied(live_obj, cfg, managed, manager, rules, now, force, subresource)

    result = result_obj if result_obj is not None else live_obj
    changed = result_obj is not None
    if changed:
        result = prepare_for_write(result, live_obj, rules, subresource)
        if rules.normalize is not None:
            result = rules.normalize(result)
        elif rules.custom_resource:
            result = coerce_object_meta(result)
        result = copy_json(result)  # the one copy: defaulting writes into it
        _apply_defaults(result, rules.root)
        errs = null_errors(result, rules.root) if rules.custom_resource else []
        if errs:
            raise _invalid(result, rules, errs)
    out = _encode(result, managed, copy=not changed)
    if creating and isinstance(out.get("metadata"), dict):
        out["metadata"].setdefault("creationTimestamp", now)
    return WriteResult(out, managed.entries(), changed or creating, managed.last_comparison)


def simulate_update(
    live: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    *,
    now: str,
    subresource: str = "",
) -> WriteResult:
    """A non-apply write (create, PUT, any PATCH) of the full new object ``new`` by ``manager``.

    ``live`` is None for a create. ``new`` may carry ``metadata.managedFields`` to rewrite ownership
    (``[{}]`` resets it), exactly as a client can.
    """
    creating = live is None
    # as in simulate_apply, the inputs are only read; _encode makes the one copy of the result
    live_obj = _as_dict(live) if live is not None else _empty_object(rules)
    new_obj = _as_dict(new)
    managed = _decode_live_or_new(live_obj, new_obj, subresource != "")
    live_obj = _without_managed_fields(live_obj)
    new_obj = _without_managed_fields(new_obj)
    if rules.normalize is not None:
        new_obj = rules.normalize(new_obj)
    elif rules.custom_resource:
        new_obj = coerce_object_meta(new_obj)
    # the server defaults the object it decodes from the request (or from the patched JSON) before
    # the field manager sees it: a defaulted field is part of what the write changed. A custom
    # resource's decoder first drops the nulls its schema allows nowhere (an apply is not decoded
    # so: its nulls reach the validator)
    if rules.custom_resource and rules.normalize is None:
        new_obj = prune_non_nullable_nulls(new_obj, rules.root, keep=("metadata",))
    new_obj = copy_json(new_obj)
    _apply_defaults(new_obj, rules.root)
    tracked = True
    if not managed.fields and not creating and not _has_uid_empty(live_obj):
        # an existing object with empty managedFields: the write is not tracked
        tracked = False
    if tracked:
        managed = _update(live_obj, new_obj, managed, manager or "unknown", rules, now, subresource)
    new_obj = prepare_for_write(new_obj, live_obj, rules, subresource)
    if rules.custom_resource and rules.normalize is None:
        # the CRD validator: nulls in lists, repeated items of sets and keys of list-maps (metadata
        # is ObjectMeta's business: coerced above)
        body = {k: v for k, v in new_obj.items() if k != "metadata"}
        errs = null_errors(body, rules.root) + duplicate_errors(body, rules.root)
        if errs:
            raise _invalid(new_obj, rules, errs)
    out = _encode(new_obj, managed)
    changed = not values_equal(live_obj, new_obj)
    return WriteResult(out, managed.entries(), changed, compare(live_obj, new_obj, rules.root))


def _invalid(obj: Mapping[str, Any], rules: ResourceRules, errs: list[tuple[str, str]]) -> Invalid:
    """The CRD validator's 422 for ``(field, message)`` errors."""
    name = (obj.get("metadata") or {}).get("name", "")
    kind = rules.schema.gvk
    what = f"{kind.kind}.{kind.group}" if kind.group else kind.kind
    text = ", ".join(f"{f}: {m}" for f, m in errs)
    return Invalid(
        f'{what} "{name}" is invalid: ' + (text if len(errs) == 1 else f"[{text}]"),
        [{"reason": "FieldValueDuplicate" if m.startswith("Duplicate") else "FieldValueTypeInvalid",
          "message": m, "field": f} for f, m in errs],
    )


# --- apply pipeline ----------------------------------------------------------------------------


def _apply_with_last_applied(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: _Managed,
    manager: str,
    rules: ResourceRules,
    now: str,
    force: bool,
    subresource: str,
) -> tuple[dict[str, Any] | None, _Managed]:
    try:
        obj, m = _apply_skip_non_applied(live, cfg, managed, manager, rules, now, force, subresource)
    except ApplyConflict as e:
        if manager != KUBECTL:
            raise
        allowed = _allowed_conflicts_from_last_applied(live, rules)
        if allowed is None:
            raise
        remaining = [c for c in e.conflicts if not allowed.has(c.path)]
        if remaining:
            raise ApplyConflict(remaining) from None
        obj, m = _apply_skip_non_applied(live, cfg, managed, manager, rules, now, True, subresource)
    if manager == KUBECTL:
        target = obj if obj is not None else live
        if _last_applied(target):
            if obj is None:
                obj = copy_json(live)
                target = obj
            _set_last_applied(target, _build_last_applied(cfg))
            if values_equal(target, live):
                obj = None
    return obj, m


def _allowed_conflicts_from_last_applied(live: dict[str, Any], rules: ResourceRules) -> FieldSet | None:
    la = _last_applied(live)
    if not la:
        return None
    try:
        la_obj = json.loads(la)
    except ValueError:
        return None
    if not isinstance(la_obj, dict) or la_obj.get("apiVersion") != rules.api_version:
        return None
    if typed_errors(la_obj, rules.root):
        return None
    la_set = to_field_set(la_obj, rules.root)
    c = compare(la_obj, live, rules.root)
    return la_set.difference(c.modified).difference(c.added).difference(c.removed)


def _apply_skip_non_applied(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: _Managed,
    manager: str,
    rules: ResourceRules,
    now: str,
    force: bool,
    subresource: str,
) -> tuple[dict[str, Any] | None, _Managed]:
    if not managed.fields:
        empty = _empty_object(rules)
        managed = _update(empty, live, managed, BEFORE_FIRST_APPLY, rules, now, subresource)
    ident = ManagerIdentity(manager, APPLY, "", subresource)
    gv = rules.api_version
    if _api_version(cfg) != gv:
        raise BadRequest(
            f"Incorrect version specified in apply patch. Specified patch version: {_api_version(cfg)}, "
            f"expected: {gv}"
        )
    errs = typed_errors(cfg, rules.root)
    if errs:
        raise FieldManagerError(
            f"failed to create typed patch object ({_object_ref(cfg, rules)}): "
            + (errs[0] if len(errs) == 1 else "errors:\n" + "\n".join("  " + e for e in errs))
        )
    m = managed.copy()
    new_obj, m = _smd_apply(live, cfg, gv, m, ident, force, rules.root, rules.reset(subresource))
    # strip metadata from the applier's set
    _strip(m, ident)
    if new_obj is not None:
        m.times[ident] = now
    return new_obj, m


def _smd_apply(
    live: dict[str, Any],
    cfg: dict[str, Any],
    gv: str,
    managed: _Managed,
    ident: ManagerIdentity,
    force: bool,
    t: Type,
    ignored: FieldSet,
) -> tuple[dict[str, Any] | None, _Managed]:
    _reconcile(managed, live, t)
    merged = merge(live, cfg, t)
    last = managed.fields.get(ident)
    s = to_field_set(cfg, t)
    last_set = last.fields if last is not None else FieldSet()
    if not ignored.is_empty():
        s = s.recursive_difference(ignored)
    managed.fields[ident] = _Owned(s, gv, True)
    managed.times.setdefault(ident, None)
    merged = _prune(merged, managed, last_set, t, s)
    c = _update_managers(live, merged, managed, ident, force, t, ignored)
    managed.last_comparison = c
    if values_equal(live, merged):
        return None, managed
    return merged, managed


def _prune(merged: Any, managed: _Managed, last: FieldSet, t: Type, applied: FieldSet) -> Any:
    """Delete what the applier owned last time, no longer applies, and nobody else owns."""
    if last.is_empty() or last.difference(applied).is_empty():
        # Nothing the applier owned is dropped: N(last) ⊆ N(applied) ⊆ N(all owned), so SMD's
        # remove-and-add-back below would put every removed node back.
        return merged
    n_last = ensure_named_fields_are_members(last, t)
    pruned = remove_items(merged, n_last, t)
    # add back what any manager (including the applier's new set) still owns
    owned = FieldSet()
    for o in managed.fields.values():
        owned = owned.union(o.fields)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, t), t)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, t), t)
    pruned = remove_items(merged, merged_set.difference(pruned_set.union(ensure_named_fields_are_members(owned, t))), t)
    # and only remove what the applier owned last time
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, t), t)
    return remove_items(merged, merged_set.difference(pruned_set).intersection(n_last), t)


def _update_managers(
    old: Any,
    new: Any,
    managed: _Managed,
    ident: ManagerIdentity,
    force: bool,
    t: Type,
    ignored: FieldSet,
) -> Comparison:
    c = compare(old, new, t).exclude(ignored)
    changed = c.modified.union(c.added)
    conflicts: dict[ManagerIdentity, FieldSet] = {}
    for other, owned in managed.fields.items():
        if other == ident:
            continue
        cs = owned.fields.intersection(changed)
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
        if c.removed:
            fs = fs.difference(c.removed)
        if fs is not owned.fields:
            managed.fields[other] = _Owned(fs, owned.api_version, owned.applied)
    for other in list(managed.fields):
        if managed.fields[other].fields.is_empty():
            del managed.fields[other]
    return c


def _reconcile(managed: _Managed, live: Any, t: Type) -> None:
    for ident, owned in list(managed.fields.items()):
        r = reconcile_with_schema(owned.fields, live, t)
        if r is not None:
            managed.fields[ident] = _Owned(r, owned.api_version, owned.applied)


# --- update pipeline ---------------------------------------------------------------------------


def _update(
    live: dict[str, Any],
    new: dict[str, Any],
    managed: _Managed,
    manager: str,
    rules: ResourceRules,
    now: str,
    subresource: str,
) -> _Managed:
    gv = rules.api_version
    ident = ManagerIdentity(manager, UPDATE, gv, subresource)
    t = rules.root
    ignored = rules.reset(subresource)
    m = managed.copy()
    _reconcile(m, live, t)
    current = ManagerIdentity("current-operation", UPDATE, gv, subresource)
    c = _update_managers(live, new, m, current, True, t, ignored)
    written = c.modified.union(c.added).difference(c.removed).recursive_difference(ignored)
    written = written.difference(STRIPPED_METADATA)
    m.fields.pop(current, None)
    if not written.is_empty():
        prev = m.fields.get(ident)
        fs = written.union(prev.fields) if prev is not None else written
        m.fields[ident] = _Owned(fs, gv, False)
        m.times[ident] = now
    _cap_update_managers(m)
    return m


def _cap_update_managers(m: _Managed) -> None:
    updaters = [i for i, o in m.fields.items() if not o.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    from .managedfields import parse_time

    updaters.sort(key=lambda i: (parse_time(m.times.get(i)), i.json()))
    first_of_version: dict[str, ManagerIdentity] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        owned = m.fields[ident]
        version = owned.api_version
        bucket = ManagerIdentity(ANCIENT_CHANGES, UPDATE, version, "")
        first = first_of_version.get(version)
        if first is None:
            first_of_version[version] = ident
            continue
        if bucket not in m.fields:
            m.fields[bucket] = m.fields.pop(first)
        t = m.times.get(ident)
        m.fields[bucket] = _Owned(owned.fields.union(m.fields[bucket].fields), version, owned.applied)
        # upstream deletes the merged entry even when it is the bucket itself; keep that behaviour
        del m.fields[ident]
        length -= 1
        m.times[bucket] = t


def _decode_live_or_new(live: dict[str, Any], new: dict[str, Any], ignore_new: bool) -> _Managed:
    live_mf = (live.get("metadata") or {}).get("managedFields")
    if not ignore_new:
        md = new.get("metadata") or {}
        if "managedFields" in md:
            new_mf = md.get("managedFields")
            if isinstance(new_mf, list) and (len(new_mf) == 0 or (len(new_mf) == 1 and new_mf[0] == {})):
                # A non-nil empty list only resets when it survives decoding as non-nil; the
                # server's JSON path keeps [] non-nil but the public docs and our recorded cases
                # (cur-reset-with-empty-list-is-not-a-reset) show [] does not reset: only [{}] does.
                if len(new_mf) == 1:
                    return _Managed()
            else:
                try:
                    decoded = decode_entries(new_mf)
                except ManagedFieldsError:
                    decoded = []
                if decoded:
                    return _Managed.from_entries(decoded)
    try:
        return _Managed.from_entries(decode_entries(live_mf))
    except ManagedFieldsError:
        return _Managed()


# --- helpers -----------------------------------------------------------------------------------


def _strip(m: _Managed, ident: ManagerIdentity) -> None:
    owned = m.fields.get(ident)
    if owned is None:
        return
    fs = owned.fields.difference(STRIPPED_METADATA)
    if fs.is_empty():
        del m.fields[ident]
    else:
        m.fields[ident] = _Owned(fs, owned.api_version, owned.applied)


def _encode(obj: dict[str, Any], managed: _Managed, copy: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = copy_json(obj) if copy else obj
    entries = managed.entries()
    md = out.setdefault("metadata", {})
    if not isinstance(md, dict):
        return out
    if entries:
        # a custom resource's entries come back from the server as sorted maps
        md["managedFields"] = [e.to_dict(UNSTRUCTURED) for e in entries]
    else:
        md.pop("managedFields", None)
    return out


def _as_dict(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object itself when it is a plain dict (read only), else a plain copy."""
    return obj if type(obj) is dict else _plain(obj)


def _plain(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = copy_json(dict(obj))
    return out


def copy_json(v: Any) -> Any:
    """A deep copy of JSON data (much cheaper than ``copy.deepcopy`` on this hot path)."""
    t = type(v)
    if t is dict:
        return {k: copy_json(x) for k, x in v.items()}
    if t is list:
        return [copy_json(x) for x in v]
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    if isinstance(v, Mapping):
        return {k: copy_json(x) for k, x in v.items()}
    return v


def prepare_for_write(obj: dict[str, Any], live: dict[str, Any], rules: ResourceRules,
                      subresource: str) -> dict[str, Any]:
    """The registry strategy's ``PrepareForCreate``/``PrepareForUpdate``, which runs after the field
    manager: the endpoint's reset fields get the live object's values back (or vanish when the live
    object has none). So an apply or update of ``status`` through the main endpoint of a kind with a
    status subresource changes nothing there (nor on create), and a status write of a custom
    resource keeps nothing but ``status`` (apiextensions ``statusStrategy`` copies the old object).
    The field manager has already left these fields out of every manager's set."""
    reset = rules.reset(subresource)
    if reset.is_empty():
        return obj
    if subresource == "status" and rules.custom_resource:
        out: dict[str, Any] = copy_json(live)
        if "status" in obj:
            out["status"] = copy_json(obj["status"])
        else:
            out.pop("status", None)
        return out
    out = dict(obj)
    for path in reset:
        names = [pe[1] for pe in path if pe[0] == FIELD]
        if len(names) != len(path) or not names:
            continue
        src: Any = live
        for n in names:
            src = src.get(n, MISSING) if isinstance(src, dict) else MISSING
        dst: Any = out
        for n in names[:-1]:
            child = dst.get(n)
            if not isinstance(child, dict):
                if src is MISSING:
                    break
                child = {}
            child = dict(child)
            dst[n] = child
            dst = child
        else:
            if src is MISSING:
                dst.pop(names[-1], None)
            else:
                dst[names[-1]] = copy_json(src)
    return out


# metav1.ObjectMeta's JSON fields, with what runtime.DefaultUnstructuredConverter omits: every field
# is omitempty (empty string, 0, null, empty map or list) except creationTimestamp, a struct.
_OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
})
_OWNER_REFERENCE_FIELDS = ("apiVersion", "kind", "name", "uid")  # not omitempty
_OWNER_REFERENCE_POINTERS = ("controller", "blockOwnerDeletion")  # *bool, omitempty


def _empty_go(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, bool):
        return v is False
    if isinstance(v, (int, float)):
        return v == 0
    if isinstance(v, (str, dict, list)):
        return len(v) == 0
    return False


def coerce_object_meta(obj: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's metadata as the CRD handler stores and returns it.

    The handler round-trips ``metadata`` through ``metav1.ObjectMeta`` on every decode
    (apiextensions-apiserver ``unstructuredSchemaCoercer.apply``: ``GetObjectMeta`` then
    ``SetObjectMeta``, i.e. runtime ``ToUnstructured``): unknown keys go, and the omitempty fields
    go when empty, e.g. ``labels: {}``, ``annotations: {}``, ``finalizers: []``,
    ``generateName: ""``. An Update sees the coerced object (so it owns none of these); an Apply
    owns them (the field manager runs before the object is stored) but the object loses them.
    """
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return obj
    out: dict[str, Any] = {}
    for k, v in md.items():
        if k not in _OBJECT_META_FIELDS:
            continue
        if k == "creationTimestamp":
            out[k] = v
        elif k == "deletionGracePeriodSeconds":
            if v is not None:
                out[k] = v
        elif k == "ownerReferences" and isinstance(v, list) and v:
            out[k] = [_coerce_owner_reference(r) if isinstance(r, dict) else r for r in v]
        elif not _empty_go(v):
            out[k] = v
    if out == md:
        return obj
    obj = dict(obj)
    obj["metadata"] = out
    return obj


def _coerce_owner_reference(ref: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: ref.get(k) if ref.get(k) is not None else "" for k in _OWNER_REFERENCE_FIELDS}
    for k in _OWNER_REFERENCE_POINTERS:
        if ref.get(k) is not None:
            out[k] = ref[k]
    return out


def _without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj.get("metadata")
    if isinstance(md, dict) and "managedFields" in md:
        obj = dict(obj)
        md = dict(md)
        del md["managedFields"]
        obj["metadata"] = md
    return obj


def _empty_object(rules: ResourceRules) -> dict[str, Any]:
    if rules.schema.zero is not None:
        return dict(copy_json(rules.schema.zero))
    return {"apiVersion": rules.api_version, "kind": rules.schema.gvk.kind}


def _has_uid_empty(obj: dict[str, Any]) -> bool:
    return not (obj.get("metadata") or {}).get("uid")


def _api_version(obj: Mapping[str, Any]) -> str:
    v = obj.get("apiVersion")
    return v if isinstance(v, str) else ""


def _gvk_text(obj: Mapping[str, Any]) -> str:
    av = _api_version(obj)
    group, _, version = av.rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind', '')}"


def _object_ref(obj: Mapping[str, Any], rules: ResourceRules) -> str:
    md = obj.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    gvk = rules.schema.gvk
    return f"{ns}/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}" if ns else \
        f"/{name}; {gvk.group}/{gvk.version}, Kind={gvk.kind}"


def _last_applied(obj: Mapping[str, Any]) -> str:
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    v = ann.get(LAST_APPLIED_ANNOTATION) if isinstance(ann, dict) else None
    return v if isinstance(v, str) else ""


def _build_last_applied(cfg: dict[str, Any]) -> str:
    """The annotation the server writes after ``kubectl`` applies: the config as Go's json.Encoder
    writes it (sorted keys, HTML escaping, trailing newline), without the annotation itself."""
    obj = copy_json(cfg)
    md = obj.get("metadata")
    if isinstance(md, dict):
        ann = md.get("annotations")
        if isinstance(ann, dict):
            ann.pop(LAST_APPLIED_ANNOTATION, None)
        elif ann is None and "annotations" in md:
            del md["annotations"]
    from .value import go_json

    return go_json(obj) + "\n"


def _set_last_applied(obj: dict[str, Any], value: str) -> None:
    md = obj.setdefault("metadata", {})
    ann = md.get("annotations")
    if not isinstance(ann, dict):
        ann = {}
    ann = dict(ann)
    ann[LAST_APPLIED_ANNOTATION] = value
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in ann.items())
    if size > ANNOTATIONS_SIZE_LIMIT:
        del ann[LAST_APPLIED_ANNOTATION]
    md["annotations"] = ann


def _apply_defaults(obj: Any, t: Type) -> None:
    """Schema defaults for fields the result lacks (defaulting runs after the merge, so unowned)."""
    from .schema.types import NO_DEFAULT
    from .typed.items import LIST, MAP, side

    s = side(t, obj)
    if s == MAP and type(obj) is dict and t.map is not None:
        for name, f in t.map.fields.items():
            if name not in obj and f.default is not NO_DEFAULT:
                obj[name] = copy_json(f.default)
        for k, v in obj.items():
            sf = t.map.fields.get(k)
            ct = sf.type if sf is not None else t.map.element
            if ct is not None and isinstance(v, (dict, list)):
                _apply_defaults(v, ct)
    elif s == LIST and type(obj) is list and t.list is not None:
        for item in obj:
            if isinstance(item, (dict, list)):
                _apply_defaults(item, t.list.item)


__all__ = [
    "ApplyConflict",
    "BadRequest",
    "FieldConflict",
    "FieldManagerError",
    "Invalid",
    "ResourceRules",
    "WriteResult",
    "conflict_message",
    "simulate_apply",
    "simulate_update",
]
