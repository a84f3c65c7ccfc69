"""Each applier's request sequence, played on the engine: what one sync or apply does to an object.

:func:`run_applier` sends, request by request, what the tool's own code sends (see
:mod:`.model` for the sequences and docs/appliers.md for the sources they were read from), each
through the simulated API server (:func:`~kubectl_fieldown.fieldmanager.simulate_apply` and
:func:`~kubectl_fieldown.fieldmanager.simulate_update`), and stops where the tool stops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..base.value import go_json, values_equal
from ..fieldmanager import (
    ApplyConflict,
    FieldManagerError,
    ResourceRules,
    simulate_apply,
    simulate_update,
)
from ..fieldmanager.jsondata import copy_json
from ..fieldmanager.jsonpatch import apply_json_patch, pointer
from ..fieldmanager.lastapplied import waived_conflicts
from ..fieldpath import UNSTRUCTURED, FieldSet, encode_fields_v1, path_from_fields
from ..ownership.managedfields import (
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
    ManagedFieldsEntry,
    ManagedFieldsError,
    decode_entries,
)
from .csaupgrade import find_fields_owners, upgrade_managed_fields
from .jsonmerge import MergePatchError, apply_merge_patch, three_way_merge_patch
from .model import Applier, ApplierKind, ApplierRun, Request
from .smpmeta import StructMeta, patch_meta_for
from .strategic import StrategicPatchError, apply_strategic_patch, client_side_strategic_patch, go_decoded

__all__ = [
    "FLUX_CLEANUP_ANNOTATIONS",
    "FLUX_CLEANUP_EXCLUSIONS",
    "FLUX_CLEANUP_LABELS",
    "FLUX_EXCLUSION_SELECTOR",
    "FLUX_IF_NOT_PRESENT_SELECTOR",
    "client_side_modified",
    "flux_replaced_managers",
    "run_applier",
]

LAST_APPLIED_PATH = path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION)

#: kustomize-controller's ``ApplyCleanupOptions``: annotations and labels it removes before applying
FLUX_CLEANUP_ANNOTATIONS = (LAST_APPLIED_ANNOTATION, "kustomize.toolkit.fluxcd.io/checksum", "fluxcd.io/sync-checksum")
FLUX_CLEANUP_LABELS = ("fluxcd.io/sync-gc-mark",)
#: kustomize-controller's selectors (labels or annotations of the manifest or of the object, values
#: compared case-insensitively): not applied at all (``ExclusionSelector``), applied only to
#: create (``IfNotPresentSelector``, the manifest's), no cleanup (``Cleanup.Exclusions``)
FLUX_EXCLUSION_SELECTOR = {"kustomize.toolkit.fluxcd.io/reconcile": "disabled",
                           "kustomize.toolkit.fluxcd.io/ssa": "Ignore"}
FLUX_IF_NOT_PRESENT_SELECTOR = {"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}
FLUX_CLEANUP_EXCLUSIONS = {"kustomize.toolkit.fluxcd.io/ssa": "Merge"}


def run_applier(
    applier: Applier,
    live: Mapping[str, Any] | None,
    manifest: Mapping[str, Any],
    rules: ResourceRules,
    *,
    now: str,
) -> ApplierRun:
    """Play ``applier``'s requests for ``manifest`` against ``live`` (None: the object does not exist)."""
    s = _Session(applier, live, manifest, rules, now)
    kind = applier.kind
    if kind is ApplierKind.kubectl:
        s.kubectl_server_side(applier.manager, applier.force)
    elif kind is ApplierKind.kubectl_client_side:
        s.kubectl_client_side()
    elif kind is ApplierKind.argocd:
        if applier.csa_migration:
            s.csaupgrade([applier.csa_manager], applier.manager, "",
                         f"Argo CD ClientSideApplyMigration of {applier.csa_manager} into {applier.manager}",
                         only_if_update_entry=applier.csa_manager)
        if s.run.ok:
            s.kubectl_server_side(applier.manager, True)
    elif kind is ApplierKind.flux:
        s.flux()
    elif kind is ApplierKind.helm:
        if applier.csa_migration:
            s.csaupgrade([applier.manager], applier.manager, applier.manager,
                         f"Helm 4 csaupgrade of its {applier.manager} Update entry into Apply")
        if s.run.ok:
            s.apply(manifest, applier.manager, applier.force, "apply of the rendered manifest")
    else:
        s.apply(manifest, applier.manager, applier.force, "server-side apply")
    return s.run


