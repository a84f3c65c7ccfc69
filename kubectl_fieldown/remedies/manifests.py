"""What an applier applies, read off the live object when the user does not give the manifest.

A remedy is checked against the applier's next apply, which needs the manifest it will apply.
With ``-f`` the user gives it. Without, the object's own records say what the applier applied
last, and the check assumes it applies the same again (minus what the fix says to drop):

* the last-applied annotation, when it is the applier's own previous configuration
  (:func:`.intent.annotation_is_its`): client-side ``kubectl apply``, ``kubectl apply
  --server-side`` (the server keeps it in sync for the manager ``kubectl``), the appliers that take
  a client-side history over (Argo CD's and Flux's migrations fold the client-side manager into the
  applier: its manifest was the annotation's), and an applier under another name whose manifest is
  the annotation's configuration, changed (not a partial one next to it);
* the fields of the applier's Apply entry, with their live values (what it applied, minus what
  others have taken since);
* Helm 3's ``helm`` Update entry for Helm, which writes client-side (the chart's fields).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..appliers import Applier, ApplierKind, applier_for_manager
from ..base.value import copy_plain_json
from ..fieldmanager.jsondata import copy_json
from ..ownership.managedfields import (
    APPLY,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    UPDATE,
    ManagedFieldsEntry,
    decode_entries,
)
from ..schema.types import Type
from ..typed.remove import extract_owned
from .handover import remove_paths
from .intent import annotation_is_its
from .migration import _LAC
from .toserverside import last_applied_document

__all__ = ["detected_applier", "inferred_manifest", "with_live_fields", "without_paths"]


def detected_applier(obj: Mapping[str, Any]) -> Applier | None:
    """The applier in use: the newest Apply manager of the main resource; else client-side kubectl
    when the object carries its annotation or manager; else none (controllers only)."""
    md = obj.get("metadata") or {}
    raw = md.get("managedFields")
    entries = [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []
    newest: tuple[str, str] | None = None
    csa = False
    for e in entries:
        manager = str(e.get("manager") or "")
        if e.get("operation") == UPDATE and manager == KUBECTL_CLIENT_SIDE_APPLY:
            csa = True
        if e.get("operation") != APPLY or manager == KUBECTL_LAST_APPLIED or e.get("subresource"):
            continue
        t = str(e.get("time") or "")
        if newest is None or t > newest[0]:
            newest = (t, manager)
    if newest is not None:
        return applier_for_manager(newest[1])
    annotations = md.get("annotations")
    if csa or (isinstance(annotations, Mapping) and isinstance(annotations.get(LAST_APPLIED_ANNOTATION), str)):
        return _client_side_kubectl()
    return None


@functools.cache
def _client_side_kubectl() -> Applier:
    return Applier.of("kubectl-client-side")  # (appliers are values: one serves every object)


def inferred_manifest(live: Mapping[str, Any], applier: Applier, root: Type,
                      manifest: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The manifest ``applier`` last applied to ``live`` (None when nothing records it). The
    last-applied annotation is its only when :func:`.intent.annotation_is_its` says so (``manifest``:
    the one it applies next, when known)."""
    md = live.get("metadata") or {}
    api_version = str(live.get("apiVersion") or "")
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    entries = decode_entries(md.get("managedFields"))
    annotation = last_applied_document(la if isinstance(la, str) else None, api_version)
    own = [e for e in entries if e.manager == applier.manager and e.operation == APPLY and not e.subresource]
    if annotation is not None and annotation_is_its(live, applier, manifest, root):
        doc: dict[str, Any] = copy_json(annotation)
        _drop_last_applied(doc)
        if own:
            _merge_missing(doc, _extracted(live, own[0], root))
        return doc
    helm3 = [e for e in entries if e.manager == applier.manager and e.operation == UPDATE and not e.subresource] \
        if applier.kind is ApplierKind.helm else []
    if helm3:
        # Helm 3 leaves one Update entry per apiVersion it wrote at (an upgrade to a chart with
        # another version adds one): its chart is what they own together
        fields = helm3[0].fields
        for e in helm3[1:]:
            fields = fields.union(e.fields)
        helm3 = [helm3[0].with_fields(fields)]
    if own:
        doc = _extracted(live, own[0], root)
        if helm3:
            # Helm's own Update entry (a Helm 3 write, or one before its csaupgrade) is its chart too
            _merge_missing(doc, _extracted(live, helm3[0], root))
        return doc
    if helm3:
        return _extracted(live, helm3[0], root)
    return None


def _extracted(live: Mapping[str, Any], entry: ManagedFieldsEntry, root: Type) -> dict[str, Any]:
    fields = entry.fields.difference(_LAC)
    try:
        # the owned part of the object copied, not the whole object (its managedFields, its status):
        # extraction only reads. Where it met anything but plain JSON (a Mapping that is not a dict
        # among the owned values) the copy refuses it, and the object is copied into plain JSON first
        body = copy_plain_json(extract_owned(live, fields, root))
    except ValueError:
        body = extract_owned(copy_json(dict(live)), fields, root)
    if not isinstance(body, dict):
        body = {}
    md_live = live.get("metadata") or {}
    extracted = body.get("metadata")
    md: dict[str, Any] = {k: v for k, v in extracted.items() if k in ("labels", "annotations", "finalizers",
                          "ownerReferences")} if isinstance(extracted, dict) else {}
    md["name"] = md_live.get("name")
    if md_live.get("namespace"):
        md["namespace"] = md_live["namespace"]
    body["metadata"] = md
    body["apiVersion"] = live.get("apiVersion")
    body["kind"] = live.get("kind")
    return body


def _drop_last_applied(doc: dict[str, Any]) -> None:
    md = doc.get("metadata")
    if isinstance(md, dict) and isinstance(md.get("annotations"), dict):
        md["annotations"].pop(LAST_APPLIED_ANNOTATION, None)
        if not md["annotations"]:
            del md["annotations"]


def _merge_missing(doc: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Add to ``doc`` the maps' keys only ``extra`` has (the annotation wins where both set a value)."""
    for k, v in extra.items():
        if k not in doc:
            doc[k] = copy_json(v)
        elif isinstance(doc[k], dict) and isinstance(v, Mapping):
            _merge_missing(doc[k], v)


def without_paths(manifest: Mapping[str, Any], paths: Any) -> dict[str, Any]:
    """``manifest`` without the fields at ``paths`` (the edits a fix asks the user to make); with no
    paths, the manifest itself (the engine changes no document it reads: its memories of what it
    found for a document hold for the same document again)."""
    if not paths and type(manifest) is dict:
        return manifest
    doc: dict[str, Any] = copy_json(dict(manifest))
    remove_paths(doc, list(paths))
    return doc


def with_live_fields(manifest: Mapping[str, Any], obj: Mapping[str, Any], paths: Any) -> dict[str, Any]:
    """``manifest`` also setting the fields at ``paths`` to their live values (the fields handed to the
    applier itself: from now on its manifest sets them). A list item is found by its key (or value) in
    the manifest's list, not by equality: two fields of one item are one item."""
    from ..fieldpath.lookup import Lookup
    from .handover import set_live

    doc: dict[str, Any] = copy_json(dict(manifest))
    look = Lookup(obj)
    for p in paths:
        set_live(doc, look, p)
    return doc
