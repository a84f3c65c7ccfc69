"""Differential test: random scenarios on the real API server vs. the engine's predictions.

Each case is a seeded random scenario (tests/engine/scenarios.py): the object is created and
changed by several managers on the lab server, then the engine predicts the final server-side
apply — unforced and forced — from the live object, and the server answers the same apply (the
forced one as a dry run first, then the real one; the dry run must leave the resourceVersion
alone). Everything is compared as in tests/engine/conformance_cases.py ``differences()``: status;
for 409 the (manager, path) set and the message; for 200 the managedFields (as path sets, times
ignored) and the object's spec, labels and annotations — and here also its status and
metadata.finalizers. Every disagreement fails, a 422 included (the CRD validator's value
constraints are modelled and tested on their own by test_constraints_differential.py).

A disagreement fails the case with a readable report and writes it, in the conformance format,
to ``tests/conformance/regressions/diff-<seed>.json``.

Environment:
* ``FIELDOWN_DIFF_CASES`` (default 300): how many cases; ``FIELDOWN_DIFF_SEED`` (default 7): the
  base seed, case *i* has seed ``base * 100000 + i``;
* ``FIELDOWN_DIFF_ONLY``: a comma-separated list of seeds to run instead (to reproduce one);
* ``FIELDOWN_DIFF_WORKERS`` (default 4): scenarios played concurrently (each on its own object).

A summary line (cases/s and how many cases hit conflicts, force, 422, before-first-apply,
ancient-changes, the kubectl last-applied waiver…) is printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .scenarios import (
    KINDS,
    LAST_APPLIED,
    MERGE_CT,
    Api,
    Player,
    ScenarioError,
    build_case,
    case_differences,
    generate,
    object_path,
    report,
)

CASES_ENV = "FIELDOWN_DIFF_CASES"
SEED_ENV = "FIELDOWN_DIFF_SEED"
ONLY_ENV = "FIELDOWN_DIFF_ONLY"
WORKERS_ENV = "FIELDOWN_DIFF_WORKERS"
DEFAULT_CASES = 300
DEFAULT_BASE_SEED = 7

REGRESSIONS = Path(__file__).resolve().parent.parent / "conformance" / "regressions"


def _seeds() -> list[int]:
    only = os.environ.get(ONLY_ENV, "").replace(",", " ").split()
    if only:
        return [int(s) for s in only]
    n = int(os.environ.get(CASES_ENV, DEFAULT_CASES))
    base = int(os.environ.get(SEED_ENV, DEFAULT_BASE_SEED))
    return [base * 100000 + i for i in range(1, n + 1)]


@dataclass
class Result:
    case: dict[str, Any] | None = None
    diffs: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    finished: float = 0.0
    workers: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, res: Result) -> None:
        self.finished = time.monotonic()
        c = self.counts
        c["cases"] += 1
        if res.diffs:
            c["disagreements"] += 1
        case = res.case
        if case is None:
            return
        exp, forced = case["expect"], case["expectForced"]
        tags = set(case["tags"])
        c[f"status-{exp['status']}"] += 1
        if exp["status"] == 409:
            c["conflicts"] += 1
            if forced["status"] == 200:
                c["forced"] += 1
        if 422 in (exp["status"], forced["status"]):
            c["422"] += 1
        if 500 in (exp["status"], forced["status"]):
            c["500"] += 1
        for t in ("before-first-apply", "ancient-changes", "conflict-before-first-apply",
                  "conflict-ancient-changes", "many-update-managers", "csa", "kubectl-ssa", "reset"):
            if t in tags:
                c[t] += 1
        if case["apply"]["manager"] == "kubectl" and "last-applied" in tags:
            c["waiver"] += 1  # manager kubectl with last-applied: the waiver path is taken
        if any(s.get("force") or s.get("forceConflicts") for s in case["steps"]):
            c["forced-steps"] += 1
        c["steps"] += len(case["steps"])
        c["failed-steps"] += sum(1 for s in case["steps"] if (s.get("status") or 0) >= 400 or s.get("rc"))

    def line(self) -> str:
        c = self.counts
        wall = max(self.finished - self.started, 1e-9)
        n = c["cases"]
        parts = [
            f"{n} cases in {wall:.1f}s ({n / wall:.1f} cases/s, {self.workers} workers)",
            f"disagreements {c['disagreements']}",
            f"harness errors {c['errors']}",
            f"200 {c['status-200']}",
            f"conflicts(409) {c['conflicts']}",
            f"forced(409->200) {c['forced']}",
            f"422 {c['422']}",
            f"500 {c['500']}",
            f"before-first-apply {c['before-first-apply']} (in 409 {c['conflict-before-first-apply']})",
            f"ancient-changes {c['ancient-changes']} (in 409 {c['conflict-ancient-changes']})",
            f"waiver {c['waiver']}",
            f"csa {c['csa']}",
            f"kubectl-ssa {c['kubectl-ssa']}",
            f"reset {c['reset']}",
            f"steps {c['steps']} ({c['failed-steps']} failed)",
        ]
        return "differential: " + ", ".join(parts)


class _Summary:
    """A pytest plugin object: prints the stats line in the terminal summary."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.stats.counts["cases"]:
            terminalreporter.write_sep("-", "differential test summary")
            terminalreporter.write_line(self.stats.line())