class _Session:
    """The object as the applier sees it between requests, and the record of the requests."""

    def __init__(self, applier: Applier, live: Mapping[str, Any] | None, manifest: Mapping[str, Any],
                 rules: ResourceRules, now: str) -> None:
        self.rules = rules
        self.now = now
        # a shallow copy: every write played makes its own result and changes nothing it reads, so
        # the object's parts stay shared with ``live`` until a write replaces them (comparing the
        # two then skips whatever is still the same value)
        self.obj: dict[str, Any] | None = dict(live) if live is not None else None
        self.manifest = manifest
        self.run = ApplierRun(applier, live, manifest, result=self.obj)

    # --- requests ---------------------------------------------------------------------------------

    def _record(self, request: Request, *, stops: bool = True, warning: bool = False) -> None:
        self.run.requests.append(request)
        if not request.ok:
            if warning:
                self.run.warnings.append(request)
            elif stops and self.run.error is None:
                self.run.error = request

    def apply(self, body: Mapping[str, Any], manager: str, force: bool, purpose: str, *,
              warning: bool = False) -> bool:
        try:
            # a forced apply is played once: the conflicts it overrides are the ones the same apply
            # without force is refused for, found by the same steps before they part
            res = simulate_apply(self.obj, body, manager, self.rules, now=self.now, force=force)
        except ApplyConflict as e:
            self.run.conflicts = list(e.conflicts)
            self._record(Request("apply", manager, purpose, body, force, e.status, e.message), warning=warning)
            return False
        except FieldManagerError as e:
            self._record(Request("apply", manager, purpose, body, force, e.status, e.message), warning=warning)
            return False
        conflicts = res.taken_over
        if conflicts and manager == KUBECTL and self.obj is not None:
            # without force, kubectl's last-applied waiver lets the unchanged fields of its
            # client-side apply go: only the rest would have been refused, and are taken over
            conflicts = waived_conflicts(self.obj, conflicts, self.rules)
        if conflicts and not self.run.taken_over:
            self.run.taken_over = conflicts
        created = self.obj is None
        self._record(Request("apply", manager, purpose, body, force, 201 if created else 200, changed=res.changed))
        self._set(res.object)
        return True

    def update(self, new: Mapping[str, Any], verb: str, manager: str, purpose: str, body: Any, *,
               warning: bool = False) -> bool:
        created = self.obj is None
        try:
            res = simulate_update(self.obj, new, manager, self.rules, now=self.now, compared=False)
        except FieldManagerError as e:
            self._record(Request(verb, manager, purpose, body, status=e.status, message=e.message), warning=warning)
            return False
        self._record(Request(verb, manager, purpose, body, status=201 if created else 200, changed=res.changed))
        self._set(res.object)
        return True

    def _set(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.run.result = obj

    def entries(self) -> list[ManagedFieldsEntry]:
        if self.obj is None:
            return []
        try:
            return decode_entries((self.obj.get("metadata") or {}).get("managedFields"))
        except ManagedFieldsError:
            return []

    def managed_fields_patch(self, entries: Sequence[ManagedFieldsEntry], manager: str, purpose: str,
                             extra_ops: Sequence[dict[str, Any]] = (), *, guard: bool = True,
                             warning: bool = False) -> bool:
        """A JSON patch that replaces managedFields (and, with ``guard``, replaces the
        resourceVersion with itself, as client-go's csaupgrade patch does)."""
        assert self.obj is not None
        value = [e.to_dict(UNSTRUCTURED) for e in entries] or [{}]
        ops: list[dict[str, Any]] = [*extra_ops, {"op": "replace", "path": "/metadata/managedFields", "value": value}]
        if guard:
            rv = str((self.obj.get("metadata") or {}).get("resourceVersion") or "")
            ops.append({"op": "replace", "path": "/metadata/resourceVersion", "value": rv})
        new = apply_json_patch(self.obj, ops)
        return self.update(new, "json-patch", manager, purpose, ops, warning=warning)

    # --- building blocks --------------------------------------------------------------------------

    def csaupgrade(self, csa_managers: Iterable[str], target: str, patch_manager: str, purpose: str, *,
                   only_if_update_entry: str | None = None, warning: bool = False) -> bool:
        """client-go ``UpgradeManagedFieldsPatch``, sent as a JSON patch when it changes anything.
        Returns whether a patch was sent and accepted."""
        if self.obj is None:
            return False
        entries = self.entries()
        if only_if_update_entry is not None and not any(
                e.manager == only_if_update_entry and e.operation == UPDATE for e in entries):
            return False
        upgraded = upgrade_managed_fields(entries, csa_managers, target)
        if _same_entries(upgraded, entries):
            return False
        return self.managed_fields_patch(upgraded, patch_manager, purpose, warning=warning)

    def kubectl_server_side(self, manager: str, force: bool) -> None:
        """``kubectl apply --server-side`` (kubectl 1.36 ``applyOneObject``)."""
        if not self.apply(self.manifest, manager, force, f"apply by {manager}"):
            return
        # saveLastApplyAnnotationIfNecessary: only for the default manager, while no Apply entry owns
        # the annotation; a failure skips the migration (kubectl warns and goes on)
        if manager == KUBECTL and self.obj is not None:
            md = self.obj.get("metadata") or {}
            la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
            lac = FieldSet([LAST_APPLIED_PATH])
            if isinstance(la, str) and not find_fields_owners(self.entries(), APPLY, lac):
                meta: dict[str, Any] = {"name": md.get("name"), "annotations": {LAST_APPLIED_ANNOTATION: la}}
                if md.get("namespace"):
                    meta["namespace"] = md["namespace"]
                body = {"apiVersion": self.obj.get("apiVersion"), "kind": self.obj.get("kind"), "metadata": meta}
                if not self.apply(body, KUBECTL_LAST_APPLIED, False,
                                  f"apply of the last-applied annotation by {KUBECTL_LAST_APPLIED}", warning=True):
                    return
        # migrateToSSAIfNecessary: the Update entries that own the annotation fold into the applier
        owners = sorted({e.manager for e in find_fields_owners(self.entries(), UPDATE, FieldSet([LAST_APPLIED_PATH]))})
        if not owners:
            return
        if not self.csaupgrade(owners, manager, manager, f"csaupgrade of {', '.join(owners)} into {manager}",
                               warning=True):
            return
        # re-send the original apply, so that fields the manifest dropped are removed
        self.apply(self.manifest, manager, force, f"apply again by {manager}", warning=True)

    def kubectl_client_side(self) -> None:
        """``kubectl apply`` (client-side): create, or a three-way patch — a strategic merge patch for
        a built-in kind kubectl has Go types for, a JSON merge patch for any other (custom resources)."""
        manager = self.run.applier.manager or KUBECTL_CLIENT_SIDE_APPLY
        self.manifest = _with_request_namespace(self.manifest, self.obj)
        annotation, modified = client_side_modified(self.manifest)
        if self.obj is None:
            created = copy_json(dict(self.manifest))
            md = created.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), LAST_APPLIED_ANNOTATION: annotation}
            created = _pruned_nulls(created)
            self.update(created, "create", manager, "create with the last-applied annotation", created)
            return
        # kubectl sends a strategic merge patch for a kind its scheme has Go types for (the built-in
        # kinds of client-go 1.36, the same types as the engine's), else a JSON merge patch: custom
        # resources, and built-in kinds newer than kubectl
        meta = None
        if self.rules.normalize is not None:
            meta = patch_meta_for(str(self.obj.get("apiVersion") or ""), str(self.obj.get("kind") or ""))
        verb = "strategic-patch" if meta is not None else "merge-patch"
        md = self.obj.get("metadata") or {}
        original_text = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
        original: Mapping[str, Any] | None = None
        if isinstance(original_text, str) and original_text:
            try:
                import json

                loaded = json.loads(original_text)
            except ValueError:
                loaded = None
            if not isinstance(loaded, Mapping):
                self._record(Request(verb, manager, "client-side apply", None, status=400,
                                     message="the last-applied annotation is not a JSON object"))
                return
            original = loaded
        if meta is not None:
            self._strategic(meta, original, manager)
            return
        try:
            patch = three_way_merge_patch(original, modified, self.obj)
        except MergePatchError as e:
            self._record(Request("merge-patch", manager, "client-side apply", None, status=400, message=str(e)))
            return
        if not patch:
            return  # "unchanged": kubectl sends nothing
        new = apply_merge_patch(self.obj, patch)
        refusal = _unconditional_update(self.obj, new, self.rules)
        if refusal:
            self._record(Request("merge-patch", manager, "three-way JSON merge patch", patch, status=422,
                                 message=refusal))
            return
        self.update(new, "merge-patch", manager, "three-way JSON merge patch", patch)

    def _strategic(self, meta: StructMeta, original: Mapping[str, Any] | None, manager: str) -> None:
        """kubectl's three-way strategic merge patch of a built-in kind, and the server's patch."""
        assert self.obj is not None
        _, modified = client_side_modified(self.manifest)
        patch_ = client_side_strategic_patch(modified, self.obj, original, meta)
        if isinstance(patch_, StrategicPatchError):
            self._record(Request("strategic-patch", manager, "client-side apply", None, status=400,
                                 message=f"kubectl could not compute the patch: {patch_}"))
            return
        if not patch_:
            return  # "unchanged": kubectl sends nothing
        try:
            new = apply_strategic_patch(go_decoded(self.obj), patch_, meta)
        except StrategicPatchError as e:
            self._record(Request("strategic-patch", manager, "three-way strategic merge patch", patch_,
                                 status=e.status, message=str(e)))
            return
        self.update(new, "strategic-patch", manager, "three-way strategic merge patch", patch_)

    def flux(self) -> None:
        """kustomize-controller (fluxcd/pkg ``ResourceManager.Apply``): the selectors, dry-run,
        cleanup patch, forced apply unless nothing drifted and nothing was cleaned up."""
        applier = self.run.applier
        manager = applier.manager
        existing = self.obj
        if _any_in_metadata(self.manifest, FLUX_EXCLUSION_SELECTOR) or \
                _any_in_metadata(existing, FLUX_EXCLUSION_SELECTOR):
            return  # shouldSkipApply: nothing is sent
        if existing is None:
            self.apply(self.manifest, manager, True, "forced apply (create)")
            return
        if _any_in_metadata(self.manifest, FLUX_IF_NOT_PRESENT_SELECTOR):
            return
        try:
            dry = simulate_apply(existing, self.manifest, manager, self.rules, now=self.now, force=True).object
        except FieldManagerError as e:
            self._record(Request("apply", manager, "server dry-run of the forced apply", self.manifest, True, e.status,
                                 e.message))
            return
        patched = False
        md = existing.get("metadata") or {}
        annotations = md.get("annotations") or {}
        labels = md.get("labels") or {}
        excluded = _any_in_metadata(self.manifest, FLUX_CLEANUP_EXCLUSIONS) or \
            _any_in_metadata(existing, FLUX_CLEANUP_EXCLUSIONS)
        if not excluded:
            ops: list[dict[str, Any]] = []
            for a in FLUX_CLEANUP_ANNOTATIONS:
                if a in annotations:
                    ops.append({"op": "remove", "path": pointer("metadata", "annotations", a)})
            for lb in FLUX_CLEANUP_LABELS:
                if lb in labels:
                    ops.append({"op": "remove", "path": pointer("metadata", "labels", lb)})
            entries = self.entries()
            replaced = flux_replaced_managers(entries, manager, applier.override_managers)
            if replaced is not None:
                ops.append({"op": "replace", "path": "/metadata/managedFields",
                            "value": [e.to_dict(UNSTRUCTURED) for e in replaced]})
            if ops:
                new = apply_json_patch(existing, ops)
                if not self.update(new, "json-patch", manager, "cleanup: last-applied annotation and field managers",
                                   ops):
                    return
                patched = True
        if not patched and not _flux_drifted(existing, dry):
            return
        self.apply(self.manifest, manager, True, "forced apply")


