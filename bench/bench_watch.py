#!/usr/bin/env python3
"""Benchmark: ``kubectl fieldown watch`` of 10,000 objects under 1,000 writes a second.

Issue 22 ("field fights"): the watch keeps up (its lag) and stays under 150 MiB. On the lab API
server (hack/lab, started here on free ports) with N custom resources (default 10,000), writers in
``--procs`` processes patch one field of one object after another at ``--rate`` writes a second in
all (default 1,000; each write a JSON merge patch of ``spec.size``, the writers taking turns on
the objects, so that most fields flip between writers), ``--rate`` x ``--seconds`` writes each
round (they take longer when the server cannot take them as fast: the rate achieved is reported).
Measured in the same run, in alternating rounds, against the same kind of writes:

(a) ``kubectl get -A -w`` (the lab's kubectl 1.36, printing each object's resourceVersion): the
    floor for any watcher — LIST, WATCH, decode, nothing else;
(b) ``kubectl-fieldown watch -A -o json`` as a subprocess: every field change with its writer.

For each write the writer records when the server acknowledged it, with the resourceVersion the
server gave it; the watcher's lag for a write is the time from that acknowledgement to the moment
its line came out of the watcher (read here as it arrives). Reported: writes acknowledged per
second (what the server took — on a busy 2-core box it may be less than ``--rate``), the lag's
median, 99th percentile and maximum, the writes never seen, the time the watcher needed after the
last write to catch up, and the peak RSS (VmHWM) of the watcher. Goals: the watch sees every write,
its lag stays bounded (it does not grow through the round), peak RSS < 150 MiB.

    python bench/bench_watch.py [--objects 10000] [--rate 1000] [--seconds 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import lab  # noqa: E402  (tests/lab.py: build, start and stop the lab server)
import yaml  # noqa: E402

GROUP = "bench.example.com"
KIND = "Watched"
PLURAL = "watcheds"
NAMESPACES = [f"bench-{i}" for i in range(10)]
THREADS = 8  # per writer process: connections kept alive, each one write at a time


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": KIND, "plural": PLURAL, "singular": KIND.lower(), "listKind": f"{KIND}List"},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                              "type": "object", "properties": {
                                  "color": {"type": "string"}, "size": {"type": "integer"},
                                  "replicas": {"type": "integer"},
                                  "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                              }}}}}}],
        },
    }


def name_of(i: int) -> tuple[str, str]:
    return NAMESPACES[i % len(NAMESPACES)], f"obj-{i:06d}"


class Http:
    """urllib3 with the kubeconfig's credentials (as bench_audit's plain LIST)."""

    def __init__(self, kubeconfig: Path, tmp: Path, maxsize: int = 1) -> None:
        import urllib3

        doc = yaml.safe_load(kubeconfig.read_text())
        cl = doc["clusters"][0]["cluster"]
        user = doc["users"][0]["user"]
        self.server = cl["server"].rstrip("/")
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "ca.crt").write_bytes(base64.b64decode(cl["certificate-authority-data"]))
        (tmp / "c.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
        (tmp / "c.key").write_bytes(base64.b64decode(user["client-key-data"]))
        self.pool = urllib3.PoolManager(maxsize=maxsize, cert_reqs="CERT_REQUIRED", ca_certs=str(tmp / "ca.crt"),
                                        cert_file=str(tmp / "c.crt"), key_file=str(tmp / "c.key"))

    def request(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        r = self.pool.request(method, self.server + path, body=data,
                              headers={"Content-Type": ctype, "Accept": "application/json"})
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {r.data[:300]!r}")
        return json.loads(r.data)


def path_of(i: int, manager: str | None = None) -> str:
    ns, name = name_of(i)
    p = f"/apis/{GROUP}/v1/namespaces/{ns}/{PLURAL}/{name}"
    return p + (f"?fieldManager={manager}" if manager else "")


def populate(c: lab.Cluster, n: int, tmp: Path) -> None:
    c.apply_crd(crd())
    http = Http(c.kubeconfig, tmp / "populate", maxsize=16)

    def create(i: int) -> None:
        ns, name = name_of(i)
        body = {"apiVersion": f"{GROUP}/v1", "kind": KIND,
                "metadata": {"name": name, "namespace": ns, "labels": {"app": "bench"}},
                "spec": {"color": ("red", "green", "blue")[i % 3], "size": 0, "replicas": 1 + i % 5,
                         "labels": {"team": f"t{i % 13}"}}}
        http.request("PATCH", path_of(i, "deployer") + "&force=true", body, "application/apply-patch+yaml")

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _ in pool.map(create, range(n)):
            pass
    print(f"created {n} objects in {time.perf_counter() - t0:.1f}s", file=sys.stderr)


# --- the writers -------------------------------------------------------------------------------------


def writer_process(kubeconfig: str, tmp: str, proc: int, procs: int, n: int, rate: float, seconds: float,
                   start_at: float, base: int, out: Any) -> None:
    """Writes ``spec.size`` of object after object at ``rate / procs`` a second from ``start_at``
    (time.monotonic, shared by the processes), for ``seconds``; puts [(resourceVersion, acked)] on ``out``."""
    http = Http(Path(kubeconfig), Path(tmp) / f"w{proc}", maxsize=THREADS)
    lock = threading.Lock()
    seq = [0]
    acked: list[tuple[int, float, float]] = []
    errors = [0]
    my_rate = rate / procs

    def run() -> None:
        while True:
            with lock:
                k = seq[0]
                seq[0] += 1
            due = start_at + k / my_rate
            if due - start_at >= seconds:
                return
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            i = (k * procs + proc) % n
            manager = f"writer-{k % 3}"  # each visit of an object by another manager: its field flips
            sent = time.monotonic()
            try:
                doc = http.request("PATCH", path_of(i, manager), {"spec": {"size": base + k * procs + proc + 1}},
                                   "application/merge-patch+json")
            except Exception:  # counted; a bench goes on
                errors[0] += 1
                continue
            t = time.monotonic()
            with lock:
                acked.append((int(doc["metadata"]["resourceVersion"]), sent, t))

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    out.put((acked, errors[0]))


def write_round(c: lab.Cluster, tmp: Path, n: int, rate: float, seconds: float,
                procs: int) -> tuple[dict[int, tuple[float, float]], int, float]:
    """Run the writers; return {resourceVersion: (sent at, acknowledged at)}, the errors, and the seconds
    they wrote.
    Each round writes values no round wrote before (a write of the value a field has is not stored)."""
    base = int(time.time() * 1000) * 1000
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    start_at = time.monotonic() + 1.0
    ps = [ctx.Process(target=writer_process, args=(str(c.kubeconfig), str(tmp), p, procs, n, rate, seconds,
                                                   start_at, base, q)) for p in range(procs)]
    for p in ps:
        p.start()
    acked: dict[int, tuple[float, float]] = {}
    errors = 0
    for _ in ps:
        a, e = q.get()
        acked.update((rv, (sent, t)) for rv, sent, t in a)
        errors += e
    for p in ps:
        p.join()
    last = max((t for _, t in acked.values()), default=start_at)
    return acked, errors, last - start_at


# --- the watchers ------------------------------------------------------------------------------------


class Watcher:
    """A watcher process whose stdout lines carry resourceVersions; each one's arrival is recorded."""

    def __init__(self, argv: list[str], env: dict[str, str], rv: re.Pattern[str], ready: str | None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                                     bufsize=1 << 16)
        self.rv = rv
        self.seen: dict[int, float] = {}
        self.lines = 0
        self.err: list[str] = []
        self.ready = threading.Event()
        self.ready_marker = ready
        self.held_rss = 0.0
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            t = time.monotonic()
            self.lines += 1
            m = self.rv.search(line)
            if m:
                self.seen.setdefault(int(m.group(1)), t)
                if self.ready_marker is None:
                    self.ready.set()

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            if self.ready_marker and self.ready_marker in line:
                self.held_rss = rss(self.proc.pid)[0]
                self.ready.set()

    def stop(self) -> float:
        """Stop it; its peak RSS in MiB (read just before)."""
        peak = rss(self.proc.pid)[1]
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return peak


