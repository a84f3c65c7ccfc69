"""The strategic merge patch (appliers/strategic.py, smpmerge.py, smpmeta.py) against apimachinery's
own ``strategicpatch`` package with the compiled-in Go types (hack/upstream-smp/main.go, built from
the lab's Debian Go sources by tests/upstream_oracle.py): seeded random last-applied
configurations, manifests and live objects of built-in kinds (Deployment, StatefulSet, DaemonSet,
Job, CronJob, Pod, Service, ConfigMap, Secret, Ingress), the three-way patch kubectl computes
(exactly, as JSON) and the object the server makes of it (or the library's error, word for word).

The inputs mix what makes the patch interesting: merge lists keyed by name, containerPort, port
(repeated, as DNS's 53/TCP and 53/UDP), mountPath; merge lists of scalars (finalizers) in any order;
retainKeys (a Deployment's strategy, volume sources); atomic lists (tolerations, args); nulls in
manifests; items another writer added; whole floats and integers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import upstream_oracle

from kubectl_fieldown.appliers.run import client_side_modified
from kubectl_fieldown.appliers.smpmeta import patch_meta_for
from kubectl_fieldown.appliers.strategic import (
    StrategicPatchError,
    apply_strategic_patch,
    client_side_strategic_patch,
    go_decoded,
)
from kubectl_fieldown.base.value import go_json

SOURCE = Path(__file__).resolve().parents[2] / "hack" / "upstream-smp" / "main.go"
SEEDS = range(560)


@pytest.fixture(scope="module")
def oracle() -> Iterator[upstream_oracle.UpstreamOracle]:
    o = upstream_oracle.UpstreamOracle(upstream_oracle.build(source=SOURCE))
    yield o
    o.close()


def _some(rng: random.Random, items: list[Any], shuffle: bool = True) -> list[Any]:
    out = [x for x in items if rng.random() < 0.5]
    if shuffle:
        rng.shuffle(out)
    return out


def _map(rng: random.Random, keys: list[str], values: list[Any]) -> dict[str, Any]:
    return {k: rng.choice(values) for k in _some(rng, keys)}


def _container(rng: random.Random, name: str) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": rng.choice(["nginx:1.25", "nginx:1.27", "envoy:1"])}
    if rng.random() < 0.5:
        # now and then a long list: Go sorts more than 12 items (sort.Sort) and more than 20
        # (sort.SliceStable's merges) otherwise than a short one
        names = ["A", "B", "C"] if rng.random() < 0.8 else [f"V{i:02d}" for i in range(rng.choice([15, 30, 45]))]
        c["env"] = [{"name": n, "value": rng.choice(["1", "2"])} for n in _some(rng, names)]
    if rng.random() < 0.5:
        c["ports"] = [{"containerPort": p, **({"protocol": "TCP"} if rng.random() < 0.3 else {})}
                      for p in _some(rng, [80, 443, 8080])]
    if rng.random() < 0.3:
        c["args"] = _some(rng, ["--a", "--b", "--c"])
    if rng.random() < 0.3:
        c["volumeMounts"] = [{"name": "data", "mountPath": m} for m in _some(rng, ["/data", "/cache"])]
    if rng.random() < 0.3:
        c["resources"] = {"limits": _map(rng, ["cpu", "memory"], ["1", "100m", 2, 2.0, 1.5])}
    if rng.random() < 0.1:
        c["imagePullPolicy"] = None
    return c


def _volume(rng: random.Random, name: str) -> dict[str, Any]:
    source = rng.choice([{"emptyDir": {}}, {"emptyDir": {"medium": "Memory"}}, {"configMap": {"name": "cm"}},
                         {"secret": {"secretName": "s"}}])
    return {"name": name, **source}


def _pod_spec(rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [_container(rng, n) for n in _some(rng, ["main", "side", "proxy"])]}
    if rng.random() < 0.5:
        spec["volumes"] = [_volume(rng, n) for n in _some(rng, ["data", "cache"])]
    if rng.random() < 0.3:
        spec["nodeSelector"] = _map(rng, ["disk", "zone"], ["ssd", "a", "b"])
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": k, "operator": "Exists"} for k in _some(rng, ["x", "y"])]
    if rng.random() < 0.2:
        spec["initContainers"] = [_container(rng, n) for n in _some(rng, ["init", "setup"])]
    return spec


def _metadata(rng: random.Random, name: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "ns"}
    if rng.random() < 0.6:
        md["labels"] = _map(rng, ["app", "team", "tier"], ["a", "b"])
    if rng.random() < 0.3:
        md["annotations"] = _map(rng, ["note", "owner"], ["x", "y"])
    if rng.random() < 0.3:
        md["finalizers"] = _some(rng, ["example.com/a", "example.com/b", "example.com/c"])
    return md


def _config(rng: random.Random, kind: str) -> dict[str, Any]:
    """A manifest (also a live object's content) of ``kind``."""
    if kind == "ConfigMap":
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": _metadata(rng, "cm")}
        if rng.random() < 0.8:
            obj["data"] = _map(rng, ["k1", "k2", "k3"], ["v1", "v2", None] if rng.random() < 0.2 else ["v1", "v2"])
        return obj
    if kind == "Service":
        ports = []
        for port, proto, name in _some(rng, [(53, "UDP", "dns"), (53, "TCP", "dns-tcp"), (80, "TCP", "http"),
                                             (443, None, "https")]):
            p: dict[str, Any] = {"port": port, "name": name}
            if proto:
                p["protocol"] = proto
            if rng.random() < 0.3:
                p["targetPort"] = rng.choice([8080, "http"])
            ports.append(p)
        spec: dict[str, Any] = {"selector": _map(rng, ["app", "tier"], ["a", "b"]), "ports": ports}
        if rng.random() < 0.3:
            spec["type"] = rng.choice(["ClusterIP", "NodePort"])
        return {"apiVersion": "v1", "kind": kind, "metadata": _metadata(rng, "svc"), "spec": spec}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": kind, "metadata": _metadata(rng, "pod"), "spec": _pod_spec(rng)}
    if kind == "Secret":
        obj = {"apiVersion": "v1", "kind": kind, "metadata": _metadata(rng, "s"), "type": "Opaque"}
        if rng.random() < 0.7:
            obj["data"] = _map(rng, ["user", "token"], ["dXNlcg==", "c2VjcmV0"])
        if rng.random() < 0.3:
            obj["stringData"] = _map(rng, ["pass"], ["p", "q"])
        return obj
    if kind == "Ingress":
        rules = [{"host": h, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
            "service": {"name": "svc", "port": {"number": rng.choice([80, 443])}}}}]}}
            for h in _some(rng, ["a.example.com", "b.example.com"])]
        spec = {"rules": rules}
        if rng.random() < 0.3:
            spec["tls"] = [{"hosts": _some(rng, ["a.example.com", "b.example.com"]), "secretName": "tls"}]
        return {"apiVersion": "networking.k8s.io/v1", "kind": kind, "metadata": _metadata(rng, "ing"), "spec": spec}
    template = {"metadata": {"labels": {"app": "a"}}, "spec": _pod_spec(rng)}
    if kind in ("Job", "CronJob"):
        job: dict[str, Any] = {"template": template}
        if rng.random() < 0.5:
            job["backoffLimit"] = rng.choice([1, 6])
        if kind == "Job":
            return {"apiVersion": "batch/v1", "kind": kind, "metadata": _metadata(rng, "job"), "spec": job}
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": _metadata(rng, "cj"),
                "spec": {"schedule": rng.choice(["* * * * *", "0 * * * *"]), "jobTemplate": {"spec": job}}}
    spec = {"selector": {"matchLabels": {"app": "a"}}, "template": template}
    if rng.random() < 0.5 and kind != "DaemonSet":
        spec["replicas"] = rng.choice([1, 2, 3, None])
    if rng.random() < 0.5:
        if kind == "Deployment":
            spec["strategy"] = rng.choice([
                {"type": "Recreate"},
                {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": rng.choice([1, "25%"]), "maxUnavailable": 0}}])
        else:
            spec["updateStrategy"] = rng.choice([{"type": "OnDelete"},
                                                 {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}])
    if kind == "StatefulSet" and rng.random() < 0.4:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": n}, "spec": {"accessModes": ["ReadWriteOnce"]}}
                                        for n in _some(rng, ["data", "logs"])]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": _metadata(rng, "w"), "spec": spec}


def _odd(rng: random.Random, obj: dict[str, Any]) -> dict[str, Any]:
    """Now and then something a manifest should not hold, which the library refuses or treats its
    own way: directives, an item without its merge key, a null item, a value of another type, a
    field the Go types do not have."""
    spec = obj.get("spec")
    pod = spec.get("template", {}).get("spec") if isinstance(spec, dict) and "template" in spec else spec
    choice = rng.randrange(9)
    md = obj["metadata"]
    if choice == 0:
        md["labels"] = {**(md.get("labels") or {}), "$patch": rng.choice(["replace", "delete", "merge"])}
    elif choice == 1:
        md["finalizers"] = [*(md.get("finalizers") or []), rng.choice(["example.com/a", 3, None])]
    elif choice == 2:
        md["labels"] = {"app": {"nested": "x"}}
    elif choice == 3:
        obj["unknownField"] = {"a": rng.choice([1, "x"])}
    elif isinstance(pod, dict) and "containers" in pod:
        containers = pod["containers"]
        if choice == 4:
            containers.append({"image": "nameless"})
        elif choice == 5:
            containers.append({"name": rng.choice(["main", "gone"]), "$patch": rng.choice(["delete", "replace"])})
        elif choice == 6:
            containers.append(None)
        elif choice == 7:
            pod["nodeSelector"] = {"disk": "ssd", "$patch": "replace"}
        else:
            pod["containers"] = {"name": "main"}
    return obj


def _live(rng: random.Random, kind: str, original_text: str | None) -> dict[str, Any]:
    """A live object: another configuration, as if other writers changed it, with the annotation."""
    live = go_decoded(_config(rng, kind))
    if original_text is not None:
        live["metadata"].setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = \
            original_text
    live["metadata"]["uid"] = "u"
    return _without_nulls(live)


def _without_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_without_nulls(x) for x in v]
    return v


KINDS = ["Deployment", "Pod", "Service", "ConfigMap", "Deployment", "Pod", "Service", "ConfigMap",
         "StatefulSet", "DaemonSet", "Job", "CronJob", "Ingress", "Secret"]
API_VERSIONS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "Job": "batch/v1",
                "CronJob": "batch/v1", "Ingress": "networking.k8s.io/v1"}


