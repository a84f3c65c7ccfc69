"""Appliers replayed on the real API server, next to kubectl_fieldown's prediction of them.

Each applier's requests go to the server as its own code sends them:

* ``kubectl`` and ``kubectl-client-side``: the real kubectl binary of the lab, run with ``-v=9``; the
  requests it sent (bodies, content types, statuses, the server's answers) are read back from its
  log (:func:`parse_kubectl_v9`, the ``-v=9`` sibling of tests/engine/scenarios.py
  ``parse_kubectl_log``: ``-v=8`` cuts bodies at 1,024 bytes);
* ``argocd``: gitops-engine ``applyObject``: when the object has an Update entry of the migration
  manager, ``performCSAUpgradeMigration`` over raw HTTP (a fresh GET, client-go's csaupgrade JSON
  patch, sent without fieldManager under the controller's User-Agent), then the apply, which is
  kubectl's apply code: the real kubectl with ``--server-side --force-conflicts --field-manager
  argocd-controller``;
* ``flux``: fluxcd/pkg ``ResourceManager.Apply`` with kustomize-controller's options (GET, the
  exclusion selectors, the forced server dry-run, the cleanup JSON patch, the forced apply unless
  nothing was cleaned up and nothing drifted);
* ``helm``: Helm 4 ``upgradeClientSideFieldManager`` (a GET and client-go's csaupgrade of its own
  ``helm`` Update entry, fieldManager ``helm``; only when the previous release was client-side) and
  ``patchResourceServerSide``; Flux helm-controller (manager ``helm-controller``, whatever kind the
  tool gives it) is the same with forced conflicts;
* ``ssa``: one apply.

What these requests carry is computed without kubectl_fieldown, so that the product's own versions
are what gets checked: client-go's csaupgrade patch (Argo CD, Helm 4) by client-go itself
(:func:`csaupgrade_patch`, through tests/upstream_oracle.py); Flux's cleanup and drift check
(:func:`flux_cleanup_patch`, :func:`flux_drifted`) from fluxcd/pkg's rules as written in
``ssa/patch.go`` ``PatchReplaceFieldsManagers``/``PatchRemoveAnnotations``/``PatchRemoveLabels`` and
``ssa/manager_apply.go`` ``ResourceManager.apply``/``cleanupMetadata`` (read at fluxcd/pkg
e2cfd1a; no Go build of fluxcd/pkg is available offline, so these few rules are the one place where
the harness restates upstream; tests/appliers/test_upstream_flux.py checks them against the
assertions of fluxcd/pkg's own TestApply_Cleanup tests on the lab). FieldsV1 is decoded for the
comparison by the tests' own decoder (tests/fieldsv1_oracle.py).

:func:`disagreements` compares ``run_applier``'s prediction with what happened: the requests
(verb, fieldManager, HTTP status, the conflict message of a 409, and what they carried: kubectl's
three-way patch byte for byte as JSON, managedFields values as path sets), and the object the
server holds at the end (managedFields as path sets per manager identity, times aside;
spec, status, labels, annotations and finalizers exactly).
"""

from __future__ import annotations

import copy
import email.utils
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import upstream_oracle
from engine.conformance_cases import entries_of, object_view
from engine.conformance_cases import rules_for as case_rules
from engine.scenarios import (
    ADDRESSABLE,
    APPLY_CT,
    JSON_CT,
    JSON_PATCH_CT,
    MERGE_CT,
    VERSION,
    Api,
    Response,
    object_path,
)
from fieldsv1_oracle import oracle_paths

from kubectl_fieldown.appliers import Applier, ApplierKind, ApplierRun, Request
from kubectl_fieldown.fieldmanager import ResourceRules
from kubectl_fieldown.ownership.managedfields import parse_time

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MANAGED_FIELDS = "/metadata/managedFields"

#: Flux helm-controller's field manager (main.go ``controllerName``)
HELM_CONTROLLER = "helm-controller"

#: the User-Agent of Argo CD's application controller (argocd_application_controller.go): the server
#: names a write without fieldManager after it
ARGOCD_USER_AGENT = "argocd-application-controller/v3.3.0 (linux/amd64) argocd"

