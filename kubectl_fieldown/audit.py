"""Pre-upgrade audit rules: what will hurt when a fleet switches appliers (pure, no I/O).

:func:`audit_object` looks at one live object (a raw dict as a LIST returns it) and returns its
:class:`Finding` objects; the shell (``kubectl_fieldown.cli.audit``) streams objects through it.
The catalogue of finding ids, their severities and why is :data:`RULES` (and docs/audit.md).

Speed matters more here than anywhere else in the project: an audit runs over every object of a
cluster and must cost little more than the LIST itself. So the rules work on the raw
``managedFields`` dicts in one pass (manager, operation, subresource), the few that need paths
decode a single entry's FieldsV1 (and only when they fire), and the last-applied annotation is
parsed only when it exists. Nothing builds an object's full FieldSet, except the engine's apply
simulation behind ``predicted-conflict``, which runs only for objects named by ``-f`` manifests.
"""

from __future__ import annotations

import base64
import binascii
import enum
import fnmatch
import functools
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from .fieldpath import FIELD, Path, element_string, parse_element, path_string
from .fieldpath.element import field as field_pe
from .fieldpath.element import index as index_pe
from .fieldpath.element import key as key_pe
from .managedfields import (
    ANCIENT_CHANGES,
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
)
from .value import values_equal

if TYPE_CHECKING:
    from .fieldmanager import ResourceRules

__all__ = [
    "ANNOTATIONS_LIMIT",
    "AUTOSCALER_MANAGERS",
    "IMPERATIVE_MANAGERS",
    "RULES",
    "AuditContext",
    "Finding",
    "ObjectKey",
    "Rule",
    "Severity",
    "audit_object",
    "object_key",
    "object_ref",
    "predicted_conflicts",
    "sort_findings",
    "type_finding",
]


class Severity(str, enum.Enum):
    """How much a finding hurts; ``--fail-on`` compares by :attr:`rank`."""

    info = "info"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return _RANK[self.value]


_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    rationale: str


INFO, WARNING, ERROR = Severity.info, Severity.warning, Severity.error

#: The finding catalogue, in the order the summary lists it. docs/audit.md repeats it.
RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("predicted-conflict", ERROR, "the new applier's apply would conflict",
         "the engine simulated the apply of the given manifest: without --force-conflicts it fails with 409, "
         "with it the other owners silently lose the fields"),
    Rule("hpa-replicas-trap", ERROR, "replicas in the last-applied annotation, scaled by someone else",
         "every client-side apply resets .spec.replicas to the manifest's value, fighting the autoscaler; "
         "removing replicas from the manifest makes the next client-side apply delete the field (scale to the "
         "default); a server-side applier conflicts with the scale writer"),
    Rule("secret-last-applied", ERROR, "Secret with a last-applied annotation",
         "kubectl copied the Secret's data in clear (base64) into an annotation, which is shown wherever metadata "
         "is (describe, audit logs, metadata-only watches, backups that redact data)"),
    Rule("last-applied-size", WARNING, "last-applied annotation close to the 256 KiB limit",
         "annotations are limited to 256 KiB in total; once the annotation grows past it every client-side "
         "apply fails (size is in the finding; error at 90% of the limit)"),
    Rule("mixed-appliers", WARNING, "client-side and server-side appliers",
         "client-side apply (kubectl-client-side-apply) and server-side appliers manage the same object: fields "
         "removed from one manifest stay owned by the other manager and are never pruned"),
    Rule("client-side-apply", WARNING, "managed by client-side apply",
         "a switch to any server-side applier inherits the last-applied annotation and the "
         "kubectl-client-side-apply manager: fields it owns conflict or are never pruned until migrated"),
    Rule("apply-and-update-same-manager", WARNING, "one manager name both applies and updates",
         "the Update entry keeps its fields when the manager's next apply drops them, and the manager's own "
         "apply conflicts with it when values differ"),
    Rule("imperative-writer", WARNING, "fields owned by imperative writers",
         "kubectl edit/patch/scale/label/... own fields (Update); a declarative applier that sets them to another "
         "value conflicts (or with force takes them over silently)"),
    Rule("before-first-apply", WARNING, "before-first-apply owns fields",
         "the server gave every field that existed at the first server-side apply to before-first-apply: appliers "
         "conflict on them and can never prune them"),
    Rule("last-applied-drift", WARNING, "live value differs from the last-applied annotation",
         "someone changed a field that the annotation records: the next client-side apply silently reverts it, "
         "and kubectl's server-side conflict waiver does not cover it"),
    Rule("ancient-changes", INFO, "ancient-changes owns fields",
         "more than 10 Update managers: the oldest were merged into ancient-changes, so who wrote those fields "
         "is lost; appliers conflict with it"),
    Rule("untracked", INFO, "no managedFields",
         "nothing is tracked: the first server-side apply records every existing field as before-first-apply"),
    Rule("type-forbidden", WARNING, "resource type not listable (403)",
         "the audit is incomplete: the credentials may not list this type"),
    Rule("type-error", WARNING, "resource type could not be listed",
         "the audit is incomplete: listing this type failed after retries"),
)}

