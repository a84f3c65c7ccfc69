"""Random multi-manager scenarios played on a real API server (for test_differential.py).

A scenario is generated from a seed alone (``random.Random(seed)``): a kind (Widget, Gadget,
Gizmo: the CRDs of tests/conformance), how the object is created, 2–8 further steps by several
managers, and a final server-side apply. :func:`run_scenario` plays it on a server over raw HTTP
(kubectl only for the kubectl-* steps), then, exactly as the conformance generator did, GETs the
object and asks the server for the final apply twice: forced with ``dryRun=All`` first, then for
real without force. The result is a case in the format of tests/conformance/README.md, which
:func:`case_differences` compares with the engine's predictions (tests/engine/conformance_cases.py).

Values come from small pools, so that shared ownership (equal values) and conflicts both happen
often. The generator does not look at server answers: steps that fail are recorded and the
scenario goes on.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from .conformance_cases import Outcome, differences, expected, predict

GROUP = "example.com"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

APPLIERS = ("alice", "bob", "carol", "kubectl")
UPDATERS = ("dave", "helm", "kube-controller-manager")
META_UPDATERS = ("kubectl-label", "kubectl-annotate")  # what kubectl label/annotate write (merge patches)
NEW_APPLIERS = ("erin", "frank", "argocd-controller", "flux")
# names that also appear as Update (or status Apply) entries, or that the server itself writes
ODD_APPLIERS = ("kubectl-client-side-apply", "kubectl-create", "status-applier", "hpa-controller",
                "before-first-apply", "ancient-changes", "updater-03")

APPLY_CT = "application/apply-patch+yaml"
MERGE_CT = "application/merge-patch+json"
JSON_PATCH_CT = "application/json-patch+json"
JSON_CT = "application/json"


@dataclass(frozen=True)
class KindInfo:
    kind: str
    plural: str
    namespaced: bool
    status_subresource: bool
    scale_subresource: bool
    has_status_field: bool

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"


KINDS: dict[str, KindInfo] = {
    "Widget": KindInfo("Widget", "widgets", True, True, True, True),
    "Gadget": KindInfo("Gadget", "gadgets", True, False, False, True),
    "Gizmo": KindInfo("Gizmo", "gizmos", False, False, False, False),
}


# ----------------------------------------------------------------------------------------------
# generation


@dataclass
class Scenario:
    seed: int
    kind: str
    name: str
    namespace: str | None
    steps: list[dict[str, Any]]
    """Requests only (op, manager, body/manifest/mutation, ...); outcomes are added when played."""
    apply: dict[str, Any]
    """The final apply: {"manager", "manifest", "force": False}."""
    burst: bool = False


def _maybe(r: random.Random, p: float) -> bool:
    return r.random() < p


class _Gen:
    """Value pools and random configurations for one kind."""

    def __init__(self, r: random.Random, kind: str, name: str, namespace: str | None) -> None:
        self.r = r
        self.kind = kind
        self.info = KINDS[kind]
        self.name = name
        self.namespace = namespace

    # --- objects ---

    def metadata(self, extra: bool = True) -> dict[str, Any]:
        md: dict[str, Any] = {"name": self.name}
        if self.namespace is not None:
            md["namespace"] = self.namespace
        if extra:
            r = self.r
            if _maybe(r, 0.15):
                md["labels"] = {"team": r.choice(["x", "y"])}
                if _maybe(r, 0.3):
                    md["labels"]["app.kubernetes.io/name"] = r.choice(["web", ""])
            elif _maybe(r, 0.03):
                md["labels"] = {}
            if _maybe(r, 0.06):
                md["finalizers"] = r.sample(["example.com/a", "example.com/b"], r.choice([0, 1, 2]))
            if _maybe(r, 0.12):
                md["annotations"] = {"note": r.choice(["n1", "n2", "<b>&amp;"])}
        return md

    def manifest(self, spec: dict[str, Any] | None, extra_meta: bool = True) -> dict[str, Any]:
        obj: dict[str, Any] = {"apiVersion": API_VERSION, "kind": self.kind, "metadata": self.metadata(extra_meta)}
        if spec is not None:
            obj["spec"] = spec
        return obj

    def spec(self, *, valid: bool = True, min_fields: int = 1) -> dict[str, Any]:
        """A random partial spec. ``valid=False`` allows rare values the server refuses
        (explicit nulls in typed fields, duplicate list keys)."""
        fields = getattr(self, f"_fields_{self.kind.lower()}")()
        r = self.r
        names = list(fields)
        if _maybe(r, 0.03):
            return {}
        k = min(len(names), max(min_fields, r.choice([1, 1, 2, 2, 3, 3, 4, 5])))
        chosen = r.sample(names, k)
        spec = {n: fields[n]() for n in chosen}
        if not valid and _maybe(r, 0.06):
            self._invalidate(spec)
        return spec

    def field_value(self, name: str) -> Any:
        fields = getattr(self, f"_fields_{self.kind.lower()}")()
        return fields[name]()

    def field_names(self) -> list[str]:
        return list(getattr(self, f"_fields_{self.kind.lower()}")())

    def _invalidate(self, spec: dict[str, Any]) -> None:
        r = self.r
        if self.kind == "Widget":
            what = r.choice(["null-color", "null-label", "dup-ports"])
            if what == "null-color":
                spec["color"] = None
            elif what == "null-label":
                spec["labels"] = {"a": None}
            else:
                spec["containers"] = [{"name": "main", "ports": [{"containerPort": 80},
                                                                  {"containerPort": 80, "protocol": "TCP"}]}]
        elif self.kind == "Gadget":
            spec["mode"] = None
        elif _maybe(r, 0.5):
            spec["tags"] = [1, 1]
        else:
            spec["owner"] = None

    # --- Widget ---

    def _fields_widget(self) -> dict[str, Callable[[], Any]]:
        r = self.r
        return {
            "replicas": lambda: r.choice([1, 2, 3, 0]),
            "color": lambda: r.choice(["red", "blue", "red", "blue", "", "r&b<1>"]),
            "selector": lambda: r.choice([
                {"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}},
                {"matchLabels": {"app": "a", "tier": "x"}}, {},
            ]),
            "labels": lambda: {k: r.choice(["x", "y", "x", "y", ""])
                               for k in r.sample(["a", "b", "c", "d.e/f", r.choice(ODD_KEYS)],
                                                 r.choice([0, 1, 1, 2, 3]))},
            "args": lambda: r.choice([["-v"], ["-q"], ["-v", "-q"], []]),
            "finalizers": lambda: r.sample(["f1", "f2", "f3"], r.choice([0, 1, 2, 2, 3])),
            "containers": self._w_containers,
            "strategy": self._w_strategy,
            "config": self._w_config,
        }

    def _w_containers(self) -> list[dict[str, Any]]:
        r = self.r
        return [self._w_container(n) for n in r.sample(["main", "side"], r.choice([1, 1, 2]))]

    def _w_container(self, name: str) -> dict[str, Any]:
        r = self.r
        c: dict[str, Any] = {"name": name}
        if _maybe(r, 0.6):
            c["image"] = r.choice(["img:1", "img:2"])
        if _maybe(r, 0.35):
            env = []
            for n in r.sample(["A", "B", "A", "B", r.choice(ODD_KEYS)], r.choice([0, 1, 1, 2])):
                if any(e["name"] == n for e in env):
                    continue
                e: dict[str, Any] = {"name": n}
                if _maybe(r, 0.85):
                    e["value"] = r.choice(["1", "2"])
                env.append(e)
            c["env"] = env
        if _maybe(r, 0.35):
            ports = []
            for port, proto in r.sample([(80, "TCP"), (80, "UDP"), (443, "TCP")], r.choice([1, 1, 2])):
                p: dict[str, Any] = {"containerPort": port}
                if proto != "TCP" or _maybe(r, 0.5):
                    p["protocol"] = proto
                if _maybe(r, 0.4):
                    p["name"] = r.choice(["http", "web"])
                ports.append(p)
            c["ports"] = ports
        return c

    def _w_strategy(self) -> dict[str, Any]:
        r = self.r
        s: dict[str, Any] = {}
        if _maybe(r, 0.7):
            s["type"] = r.choice(["RollingUpdate", "Recreate"])
        if _maybe(r, 0.5):
            ru: dict[str, Any] = {}
            if _maybe(r, 0.7):
                ru["maxSurge"] = r.choice([1, "25%"])
            if _maybe(r, 0.5):
                ru["maxUnavailable"] = r.choice([0, "50%"])
            s["rollingUpdate"] = ru
        return s

    def _w_config(self) -> dict[str, Any]:
        r = self.r
        pool: dict[str, Callable[[], Any]] = {
            "k1": lambda: r.choice(["one", 1, "1", 1.5, 2.0, 0]),
            "k2": lambda: r.choice([{"n": 1}, {"n": 2}, {"n": 1, "m": {"deep": True}}, {}, {"m": {"deep": 1}}]),
            "list": lambda: r.choice([[1, 2], [{"a": 1}], [1], [True], []]),
            "flag": lambda: r.choice([False, True, 1, 0, None]),
        }
        keys = r.sample(list(pool), r.choice([0, 1, 1, 2, 3]))
        cfg = {k: pool[k]() for k in keys}
        if _maybe(r, 0.05):
            cfg["k3"] = None  # explicit null inside preserve-unknown-fields: stored and owned
        return cfg

    # --- Gadget ---

    def _fields_gadget(self) -> dict[str, Callable[[], Any]]:
        r = self.r

        def item() -> dict[str, Any]:
            it: dict[str, Any] = {"name": r.choice(["x", "y"])}
            if _maybe(r, 0.7):
                it["value"] = r.choice([1, 2])
            if _maybe(r, 0.3):
                it["sub"] = {r.choice(["a", "b"]): r.choice(["s", "t"])}
            return it

        def meta() -> dict[str, Any]:
            m: dict[str, Any] = {}
            if _maybe(r, 0.6):
                m["owner"] = r.choice(["o1", "o2"])
            if _maybe(r, 0.6):
                nested: dict[str, Any] = {}
                if _maybe(r, 0.6):
                    nested["x"] = r.choice(["s", "t"])
                if _maybe(r, 0.5):
                    nested["y"] = r.choice([1, 2])
                m["nested"] = nested
            return m

        def params() -> dict[str, Any]:
            out = {}
            for k in r.sample(["p1", "p2"], r.choice([0, 1, 1, 2])):
                p: dict[str, Any] = {}
                if _maybe(r, 0.8):
                    p["v"] = r.choice(["s", "t"])
                if _maybe(r, 0.4):
                    p["w"] = r.choice([1, 2])
                out[k] = p
            return out

        return {
            "tags": lambda: r.sample(["a", "b"], r.choice([0, 1, 1, 2])),
            "items": lambda: [item() for _ in range(r.choice([0, 1, 1, 2]))],
            "meta": meta,
            "mode": lambda: r.choice(["fast", "slow"]),
            "params": params,
            "size": lambda: r.choice([1, 2, 0]),
            "matrix": lambda: r.choice([[[1], [2]], [[1, 2]], [], [[1]]]),
        }

    # --- Gizmo ---

    def _fields_gizmo(self) -> dict[str, Callable[[], Any]]:
        r = self.r

        def rules() -> list[dict[str, Any]]:
            out = []
            for i in r.sample([1, 2, 3, 0, r.choice(ODD_INTS)], r.choice([1, 1, 2])):
                rule: dict[str, Any] = {"id": i}
                if _maybe(r, 0.8):
                    rule["action"] = r.choice(["allow", "deny", ""])
                if _maybe(r, 0.4):
                    rule["weight"] = r.choice([5, 10, 0])
                out.append(rule)
            return out

        return {
            "data": lambda: {k: r.choice([1, 2, 0]) for k in r.sample(["x", "y", "a.b"], r.choice([0, 1, 2]))},
            "level": lambda: r.choice([1, 2, 0]),
            "owner": lambda: r.choice(["ops", "dev"]),
            "rules": rules,
            "tags": lambda: r.sample([1, 2, 3, 0, r.choice(ODD_INTS)], r.choice([0, 1, 2, 3])),
        }

    # --- variations ---

    def variant(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The same manager's earlier spec with some fields dropped, changed or added."""
        r = self.r
        out = copy.deepcopy(spec)
        for _ in range(r.choice([1, 1, 2, 3])):
            what = r.random()
            if what < 0.45:
                _drop_somewhere(r, out)
            elif what < 0.75 or not out:
                name = r.choice(self.field_names())
                out[name] = self.field_value(name)
            else:
                name = r.choice(sorted(out))
                del out[name]
        return out

    def status(self) -> dict[str, Any]:
        r = self.r
        if self.kind == "Gadget":
            return {"note": r.choice(["ok", "bad"])}
        st: dict[str, Any] = {}
        if _maybe(r, 0.7):
            st["phase"] = r.choice(["Ready", "Pending"])
        if not st or _maybe(r, 0.6):
            st["replicas"] = r.choice([1, 2, 3])
        return st

    def burst_key(self, i: int) -> dict[str, Any]:
        """A merge patch owning one key of its own (updater-NN)."""
        if self.kind == "Widget":
            return {"spec": {"labels": {f"u{i:02d}": "t"}}}
        if self.kind == "Gadget":
            return {"spec": {"params": {f"u{i:02d}": {"v": "t"}}}}
        return {"spec": {"data": {f"u{i:02d}": i}}}


