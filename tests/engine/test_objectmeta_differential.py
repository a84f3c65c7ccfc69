"""ObjectMeta's validation (label keys and values, annotation keys, a created custom resource's
name): seeded random metadata on the lab server vs. the engine (``strategy.object_meta_errors``).

Each case writes one object of the ``Fmt`` CRD (tests/engine/test_formats_differential.py) as a dry
run — a create, an update of a stored object, or a server-side apply creating one — with labels,
annotations and a name drawn from valid and invalid ones (prefixes, lengths at and past the limits
in bytes, characters outside the alphabet, uppercase, empty parts). The server's 422 causes must be
the engine's. ``FIELDOWN_META_CASES`` (default 60) and ``FIELDOWN_META_SEED`` (default 7) tune it.
"""

from __future__ import annotations

import copy
import os
import random
from typing import Any

import pytest

from engine.crdlab import CrdLab, assert_same_answer
from engine.scenarios import APPLY_CT
from engine.test_formats_differential import NOW, rules
from engine.test_formats_differential import formats_lab as formats_lab  # the lab with the Fmt CRD (a fixture)
from kubectl_fieldown.fieldmanager import simulate_apply, simulate_update

CASES = int(os.environ.get("FIELDOWN_META_CASES", "60"))
SEED = int(os.environ.get("FIELDOWN_META_SEED", "7"))

KEYS = ["app", "App_1", "a/b", "/b", "a/", "a/b/c", "Example.com/x", "example.com/x", "-x", "x-", "x" * 63, "x" * 64,
        "\u00e9", "a" * 250 + ".com/b", "a" * 254 + "/b", "a..b/c", "kubernetes.io/x y", "", "\u0130" * 3, "\u212a" * 2,
        "a.b_c-d", "\u00e9" * 32]
VALUES = ["", "v", "v-", "1.2.3+b", "x" * 63, "x" * 64, "a b", "\u00e9", "A_b.c", "\u00e9" * 32]
NAMES = ["ok", "Bad", "a_b", "a" * 253, "a" * 254, "a..b", "-a", "a.b-c"]


def metadata(rnd: random.Random, name: str, namespace: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    labels = {rnd.choice(KEYS): rnd.choice(VALUES) for _ in range(rnd.randint(0, 3))}
    annotations = {rnd.choice(KEYS): "v" for _ in range(rnd.randint(0, 2))}
    if labels:
        md["labels"] = labels
    if annotations:
        md["annotations"] = annotations
    return md


@pytest.mark.parametrize("case", range(CASES))
def test_object_meta_matches_the_server(formats_lab: CrdLab, case: int) -> None:
    rnd = random.Random(SEED * 100000 + case)
    api, path, ns = formats_lab.api, formats_lab.path, formats_lab.namespace
    op = rnd.choice(["create", "update", "apply-create"])
    live: dict[str, Any] | None = None
    if op == "update":
        stored = api.request("POST", path, formats_lab.body(f"m{case}", {}))
        assert stored.status == 201, stored.body
        live = stored.body
        body = copy.deepcopy(live)
        body["metadata"].update(metadata(rnd, f"m{case}", ns))
        resp = api.request("PUT", f"{path}/m{case}", body, query=[("dryRun", "All")])
    else:
        body = {**formats_lab.body("", {}), "metadata": metadata(rnd, rnd.choice(NAMES), ns)}
        if op == "create":
            resp = api.request("POST", path, body, query=[("dryRun", "All")])
        else:
            resp = api.request("PATCH", f"{path}/{body['metadata']['name']}", body, APPLY_CT,
                               query=[("fieldManager", "tester"), ("dryRun", "All")])
    if op == "apply-create":
        assert_same_answer(f"{op} of {body['metadata']}", resp,
                           lambda: simulate_apply(None, body, "tester", rules(), now=NOW))
    else:
        assert_same_answer(f"{op} of {body['metadata']}", resp,
                           lambda: simulate_update(live, body, "tester", rules(), now=NOW))


def test_the_generator_draws_valid_and_invalid_metadata() -> None:
    from kubectl_fieldown.fieldmanager.strategy import object_meta_errors

    verdicts = set()
    for case in range(CASES):
        rnd = random.Random(SEED * 100000 + case)
        rnd.choice(["create", "update", "apply-create"])
        verdicts.add(bool(object_meta_errors({"metadata": metadata(rnd, rnd.choice(NAMES), "ns")}, dns_name=True)))
    assert verdicts == {True, False}
