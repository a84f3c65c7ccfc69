"""The replay cases: object states built on the server, appliers, and the manifests they apply.

A case is named ``KIND/STATE/APPLIER/MANIFEST`` (curated) or ``random/SEED``.

* States (curated): how the object got where it is, played with tests/engine/scenarios.py
  ``Player`` (plus real ``kubectl label`` / ``kubectl annotate``): created by client-side
  ``kubectl apply``, then scaled, edited (merge patches as ``kubectl-edit``), labelled and
  annotated, shared with another applier, upgraded by ``kubectl apply --server-side``; applied by
  kustomize-controller or argocd-controller; created and upgraded by Helm 3 (its ``helm`` Update
  entries); untracked after a managedFields reset; with a ``before-first-apply`` entry; absent.
* Manifests: the original one (what created the object), a changed one, one that drops fields;
  for Widget also an invalid one (what the CRD validator or SMD refuse) and two carrying Flux's
  markers (``kustomize.toolkit.fluxcd.io/ssa: IfNotPresent`` / ``Merge``).
* Random cases: a seeded history of tests/engine/scenarios.py ``generate`` (several managers,
  applies, updates, client-side and server-side kubectl, scale, status, resets…), then a seeded
  applier with the history's first manifest, the generator's final manifest or the first one with
  fields dropped.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from engine.scenarios import API_VERSION, APPLIERS, KINDS, NEW_APPLIERS, generate

from kubectl_fieldown.appliers import Applier, parse_applier_spec

FLUX_GROUP = "kustomize.toolkit.fluxcd.io"


@dataclass
class Case:
    id: str
    state: str
    """The object class (curated state name, or ``random``)."""
    applier_key: str
    manifest_key: str
    applier: Applier
    kind: str
    name: str
    namespace: str | None
    setup: list[dict[str, Any]]
    manifest: dict[str, Any]
    burst: bool = False
    played: list[dict[str, Any]] = field(default_factory=list)
    """The setup steps with the server's answers (filled in when played)."""


# ----------------------------------------------------------------------------------------------
# appliers

APPLIER_VARIANTS: dict[str, Applier] = {
    "kubectl": Applier.of("kubectl"),
    "kubectl-force": Applier.of("kubectl", force=True),
    "kubectl-as-deployer": Applier.of("kubectl", "deployer"),
    "kubectl-client-side": Applier.of("kubectl-client-side"),
    "argocd": Applier.of("argocd"),
    "argocd-no-migration": Applier.of("argocd", csa_migration=False),  # ClientSideApplyMigration=false
    "flux": Applier.of("flux"),
    "flux-override-bob": Applier.of("flux", override_managers=("bob",)),  # --override-manager=bob
    "helm": Applier.of("helm"),
    "helm-force": Applier.of("helm", force=True),
    "helm-no-upgrade": Applier.of("helm", csa_migration=False),  # a release that was server-side already
    # as --applier names them: a release Helm 4 applied server-side before, and a HelmRelease
    "helm-previous-server-side": parse_applier_spec("helm:previous=server-side"),
    "flux-helm-controller": parse_applier_spec("flux:helm-controller"),
    "ssa": Applier.of("ssa", "alice"),
    "ssa-force": Applier.of("ssa", "alice", force=True),
}


# ----------------------------------------------------------------------------------------------
# manifests


