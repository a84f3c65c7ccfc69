"""Generated scenarios on the real API server: the tool's printed words, followed literally, against
the user's intent (issue 17).

Each case (tests/scenarios/generated.py: a seeded history of real writers on a Widget, on a Multi
written at its two served versions, on a Preset, whose schema defaults fields, or on a Blob, whose
spec has no schema, a next manifest and an applier) is played on the lab server,
then, as a user would:

1. ``kubectl fieldown audit --applier X -f next.yaml -o json`` and ``kubectl fieldown conflicts -f
   next.yaml --applier X -o json`` are asked about the object; they must agree (a conflict predicted
   by one is predicted by the other, with the same paths; when audit says there is nothing to do,
   conflicts predicts no failure, no deletion the user did not ask for and no dropped field staying);
2. audit's fix is followed literally: its command runs (``kubectl fieldown ...``, in this process)
   and must exit 0, its manifest edits (``drop``) are made;
3. the applier applies for real (tests/appliers/replay.py: real kubectl; raw HTTP as Argo CD, Flux
   and Helm send it);
4. the object must hold the user's intent (generated.py ``misses``). A miss the tool announced
   beforehand — audit exited non-zero and audit or conflicts named the path (or predicted the failed
   apply) — is truthful, not a failure.

Every failing case is written to ``generated-regressions/<id>.json`` and replayed on every run.
Cases the product does not pass yet are listed with their failure class in
``generated_known_failures.json``: they are expected to fail (strict: a fixed one turns the run red
until it is taken off the list).

Environment: ``FIELDOWN_GEN_CASES`` (default 300), ``FIELDOWN_GEN_SEED`` (default 17; case *i* has
seed ``base * 100000 + i``), ``FIELDOWN_GEN_ONLY`` (ids or seeds to run instead),
``FIELDOWN_GEN_SOAK=1`` (3,000 cases unless ``FIELDOWN_GEN_CASES`` says), ``FIELDOWN_GEN_WORKERS``
(default 4: cases played at once), ``FIELDOWN_GEN_PROCS`` (default 2: processes running the tool),
``FIELDOWN_GEN_NO_REGRESSIONS=1`` (do not write regression files), ``FIELDOWN_GEN_UPDATE_KNOWN=1``
(rewrite ``generated_known_failures.json`` from this run's outcomes, for the cases it ran),
``FIELDOWN_GEN_REPORT_DIR`` (write every case's report there, passing or not).
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lab
import pytest
from appliers.replay import Appliers, Target, Wire, wait_past_newest_entry
from cli.cli_helpers import Result
from engine.scenarios import APPLY_CT, JSON_CT, MERGE_CT, object_path

from kubectl_fieldown.appliers import Applier

from . import gen_judge, gen_tool
from . import generated as gen
from .gen_judge import Verdict, judge

pytestmark = pytest.mark.cluster

HERE = Path(__file__).resolve().parent
REGRESSIONS = HERE / "generated-regressions"
KNOWN = HERE / "generated_known_failures.json"


def _known() -> dict[str, str]:
    return json.loads(KNOWN.read_text()) if KNOWN.exists() else {}


def _regressions() -> dict[str, dict[str, Any]]:
    out = {}
    for p in sorted(REGRESSIONS.glob("*.json")) if REGRESSIONS.is_dir() else []:
        doc = json.loads(p.read_text())
        out[doc["case"]["id"]] = doc["case"]
    return out


def _case_ids() -> list[str]:
    only = os.environ.get("FIELDOWN_GEN_ONLY", "").replace(",", " ").split()
    if only:
        return [o if o.startswith("seed-") else f"seed-{o}" for o in only]
    soak = os.environ.get("FIELDOWN_GEN_SOAK") == "1"
    n = int(os.environ.get("FIELDOWN_GEN_CASES", 3000 if soak else 300))
    base = int(os.environ.get("FIELDOWN_GEN_SEED", 17))
    ids = [f"seed-{base * 100000 + i}" for i in range(1, n + 1)]
    return ids + [r for r in _regressions() if r not in ids]


def _case(case_id: str) -> dict[str, Any]:
    reg = _regressions().get(case_id)
    return copy.deepcopy(reg) if reg is not None else gen.generate(int(case_id.removeprefix("seed-")))


# --- playing a history ------------------------------------------------------------------------------


def _merge_patch(old: Any, new: Any) -> Any:
    """RFC 7386 two-way merge patch from ``old`` to ``new`` (what Helm 3 sends for a custom resource)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy.deepcopy(new)
    out: dict[str, Any] = {k: None for k in old if k not in new}
    for k, v in new.items():
        if k not in old:
            out[k] = copy.deepcopy(v)
        elif old[k] != v:
            out[k] = _merge_patch(old[k], v)
    return out


@dataclass
class Played:
    case: dict[str, Any]
    ns: str
    before: dict[str, Any] = field(default_factory=dict)
    attr: gen.Attribution = field(default_factory=dict)
    failed_steps: int = 0
    cap: int = 10
    """Wait for a new second before a write once the object has this many Update entries."""
    previous: dict[str, Any] | None = None
    """The manifest the applier's history last applied with success (None for a new applier): when
    the history's last apply failed, or wrote nothing (a Flux apply skipped for want of drift), the
    one before it is what the object holds."""


def case_kind(case: dict[str, Any]) -> str:
    """The kind a case is about (cases from before Multi was in the grammar name none: a Widget)."""
    return str(case.get("kind", "Widget"))