@pytest.mark.parametrize("seed", SEEDS)
def test_three_way_patch_and_its_application_match_apimachinery(oracle: upstream_oracle.UpstreamOracle,
                                                                seed: int) -> None:
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    meta = patch_meta_for(API_VERSIONS.get(kind, "v1"), kind)
    assert meta is not None
    first = _config(rng, kind)
    original_text = client_side_modified(_odd(rng, first) if rng.random() < 0.1 else first)[0] \
        if rng.random() < 0.85 else None
    second = _config(rng, kind)
    _, modified = client_side_modified(_odd(rng, second) if rng.random() < 0.15 else second)
    live = _live(rng, kind, original_text)
    original = json.loads(original_text) if original_text is not None else None

    want = oracle.ask({"op": "three-way", "kind": kind, "original": original_text, "modified": go_json(modified),
                       "current": go_json(live)})
    got = client_side_strategic_patch(modified, live, original, meta)
    if "failed" in want or "panic" in want:
        failure = want.get("failed", want.get("panic"))
        assert isinstance(got, StrategicPatchError), f"kubectl fails: {failure}; we computed {got}"
        assert str(got) == failure
        return
    assert not isinstance(got, StrategicPatchError), f"we failed: {got}; kubectl sends {want['patch']}"
    assert go_json(got) == go_json(want["patch"])

    server = oracle.ask({"op": "apply", "kind": kind, "object": go_json(live), "patch": go_json(got)})
    try:
        result: Any = apply_strategic_patch(go_decoded(live), got, meta)
    except StrategicPatchError as e:
        result = e
    if "failed" in server or "panic" in server:
        failure = server.get("failed", server.get("panic"))
        assert isinstance(result, StrategicPatchError), f"the server fails: {failure}; we made {result}"
        assert str(result) == failure
        return
    assert not isinstance(result, StrategicPatchError), f"we failed: {result}; the server made {server['object']}"
    assert go_json(result) == go_json(server["object"])