# kustomize-controller's ApplyOptions (kustomization_controller.go): ExclusionSelector,
# IfNotPresentSelector and Cleanup (its Exclusions, annotations, labels and field managers)
FLUX_GROUP = "kustomize.toolkit.fluxcd.io"
FLUX_EXCLUSION_SELECTOR = {f"{FLUX_GROUP}/reconcile": "disabled", f"{FLUX_GROUP}/ssa": "Ignore"}
FLUX_IF_NOT_PRESENT_SELECTOR = {f"{FLUX_GROUP}/ssa": "IfNotPresent"}
FLUX_CLEANUP_EXCLUSIONS = {f"{FLUX_GROUP}/ssa": "Merge"}
FLUX_CLEANUP_ANNOTATIONS = (LAST_APPLIED, f"{FLUX_GROUP}/checksum", "fluxcd.io/sync-checksum")
FLUX_CLEANUP_LABELS = ("fluxcd.io/sync-gc-mark",)


# ----------------------------------------------------------------------------------------------
# what reached the server


@dataclass
class Sent:
    """One request the server answered."""

    verb: str
    """``apply``, ``json-patch``, ``merge-patch``, ``create`` or ``update``."""
    manager: str
    """The ``fieldManager`` query parameter ("" when the request has none)."""
    status: int
    body: Any
    force: bool = False
    dry_run: bool = False
    message: str = ""
    """The server's message when it refused the request."""


@dataclass
class Replay:
    """What an applier sent, and the object the server holds afterwards (None: there is none)."""

    sent: list[Sent] = field(default_factory=list)
    final: dict[str, Any] | None = None
    rc: int = 0
    """kubectl's exit code (0 for the appliers replayed over raw HTTP)."""
    stderr: str = ""
    """kubectl's own messages (its errors and warnings)."""
    skipped: str = ""
    """Why the tool sent nothing at all (an exclusion selector), if it says so."""


_VERBS = {APPLY_CT: "apply", JSON_PATCH_CT: "json-patch", MERGE_CT: "merge-patch"}
_METHOD_VERBS = {"POST": "create", "PUT": "update", "DELETE": "delete"}

_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]]+\] (.*)$")
_CURL = re.compile(r"curl -v -X(\w+)\s.*?(?:-H \"Content-Type: ([^\"]*)\".*?)?'([^']*)'\s*$", re.S)
_RESPONSE = re.compile(r'^"Response" verb="(\w+)" url="([^"]*)" status="(\d+)')


def _query_flag(query: Mapping[str, list[str]], name: str) -> bool:
    return (query.get(name) or [""])[0].lower() == "true"


def _quoted(raw: str) -> str:
    try:
        v = json.loads(raw)
    except ValueError:
        return raw[1:-1]
    return v if isinstance(v, str) else raw