class Runner:
    """Plays the selected scenarios concurrently, in seed order; tests wait for their own."""

    def __init__(self, cluster: Any, seeds: list[int], workers: int) -> None:
        self.cluster = cluster
        self.api = Api(str(cluster.kubeconfig))
        self.player = Player(self.api, cluster.kubectl)
        self.run_id = uuid.uuid4().hex[:6]
        self.schemas: dict[str, dict[str, Any]] = {}
        for kind, info in KINDS.items():
            r = self.api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{info.crd_name}")
            assert r.status == 200, f"CRD {info.crd_name}: {r.status} {r.body}"
            self.schemas[kind] = r.body
        v = self.api.request("GET", "/version")
        self.server_version = v.body.get("gitVersion", "") if isinstance(v.body, dict) else ""
        self._objects: list[str] = []  # external clusters only: what close() deletes
        self._namespaces: list[str] = []
        self._lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="diff")
        self.futures: dict[int, Future[Result]] = {s: self.pool.submit(self._one, s) for s in seeds}

    def namespace(self, seed: int) -> str:
        return f"diff-{self.run_id}-{seed}"

    def _ensure_namespace(self, ns: str) -> None:
        if not self.cluster.external:
            return  # the lab server has no Namespace API: any namespace name works
        r = self.api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": ns}})
        if r.status in (200, 201):
            with self._lock:
                self._namespaces.append(f"/api/v1/namespaces/{ns}")
        elif r.status not in (404, 409):
            raise ScenarioError(f"cannot create namespace {ns}: {r.status} {r.body}")

    def _one(self, seed: int) -> Result:
        sc = generate(seed, self.namespace(seed), name_suffix=f"-{self.run_id}")
        if sc.namespace is not None:
            self._ensure_namespace(sc.namespace)
        if self.cluster.external:
            with self._lock:
                self._objects.append(object_path(sc.kind, sc.namespace, sc.name))
        steps = self.player.play(sc)
        live, expect, expect_forced = self.player.final(sc)
        case = build_case(sc, steps, live, expect, expect_forced, self.schemas[sc.kind], self.server_version)
        return Result(case, case_differences(case))

    def result(self, seed: int) -> Result:
        return self.futures[seed].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for path in self._objects:  # scenarios may leave metadata.finalizers behind
            self.api.request("PATCH", path, {"metadata": {"finalizers": None}}, MERGE_CT,
                             [("fieldManager", "fieldown-tests")])
            self.api.request("DELETE", path)
        for path in self._namespaces:
            self.api.request("DELETE", path)


_STATS = Stats()


@pytest.fixture(scope="module")
def runner(cluster: Any, request: pytest.FixtureRequest) -> Any:
    # only the seeds that pytest selected (-k, deselection) are played
    selected = [
        item.callspec.params["seed"]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_differential" and hasattr(item, "callspec")
    ]
    workers = int(os.environ.get(WORKERS_ENV, "4"))
    _STATS.workers = workers
    _STATS.started = time.monotonic()
    if not request.config.pluginmanager.has_plugin("fieldown-differential-summary"):
        request.config.pluginmanager.register(_Summary(_STATS), "fieldown-differential-summary")
    r = Runner(cluster, selected, workers)
    try:
        yield r
    finally:
        r.close()


@pytest.mark.parametrize("seed", _seeds())
def test_differential(runner: Runner, seed: int) -> None:
    try:
        res = runner.result(seed)
    except ScenarioError as e:
        _STATS.counts["errors"] += 1
        pytest.fail(f"seed {seed}: could not play the scenario: {e}", pytrace=False)
    _STATS.add(res)
    if res.diffs:
        assert res.case is not None
        REGRESSIONS.mkdir(parents=True, exist_ok=True)
        out = REGRESSIONS / f"diff-{seed}.json"
        out.write_text(json.dumps(res.case, separators=(",", ":")))
        pytest.fail(f"{report(res.case, res.diffs)}\n(case written to {out})", pytrace=False)


def test_generation_is_deterministic() -> None:
    for seed in (1, 2, 700042):
        a = generate(seed, "ns", "-x")
        b = generate(seed, "ns", "-x")
        assert a == b
    assert LAST_APPLIED.startswith("kubectl.kubernetes.io/")