#: ``metadata.annotations`` may hold at most this many bytes (keys plus values) in total
ANNOTATIONS_LIMIT = 256 * 1024

#: Update managers that are imperative writers (globs): kubectl's per-command managers and plain
#: ``kubectl`` (kubectl scale, and kubectl before 1.18, send no fieldManager; the server names
#: the manager after the User-Agent)
IMPERATIVE_MANAGERS: tuple[str, ...] = (KUBECTL, "kubectl-*")
#: kubectl managers that are not imperative writers: client-side apply has its own finding, and
#: kubectl-last-applied only owns the annotation for kubectl apply --server-side
_NOT_IMPERATIVE = frozenset({KUBECTL_CLIENT_SIDE_APPLY, KUBECTL_LAST_APPLIED})
_SERVER_MANAGERS = frozenset({BEFORE_FIRST_APPLY, ANCIENT_CHANGES})
#: autoscalers that write replicas without the scale subresource (writes through the scale
#: subresource, which the HorizontalPodAutoscaler controller uses, are recognised as such)
AUTOSCALER_MANAGERS: tuple[str, ...] = ("horizontal-pod-autoscaler", "keda-operator*", "*autoscaler*")

_MAX_LISTED = 3  # paths named in a one-line message; the full list is in details


def _loads(text: str) -> Any:
    # orjson is ~3x faster on the annotations of client-side applied objects; imported on first use
    # so that other commands do not pay for it at start-up
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency, but keep working without it
        return json.loads(text)
    try:
        return orjson.loads(text)
    except ValueError:
        return json.loads(text)  # integers beyond 64 bits, which the standard parser takes; else it raises


