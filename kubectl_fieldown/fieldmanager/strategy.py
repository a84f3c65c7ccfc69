"""What the REST handler and the resource's strategy do around the field manager.

* decoding: a custom resource's ``metadata`` round-trips through ``metav1.ObjectMeta``
  (:func:`coerce_object_meta`) and its schema defaults fill in missing fields
  (:func:`with_defaults`);
* ``PrepareForCreate``/``PrepareForUpdate``: the endpoint's reset fields keep the live values
  (:func:`prepare_for_write`);
* validation: the CRD validator's 422 (:func:`invalid`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..base.objects import ANNOTATIONS_LIMIT, annotations_size
from ..base.qualifiednames import dns1123_subdomain_errors, go_lower, label_key_errors, label_value_errors
from ..base.value import go_quote
from ..fieldpath.element import FIELD
from ..fieldpath.lookup import MISSING
from ..schema.types import NO_DEFAULT, Type
from ..typed.constraints import constraint_errors
from ..typed.items import LIST, MAP, child_type, side
from .errors import Invalid
from .jsondata import copy_json
from .rules import ResourceRules

# --- decoding ----------------------------------------------------------------------------------

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


def field_default(t: Type, path: tuple[Any, ...]) -> Any:
    """What :func:`with_defaults` puts at ``path`` (below a value of type ``t``) in an object that holds
    the field's parent but not the field: its schema default with the defaults below it, or
    :data:`NO_DEFAULT`. Only a map's declared field has a default; the path's other elements (list
    items, undeclared keys) lead to the type that declares it."""
    if not path or path[-1][0] != FIELD:
        return NO_DEFAULT
    for pe in path[:-1]:
        nt = child_type(t, pe)
        if nt is None:
            return NO_DEFAULT
        t = nt
    m = t.map
    f = m.fields.get(path[-1][1]) if m is not None else None
    if f is None or f.default is NO_DEFAULT:
        return NO_DEFAULT
    return with_defaults(copy_json(f.default), f.type)


def with_defaults(obj: Any, t: Type) -> Any:
    """``obj`` with the schema's defaults for the fields it lacks, at any depth (defaulting runs after
    the merge, so they are unowned), without changing ``obj``: new containers only on the way to a
    default, the rest shared, and ``obj`` itself when no default applies (most writes). A result that shares
    the live object's parts lets every later walk (compare, ratcheted validation, equality) skip
    them by identity."""
    s = side(t, obj)
    if s == MAP and type(obj) is dict and t.map is not None:
        m = t.map
        out: dict[str, Any] | None = None
        for name, f in m.fields.items():
            if name not in obj and f.default is not NO_DEFAULT:
                if out is None:
                    out = dict(obj)
                out[name] = copy_json(f.default)
        src = obj if out is None else out
        below: dict[str, Any] | None = None
        for k, v in src.items():
            if isinstance(v, (dict, list)):
                sf = m.fields.get(k)
                ct = sf.type if sf is not None else m.element
                if ct is not None:
                    nv = with_defaults(v, ct)
                    if nv is not v:
                        if below is None:
                            below = {}
                        below[k] = nv
        if below is not None:
            if out is None:
                out = dict(obj)
            out.update(below)
        return obj if out is None else out
    if s == LIST and type(obj) is list and t.list is not None:
        it = t.list.item
        items: list[Any] | None = None
        for i, item in enumerate(obj):
            if isinstance(item, (dict, list)):
                ni = with_defaults(item, it)
                if ni is not item:
                    if items is None:
                        items = list(obj)
                    items[i] = ni
        return obj if items is None else items
    return obj


# --- PrepareForCreate / PrepareForUpdate -------------------------------------------------------


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


# --- validation --------------------------------------------------------------------------------


def object_meta_errors(obj: Mapping[str, Any], *, dns_name: bool = False) -> list[tuple[str, str]]:
    """What ObjectMeta's validation refuses in a write of any kind (apimachinery
    ``ValidateObjectMetaAccessor``), in its order: with ``dns_name`` (a custom resource created) a
    name that is no DNS subdomain; label keys and values and annotation keys that are not qualified
    names (the key lowercased first); annotations over 256 KiB in all (keys and values, in UTF-8
    bytes), which a last-applied annotation of a large object reaches. Each label and annotation
    is reported where the server reports it, at ``metadata.labels``/``metadata.annotations``, in
    the map's order (the server's is Go's random one)."""
    md = obj.get("metadata")
    if type(md) is not dict and not isinstance(md, Mapping):
        return []
    out: list[tuple[str, str]] = []
    name = md.get("name")
    if dns_name and isinstance(name, str) and name:
        out += [("metadata.name", f"Invalid value: {go_quote(name)}: {m}")
                for m in dns1123_subdomain_errors(name, "characters")]
    labels = md.get("labels")
    if isinstance(labels, Mapping):
        for k, v in labels.items():
            if isinstance(k, str):
                out += [("metadata.labels", f"Invalid value: {go_quote(k)}: {m}") for m in _key_errors(k)]
            if isinstance(v, str):
                out += [("metadata.labels", f"Invalid value: {go_quote(v)}: {m}") for m in _value_errors(v)]
    annotations = md.get("annotations")
    if isinstance(annotations, Mapping):
        for k in annotations:
            if isinstance(k, str):
                out += [("metadata.annotations", f"Invalid value: {go_quote(k)}: {m}")
                        for m in _key_errors(go_lower(k))]
        if annotations_size(annotations) > ANNOTATIONS_LIMIT:
            out.append(("metadata.annotations", f"Too long: may not be more than {ANNOTATIONS_LIMIT} bytes"))
    return out


