"""Generated scenarios for tests/scenarios/test_generated.py: seeded histories of real writers on a
Widget, a Multi (served at v1 and v2: each writer writes at a version of its own), a Preset (a
Widget whose schema defaults some fields: a field removed is set again) or a Blob (a Widget whose
spec has no schema: every list atomic, every map granular), among them controllers that write the
object's metadata (an operator's finalizer, an owner reference) and writers that change one item
of a list by read-modify-write (an edited image, an injected env var or sidecar), a next manifest
and the applier that applies it — and the user's intent, judged from the
objects alone (no kubectl_fieldown code here).

A case is plain JSON (it is what a regression file under ``generated-regressions/`` holds):

* ``steps``: the history, oldest first. Each step is one writer's request(s) as that writer sends
  them (real kubectl for ``kubectl ...``; raw HTTP for controllers, scalers, Helm, GitOps tools),
  with a ``role``: ``applier`` for the user's own applies (the applier's previous identities:
  client-side kubectl, ``create --save-config``, ``replace``, server-side names, Helm 3/4, Argo CD,
  Flux) and ``other`` for everyone else (scalers, controllers, imperative edits, other appliers);
* ``previous``: the manifest the user's applier applied last (the user edits it into ``manifest``;
  when that apply failed on the server, or wrote nothing — Flux skips an apply whose dry-run shows no
  drift — the judge takes the last one that left a record);
* ``manifest``: the next manifest; ``applier``: ``KIND`` or ``KIND:MANAGER`` as ``--applier`` takes it.

The intent (docs/development.md, *Fidelity*): the next manifest's values are applied; a field that
the previous manifest set and the next one does not is deleted, unless another live writer set it
too (it then keeps that writer's value); every other field keeps its value. "Live writer" is measured
on the server while the history is played (:func:`attribute`): after each step, the fields that step
sent and that now hold the value it sent are attributed to it; a field whose value changes is
attributed only to the steps that sent that value; a field that disappears has no writer; another
writer's server-side apply that no longer sends a field it sent before gives it up (it wants what
it applies, and the server drops its ownership of the rest). After a
managedFields reset (:func:`forget_records`) a value the applier sends again while no write has
tracked the object since is the applier's alone (its own apply is then the value's only record). A value
an Update step sent that was already there is not attributed to it: the server skips a write that
changes nothing (no new resourceVersion, no managedFields entry), so no record, and no tool, can
know it was sent — only an apply (server-side, or the user's applier with its configuration record)
counts for values it left as they were.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

GV = "example.com/v1"
GROUP = "example.com"
#: the kinds a case is about, and the versions the lab serves each at: Multi is served at v1 and v2
#: (conversion None), so its writers write at either, and its managedFields entries record both
VERSIONS: dict[str, tuple[str, ...]] = {"Widget": ("v1",), "Multi": ("v1", "v2"), "Preset": ("v1",), "Blob": ("v1",)}
PLURALS = {"Widget": "widgets", "Multi": "multis", "Preset": "presets", "Blob": "blobs"}
MULTI_SHARE = 0.3
"""The share of cases about a Multi."""
PRESET_SHARE = 0.25
"""The share of the other cases about a Preset."""
BLOB_SHARE = 0.2
"""The share of the cases about none of those about a Blob (the rest: a Widget)."""
UNTYPED = frozenset({"Blob"})
"""The kinds whose spec has no schema: the server takes every list as atomic, every map as granular."""
LA = "kubectl.kubernetes.io/last-applied-configuration"
OWNER_UIDS = ("6f1c2a4e-0000-4000-8000-000000000001", "6f1c2a4e-0000-4000-8000-000000000002")
"""The owners a controller names (nothing checks that they exist: the lab runs no garbage collector)."""
NAME = "w"

Path = tuple[str, ...]
"""A field: names, and list items as the server writes them (``[name="main"]``, ``[="f1"]``)."""

# the Widget CRD's list types (tests/conformance: widgets.example.com), as the test knows them
LIST_MAPS: dict[Path, tuple[str, ...]] = {
    ("spec", "containers"): ("name",),
    ("spec", "containers", "*", "env"): ("name",),
    ("spec", "containers", "*", "ports"): ("containerPort", "protocol"),
    ("metadata", "ownerReferences"): ("uid",),  # ObjectMeta's, on every kind
}
SETS: frozenset[Path] = frozenset({("spec", "finalizers"), ("metadata", "finalizers")})
ATOMIC_MAPS: frozenset[Path] = frozenset({("spec", "selector")})
ITEM = "<item>"
"""The value of a list-map item's own path (the item exists)."""
#: the schema defaults of each kind (tests/lab.py ``preset_crd``), by field pattern (``*``: any list
#: item or map key): the value the server sets again when a write removes the field (while its
#: parent exists)
DEFAULTS: dict[str, dict[Path, Any]] = {
    "Preset": {("spec", "mode"): "auto", ("spec", "policy", "retries"): 3,
               ("spec", "containers", "*", "pullPolicy"): "IfNotPresent",
               ("spec", "strategy", "type"): "RollingUpdate", ("spec", "components", "*", "replicas"): 1},
}