_KEY_FIELDS = {"name", "containerPort", "id"}
# rare keys and numbers that stress escaping in path strings and FieldsV1
ODD_KEYS = ("", "ñ", 'q"k', "x\ty", "a.b", "<&>", "k:{}")
# 2**53 + 1: beyond float64's exact integers, so it meets the float64 the server decodes from
# FieldsV1 (tests/conformance/regressions/diff-807693.json and diff-700276.json)
ODD_INTS = (-1, 1000000, 123456789012, 2**53 + 1)


def _drop_somewhere(r: random.Random, spec: dict[str, Any]) -> None:
    """Delete one random member (map key, struct field or list item) anywhere in ``spec``;
    never a list-map key field."""
    candidates: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k not in _KEY_FIELDS:
                    candidates.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                candidates.append((node, i))
                walk(v)

    walk(spec)
    if not candidates:
        return
    parent, key = r.choice(candidates)
    del parent[key]


def generate(seed: int, namespace: str, name_suffix: str = "") -> Scenario:
    """The scenario of ``seed`` (deterministic). ``namespace`` is used by namespaced kinds;
    cluster-scoped names get ``name_suffix`` so that runs do not collide."""
    r = random.Random(seed)
    kind = r.choices(["Widget", "Gadget", "Gizmo"], weights=[6, 2, 2])[0]
    info = KINDS[kind]
    name = f"{kind.lower()}-{seed}" + ("" if info.namespaced else name_suffix)
    g = _Gen(r, kind, name, namespace if info.namespaced else None)
    steps: list[dict[str, Any]] = []
    applied: dict[str, dict[str, Any]] = {}  # manager -> last spec it applied (main resource)
    csa_manifest: dict[str, Any] | None = None
    burst = False

    # creation
    how = r.choices(["apply", "create", "kubectl-apply", "kubectl-create"], weights=[40, 25, 25, 10])[0]
    spec = g.spec()
    if how == "apply":
        m = r.choice(APPLIERS)
        steps.append({"op": "apply", "manager": m, "force": False, "body": g.manifest(spec)})
        applied[m] = spec
    elif how == "create":
        steps.append({"op": "create", "manager": r.choice(UPDATERS), "body": g.manifest(spec)})
    elif how == "kubectl-apply":
        csa_manifest = g.manifest(spec)
        steps.append({"op": "kubectl-apply", "manifest": csa_manifest})
    else:
        steps.append({"op": "kubectl-create", "manifest": g.manifest(spec), "saveConfig": _maybe(r, 0.3)})
        if steps[-1]["saveConfig"]:
            csa_manifest = steps[-1]["manifest"]

    ops = ["apply", "merge-patch", "json-patch", "put", "reset", "kubectl-ssa", "kubectl-apply", "burst", "meta",
           "la-tamper"]
    weights = [30, 14, 6, 7, 4, 5, 4, 2, 3, 1]
    if info.status_subresource or info.has_status_field:
        ops.append("status")
        weights.append(6)
    if info.scale_subresource:
        # (no SSA on /scale: for custom resources this server answers 500 "request to convert CR to
        # an invalid group/version: autoscaling/v1", or 409 when there are conflicts)
        ops += ["kubectl-scale", "scale-put"]
        weights += [3, 3]

    for _ in range(r.randint(2, 8)):
        op = r.choices(ops, weights=weights)[0]
        if op == "apply":
            m = r.choice(APPLIERS)
            if m in applied and _maybe(r, 0.45):
                spec = g.variant(applied[m])
            else:
                spec = g.spec(valid=False)
            force = _maybe(r, 0.2)
            steps.append({"op": "apply", "manager": m, "force": force, "body": g.manifest(spec)})
            applied[m] = spec
        elif op == "merge-patch":
            steps.append({"op": "merge-patch", "manager": r.choice(UPDATERS), "body": _merge_patch(g)})
        elif op == "json-patch":
            steps.append({"op": "json-patch", "manager": r.choice(UPDATERS), "body": _json_patch(g)})
        elif op == "put":
            steps.append({"op": "put", "manager": r.choice(UPDATERS), "mutation": _mutation(g)})
        elif op == "reset":
            mf: list[dict[str, Any]] = [{}] if _maybe(r, 0.85) else []
            how = r.random()
            if how < 0.6:
                steps.append({"op": "merge-patch", "manager": r.choice(UPDATERS),
                              "body": {"metadata": {"managedFields": mf}}})
            elif how < 0.75:
                steps.append({"op": "json-patch", "manager": r.choice(UPDATERS),
                              "body": [{"op": "replace", "path": "/metadata/managedFields", "value": mf}]})
            elif how < 0.85:
                steps.append({"op": "put", "manager": r.choice(UPDATERS),
                              "mutation": [["set", ["metadata", "managedFields"], mf]]})
            else:
                # a client rewriting ownership: drop one entry (the PUT's managedFields become the baseline)
                steps.append({"op": "put", "manager": r.choice(UPDATERS),
                              "mutation": [["del", ["metadata", "managedFields", r.choice([0, 1, -1])]]]})
        elif op == "kubectl-ssa":
            if "kubectl" in applied and _maybe(r, 0.4):
                spec = g.variant(applied["kubectl"])
            else:
                spec = g.spec()
            steps.append({"op": "kubectl-ssa", "manifest": g.manifest(spec), "forceConflicts": _maybe(r, 0.3)})
            applied["kubectl"] = spec
        elif op == "kubectl-apply":
            if csa_manifest is not None and _maybe(r, 0.5):
                spec = g.variant(csa_manifest.get("spec") or {})
            else:
                spec = g.spec()
            csa_manifest = g.manifest(spec)
            steps.append({"op": "kubectl-apply", "manifest": csa_manifest})
        elif op == "burst":
            burst = True
            base = r.randint(0, 2)
            for i in range(base, base + r.randint(11, 13)):
                steps.append({"op": "merge-patch", "manager": f"updater-{i:02d}", "body": g.burst_key(i)})
        elif op == "status":
            steps.append(_status_step(g))
        elif op == "kubectl-scale":
            steps.append({"op": "kubectl-scale", "replicas": r.choice([1, 2, 3, 4])})
        elif op == "meta":
            # kubectl label / kubectl annotate (--overwrite): merge patches of metadata only
            if _maybe(r, 0.5):
                body = {"metadata": {"labels": {r.choice(["team", "tier"]): r.choice(["x", "z", None])}}}
                steps.append({"op": "merge-patch", "manager": "kubectl-label", "body": body})
            else:
                body = {"metadata": {"annotations": {r.choice(["note", "owner"]): r.choice(["n1", "n3", None])}}}
                steps.append({"op": "merge-patch", "manager": "kubectl-annotate", "body": body})
        elif op == "la-tamper":
            # someone edits the last-applied annotation: unparsable, another apiVersion, or a config
            # that was never applied (the kubectl waiver must cope with each)
            la = r.choice([
                "{",
                json.dumps({"apiVersion": f"{GROUP}/v2", "kind": kind, "metadata": g.metadata(False),
                            "spec": g.spec()}),
                json.dumps(g.manifest(g.spec(), False), sort_keys=True, separators=(",", ":")) + "\n",
                json.dumps(csa_manifest, sort_keys=True, separators=(",", ":")) + "\n" if csa_manifest else "",
            ])
            steps.append({"op": "merge-patch", "manager": r.choice(UPDATERS),
                          "body": {"metadata": {"annotations": {LAST_APPLIED: la}}}})
        elif op == "scale-put":
            steps.append({"op": "put", "manager": "hpa-controller", "subresource": "scale",
                          "mutation": [["set", ["spec", "replicas"], r.choice([2, 3, 4, 5])]]})

    # the final apply
    choice = r.random()
    spec_f: dict[str, Any] | None
    if choice < 0.45 and applied:
        manager = r.choice(sorted(applied))
        x = r.random()
        spec_f = g.variant(applied[manager]) if x < 0.6 else (
            copy.deepcopy(applied[manager]) if x < 0.75 else g.spec(valid=False))
    elif choice < 0.6 and csa_manifest is not None:
        manager = "kubectl"
        spec_f = copy.deepcopy(csa_manifest.get("spec"))
        if _maybe(r, 0.4):
            spec_f = g.variant(spec_f or {})
    elif choice < 0.72:
        manager = r.choice(UPDATERS)
        spec_f = g.spec(valid=False)
    elif choice < 0.85:
        manager = r.choice(NEW_APPLIERS) if _maybe(r, 0.6) else r.choice(ODD_APPLIERS)
        spec_f = g.spec(valid=False)
    else:
        manager = r.choice(APPLIERS)
        spec_f = g.spec(valid=False)
    if _maybe(r, 0.03):
        spec_f = None  # an apply with no spec at all
    manifest = g.manifest(spec_f)
    if info.has_status_field and _maybe(r, 0.06):
        manifest["status"] = g.status()
        if info.status_subresource and _maybe(r, 0.4):
            manifest["status"]["phase"] = None  # reset by the main endpoint before validation: no 422
    if manager == "kubectl" and csa_manifest is not None and spec_f == csa_manifest.get("spec") and _maybe(r, 0.7):
        manifest["metadata"] = copy.deepcopy(csa_manifest["metadata"])
    return Scenario(seed, kind, name, g.namespace, steps, {"manager": manager, "manifest": manifest, "force": False},
                    burst)