class Lab:
    def __init__(self, cluster: lab.Cluster, wire: Wire, tmp: Path) -> None:
        self.cluster = cluster
        self.wire = wire
        self.appliers = Appliers(wire, cluster.kubectl)
        self.tmp = tmp

    def kubectl(self, *args: str, input: str | None = None) -> int:
        return self.cluster.kubectl(*args, input=input, check=False).returncode

    def send(self, method: str, path: str, body: Any, ct: str, manager: str | None, force: bool = False) -> int:
        q = [("fieldManager", manager)] if manager else []
        if force:
            q.append(("force", "true"))
        return self.wire.send(method, path, body, ct, q).status

    def play(self, case: dict[str, Any], ns: str) -> Played:
        out = Played(case, ns)
        kind = case_kind(case)
        path = object_path(kind, ns, gen.NAME)
        res = [f"{gen.PLURALS[kind]}.{gen.GROUP}/{gen.NAME}", "-n", ns]
        last_doc: dict[str, Any] | None = None
        live = self.wire.get(path) or {}
        # With more than 10 Update managers the server folds the oldest into ancient-changes, and
        # entries written in the same second are ordered by name, not by time: a history that gets
        # there writes each step in a second of its own (so that it folds the same managers on every
        # run); any other waits only once it has 10 (a wait on the server's clock, a second at most).
        cap = 1 if any(s["op"] == "many-updaters" for s in case["steps"]) else 10
        out.cap = cap
        for step in case["steps"]:
            op = step["op"]
            wait_past_newest_entry(self.wire, live, cap)
            doc = None
            if "doc" in step:
                doc = copy.deepcopy(step["doc"])
                doc["metadata"]["namespace"] = ns
            # a raw request goes to the version its body (or the step) names; kubectl's to the one it picks
            version = gen.version_of(doc) if doc is not None else step.get("version", "v1")
            at = object_path(kind, ns, gen.NAME, version=version)
            sent: dict[gen.Path, Any] = gen.leaves(doc, kind) if doc is not None else {}
            ok = True
            if op == "kubectl-apply":
                ok = self.kubectl("apply", "-f", "-", input=json.dumps(doc)) == 0
            elif op == "kubectl-create":
                ok = self.kubectl("create", *(["--save-config"] if step["save_config"] else []), "-f", "-",
                                  input=json.dumps(doc)) == 0
            elif op == "kubectl-replace":
                ok = self.kubectl("replace", *(["--save-config"] if step["save_config"] else []), "-f", "-",
                                  input=json.dumps(doc)) == 0
            elif op == "kubectl-apply-ssa":
                argv = ["apply", "--server-side"]
                if step["manager"] != "kubectl":
                    argv.append(f"--field-manager={step['manager']}")
                if step["force"]:
                    argv.append("--force-conflicts")
                ok = self.kubectl(*argv, "-f", "-", input=json.dumps(doc)) == 0
            elif op == "helm3":
                if not live:
                    ok = self.send("POST", object_path(kind, ns, version=version), doc, JSON_CT, "helm") < 300
                else:
                    body = _merge_patch(last_doc or {}, doc)
                    ok = self.send("PATCH", at, body, MERGE_CT, "helm") < 300
            elif op == "play":
                tool, _, mgr = step["applier"].partition(":")
                rep = self.appliers.play(Applier.of(tool, mgr or None), Target(kind, gen.NAME, ns, version), doc or {})
                ok = rep.rc == 0 and not any(s.status >= 400 and not s.dry_run for s in rep.sent)
            elif op == "apply":
                ok = self.send("PATCH", at, doc, APPLY_CT, step["manager"], step["force"]) < 300
            elif op == "kubectl-scale":
                ok = self.kubectl("scale", *res, f"--replicas={step['replicas']}") == 0
                sent = {("spec", "replicas"): step["replicas"]}
            elif op in ("kubectl-label", "kubectl-annotate"):
                ok = self.kubectl(op.removeprefix("kubectl-"), *res, "--overwrite", *step["args"]) == 0
                k, _, v = step["args"][0].partition("=")
                sent = {("metadata", "labels" if op == "kubectl-label" else "annotations", k): v}
            elif op == "kubectl-patch":
                ok = self.kubectl("patch", *res, "--type=merge", "-p", json.dumps(step["body"])) == 0
                sent = gen.leaves(step["body"], kind)
            elif op == "merge-patch":
                sub = f"/{step['sub']}" if step.get("sub") else ""
                ok = self.send("PATCH", at + sub, step["body"], MERGE_CT, step["manager"]) < 300
                sent = gen.leaves(step["body"], kind)
            elif op == "add-finalizer":
                # an operator's read-modify-write: its finalizer after those already there
                have = list((live.get("metadata") or {}).get("finalizers") or [])
                want = have if step["finalizer"] in have else [*have, step["finalizer"]]
                body = {"metadata": {"finalizers": want}}
                ok = bool(live) and self.send("PATCH", at, body, MERGE_CT, step["manager"]) < 300
                sent = gen.leaves(body, kind)
            elif op == "edit-item":
                body = {"spec": {"containers": gen.edited_containers(live, step["change"], step["value"])}}
                ok = bool(live) and self.send("PATCH", at, body, MERGE_CT, step["manager"]) < 300
                sent = gen.leaves(body, kind)
            elif op == "replace-from-get":
                got = copy.deepcopy(live)
                got.get("metadata", {}).pop("managedFields", None)  # kubectl get hides them
                *where, value = step["set"]
                node = got
                for k in where[:-1]:
                    node = node.setdefault(k, {})
                node[where[-1]] = value
                ok = bool(live) and self.kubectl("replace", "-f", "-", input=json.dumps(got)) == 0
                sent = {tuple(where): value}
            elif op == "many-updaters":
                for i in range(step["count"]):
                    wait_past_newest_entry(self.wire, self.wire.get(path), cap)
                    body = {"metadata": {"annotations": {f"u{i:02d}": "1"}}}
                    ok = self.send("PATCH", at, body, MERGE_CT, f"updater-{i:02d}") < 300 and ok
                    sent.update(gen.leaves(body, kind))
            elif op == "reset":
                ok = self.send("PATCH", at, {"metadata": {"managedFields": [{}]}}, MERGE_CT, None) < 300
            else:
                raise AssertionError(f"unknown step {op}")
            if not ok:
                out.failed_steps += 1
            new = self.wire.get(path) or {}
            role = "applier" if step.get("role") == "applier" else f"other:{step.get('class', op)}"
            # another writer's server-side apply: the manager's set is what it sent, so it is its own writer
            whole_set = op == "apply" and role != "applier" and ok
            if whole_set:
                role += f":{step['manager']}"
            # another writer's Update of a value already there changes nothing: the server keeps no record
            if op == "reset" and ok:
                gen.forget_records(out.attr)
            gen.attribute(out.attr, gen.leaves(live, kind), gen.leaves(new, kind), sent if ok else {}, role,
                          records_unchanged=step.get("role") == "applier" or op == "apply",
                          untracked=not (live.get("metadata") or {}).get("managedFields"), whole_set=whole_set)
            # an apply that wrote nothing (Flux skips one its dry-run finds no drift in) leaves no
            # record of its manifest: nothing on the object, and no tool, can know it was sent
            wrote = (new.get("metadata") or {}).get("resourceVersion") != \
                (live.get("metadata") or {}).get("resourceVersion")
            if step.get("role") == "applier" and ok and (wrote or last_doc is None):
                last_doc = doc
            live = new
        out.before = live
        if case["previous"] is not None and last_doc is not None:
            out.previous = copy.deepcopy(last_doc)
            del out.previous["metadata"]["namespace"]
        return out