def _unconditional_update(live: Mapping[str, Any], patched: Mapping[str, Any], rules: ResourceRules) -> str:
    """The store's 422 for a patched custom resource that lost its resourceVersion (apiserver
    ``Store.Update``: custom resources allow no unconditional update). kubectl's three-way patch
    sends ``"resourceVersion": null`` when the last-applied annotation holds one — after ``kubectl
    replace -f`` (or ``apply``) of a file saved by ``kubectl get``. Empty when there is none."""
    if not rules.custom_resource or rules.normalize is not None:
        return ""
    before = (live.get("metadata") or {}).get("resourceVersion")
    after = (patched.get("metadata") or {}).get("resourceVersion")
    if not before or after:
        return ""
    gvk = rules.schema.gvk
    resource = rules.schema.resource or _guess_resource(gvk.kind)
    what = f"{resource}.{gvk.group}" if gvk.group else resource
    name = (patched.get("metadata") or {}).get("name", "")
    # field.Invalid of the uint64 0, rendered as JSON
    return f'{what} "{name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update'


def _guess_resource(kind: str) -> str:
    """apimachinery ``UnsafeGuessKindToResource``: the plural when no CRD or discovery names it."""
    low = kind.lower()
    if not low:
        return low
    if low.endswith("s"):
        return low + "es"
    if low.endswith("y"):
        return low[:-1] + "ies"
    return low + "s"