def _merge_patch(g: _Gen) -> dict[str, Any]:
    r = g.r
    spec = g.spec(min_fields=1)
    for name in g.field_names():
        if name not in spec and _maybe(r, 0.08):
            spec[name] = None  # merge patch null: delete the field
    if _maybe(r, 0.15):
        # a null deeper down: delete one key of a map or struct
        path = r.choice({
            "Widget": [("labels", "a"), ("config", "k1"), ("config", "k2"), ("strategy", "rollingUpdate"),
                       ("strategy", "type")],
            "Gadget": [("params", "p1"), ("meta", "nested"), ("meta", "owner")],
            "Gizmo": [("data", "x"), ("data", "y")],
        }[g.kind])
        inner = spec.get(path[0])
        if not isinstance(inner, dict):
            inner = spec[path[0]] = {}
        inner[path[1]] = None
    body: dict[str, Any] = {"spec": spec}
    if _maybe(r, 0.15):
        body["metadata"] = {"labels": {"team": r.choice(["x", "y", None])}}
    if g.info.has_status_field and _maybe(r, 0.08):
        body["status"] = g.status()  # ignored on the main resource when status is a subresource
    return body


def _json_patch(g: _Gen) -> list[dict[str, Any]]:
    r = g.r
    ops: list[dict[str, Any]] = []
    for _ in range(r.choice([1, 1, 2])):
        name = r.choice(g.field_names())
        what = r.random()
        if what < 0.4:
            ops.append({"op": "add", "path": f"/spec/{name}", "value": g.field_value(name)})
        elif what < 0.6:
            ops.append({"op": "replace", "path": f"/spec/{name}", "value": g.field_value(name)})
        elif what < 0.8:
            ops.append({"op": "remove", "path": f"/spec/{name}"})
        else:
            inner = {
                "Widget": [("/spec/labels/b", "y"), ("/spec/config/k9", 1), ("/spec/containers/0/image", "img:3"),
                           ("/spec/finalizers/-", "f4")],
                "Gadget": [("/spec/params/p3", {"v": "u"}), ("/spec/meta/owner", "o3"), ("/spec/tags/-", "c")],
                "Gizmo": [("/spec/data/z", 3), ("/spec/rules/0/action", "log"), ("/spec/tags/-", 4)],
            }[g.kind]
            path, value = r.choice(inner)
            ops.append({"op": "add", "path": path, "value": value})
    return ops