# --- paths ---------------------------------------------------------------------------------------


def _go(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def _pattern(path: Path) -> Path:
    return tuple("*" if p.startswith("[") else p for p in path)


def server_path(path: Path) -> str:
    """``.spec.containers[name="main"].image``: the API server's syntax (conflicts, audit)."""
    return "".join(p if p.startswith("[") else "." + p for p in path)


_SEG = re.compile(r'\.([^.\[]+)|\[([^\]]*)\]')


def parse_server_path(text: str) -> Path:
    """The inverse of :func:`server_path` for the paths this generator produces."""
    out: list[str] = []
    pos = 0
    for m in _SEG.finditer(text):
        if m.start() != pos:
            raise ValueError(f"not a path: {text!r}")
        out.append(m.group(1) if m.group(1) is not None else f"[{m.group(2)}]")
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"not a path: {text!r}")
    return tuple(out)


def _item_key(pattern: Path, item: Mapping[str, Any]) -> str:
    keys = LIST_MAPS[pattern]
    return "[" + ",".join(f"{k}={_go(item.get(k))}" for k in keys) + "]"


def leaves(obj: Mapping[str, Any], kind: str | None = None) -> dict[Path, Any]:
    """spec, status, labels, annotations (not the last-applied record), finalizers and owner
    references as fields: list-map
    items and set items one by one, atomic lists and maps whole; empty maps are no value. ``kind``
    (default: the object's own) decides the shapes: a kind in :data:`UNTYPED` has no list but
    atomic ones below ``spec``, and no atomic map."""
    out: dict[Path, Any] = {}
    untyped = (kind or obj.get("kind")) in UNTYPED

    def walk(v: Any, path: Path) -> None:
        pat = _pattern(path)
        if untyped and path[0] == "spec":
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(x, (*path, k))
            else:
                out[path] = v
            return
        if isinstance(v, dict) and pat not in ATOMIC_MAPS:
            for k, x in v.items():
                walk(x, (*path, k))
        elif isinstance(v, list) and pat in LIST_MAPS:
            for item in v:
                ip = (*path, _item_key(pat, item))
                out[ip] = ITEM
                for k, x in item.items():
                    if k not in LIST_MAPS[pat]:
                        walk(x, (*ip, k))
        elif isinstance(v, list) and pat in SETS:
            for x in v:
                key = (*path, f"[={_go(x)}]")
                out[key] = True
        else:
            out[path] = v

    for top in ("spec", "status"):
        if isinstance(obj.get(top), dict):
            walk(obj[top], (top,))
    md = obj.get("metadata") or {}
    for m in ("labels", "annotations"):
        for k, v in (md.get(m) or {}).items():
            if k != LA:
                out[("metadata", m, k)] = v
    for m in ("finalizers", "ownerReferences"):
        if md.get(m):
            walk(md[m], ("metadata", m))
    return out


def remove_path(doc: dict[str, Any], path: Path) -> bool:
    """Takes ``path`` out of a manifest (an edit the tool asks for); False when it is not there."""
    node: Any = doc
    for i, seg in enumerate(path):
        last = i == len(path) - 1
        if seg.startswith("[="):
            if not isinstance(node, list):
                return False
            kept = [x for x in node if f"[={_go(x)}]" != seg]
            found = len(kept) != len(node)
            node[:] = kept
            return found
        if seg.startswith("["):
            if not isinstance(node, list):
                return False
            pat = _pattern(path[:i])
            idx = next((j for j, x in enumerate(node) if isinstance(x, dict) and _item_key(pat, x) == seg), None)
            if idx is None:
                return False
            if last:
                node.pop(idx)
                return True
            node = node[idx]
            continue
        if not isinstance(node, dict) or seg not in node:
            return False
        if last:
            node.pop(seg)
            return True
        node = node[seg]
    return False