# --- asking the tool, following it, applying ---------------------------------------------------------


def _applier_flags(applier: str) -> tuple[list[str], Applier]:
    kind, _, mgr = applier.partition(":")
    a = Applier.of(kind, mgr or None)
    return (["--applier", kind] + (["--field-manager", mgr] if mgr else [])), a


@dataclass
class Asked:
    audit_rc: int
    audit: dict[str, Any] | None
    audit_err: str
    conflicts_rc: int
    conflicts: dict[str, Any] | None
    conflicts_err: str
    commands: list[tuple[list[str], int, str]] = field(default_factory=list)
    applied: dict[str, Any] = field(default_factory=dict)


Tool = Callable[..., Result]


def ask_and_follow(played: Played, tmp: Path, fieldown: Tool) -> Asked:
    """Asks audit and conflicts, and runs the fix audit prints."""
    case, ns = played.case, played.ns
    nxt = copy.deepcopy(case["manifest"])
    nxt["metadata"]["namespace"] = ns
    f = tmp / f"{case['id']}-{ns}.yaml"
    f.write_text(json.dumps(nxt))
    flags, _ = _applier_flags(case["applier"])
    # half the cases check the object in a worker process (audit --jobs: forked, its findings pickled back)
    jobs = ["--jobs", "2"] if zlib.crc32(case["id"].encode()) % 2 else []
    a = fieldown("audit", "--kinds", gen.PLURALS[case_kind(case)], "-n", ns, *flags, "-f", str(f), "-o", "json",
                 *jobs)
    c = fieldown("conflicts", "-f", str(f), "--applier", case["applier"], "-o", "json")
    asked = Asked(a.code, _json(a.out), a.err, c.code, _json(c.out), c.err)
    fix = _fix(asked.audit)
    applied = copy.deepcopy(nxt)
    if fix is not None:
        if fix.get("command"):
            r = fieldown(*fix["command"])
            asked.commands.append((list(fix["command"]), r.code, (r.out + "\n" + r.err).strip()[:3000]))
        for p in fix.get("drop") or []:
            gen.remove_path(applied, gen.parse_server_path(p))
    asked.applied = applied
    return asked


def _json(text: str) -> dict[str, Any] | None:
    try:
        v = json.loads(text)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def _fix(audit: dict[str, Any] | None) -> dict[str, Any] | None:
    for o in (audit or {}).get("objects") or []:
        if o.get("name") == gen.NAME:
            fix = o.get("fix")
            return fix if isinstance(fix, dict) else None
    return None


@dataclass
class Outcome:
    case: dict[str, Any]
    ns: str
    verdict: Verdict
    report: str