# --- the finding -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One problem of one object (or, for ``type-*`` ids, of one resource type: name is None).

    ``resource`` is the kubectl-style type of the object (``widget.example.com``), ``fix`` a
    ``kubectl fieldown ...`` command line, ``details`` id-specific data (see docs/audit.md)."""

    id: str
    severity: Severity
    api_version: str
    kind: str
    namespace: str | None
    name: str | None
    message: str
    fix: str
    resource: str = ""
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        """The documented ``-o json`` item (docs/audit.md)."""
        return {
            "id": self.id,
            "severity": self.severity.value,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "resource": self.resource,
            "message": self.message,
            "fix": self.fix,
            "details": dict(self.details),
        }


ObjectKey = tuple[str, str, str, str]
"""(apiVersion, kind, namespace or "", name): how ``-f`` manifests are matched to live objects."""


def object_key(obj: Mapping[str, Any], default_namespace: str = "") -> ObjectKey:
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    return (str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""),
            str(md.get("namespace") or default_namespace), str(md.get("name") or ""))


@dataclass(frozen=True)
class AuditContext:
    """What the rules need beyond the object.

    ``field_manager`` is the new applier (``--field-manager``): fixes hand fields over to it, and
    with ``manifests`` (keyed by :func:`object_key`, namespaces defaulted) and ``rules`` (per
    ``(apiVersion, kind)``) the engine predicts its conflicts; ``now`` is the simulated time."""

    field_manager: str | None = None
    manifests: Mapping[ObjectKey, Mapping[str, Any]] = field(default_factory=dict)
    rules: Mapping[tuple[str, str], ResourceRules] = field(default_factory=dict)
    now: str = "1970-01-01T00:00:00Z"
    ignore: frozenset[str] = frozenset()
    size_warning: int = ANNOTATIONS_LIMIT * 3 // 4
    size_error: int = ANNOTATIONS_LIMIT * 9 // 10
    imperative_managers: tuple[str, ...] = IMPERATIVE_MANAGERS
    autoscaler_managers: tuple[str, ...] = AUTOSCALER_MANAGERS


# --- helpers -------------------------------------------------------------------------------------


def object_ref(api_version: str, kind: str, name: str) -> str:
    """``widget.example.com/w1``, ``secret/s`` (kubectl resolves singular.group like the plural)."""
    return f"{_type_ref(api_version, kind)}/{name}"


@functools.lru_cache(maxsize=1024)
def _type_ref(api_version: str, kind: str) -> str:
    group = api_version.rpartition("/")[0]
    return f"{kind.lower()}.{group}" if group else kind.lower()


_SAFE_WORD = re.compile(r"[\w@%+=:,./-]+\Z", re.ASCII).match  # shlex.quote's own test, in one C call


def _command(*words: str) -> str:
    return "kubectl fieldown " + " ".join([w if _SAFE_WORD(w) else shlex.quote(w) for w in words])


def _target(ref: str, namespace: str | None) -> list[str]:
    return [ref, "-n", namespace] if namespace else [ref]


def _fields(paths: Iterable[str]) -> list[str]:
    return [w for p in paths for w in ("--field", p)]


def _takeover(o: _Obj, has_la: bool, appliers: Sequence[str], sources: Sequence[str], paths: Sequence[str],
              target: str) -> str:
    """The command that gives ``paths`` (owned by ``sources``) to ``target``, as the sibling commands
    allow it: ``handover`` makes a manager that applies nothing else here apply exactly those fields
    (it refuses a manager that applies other fields, and kubectl while the annotation exists, whose
    apply would rewrite it); ``migrate`` moves whole Update entries into the target's Apply entry;
    ``reset --to-manager`` (every field to one manager) is what is left."""
    if paths and target not in appliers and not (target == KUBECTL and has_la):
        return _command("handover", *o.target(), *_fields(paths), "--to", target)
    if sources and target not in sources and all(m not in appliers for m in sources):
        words = ["migrate", *o.target(), "--to", "server-side"]
        for m in sources:
            words += ["--from-manager", m]
        if target != KUBECTL:
            words += ["--field-manager", target]
            if has_la:
                words.append("--keep-last-applied")  # this fix is about the fields, not the annotation
        return _command(*words)
    return _command("reset", *o.target(), "--to-manager", target)


def _listed(items: Sequence[str], limit: int = _MAX_LISTED) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


@functools.lru_cache(maxsize=32)
def _glob_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    # one compiled alternation per glob tuple: the rules match every Update manager of every object
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs) or "(?!)")


def _matches(name: str, globs: tuple[str, ...]) -> bool:
    return _glob_regex(globs).match(name) is not None


def _field_paths(raw_fields_v1: Any) -> list[str]:
    """The fields one entry owns, straight from the raw FieldsV1 dict (no FieldSet: the rules that
    name fields run on many objects, and element strings repeat across objects, so they are cached).

    Leaves, except that a list item the entry owns itself (it created the item) is named as the
    item: ``.spec.containers[name="web"]``, not each of its fields."""
    out: list[str] = []
    if isinstance(raw_fields_v1, dict):
        _raw_leaves(raw_fields_v1, "", out)
    return sorted(out)


def _raw_leaves(node: dict[str, Any], prefix: str, out: list[str]) -> None:
    for k, child in node.items():
        if k == ".":
            continue
        seg = _segment(k)
        if seg is None:
            continue  # the server drops unknown element kinds too
        p = prefix + seg
        if isinstance(child, dict) and any(ck != "." for ck in child) and not (k[0] != "f" and "." in child):
            _raw_leaves(child, p, out)
        else:
            out.append(p)


@functools.lru_cache(maxsize=8192)
def _segment(key: str) -> str | None:
    try:
        return element_string(parse_element(key))
    except Exception:  # FieldsV1Error, or the codec's private "unknown element" signal
        return None


def _owns_spec_replicas(raw_fields_v1: Any) -> bool:
    spec = raw_fields_v1.get("f:spec") if isinstance(raw_fields_v1, Mapping) else None
    return isinstance(spec, Mapping) and "f:replicas" in spec


def _fmt_bytes(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


# --- the rules -----------------------------------------------------------------------------------


class _Obj:
    """One object's identity and the builders of its findings."""

    __slots__ = ("api_version", "kind", "name", "namespace", "ref", "resource")

    def __init__(self, obj: Mapping[str, Any], md: Mapping[str, Any]) -> None:
        self.api_version = str(obj.get("apiVersion") or "")
        self.kind = str(obj.get("kind") or "")
        self.name = str(md.get("name") or "")
        ns = md.get("namespace")
        self.namespace = str(ns) if ns else None
        self.resource = _type_ref(self.api_version, self.kind)
        self.ref = f"{self.resource}/{self.name}"

    def finding(self, rule_id: str, message: str, fix: str, details: Mapping[str, Any] | None = None,
                severity: Severity | None = None) -> Finding:
        return Finding(rule_id, severity or RULES[rule_id].severity, self.api_version, self.kind, self.namespace,
                       self.name, message, fix, self.resource, details or {})

    def target(self) -> list[str]:
        return _target(self.ref, self.namespace)