def _json_or_text(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_kubectl_v9(stderr: str) -> tuple[list[Sent], str]:
    """The requests that change something, from ``kubectl -v=9`` stderr, and kubectl's own messages.

    ``-v=9`` logs bodies in full (``-v=8`` cuts them at 1,024 bytes, which csaupgrade patches pass):
    a ``"Request Body"``, then the request as a ``curlCommand``, then ``"Response"`` with the status
    and the ``"Response Body"``."""
    records: list[str] = []
    plain: list[str] = []
    in_block = False
    for line in stderr.splitlines():
        m = _KLOG.match(line)
        if m and not in_block:
            records.append(m.group(1))
            in_block = line.rstrip().endswith("<")
        elif in_block:
            if line.startswith(" >"):
                in_block = False
            else:
                records[-1] += "\n" + line.removeprefix("\t")
        else:
            plain.append(line)
    sent: list[Sent] = []
    body: str | None = None
    current: Sent | None = None
    answered: Sent | None = None
    for rec in records:
        head, _, block = rec.partition("\n")
        if head.startswith('"Request Body" body='):
            raw = head[len('"Request Body" body='):]
            body = block if raw == "<" else _quoted(raw)
        elif head.startswith('"Request" curlCommand='):
            m = _CURL.search(block)
            current = None
            if m and m.group(1) in ("POST", "PUT", "PATCH", "DELETE"):
                method, content_type, url = m.group(1), (m.group(2) or "").split(";")[0].strip(), m.group(3)
                q = parse_qs(urlsplit(url).query)
                verb = _METHOD_VERBS.get(method) or _VERBS.get(content_type, f"patch {content_type}")
                current = Sent(verb, (q.get("fieldManager") or [""])[0], 0, _json_or_text(body),
                               force=_query_flag(q, "force"), dry_run=bool(q.get("dryRun")))
                sent.append(current)
            body = None
        elif head.startswith('"Response" '):
            m = _RESPONSE.match(head)
            answered = None
            if current is not None and m:
                current.status = int(m.group(3))
                answered, current = current, None
        elif head.startswith('"Response Body" body=') and answered is not None:
            raw = head[len('"Response Body" body='):]
            resp = _json_or_text(block if raw == "<" else _quoted(raw))
            if answered.status >= 300 and isinstance(resp, dict):
                answered.message = str(resp.get("message", ""))
            answered = None
    return sent, "\n".join(plain).strip()


class Wire(Api):
    """Raw HTTP to the lab server (tests/engine/scenarios.py ``Api``) with a chosen User-Agent."""

    def send(self, method: str, path: str, body: Any = None, content_type: str = JSON_CT,
             query: Sequence[tuple[str, str]] = (), user_agent: str | None = None) -> Response:
        url = self.host + path + ("?" + urlencode(list(query)) if query else "")
        headers = {**self._headers, "Accept": "application/json"}
        if user_agent is not None:
            headers["User-Agent"] = user_agent
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        resp = self._pool.request(method, url, body=data, headers=headers, preload_content=True, timeout=60)
        try:
            parsed = json.loads(resp.data) if resp.data else None
        except ValueError:
            parsed = resp.data.decode(errors="replace")
        return Response(resp.status, parsed)

    def server_time(self) -> float:
        """The server's clock (its ``Date`` header), in seconds since the epoch."""
        resp = self._pool.request("GET", self.host + "/version", headers=self._headers, preload_content=True,
                                  timeout=60)
        return email.utils.parsedate_to_datetime(resp.headers["Date"]).timestamp()

    def get(self, path: str) -> dict[str, Any] | None:
        resp = self.send("GET", path)
        if resp.status == 404:
            return None
        if resp.status != 200 or not isinstance(resp.body, dict):
            raise ReplayError(f"GET {path}: {resp.status} {resp.body}")
        return resp.body


class ReplayError(Exception):
    """The harness could not replay the case (not a disagreement)."""


def _message(resp: Response) -> str:
    return str(resp.body.get("message", "")) if isinstance(resp.body, dict) else str(resp.body)[:500]


# ----------------------------------------------------------------------------------------------
# the upstream rules, independently of kubectl_fieldown


def fields_union(a: Any, b: Any) -> Any:
    """The union of two FieldsV1 sets as JSON tries (``{"f:spec": {".": {}, "f:x": {}}}``): a path is
    in the union when it is in either, so the tries merge key by key. A node is a member when it is
    a leaf (``{}``) or holds ``"."``; a member that gains children keeps its ``"."``."""
    if not isinstance(a, dict):
        return copy.deepcopy(b)
    if not isinstance(b, dict):
        return copy.deepcopy(a)
    member = not a or "." in a or not b or "." in b
    out: dict[str, Any] = {}
    for k in [*a, *(k for k in b if k not in a)]:
        if k == ".":
            continue
        out[k] = fields_union(a[k], b[k]) if k in a and k in b else copy.deepcopy(a[k] if k in a else b[k])
    if out and member:
        out["."] = {}
    return out


def _go_number(v: Any) -> Any:
    # a float64 as encoding/json writes it: whole values below 1e21 without a fraction
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return int(v)
    if isinstance(v, dict):
        return {k: _go_number(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_go_number(x) for x in v]
    return v


def smd_roundtrip(fields: Any) -> Any:
    """A FieldsV1 trie after structured-merge-diff's ``Set.FromJSON`` and ``ToJSON`` (what client-go's
    csaupgrade and fluxcd/pkg do to the sets they unite): the values in ``v:`` and ``k:`` keys are read
    by jsoniter as float64 (``ConfigCompatibleWithStandardLibrary``), so an integer beyond 2**53
    comes back rounded; keys that become equal merge."""
    if not isinstance(fields, dict):
        return fields
    out: dict[str, Any] = {}
    for k, sub in fields.items():
        key = k
        if k[:2] in ("v:", "k:"):
            value = json.loads(k[2:], parse_int=float)
            key = k[:2] + json.dumps(_go_number(value), sort_keys=True, separators=(",", ":"))
        sub = smd_roundtrip(sub)
        out[key] = fields_union(out[key], sub) if key in out else sub
    return out


def _entries(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("managedFields") or [])


def csaupgrade_patch(obj: Mapping[str, Any], csa_managers: Iterable[str],
                     ssa_manager: str) -> list[dict[str, Any]] | None:
    """client-go ``csaupgrade.UpgradeManagedFieldsPatch`` (k8s.io/client-go/util/csaupgrade/upgrade.go),
    computed by client-go itself (tests/upstream_oracle.py builds it from the lab's Debian sources):
    two ``replace`` ops (managedFields, and the resourceVersion with itself), or None when nothing
    changes. Argo CD sends it from gitops-engine ``pkg/sync/sync_context.go``
    ``performCSAUpgradeMigration``; Helm 4 from ``pkg/kube/client.go`` ``upgradeClientSideFieldManager``."""
    return upstream_oracle.shared().csaupgrade_patch(obj, csa_managers, ssa_manager)


def any_in_metadata(obj: Mapping[str, Any] | None, pairs: Mapping[str, str]) -> bool:
    """fluxcd/pkg ``utils.AnyInMetadata``: a label or annotation with that key and a non-empty value
    equal to the given one, case-insensitively (``strings.EqualFold``)."""
    md = (obj or {}).get("metadata") or {}
    labels, annotations = md.get("labels") or {}, md.get("annotations") or {}
    for k, v in pairs.items():
        for m in (labels, annotations):
            got = m.get(k)
            if isinstance(got, str) and got != "" and got.casefold() == v.casefold():
                return True
    return False


def _flux_managers(name: str, overrides: Sequence[str]) -> list[tuple[str, str]]:
    managers = [("kubectl", "Apply"), ("kubectl", "Update"), ("before-first-apply", "Update"), (name, "Update")]
    for o in overrides:
        managers += [(o, "Apply"), (o, "Update")]
    return managers


def patch_replace_fields_managers(obj: Mapping[str, Any], managers: Sequence[tuple[str, str]],
                                  name: str) -> list[dict[str, Any]]:
    """fluxcd/pkg ``PatchReplaceFieldsManagers``: prefix matches (``ExactMatch`` false) on the main
    resource fold into ``name``'s Apply entry, which goes last."""
    entries = _entries(obj)
    prev_index = None
    for i, e in enumerate(entries):
        if e.get("manager") == name and e.get("operation") == "Apply":
            prev_index = i  # the last one: the Go loop keeps overwriting it
    prev = copy.deepcopy(entries[prev_index]) if prev_index is not None else None
    out: list[dict[str, Any]] = []
    edited = False
    for i, e in enumerate(entries):
        if i == prev_index:
            continue
        matched = any(e.get("operation") == op and not e.get("subresource") and str(e.get("manager", "")).startswith(m)
                      for m, op in managers)
        if matched:
            if prev is None:
                prev = {**copy.deepcopy(e), "manager": name, "operation": "Apply"}
            else:
                # mergeManagedFieldsV1: a missing side leaves the other as it is
                if e.get("fieldsV1") is not None:
                    prev["fieldsV1"] = smd_roundtrip(fields_union(prev.get("fieldsV1"), e["fieldsV1"])) \
                        if prev.get("fieldsV1") is not None else copy.deepcopy(e["fieldsV1"])
            edited = True
            continue
        out.append(e)
    if not edited or prev is None:
        return []
    return [{"op": "replace", "path": "/metadata/managedFields", "value": [*out, prev]}]


def _escaped(key: str) -> str:
    return key.replace("/", "~1")  # as fluxcd/pkg writes its paths (no "~" escaping)


def flux_cleanup_patch(existing: Mapping[str, Any], manifest: Mapping[str, Any], name: str,
                       overrides: Sequence[str] = ()) -> list[dict[str, Any]]:
    """fluxcd/pkg ``cleanupMetadata`` with kustomize-controller's ``ApplyCleanupOptions`` (empty: no
    patch)."""
    if any_in_metadata(manifest, FLUX_CLEANUP_EXCLUSIONS) or any_in_metadata(existing, FLUX_CLEANUP_EXCLUSIONS):
        return []
    md = existing.get("metadata") or {}
    ops: list[dict[str, Any]] = []
    annotations = md.get("annotations") or {}
    for k in FLUX_CLEANUP_ANNOTATIONS:
        if k in annotations:
            ops.append({"op": "remove", "path": "/metadata/annotations/" + _escaped(k)})
    labels = md.get("labels") or {}
    for k in FLUX_CLEANUP_LABELS:
        if k in labels:
            ops.append({"op": "remove", "path": "/metadata/labels/" + _escaped(k)})
    ops += patch_replace_fields_managers(existing, _flux_managers(name, overrides), name)
    return ops


def go_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of two values decoded from the server's JSON (whole numbers int64,
    others float64: an int never equals a float, a bool never equals a number)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(go_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(go_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def flux_drifted(existing: Mapping[str, Any], dry_run: Mapping[str, Any]) -> bool:
    """fluxcd/pkg ``hasDrifted``: a dry-run without resourceVersion (a create), other labels or
    annotations (nil and empty maps are equal for ``Semantic.DeepEqual``), or anything else outside
    metadata and status."""
    dmd, emd = dry_run.get("metadata") or {}, existing.get("metadata") or {}
    if not dmd.get("resourceVersion"):
        return True
    for k in ("labels", "annotations"):
        if not go_equal(dmd.get(k) or {}, emd.get(k) or {}):
            return True
    rest = [{k: v for k, v in o.items() if k not in ("metadata", "status")} for o in (existing, dry_run)]
    return not go_equal(rest[0], rest[1])


# ----------------------------------------------------------------------------------------------
# the appliers


@dataclass
class Target:
    """Where a case's object lives on the server."""

    kind: str
    name: str
    namespace: str | None
    version: str = VERSION
    """The version the applier writes at (the manifest's)."""

    @property
    def path(self) -> str:
        return object_path(self.kind, self.namespace, self.name, version=self.version)

    @property
    def resource(self) -> list[str]:
        """kubectl's name for the object (``widgets.example.com/NAME -n NS``)."""
        out = [f"{ADDRESSABLE[self.kind].crd_name}/{self.name}"]
        return out + (["-n", self.namespace] if self.namespace else [])


class Appliers:
    """Plays an applier's requests on one server."""

    def __init__(self, wire: Wire, kubectl: Callable[..., Any]) -> None:
        self.wire = wire
        self.kubectl = kubectl

    def play(self, applier: Applier, target: Target, manifest: Mapping[str, Any]) -> Replay:
        kind = applier.kind
        rep = Replay()
        if kind is ApplierKind.kubectl:
            argv = ["apply", "--server-side"]
            if applier.force:
                argv.append("--force-conflicts")
            if applier.manager != "kubectl":
                argv.append(f"--field-manager={applier.manager}")
            self._kubectl(rep, argv, manifest)
        elif kind is ApplierKind.kubectl_client_side:
            self._kubectl(rep, ["apply"], manifest)
        elif applier.manager == HELM_CONTROLLER:
            # whatever the tool calls it: Flux helm-controller drives the Helm SDK under its own name
            # and forces conflicts on server-side apply (internal/action/upgrade.go)
            self._helm(rep, applier, target, manifest, force=True)
        elif kind is ApplierKind.argocd:
            self._argocd(rep, applier, target, manifest)
        elif kind is ApplierKind.flux:
            self._flux(rep, applier, target, manifest)
        elif kind is ApplierKind.helm:
            self._helm(rep, applier, target, manifest)
        else:
            self._apply(rep, target, manifest, applier.manager, applier.force)
        rep.final = self.wire.get(target.path)
        return rep

    # --- building blocks ---

    def _kubectl(self, rep: Replay, argv: list[str], manifest: Mapping[str, Any]) -> None:
        proc = self.kubectl(*argv, "-f", "-", "-v=9", input=json.dumps(manifest), check=False)
        sent, stderr = parse_kubectl_v9(proc.stderr)
        rep.sent += sent
        rep.rc = proc.returncode
        rep.stderr = (rep.stderr + "\n" + stderr).strip()

    def _write(self, rep: Replay, method: str, verb: str, path: str, body: Any, content_type: str,
               manager: str | None, *, force: bool | None = None, dry_run: bool = False,
               extra: Sequence[tuple[str, str]] = (), user_agent: str | None = None) -> Response:
        query: list[tuple[str, str]] = []
        if dry_run:
            query.append(("dryRun", "All"))
        if manager is not None:
            query.append(("fieldManager", manager))
        if force is not None:
            query.append(("force", str(force).lower()))
        query += extra
        resp = self.wire.send(method, path, body, content_type, query, user_agent)
        rep.sent.append(Sent(verb, manager or "", resp.status, body, bool(force), dry_run,
                             _message(resp) if resp.status >= 300 else ""))
        return resp

    def _apply(self, rep: Replay, target: Target, manifest: Mapping[str, Any], manager: str, force: bool,
               *, dry_run: bool = False, extra: Sequence[tuple[str, str]] = ()) -> Response:
        return self._write(rep, "PATCH", "apply", target.path, manifest, APPLY_CT, manager, force=force,
                           dry_run=dry_run, extra=extra)

    # --- Argo CD ---

    def _argocd(self, rep: Replay, applier: Applier, target: Target, manifest: Mapping[str, Any]) -> None:
        def needs_migration(obj: Mapping[str, Any] | None) -> bool:
            # needsClientSideApplyMigration: an entry of that manager with operation Update
            return obj is not None and any(e.get("manager") == applier.csa_manager and e.get("operation") == "Update"
                                           for e in _entries(obj))

        live = self.wire.get(target.path)
        if applier.csa_migration and needs_migration(live):
            fresh = self.wire.get(target.path)  # performCSAUpgradeMigration re-reads the object
            ops = csaupgrade_patch(fresh, [applier.csa_manager], applier.manager) \
                if fresh is not None and needs_migration(fresh) else None
            if ops:
                resp = self._write(rep, "PATCH", "json-patch", target.path, ops, JSON_PATCH_CT, None,
                                   user_agent=ARGOCD_USER_AGENT)
                if resp.status >= 300:
                    return  # the sync fails
        self._kubectl(rep, ["apply", "--server-side", "--force-conflicts", f"--field-manager={applier.manager}"],
                      manifest)

    # --- Flux ---

    def _flux(self, rep: Replay, applier: Applier, target: Target, manifest: Mapping[str, Any]) -> None:
        name = applier.manager
        existing = self.wire.get(target.path)
        # shouldSkipApply: the exclusion selector, or "IfNotPresent" on an object that exists
        if any_in_metadata(manifest, FLUX_EXCLUSION_SELECTOR) or any_in_metadata(existing, FLUX_EXCLUSION_SELECTOR):
            rep.skipped = "excluded (ExclusionSelector)"
            return
        if existing is not None and any_in_metadata(manifest, FLUX_IF_NOT_PRESENT_SELECTOR):
            rep.skipped = "skipped (IfNotPresentSelector)"
            return
        dry = self._apply(rep, target, manifest, name, True, dry_run=True)
        if dry.status >= 300:
            return  # a dry-run error fails the apply (no immutable-field recreation here)
        patched = False
        if existing is not None:
            ops = flux_cleanup_patch(existing, manifest, name, applier.override_managers)
            if ops:
                resp = self._write(rep, "PATCH", "json-patch", target.path, ops, JSON_PATCH_CT, name)
                if resp.status >= 300:
                    return
                patched = True
        if not patched and existing is not None and not flux_drifted(existing, dry.body):
            return  # unchanged: not applied, so that the resourceVersion stays
        self._apply(rep, target, manifest, name, True)

    # --- Helm 4 ---

    def _helm(self, rep: Replay, applier: Applier, target: Target, manifest: Mapping[str, Any], *,
              force: bool | None = None) -> None:
        strict = [("fieldValidation", "Strict")]
        live = self.wire.get(target.path)
        if live is not None and applier.csa_migration:
            obj = self.wire.get(target.path)  # upgradeClientSideFieldManager: info.Get()
            ops = csaupgrade_patch(obj, [applier.manager], applier.manager) if obj is not None else None
            if ops:
                resp = self._write(rep, "PATCH", "json-patch", target.path, ops, JSON_PATCH_CT, applier.manager,
                                   extra=strict)
                if resp.status >= 300:
                    return
        self._apply(rep, target, manifest, applier.manager, applier.force if force is None else force, extra=strict)


# ----------------------------------------------------------------------------------------------
# comparison


def canonical(v: Any) -> Any:
    """A JSON value as Go prints it: whole floats as integers (``2.0`` is sent as ``2``)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return int(v)
    if isinstance(v, Mapping):
        return {k: canonical(x) for k, x in v.items()}
    if isinstance(v, list):
        return [canonical(x) for x in v]
    return v


def _text(v: Any) -> str:
    return json.dumps(canonical(v), sort_keys=True)


def _entry_view(raw: Any) -> Any:
    """A managedFields entry with its FieldsV1 as a path set (key strings may be written either way),
    without its time (whole seconds of the server's clock)."""
    if not isinstance(raw, Mapping):
        return raw
    out = {k: v for k, v in raw.items() if k not in ("fieldsV1", "time")}
    try:
        out["fieldsV1"] = oracle_paths(raw.get("fieldsV1")) if raw.get("fieldsV1") is not None else None
    except Exception as e:  # an entry the decoder refuses: compare its raw form
        out["fieldsV1"] = f"undecodable: {e}: {raw.get('fieldsV1')}"
    return out


def _ops_view(ops: Any) -> Any:
    if not isinstance(ops, list):
        return ops
    out = []
    for op in ops:
        if isinstance(op, Mapping) and op.get("path") == MANAGED_FIELDS and isinstance(op.get("value"), list):
            # the server sorts entries by time: an entry written in the same run may sort either way
            entries = [_entry_view(e) for e in op["value"]]
            out.append({**op, "value": sorted(entries, key=lambda e: json.dumps(
                {k: v for k, v in e.items() if k != "fieldsV1"} if isinstance(e, dict) else e, sort_keys=True))})
        elif isinstance(op, Mapping) and op.get("path") == "/metadata/resourceVersion" and "value" in op:
            # the guard carries the object's resourceVersion of the moment (etcd's revision: the
            # simulation does not count them)
            out.append({**op, "value": "<current>"})
        else:
            out.append(canonical(op))
    return out


def _entries_differ(want: list[Any], got: list[Any]) -> str:
    def key(e: Any) -> str:
        return json.dumps({k: v for k, v in e.items() if k != "fieldsV1"} if isinstance(e, dict) else e,
                          sort_keys=True)

    w, g = {key(e): e for e in want}, {key(e): e for e in got}
    out = []
    for k in sorted(set(w) | set(g)):
        if k not in g:
            out.append(f"entry {k} predicted only")
        elif k not in w:
            out.append(f"entry {k} sent only")
        elif w[k] != g[k]:
            a, b = w[k].get("fieldsV1"), g[k].get("fieldsV1")
            if isinstance(a, frozenset) and isinstance(b, frozenset):
                out.append(f"entry {k}: predicted only {sorted(a - b)!r}, sent only {sorted(b - a)!r}")
            else:
                out.append(f"entry {k}: predicted {a!r}, sent {b!r}")
    return "; ".join(out)


def _body_differs(r: Request, s: Sent) -> str | None:
    if r.verb == "json-patch":
        want, got = _ops_view(r.body), _ops_view(s.body)
        if want == got:
            return None
        if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
            for a, b in zip(want, got, strict=True):
                if a != b and isinstance(a, dict) and isinstance(b, dict) and isinstance(a.get("value"), list) \
                        and isinstance(b.get("value"), list) and a.get("path") == b.get("path") == MANAGED_FIELDS:
                    return f"JSON patch of managedFields: {_entries_differ(a['value'], b['value'])}"
        return f"JSON patch: predicted {want!r}, sent {got!r}"
    if _text(r.body) != _text(s.body):
        return f"body: predicted {_text(r.body)}, sent {_text(s.body)}"
    return None


def _describe(reqs: Iterable[Any]) -> str:
    return "[" + ", ".join(f"{r.verb} by {r.manager or '(none)'} -> {r.status}" for r in reqs) + "]"


def refused_by_client(r: Request) -> bool:
    """A request kubectl never sends: it refuses to compute the three-way patch (the model says so
    with a request that has no body)."""
    return r.verb == "merge-patch" and r.body is None


def disagreements(run: ApplierRun, rep: Replay) -> list[str]:
    """Where the prediction and the server differ (empty: they agree)."""
    out: list[str] = []
    predicted = [r for r in run.requests if not refused_by_client(r)]
    refused = [r for r in run.requests if refused_by_client(r)]
    # dry runs write nothing; a failed one is where Flux stops (the model records it as the apply)
    sent = [s for s in rep.sent if not s.dry_run or s.status >= 300]
    if [(r.verb, r.manager, r.status) for r in predicted] != [(s.verb, s.manager, s.status) for s in sent]:
        out.append(f"requests: predicted {_describe(predicted)}, sent {_describe(sent)}")
    else:
        for r, s in zip(predicted, sent, strict=True):
            if s.dry_run:
                continue
            d = _body_differs(r, s)
            if d:
                out.append(f"{r.verb} by {r.manager or '(none)'}: {d}")
            if r.status == 409 and s.verb == "apply":
                got_message = s.message or rep.stderr
                if r.message not in got_message:
                    out.append(f"409 message: predicted {r.message!r}, the server said {got_message[:600]!r}")
            elif r.status >= 400 and s.message and r.message != s.message:
                # a refusal's words are part of the prediction (the 422 of the CRD validator, the store)
                out.append(f"{r.status} message: predicted {r.message!r}, the server said {s.message[:600]!r}")
    if refused and not (rep.rc != 0 and not rep.sent):
        out.append(f"kubectl refuses to patch ({refused[0].message}) in the prediction, but it exited {rep.rc} "
                   f"after sending {_describe(rep.sent)}")
    if run.applier.kind in (ApplierKind.kubectl, ApplierKind.kubectl_client_side) and (rep.rc != 0) == run.ok:
        # kubectl fails exactly where the tool stops (its migration steps only warn)
        out.append(f"kubectl exited {rep.rc}; predicted {'success' if run.ok else 'failure'}")
    want_obj, got_obj = run.result, rep.final
    if (want_obj is None) != (got_obj is None):
        out.append(f"object: predicted {'none' if want_obj is None else 'one'}, the server has "
                   f"{'none' if got_obj is None else 'one'}")
    elif want_obj is not None and got_obj is not None:
        want_e, got_e = entries_of(want_obj), entries_of(got_obj)
        if set(want_e) != set(got_e):
            out.append(f"managers: predicted {sorted(want_e)}, server {sorted(got_e)}")
        for k in sorted(set(want_e) & set(got_e)):
            if want_e[k] != got_e[k]:
                out.append(f"fields of {k}: predicted {want_e[k]!r}, server {got_e[k]!r}")
        wv, gv = object_view(want_obj), object_view(got_obj)
        if _text(wv) != _text(gv):
            out.append(f"object: predicted {_text(wv)}, server {_text(gv)}")
    return out


def rules_for(crd: Mapping[str, Any], kind: str) -> ResourceRules:
    return case_rules({"schema": crd, "live": {"apiVersion": "example.com/v1", "kind": kind}})


def wait_past_newest_entry(wire: Wire, obj: Mapping[str, Any] | None, cap: int = 10) -> None:
    """With ``cap`` Update entries or more, a new Update manager makes the server fold the oldest
    into ``ancient-changes``, and the order of entries written in the same second is by name, not
    by time. Wait until the server's clock has left the second of the newest entry, so that a new
    entry is strictly newer, as the prediction assumes (a wait on the clock, about a second at most;
    it orders nothing else)."""
    entries = _entries(obj or {})
    if sum(1 for e in entries if e.get("operation") == "Update") < cap:
        return
    newest = max((parse_time(e.get("time")) for e in entries), default=0)
    deadline = time.monotonic() + 60  # a safety net only: the server's clock moves on in a second
    while wire.server_time() < newest + 1:
        if time.monotonic() > deadline:
            raise ReplayError(f"the server's clock did not pass {newest + 1} (the newest managedFields time)")
        time.sleep(0.05)
