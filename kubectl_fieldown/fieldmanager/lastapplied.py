"""kubectl's last-applied annotation on a server-side apply (apimachinery
``lastappliedmanager.go`` and ``lastappliedupdater.go``), for the ``kubectl`` manager only.

The manager waives the conflicts the annotation explains: fields the last client-side apply set
and nobody has changed since (so ``kubectl apply --server-side`` can take over from a client-side
apply). The updater keeps the annotation in step with what was applied, when the object has one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..base.objects import ANNOTATIONS_LIMIT, annotations_size
from ..base.value import go_json, values_equal
from ..fieldpath import FieldSet
from ..ownership.managedfields import KUBECTL, LAST_APPLIED_ANNOTATION
from ..typed.compare import compare
from ..typed.tofieldset import to_field_set
from ..typed.validate import typed_errors
from .errors import ApplyConflict, FieldConflict
from .jsondata import copy_json
from .managed import Managed
from .request import WriteRequest
from .rules import ResourceRules
from .skipnonapplied import apply_skip_non_applied

ANNOTATIONS_SIZE_LIMIT = ANNOTATIONS_LIMIT  # (the name this package has always exported)


def apply_with_last_applied(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: Managed,
    req: WriteRequest,
) -> tuple[dict[str, Any] | None, Managed]:
    """The apply of ``cfg`` to ``live`` (None: unchanged) with kubectl's conflict waiver, and the
    annotation brought up to date."""
    obj, m = _apply_waiving_last_applied_conflicts(live, cfg, managed, req)
    if req.manager == KUBECTL:
        obj = _update_last_applied(live, obj, cfg)
    return obj, m


# --- the manager -------------------------------------------------------------------------------


def _apply_waiving_last_applied_conflicts(
    live: dict[str, Any],
    cfg: dict[str, Any],
    managed: Managed,
    req: WriteRequest,
) -> tuple[dict[str, Any] | None, Managed]:
    try:
        return apply_skip_non_applied(live, cfg, managed, req)
    except ApplyConflict as e:
        if req.manager != KUBECTL:
            raise
        remaining = waived_conflicts(live, e.conflicts, req.rules)
        if remaining:
            raise ApplyConflict(remaining) from None
        return apply_skip_non_applied(live, cfg, managed, req.replace(force=True))


def waived_conflicts(live: dict[str, Any], conflicts: list[FieldConflict], rules: ResourceRules) -> list[FieldConflict]:
    """The conflicts of ``kubectl``'s apply to ``live`` that its last-applied waiver does not let go."""
    allowed = _allowed_conflicts_from_last_applied(live, rules)
    return conflicts if allowed is None else [c for c in conflicts if not allowed.has(c.path)]


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


# --- the updater -------------------------------------------------------------------------------


def _update_last_applied(live: dict[str, Any], obj: dict[str, Any] | None,
                         cfg: dict[str, Any]) -> dict[str, Any] | None:
    """The applied object (None: ``live`` unchanged) with its annotation set to ``cfg``, where it
    has one; None again when that leaves the object as it was."""
    target = obj if obj is not None else live
    if _last_applied(target):
        if obj is None:
            obj = copy_json(live)
            target = obj
        _set_last_applied(target, _build_last_applied(cfg))
        if values_equal(target, live):
            obj = None
    return obj


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
    return go_json(obj) + "\n"


def _set_last_applied(obj: dict[str, Any], value: str) -> None:
    # ``obj`` is the write's own top level, but its metadata may be the live object's (merge shares
    # what it leaves unchanged): a new metadata map, never a write into that one
    md = dict(obj.get("metadata") or {})
    obj["metadata"] = md
    ann = md.get("annotations")
    if not isinstance(ann, dict):
        ann = {}
    ann = dict(ann)
    ann[LAST_APPLIED_ANNOTATION] = value
    if annotations_size(ann) > ANNOTATIONS_LIMIT:
        del ann[LAST_APPLIED_ANNOTATION]
    md["annotations"] = ann