def audit_object(obj: Mapping[str, Any], ctx: AuditContext) -> list[Finding]:
    """Every finding of one live object, in catalogue order (:data:`RULES`)."""
    # type() checks, not isinstance(..., Mapping): objects come from JSON, and ABC checks cost more
    # than the rest of the fast path
    md = obj.get("metadata")
    if type(md) is not dict:
        return []
    ignore = ctx.ignore
    out: list[Finding] = []
    annotations = md.get("annotations")
    la = annotations.get(LAST_APPLIED_ANNOTATION) if type(annotations) is dict else None
    if type(la) is not str:
        la = None
    raw_entries = md.get("managedFields")
    entries: list[dict[str, Any]] = [e for e in raw_entries if type(e) is dict] if type(raw_entries) is list else []

    # one pass over the raw entries: the cheap facts every rule starts from
    csa = False
    kubectl_applies = False
    appliers: list[str] = []
    apply_names: set[str] = set()
    update_names: set[str] = set()
    special: list[dict[str, Any]] = []  # before-first-apply, ancient-changes, imperative, replicas owners
    for e in entries:
        manager = e.get("manager") or ""
        op = e.get("operation")
        if op == APPLY:
            if manager != KUBECTL_LAST_APPLIED:
                apply_names.add(manager)
                if manager not in appliers:
                    appliers.append(manager)
                if manager == KUBECTL:
                    kubectl_applies = True
        elif op == UPDATE:
            update_names.add(manager)
            if manager == KUBECTL_CLIENT_SIDE_APPLY:
                csa = True
            else:
                special.append(e)

    # fast path: most objects are written by one applier or controller and have no annotation
    if (la is None and not csa and entries and not (apply_names & update_names)
            and not any(_is_special(e, ctx) for e in special)
            and not _predicted(obj, ctx)):
        return out

    o = _Obj(obj, md)
    la_doc: Any = None
    la_error: str | None = None
    if la is not None:
        try:
            la_doc = _loads(la)
        except ValueError as err:
            la_error = str(err)
    applier = ctx.field_manager or (appliers[0] if len(appliers) == 1 else KUBECTL)

    if ctx.manifests and "predicted-conflict" not in ignore:
        out.extend(predicted_conflicts(obj, ctx))

    # hpa-replicas-trap
    trapped: list[dict[str, Any]] = []
    if type(la_doc) is dict:
        la_spec = la_doc.get("spec")
        if type(la_spec) is dict and la_spec.get("replicas") is not None:
            for e in entries:
                manager = e.get("manager") or ""
                if e.get("operation") == APPLY and manager == KUBECTL:
                    continue
                if (e.get("subresource") == "scale" or _matches(manager, ctx.autoscaler_managers)) \
                        and manager != KUBECTL_CLIENT_SIDE_APPLY and _owns_spec_replicas(e.get("fieldsV1")):
                    trapped.append(e)
            if trapped and "hpa-replicas-trap" not in ignore:
                owners = sorted({_describe(e) for e in trapped})
                out.append(o.finding(
                    "hpa-replicas-trap",
                    f".spec.replicas is in the last-applied annotation ({_short(la_spec.get('replicas'))}) and "
                    f"{_listed(owners)} scales it: remove replicas from the manifest and the annotation",
                    _command("strip-last-applied", *o.target(), "--field", ".spec.replicas"),
                    {"owners": owners, "lastApplied": la_spec.get("replicas")},
                ))

    is_secret = o.kind == "Secret" and o.api_version == "v1"
    if la is not None:
        # the annotation is measured in UTF-8 bytes (key and value, as the server counts), but only
        # when 4 bytes per character could reach the threshold: encoding every annotation costs
        near = len(la) * 4 + len(LAST_APPLIED_ANNOTATION) >= ctx.size_warning
        la_bytes = len(la.encode()) if is_secret or near else 0
        if is_secret and "secret-last-applied" not in ignore:
            out.append(o.finding(
                "secret-last-applied",
                f"the last-applied annotation ({_fmt_bytes(la_bytes)}) holds a copy of the Secret's data in clear",
                _command("migrate", *o.target(), "--to", "server-side", "--drop-last-applied"),
                {"bytes": la_bytes},
            ))
        if near and "last-applied-size" not in ignore:
            size = len(LAST_APPLIED_ANNOTATION) + la_bytes
            if size >= ctx.size_warning:
                sev = ERROR if size >= ctx.size_error else WARNING
                out.append(o.finding(
                    "last-applied-size",
                    f"the last-applied annotation is {_fmt_bytes(size)}, {100 * size / ANNOTATIONS_LIMIT:.0f}% of "
                    "the 256 KiB limit on annotations",
                    _command("migrate", *o.target(), "--to", "server-side", "--drop-last-applied"),
                    {"bytes": size, "limit": ANNOTATIONS_LIMIT},
                    severity=sev,
                ))

    if csa and appliers and "mixed-appliers" not in ignore:
        target = ctx.field_manager or (appliers[0] if len(appliers) == 1 else None)
        extra = ["--field-manager", target] if target and target != KUBECTL else []
        out.append(o.finding(
            "mixed-appliers",
            f"client-side apply ({KUBECTL_CLIENT_SIDE_APPLY}) and server-side apply ({_listed(appliers)}) "
            "both manage this object",
            _command("migrate", *o.target(), "--to", "server-side", *extra),
            {"clientSide": [KUBECTL_CLIENT_SIDE_APPLY], "serverSide": list(appliers)},
        ))
    if (csa or (la is not None and not kubectl_applies)) and "client-side-apply" not in ignore:
        how = []
        if la is not None:
            how.append("the last-applied annotation")
        if csa:
            how.append(f"manager {KUBECTL_CLIENT_SIDE_APPLY}")
        extra = ["--field-manager", ctx.field_manager] if ctx.field_manager and ctx.field_manager != KUBECTL else []
        out.append(o.finding(
            "client-side-apply",
            f"managed by client-side kubectl apply ({' and '.join(how)})",
            _command("migrate", *o.target(), "--to", "server-side", *extra),
            {"lastApplied": la is not None, "manager": csa},
        ))

    has_la = la is not None
    both = sorted(apply_names & update_names)
    if both and "apply-and-update-same-manager" not in ignore:
        fixes = []
        for m in both:
            paths = sorted({p for e in entries if e.get("manager") == m and e.get("operation") == UPDATE
                            for p in _field_paths(e.get("fieldsV1"))})
            fixes.append(_takeover(o, has_la, appliers, [m], paths, ctx.field_manager or m))
        out.append(o.finding(
            "apply-and-update-same-manager",
            f"{_listed(both)} {'is' if len(both) == 1 else 'are'} both an Apply and an Update manager",
            " && ".join(fixes),
            {"managers": both},
        ))

    imperative: dict[str, list[dict[str, Any]]] = {}
    for e in special:
        manager = e.get("manager") or ""
        if manager in _SERVER_MANAGERS:
            rule_id = "before-first-apply" if manager == BEFORE_FIRST_APPLY else "ancient-changes"
            if rule_id in ignore:
                continue
            n = len(_field_paths(e.get("fieldsV1")))
            sub = e.get("subresource") or ""
            where = f" (subresource {sub})" if sub else ""
            out.append(o.finding(
                rule_id,
                f"{manager}{where} owns {n} field{'s' if n != 1 else ''}"
                + (": recorded when a server-side apply met an object without managedFields"
                   if rule_id == "before-first-apply" else ": older Update managers were merged, their names lost"),
                _takeover(o, has_la, appliers, [manager], [], applier),
                {"manager": manager, "fields": n},
            ))
        elif (manager not in _NOT_IMPERATIVE and manager not in apply_names
              and _matches(manager, ctx.imperative_managers) and not any(e is t for t in trapped)):
            imperative.setdefault(manager, []).append(e)
    if imperative and "imperative-writer" not in ignore:
        for manager, es in imperative.items():
            paths = sorted({p for e in es for p in _field_paths(e.get("fieldsV1"))})
            subs = sorted({str(e.get("subresource") or "") for e in es} - {""})
            via = f" (subresource {', '.join(subs)})" if subs else ""
            out.append(o.finding(
                "imperative-writer",
                f"{manager}{via} owns {_listed(paths) if paths else 'no fields'}",
                _takeover(o, has_la, appliers, [manager], paths, applier),
                {"manager": manager, "subresources": subs, "fields": paths},
            ))

    if la is not None and "last-applied-drift" not in ignore:
        if la_error is not None or type(la_doc) is not dict:
            out.append(o.finding(
                "last-applied-drift",
                "the last-applied annotation is not a JSON object: kubectl apply cannot compute its patch",
                _command("migrate", *o.target(), "--to", "server-side", "--drop-last-applied"),
                {"invalid": True, "fields": []},
            ))
        elif str(la_doc.get("apiVersion") or "") == o.api_version and str(la_doc.get("kind") or "") == o.kind:
            # an annotation written through another apiVersion has that version's shape: not comparable
            skip = {path_string((field_pe("spec"), field_pe("replicas")))} if trapped else set()
            drifted = sorted((d for d in last_applied_drift(la_doc, obj, secret=is_secret) if d.path not in skip),
                             key=lambda d: d.path)
            if drifted:
                paths = [d.path for d in drifted]
                first = drifted[0]
                shown = "" if is_secret else f" (annotation {_short(first.last_applied)}, live {_short(first.live)})"
                verb = "fields differ" if len(paths) != 1 else "field differs"
                out.append(o.finding(
                    "last-applied-drift",
                    f"{len(paths)} {verb} from the last-applied annotation: "
                    f"{paths[0]}{shown}" + (f", {_listed(paths[1:], _MAX_LISTED - 1)}" if len(paths) > 1 else ""),
                    _command("strip-last-applied", *o.target(), *_fields(paths)),
                    {"fields": paths},
                ))

    if not entries and "untracked" not in ignore:
        out.append(o.finding(
            "untracked",
            "no managedFields: the first server-side apply will record every field as before-first-apply",
            _command("reset", *o.target(), "--to-manager", applier),
        ))
    if len(out) > 1:
        out.sort(key=lambda f: _ORDER[f.id])
    return out