def apply_and_judge(labx: Lab, played: Played, asked: Asked) -> Outcome:
    case, ns = played.case, played.ns
    _, applier = _applier_flags(case["applier"])
    target = Target(case_kind(case), gen.NAME, ns, gen.version_of(asked.applied))
    live = labx.wire.get(target.path)
    wait_past_newest_entry(labx.wire, live)
    rep = labx.appliers.play(applier, target, asked.applied)
    failed = [f"{x.verb} as {x.manager or '-'}: {x.status} {x.message[:300]}" for x in rep.sent
              if x.status >= 400 and not x.dry_run]
    if rep.rc and not failed:
        failed.append(f"kubectl exited {rep.rc}: {rep.stderr[-300:]}")
    verdict = judge(played.previous, played.before, played.attr, asked, failed, rep.final or {})
    lines = [f"{case['id']}: applier {case['applier']}; classes: {', '.join(verdict.classes) or 'none'}",
             "history:"]
    lines += [f"  {i + 1}. {json.dumps(s, sort_keys=True)[:300]}" for i, s in enumerate(case["steps"])]
    lines.append(f"previous manifest: {json.dumps(played.previous, sort_keys=True)}")
    lines.append(f"next manifest:     {json.dumps(case['manifest'], sort_keys=True)}")
    mf = (played.before.get("metadata") or {}).get("managedFields") or []
    lines.append("live managedFields before (sorted): " + "; ".join(sorted(
        f"{e.get('manager')} {e.get('operation')}{'/' + e['subresource'] if e.get('subresource') else ''}"
        for e in mf)))  # sorted: entries written in the same second come in either order
    lines.append(f"live spec before: {json.dumps(played.before.get('spec'), sort_keys=True)}")
    fix = _fix(asked.audit)
    lines.append(f"audit exit {asked.audit_rc}; fix: {json.dumps(fix, sort_keys=True)[:900]}")
    items = [i for i in (asked.audit or {}).get("items") or [] if i.get("name") == gen.NAME]
    lines += [f"  {i['severity']} {i['id']}: {i['message'][:300]}" for i in items]
    citem: dict[str, Any] = next(iter((asked.conflicts or {}).get("items") or []), {})
    lines.append(f"conflicts exit {asked.conflicts_rc}: conflicts {[c.get('path') for c in citem.get('conflicts', [])]}"
                 f", deleted {citem.get('deleted')}, retained {citem.get('retained')}, neverPruned "
                 f"{[n.get('path') for n in citem.get('neverPruned') or []]}")
    for argv, rc, out in asked.commands:
        lines.append(f"ran: kubectl fieldown {' '.join(argv)} -> {rc}")
        if rc:
            lines += [f"    {t}" for t in out.splitlines()[:12]]
    lines.append(f"applied: {json.dumps(asked.applied.get('spec'), sort_keys=True)}")
    lines.append(f"apply: {'; '.join(failed) or 'ok'}")
    lines.append(f"spec after: {json.dumps((rep.final or {}).get('spec'), sort_keys=True)}")
    lines += [f"  - {p}" for p in verdict.problems]
    return Outcome(case, ns, verdict, "\n".join(lines))


# --- the run ------------------------------------------------------------------------------------------


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    per_applier: Counter[str] = field(default_factory=Counter)
    failed_applier: Counter[str] = field(default_factory=Counter)
    per_writer: Counter[str] = field(default_factory=Counter)
    classes: Counter[str] = field(default_factory=Counter)
    counts: Counter[str] = field(default_factory=Counter)
    tool_seconds: float = 0.0

    def add(self, o: Outcome) -> None:
        a = o.case["applier"]
        self.per_applier[a] += 1
        self.counts["cases"] += 1
        for w in set(gen.writer_classes(o.case)):
            self.per_writer[w] += 1
        if o.verdict.classes:
            self.failed_applier[a] += 1
            self.counts["failed"] += 1
        for c in o.verdict.classes:
            self.classes[c] += 1
        for k, v in o.verdict.counts.items():
            self.counts[k] += v

    def lines(self) -> list[str]:
        wall = time.monotonic() - self.started
        n = self.counts["cases"]
        return [
            f"generated: {n} cases in {wall:.0f}s, {self.counts['failed']} failed; audit/conflicts agree on "
            f"{self.counts['agree']}/{n}; fixes run {self.counts['commands']}, announced misses "
            f"{self.counts['announced']} (the tool's own calls took {self.tool_seconds:.0f}s, summed over the calls)",
            "per applier (failed/cases): " + ", ".join(
                f"{k} {self.failed_applier[k]}/{v}" for k, v in sorted(self.per_applier.items())),
            "per writer class (cases): " + ", ".join(f"{k} {v}" for k, v in sorted(self.per_writer.items())),
            "failure classes (cases): " + (", ".join(f"{k} {v}" for k, v in self.classes.most_common()) or "none"),
            "announced misses by kind: " + (", ".join(
                f"{k.removeprefix('announced:')} {v}" for k, v in sorted(self.counts.items())
                if k.startswith("announced:")) or "none"),
        ]


class _Summary:
    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.stats.counts["cases"]:
            terminalreporter.write_sep("-", "generated scenarios summary")
            for line in self.stats.lines():
                terminalreporter.write_line(line)


_STATS = Stats()


class Runner:
    """Each case in a worker thread (history, questions, fix, apply, verdict); the tool's own calls
    in a few worker processes (tests/scenarios/gen_tool.py)."""

    def __init__(self, cluster: lab.Cluster, ids: list[str], tmp: Path, workers: int, procs: int,
                 env: dict[str, str]) -> None:
        self.wire = Wire(str(cluster.kubeconfig))
        self.lab = Lab(cluster, self.wire, tmp)
        self.tmp = tmp
        self.env = env
        self.run_id = uuid.uuid4().hex[:6]
        self.ids = ids
        self.workers, self.procs = workers, procs
        self.results: dict[str, Outcome | BaseException] = {}
        self._lock = threading.Lock()
        self._tools: ProcessPoolExecutor | None = None

    def ns(self, i: int) -> str:
        return f"gen-{self.run_id}-{i}"

    def fieldown(self, *argv: str) -> Result:
        assert self._tools is not None
        t0 = time.monotonic()
        code, out, err = self._tools.submit(gen_tool.call, list(argv), self.env).result()
        with self._lock:
            _STATS.tool_seconds += time.monotonic() - t0
        return Result(code, out, err)

    def _one(self, cid: str, i: int) -> Outcome:
        played = self.lab.play(_case(cid), self.ns(i))
        # the fix writes too (a new Update manager may fold another into ancient-changes)
        wait_past_newest_entry(self.wire, played.before, played.cap)
        asked = ask_and_follow(played, self.tmp, self.fieldown)
        return apply_and_judge(self.lab, played, asked)

    def run(self) -> None:
        # spawn, not fork: this process runs threads
        with ProcessPoolExecutor(self.procs, mp_context=multiprocessing.get_context("spawn")) as tools, \
                ThreadPoolExecutor(self.workers, thread_name_prefix="gen") as pool:
            self._tools = tools
            futures: dict[str, Future[Outcome]] = {cid: pool.submit(self._one, cid, i)
                                                   for i, cid in enumerate(self.ids)}
            for cid, fut in futures.items():
                try:
                    self.results[cid] = fut.result()
                except Exception as e:  # a harness error fails that case only
                    self.results[cid] = e