def edited_containers(live: Mapping[str, Any], change: str, value: str) -> list[dict[str, Any]]:
    """``live``'s ``spec.containers`` after an item writer's change (a copy): the first container's
    ``image`` set to ``value``, or its env var ``INJECTED`` set to ``value``, or a container
    ``sidecar`` appended (image ``value``); with no container, the sidecar is appended."""
    spec = live.get("spec")
    cs = copy.deepcopy(spec.get("containers")) if isinstance(spec, dict) else None
    cs = [c for c in cs if isinstance(c, dict)] if isinstance(cs, list) else []
    if change == "sidecar" or not cs:
        if all(c.get("name") != "sidecar" for c in cs):
            cs.append({"name": "sidecar", "image": value})
    elif change == "image":
        cs[0]["image"] = value
    else:
        env = [e for e in cs[0].get("env") or [] if e.get("name") != "INJECTED"]
        cs[0]["env"] = [*env, {"name": "INJECTED", "value": value}]
    return cs


# --- who set what: measured on the server --------------------------------------------------------


Attribution = dict[Path, set[str]]
"""The writers (roles ``applier``/``other:CLASS``) whose value each live field holds."""


def attribute(attr: Attribution, before: Mapping[Path, Any], after: Mapping[Path, Any],
              sent: Mapping[Path, Any], role: str, records_unchanged: bool = True, untracked: bool = False,
              whole_set: bool = False) -> None:
    """One step's effect on ``attr`` (in place): see the module docstring. ``records_unchanged``: the
    step leaves a record of the values it sent that were there already (an apply; not an Update);
    ``untracked``: the object had no managedFields when the step was sent (a reset, and no write that
    left a record since): a server-side apply then records the applier as the only writer of a value
    that was already there, as a client-side apply's annotation does;
    ``whole_set``: the step is another writer's server-side apply that went through, so what it sent
    is all it wants: a field it sent before and not now is no longer its (the server drops it too)."""
    for p in list(attr):
        if p not in after:
            del attr[p]
        elif whole_set and p not in sent:
            attr[p] -= {role, role + FORGOTTEN}
    for p, v in after.items():
        mine = p in sent and _same(sent[p], v)
        if p not in before or not _same(before[p], v):
            attr[p] = {role} if mine else set()
        elif mine and records_unchanged:
            roles = attr.setdefault(p, set())
            if role == "applier" and untracked:
                # its configuration is the one record of that value now (with its own annotation's)
                roles -= {r for r in roles if r.endswith(FORGOTTEN)}
            roles.add(role)


FORGOTTEN = "~"
"""Marks a writer whose record a managedFields reset erased (``other:imperative~``)."""


def forget_records(attr: Attribution) -> None:
    """A managedFields reset (in place): the server forgets who wrote what. The other writers' values
    stay theirs (a value that differs from the applier's configuration still shows another writer), but
    once the applier sends the same value while the object is still untracked, its configuration is
    the only record of it: which other writer set it before the reset nothing on the object says. The
    applier's own record (the last-applied annotation) survives a reset."""
    for p, roles in attr.items():
        attr[p] = {r if r == "applier" or r.endswith(FORGOTTEN) else r + FORGOTTEN for r in roles}


def _same(a: Any, b: Any) -> bool:
    if a is _UNSET or b is _UNSET:
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# --- the intent ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Miss:
    """A field where the object after the apply is not what the user meant."""

    kind: str
    """``not-applied`` (a value of the manifest), ``stayed`` (a dropped field), ``writer-value-lost``
    (a dropped field another live writer set), ``older-value-lost`` (a field only an older manifest of
    the applier set), ``value-lost`` (any other field)."""
    path: Path
    want: Any
    got: Any

    def text(self) -> str:
        w = "<unset>" if self.want is _UNSET else repr(self.want)
        g = "<unset>" if self.got is _UNSET else repr(self.got)
        return f"{self.kind} {server_path(self.path)}: want {w}, got {g}"


_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>"})()


