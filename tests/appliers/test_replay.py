"""Issue 12's acceptance test: each applier's exact request sequence, replayed on the real API
server over curated and random objects, agrees with kubectl_fieldown's prediction.

For every case (tests/appliers/cases.py) the object is brought into its state on the lab server,
read, and the applier is played for real (tests/appliers/replay.py: real kubectl for kubectl,
raw HTTP exactly as Argo CD, Flux and Helm send it); ``run_applier`` predicts the same from the
object as read. The requests (verb, fieldManager, status, 409 message, what they carried — for
client-side ``kubectl apply``, its three-way JSON merge patch exactly) and the object the server
holds at the end (managedFields as path sets per identity, times aside; spec, status, labels,
annotations, finalizers) must agree.

Environment:
* ``FIELDOWN_REPLAY_CASES`` (default 60): random cases; ``FIELDOWN_REPLAY_SEED`` (default 11): case
  *i* replays seed ``base * 100000 + i`` of tests/engine/scenarios.py;
* ``FIELDOWN_REPLAY_CURATED`` (default ``core``): ``all`` for every curated case, ``none`` for none;
* ``FIELDOWN_REPLAY_ONLY``: case ids to run instead (``widget/csa/flux/original``, ``random/1100007``);
* ``FIELDOWN_REPLAY_WORKERS`` (default 4): cases played concurrently, each on its own object.

The summary line (cases and agreements per applier and per object class) is printed at the end.
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
from typing import Any

import pytest
from engine.scenarios import KINDS, Player, Scenario

from kubectl_fieldown.appliers import ApplierRun, run_applier
from kubectl_fieldown.ownership.managedfields import format_time

from .cases import Case, core_ids, curated_case, curated_ids, random_case
from .replay import (
    Appliers,
    Replay,
    ReplayError,
    Target,
    Wire,
    disagreements,
    refused_by_client,
    rules_for,
    wait_past_newest_entry,
)

CASES_ENV = "FIELDOWN_REPLAY_CASES"
SEED_ENV = "FIELDOWN_REPLAY_SEED"
CURATED_ENV = "FIELDOWN_REPLAY_CURATED"
ONLY_ENV = "FIELDOWN_REPLAY_ONLY"
WORKERS_ENV = "FIELDOWN_REPLAY_WORKERS"
DEFAULT_CASES = 60
DEFAULT_BASE_SEED = 11


#: random cases that once disagreed (found by hack/explore.sh or a soak run): replayed on every run
#: besides the seeded ones, so that a fixed disagreement stays fixed
REGRESSION_SEEDS: tuple[int, ...] = (
    2300062,  # Flux folds an Apply entry owning a set item 2**53+1: fluxcd/pkg unites FieldsV1 through SMD (float64)
)


def _case_ids() -> list[str]:
    only = os.environ.get(ONLY_ENV, "").replace(",", " ").split()
    if only:
        return only
    which = os.environ.get(CURATED_ENV, "core")
    curated = {"all": curated_ids, "core": core_ids, "none": list}[which]()
    n = int(os.environ.get(CASES_ENV, DEFAULT_CASES))
    base = int(os.environ.get(SEED_ENV, DEFAULT_BASE_SEED))
    seeded = [base * 100000 + i for i in range(1, n + 1)]
    kept = [s for s in REGRESSION_SEEDS if s not in seeded]
    return [*curated, *(f"random/{s}" for s in (*kept, *seeded))]


@dataclass
class Result:
    case: Case
    live: dict[str, Any] | None
    run: ApplierRun
    replay: Replay
    diffs: list[str]


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    finished: float = 0.0
    workers: int = 0
    by_applier: Counter[str] = field(default_factory=Counter)
    agreed_by_applier: Counter[str] = field(default_factory=Counter)
    by_state: Counter[str] = field(default_factory=Counter)
    agreed_by_state: Counter[str] = field(default_factory=Counter)
    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, res: Result) -> None:
        with self.lock:
            self.finished = time.monotonic()
            kind = res.case.applier.kind.value
            state = res.case.state
            self.by_applier[kind] += 1
            self.by_state[state] += 1
            c = self.counts
            c["cases"] += 1
            if not res.diffs:
                c["agreements"] += 1
                self.agreed_by_applier[kind] += 1
                self.agreed_by_state[state] += 1
            run = res.run
            c["requests"] += len(res.replay.sent)
            if any(r.status == 409 for r in run.requests):
                c["409"] += 1
            if run.taken_over:
                c["forced-takeovers"] += 1
            if any(r.status >= 400 and r.status != 409 and not refused_by_client(r) for r in run.requests):
                c["rejected"] += 1
            if any(refused_by_client(r) for r in run.requests):
                c["kubectl-refused"] += 1
            if any(r.verb == "json-patch" for r in run.requests):
                c["json-patches"] += 1
            if run.applier.kind.value == "flux" and res.live is not None and not any(
                    r.verb == "apply" for r in run.requests):
                c["flux-apply-skipped"] += 1
            if run.applier.kind.value == "kubectl-client-side" and res.live is not None and not run.requests:
                c["csa-unchanged"] += 1

    def line(self) -> str:
        c = self.counts
        wall = max(self.finished - self.started, 1e-9)
        n = c["cases"]

        def per(total: Counter[str], agreed: Counter[str]) -> str:
            return ", ".join(f"{k} {agreed[k]}/{total[k]}" for k in sorted(total))

        return (f"replay: {n} cases in {wall:.1f}s ({n / wall:.1f} cases/s, {self.workers} workers), "
                f"agreements {c['agreements']}/{n}; per applier: {per(self.by_applier, self.agreed_by_applier)}; "
                f"per object class: {per(self.by_state, self.agreed_by_state)}; requests sent {c['requests']}, "
                f"409 {c['409']}, forced takeovers {c['forced-takeovers']}, rejected (422/500) {c['rejected']}, "
                f"kubectl refused {c['kubectl-refused']}, JSON patches {c['json-patches']}, "
                f"Flux apply skipped {c['flux-apply-skipped']}, client-side unchanged {c['csa-unchanged']}")


class _Summary:
    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.stats.counts["cases"]:
            terminalreporter.write_sep("-", "applier replay summary")
            terminalreporter.write_line(self.stats.line())


class Runner:
    """Plays the selected cases concurrently; tests wait for their own."""

    def __init__(self, cluster: Any, ids: list[str], workers: int) -> None:
        self.cluster = cluster
        self.wire = Wire(str(cluster.kubeconfig))
        self.player = Player(self.wire, cluster.kubectl)
        self.appliers = Appliers(self.wire, cluster.kubectl)
        self.run_id = uuid.uuid4().hex[:6]
        self.namespace = f"replay-{self.run_id}"
        self.rules = {}
        for kind, info in KINDS.items():
            crd = self.wire.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{info.crd_name}")
            assert crd is not None, info.crd_name
            self.rules[kind] = rules_for(crd, kind)
        if cluster.external:
            self.wire.send("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": self.namespace}})
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="replay")
        self.futures: dict[str, Future[Result]] = {
            cid: self.pool.submit(self._one, cid, i) for i, cid in enumerate(ids)}

    def case(self, case_id: str, index: int) -> Case:
        if case_id.startswith("random/"):
            return random_case(int(case_id.split("/")[1]), self.namespace, f"-{self.run_id}")
        return curated_case(case_id, self.namespace, f"-{self.run_id}", index)

    def _setup(self, case: Case) -> None:
        target = Target(case.kind, case.name, case.namespace)
        steps: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []

        def flush() -> None:
            if pending:
                steps.extend(self.player.play(Scenario(0, case.kind, case.name, case.namespace, list(pending), {},
                                                       case.burst)))
                pending.clear()

        for step in case.setup:
            if step["op"] in ("kubectl-label", "kubectl-annotate"):
                flush()
                verb = step["op"].removeprefix("kubectl-")
                proc = self.cluster.kubectl(verb, *target.resource, *step["args"], check=False)
                steps.append({**step, "rc": proc.returncode, "stderr": proc.stderr.strip()})
            elif step["op"] == "kubectl-replace-saved":
                flush()
                saved = self.cluster.kubectl("get", *target.resource, "-o", "json", check=False)
                proc = self.cluster.kubectl("replace", "-f", "-", input=saved.stdout, check=False)
                steps.append({**step, "rc": saved.returncode or proc.returncode,
                              "stderr": (saved.stderr + proc.stderr).strip()})
            else:
                pending.append(step)
        flush()
        case.played = steps
        if case.state != "random":
            failed = [s for s in steps if (s.get("status") or 0) >= 400 or s.get("rc")]
            if failed:
                raise ReplayError(f"{case.id}: setup step failed: {json.dumps(failed[0])[:800]}")

    def _one(self, case_id: str, index: int) -> Result:
        case = self.case(case_id, index)
        self._setup(case)
        target = Target(case.kind, case.name, case.namespace)
        live = self.wire.get(target.path)
        wait_past_newest_entry(self.wire, live)
        now = format_time(self.wire.server_time())
        replay = self.appliers.play(case.applier, target, case.manifest)
        run = run_applier(case.applier, live, case.manifest, self.rules[case.kind], now=now)
        return Result(case, live, run, replay, disagreements(run, replay))

    def result(self, case_id: str) -> Result:
        return self.futures[case_id].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.cluster.external:
            self.wire.send("DELETE", f"/api/v1/namespaces/{self.namespace}")


_STATS = Stats()


@pytest.fixture(scope="module")
def runner(cluster: Any, request: pytest.FixtureRequest) -> Any:
    selected = [item.callspec.params["case_id"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_replay" and hasattr(item, "callspec")]
    workers = int(os.environ.get(WORKERS_ENV, "4"))
    _STATS.workers = workers
    _STATS.started = time.monotonic()
    if not request.config.pluginmanager.has_plugin("fieldown-replay-summary"):
        request.config.pluginmanager.register(_Summary(_STATS), "fieldown-replay-summary")
    r = Runner(cluster, selected, workers)
    try:
        yield r
    finally:
        r.close()


def report(res: Result) -> str:
    case = res.case
    lines = [f"{case.id}: {case.applier.describe()} disagrees with the server", "setup:"]
    for i, s in enumerate(case.played):
        what = {k: v for k, v in s.items() if k in ("op", "manager", "force", "subresource", "body", "manifest",
                                                     "mutation", "args", "replicas")}
        lines.append(f"  {i + 1}. {json.dumps(what, sort_keys=True)[:400]} -> {s.get('status', s.get('rc'))}")
    live = res.live or {}
    lines.append("live managedFields:")
    for e in (live.get("metadata") or {}).get("managedFields") or []:
        sub = f"/{e['subresource']}" if e.get("subresource") else ""
        lines.append(f"  {e['manager']} {e['operation']}{sub} {json.dumps(e.get('fieldsV1'), sort_keys=True)}")
    lines.append(f"live annotations: {json.dumps((live.get('metadata') or {}).get('annotations'), sort_keys=True)}")
    lines.append(f"live spec: {json.dumps(live.get('spec'), sort_keys=True)}")
    lines.append(f"manifest: {json.dumps(case.manifest, sort_keys=True)}")
    lines.append("predicted requests:")
    for r in res.run.requests:
        lines.append(f"  {r.verb} by {r.manager or '(none)'} ({r.purpose}) -> {r.status} {r.message[:200]}")
    lines.append(f"sent (kubectl exit {res.replay.rc}):")
    for s in res.replay.sent:
        dry = " dry-run" if s.dry_run else ""
        lines.append(f"  {s.verb}{dry} by {s.manager or '(none)'} -> {s.status} {s.message[:200]}")
        lines.append(f"      {json.dumps(s.body, sort_keys=True)[:600]}")
    if res.replay.skipped:
        lines.append(f"the tool sent nothing: {res.replay.skipped}")
    if res.replay.stderr:
        lines.append(f"kubectl said: {res.replay.stderr[-600:]}")
    lines.append("disagreements:")
    lines.extend(f"  - {d}" for d in res.diffs)
    return "\n".join(lines)


@pytest.mark.parametrize("case_id", _case_ids())
def test_replay(runner: Runner, case_id: str) -> None:
    try:
        res = runner.result(case_id)
    except ReplayError as e:
        pytest.fail(f"{case_id}: could not replay: {e}", pytrace=False)
    _STATS.add(res)
    if res.diffs:
        pytest.fail(report(res), pytrace=False)


def test_case_ids_are_stable() -> None:
    # collection (xdist workers, -k) must see the same cases every time
    assert curated_ids() == curated_ids()
    assert len(set(curated_ids())) == len(curated_ids())
    assert set(core_ids()) <= set(curated_ids())
    a = random_case(1100003, "ns", "-x")
    b = random_case(1100003, "ns", "-x")
    assert (a.applier, a.manifest, a.setup) == (b.applier, b.manifest, b.setup)
