"""The audit rules: one function per finding id, over the facts of one object (pure, no I/O).

Speed matters more here than anywhere else in the project: an audit runs over every object of a
cluster and must cost little more than the LIST itself. So :class:`ObjectFacts` reads the raw
``managedFields`` dicts in one pass (manager, operation, subresource), the rules that need paths
decode a single entry's FieldsV1 (and only when they fire), and the last-applied annotation is
parsed only when it exists. Most objects — one applier or controller, no annotation — leave after
that one pass (:meth:`ObjectFacts.quiet`).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..base.globs import matches_any
from ..base.objects import is_secret
from ..base.redact import scrub, secret_texts
from ..base.value import too_deep as nested_too_deep
from ..fieldpath import element_string, parse_element, path_string
from ..ownership.managedfields import (
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
)
from .catalogue import ANNOTATIONS_LIMIT, ERROR, NOT_IMPERATIVE, RULES, SERVER_MANAGERS, WARNING, Severity
from .context import object_key, object_rules
from .drift import MISSING, last_applied_drift
from .findings import Finding, type_ref

if TYPE_CHECKING:
    from ..appliers import Applier, ApplierRun
    from .context import AuditContext

__all__ = ["RULE_FUNCTIONS", "ObjectFacts", "field_paths"]

_MAX_LISTED = 3  # paths named in a one-line message; the full list is in details


def _loads(text: str) -> Any:
    try:
        return _fast_loads()(text)
    except ValueError:
        return json.loads(text)  # integers beyond 64 bits, which the standard parser takes; else it raises


@functools.cache
def _fast_loads() -> Callable[[str], Any]:
    # orjson is ~3x faster on the annotations of client-side applied objects; imported on first use
    # so that other commands do not pay for it at start-up (once: an import statement per object
    # costs a microsecond)
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency, but keep working without it
        return json.loads
    loads: Callable[[str], Any] = orjson.loads
    return loads


def field_paths(raw_fields_v1: Any) -> list[str]:
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


def _listed(items: Sequence[str], limit: int = _MAX_LISTED) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _short(v: Any, limit: int = 40) -> str:
    text = json.dumps(v, ensure_ascii=False, separators=(",", ":")) if v is not MISSING else "<absent>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fmt_bytes(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def _describe(e: Mapping[str, Any]) -> str:
    manager = str(e.get("manager") or "")
    sub = e.get("subresource")
    return f"{manager} (subresource {sub})" if sub else manager


class ObjectFacts:
    """One object's identity and the facts every rule starts from, read in one pass over the raw
    entries; the last-applied annotation is parsed on first use."""

    __slots__ = ("_la_doc", "_la_error", "_too_deep", "api_version", "appliers", "apply_names", "csa", "entries",
                 "is_secret", "kind", "kubectl_applies", "la", "md", "name", "namespace", "obj", "predicted",
                 "resource", "special", "trapped", "update_names")

    def __init__(self, obj: Mapping[str, Any], md: dict[str, Any]) -> None:
        self.obj = obj
        self.md = md
        annotations = md.get("annotations")
        la = annotations.get(LAST_APPLIED_ANNOTATION) if type(annotations) is dict else None
        self.la: str | None = la if type(la) is str else None
        raw = md.get("managedFields")
        self.entries: list[dict[str, Any]] = [e for e in raw if type(e) is dict] if type(raw) is list else []
        self.csa = False
        self.kubectl_applies = False
        self.appliers: list[str] = []
        self.apply_names: set[str] = set()
        self.update_names: set[str] = set()
        self.special: list[dict[str, Any]] = []  # Update entries but the client-side manager's
        for e in self.entries:
            manager = e.get("manager") or ""
            op = e.get("operation")
            if op == APPLY:
                if manager != KUBECTL_LAST_APPLIED:
                    self.apply_names.add(manager)
                    if manager not in self.appliers and not e.get("subresource"):
                        self.appliers.append(manager)
                    if manager == KUBECTL:
                        self.kubectl_applies = True
            elif op == UPDATE:
                self.update_names.add(manager)
                if manager == KUBECTL_CLIENT_SIDE_APPLY:
                    self.csa = True
                else:
                    self.special.append(e)
        self._la_doc: Any = MISSING
        self._la_error: str | None = None
        self._too_deep: bool | None = None
        self.trapped: list[dict[str, Any]] = []
        #: the applier's sequence for the object's manifest as ``predicted-conflict`` played it
        #: (applier, manifest, run): the fix's check of the apply alone is that same run
        self.predicted: tuple[Applier, Mapping[str, Any], ApplierRun] | None = None
        # the findings of a large audit are kept to the end: one copy of each repeated string
        self.api_version = sys.intern(str(obj.get("apiVersion") or ""))
        self.kind = sys.intern(str(obj.get("kind") or ""))
        self.name = str(md.get("name") or "")
        ns = md.get("namespace")
        self.namespace = sys.intern(str(ns)) if ns else None
        self.resource = sys.intern(type_ref(self.api_version, self.kind))
        self.is_secret = is_secret(self.api_version, self.kind)

    def quiet(self, ctx: AuditContext) -> bool:
        """Nothing can fire: one applier or controllers only, no annotation (the fast path)."""
        if self.la is not None or self.csa or not self.entries or (self.apply_names & self.update_names):
            return False
        if ctx.manifests:
            return False
        if ctx.applier is not None:
            # a named applier: another Apply manager, or an updater that may co-own its fields, matters
            return set(self.appliers) <= {ctx.applier.manager} and not self.special
        return not any(_is_special(e, ctx) for e in self.special)

    @property
    def la_doc(self) -> Any:
        if self._la_doc is MISSING:
            self._la_doc = None
            if self.la is not None:
                try:
                    self._la_doc = _loads(self.la)
                except ValueError as err:
                    self._la_error = str(err)
        return self._la_doc

    @property
    def too_deep(self) -> bool:
        """Nested deeper than the engine walks (:func:`~kubectl_fieldown.base.value.too_deep`; a walk of
        the whole object, so once)."""
        if self._too_deep is None:
            self._too_deep = nested_too_deep(self.obj)
        return self._too_deep

    @property
    def la_error(self) -> str | None:
        _ = self.la_doc
        return self._la_error

    def finding(self, rule_id: str, message: str, details: Mapping[str, Any] | None = None,
                severity: Severity | None = None) -> Finding:
        return Finding(rule_id, severity or RULES[rule_id].severity, self.api_version, self.kind, self.namespace,
                       self.name, message, None, self.resource, details or {})


def _is_special(e: Mapping[str, Any], ctx: AuditContext) -> bool:
    manager = e.get("manager") or ""
    return manager in SERVER_MANAGERS or (manager not in NOT_IMPERATIVE
                                          and matches_any(manager, ctx.imperative_managers))


# --- the rules -----------------------------------------------------------------------------------


def predicted_conflict(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    """With ``-f``: the applier's own request sequence for the object's manifest, played on the engine."""
    if not ctx.manifests:
        return []
    manifest = ctx.manifests.get(object_key(f.obj))
    applier = ctx.applier
    if manifest is None or applier is None:
        return []
    rules = object_rules(ctx, f.obj)
    if rules is None:
        return []
    if f.too_deep:
        # deeper than the engine walks (a tenant's preserve-unknown-fields value): nothing is
        # predicted, and the object's fix says why (audit.fixes), while the audit goes on
        return []
    from ..appliers import run_applier

    run = run_applier(applier, f.obj, manifest, rules, now=ctx.now)
    f.predicted = (applier, manifest, run)
    conflicts = run.conflicts if run.error is not None else run.taken_over
    failed = run.failure
    by_owner: dict[str, list[str]] = {}
    listed = []
    for c in sorted(conflicts, key=lambda c: (c.path, c.manager)):
        p = path_string(c.path)
        who = c.identity.manager + (f" (subresource {c.identity.subresource})" if c.identity.subresource else "")
        by_owner.setdefault(who, []).append(p)
        listed.append({"path": p, "manager": c.identity.manager, "operation": c.identity.operation,
                       "subresource": c.identity.subresource})
    parts = [f"{_listed(paths)} (owned by {owner})" for owner, paths in by_owner.items()]
    n = len(conflicts)
    fields = f"{n} field{'s' if n != 1 else ''}"
    if failed is not None and not run.conflicts:
        # the server's 500 for a badly typed value quotes it: none of a Secret's
        error = scrub(run.failure_message, secret_texts(f.obj, manifest)) if f.is_secret else run.failure_message
        # as conflicts says it: the fields a forcing applier takes over, and that the apply still fails
        taken = f"; it forces, and would take over {fields}: " + "; ".join(parts) if listed else ""
        return [f.finding("predicted-conflict", f"{applier.describe()} would fail: {error}{taken}",
                          {"manager": applier.manager, "conflicts": listed, "error": error,
                           "status": failed.status, **({"forced": True} if listed else {})})]
    if not conflicts:
        return []
    if run.error is not None:
        message = f"{applier.describe()} would conflict on {fields}: " + "; ".join(parts)
        severity = None
    else:
        message = f"{applier.describe()} forces: it would take over {fields}: " + "; ".join(parts)
        severity = WARNING
    return [f.finding("predicted-conflict", message,
                      {"manager": applier.manager, "conflicts": listed, "forced": run.error is None}, severity)]


def hpa_replicas_trap(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    la_doc = f.la_doc
    if type(la_doc) is not dict:
        return []
    la_spec = la_doc.get("spec")
    if type(la_spec) is not dict or la_spec.get("replicas") is None:
        return []
    for e in f.entries:
        manager = e.get("manager") or ""
        if e.get("operation") == APPLY and manager == KUBECTL:
            continue
        if (e.get("subresource") == "scale" or matches_any(manager, ctx.autoscaler_managers)) \
                and manager != KUBECTL_CLIENT_SIDE_APPLY and _owns_spec_replicas(e.get("fieldsV1")):
            f.trapped.append(e)
    if not f.trapped:
        return []
    owners = sorted({_describe(e) for e in f.trapped})
    return [f.finding(
        "hpa-replicas-trap",
        f".spec.replicas is in the last-applied annotation ({_short(la_spec.get('replicas'))}) and "
        f"{_listed(owners)} scales it: remove replicas from the manifest and the annotation",
        {"owners": owners, "lastApplied": la_spec.get("replicas")},
    )]


def _la_bytes(f: ObjectFacts, ctx: AuditContext) -> tuple[int, bool]:
    # the annotation is measured in UTF-8 bytes (key and value, as the server counts), but only when
    # 4 bytes per character could reach the threshold: encoding every annotation costs
    assert f.la is not None
    near = len(f.la) * 4 + len(LAST_APPLIED_ANNOTATION) >= ctx.size_warning
    return (len(f.la.encode()) if f.is_secret or near else 0), near


def secret_last_applied(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if f.la is None or not f.is_secret:
        return []
    size, _ = _la_bytes(f, ctx)
    return [f.finding("secret-last-applied",
                      f"the last-applied annotation ({_fmt_bytes(size)}) holds a copy of the Secret's data in clear",
                      {"bytes": size})]


def last_applied_size(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if f.la is None:
        return []
    la_bytes, near = _la_bytes(f, ctx)
    if not near:
        return []
    size = len(LAST_APPLIED_ANNOTATION) + la_bytes
    if size < ctx.size_warning:
        return []
    return [f.finding("last-applied-size",
                      f"the last-applied annotation is {_fmt_bytes(size)}, {100 * size / ANNOTATIONS_LIMIT:.0f}% of "
                      "the 256 KiB limit on annotations",
                      {"bytes": size, "limit": ANNOTATIONS_LIMIT},
                      severity=ERROR if size >= ctx.size_error else WARNING)]


def mixed_appliers(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if not (f.csa and f.appliers):
        return []
    return [f.finding("mixed-appliers",
                      f"client-side apply ({KUBECTL_CLIENT_SIDE_APPLY}) and server-side apply ({_listed(f.appliers)}) "
                      "both manage this object",
                      {"clientSide": [KUBECTL_CLIENT_SIDE_APPLY], "serverSide": list(f.appliers)})]


def client_side_apply(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if not (f.csa or (f.la is not None and not f.kubectl_applies)):
        return []
    # a third of a large audit's findings: one message and one details map for each of the 3 cases
    message, details = _CSA_TEXTS[(f.la is not None, f.csa)]
    return [f.finding("client-side-apply", message, details)]


def _csa_text(la: bool, csa: bool) -> tuple[str, Mapping[str, Any]]:
    how = []
    if la:
        how.append("the last-applied annotation")
    if csa:
        how.append(f"manager {KUBECTL_CLIENT_SIDE_APPLY}")
    return f"managed by client-side kubectl apply ({' and '.join(how)})", {"lastApplied": la, "manager": csa}


_CSA_TEXTS = {(la, csa): _csa_text(la, csa) for la in (False, True) for csa in (False, True)}


def apply_and_update_same_manager(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    both_names = f.apply_names & f.update_names
    # (client-side kubectl apply's next apply is an Update like its entry: it never makes it both)
    if ctx.applier is not None and ctx.applier.server_side and ctx.manifests and any(
            e.get("manager") == ctx.applier.manager and e.get("operation") == UPDATE and not e.get("subresource")
            for e in f.entries):
        # the named applier's first apply makes it both (an operator that starts applying)
        both_names = both_names | {ctx.applier.manager}
    both = sorted(both_names)
    if not both:
        return []
    return [f.finding("apply-and-update-same-manager",
                      f"{_listed(both)} {'is' if len(both) == 1 else 'are'} both an Apply and an Update manager",
                      {"managers": both})]


def stale_applier(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    """Apply entries of managers other than the applier the user names (client-side apply prunes
    only what its annotation records: an Apply entry's fields stay for it too)."""
    if ctx.applier is None:
        return []
    out = []
    for e in f.entries:
        manager = e.get("manager") or ""
        if e.get("operation") != APPLY or manager in (ctx.applier.manager, KUBECTL_LAST_APPLIED) \
                or e.get("subresource"):
            continue
        paths = field_paths(e.get("fieldsV1"))
        if not paths:
            continue
        out.append(f.finding("stale-applier",
                             f"{manager} (Apply) still owns {len(paths)} field{'s' if len(paths) != 1 else ''} "
                             f"({_listed(paths)}): {ctx.applier.manager} can neither prune nor change them alone"
                             + ("" if ctx.applier.server_side else " (client-side apply prunes only what the "
                                "last-applied annotation records)"),
                             {"manager": manager, "fields": paths}))
    return out


def update_manager_keeps_fields(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    """Update managers that are neither kubectl's nor the server's, co-owning fields the applier sets."""
    candidates = []
    for e in f.special:
        manager = e.get("manager") or ""
        if e.get("subresource") or manager in SERVER_MANAGERS or matches_any(manager, ctx.imperative_managers) \
                or matches_any(manager, ctx.autoscaler_managers) or manager in f.apply_names:
            continue
        candidates.append((manager, e))
    if not candidates:
        return []  # the usual case: the applier's fields are not even read
    applier_fields: set[str] = set()
    for e in f.entries:
        manager = e.get("manager")
        if e.get("subresource") or manager == KUBECTL_LAST_APPLIED:
            continue
        if e.get("operation") == APPLY or manager == KUBECTL_CLIENT_SIDE_APPLY:
            applier_fields.update(field_paths(e.get("fieldsV1")))
    if not applier_fields:
        return []
    out = []
    for manager, e in candidates:
        shared = sorted(applier_fields.intersection(field_paths(e.get("fieldsV1"))))
        if not shared:
            continue
        out.append(f.finding("update-manager-keeps-fields",
                             f"{manager} (Update) co-owns {len(shared)} field{'s' if len(shared) != 1 else ''} the "
                             f"applier sets ({_listed(shared)}): dropping them from the manifest will not remove them",
                             {"manager": manager, "fields": shared}))
    return out


def server_managers(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    out = []
    for e in f.special:
        manager = e.get("manager") or ""
        if manager not in SERVER_MANAGERS:
            continue
        rule_id = "before-first-apply" if manager == BEFORE_FIRST_APPLY else "ancient-changes"
        n = len(field_paths(e.get("fieldsV1")))
        sub = e.get("subresource") or ""
        where = f" (subresource {sub})" if sub else ""
        out.append(f.finding(
            rule_id,
            f"{manager}{where} owns {n} field{'s' if n != 1 else ''}"
            + (": recorded when a server-side apply met an object without managedFields"
               if rule_id == "before-first-apply" else ": older Update managers were merged, their names lost"),
            {"manager": manager, "fields": n},
        ))
    return out


def imperative_writer(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    # one finding per (manager, subresource): the server keeps an entry per subresource, and a
    # finding that merged them would say the status writer owns the main resource's fields
    imperative: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in f.special:
        manager = e.get("manager") or ""
        if (manager not in SERVER_MANAGERS and manager not in NOT_IMPERATIVE and manager not in f.apply_names
                and matches_any(manager, ctx.imperative_managers) and not any(e is t for t in f.trapped)):
            imperative.setdefault((manager, str(e.get("subresource") or "")), []).append(e)
    out = []
    for (manager, sub), es in imperative.items():
        paths = sorted({p for e in es for p in field_paths(e.get("fieldsV1"))})
        subs = [sub] if sub else []
        via = f" (subresource {sub})" if sub else ""
        out.append(f.finding("imperative-writer", f"{manager}{via} owns {_listed(paths) if paths else 'no fields'}",
                             {"manager": manager, "subresources": subs, "fields": paths}))
    return out


def last_applied_drift_rule(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if f.la is None:
        return []
    la_doc = f.la_doc
    if f.la_error is not None or type(la_doc) is not dict:
        return [f.finding("last-applied-drift",
                          "the last-applied annotation is not a JSON object: kubectl apply cannot compute its patch",
                          {"invalid": True, "fields": []})]
    if str(la_doc.get("apiVersion") or "") != f.api_version or str(la_doc.get("kind") or "") != f.kind:
        return []  # an annotation written through another apiVersion has that version's shape: not comparable
    skip = {".spec.replicas"} if f.trapped else set()
    drifted = sorted((d for d in last_applied_drift(la_doc, f.obj, secret=f.is_secret) if d.path not in skip),
                     key=lambda d: d.path)
    if not drifted:
        return []
    paths = [d.path for d in drifted]
    first = drifted[0]
    shown = "" if f.is_secret else f" (annotation {_short(first.last_applied)}, live {_short(first.live)})"
    verb = "fields differ" if len(paths) != 1 else "field differs"
    return [f.finding(
        "last-applied-drift",
        f"{len(paths)} {verb} from the last-applied annotation: {paths[0]}{shown}"
        + (f", {_listed(paths[1:], _MAX_LISTED - 1)}" if len(paths) > 1 else "")
        + ": the next client-side apply restores the annotation's values",
        {"fields": paths},
    )]


def untracked(f: ObjectFacts, ctx: AuditContext) -> list[Finding]:
    if f.entries:
        return []
    return [f.finding("untracked",
                      "no managedFields: the first server-side apply will record every field as before-first-apply")]


#: every rule, in the order they run (hpa-replicas-trap before the rules that skip its scaler)
RULE_FUNCTIONS: tuple[Callable[[ObjectFacts, AuditContext], list[Finding]], ...] = (
    predicted_conflict, hpa_replicas_trap, secret_last_applied, last_applied_size, mixed_appliers,
    client_side_apply, apply_and_update_same_manager, stale_applier, update_manager_keeps_fields,
    server_managers, imperative_writer, last_applied_drift_rule, untracked,
)
