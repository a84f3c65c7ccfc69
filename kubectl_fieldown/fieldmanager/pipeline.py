"""The two entry points, :func:`simulate_apply` and :func:`simulate_update`: a write's path
through the REST handler, the field manager's chain of managers and the strategy, in the
server's order (apimachinery ``fieldmanager.go`` and the handlers' ``patch.go``/``update.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base.record import Record
from ..base.value import plain_json, values_equal
from ..fieldpath.element import Path
from ..fieldpath.lookup import MISSING, value_at
from ..fieldpath.set import FieldSet
from ..ownership.managedfields import ManagedFieldsEntry, ManagedFieldsError, decode_entries
from ..schema.types import NO_DEFAULT
from ..typed.compare import Comparison, compare
from ..typed.validate import (
    duplicate_errors,
    prune_non_nullable_nulls,
    prune_undeclared,
    scale_errors,
    type_errors,
)
from . import structuredmerge
from .errors import BadRequest, FieldConflict, FieldManagerError, Invalid
from .jsondata import api_version, as_dict, copy_json, decoded_numbers
from .lastapplied import apply_with_last_applied
from .managed import Managed, decode_live_or_new, encode, without_managed_fields
from .request import WriteRequest
from .rules import ResourceRules, empty_object
from .strategy import (
    coerce_object_meta,
    field_default,
    invalid,
    object_meta_errors,
    prepare_for_write,
    value_errors,
    with_defaults,
)


class WriteResult(Record, mutable=True):
    """The object after a simulated write, and its managedFields."""

    __slots__ = ("changed", "comparison", "config_set", "entries", "live_entries", "object", "taken_over")
    object: dict[str, Any]
    entries: list[ManagedFieldsEntry]
    changed: bool
    """False when the server would leave the object itself unchanged (managedFields may still move)."""
    comparison: Comparison | None
    """live → result, at the request's version (for explanations)."""
    config_set: FieldSet | None
    """An apply's: the field set of the configuration it sent (ignored fields included)."""
    live_entries: list[ManagedFieldsEntry] | None
    """The managedFields of the object written to, decoded (the entries the write left unchanged
    hold the same sets as the result's)."""
    taken_over: list[FieldConflict]
    """A forced apply's: the fields it took from other managers, as the same apply without force
    would have listed them in its 409 (before kubectl's last-applied waiver)."""

    def __init__(
        self,
        object: dict[str, Any],
        entries: list[ManagedFieldsEntry],
        changed: bool,
        comparison: Comparison | None = None,
        config_set: FieldSet | None = None,
        live_entries: list[ManagedFieldsEntry] | None = None,
        taken_over: list[FieldConflict] | None = None,
    ) -> None:
        self.object = object
        self.entries = entries
        self.changed = changed
        self.comparison = comparison
        self.config_set = config_set
        self.live_entries = live_entries
        self.taken_over = taken_over if taken_over is not None else []


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
    cfg = as_dict(config)
    if rules.custom_resource:
        # where the Go type of a number shows: the CRD validator (a built-in kind's decoder reads
        # 10.0 and 10 alike)
        cfg = decoded_numbers(cfg)
    if cfg.get("kind") != rules.schema.gvk.kind:
        raise BadRequest(f"invalid object type: {_gvk_text(cfg)}")
    md = cfg.get("metadata")
    if isinstance(md, dict) and md.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    creating = live is None
    live_obj: dict[str, Any] = as_dict(live) if live is not None else empty_object(rules)
    try:
        entries = decode_entries((live_obj.get("metadata") or {}).get("managedFields"))
    except ManagedFieldsError as e:
        raise FieldManagerError(f"failed to decode managed fields: {e}") from None
    live_obj = without_managed_fields(live_obj)
    managed = Managed.from_entries(entries)

    req = WriteRequest(manager, rules, now, subresource, force)
    result_obj, managed = apply_with_last_applied(live_obj, cfg, managed, req)

    result = result_obj if result_obj is not None else live_obj
    changed = result_obj is not None
    if not changed and not creating:
        # the server validates a write that changes nothing too: ratcheting keeps most of it, but
        # not what it never counts as unchanged (a preserve-unknown-fields map holding keys)
        errs = crd_errors(live_obj, live_obj, rules, subresource)
        if errs:
            raise invalid(live_obj, rules, errs)
    if changed:
        result = prepare_for_write(result, live_obj, rules, subresource)
        if rules.normalize is not None:
            result = rules.normalize(result)
        elif rules.custom_resource:
            result = coerce_object_meta(result)
        result = defaulted(result, rules)
        validate_write(result, None if creating else live_obj, rules, subresource)
        result = stored(result, rules)
    out = encode(result, managed)
    if creating and isinstance(out.get("metadata"), dict):
        out["metadata"].setdefault("creationTimestamp", now)
    return WriteResult(out, managed.entries(), changed or creating, managed.last_comparison, managed.config_set,
                       entries, managed.taken_over)


