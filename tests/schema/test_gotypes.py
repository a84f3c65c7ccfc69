"""The Go round trip of built-in kinds (kubectl_fieldown.schema.gotypes).

The recorded built-in conformance objects went through the real Go round trip, so they must be
fixed points of ``normalize``, down to the key order. The slow tests compare ``normalize`` with
the real ``encoding/json`` on random objects, and the committed data file with a fresh run of
the generator; both need the lab's Go toolchain and k8s.io sources (hack/lab/build.sh).
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lab
import pytest

from kubectl_fieldown.schema import GroupVersionKind, KindSchema, gotypes
from kubectl_fieldown.schema.gotypes import builtin_zero, normalize, normalizer_for, with_builtin_zero

REPO = Path(__file__).resolve().parents[2]
BUILTIN_CASES = sorted((REPO / "tests" / "conformance" / "builtin").glob("*.json"))


def _without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj.get("metadata", {}).pop("managedFields", None)
    return obj


def _recorded_objects() -> list[Any]:
    params = []
    for path in BUILTIN_CASES:
        case = json.loads(path.read_text())
        gvk = (case["builtin"]["apiVersion"], case["builtin"]["kind"])
        objs = [("live", case["live"])]
        objs += [(k, case[k]["object"]) for k in ("expect", "expectForced") if case[k]["status"] == 200]
        params += [pytest.param(gvk, obj, id=f"{path.stem}-{name}") for name, obj in objs]
    return params


# ---- the data file ----------------------------------------------------------------------


def test_generator_header() -> None:
    info = gotypes.generator_info()
    assert info["kubernetes"] == "1.36.4"
    assert info["go"].startswith("go1.27")
    assert info["scheme"] == "k8s.io/client-go/kubernetes/scheme.Scheme"
    assert gotypes.DATA_FILE == "builtin-go-types-1.36.json"


def test_kinds_cover_the_common_built_ins_and_skip_lists() -> None:
    kinds = set(gotypes.builtin_kinds())
    for k in ("apps/v1/Deployment", "apps/v1/StatefulSet", "v1/Pod", "v1/Service", "v1/ConfigMap", "v1/Secret",
              "v1/Event", "batch/v1/Job", "networking.k8s.io/v1/Ingress", "rbac.authorization.k8s.io/v1/Role",
              "autoscaling/v2/HorizontalPodAutoscaler", "policy/v1/PodDisruptionBudget"):
        assert k in kinds
    assert not any(k.endswith("List") for k in kinds)
    assert not any("__internal" in k or k.endswith(("Options", "/WatchEvent", "/Status")) for k in kinds)


# ---- zero objects -----------------------------------------------------------------------


def test_deployment_zero() -> None:
    # k8s.io/apimachinery 0.36 tags ObjectMeta.CreationTimestamp `omitempty,omitzero`, so the zero
    # Time is omitted instead of printed as null (older versions: "creationTimestamp": null).
    assert builtin_zero("apps/v1", "Deployment") == {
        "metadata": {},
        "spec": {
            "selector": None,
            "template": {"metadata": {}, "spec": {"containers": None}},
            "strategy": {},
        },
        "status": {},
    }
    assert json.dumps(builtin_zero("apps/v1", "Deployment"), separators=(",", ":")) == (
        '{"metadata":{},"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},'
        '"strategy":{}},"status":{}}'
    )


def test_recorded_deployments_agree_on_creation_timestamp() -> None:
    """The recorded 1.36 objects show the omitzero too: pod templates have ``metadata: {}``."""
    seen = 0
    for path in BUILTIN_CASES:
        case = json.loads(path.read_text())
        template = case["live"].get("spec", {}).get("template")
        if template is not None:
            assert "creationTimestamp" not in template["metadata"]
            seen += 1
    assert seen > 0


@pytest.mark.parametrize(
    ("api_version", "kind", "zero"),
    [
        ("v1", "Pod", {"metadata": {}, "spec": {"containers": None}, "status": {}}),
        ("v1", "Service", {"metadata": {}, "spec": {}, "status": {"loadBalancer": {}}}),
        ("v1", "ConfigMap", {"metadata": {}}),
        ("apps/v1", "ControllerRevision", {"metadata": {}, "data": None, "revision": 0}),
    ],
)
def test_other_zeros(api_version: str, kind: str, zero: dict[str, Any]) -> None:
    assert builtin_zero(api_version, kind) == zero


def test_zero_is_a_fresh_copy_and_unknown_kinds_have_none() -> None:
    a = builtin_zero("apps/v1", "Deployment")
    assert a is not None
    a["spec"]["strategy"]["type"] = "Recreate"
    assert builtin_zero("apps/v1", "Deployment") == normalize({}, "apps/v1", "Deployment")
    assert builtin_zero("example.com/v1", "Widget") is None
    assert builtin_zero("v1", "PodList") is None


def test_every_zero_is_a_fixed_point() -> None:
    for key in gotypes.builtin_kinds():
        api_version, kind = key.rsplit("/", 1)
        zero = builtin_zero(api_version, kind)
        assert zero is not None
        assert normalize(zero, api_version, kind) == zero, key
        assert normalize({}, api_version, kind) == zero, key


def test_with_builtin_zero() -> None:
    from kubectl_fieldown.schema import UNTYPED

    gvk = GroupVersionKind("apps", "v1", "Deployment")
    schema = with_builtin_zero(KindSchema(gvk=gvk, root=UNTYPED, source="test"))
    assert schema.zero == builtin_zero("apps/v1", "Deployment")
    custom = KindSchema(gvk=GroupVersionKind("example.com", "v1", "Widget"), root=UNTYPED, source="test")
    assert with_builtin_zero(custom) is custom
    preset = KindSchema(gvk=gvk, root=UNTYPED, source="test", zero={"x": 1})
    assert with_builtin_zero(preset) is preset


# ---- normalize: the recorded objects are fixed points ------------------------------------


def test_recorded_corpus_is_complete() -> None:
    kinds = {tuple(json.loads(p.read_text())["builtin"].values()) for p in BUILTIN_CASES}
    assert kinds == {("apps/v1", "Deployment"), ("v1", "Pod"), ("v1", "Service"), ("v1", "ConfigMap")}
    assert len(BUILTIN_CASES) >= 70


@pytest.mark.parametrize(("gvk", "obj"), _recorded_objects())
def test_recorded_object_is_a_fixed_point(gvk: tuple[str, str], obj: dict[str, Any]) -> None:
    obj = _without_managed_fields(obj)
    before = json.dumps(obj)
    got = normalize(obj, *gvk)
    assert got == obj
    assert json.dumps(got) == before  # same key order too: Go field order
    assert json.dumps(obj) == before  # input unchanged
    fn = normalizer_for(*gvk)
    assert fn is not None
    assert fn(obj) == obj


def test_managed_fields_round_trip() -> None:
    """With managedFields kept: entries without ``time`` stay without it (``*Time``, omitempty)."""
    path = REPO / "tests" / "conformance" / "builtin" / "cur-svc-ports-two-keys.json"
    live = json.loads(path.read_text())["live"]
    assert normalize(live, "v1", "Service") == live


# ---- normalize: crafted inputs ----------------------------------------------------------


def test_service_port_gets_target_port_zero() -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"ports": [{"port": 80, "protocol": "TCP"}]}}
    got = normalize(svc, "v1", "Service")
    assert got["spec"]["ports"] == [{"protocol": "TCP", "port": 80, "targetPort": 0}]
    assert got["status"] == {"loadBalancer": {}}
    assert got["apiVersion"] == "v1" and got["kind"] == "Service"


def test_container_gets_empty_resources() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    got = normalize(pod, "v1", "Pod")
    assert got == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {}}]},
        "status": {},
    }


def test_deployment_without_strategy_gets_empty_strategy_and_omitempty_drops_paused_false() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 2, "paused": False, "selector": {"matchLabels": {"app": "a"}},
                    "template": {"metadata": {"labels": {"app": "a"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    got = normalize(dep, "apps/v1", "Deployment")
    assert "paused" not in got["spec"]
    assert got["spec"]["strategy"] == {}
    assert got["spec"]["replicas"] == 2
    assert got["spec"]["template"]["spec"]["containers"] == [{"name": "c", "image": "i", "resources": {}}]
    assert dep["spec"]["paused"] is False and "strategy" not in dep["spec"]  # input untouched
    assert normalize({"spec": {"paused": True}}, "apps/v1", "Deployment")["spec"]["paused"] is True


def test_unknown_fields_are_dropped_at_every_level() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "bogus": 1, "metadata": {"name": "c", "Name": "x", "extra": {}},
           "data": {"a": "b"}}
    assert normalize(obj, "v1", "ConfigMap") == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                                 "data": {"a": "b"}}
    pod = {"spec": {"containers": [{"name": "c", "imagePullPolicyy": "Always", "ports": [{"containerPort": 80,
                                                                                          "x": 1}]}]}}
    assert normalize(pod, "v1", "Pod")["spec"]["containers"] == [
        {"name": "c", "ports": [{"containerPort": 80}], "resources": {}}
    ]


def test_null_pointer_struct_is_dropped_when_omitempty() -> None:
    dep = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": None}, "revisionHistoryLimit": None}}
    got = normalize(dep, "apps/v1", "Deployment")
    assert got["spec"]["strategy"] == {"type": "RollingUpdate"}
    assert "revisionHistoryLimit" not in got["spec"]
    pod = {"spec": {"securityContext": None, "containers": []}}
    assert normalize(pod, "v1", "Pod")["spec"] == {"containers": []}


def test_null_into_non_pointer_values_gives_their_zero() -> None:
    # a non-pointer struct: zero struct; a map value / list item string: ""; a slice: nil
    dep = {"spec": {"template": None, "selector": None}, "status": None}
    got = normalize(dep, "apps/v1", "Deployment")
    assert got == builtin_zero("apps/v1", "Deployment")
    cm = {"data": {"a": None}, "binaryData": None}
    assert normalize(cm, "v1", "ConfigMap") == {"metadata": {}, "data": {"a": ""}}
    svc = {"spec": {"ports": [None], "selector": {"a": None}}}
    assert normalize(svc, "v1", "Service")["spec"] == {"ports": [{"port": 0, "targetPort": 0}], "selector": {"a": ""}}


def test_custom_types() -> None:
    # metav1.Time with omitzero: null dropped, a time kept; IntOrString kept as given, null -> 0;
    # Quantity kept as given
    pod = {"metadata": {"creationTimestamp": None}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "100m", "memory": "1Gi"}},
         "livenessProbe": {"httpGet": {"port": "http"}}, "readinessProbe": {"tcpSocket": {"port": None}}}]}}
    got = normalize(pod, "v1", "Pod")
    assert got["metadata"] == {}
    c = got["spec"]["containers"][0]
    assert c["resources"] == {"limits": {"cpu": "100m", "memory": "1Gi"}}
    assert c["livenessProbe"] == {"httpGet": {"port": "http"}}
    assert c["readinessProbe"] == {"tcpSocket": {"port": 0}}
    stamped = {"metadata": {"creationTimestamp": "2026-11-22T03:12:41Z"}}
    assert normalize(stamped, "v1", "ConfigMap") == stamped
    # a non-omitempty custom struct (ControllerRevision.data: RawExtension) prints its zero: null
    assert normalize({}, "apps/v1", "ControllerRevision")["data"] is None
    assert normalize({"data": {"x": [1]}}, "apps/v1", "ControllerRevision")["data"] == {"x": [1]}


def test_integral_numbers_become_ints() -> None:
    got = normalize({"spec": {"replicas": 3.0, "minReadySeconds": 0.0}}, "apps/v1", "Deployment")
    assert got["spec"]["replicas"] == 3 and isinstance(got["spec"]["replicas"], int)
    assert "minReadySeconds" not in got["spec"]  # 0 after conversion: omitempty


def test_unknown_kind_and_non_objects_are_returned_as_is() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"anything": None}}
    assert normalize(widget, "example.com/v1", "Widget") is widget
    assert normalizer_for("example.com/v1", "Widget") is None
    fn = normalizer_for("v1", "ConfigMap")
    assert fn is not None
    assert fn({"data": {"k": "v"}, "x": 1}) == {"metadata": {}, "data": {"k": "v"}}


def test_output_shares_nothing_with_the_input() -> None:
    obj = {"data": {"x": [1, {"a": 2}]}, "metadata": {"labels": {"a": "b"}}}
    got = normalize(obj, "apps/v1", "ControllerRevision")
    got["data"]["x"][1]["a"] = 3
    got["metadata"]["labels"]["a"] = "c"
    assert obj == {"data": {"x": [1, {"a": 2}]}, "metadata": {"labels": {"a": "b"}}}


# ---- against real Go (slow; needs the lab's toolchain and sources) ------------------------

_ROUNDTRIP_GO = r"""
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	sigsjson "sigs.k8s.io/json"
)