def _mutation(g: _Gen) -> list[list[Any]]:
    r = g.r
    out: list[list[Any]] = []
    for _ in range(r.choice([1, 1, 2])):
        what = r.random()
        name = r.choice(g.field_names())
        if what < 0.6:
            out.append(["set", ["spec", name], g.field_value(name)])
        elif what < 0.8:
            out.append(["del", ["spec", name]])
        elif g.kind == "Widget":
            out.append(r.choice([["set", ["spec", "containers", 0, "image"], "img:1"],
                                 ["set", ["metadata", "labels", "team"], "y"],
                                 ["set", ["spec", "labels", "a"], "z"]]))
        elif g.kind == "Gadget":
            out.append(["set", ["spec", "params", "p1"], {"v": "s"}])
        else:
            out.append(["set", ["spec", "rules", 0, "weight"], 7])
    return out


def _status_step(g: _Gen) -> dict[str, Any]:
    r = g.r
    st = g.status()
    if not g.info.status_subresource:
        # Gadget: status is a plain field of the main resource
        if _maybe(r, 0.5):
            return {"op": "apply", "manager": r.choice(APPLIERS), "force": _maybe(r, 0.3),
                    "body": {**g.manifest(None, False), "status": st}}
        return {"op": "merge-patch", "manager": "status-writer", "body": {"status": st}}
    what = r.random()
    if what < 0.4:
        return {"op": "merge-patch", "manager": "status-writer", "subresource": "status", "body": {"status": st}}
    if what < 0.7:
        return {"op": "put", "manager": "status-writer", "subresource": "status",
                "mutation": [["set", ["status", k], v] for k, v in st.items()]}
    return {"op": "apply", "manager": "status-applier", "subresource": "status", "force": _maybe(r, 0.5),
            "body": {**g.manifest(None, False), "status": st}}