def simulate_update(
    live: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    manager: str,
    rules: ResourceRules,
    *,
    now: str,
    subresource: str = "",
    compared: bool = True,
) -> WriteResult:
    """A non-apply write (create, PUT, any PATCH) of the full new object ``new`` by ``manager``.

    ``live`` is None for a create. ``new`` may carry ``metadata.managedFields`` to rewrite ownership
    (``[{}]`` resets it), exactly as a client can. Without ``compared`` the result's ``comparison``
    is None (a caller that reads only the object spares a walk of it).
    """
    creating = live is None
    # as in simulate_apply, the inputs are only read; encode makes the one copy of the result
    live_obj = as_dict(live) if live is not None else empty_object(rules)
    new_obj = as_dict(new)
    managed = decode_live_or_new(live_obj, new_obj, subresource != "")
    live_obj = without_managed_fields(live_obj)
    new_obj = without_managed_fields(new_obj)
    if rules.normalize is not None:
        new_obj = rules.normalize(new_obj)
    elif rules.custom_resource:
        new_obj = coerce_object_meta(new_obj)
    # the server defaults the object it decodes from the request (or from the patched JSON) before
    # the field manager sees it: a defaulted field is part of what the write changed. A custom
    # resource's decoder first drops the fields and the nulls its schema allows nowhere (an apply is
    # not decoded so: its unknown fields fail, its nulls reach the validator)
    if rules.custom_resource and rules.normalize is None:
        # the decoder's structural pruning: fields the request version's schema does not declare
        # are dropped (the server answers with an "unknown field" warning)
        new_obj = prune_undeclared(new_obj, rules.root)
        new_obj = prune_non_nullable_nulls(new_obj, rules.root, keep=("metadata",))
    new_obj = defaulted(new_obj, rules)
    tracked = True
    if not managed.fields and not creating and not _has_uid_empty(live_obj):
        # an existing object with empty managedFields: the write is not tracked
        tracked = False
    if tracked:
        req = WriteRequest(manager or "unknown", rules, now, subresource)
        managed = structuredmerge.update(live_obj, new_obj, managed, req)
    new_obj = prepare_for_write(new_obj, live_obj, rules, subresource)
    validate_write(new_obj, None if creating else live_obj, rules, subresource)
    if rules.custom_resource and rules.normalize is None:
        new_obj = stored(new_obj, rules)
    out = encode(new_obj, managed)
    changed = not values_equal(live_obj, new_obj)
    return WriteResult(out, managed.entries(), changed, compare(live_obj, new_obj, rules.root) if compared else None)


def validate_write(obj: dict[str, Any], old: dict[str, Any] | None, rules: ResourceRules, subresource: str) -> None:
    """The strategy's validation of a write of ``obj`` over ``old`` (None: a create): ObjectMeta's
    (a created custom resource's name too), then the CRD validator's; raises :class:`Invalid`."""
    errs = object_meta_errors(obj, dns_name=old is None and rules.custom_resource) \
        + crd_errors(obj, old, rules, subresource)
    if errs:
        raise invalid(obj, rules, errs)


def crd_errors(obj: dict[str, Any], old: dict[str, Any] | None, rules: ResourceRules,
               subresource: str = "") -> list[tuple[str, str]]:
    """The CRD validator's causes for a write of ``obj`` over ``old`` (None: a create), in its order:
    the schema's (nulls, values of another type or out of range, value constraints; ratcheted), the
    scale subresource's values, then repeated items of sets and keys of list-maps (on an update, only
    where the old object had none: apiextensions' own ratcheting of list types). An apply's
    object takes the same validation as an update's (metadata is ObjectMeta's business: coerced
    before). A write of the status subresource has its schema checks on the status alone (the lab:
    an unchanged spec the main resource's write would be refused for passes). Not a custom
    resource, or one without a structural schema: none."""
    if not rules.custom_resource or rules.normalize is not None:
        return []
    body = {k: v for k, v in obj.items() if k != "metadata"}
    old_body = None if old is None else {k: v for k, v in old.items() if k != "metadata"}
    status_only = subresource == "status"
    if status_only:
        checked = {"status": body["status"]} if "status" in body else {}
        old_checked = None if old_body is None else {"status": old_body["status"]} if "status" in old_body else {}
        errs = type_errors(checked, rules.root, old_checked)
    else:
        errs = type_errors(body, rules.root, old_body)
    errs += value_errors(obj, old, rules, status_only)
    errs += scale_errors(body, rules.schema.scale_paths)
    repeated = duplicate_errors(body, rules.root, old=old_body)
    if repeated and old_body is not None and duplicate_errors(old_body, rules.root):
        repeated = []  # apiextensions checks list types on an update only where the old object passed
    return errs + repeated


def defaulted(obj: dict[str, Any], rules: ResourceRules) -> dict[str, Any]:
    """The object with the schema's defaults (the server's decoder sets them), sharing what they
    leave as it was with ``obj`` and so with the live object (the engine changes no value in place).
    Anything but plain JSON data is made plain first, as :func:`copy_json` makes it."""
    if not plain_json(obj):
        obj = copy_json(obj)
    return with_defaults(obj, rules.root) if rules.defaults_objects else obj


def comes_back_defaulted(obj: Mapping[str, Any], path: Path, rules: ResourceRules) -> bool:
    """Does ``obj`` (a write's result) hold at ``path`` the value the server's defaulting gives the field
    when it is absent? Then no apply removes it: one that prunes it (the manifest dropped it) has it
    defaulted again in the same write, unowned; and its value is the schema's, nobody's choice."""
    if not rules.defaults_objects:
        return False
    value = value_at(obj, path)
    if value is MISSING:
        return False
    default = field_default(rules.root, path)
    return default is not NO_DEFAULT and values_equal(value, default)


def stored(obj: dict[str, Any], rules: ResourceRules) -> dict[str, Any]:
    """The object as the server keeps it: a custom resource stored at a version whose schema lacks
    some of its fields loses them (the storage version's structural pruning; conversion None)."""
    sv = rules.storage_version
    if not rules.custom_resource or not sv or sv == rules.api_version or sv not in rules.versions:
        return obj
    return prune_undeclared(obj, rules.versions[sv])


def _has_uid_empty(obj: dict[str, Any]) -> bool:
    return not (obj.get("metadata") or {}).get("uid")


def _gvk_text(obj: Mapping[str, Any]) -> str:
    av = api_version(obj)
    group, _, version = av.rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind', '')}"