# every write the engine plays checks the object's labels and annotation keys: a fleet has few distinct ones
@functools.lru_cache(maxsize=4096)
def _key_errors(key: str) -> tuple[str, ...]:
    return tuple(label_key_errors(key))


@functools.lru_cache(maxsize=4096)
def _value_errors(value: str) -> tuple[str, ...]:
    return tuple(label_value_errors(value))


def value_errors(obj: Mapping[str, Any], old: Mapping[str, Any] | None, rules: ResourceRules,
                 status_only: bool = False) -> list[tuple[str, str]]:
    """The CRD validator's value constraints (enum, bounds, lengths, patterns, counts, required) on
    the object a write would store, ratcheted against the stored one (``old``; None on a create).
    ``status_only``: a write of the status subresource, which the server validates against the
    status schema alone."""
    schema = rules.schema.validation
    if not rules.custom_resource or schema is None:
        return []
    if status_only:
        props = schema.get("properties")
        status_schema = props.get("status") if isinstance(props, Mapping) else None
        if not isinstance(status_schema, Mapping) or "status" not in obj:
            return []
        errs = (constraint_errors(obj["status"], status_schema, path=".status")
                if old is None or "status" not in old
                else constraint_errors(obj["status"], status_schema, old["status"], path=".status"))
    else:
        errs = constraint_errors(obj, schema) if old is None else constraint_errors(obj, schema, old)
    return [(e.field, e.message) for e in errs]


#: the cause reasons of apiextensions' 422, by the start of the message (field.ErrorType)
_REASONS = (("Duplicate value", "FieldValueDuplicate"), ("Required value", "FieldValueRequired"),
            ("Unsupported value", "FieldValueNotSupported"), ("Too long", "FieldValueTooLong"),
            ("Too many", "FieldValueTooMany"))


def _reason(message: str) -> str:
    for prefix, reason in _REASONS:
        if message.startswith(prefix):
            return reason
    return "FieldValueTypeInvalid" if "must be of type" in message else "FieldValueInvalid"


def invalid(obj: Mapping[str, Any], rules: ResourceRules, errs: list[tuple[str, str]]) -> Invalid:
    """The CRD validator's 422 for ``(field, message)`` errors."""
    name = (obj.get("metadata") or {}).get("name", "")
    kind = rules.schema.gvk
    what = f"{kind.kind}.{kind.group}" if kind.group else kind.kind
    text = ", ".join(f"{f}: {m}" for f, m in errs)
    return Invalid(
        f'{what} "{name}" is invalid: ' + (text if len(errs) == 1 else f"[{text}]"),
        [{"reason": _reason(m), "message": m, "field": f} for f, m in errs],
    )
