"""The CRD validator's value constraints: seeded random writes on the lab server vs. the engine.

A ``Check`` CRD (tests/engine/check-crd.yaml: enum, integer and number bounds, exclusive bounds,
multipleOf, string lengths and pattern, list and map sizes, required fields, a list-map with
constrained items) is installed first *without* its constraints, and objects with invalid values
are stored; then the constraints are installed. Each case then writes one random object — a create
(POST), an update (PUT) of a stored object, or a server-side apply on one — and compares the
server's answer with the engine's prediction (``simulate_update`` / ``simulate_apply`` with the
CRD's rules): the status; for a 422 the set of causes (field and message; the server lists them
in Go's map order); for a success the stored spec. Updates exercise ratcheting: a stored invalid
value the write leaves alone is not reported (a stored null included), and repeated items of a set
or list-map are reported only where the stored object had none.

Numbers of the wrong kind are generated (``1.5`` or ``123456789012345680000`` where an integer
goes, int32 and float32 overflows, a number where a ``date-time`` string goes, a float or a boolean
where an int-or-string goes, ``1.5`` against ``enum: [1, 2]``): the type errors and
``Checked``/boundary range errors of the CRD validator. Strings where numbers go are not: they are
SMD's 500 for an apply and the subject of other tests. ``FIELDOWN_CONSTRAINT_CASES`` (default 120)
and ``FIELDOWN_CONSTRAINT_SEED`` (default 5) tune it.
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from engine.crdlab import causes, wait_refused
from engine.scenarios import APPLY_CT, Api
from kubectl_fieldown.fieldmanager import FieldManagerError, ResourceRules, simulate_apply, simulate_update
from kubectl_fieldown.schema.crd import kinds_from_crd
from kubectl_fieldown.schema.types import GroupVersionKind

CRD_FILE = Path(__file__).resolve().parent / "check-crd.yaml"
GVK = GroupVersionKind("example.com", "v1", "Check")
NOW = "2026-11-26T00:00:00Z"
CASES = int(os.environ.get("FIELDOWN_CONSTRAINT_CASES", "120"))
SEED = int(os.environ.get("FIELDOWN_CONSTRAINT_SEED", "5"))
STORED = 12


def tight_crd() -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load(CRD_FILE.read_text())
    return crd


def loose_crd() -> dict[str, Any]:
    """The same CRD with every value constraint and format removed, atomic lists where it has a set
    and a list-map, and a nullable ``note`` (the other types kept)."""
    crd = tight_crd()

    def strip(s: Any) -> None:
        if isinstance(s, dict):
            for k in ("enum", "multipleOf", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum",
                      "maxLength", "minLength", "pattern", "maxItems", "minItems", "maxProperties",
                      "minProperties", "required", "format"):
                if k in s and not (k == "required" and "port" in s.get("required", [])):
                    del s[k]
            for v in s.values():
                strip(v)
        elif isinstance(s, list):
            for v in s:
                strip(v)

    strip(crd["spec"]["versions"][0]["schema"])
    # and the list types and a non-nullable field loosened: stored objects may hold repeated items
    # and nulls, which the CRD validator then ratchets in its own ways
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    for name in ("tags", "ports"):
        spec[name].pop("x-kubernetes-list-type", None)
        spec[name].pop("x-kubernetes-list-map-keys", None)
    spec["note"]["nullable"] = True
    return crd


def rules() -> ResourceRules:
    return ResourceRules.for_kind(kinds_from_crd(tight_crd())[GVK], False)


# --- generated values --------------------------------------------------------------------------


def random_spec(rnd: random.Random) -> dict[str, Any]:
    sp: dict[str, Any] = {}
    if rnd.random() < .85:
        sp["mode"] = rnd.choice(["fast", "slow", "medium", ""])
    if rnd.random() < .6:
        sp["size"] = rnd.choice([0, 1, 2, 50, 99, 100, 101, -5, 10**6, 50.0, 1.5])
    if rnd.random() < .5:
        sp["ratio"] = rnd.choice([0, 0.5, 0.7, 1, 3, -1, 1.5, 2.25, 10.0, 0.25])
    if rnd.random() < .3:
        sp["limit"] = rnd.choice([0, 1, 9, 10, 11, 4.5, 10.0, 9.5])
    if rnd.random() < .5:
        sp["name"] = rnd.choice(["a", "ab", "abcde", "abcdef", "AB", "héllo", "abc", "ab1", "ééééé", "ééééééé"])
    if rnd.random() < .4:
        sp["tags"] = rnd.sample(["a", "b", "c", "d"], rnd.randint(0, 3)) if rnd.random() < .8 else ["b", "b"]
    if rnd.random() < .4:
        sp["labels"] = {k: "v" for k in rnd.sample(["a", "b", "c", "d"], rnd.randint(0, 3))}
    if rnd.random() < .4:
        ports = rnd.sample([80, 443, 70000, 0, 8080], rnd.randint(0, 3)) if rnd.random() < .8 else [443, 443]
        sp["ports"] = [{"port": p, **({"proto": rnd.choice(["TCP", "UDP", "SCTP"])} if rnd.random() < .7 else {})}
                       for p in ports]
    # numbers as the server gives them back: an int beyond int64 is the digits Go prints for its
    # float64 (2**63 is 9223372036854776000), so a stored spec compares equal
    if rnd.random() < .3:
        sp["big"] = rnd.choice([7, -3, 2.0, 1.5, 1.0000000001, 2**53 + 2, 2**63 - 1, -(2**63), 9223372036854776000,
                                18446744073709552000, 123456789012345680000, 1e21, 1e25, -1e19])
    if rnd.random() < .3:
        sp["i32"] = rnd.choice([0, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 3.0, 2.5, 2**40])
    if rnd.random() < .3:
        sp["f32"] = rnd.choice([1.5, 7, 3.4e38, 3.5e38, -1e39, 1e-50, 2**63 - 1])
    if rnd.random() < .3:
        sp["coarse"] = rnd.choice([0, 5, 7, 8, 10, 2.5])
    if rnd.random() < .2:
        sp["when"] = rnd.choice(["2026-01-01T00:00:00Z", 5, True, 1.5])
    if rnd.random() < .3:
        sp["surge"] = rnd.choice([5, 11, "25%", "100%", 1.5, 2.0, True, None, 123456789012345680000])
    if rnd.random() < .2:
        sp["level"] = rnd.choice([1, 2, 3, 1.5, 2.0])
    if rnd.random() < .3:
        sp["note"] = rnd.choice(["x", None])
    if rnd.random() < .3:
        sp["extra"] = rnd.choice([{}, {"free": 1}, {"must": True}, {"must": 1, "free": [1, 2]}])
    return sp


def mutated(rnd: random.Random, spec: dict[str, Any]) -> dict[str, Any]:
    """A new spec that keeps some of the stored values (what ratcheting is about)."""
    new = copy.deepcopy(spec)
    for _ in range(rnd.randint(1, 3)):
        fresh = random_spec(rnd)
        key = rnd.choice(["mode", "size", "ratio", "limit", "name", "tags", "labels", "ports", "big", "i32", "f32",
                          "coarse", "when", "surge", "level", "note", "extra"])
        if key in fresh:
            new[key] = fresh[key]
        elif rnd.random() < .5:
            new.pop(key, None)
    if "ports" in new and new["ports"] and rnd.random() < .5:
        new["ports"][0] = {**new["ports"][0], "proto": rnd.choice(["TCP", "SCTP"])}
    if "ports" in new and rnd.random() < .3:
        new["ports"] = list(reversed(new["ports"]))  # the same list-map, as ratcheting matches items
    return new


# --- the lab -----------------------------------------------------------------------------------


@dataclass
class Lab:
    api: Api
    namespace: str
    stored: dict[str, dict[str, Any]]

    def path(self, name: str | None = None) -> str:
        return f"/apis/example.com/v1/namespaces/{self.namespace}/checks" + (f"/{name}" if name else "")


def _body(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


@pytest.fixture(scope="module")
def check_lab(cluster: lab.Cluster) -> Iterator[Lab]:
    cluster.apply_crd(loose_crd())
    api = Api(str(cluster.kubeconfig))
    ns = f"constraints-{random.Random().randrange(16**8):08x}"
    lab_ = Lab(api, ns, {})
    rnd = random.Random(SEED)
    for i in range(STORED):
        name = f"stored-{i}"
        for _ in range(20):
            # a number of the wrong type is refused even without the constraints: draw again
            r = api.request("POST", lab_.path(), _body(ns, name, random_spec(rnd)))
            if r.status != 422:
                break
        assert r.status == 201, r.body
        lab_.stored[name] = r.body
    cluster.apply_crd(tight_crd())
    # the constraints are picked up asynchronously: until a value only they forbid is refused
    wait_refused(api, lab_.path(), _body(ns, "probe", {"mode": "medium"}))
    yield lab_


def predicted(op: str, live: dict[str, Any] | None, body: dict[str, Any]) -> tuple[int, Any]:
    try:
        if op == "apply":
            res = simulate_apply(live, body, "tester", rules(), now=NOW)
        else:
            res = simulate_update(live, body, "tester", rules(), now=NOW)
    except FieldManagerError as e:
        return e.status, e
    return 200, res.object


@pytest.mark.parametrize("case", range(CASES))
def test_constraints_match_the_server(check_lab: Lab, case: int) -> None:
    rnd = random.Random(SEED * 100000 + case)
    op = rnd.choice(["create", "update", "apply", "apply-create"])
    name = f"c{case}"
    live: dict[str, Any] | None = None
    if op in ("update", "apply"):
        stored_name = rnd.choice(sorted(check_lab.stored))
        # every write is a dry run: the stored objects (invalid under the new schema) stay as they are
        name = stored_name
        got = check_lab.api.request("GET", check_lab.path(name))
        assert got.status == 200, got.body
        live = got.body
        spec = mutated(rnd, live["spec"])
    else:
        spec = random_spec(rnd)
    body = _body(check_lab.namespace, name, spec)
    if op == "create":
        resp = check_lab.api.request("POST", check_lab.path(), body, query=[("dryRun", "All")])
    elif op == "update":
        assert live is not None
        put = copy.deepcopy(body)
        put["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
        resp = check_lab.api.request("PUT", check_lab.path(name), put, query=[("dryRun", "All")])
    else:
        if op == "apply-create":
            name = f"new-{case}"
            body = _body(check_lab.namespace, name, spec)
        resp = check_lab.api.request("PATCH", check_lab.path(name), body, APPLY_CT,
                                     query=[("fieldManager", "tester"), ("dryRun", "All")])
    status, got = predicted("apply" if op.startswith("apply") else "update", live, body)
    where = f"{op} of {json.dumps(spec)}" + (f" on stored {json.dumps(live['spec'])}" if live else "")
    server_status = 200 if resp.status in (200, 201) else resp.status
    assert server_status == status, f"{where}: server {resp.status} {resp.body}, predicted {status} {got}"
    if status == 422:
        want = causes(resp.body)
        have = {(c["field"], c["message"]) for c in got.causes}
        assert have == want, f"{where}:\n server    {sorted(want)}\n predicted {sorted(have)}"
    elif status == 200:
        assert got["spec"] == resp.body["spec"], where


def test_the_generator_reaches_every_kind_of_violation() -> None:
    """The generated values violate every constraint of the CRD somewhere (and pass them too), so
    the differential above can fail on each."""
    seen: set[str] = set()
    details: set[str] = set()
    ok = 0
    for case in range(CASES):
        rnd = random.Random(SEED * 100000 + case)
        body = _body("ns", "x", random_spec(rnd))
        for op in ("update", "apply"):  # (an update drops the nulls an apply has validated)
            status, got = predicted(op, None, body)
            if status == 422:
                seen |= {c["message"].split(":")[0] for c in got.causes}
                details |= {c["message"] for c in got.causes}
            else:
                ok += 1
    assert ok > 0
    assert {"Required value", "Unsupported value", "Too long", "Too many", "Invalid value"} <= seen, seen
    texts = " ".join(sorted(details))
    for words in ('must be of type integer: "number"', "must be of type int32", "must be of type date-time",
                  'must be of type integer,string: "number"', 'must be of type integer,string: "null"',
                  "Checked value must be of type integer (default format)",
                  "Checked value must be of type integer with format int32",
                  "Checked value must be of type number with format float",
                  "Maximum boundary value", "MultipleOf value"):
        assert words in texts, words