def _is_special(e: Mapping[str, Any], ctx: AuditContext) -> bool:
    manager = e.get("manager") or ""
    return manager in _SERVER_MANAGERS or (manager not in _NOT_IMPERATIVE
                                          and _matches(manager, ctx.imperative_managers))


def _predicted(obj: Mapping[str, Any], ctx: AuditContext) -> bool:
    return bool(ctx.manifests) and object_key(obj) in ctx.manifests


def _describe(e: Mapping[str, Any]) -> str:
    manager = str(e.get("manager") or "")
    sub = e.get("subresource")
    return f"{manager} (subresource {sub})" if sub else manager


def _short(v: Any, limit: int = 40) -> str:
    text = json.dumps(v, ensure_ascii=False, separators=(",", ":")) if v is not _MISSING else "<absent>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- drift ---------------------------------------------------------------------------------------

_MISSING: Any = object()


@dataclass(frozen=True)
class Drift:
    path: str
    last_applied: Any
    live: Any


def last_applied_drift(la: Mapping[str, Any], live: Mapping[str, Any], *, secret: bool = False) -> list[Drift]:
    """Fields whose value in the last-applied annotation differs from the live object.

    Only what the annotation sets is compared, so fields the server defaulted (or other writers
    added) never count. ``null`` in the annotation means "not set" and never counts; an empty map
    or list counts only when the live object has a non-container value there. Maps compare key by
    key. A list whose items are all objects with a ``name`` (containers, env, volumes, ports with
    names...) is matched item by item on ``name``: a live item the annotation lacks was added by
    someone else and is not drift, an annotation item missing from the live list is. Any other list
    is compared position by position and must have the same length. Numbers compare by value
    (``1 == 1.0``) and quantities by amount (``cpu: 1`` and ``"1000m"``). ``metadata`` is compared
    for labels and annotations only, ``status`` never. A Secret's ``stringData`` is compared with
    the decoded ``data``."""
    out: list[Drift] = []
    for k, v in la.items():
        if k in ("apiVersion", "kind", "status") or v is None:
            continue
        if k == "metadata":
            md_live = live.get("metadata")
            md_live = md_live if type(md_live) is dict else {}
            if type(v) is dict:
                for sub in ("labels", "annotations"):
                    if type(v.get(sub)) is dict:
                        _walk(v[sub], md_live.get(sub, _MISSING), (field_pe("metadata"), field_pe(sub)), out)
            continue
        if secret and k == "stringData" and isinstance(v, Mapping):
            data = live.get("data")
            data = data if isinstance(data, Mapping) else {}
            for name, text in v.items():
                if text is None:
                    continue
                decoded = _b64(data.get(name))
                if decoded != text:
                    out.append(Drift(path_string((field_pe("stringData"), field_pe(name))), _MISSING, _MISSING))
            continue
        _walk(v, live.get(k, _MISSING), (field_pe(k),), out)
    return out