def describe(step: dict[str, Any]) -> str:
    op = step["op"]
    sub = f" on subresource {step['subresource']}" if step.get("subresource") else ""

    def short(obj: Any) -> str:
        if isinstance(obj, dict) and "apiVersion" in obj:
            obj = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            md = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("name", "namespace")}
            obj = {**obj, "metadata": md} if md else {k: v for k, v in obj.items() if k != "metadata"}
        return json.dumps(obj, sort_keys=True)

    if op == "create":
        return f"create (POST) by {step['manager']}: {short(step['body'])}"
    if op == "apply":
        force = str(step["force"]).lower()
        return f"server-side apply by {step['manager']} (force={force}){sub}: {short(step['body'])}"
    if op == "merge-patch":
        return f"JSON merge patch by {step['manager']}{sub}: {short(step['body'])}"
    if op == "json-patch":
        return f"JSON patch by {step['manager']}: {short(step['body'])}"
    if op == "put":
        return f"PUT (GET, modify, update) by {step['manager']}{sub}: {json.dumps(step['mutation'])}"
    if op == "kubectl-apply":
        return f"kubectl apply (client-side, manager kubectl-client-side-apply): {short(step['manifest'])}"
    if op == "kubectl-create":
        sc = " --save-config" if step.get("saveConfig") else ""
        return f"kubectl create{sc} (manager kubectl-create): {short(step['manifest'])}"
    if op == "kubectl-ssa":
        fc = " --force-conflicts" if step.get("forceConflicts") else ""
        return f"kubectl apply --server-side{fc} (manager kubectl): {short(step['manifest'])}"
    if op == "kubectl-scale":
        return f"kubectl scale --replicas={step['replicas']} (scale subresource)"
    return op


# ----------------------------------------------------------------------------------------------
# the server


@dataclass
class Response:
    status: int
    body: Any
    warnings: list[str] = field(default_factory=list)