def misses(before: Mapping[str, Any], applied: Mapping[str, Any], previous: Mapping[str, Any] | None,
           after: Mapping[str, Any], attr: Attribution, kind: str | None = None) -> list[Miss]:
    """Where ``after`` departs from the intent; ``applied`` is the manifest as applied (after the
    tool's edits), ``before`` the object before the tool's fix ran, ``attr`` its live writers;
    ``kind`` (default: ``before``'s) decides the shapes (:func:`leaves`) and the schema defaults
    (:data:`DEFAULTS`): a field deleted as asked that holds its default again was deleted (the
    server defaults it in the same write; nothing can remove it)."""
    kind = kind or str(before.get("kind"))
    defaults = DEFAULTS.get(kind)
    want, was, got = leaves(applied, kind), leaves(before, kind), leaves(after, kind)
    prev = leaves(previous, kind) if previous is not None else {}
    out: list[Miss] = []
    for p, v in want.items():
        if not _same(got.get(p, _UNSET), v):
            out.append(Miss("not-applied", p, v, got.get(p, _UNSET)))
    for p, v in was.items():
        if p in want:
            continue
        if any(p[:i] in want and want[p[:i]] != ITEM for i in range(1, len(p))):
            continue  # under an atomic value of the manifest
        dropped = p in prev
        others = {w for w in attr.get(p, set()) if w != "applier"}
        g = got.get(p, _UNSET)
        if dropped and not others:
            if g is not _UNSET and not is_default(defaults, p, g):
                out.append(Miss("stayed", p, _UNSET, g))
        elif not _same(g, v):
            # a field only the applier's older manifests set (it stayed when they dropped it) is
            # told apart: whether its deletion now is what the user meant is for the reader to judge
            # (a new, partial applier has no older manifests: the history's applies are someone else's)
            older = previous is not None and not dropped and attr.get(p) == {"applier"}
            out.append(Miss("writer-value-lost" if dropped else "older-value-lost" if older else "value-lost", p, v, g))
    return out


def is_default(defaults: Mapping[Path, Any] | None, path: Path, value: Any) -> bool:
    """``value`` is the schema's default of the field ``path``."""
    if not defaults:
        return False
    pat = _pattern(path)
    return any(len(k) == len(pat) and all(a in ("*", b) for a, b in zip(k, pat, strict=True))
               and _same(v, value) for k, v in defaults.items())


# --- generation ------------------------------------------------------------------------------------


APPLIER_CHOICES = ("kubectl", "kubectl:ci", "kubectl:hotfix", "kubectl-client-side", "argocd", "flux", "helm",
                   "ssa:deployer", "ssa:ci")

PARTIAL_APPLIERS = ("kubectl:hotfix", "ssa:tuner", "kubectl:tuner")


def _doc(spec: dict[str, Any], labels: dict[str, str] | None = None, kind: str = "Widget",
         version: str = "v1") -> dict[str, Any]:
    md: dict[str, Any] = {"name": NAME}
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": f"{GROUP}/{version}", "kind": kind, "metadata": md, "spec": spec}


def version_of(doc: Mapping[str, Any]) -> str:
    return str(doc.get("apiVersion", GV)).rpartition("/")[2]


#: the Widget-only fields the history's other writers touch, and what they touch on a Multi instead
#: (the same kind of writer: a controller's map entry, a defaulter's atomic list, an edit)
_MULTI_BODIES: dict[str, dict[str, Any]] = {
    "config": {"labels": {"ca": "injected"}},
    "strategy": {"args": ["--defaulted"]},
}


#: a Multi's fields the generator writes (its ``tags`` is an atomic list at v1 and a set at v2: left out,
#: the judge reads objects without a schema)
MULTI_FIELDS = ("replicas", "color", "args", "labels", "finalizers", "containers")

#: a Preset has a Widget's fields, two with schema defaults, a map of objects and an atomic list of objects
PRESET_FIELDS = ("replicas", "color", "args", "selector", "labels", "finalizers", "containers", "strategy", "config",
                 "mode", "policy", "components", "tolerations")