def rss(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            out[k] = int(v.split()[0]) / 1024
    return out.get("VmRSS", 0.0), out.get("VmHWM", 0.0)


def fieldown(env: dict[str, str]) -> Watcher:
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    return Watcher([*cmd, "watch", f"{PLURAL}.{GROUP}", "-A", "-o", "json"], env,
                   re.compile(r'"resourceVersion":"(\d+)"'), "note: watching ")


def kubectl(c: lab.Cluster, env: dict[str, str]) -> Watcher:
    return Watcher([str(c.kubectl_bin), "--kubeconfig", str(c.kubeconfig), "get", f"{PLURAL}.{GROUP}", "-A", "-w",
                    "--watch-only", "-o", "jsonpath={.metadata.resourceVersion}{\"\\n\"}"], env,
                   re.compile(r"^(\d+)$"), None)


@dataclass
class Round:
    who: str
    acked: int
    errors: int
    seconds: float
    missed: int
    lag: list[float]
    lag_sent: list[float]
    catch_up: float
    lines: int
    peak_rss: float
    held_rss: float


def one_round(who: str, c: lab.Cluster, tmp: Path, env: dict[str, str], args: argparse.Namespace) -> Round:
    w = fieldown(env) if who == "fieldown" else kubectl(c, env)
    if who == "kubectl":
        # kubectl says nothing when its watch starts: a write it prints shows it is watching
        http = Http(c.kubeconfig, tmp / "probe")
        deadline = time.monotonic() + 300
        while not w.ready.wait(0.5):
            http.request("PATCH", path_of(0, "probe"), {"spec": {"color": f"c{time.monotonic_ns()}"}},
                         "application/merge-patch+json")
            if time.monotonic() > deadline or w.proc.poll() is not None:
                raise SystemExit(f"kubectl get -w did not start: {''.join(w.err)}")
    elif not w.ready.wait(600) or w.proc.poll() is not None:
        raise SystemExit(f"the watch did not start: {''.join(w.err)}")
    acked, errors, seconds = write_round(c, tmp, args.objects, args.rate, args.seconds, args.procs)
    last_ack = max(t for _, t in acked.values())
    # wait until the watcher has printed every acknowledged write, or has seen nothing new for 60 s
    quiet_since, count = time.monotonic(), -1
    while True:
        have = sum(1 for rv in acked if rv in w.seen)
        if have == len(acked):
            break
        if have != count:
            quiet_since, count = time.monotonic(), have
        if time.monotonic() - quiet_since > 60:
            break
        time.sleep(0.2)
    peak = w.stop()
    if any(rv not in w.seen for rv in acked):
        print(f"{who}: {sum(rv not in w.seen for rv in acked)} writes not seen; its stderr ends: "
              + "".join(w.err[-5:]), file=sys.stderr)
    lag = sorted(w.seen[rv] - t for rv, (_, t) in acked.items() if rv in w.seen)
    lag_sent = sorted(w.seen[rv] - sent for rv, (sent, _) in acked.items() if rv in w.seen)
    seen_last = max((w.seen[rv] for rv in acked if rv in w.seen), default=last_ack)
    return Round(who, len(acked), errors, seconds, len(acked) - len(lag), lag, lag_sent,
                 max(0.0, seen_last - last_ack), w.lines, peak, w.held_rss)


def quantile(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def report(rounds: list[Round], args: argparse.Namespace, load: list[tuple[float, float, float]]) -> bool:
    print(f"\n{args.objects} objects watched, target {args.rate:.0f} writes/s for {args.seconds:.0f}s per round, "
          f"{args.procs} writer processes x {THREADS} connections, {os.cpu_count()} CPUs\n")
    print("  lag: from the server's acknowledgement of a write (it can be < 0: the event may come first)")
    print("  to the watcher's line for it; 'from sent': from the moment the write was sent\n")
    print(f"  {'watcher':10s} {'writes/s':>8s} {'errors':>6s} {'missed':>6s}   {'lag: median':>11s} {'p99':>7s} "
          f"{'max':>7s}   {'from sent: median':>17s}   {'catch-up':>8s}   {'RSS: after list':>15s} {'peak':>8s}")
    for r in rounds:
        print(f"  {r.who:10s} {r.acked / r.seconds:8.0f} {r.errors:6d} {r.missed:6d}   "
              f"{quantile(r.lag, 0.5):10.3f}s {quantile(r.lag, 0.99):6.3f}s {quantile(r.lag, 1.0):6.3f}s   "
              f"{quantile(r.lag_sent, 0.5):16.3f}s   {r.catch_up:7.2f}s   "
              f"{(f'{r.held_rss:.0f} MiB' if r.held_rss else '-'):>15s} {r.peak_rss:4.0f} MiB")
    fd = [r for r in rounds if r.who == "fieldown"]
    kc = [r for r in rounds if r.who == "kubectl"]
    if fd and kc:
        med = statistics.median
        f_sent, k_sent = med(quantile(r.lag_sent, 0.5) for r in fd), med(quantile(r.lag_sent, 0.5) for r in kc)
        f_99, k_99 = med(quantile(r.lag, 0.99) for r in fd), med(quantile(r.lag, 0.99) for r in kc)
        print(f"\n  median lag from sent, fieldown vs kubectl get -w: {f_sent / max(k_sent, 1e-6):.1f}x "
              f"({f_sent:.3f}s vs {k_sent:.3f}s); p99 lag: {f_99:.3f}s vs {k_99:.3f}s")
    goals = [("the watch sees every write", all(r.missed == 0 for r in fd)),
             ("peak RSS < 150 MiB", all(r.peak_rss < 150 for r in fd)),
             ("it keeps up: caught up within 5 s of the last write", all(r.catch_up < 5 for r in fd))]
    print()
    for name, ok in goals:
        print(f"  {name:52s} {'met' if ok else 'NOT met'}")
    print("\n  load average after each round (1 min): " + ", ".join(f"{x[0]:.1f}" for x in load)
          + f" ({os.cpu_count()} CPUs; other jobs included)")
    return all(ok for _, ok in goals)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rounds", type=int, default=2, help="rounds per watcher, alternating")
    ap.add_argument("--procs", type=int, default=4, help="writer processes")
    args = ap.parse_args()

    prefix = lab.ensure_built()
    state = Path(tempfile.mkdtemp(prefix="fieldown-bench-watch-"))
    c = lab.start(state / "lab", *lab.free_ports(3), prefix=prefix, no_fsync=True)
    print(f"lab API server {c.server} (state {state})", file=sys.stderr)
    rounds: list[Round] = []
    load: list[tuple[float, float, float]] = []
    try:
        tmp = state / "tmp"
        populate(c, args.objects, tmp)
        env = dict(os.environ, KUBECONFIG=str(c.kubeconfig), FIELDOWN_CACHE_DIR=str(tmp / "cache"),
                   KUBECACHEDIR=str(tmp / "kube-cache"), NO_COLOR="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for i in range(args.rounds):
            for who in ("kubectl", "fieldown"):
                r = one_round(who, c, tmp, env, args)
                load.append(os.getloadavg())
                rounds.append(r)
                print(f"round {i + 1}/{args.rounds} {who}: {r.acked} writes in {r.seconds:.1f}s, "
                      f"{r.missed} missed, median lag {quantile(r.lag, 0.5):.3f}s, peak {r.peak_rss:.0f} MiB",
                      file=sys.stderr)
    finally:
        lab.stop(state / "lab")
        shutil.rmtree(state, ignore_errors=True)
    return 0 if report(rounds, args, load) else 1


if __name__ == "__main__":
    sys.exit(main())