class Api:
    """Raw HTTP to the API server, with the credentials of a kubeconfig (thread-safe)."""

    def __init__(self, kubeconfig: str) -> None:
        import kubernetes

        client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
        self._client = client  # keeps the pool alive
        self._pool = client.rest_client.pool_manager
        self.host = client.configuration.host.rstrip("/")
        self._headers = dict(client.default_headers)
        try:
            auth = client.configuration.auth_settings().get("BearerToken")
        except Exception:  # no token configured
            auth = None
        if auth and auth.get("value"):
            self._headers[auth["key"]] = auth["value"]

    def request(self, method: str, path: str, body: Any = None, content_type: str = JSON_CT,
                query: list[tuple[str, str]] | None = None) -> Response:
        url = self.host + path + ("?" + urlencode(query) if query else "")
        headers = {**self._headers, "Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        resp = self._pool.request(method, url, body=data, headers=headers, preload_content=True, timeout=60)
        raw = resp.data
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        warnings = [_warning_text(w) for w in resp.headers.getlist("Warning")] if resp.headers else []
        return Response(resp.status, parsed, warnings)


def _warning_text(header: str) -> str:
    # RFC 7234: 299 - "text"
    m = re.match(r'^\d{3} \S+ "(.*)"$', header)
    return m.group(1).replace('\\"', '"').replace("\\\\", "\\") if m else header


#: every kind a test addresses by path: the generated kinds, and Multi (the CRD the lab serves at v1 and
#: v2, conversion None: tests/conformance/multiversion/crd-multi.yaml)
ADDRESSABLE: dict[str, KindInfo] = {**KINDS, "Multi": KindInfo("Multi", "multis", True, True, True, True),
                                     "Preset": KindInfo("Preset", "presets", True, True, True, True),
                                     "Blob": KindInfo("Blob", "blobs", True, True, True, True)}


def object_path(kind: str, namespace: str | None, name: str | None = None, sub: str = "",
                version: str = VERSION) -> str:
    info = ADDRESSABLE[kind]
    base = f"/apis/{GROUP}/{version}"
    if info.namespaced:
        base += f"/namespaces/{namespace}"
    base += f"/{info.plural}"
    if name is not None:
        base += f"/{name}"
    if sub:
        base += f"/{sub}"
    return base


def answer_of(resp: Response) -> dict[str, Any]:
    """A server answer in the conformance format."""
    b = resp.body if isinstance(resp.body, dict) else {}
    out: dict[str, Any]
    if resp.status in (200, 201):
        out = {"status": resp.status, "object": resp.body}
    elif resp.status == 409 and b.get("reason") == "Conflict" and (b.get("details") or {}).get("causes"):
        conflicts = []
        for c in b["details"]["causes"]:
            text = c.get("message", "")
            text = text[len("conflict with "):] if text.startswith("conflict with ") else text
            conflicts.append({**_parse_manager_text(text), "managerText": text, "path": c.get("field", "")})
        out = {"status": 409, "reason": "Conflict", "message": b.get("message", ""), "conflicts": conflicts}
    else:
        out = {"status": resp.status, "reason": b.get("reason", ""), "message": b.get("message", str(resp.body))}
        causes = (b.get("details") or {}).get("causes")
        if causes:
            out["causes"] = causes
    if resp.warnings:
        out["warnings"] = resp.warnings
    return out


_MANAGER_TEXT = re.compile(r'^"((?:[^"\\]|\\.)*)"(?: with subresource "((?:[^"\\]|\\.)*)")?(?: using (\S+))?$')


def _parse_manager_text(text: str) -> dict[str, Any]:
    m = _MANAGER_TEXT.match(text)
    if not m:
        return {"manager": text, "operation": "?"}
    out: dict[str, Any] = {"manager": json.loads(f'"{m.group(1)}"'),
                           "operation": "Update" if m.group(3) else "Apply"}
    if m.group(2):
        out["subresource"] = json.loads(f'"{m.group(2)}"')
    if m.group(3):
        out["apiVersion"] = m.group(3)
    return out


# ----------------------------------------------------------------------------------------------
# kubectl


_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]]+\] (.*)$")


def _go_unquote(s: str) -> str:
    try:
        v = json.loads(s)
        return v if isinstance(v, str) else s
    except ValueError:
        return s[1:-1]


def parse_kubectl_log(stderr: str) -> tuple[list[dict[str, Any]], str]:
    """From ``kubectl -v=8`` stderr: the mutating requests (``wire``) and kubectl's own messages."""
    records: list[str] = []
    plain: list[str] = []
    in_block = False
    for line in stderr.splitlines():
        m = _KLOG.match(line)
        if m:
            records.append(m.group(1))
            in_block = line.rstrip().endswith("<")
            continue
        if in_block:
            if line.startswith(" >"):
                in_block = False
                records[-1] += "\n >"
            else:
                records[-1] += "\n" + line
            continue
        if records and (line.startswith("\t") or line.startswith(" >")):
            records[-1] += "\n" + line
            continue
        plain.append(line)
    wire: list[dict[str, Any]] = []
    pending_body: str | None = None
    current: dict[str, Any] | None = None
    for rec in records:
        if rec.startswith('"Request Body" body='):
            raw = rec[len('"Request Body" body='):]
            if raw.startswith("<"):
                lines = raw.split("\n")[1:]
                pending_body = "\n".join(x[1:] if x.startswith("\t") else x for x in lines if x != " >")
            else:
                pending_body = _go_unquote(raw.split("\n")[0])
        elif rec.startswith('"Request" verb='):
            mv = re.match(r'"Request" verb="(\w+)" url="([^"]*)"', rec)
            ct = re.search(r"^\tContent-Type: (.*)$", rec, re.M)
            if mv and mv.group(1) in ("POST", "PUT", "PATCH", "DELETE"):
                u = urlsplit(mv.group(2))
                body: Any = pending_body
                with contextlib.suppress(ValueError):
                    body = json.loads(pending_body) if pending_body else None
                current = {"verb": mv.group(1), "url": u.path + (f"?{u.query}" if u.query else ""),
                           "contentType": ct.group(1).strip() if ct else "", "body": body}
                wire.append(current)
            else:
                current = None
            pending_body = None
        elif rec.startswith('"Response" status=') and current is not None:
            ms = re.match(r'"Response" status="(\d+)', rec)
            current["status"] = int(ms.group(1)) if ms else None
            current = None
    return wire, "\n".join(plain).strip()