def _any_in_metadata(obj: Mapping[str, Any] | None, pairs: Mapping[str, str]) -> bool:
    """fluxcd/pkg ``utils.AnyInMetadata``: a label or an annotation with one of the keys and that
    value, compared case-insensitively (an empty value never matches)."""
    md = (obj or {}).get("metadata") or {}
    for m in (md.get("labels") or {}, md.get("annotations") or {}):
        for key, value in pairs.items():
            got = m.get(key)
            if isinstance(got, str) and got and got.casefold() == value.casefold():
                return True
    return False


def _with_request_namespace(manifest: Mapping[str, Any], live: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """kubectl sets the request's namespace in a manifest that names none before it computes
    anything (the last-applied annotation then names it); the request's namespace is the live
    object's."""
    md = manifest.get("metadata")
    ns = ((live or {}).get("metadata") or {}).get("namespace")
    if not ns or not isinstance(md, Mapping) or md.get("namespace"):
        return manifest
    return {**manifest, "metadata": {**md, "namespace": ns}}


def client_side_modified(manifest: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """kubectl ``GetModifiedConfiguration``: the last-applied annotation value the manifest gets (Go
    JSON of the manifest without the annotation, an empty ``annotations`` map when it has none, and
    a newline) and the manifest carrying it (what the three-way patch compares with)."""
    base = copy_json(dict(manifest))
    md = base.get("metadata")
    if not isinstance(md, dict):
        md = base["metadata"] = {}
    annotations = dict(md.get("annotations") or {})
    annotations.pop(LAST_APPLIED_ANNOTATION, None)
    md["annotations"] = annotations
    text = go_json(base) + "\n"
    modified = copy_json(base)
    modified["metadata"]["annotations"] = {**annotations, LAST_APPLIED_ANNOTATION: text}
    return text, modified


def flux_replaced_managers(
    entries: Sequence[ManagedFieldsEntry], name: str, overrides: Sequence[str] = ()
) -> list[ManagedFieldsEntry] | None:
    """fluxcd/pkg ``PatchReplaceFieldsManagers`` with kustomize-controller's managers: every entry
    of the main resource whose manager starts with ``kubectl`` (Apply or Update), ``before-first-apply``
    (Update), the controller's own name (Update) or an ``--override-manager`` (Apply or Update) is
    folded into ``name``'s Apply entry (kept if it exists, else the first match renamed), which goes
    last. No apiVersion check, no resourceVersion guard. None when nothing matches."""
    patterns: list[tuple[str, str]] = [("kubectl", APPLY), ("kubectl", UPDATE), (BEFORE_FIRST_APPLY, UPDATE),
                                       (name, UPDATE)]
    for o in overrides:
        patterns += [(o, APPLY), (o, UPDATE)]

    def matches(e: ManagedFieldsEntry) -> bool:
        return not e.subresource and any(e.operation == op and e.manager.startswith(p) for p, op in patterns)

    prev: ManagedFieldsEntry | None = None
    for e in entries:
        if e.manager == name and e.operation == APPLY:
            prev = e  # the last one, as the Go loop keeps overwriting it
    prev_original = prev
    out: list[ManagedFieldsEntry] = []
    edited = False
    for e in entries:
        if prev_original is not None and e is prev_original:
            continue
        if matches(e):
            if prev is None:
                prev = ManagedFieldsEntry(name, APPLY, e.api_version, e.fields, e.time, e.subresource)
            else:
                prev = prev.with_fields(prev.fields.union(e.fields))
            edited = True
            continue
        out.append(e)
    if not edited or prev is None:
        return None
    out.append(prev)
    return out


def _flux_drifted(existing: Mapping[str, Any], dry: Mapping[str, Any]) -> bool:
    """fluxcd/pkg ``hasDrifted``: labels, annotations, or anything outside metadata and status."""
    emd = existing.get("metadata") or {}
    dmd = dry.get("metadata") or {}
    for k in ("labels", "annotations"):
        if not values_equal(emd.get(k) or {}, dmd.get(k) or {}):
            return True
    a = {k: v for k, v in existing.items() if k not in ("metadata", "status")}
    b = {k: v for k, v in dry.items() if k not in ("metadata", "status")}
    return not values_equal(a, b)


def _same_entries(a: Sequence[ManagedFieldsEntry], b: Sequence[ManagedFieldsEntry]) -> bool:
    """The same entries in the same order, their sets compared as FieldsV1 (which tells number types
    apart); a set that is the other's own object is not encoded (an entry the upgrade left alone)."""
    if len(a) != len(b):
        return False
    pairs = list(zip(a, b, strict=True))
    if any((x.manager, x.operation, x.api_version, x.subresource) != (y.manager, y.operation, y.api_version,
                                                                       y.subresource) for x, y in pairs):
        return False
    return all(x.fields is y.fields or encode_fields_v1(x.fields) == encode_fields_v1(y.fields) for x, y in pairs)


def _pruned_nulls(v: Any) -> Any:
    # kubectl's pruneNullsFromMap on a create: nulls in maps go (lists are left as they are)
    if isinstance(v, dict):
        return {k: _pruned_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_pruned_nulls(x) for x in v]
    return v