class Gen:
    """Values from small pools, so that writers meet on the same fields often."""

    def __init__(self, r: random.Random, kind: str = "Widget", meta: random.Random | None = None,
                 items: random.Random | None = None) -> None:
        """``meta`` draws the controllers that write the object's metadata (finalizers, owner
        references) in place of some others, ``items`` the edits of single list items in place of
        some imperative ones; each apart from ``r`` (and from each other), so that every other draw
        stays as it was."""
        self.r = r
        self.kind = kind
        self.meta = meta
        self.items = items
        self.fields = {"Widget": self.FIELDS, "Multi": MULTI_FIELDS, "Preset": PRESET_FIELDS, "Blob": self.FIELDS}[kind]

    def version(self) -> str:
        """A version to write at (drawn only where the kind has several: Widget cases stay as they were)."""
        vs = VERSIONS[self.kind]
        return vs[0] if len(vs) == 1 else self.r.choice(vs)

    def fit(self, body: dict[str, Any]) -> dict[str, Any]:
        """A writer's body for a Widget, made a Multi's (its fields only)."""
        if self.kind != "Multi" or not isinstance(body.get("spec"), dict):
            return body
        spec: dict[str, Any] = {}
        for k, v in body["spec"].items():
            spec.update(copy.deepcopy(_MULTI_BODIES[k]) if k in _MULTI_BODIES else {k: v})
        return {**body, "spec": spec}

    def container(self, name: str) -> dict[str, Any]:
        r = self.r
        c: dict[str, Any] = {"name": name, "image": r.choice(["img:1", "img:2", "img:3"])}
        if r.random() < 0.4:
            c["env"] = [{"name": n, "value": r.choice(["1", "2"])} for n in r.sample(["A", "B", "C"], r.choice([1, 2]))]
        if r.random() < 0.3:
            c["ports"] = [{"containerPort": p, "protocol": pr}
                          for p, pr in r.sample([(80, "TCP"), (443, "TCP"), (53, "UDP")], r.choice([1, 2]))]
        if self.kind == "Preset" and r.random() < 0.35:
            # the default's own value, or another: a value equal to the default is still the writer's
            c["pullPolicy"] = r.choice(["IfNotPresent", "Always", "Never"])
        return c

    def field(self, name: str) -> Any:
        r = self.r
        pools: dict[str, Callable[[], Any]] = {
            "replicas": lambda: r.choice([1, 2, 3, 5]),
            "color": lambda: r.choice(["red", "blue", "green"]),
            "args": lambda: r.choice([["-v"], ["-q"], ["-v", "-q"]]),
            "selector": lambda: r.choice([{"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}}]),
            "labels": lambda: {k: r.choice(["x", "y"]) for k in r.sample(["tier", "zone", "ring"], r.choice([1, 2]))},
            "finalizers": lambda: r.sample(["f1", "f2", "f3"], r.choice([1, 2])),
            "containers": lambda: [self.container(n) for n in r.sample(["main", "side"], r.choice([1, 2]))],
            "strategy": lambda: {"type": r.choice(["RollingUpdate", "Recreate"]),
                                 **({"rollingUpdate": {"maxSurge": r.choice([1, "25%"])}} if r.random() < 0.4 else {})},
            "config": lambda: {k: r.choice(["one", "two"]) for k in r.sample(["k1", "k2", "k3"], r.choice([1, 2]))},
            "mode": lambda: r.choice(["auto", "manual", "batch"]),
            "policy": lambda: {k: r.choice(v) for k, v in r.sample([("retries", [3, 5]), ("timeout", [10, 30])],
                                                                r.choice([1, 2]))},
            "components": lambda: {n: {"image": r.choice(["c:1", "c:2"]),
                                       **({"replicas": r.choice([1, 2])} if r.random() < 0.5 else {})}
                                   for n in r.sample(["web", "db", "cache"], r.choice([1, 2]))},
            "tolerations": lambda: r.sample([{"key": "a", "operator": "Exists"},
                                             {"key": "b", "operator": "Equal", "value": "x"}], r.choice([1, 2])),
        }
        return pools[name]()

    FIELDS = ("replicas", "color", "args", "selector", "labels", "finalizers", "containers", "strategy", "config")

    def manifest(self) -> dict[str, Any]:
        r = self.r
        names = r.sample(self.fields, r.choice([3, 4, 5, 6]))
        labels = {"app": "web"} if r.random() < 0.5 else None
        return _doc({n: self.field(n) for n in names}, labels, self.kind, self.version())

    def mutate(self, doc: dict[str, Any], times: int) -> dict[str, Any]:
        """The user's edit: values changed, fields and items dropped and added."""
        r = self.r
        out = copy.deepcopy(doc)
        spec = out["spec"]
        for _ in range(times):
            what = r.random()
            present = [n for n in self.fields if n in spec]
            if what < 0.3 and len(present) > 1:
                spec.pop(r.choice(present))  # a field dropped
            elif what < 0.5:
                n = r.choice(self.fields)
                spec[n] = self.field(n)  # changed or added
            elif what < 0.65 and spec.get("containers"):
                cs = spec["containers"]
                c = r.choice(cs)
                sub = r.random()
                if sub < 0.3 and len(cs) > 1:
                    cs.remove(c)  # an item dropped
                elif sub < 0.5:
                    c["image"] = r.choice(["img:1", "img:2", "img:3"])
                elif sub < 0.75 and c.get("env"):
                    c["env"].pop(r.randrange(len(c["env"])))
                    if not c["env"]:
                        del c["env"]
                else:
                    other = next((n for n in ("main", "side") if all(x["name"] != n for x in cs)), None)
                    if other:
                        cs.append(self.container(other))  # an item added
            elif what < 0.8:
                fin = spec.setdefault("finalizers", [])
                x = r.choice(["f1", "f2", "f3"])
                fin.remove(x) if x in fin else fin.append(x)  # a set item dropped or added
                if not fin:
                    del spec["finalizers"]
            elif what < 0.9 and spec.get("labels"):
                k = r.choice(list(spec["labels"]))
                del spec["labels"][k]
                if not spec["labels"]:
                    del spec["labels"]
            else:
                md = out["metadata"]
                if md.get("labels"):
                    md.pop("labels")
                else:
                    md["labels"] = {"app": "web", "team": r.choice(["a", "b"])}
        if self.kind == "Preset" and r.random() < 0.5:
            self._drop_defaulted(spec)
        if not spec:
            spec["color"] = "red"
        if len(VERSIONS[self.kind]) > 1 and r.random() < 0.4:
            out["apiVersion"] = f"{GROUP}/{self.version()}"  # the manifest moved to another served version
        return out

    def _drop_defaulted(self, spec: dict[str, Any]) -> None:
        """A Preset's edit that removes a field its schema defaults (or the object holding it), if any."""
        holders: list[tuple[dict[str, Any], str]] = [(spec, n) for n in ("mode", "policy") if n in spec]
        policy, strategy = spec.get("policy"), spec.get("strategy")
        if isinstance(policy, dict) and "retries" in policy and len(policy) > 1:
            holders.append((policy, "retries"))
        if isinstance(strategy, dict) and "type" in strategy:
            holders.append((strategy, "type"))
        holders += [(c, "pullPolicy") for c in spec.get("containers") or [] if "pullPolicy" in c]
        components = spec.get("components")
        if isinstance(components, dict):
            holders += [(components, n) for n in components if len(components) > 1]
            holders += [(c, "replicas") for c in components.values() if "replicas" in c]
        if holders:
            d, k = self.r.choice(holders)
            d.pop(k)
        if spec.get("strategy") == {}:
            del spec["strategy"]

    # --- the history's writers ---

    def other_step(self, doc: dict[str, Any]) -> dict[str, Any]:
        """A step by someone else than the user's applier; on a kind served at several versions a raw
        request goes to one of them (kubectl's own commands use the preferred one)."""
        step = self._other_step(doc)
        if self.kind == "Preset" and step["op"] == "merge-patch" and step["class"] == "controller" \
                and self.r.random() < 0.5:
            # a controller that tunes a defaulted field (drawn only for a Preset: the other kinds'
            # cases stay as they were)
            step["manager"], step["body"] = self.r.choice([
                ("tuner", {"spec": {"mode": self.r.choice(["auto", "batch"])}}),
                ("tuner", {"spec": {"policy": {"retries": self.r.choice([3, 7])}}}),
                ("tuner", {"spec": {"components": {"web": {"replicas": self.r.choice([1, 4])}}}}),
            ])
        if self.meta is not None and step["class"] == "controller" and self.meta.random() < 0.4:
            step = self._metadata_writer()
        if self.kind != "Multi":
            return self._item_writer(step)
        if "body" in step:
            step["body"] = self.fit(step["body"])
        if step["op"] in ("merge-patch", "add-finalizer", "many-updaters", "reset"):
            step["version"] = self.version()
        return self._item_writer(step)

    def _item_writer(self, step: dict[str, Any]) -> dict[str, Any]:
        """``step``, or in place of an imperative one, a writer that changes one item of
        ``spec.containers`` by read-modify-write (an Update of the whole list, as ``kubectl edit``
        sends a list it changed and as a mutating controller writes): the first container's image,
        an env var injected into it, or a sidecar container appended (played on the live object)."""
        m = self.items
        if m is None or step["class"] != "imperative" or m.random() >= 0.35:
            return step
        change, mgr, value = m.choice([("image", "kubectl-edit", m.choice(["img:1", "edited:1"])),
                                       ("env", "env-injector", m.choice(["1", "9"])),
                                       ("sidecar", "sidecar-injector", "sidecar:1")])
        out = {"op": "edit-item", "class": "item-editor", "manager": mgr, "change": change, "value": value}
        if len(VERSIONS[self.kind]) > 1:
            out["version"] = m.choice(VERSIONS[self.kind])
        return out

    def _metadata_writer(self) -> dict[str, Any]:
        """A controller that writes the object's metadata, as operators do: it adds its finalizer to
        those already there (read, append, write: an Update), or sets the object's owner reference."""
        m = self.meta
        assert m is not None
        if m.random() < 0.65:
            mgr, finalizer = m.choice([("widget-controller", "example.com/cleanup"),
                                       ("backup-operator", "backup.example.com/protect")])
            return {"op": "add-finalizer", "class": "metadata-controller", "manager": mgr, "finalizer": finalizer}
        ref = {"apiVersion": GV, "kind": "Parent", "name": "p", "uid": m.choice(OWNER_UIDS), "controller": True,
               "blockOwnerDeletion": m.random() < 0.5}
        return {"op": "merge-patch", "class": "metadata-controller", "manager": "parent-controller",
                "body": {"metadata": {"ownerReferences": [ref]}}}

    def _other_step(self, doc: dict[str, Any]) -> dict[str, Any]:
        r = self.r
        w = r.random()
        n = r.choice([2, 4, 6, 7])
        if w < 0.12:
            return {"op": "kubectl-scale", "class": "scaler", "replicas": n}
        if w < 0.22:
            mgr = r.choice(["horizontal-pod-autoscaler", "kube-controller-manager", "keda-operator"])
            return {"op": "merge-patch", "class": "scaler", "manager": mgr, "sub": "scale",
                    "body": {"spec": {"replicas": n}}}
        if w < 0.3:
            return {"op": "merge-patch", "class": "scaler", "manager": "hpa-like-controller",
                    "body": {"spec": {"replicas": n}}}
        if w < 0.42:
            mgr, body = r.choice([
                ("cainjector", {"spec": {"config": {"caBundle": r.choice(["Q0E=", "Q0I="])}}}),
                ("defaulter", {"spec": {"strategy": {"type": r.choice(["RollingUpdate", "Recreate"])}}}),
                ("operator", {"spec": {"color": r.choice(["red", "purple"])}}),
                ("operator", {"metadata": {"annotations": {"operator/seen": "1"}}}),
                ("kube-controller-manager", {"spec": {"labels": {"ring": r.choice(["x", "z"])}}}),
            ])
            return {"op": "merge-patch", "class": "controller", "manager": mgr, "body": body}
        if w < 0.48:
            return {"op": "merge-patch", "class": "status", "manager": "widget-controller", "sub": "status",
                    "body": {"status": {"phase": r.choice(["Ready", "Pending"]), "replicas": n}}}
        if w < 0.56:
            return {"op": "kubectl-label", "class": "imperative", "args": [f"team={r.choice(['a', 'b', 'pay'])}"]}
        if w < 0.6:
            return {"op": "kubectl-annotate", "class": "imperative", "args": [f"note={r.choice(['n1', 'n2'])}"]}
        if w < 0.68:
            body = {"spec": r.choice([{"color": r.choice(["red", "green", "pink"])}, {"replicas": n},
                                      {"config": {"k1": "edited"}}, {"args": ["--debug"]}])}
            return {"op": "kubectl-patch", "class": "imperative", "body": body}
        if w < 0.74:
            body = {"spec": r.choice([{"color": "orange"}, {"strategy": {"type": "Recreate"}},
                                      {"labels": {"tier": "edited"}}])}
            return {"op": "merge-patch", "class": "imperative", "manager": "kubectl-edit", "body": body}
        if w < 0.78:
            return {"op": "replace-from-get", "class": "imperative", "set": ["spec", "color", "teal"]}
        if w < 0.86:
            part = {k: copy.deepcopy(v) for k, v in doc["spec"].items() if r.random() < 0.4}
            if r.random() < 0.5 or not part:
                part["containers"] = [{"name": r.choice(["main", "proxy"]), "image": "proxy:1"}]
            mgr = r.choice(["ci-hotfix", "team-b", "sidecar-injector"])
            return {"op": "apply", "class": "other-ssa", "manager": mgr, "force": r.random() < 0.5,
                    "doc": _doc(part, None, self.kind, version_of(doc))}
        if w < 0.92:
            return {"op": "many-updaters", "class": "many-updaters", "count": r.choice([10, 11, 12])}
        return {"op": "reset", "class": "reset"}

    def applier_step(self, doc: dict[str, Any], first: bool, tool: str) -> dict[str, Any]:
        """One apply of the user's manifest with ``tool``."""
        r = self.r
        if tool == "csa":
            if first and r.random() < 0.4:
                return {"op": "kubectl-create", "save_config": r.random() < 0.8, "doc": doc}
            if not first and r.random() < 0.15:
                return {"op": "kubectl-replace", "save_config": r.random() < 0.7, "doc": doc}
            return {"op": "kubectl-apply", "doc": doc}
        if tool.startswith("kubectl-ssa"):
            mgr = tool.partition(":")[2] or "kubectl"
            return {"op": "kubectl-apply-ssa", "manager": mgr, "force": r.random() < 0.3, "doc": doc}
        if tool == "helm3":
            return {"op": "helm3", "doc": doc}
        if tool == "helm4-post":
            if first:
                return {"op": "helm3", "doc": doc, "helm4": True}
            return {"op": "play", "applier": "helm", "doc": doc}
        if tool.startswith("ssa:"):
            return {"op": "apply", "manager": tool[4:], "force": r.random() < 0.5, "doc": doc}
        return {"op": "play", "applier": tool, "doc": doc}  # helm, argocd, flux, flux:helm-controller


TOOLS = ("csa", "csa", "csa", "kubectl-ssa", "kubectl-ssa:ci", "helm3", "helm4-post", "helm", "argocd", "flux",
         "ssa:deployer", "argocd-csa")


def generate(seed: int, extra_writers: bool = True) -> dict[str, Any]:
    """A case from its seed alone (``extra_writers=False``: the writers drawn apart — of metadata,
    of single list items — left as the steps they replace)."""
    r = random.Random(seed)
    # drawn apart, so that a Widget case is the same with or without Multi cases in the grammar
    kind = "Multi" if random.Random(seed * 7919 + 17).random() < MULTI_SHARE else \
        "Preset" if random.Random(seed * 7919 + 29).random() < PRESET_SHARE else \
        "Blob" if random.Random(seed * 7919 + 31).random() < BLOB_SHARE else "Widget"
    g = Gen(r, kind, *((random.Random(seed * 7919 + 43), random.Random(seed * 7919 + 47)) if extra_writers
                       else (None, None)))
    doc = g.manifest()
    tool = r.choice(TOOLS)
    steps: list[dict[str, Any]] = []
    tools = [tool]
    steps.append({**g.applier_step(doc, True, "csa" if tool == "argocd-csa" else tool), "role": "applier",
                  "class": f"applier:{tool}"})
    for _ in range(r.choice([1, 2, 3, 4, 5, 6])):
        if r.random() < 0.3:
            if r.random() < 0.25:
                tool = r.choice(TOOLS)  # the team switched tools
                tools.append(tool)
            doc = g.mutate(doc, r.choice([1, 2]))
            steps.append({**g.applier_step(doc, False, "csa" if tool == "argocd-csa" else tool), "role": "applier",
                          "class": f"applier:{tool}"})
        else:
            steps.append({**g.other_step(doc), "role": "other"})
    previous: dict[str, Any] | None = doc
    if r.random() < 0.15:
        # a new, partial applier (a hotfix pipeline, a tuner): it never applied before, so it drops
        # nothing, and everything its manifest does not set must keep its value
        applier = r.choice(PARTIAL_APPLIERS)
        part = {k: copy.deepcopy(v) for k, v in doc["spec"].items() if r.random() < 0.4}
        name = r.choice(g.fields)
        part[name] = g.field(name) if r.random() < 0.6 or name not in part else part[name]
        nxt, previous = _doc(part, None, kind, version_of(doc)), None
    else:
        nxt = g.mutate(doc, r.choice([1, 2, 3]))
        applier = r.choice(APPLIER_CHOICES)
    return {"id": f"seed-{seed}", "seed": seed, "steps": steps, "previous": previous, "manifest": nxt,
            "applier": applier, "tools": tools, **({"kind": kind} if kind != "Widget" else {})}


def writer_classes(case: Mapping[str, Any]) -> Iterator[str]:
    """The history's writer classes, for the run's counts; a Multi case also counts as ``kind:Multi``,
    and as ``several-versions`` when its writes (and the next manifest) name more than one version."""
    for s in case["steps"]:
        yield str(s.get("class", s["op"]))
    if case.get("kind"):
        yield f"kind:{case['kind']}"
        versions = {version_of(s["doc"]) for s in case["steps"] if "doc" in s}
        versions |= {str(s["version"]) for s in case["steps"] if "version" in s}
        if len(versions | {version_of(case["manifest"])}) > 1:
            yield "several-versions"