# ----------------------------------------------------------------------------------------------
# playing a scenario


class ScenarioError(Exception):
    """The harness could not play the scenario (not a disagreement)."""


def _error_text(resp: Response) -> str:
    if isinstance(resp.body, dict):
        return str(resp.body.get("message", ""))
    return str(resp.body)[:500]


def _apply_mutation(obj: dict[str, Any], mutation: list[list[Any]]) -> bool:
    """Apply ``mutation`` in place; False if a path does not exist where it must."""
    for m in mutation:
        op, path = m[0], m[1]
        node: Any = obj
        for i, p in enumerate(path[:-1]):
            nxt = path[i + 1]
            if isinstance(node, dict):
                if node.get(p) is None:
                    if op == "del":
                        node = None
                        break
                    node[p] = {} if isinstance(nxt, str) else None
                    if node[p] is None:
                        return False
                node = node[p]
            elif isinstance(node, list) and isinstance(p, int) and p < len(node):
                node = node[p]
            else:
                return False
        if node is None:
            continue
        last = path[-1]
        if op == "set":
            if isinstance(node, dict) or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
                node[last] = copy.deepcopy(m[2])
            else:
                return False
        elif isinstance(node, dict):
            node.pop(last, None)
        elif isinstance(node, list) and isinstance(last, int) and -len(node) <= last < len(node):
            del node[last]
    return True


def _align_to_second() -> None:
    time.sleep(1.0 - (time.time() % 1.0) + 0.01)


class Player:
    """Plays scenarios on one server."""

    def __init__(self, api: Api, kubectl: Callable[..., Any]) -> None:
        self.api = api
        self.kubectl = kubectl

    def play(self, sc: Scenario) -> list[dict[str, Any]]:
        if sc.burst:
            _align_to_second()
        played = []
        for step in sc.steps:
            s = copy.deepcopy(step)
            s["desc"] = describe(s)
            self._step(sc, s)
            played.append(s)
        return played

    def _record(self, s: dict[str, Any], resp: Response) -> None:
        s["status"] = resp.status
        if resp.status >= 400:
            s["error"] = _error_text(resp)
        if resp.warnings:
            s["warnings"] = resp.warnings

    def _step(self, sc: Scenario, s: dict[str, Any]) -> None:
        op = s["op"]
        sub = s.get("subresource", "")
        path = object_path(sc.kind, sc.namespace, sc.name, sub)
        if op == "create":
            resp = self.api.request("POST", object_path(sc.kind, sc.namespace), s["body"],
                                    query=[("fieldManager", s["manager"])])
            self._record(s, resp)
        elif op == "apply":
            resp = self.api.request("PATCH", path, s["body"], APPLY_CT,
                                    [("fieldManager", s["manager"]), ("force", str(s["force"]).lower())])
            self._record(s, resp)
        elif op == "merge-patch":
            resp = self.api.request("PATCH", path, s["body"], MERGE_CT, [("fieldManager", s["manager"])])
            self._record(s, resp)
        elif op == "json-patch":
            resp = self.api.request("PATCH", path, s["body"], JSON_PATCH_CT, [("fieldManager", s["manager"])])
            self._record(s, resp)
        elif op == "put":
            got = self.api.request("GET", path)
            if got.status != 200:
                self._record(s, got)
                s["error"] = f"GET before PUT: {s.get('error', '')}"
                return
            obj = got.body
            if not _apply_mutation(obj, s["mutation"]):
                s["status"] = None
                s["error"] = "mutation not applicable to the live object; nothing sent"
                return
            s["body"] = obj
            resp = self.api.request("PUT", path, obj, query=[("fieldManager", s["manager"])])
            self._record(s, resp)
        elif op in ("kubectl-apply", "kubectl-create", "kubectl-ssa"):
            argv = {"kubectl-apply": ["apply", "-f", "-"], "kubectl-create": ["create", "-f", "-"],
                    "kubectl-ssa": ["apply", "--server-side", "-f", "-"]}[op]
            if op == "kubectl-ssa" and s.get("forceConflicts"):
                argv.insert(2, "--force-conflicts")
            if op == "kubectl-create" and s.get("saveConfig"):
                argv.insert(1, "--save-config")
            self._kubectl(s, argv, json.dumps(s["manifest"]))
        elif op == "kubectl-scale":
            info = KINDS[sc.kind]
            argv = ["scale", f"{info.crd_name}/{sc.name}", f"--replicas={s['replicas']}"]
            if sc.namespace is not None:
                argv += ["-n", sc.namespace]
            self._kubectl(s, argv, None)
        else:
            raise ScenarioError(f"unknown op {op}")

    def _kubectl(self, s: dict[str, Any], argv: list[str], stdin: str | None) -> None:
        proc = self.kubectl(*argv, "-v=8", input=stdin, check=False)
        wire, stderr = parse_kubectl_log(proc.stderr)
        s["argv"] = ["kubectl", *argv]
        s["rc"] = proc.returncode
        s["stdout"] = proc.stdout.strip()
        s["stderr"] = stderr
        s["wire"] = wire
        statuses = [w.get("status") for w in wire if w.get("status") is not None]
        s["status"] = statuses[-1] if statuses else None
        if proc.returncode != 0:
            s["error"] = stderr[-500:]

    def final(self, sc: Scenario) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """GET live, then the forced dry run, then the real unforced apply: (live, expect, expectForced)."""
        path = object_path(sc.kind, sc.namespace, sc.name)
        got = self.api.request("GET", path)
        if got.status != 200:
            raise ScenarioError(f"GET {path} before the final apply: {got.status} {_error_text(got)}")
        live = got.body
        m = sc.apply["manager"]
        forced = self.api.request("PATCH", path, sc.apply["manifest"], APPLY_CT,
                                  [("fieldManager", m), ("force", "true"), ("dryRun", "All")])
        again = self.api.request("GET", path)
        rv0 = live["metadata"]["resourceVersion"]
        rv1 = (again.body or {}).get("metadata", {}).get("resourceVersion") if isinstance(again.body, dict) else None
        if again.status != 200 or rv1 != rv0:
            raise ScenarioError(f"the dry run changed the object: resourceVersion {rv0} -> {rv1}")
        real = self.api.request("PATCH", path, sc.apply["manifest"], APPLY_CT,
                                [("fieldManager", m), ("force", "false")])
        return live, answer_of(real), answer_of(forced)