def _b64(v: Any) -> str | None:
    if not isinstance(v, str):
        return None
    try:
        return base64.b64decode(v, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _walk(la: Any, live: Any, path: Path, out: list[Drift]) -> None:
    if la is None:
        return
    if type(la) is dict:
        if live is _MISSING:
            if any(v is not None for v in la.values()):
                out.append(Drift(path_string(path), la, live))  # the whole map or item is gone
            return
        if type(live) is not dict:
            out.append(Drift(path_string(path), la, live))
            return
        for k, v in la.items():
            lv = live.get(k, _MISSING)
            tv = type(v)
            # most leaves are equal strings or numbers of the same type: no call for them (bool is
            # its own type here, so True never passes for 1)
            if (tv is str or tv is int or tv is bool) and type(lv) is tv and v == lv:
                continue
            if tv is list and type(lv) is list and _same_scalars(v, lv):
                continue
            _walk(v, lv, (*path, (FIELD, k)), out)
        return
    if type(la) is list:
        if live is _MISSING:
            if la:
                out.append(Drift(path_string(path), la, live))
            return
        if type(live) is not list:
            out.append(Drift(path_string(path), la, live))
            return
        if la and all(type(i) is dict and type(i.get("name")) is str for i in la) \
                and all(type(i) is dict for i in live):
            by_name = {i.get("name"): i for i in live}
            for item in la:
                lv = by_name.get(item["name"], _MISSING)
                _walk(item, lv, (*path, key_pe({"name": item["name"]})), out)
            return
        if len(la) != len(live):
            out.append(Drift(path_string(path), la, live))
            return
        for i, (a, b) in enumerate(zip(la, live, strict=True)):
            _walk(a, b, (*path, index_pe(i)), out)
        return
    if live is _MISSING or not (values_equal(la, live) or _same_quantity(la, live)):
        out.append(Drift(path_string(path), la, live))


def _same_scalars(a: list[Any], b: list[Any]) -> bool:
    """Equal lists of strings and numbers (args, finalizers, tags), each item of the same type."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        tx = type(x)
        if not (tx is str or tx is int or tx is float) or type(y) is not tx or x != y:
            return False
    return True


_QUANTITY = r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
_SUFFIX = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
           "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
           "P": Decimal(10) ** 15, "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20,
           "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}


@functools.cache
def _quantity_regex() -> re.Pattern[str]:
    return re.compile(_QUANTITY)


def _quantity(v: Any) -> Decimal | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v))
    if not isinstance(v, str):
        return None
    m = _quantity_regex().match(v)
    if m is None:
        return None
    try:
        number = Decimal(m.group(1))
        suffix = m.group(2) or ""
        if suffix[:1] in ("e", "E"):
            return number * Decimal(10) ** int(suffix[1:])
        return number * _SUFFIX[suffix]
    except (InvalidOperation, ValueError, KeyError):
        return None


def _same_quantity(a: Any, b: Any) -> bool:
    """``cpu: 1`` in a manifest is stored as ``"1"``, ``"1000m"`` as ``"1"``: equal amounts are not drift.
    At least one side must be a string, so that two different numbers stay different."""
    if not (isinstance(a, str) or isinstance(b, str)):
        return False
    qa, qb = _quantity(a), _quantity(b)
    return qa is not None and qb is not None and qa == qb


# --- predicted conflicts -------------------------------------------------------------------------


def predicted_conflicts(obj: Mapping[str, Any], ctx: AuditContext) -> list[Finding]:
    """``predicted-conflict``: the engine's apply of the object's manifest by ``ctx.field_manager``."""
    manifest = ctx.manifests.get(object_key(obj)) if ctx.manifests else None
    if manifest is None or not ctx.field_manager:
        return []
    rules = ctx.rules.get((str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")))
    if rules is None:
        return []
    from .applyplan import plan_apply

    md = obj.get("metadata")
    o = _Obj(obj, md if isinstance(md, Mapping) else {})
    plan = plan_apply(obj, manifest, ctx.field_manager, rules, now=ctx.now)
    if plan.error is not None and not plan.conflicts:
        return [o.finding(
            "predicted-conflict",
            f"the apply by {ctx.field_manager} would fail: {plan.error}",
            "",
            {"manager": ctx.field_manager, "conflicts": [], "error": str(plan.error)},
        )]
    if not plan.conflicts:
        return []
    by_owner: dict[str, list[str]] = {}
    conflicts = []
    for c in sorted(plan.conflicts, key=lambda c: (c.path, c.manager)):
        p = path_string(c.path)
        by_owner.setdefault(c.manager, []).append(p)
        conflicts.append({"path": p, "manager": c.manager, "operation": c.operation, "subresource": c.subresource})
    parts = [f"{_listed(paths)} (owned by {owner})" for owner, paths in by_owner.items()]
    n = len(plan.conflicts)
    raw = md.get("managedFields") if isinstance(md, Mapping) else None
    entries = [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []
    appliers = [str(e.get("manager") or "") for e in entries
                if e.get("operation") == APPLY and e.get("manager") != KUBECTL_LAST_APPLIED]
    annotations = md.get("annotations") if isinstance(md, Mapping) else None
    has_la = isinstance(annotations, Mapping) and isinstance(annotations.get(LAST_APPLIED_ANNOTATION), str)
    fix = _takeover(o, has_la, appliers, list(by_owner), [c["path"] for c in conflicts], ctx.field_manager)
    return [o.finding(
        "predicted-conflict",
        f"an apply by {ctx.field_manager} would conflict on {n} field{'s' if n != 1 else ''}: " + "; ".join(parts),
        fix,
        {"manager": ctx.field_manager, "conflicts": conflicts},
    )]


# --- type-level findings and ordering ------------------------------------------------------------


def type_finding(rule_id: str, api_version: str, kind: str, resource: str, namespace: str | None,
                 message: str, fix: str = "") -> Finding:
    """``type-forbidden`` / ``type-error``: a resource type the audit could not (fully) list."""
    return Finding(rule_id, RULES[rule_id].severity, api_version, kind, namespace, None, message, fix, resource,
                   {"resource": resource})


_ORDER = {rid: i for i, rid in enumerate(RULES)}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Stable report order whatever order the types were listed in: by object, then catalogue."""
    return sorted(findings, key=lambda f: (f.api_version.rpartition("/")[0], f.kind, f.namespace or "", f.name or "",
                                           _ORDER.get(f.id, len(_ORDER)), f.message))