// stdin lines {"apiVersion", "kind", "obj"}: decode obj into the kind's Go struct as the API
// server's JSON serializer does (case-sensitive), print json.Marshal of it, or {"error": ...}.
func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for sc.Scan() {
		var in struct {
			APIVersion string          `json:"apiVersion"`
			Kind       string          `json:"kind"`
			Obj        json.RawMessage `json:"obj"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			panic(err)
		}
		gv, err := schema.ParseGroupVersion(in.APIVersion)
		if err != nil {
			panic(err)
		}
		o, err := scheme.Scheme.New(gv.WithKind(in.Kind))
		if err != nil {
			panic(err)
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(in.Obj, o); err != nil {
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			fmt.Fprintf(out, "%s\n", b)
			continue
		}
		b, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(out, "%s\n", b)
	}
}
"""


def _lab_go() -> tuple[Path, Path]:
    prefix = lab.lab_prefix()
    goroots = sorted((prefix / "go-root" / "usr" / "lib").glob("go-*"))
    gosrc = prefix / "gosrc" / "usr" / "share" / "gocode"
    if not goroots or not (goroots[0] / "bin" / "go").is_file() or not (gosrc / "src" / "k8s.io" / "api").is_dir():
        pytest.skip(f"no lab Go toolchain/sources under {prefix} (run hack/lab/build.sh)")
    return goroots[0], gosrc


def _go_env(goroot: Path, gopath: str) -> dict[str, str]:
    return dict(
        os.environ,
        GOROOT=str(goroot),
        PATH=f"{goroot / 'bin'}:{os.environ.get('PATH', '')}",
        GO111MODULE="off", GOFLAGS="", GOTOOLCHAIN="local", GOPROXY="off", GOSUMDB="off", GOTELEMETRY="off",
        CGO_ENABLED="0", GOPATH=gopath, GOCACHE=str(lab.lab_prefix() / "gocache"),
    )


_CUSTOM_VALUES: Mapping[str, list[Any]] = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": ["2024-01-01T00:00:00Z", "2026-11-22T03:12:41Z"],
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": ["2024-01-01T00:00:00.123456Z"],
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": [0, 5, "x", "80%", ""],
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ["1", "100m", "2Gi", "0"],  # canonical forms only
    "io.k8s.apimachinery.pkg.runtime.RawExtension": [{"a": 1}, [1], "s", 3],
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": [{"f:a": {}}],
}


def _random_value(desc: Mapping[str, Any], r: random.Random, depth: int) -> Any:
    kind = desc["kind"]
    if r.random() < 0.12:
        return None
    if kind == "ptr":
        return _random_value(desc["elem"], r, depth)
    if kind == "struct":
        out: dict[str, Any] = {}
        if depth <= 6:
            for name, fdesc, _, _ in gotypes._fields(desc["type"]):
                if r.random() < 0.45:
                    out[name] = _random_value(fdesc, r, depth + 1)
            if r.random() < 0.2:
                out["zzUnknown"] = {"a": 1}
            if out and r.random() < 0.1:
                out[next(iter(out)).upper()] = "wrong case"
        return out
    if kind == "slice":
        return [_random_value(desc["elem"], r, depth + 1) for _ in range(r.choice([0, 0, 1, 2]))]
    if kind == "map":
        return {f"k{i}": _random_value(desc["elem"], r, depth + 1) for i in range(r.choice([0, 1, 2]))}
    if kind == "custom":
        return r.choice(_CUSTOM_VALUES[desc["type"]])
    choices: Mapping[str, list[Any]] = {
        "string": ["", "x"], "int": [0, 1, 7], "float": [0, 1.5, 2], "bool": [True, False],
        "bytes": ["", "aGk="], "interface": [{"a": None}, 1, "s"],
    }
    return r.choice(choices[kind])


@pytest.mark.slow
def test_normalize_matches_go_on_random_objects(tmp_path: Path) -> None:
    goroot, gosrc = _lab_go()
    pkg = tmp_path / "src" / "k8slab.local" / "roundtrip"
    pkg.mkdir(parents=True)
    (pkg / "main.go").write_text(_ROUNDTRIP_GO)
    env = _go_env(goroot, f"{tmp_path}:{gosrc}")
    subprocess.run(["go", "build", "-o", str(tmp_path / "rt"), "k8slab.local/roundtrip"],
                   cwd=tmp_path, env=env, check=True, capture_output=True)

    r = random.Random(20261122)
    cases = []
    for key in gotypes.builtin_kinds():
        api_version, kind = key.rsplit("/", 1)
        type_id = gotypes._data()["kinds"][key]["type"]
        for _ in range(12):
            obj = _random_value({"kind": "struct", "type": type_id}, r, 0) or {}
            if r.random() < 0.5:
                obj.update(apiVersion=api_version, kind=kind)
            cases.append((api_version, kind, obj))
    stdin = "".join(json.dumps({"apiVersion": a, "kind": k, "obj": o}) + "\n" for a, k, o in cases)
    lines = subprocess.run([str(tmp_path / "rt")], input=stdin, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert len(lines) == len(cases)
    compared = 0
    for (api_version, kind, obj), line in zip(cases, lines, strict=True):
        want = json.loads(line)
        if set(want) == {"error"}:
            continue  # Go rejects it (e.g. a wrong-case duplicate of a field): nothing to compare
        compared += 1
        got = normalize(obj, api_version, kind)
        assert json.dumps(got) == json.dumps(want), (api_version, kind, obj)
    assert compared > len(cases) * 0.8


@pytest.mark.slow
def test_committed_data_file_is_what_the_generator_writes() -> None:
    _lab_go()
    proc = subprocess.run([str(REPO / "hack" / "gen-builtin-types.sh")], env=dict(os.environ, CHECK="1"),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