# ----------------------------------------------------------------------------------------------
# cases and comparison


def case_tags(case: dict[str, Any]) -> list[str]:
    """The README's tags."""
    tags: set[str] = set()
    steps = case["steps"]
    for s in steps:
        op = s["op"]
        tags.add({"kubectl-apply": "csa"}.get(op, op))
        if op == "put" and s.get("subresource") == "scale":
            tags.add("scale-put")
        if s.get("subresource") == "status":
            tags.add("status")
        if op == "merge-patch" and (s.get("body") or {}).get("metadata", {}).get("managedFields") == [{}]:
            tags.add("reset")
    if steps and steps[0]["op"] in ("create", "kubectl-apply", "kubectl-create"):
        tags.add("created-by-update")
    objs = [case["live"]] + [a["object"] for a in (case["expect"], case["expectForced"]) if a.get("object")]
    for o in objs:
        mf = (o.get("metadata") or {}).get("managedFields") or []
        for e in mf:
            if e.get("manager") in ("ancient-changes", "before-first-apply"):
                tags.add(e["manager"])
    live_mf = (case["live"].get("metadata") or {}).get("managedFields") or []
    if sum(1 for e in live_mf if e.get("operation") == "Update") >= 10:
        tags.add("many-update-managers")
    if LAST_APPLIED in ((case["live"].get("metadata") or {}).get("annotations") or {}):
        tags.add("last-applied")
    if case["apply"]["manager"] == "kubectl":
        tags.add("final-kubectl")
    for c in case["expect"].get("conflicts") or []:
        if c["manager"] in ("ancient-changes", "before-first-apply"):
            tags.add(f"conflict-{c['manager']}")
    return sorted(tags)


def build_case(sc: Scenario, steps: list[dict[str, Any]], live: dict[str, Any], expect: dict[str, Any],
               expect_forced: dict[str, Any], schema: dict[str, Any], server_version: str) -> dict[str, Any]:
    case = {
        "id": f"diff-{sc.seed}",
        "seed": sc.seed,
        "kind": sc.kind,
        "serverVersion": server_version,
        "schema": schema,
        "steps": steps,
        "live": live,
        "apply": sc.apply,
        "expect": expect,
        "expectForced": expect_forced,
    }
    case["tags"] = case_tags(case)
    return case


# A 422 the engine is not meant to model: any validation error other than a typed null.
def _more_differences(exp: Outcome, got: Outcome) -> list[str]:
    """Beyond conformance_cases.differences (spec, labels, annotations): the rest of the object
    that scenarios change, i.e. status (reset by the main endpoint of a kind with a status
    subresource) and metadata.finalizers."""
    if exp.status != 200 or got.status != 200 or exp.obj is None or got.obj is None:
        return []
    out = []
    for what, e, g in (
        ("status", exp.obj.get("status"), got.obj.get("status")),
        ("metadata.finalizers", (exp.obj.get("metadata") or {}).get("finalizers"),
         (got.obj.get("metadata") or {}).get("finalizers")),
    ):
        if e != g:
            out.append(f"{what}: expected {json.dumps(e, sort_keys=True)}, got {json.dumps(g, sort_keys=True)}")
    return out


def case_differences(case: dict[str, Any]) -> dict[str, list[str]]:
    """The engine's disagreements with the server for both answers: {"expect": [...], "expectForced": [...]}."""
    out: dict[str, list[str]] = {}
    for key, force in (("expect", False), ("expectForced", True)):
        exp, got = expected(case[key]), predict(case, force)
        d = differences(exp, got) + _more_differences(exp, got)
        if d:
            out[key] = d
    return out


def report(case: dict[str, Any], diffs: dict[str, list[str]]) -> str:
    """A human-readable account of a disagreement."""
    lines = [f"seed {case['seed']} ({case['kind']}): the engine disagrees with the server", "steps:"]
    for i, s in enumerate(case["steps"]):
        err = f"  [{s['error'][:160]}]" if s.get("error") else ""
        lines.append(f"  {i + 1}. {s['desc']} -> {s.get('status')}{err}")
    lines.append("live managedFields:")
    for e in (case["live"].get("metadata") or {}).get("managedFields") or []:
        sub = f"/{e['subresource']}" if e.get("subresource") else ""
        lines.append(f"  {e['manager']} {e['operation']}{sub} {json.dumps(e.get('fieldsV1'), sort_keys=True)}")
    lines.append(f"live spec: {json.dumps(case['live'].get('spec'), sort_keys=True)}")
    a = case["apply"]
    lines.append(f"final apply by {a['manager']}: {json.dumps(a['manifest'], sort_keys=True)}")
    for key, ds in diffs.items():
        ans = case[key]
        msg = f": {ans['message'][:300]}" if ans.get("message") else ""
        lines.append(f"{key} (server answered {ans['status']}{msg}):")
        lines.extend(f"  - {d}" for d in ds)
    return "\n".join(lines)