def _meta(name: str, namespace: str | None, **extra: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    md.update(extra)
    return md


def manifests(kind: str, name: str, namespace: str | None) -> dict[str, dict[str, Any]]:
    """The original, changed and dropping manifests of a kind. Values are chosen to meet the
    corners of the merge rules: nulls inside lists and list items of preserve-unknown-fields
    (kubectl's three-way patch compares them with json-patch's rules), whole floats, an integer
    beyond 2**53 in a set, list-map items added and removed, atomic lists of lists."""
    def obj(spec: dict[str, Any], **md: Any) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": kind, "metadata": _meta(name, namespace, **md), "spec": spec}

    if kind == "Widget":
        return {
            "original": obj({
                "replicas": 2, "color": "red", "labels": {"a": "x", "b": "y"}, "args": ["-v"],
                "finalizers": ["f1", "f2"],
                "containers": [{"name": "main", "image": "img:1", "ports": [{"containerPort": 80}]}],
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                "config": {"k1": "one", "objs": [{"a": None, "b": 1}], "k2": {"n": 1}},
            }, labels={"app": "web"}),
            "changed": obj({
                "replicas": 3, "color": "blue", "labels": {"a": "x", "c": "z"}, "args": ["-q"],
                "finalizers": ["f1", "f3"],
                "containers": [{"name": "main", "image": "img:2", "env": [{"name": "A", "value": "1"}],
                                "ports": [{"containerPort": 80}, {"containerPort": 443, "protocol": "TCP"}]},
                               {"name": "side", "image": "img:1"}],
                "strategy": {"type": "Recreate"},
                "config": {"k1": 1.5, "list": [1, None], "k2": {"n": 2, "m": {"deep": True}}, "flag": 2.0},
            }, labels={"app": "web", "tier": "fe"}, annotations={"note": "n2"}),
            "dropped": obj({
                "replicas": 2, "labels": {"a": "x"}, "containers": [{"name": "main", "image": "img:1"}],
                "config": {"k1": "one"},
            }),
            # what the CRD validator refuses: a null item of a typed list, a repeated list-map key
            # once protocol is defaulted (server-side apply meets SMD's duplicate check first)
            "invalid": obj({
                "replicas": 2, "args": ["-v", None],
                "containers": [{"name": "main", "ports": [{"containerPort": 80},
                                                          {"containerPort": 80, "protocol": "TCP"}]}],
            }),
            # what the CRD validator refuses of a client-side apply: a value of another type, a set
            # item of another type
            "wrong-type": obj({"replicas": "two", "color": "red"}),
            "wrong-set-item": obj({"replicas": 2, "finalizers": ["f1", 2]}),
            "if-not-present": obj({"replicas": 2, "color": "teal"}, annotations={f"{FLUX_GROUP}/ssa": "IfNotPresent"}),
            "merge-annotated": obj({"replicas": 2, "color": "teal"}, annotations={f"{FLUX_GROUP}/ssa": "Merge"}),
        }
    if kind == "Gadget":
        return {
            "original": obj({
                "tags": ["a", "b"], "items": [{"name": "x", "value": 1, "sub": {"a": "s"}}],
                "meta": {"owner": "o1", "nested": {"x": "s", "y": 1}}, "mode": "fast",
                "params": {"p1": {"v": "s"}}, "size": 1, "matrix": [[1], [2]],
            }),
            "changed": obj({
                "tags": ["b"], "items": [{"name": "y", "value": 2}], "meta": {"owner": "o2", "nested": {"x": "t"}},
                "mode": "slow", "params": {"p1": {"v": "t", "w": 2}, "p2": {"v": "s"}}, "size": 2,
                "matrix": [[1, 2]],
            }, labels={"team": "y"}),
            "dropped": obj({"tags": ["a", "b"], "meta": {"owner": "o1"}, "size": 1}),
        }
    return {
        "original": obj({
            "data": {"x": 1, "a.b": 2}, "level": 1, "owner": "ops",
            "rules": [{"id": 1, "action": "allow"}, {"id": 2, "action": "deny", "weight": 5}], "tags": [1, 2],
        }),
        "changed": obj({
            "data": {"x": 2, "y": 3}, "level": 2, "owner": "dev", "rules": [{"id": 2, "action": "allow"}, {"id": 3}],
            "tags": [2, 3, 2**53 + 1],
        }),
        "dropped": obj({"level": 1, "rules": [{"id": 1}]}),
        "wrong-set-item": obj({"level": 1, "tags": [1, "two"]}),
    }


_EDITS = {
    "Widget": {"spec": {"color": "green", "labels": {"e": "1"}}},
    "Gadget": {"spec": {"mode": "slow", "params": {"p9": {"v": "t"}}}},
    "Gizmo": {"spec": {"owner": "dev", "data": {"z": 9}}},
}
_SHARED = {  # another applier sets some of the original's values (co-owned) and one of its own
    "Widget": {"spec": {"color": "red", "replicas": 2, "labels": {"s": "1"}}},
    "Gadget": {"spec": {"mode": "fast", "size": 1}},
    "Gizmo": {"spec": {"owner": "ops", "level": 1, "data": {"s": 1}}},
}


def _body(kind: str, name: str, namespace: str | None, part: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": _meta(name, namespace), **copy.deepcopy(part)}


def states(kind: str, name: str, namespace: str | None, original: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Setup steps (tests/engine/scenarios.py step format, plus ``kubectl-label`` and
    ``kubectl-annotate`` with ``args``) of each curated state."""
    edit = _EDITS[kind]
    plain = copy.deepcopy(original)
    reset_then_edit = [
        {"op": "create", "manager": "dave", "body": plain},
        {"op": "merge-patch", "manager": "dave", "body": {"metadata": {"managedFields": [{}]}}},
        {"op": "merge-patch", "manager": "dave", "body": copy.deepcopy(edit)},
    ]
    out: dict[str, list[dict[str, Any]]] = {
        "absent": [],
        "csa": [{"op": "kubectl-apply", "manifest": original}],
        "csa-edited": [{"op": "kubectl-apply", "manifest": original},
                       {"op": "merge-patch", "manager": "kubectl-edit", "body": copy.deepcopy(edit)}],
        "csa-labelled": [{"op": "kubectl-apply", "manifest": original},
                         {"op": "kubectl-label", "args": ["team=y", "--overwrite"]},
                         {"op": "kubectl-annotate", "args": ["note=n1", "--overwrite"]}],
        # kubectl get -o json, then kubectl replace -f of that file: kubectl rewrites the annotation it
        # finds from the object it sends (resourceVersion, uid, creationTimestamp included)
        "csa-replaced": [{"op": "kubectl-apply", "manifest": original}, {"op": "kubectl-replace-saved"}],
        "csa-shared": [{"op": "kubectl-apply", "manifest": original},
                       {"op": "apply", "manager": "bob", "force": False,
                        "body": _body(kind, name, namespace, _SHARED[kind])}],
        "kubectl-ssa": [{"op": "kubectl-apply", "manifest": original},
                        {"op": "kubectl-ssa", "manifest": original, "forceConflicts": True}],
        "flux": [{"op": "apply", "manager": "kustomize-controller", "force": True, "body": original}],
        "argocd": [{"op": "apply", "manager": "argocd-controller", "force": True, "body": original}],
        # Helm 3: a create, then its three-way merge patches, all as Update entries of "helm"
        "helm3": [{"op": "create", "manager": "helm", "body": plain},
                  {"op": "merge-patch", "manager": "helm", "body": copy.deepcopy(edit)}],
        "reset": reset_then_edit,
        "before-first-apply": [*copy.deepcopy(reset_then_edit),
                               {"op": "apply", "manager": "bob", "force": True,
                                "body": _body(kind, name, namespace, _SHARED[kind])}],
        # Flux's own markers: cleanup skipped (labels count, case-insensitively), apply skipped
        "flux-merge-label": [{"op": "kubectl-apply", "manifest": original},
                             {"op": "kubectl-label", "args": [f"{FLUX_GROUP}/ssa=merge", "--overwrite"]}],
        "flux-ignore": [{"op": "apply", "manager": "kustomize-controller", "force": True, "body": original},
                        {"op": "kubectl-annotate", "args": [f"{FLUX_GROUP}/ssa=Ignore", "--overwrite"]}],
    }
    if KINDS[kind].scale_subresource:
        out["csa-scaled"] = [{"op": "kubectl-apply", "manifest": original}, {"op": "kubectl-scale", "replicas": 5}]
        out["hpa-scaled"] = [{"op": "apply", "manager": "alice", "force": False, "body": original},
                             {"op": "put", "manager": "hpa-controller", "subresource": "scale",
                              "mutation": [["set", ["spec", "replicas"], 4]]}]
    return out


_FLUX_ONLY_STATES = ("flux-merge-label", "flux-ignore")
_SMALL_STATES = ("absent", "csa", "csa-edited", "kubectl-ssa", "helm3", "before-first-apply")
_INVALID_STATES = ("absent", "csa", "csa-edited", "kubectl-ssa", "flux", "helm3")
_WRONG_TYPE_STATES = ("absent", "csa", "csa-edited", "kubectl-ssa")
_MANIFESTS = ("original", "changed", "dropped")
_OPTION_VARIANTS = ("argocd-no-migration", "flux-override-bob", "helm-no-upgrade", "helm-previous-server-side")


def curated_ids(core: bool = False) -> list[str]:
    """Every curated case id, in a stable order. With ``core``, the default selection: each state
    with each applier variant once, the manifest taking turns (so every state meets every manifest),
    plus the invalid manifest and Flux's markers."""
    ids = []
    appliers = tuple(APPLIER_VARIANTS)
    # the option variants (no migration, --override-manager) meet Gadget and Gizmo and the invalid
    # manifest only in the full selection
    base = tuple(a for a in appliers if a not in _OPTION_VARIANTS) if core else appliers
    turn = 0

    def manifests_for() -> tuple[str, ...]:
        nonlocal turn
        turn += 1
        return (_MANIFESTS[turn % 3],) if core else _MANIFESTS

    for state in states("Widget", "x", "ns", {}):
        if state in _FLUX_ONLY_STATES:
            ids += [f"widget/{state}/{a}/{m}" for a in ("flux", "kubectl-client-side") for m in manifests_for()]
            continue
        ids += [f"widget/{state}/{a}/{m}" for a in appliers for m in manifests_for()]
        if state in _INVALID_STATES:
            ids += [f"widget/{state}/{a}/invalid" for a in base]
    ids += [f"widget/{state}/flux/{m}" for state in ("absent", "csa") for m in ("if-not-present", "merge-annotated")]
    ids += [f"widget/{state}/kubectl-client-side/{m}" for state in _WRONG_TYPE_STATES
            for m in ("wrong-type", "wrong-set-item")]
    ids += [f"gizmo/{state}/kubectl-client-side/wrong-set-item" for state in _WRONG_TYPE_STATES]
    for kind in ("gadget", "gizmo"):
        for state in _SMALL_STATES:
            ids += [f"{kind}/{state}/{a}/{m}" for a in base for m in manifests_for()]
    return ids


def core_ids() -> list[str]:
    """The curated cases run by default."""
    return curated_ids(core=True)


def curated_case(case_id: str, namespace: str, suffix: str, index: int) -> Case:
    kind_l, state, applier_key, manifest_key = case_id.split("/")
    kind = kind_l.capitalize()
    info = KINDS[kind]
    ns = namespace if info.namespaced else None
    name = f"{kind_l}-{index}{suffix}"
    ms = manifests(kind, name, ns)
    setup = states(kind, name, ns, ms["original"])[state]
    return Case(case_id, state, applier_key, manifest_key, APPLIER_VARIANTS[applier_key], kind, name, ns,
                copy.deepcopy(setup), copy.deepcopy(ms[manifest_key]))


# ----------------------------------------------------------------------------------------------
# random cases


def _random_applier(r: random.Random) -> tuple[str, Applier]:
    key = r.choices(["kubectl", "kubectl-client-side", "argocd", "flux", "helm", "ssa"],
                    weights=[4, 3, 2, 2, 2, 2])[0]
    if key == "kubectl":
        force = r.random() < 0.3
        manager = "kubectl" if r.random() < 0.8 else r.choice(["deployer", "kubectl-client-side-apply", "alice"])
        return ("kubectl" + ("-force" if force else "") + ("" if manager == "kubectl" else f"-as-{manager}"),
                Applier.of("kubectl", manager, force=force))
    if key == "kubectl-client-side":
        return key, Applier.of(key)
    if key == "argocd":
        # the Application's migration annotation may name another manager, or the migration be off
        csa = r.choices(["kubectl-client-side-apply", "helm", "dave", "kubectl-edit"], weights=[6, 1, 1, 1])[0]
        migration = r.random() < 0.8
        return (f"argocd{'' if migration else '-no-migration'}",
                Applier.of("argocd", csa_manager=csa, csa_migration=migration))
    if key == "flux":
        overrides = tuple(r.sample([*APPLIERS, "helm", "dave"], r.choice([0, 0, 1, 2])))
        return f"flux{'-override' if overrides else ''}", Applier.of("flux", override_managers=overrides)
    if key == "helm":
        force = r.random() < 0.5
        upgrade = r.random() < 0.8
        return ("helm" + ("-force" if force else "") + ("" if upgrade else "-no-upgrade"),
                Applier.of("helm", force=force, csa_migration=upgrade))
    force = r.random() < 0.3
    manager = r.choice([*APPLIERS, *NEW_APPLIERS])
    return f"ssa{'-force' if force else ''}", Applier.of("ssa", manager, force=force)


def _drop_some(r: random.Random, manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest without one or two of its spec fields or metadata labels."""
    out = copy.deepcopy(manifest)
    spec = out.get("spec")
    for _ in range(r.choice([1, 2])):
        if isinstance(spec, dict) and spec and r.random() < 0.8:
            del spec[r.choice(sorted(spec))]
        else:
            (out.get("metadata") or {}).pop("labels", None)
    return out


def _first_manifest(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not steps:
        return None
    first = steps[0]
    m = first.get("body") if first["op"] in ("create", "apply") else first.get("manifest")
    return copy.deepcopy(m) if isinstance(m, dict) else None


def random_case(seed: int, namespace: str, suffix: str) -> Case:
    sc = generate(seed, namespace, name_suffix=suffix)
    r = random.Random(seed * 7919 + 17)
    applier_key, applier = _random_applier(r)
    first = _first_manifest(sc.steps) or copy.deepcopy(sc.apply["manifest"])
    manifest_key = r.choices(["original", "final", "dropped"], weights=[4, 4, 2])[0]
    manifest = {"original": first, "final": copy.deepcopy(sc.apply["manifest"]),
                "dropped": _drop_some(r, first)}[manifest_key]
    for m in (manifest,):  # a manifest names the object as the history did
        md = m.setdefault("metadata", {})
        md["name"] = sc.name
        if sc.namespace is not None:
            md["namespace"] = sc.namespace
        else:
            md.pop("namespace", None)
    return Case(f"random/{seed}", "random", applier_key, manifest_key, applier, sc.kind, sc.name, sc.namespace,
                sc.steps, manifest, sc.burst)