@pytest.fixture(scope="module")
def runner(cluster: lab.Cluster, request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    selected = [item.callspec.params["case_id"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_generated" and hasattr(item, "callspec")]
    tmp = tmp_path_factory.mktemp("generated")
    # the kinds with schema defaults and without a schema are the generated cases' own
    own = [lab.preset_crd(), lab.blob_crd()]
    for crd in own:
        cluster.apply_crd(crd)
    cluster.wait_for_discovery([crd["metadata"]["name"] for crd in own])
    env = {"KUBECONFIG": str(cluster.kubeconfig), "FIELDOWN_BACKUP_DIR": str(tmp / "backups"),
           "FIELDOWN_CACHE_DIR": str(tmp / "cache"), "NO_COLOR": "1"}
    if cluster.kubectl_cache_dir is not None:
        env["KUBECACHEDIR"] = str(cluster.kubectl_cache_dir)
    if not request.config.pluginmanager.has_plugin("fieldown-generated-summary"):
        request.config.pluginmanager.register(_Summary(_STATS), "fieldown-generated-summary")
    r = Runner(cluster, selected, tmp, int(os.environ.get("FIELDOWN_GEN_WORKERS", "4")),
               int(os.environ.get("FIELDOWN_GEN_PROCS", "2")), env)
    r.run()
    yield r
    if os.environ.get("FIELDOWN_GEN_UPDATE_KNOWN") == "1":
        # the list as this run found it: the cases that ran and failed, with their first class
        known = {k: v for k, v in _known().items() if k not in r.results}
        for cid, res in r.results.items():
            if isinstance(res, Outcome) and res.verdict.classes:
                known[cid] = res.verdict.classes[0]
        KNOWN.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")


def _write_regression(o: Outcome) -> Path:
    """The case, what went wrong and the report, with the run's namespace as ``NS``; rewritten only
    when the failure classes change."""
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    p = REGRESSIONS / f"{o.case['id']}.json"
    if p.exists() and json.loads(p.read_text()).get("classes") == o.verdict.classes:
        return p  # the report also holds what varies between runs (the order of same-second entries)
    doc = {"case": o.case, "classes": o.verdict.classes, "problems": o.verdict.problems,
           "report": o.report.splitlines()}
    p.write_text(json.dumps(doc, indent=1, sort_keys=True).replace(o.ns, "NS") + "\n")
    return p


@pytest.mark.parametrize("case_id", _case_ids())
def test_generated(runner: Runner, case_id: str) -> None:
    res = runner.results[case_id]
    if isinstance(res, BaseException):
        pytest.fail(f"{case_id}: could not play the case: {type(res).__name__}: {res}", pytrace=False)
    _STATS.add(res)
    known = _known().get(case_id)
    if os.environ.get("FIELDOWN_GEN_REPORT_DIR"):
        reports = Path(os.environ["FIELDOWN_GEN_REPORT_DIR"])
        reports.mkdir(parents=True, exist_ok=True)
        (reports / f"{case_id}.txt").write_text(res.report + "\n")
    if res.verdict.classes and os.environ.get("FIELDOWN_GEN_NO_REGRESSIONS") != "1":
        _write_regression(res)  # kept as it is while the case fails the same way
    if known is not None:
        if not res.verdict.classes:
            pytest.fail(f"{case_id} is listed in {KNOWN.name} ({known}) but passes now: take it off the list",
                        pytrace=False)
        pytest.xfail(f"known failure ({known}): {', '.join(res.verdict.classes)}")
    if res.verdict.classes:
        pytest.fail(res.report, pytrace=False)


def test_generation_is_deterministic() -> None:
    for seed in (1, 17_00001, 17_00150):
        assert gen.generate(seed) == gen.generate(seed)
    # the intent judge on a hand-made case: a dropped field with no other writer must go, one a
    # scaler also set must keep the scaler's value, everything else must stay
    prev = {"spec": {"color": "red", "replicas": 2, "args": ["-v"]}}
    before = {"spec": {"color": "red", "replicas": 7, "args": ["-v"]}, "metadata": {"labels": {"team": "a"}}}
    attr: gen.Attribution = {("spec", "replicas"): {"other:scaler"}, ("spec", "color"): {"applier"},
                             ("spec", "args"): {"applier"}, ("metadata", "labels", "team"): {"other:imperative"}}
    applied = {"spec": {"args": ["-q"]}}
    good = {"spec": {"replicas": 7, "args": ["-q"]}, "metadata": {"labels": {"team": "a"}}}
    assert gen.misses(before, applied, prev, good, attr) == []
    bad = {"spec": {"color": "red", "args": ["-q"]}}
    kinds = sorted(m.kind for m in gen.misses(before, applied, prev, bad, attr))
    assert kinds == ["stayed", "value-lost", "writer-value-lost"], kinds


def test_a_dropped_field_back_at_its_schema_default_was_deleted() -> None:
    # a Preset's mode defaults to "auto": the apply that removes it sets it again in the same write,
    # which is all a deletion can do; any other value stayed
    prev = {"kind": "Preset", "spec": {"mode": "manual", "policy": {"retries": 5, "timeout": 10}}}
    before = {"kind": "Preset", "spec": {"mode": "manual", "policy": {"retries": 5, "timeout": 10}}}
    attr: gen.Attribution = {("spec", "mode"): {"applier"}, ("spec", "policy", "retries"): {"applier"},
                             ("spec", "policy", "timeout"): {"applier"}}
    applied = {"kind": "Preset", "spec": {"color": "red"}}
    back = {"kind": "Preset", "spec": {"color": "red", "mode": "auto", "policy": {"retries": 3}}}
    assert gen.misses(before, applied, prev, back, attr) == []
    # the same objects read as a Widget's, whose schema defaults nothing: both fields stayed
    assert sorted(m.kind for m in gen.misses(before, applied, prev, back, attr, "Widget")) == ["stayed", "stayed"]
    kept = {"kind": "Preset", "spec": {"color": "red", "mode": "manual", "policy": {"retries": 3, "timeout": 10}}}
    assert sorted(m.text() for m in gen.misses(before, applied, prev, kept, attr)) == [
        "stayed .spec.mode: want <unset>, got 'manual'", "stayed .spec.policy.timeout: want <unset>, got 10"]
    # a field another writer set keeps that writer's value: its default is a lost value
    attr[("spec", "mode")] = {"applier", "other:controller"}
    assert [m.kind for m in gen.misses(before, applied, prev, back, attr)] == ["writer-value-lost"]


def test_metadata_finalizers_are_a_set_and_owner_references_a_map_by_uid() -> None:
    # ObjectMeta's shapes, on every kind (a Blob's untyped spec changes nothing there)
    ref = {"apiVersion": "example.com/v1", "kind": "Parent", "name": "p", "uid": "u1", "controller": True}
    md = {"finalizers": ["a/x", "b/y"], "ownerReferences": [ref], "labels": {"app": "a"}}
    for kind in ("Widget", "Blob"):
        assert gen.leaves({"kind": kind, "metadata": md}) == {
            ("metadata", "finalizers", '[="a/x"]'): True, ("metadata", "finalizers", '[="b/y"]'): True,
            ("metadata", "ownerReferences", '[uid="u1"]'): gen.ITEM,
            ("metadata", "ownerReferences", '[uid="u1"]', "apiVersion"): "example.com/v1",
            ("metadata", "ownerReferences", '[uid="u1"]', "kind"): "Parent",
            ("metadata", "ownerReferences", '[uid="u1"]', "name"): "p",
            ("metadata", "ownerReferences", '[uid="u1"]', "controller"): True,
            ("metadata", "labels", "app"): "a"}
    # an operator's finalizer stays when another's goes
    assert gen.server_path(("metadata", "finalizers", '[="a/x"]')) == '.metadata.finalizers[="a/x"]'


def test_metadata_writers_take_the_place_of_controllers_only() -> None:
    # drawn apart: a case with them has the same manifests, applier and other steps as without
    replaced: Counter[str] = Counter()
    for seed in range(400):
        case, plain = gen.generate(seed), gen.generate(seed, extra_writers=False)
        assert {k: v for k, v in case.items() if k != "steps"} == {k: v for k, v in plain.items() if k != "steps"}
        assert len(case["steps"]) == len(plain["steps"])
        for s, p in zip(case["steps"], plain["steps"], strict=True):
            if s != p:
                assert (p["class"], s["class"]) in (("controller", "metadata-controller"),
                                                    ("imperative", "item-editor"))
                replaced[s["op"]] += 1
    assert replaced["add-finalizer"] > 10 and replaced["merge-patch"] > 5 and replaced["edit-item"] > 10


def test_an_item_edit_changes_one_item_of_the_live_list() -> None:
    live = {"spec": {"containers": [{"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}]},
                                    {"name": "side", "image": "img:2"}]}}
    assert gen.edited_containers(live, "image", "edited:1") == [
        {"name": "main", "image": "edited:1", "env": [{"name": "A", "value": "1"}]}, {"name": "side", "image": "img:2"}]
    assert gen.edited_containers(live, "env", "9")[0]["env"] == [{"name": "A", "value": "1"},
                                                                 {"name": "INJECTED", "value": "9"}]
    assert gen.edited_containers(live, "sidecar", "sidecar:1")[2] == {"name": "sidecar", "image": "sidecar:1"}
    # no container to edit: the edit adds one (the sidecar's, with the value it would have set)
    assert gen.edited_containers({"spec": {}}, "image", "edited:1") == [{"name": "sidecar", "image": "edited:1"}]
    assert live["spec"]["containers"][0]["image"] == "img:1"  # the live object is left as it was


def test_a_kind_without_a_schema_has_atomic_lists_and_granular_maps() -> None:
    spec = {"containers": [{"name": "main", "image": "img:1"}], "finalizers": ["f1"],
            "selector": {"matchLabels": {"app": "a"}}}
    assert gen.leaves({"kind": "Blob", "spec": spec}) == {
        ("spec", "containers"): [{"name": "main", "image": "img:1"}], ("spec", "finalizers"): ["f1"],
        ("spec", "selector", "matchLabels", "app"): "a"}
    assert gen.leaves({"spec": spec}, "Blob") == gen.leaves({"kind": "Blob", "spec": spec})
    assert gen.leaves({"kind": "Widget", "spec": spec}) == {
        ("spec", "containers", '[name="main"]'): gen.ITEM, ("spec", "containers", '[name="main"]', "image"): "img:1",
        ("spec", "finalizers", '[="f1"]'): True, ("spec", "selector"): {"matchLabels": {"app": "a"}}}


def test_judge_takes_a_deletion_to_the_default_as_losing_nothing() -> None:
    # conflicts says .spec.policy goes (the applier owned it whole), and audit has nothing to do: a
    # field below it the manifest never set loses nothing when it held the default the server sets
    # again, and loses its value when it held another
    previous = {"kind": "Preset", "spec": {"color": "red", "policy": {"timeout": 10}}}
    applied = {"kind": "Preset", "spec": {"color": "red"}}
    attr: gen.Attribution = {("spec", "color"): {"applier"}, ("spec", "policy", "timeout"): {"applier"}}
    citem: dict[str, Any] = {"conflicts": [], "deleted": [".spec.policy"], "retained": [], "neverPruned": [],
                             "rejected": None}
    nothing = _asked(0, {"items": [], "objects": []}, 0, citem, applied)
    for retries, classes in ((3, []), (5, [gen_judge.DISAGREE_VERDICT])):
        before = {"kind": "Preset", "spec": {"color": "red", "policy": {"retries": retries, "timeout": 10}}}
        after = {"kind": "Preset", "spec": {"color": "red", "policy": {"retries": 3}}}
        v = judge(previous, before, attr, nothing, [], after)
        assert v.classes[:1] == classes, v.problems


def test_a_write_that_changes_nothing_is_attributed_only_when_recorded() -> None:
    # an Update of a value already there leaves no record on the server (seed-4301905: kubectl edit
    # of strategy.type to the value it had); an apply records every field it sends
    same = {("spec", "strategy", "type"): "Recreate"}
    attr: gen.Attribution = {("spec", "strategy", "type"): {"applier"}}
    gen.attribute(attr, same, same, same, "other:imperative", records_unchanged=False)
    assert attr == {("spec", "strategy", "type"): {"applier"}}
    gen.attribute(attr, same, same, same, "other:other-ssa")
    assert attr == {("spec", "strategy", "type"): {"applier", "other:other-ssa"}}
    # a changed value is the writer's whichever way it was written
    changed = {("spec", "strategy", "type"): "RollingUpdate"}
    gen.attribute(attr, same, changed, changed, "other:imperative", records_unchanged=False)
    assert attr == {("spec", "strategy", "type"): {"other:imperative"}}


def test_after_a_reset_the_applier_sending_a_value_again_is_its_only_record() -> None:
    # seed-4400635: kubectl label team=b, a managedFields reset, then the client-side applier's
    # manifest sets team=b too: nothing on the object says the label's writer set it
    team = ("metadata", "labels", "team")
    live = {team: "b"}
    attr: gen.Attribution = {team: {"other:imperative"}}
    gen.forget_records(attr)
    assert attr == {team: {"other:imperative~"}}
    gen.attribute(attr, live, live, live, "applier", untracked=True)
    assert attr == {team: {"applier"}}
    # the same when the applier's own record (its annotation) survived the reset beside the writer's,
    # and when it sends the value by server-side apply (seed-7602876): its entry is then the record
    attr = {team: {"applier", "other:imperative~"}}
    gen.attribute(attr, live, live, live, "applier", untracked=True)
    assert attr == {team: {"applier"}}
    # once something tracks the object again (a server-side apply), the old writer still counts
    attr = {team: {"other:imperative~"}}
    gen.attribute(attr, live, live, live, "applier", untracked=False)
    assert attr == {team: {"other:imperative~", "applier"}}


def _asked(audit_rc: int, audit: dict[str, Any], conflicts_rc: int, citem: dict[str, Any],
           applied: dict[str, Any]) -> Asked:
    return Asked(audit_rc, audit, "", conflicts_rc, {"items": [citem]}, "", [], applied)


def test_judge_compares_audit_with_conflicts() -> None:
    # conflicts predicts a 409 that audit does not report: they disagree
    previous = {"spec": {"color": "red"}}
    before = {"spec": {"color": "red", "replicas": 3}}
    attr: gen.Attribution = {("spec", "color"): {"applier"}, ("spec", "replicas"): {"other:scaler"}}
    applied = {"spec": {"color": "red", "replicas": 2}}
    citem: dict[str, Any] = {"conflicts": [{"path": ".spec.replicas", "manager": "kubectl-scale"}], "deleted": [],
                             "retained": [], "neverPruned": [], "rejected": None}
    v = judge(previous, before, attr, _asked(0, {"items": [], "objects": []}, 1, citem, applied),
              ["apply as ci: 409 conflict"], before)
    assert v.classes == [gen_judge.DISAGREE_CONFLICTS, gen_judge.DISAGREE_VERDICT, gen_judge.APPLY_FAILED], v.problems
    # the same 409 reported by both, audit exits 1: agreement, and the failed apply was announced
    audit = {"items": [{"id": "predicted-conflict", "name": gen.NAME, "severity": "error", "message": "",
                        "details": {"conflicts": [{"path": ".spec.replicas"}]}}], "objects": []}
    v = judge(previous, before, attr, _asked(1, audit, 1, citem, applied), ["apply as ci: 409 conflict"], before)
    assert v.classes == [] and v.counts["agree"] == 1 and v.counts["announced"] == 1, v.problems
    # audit has nothing to do, conflicts predicts the deletion of a field the user did not drop
    citem = {"conflicts": [], "deleted": [".spec.replicas"], "retained": [], "neverPruned": [], "rejected": None}
    after = {"spec": {"color": "red"}}
    v = judge(previous, before, attr, _asked(0, {"items": [], "objects": []}, 0, citem, {"spec": {"color": "red"}}),
              [], after)
    assert v.classes == [gen_judge.DISAGREE_VERDICT, gen_judge.MISS_CLASSES["value-lost"]], v.problems


def test_a_server_side_apply_gives_up_what_it_no_longer_sends() -> None:
    """Soak seed 54's seed-5401874: sidecar-injector applied .spec.args, then applied without it; ci,
    its one owner left, drops it from its manifest: deleting it loses nobody's value."""
    args, color = ("spec", "args"), ("spec", "color")
    live = {args: "-v", color: "red"}
    attr: gen.Attribution = {args: {"applier"}, color: {"applier"}}
    gen.attribute(attr, live, live, live, "other:other-ssa:sidecar", whole_set=True)
    assert attr == {args: {"applier", "other:other-ssa:sidecar"}, color: {"applier", "other:other-ssa:sidecar"}}
    gen.attribute(attr, live, live, {color: "red"}, "other:other-ssa:sidecar", whole_set=True)
    assert attr == {args: {"applier"}, color: {"applier", "other:other-ssa:sidecar"}}
    # another writer's apply leaves it alone; so does an Update of the same writer's class
    gen.attribute(attr, live, live, {}, "other:other-ssa:injector", whole_set=True)
    gen.attribute(attr, live, live, {}, "other:other-ssa:sidecar", records_unchanged=False)
    assert attr == {args: {"applier"}, color: {"applier", "other:other-ssa:sidecar"}}
    # a record a reset erased goes too
    attr = {args: {"other:other-ssa:sidecar~"}}
    gen.attribute(attr, live, live, {color: "red"}, "other:other-ssa:sidecar", whole_set=True)
    assert attr == {args: set(), color: {"other:other-ssa:sidecar"}}


def test_judge_counts_a_miss_as_truthful_only_when_announced() -> None:
    previous = {"spec": {"color": "red", "args": ["-v"]}}
    before = {"spec": {"color": "red", "args": ["-v"]}}
    attr: gen.Attribution = {("spec", "color"): {"applier"}, ("spec", "args"): {"applier"}}
    applied = {"spec": {"color": "red"}}
    after = before  # the dropped args stay
    citem = {"conflicts": [], "deleted": [], "retained": [], "neverPruned": [{"path": ".spec.args"}],
             "rejected": None}
    fix = {"command": [], "drop": [], "problems": ["the next apply keeps .spec.args"], "edits": [], "notes": []}
    audit = {"items": [], "objects": [{"name": gen.NAME, "fix": fix}]}
    v = judge(previous, before, attr, _asked(1, audit, 0, citem, applied), [], after)
    assert v.classes == [] and v.counts["announced"] == 1, v.problems
    v = judge(previous, before, attr, _asked(0, audit, 0, citem, applied), [], after)  # said so, but exited 0
    assert v.classes == [gen_judge.MISS_CLASSES["stayed"]], v.problems


def _dropped_item_case(message: str) -> tuple[dict[str, Any], gen.Attribution, dict[str, Any], dict[str, Any],
                                                dict[str, Any], list[gen.Miss]]:
    """A container item the applier drops and that stays, with a finding saying ``message``:
    (previous = before, attribution, applied, the conflicts item, the audit, the misses)."""
    previous = {"spec": {"containers": [{"name": "a", "image": "x"}], "color": "red"}}
    attr: gen.Attribution = {("spec", "containers", '[name="a"]'): {"applier"},
                             ("spec", "containers", '[name="a"]', "image"): {"applier"}, ("spec", "color"): {"applier"}}
    applied = {"spec": {"color": "red"}}
    citem: dict[str, Any] = {"conflicts": [], "deleted": [], "retained": [], "neverPruned": [], "rejected": None}
    audit = {"items": [{"id": "dropped-fields-stay", "name": gen.NAME, "severity": "error",
                        "message": message, "details": {}}], "objects": []}
    return previous, attr, applied, citem, audit, gen.misses(previous, applied, previous, previous, attr)


def test_judge_takes_a_field_below_an_item_that_stays_for_the_item() -> None:
    """Soak seed 50's seed-5001774: the tool said an item's ``.image`` and ``.name`` stay; the item
    staying is what that means. A deletion is not announced by a field below it, though."""
    previous, attr, applied, citem, audit, misses = _dropped_item_case('keeps .spec.containers[name="a"].image')
    before = previous
    assert {m.kind for m in misses} == {"stayed"}
    v = judge(previous, before, attr, _asked(1, audit, 0, citem, applied), [], before)
    assert v.classes == [] and v.counts["announced"] == len(misses), v.problems
    # a name that only starts like the item's is not below it
    audit["items"][0]["message"] = 'keeps .spec.containers[name="ab"].image'
    v = judge(previous, before, attr, _asked(1, audit, 0, citem, applied), [], before)
    assert v.classes == [gen_judge.MISS_CLASSES["stayed"]], v.problems
    assert not gen_judge._mentioned(("spec", "color"), {".spec.color.x"})


def test_judge_reads_quoted_paths_in_findings() -> None:
    # a list item's path has quotes, escaped in JSON: named in a finding's message, it is announced
    previous, attr, applied, citem, audit, misses = _dropped_item_case('keeps .spec.containers[name="a"]')
    before = previous
    assert misses, "the dropped item stays: a miss"
    v = judge(previous, before, attr, _asked(1, audit, 0, citem, applied), [], before)
    assert v.classes == [] and v.counts["announced"] == len(misses), v.problems
    audit["items"][0]["message"] = "keeps something"
    v = judge(previous, before, attr, _asked(1, audit, 0, citem, applied), [], before)
    assert v.classes == [gen_judge.MISS_CLASSES["stayed"]], v.problems
