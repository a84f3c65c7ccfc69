"""``allOf``/``anyOf``/``oneOf``/``not`` of flat subschemas: seeded random values on the lab server vs.
the engine (typed/constraints.py ``_composites``).

A ``Comp`` CRD has a field per kind of composite a CRD writes (kubebuilder's int-or-string
``anyOf``, string and number constraints in ``anyOf``/``oneOf``/``allOf``/``not``, ``required`` in a
``oneOf`` of an object, a format in a subschema). Each case creates one object (a dry run) with a
value drawn for every field — valid or not, of the field's type or another — or updates a stored
one (only some fields changed: ratcheting). The server's 422 causes must be the engine's.
``FIELDOWN_COMPOSITE_CASES`` (default 60) and ``FIELDOWN_COMPOSITE_SEED`` (default 11) tune it.
"""

from __future__ import annotations

import copy
import os
import random
from typing import Any

import lab
import pytest

from engine.crdlab import CrdLab, assert_same_answer, crd_lab
from kubectl_fieldown.fieldmanager import ResourceRules, simulate_update
from kubectl_fieldown.schema.crd import kinds_from_crd
from kubectl_fieldown.schema.types import GroupVersionKind

GVK = GroupVersionKind("composites.example.com", "v1", "Comp")
NOW = "2026-11-26T00:00:00Z"
CASES = int(os.environ.get("FIELDOWN_COMPOSITE_CASES", "60"))
SEED = int(os.environ.get("FIELDOWN_COMPOSITE_SEED", "11"))

PROPERTIES: dict[str, Any] = {
    "ios": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
    "iosMax": {"anyOf": [{"maximum": 10}, {"pattern": "^[0-9]+%$"}], "x-kubernetes-int-or-string": True},
    "s": {"type": "string", "anyOf": [{"maxLength": 2}, {"pattern": "^a"}]},
    "o": {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]},
    "n": {"type": "integer", "oneOf": [{"minimum": 5}, {"maximum": 3}]},
    "a": {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^b"}]},
    "nt": {"type": "string", "not": {"pattern": "^x"}},
    "f": {"type": "string", "anyOf": [{"enum": ["x", "y"]}, {"format": "date"}]},
    "num": {"type": "number", "anyOf": [{"multipleOf": 2}, {"maximum": 1}], "not": {"minimum": 100}},
    "m": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
          "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
}


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "comps.composites.example.com"},
        "spec": {"group": "composites.example.com", "scope": "Namespaced",
                 "names": {"kind": "Comp", "plural": "comps", "singular": "comp", "listKind": "CompList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": PROPERTIES}}}}}]},
    }


def rules() -> ResourceRules:
    return ResourceRules.for_kind(kinds_from_crd(crd())[GVK], False)


def _string(rnd: random.Random) -> str:
    return "".join(rnd.choice("abxy0129%-") for _ in range(rnd.randint(0, 4)))


def value(rnd: random.Random, name: str) -> Any:
    """A value for the field ``name``: mostly of its type, sometimes of another."""
    pick = rnd.random()
    if name in ("ios", "iosMax"):
        return rnd.choice([rnd.randint(-3, 20), f"{rnd.randint(0, 120)}%", _string(rnd), 1.5, True])
    if name == "n":
        return rnd.randint(0, 8)
    if name == "num":
        return rnd.choice([rnd.randint(-2, 120), rnd.choice([0.5, 2.0, 3.5, 150.5])])
    if name == "m":
        return {k: "v" for k in ("a", "b") if rnd.random() < 0.5}
    if name == "f":
        return rnd.choice(["x", "y", "z", "2024-02-29", "2023-02-29", _string(rnd)])
    return _string(rnd) if pick < 0.9 else rnd.choice(["abb", "xa", "b", "bb"])


def spec(rnd: random.Random) -> dict[str, Any]:
    return {name: value(rnd, name) for name in PROPERTIES if rnd.random() < 0.8}


@pytest.fixture(scope="module")
def composites_lab(cluster: lab.Cluster) -> CrdLab:
    return crd_lab(cluster, crd(), {"nt": "x"})


@pytest.mark.parametrize("case", range(CASES))
def test_composites_match_the_server(composites_lab: CrdLab, case: int) -> None:
    rnd = random.Random(SEED * 100000 + case)
    api, path = composites_lab.api, composites_lab.path
    live: dict[str, Any] | None = None
    if rnd.random() < 0.3:
        # an update of a stored valid object: some fields change, the rest are ratcheted
        stored = {"ios": 1, "s": "a", "n": 6, "a": "bb", "nt": "y", "f": "x", "num": 2, "m": {"a": "v"}}
        r = api.request("POST", path, composites_lab.body(f"u{case}", stored))
        assert r.status == 201, r.body
        live = r.body
        body = copy.deepcopy(live)
        body["spec"].update(spec(rnd))
        resp = api.request("PUT", f"{path}/u{case}", body, query=[("dryRun", "All")])
    else:
        body = composites_lab.body(f"c{case}", spec(rnd))
        resp = api.request("POST", path, body, query=[("dryRun", "All")])
    where = f"{'update' if live else 'create'} of {body['spec']}"
    assert_same_answer(where, resp, lambda: simulate_update(live, body, "tester", rules(), now=NOW))
