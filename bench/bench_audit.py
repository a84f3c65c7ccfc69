#!/usr/bin/env python3
"""Benchmark: ``kubectl fieldown audit`` against a plain paged LIST and ``kubectl get -o json``.

Issue "pre-upgrade audit", section 5. On a real API server (the lab of hack/lab, started here on
free ports, or the cluster of FIELDOWN_BENCH_KUBECONFIG) with N custom resources (default 10,000)
over three bench CRDs and ten namespaces, measured in the same run, in interleaved rounds (so that
load on the machine hits every contender alike), best of ``--runs`` (medians printed too), with
the CPU seconds of the client and of the lab's API server process:

(a) plain paged LIST in Python: urllib3 + ``json.loads``, limit 500, type after type, nothing else
    (the floor for any Python tool);
(b) ``kubectl-fieldown audit -A --kinds <the three types> -o json``, in this process (``main()``,
    imports already done) and as a subprocess (start-up included), with the subprocess' peak RSS;
(c) ``kubectl get <the three types> -A -o json`` with the lab's kubectl 1.36.

Goals: audit <= 2x (a), <= 0.5x (c), peak RSS <= 100 MiB.

The objects are a mix: a third created like client-side ``kubectl apply`` (last-applied
annotation, manager kubectl-client-side-apply: findings, annotation parsed, drift compared), a
third by server-side apply (Apply entries), a third by a controller's Update, with every tenth of
those by ``kubectl create`` (imperative-writer findings). They are created in parallel over
keep-alive connections and kept for later runs when the cluster is external.

    python bench/bench_audit.py [--objects 10000] [--runs 5] [--keep]
    FIELDOWN_BENCH_KUBECONFIG=~/.kube/config python bench/bench_audit.py
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
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
KINDS = ("BenchA", "BenchB", "BenchC")
NAMESPACES = [f"bench-{i}" for i in range(10)]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def crd(kind: str) -> dict[str, Any]:
    plural = kind.lower()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": plural, "listKind": f"{kind}List"},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "color": {"type": "string"},
                        "size": {"type": "integer"},
                        "replicas": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                }}}},
            }],
        },
    }


def types() -> list[str]:
    return [f"{k.lower()}.{GROUP}" for k in KINDS]


# --- the cluster -----------------------------------------------------------------------------------


@contextlib.contextmanager
def cluster(keep: bool) -> Iterator[lab.Cluster]:
    kc = os.environ.get("FIELDOWN_BENCH_KUBECONFIG")
    if kc:
        kubectl = os.environ.get("FIELDOWN_BENCH_KUBECTL") or shutil.which("kubectl") \
            or str(lab.lab_binaries()["kubectl"])
        server = yaml.safe_load(Path(kc).expanduser().read_text())["clusters"][0]["cluster"]["server"]
        yield lab.Cluster(kubeconfig=Path(kc).expanduser(), kubectl_bin=Path(kubectl), server=server, external=True)
        return
    prefix = lab.ensure_built()
    state = Path(tempfile.mkdtemp(prefix="fieldown-bench-audit-"))
    c = lab.start(state / "lab", *lab.free_ports(3), prefix=prefix, no_fsync=True)
    print(f"lab API server {c.server} (state {state})", file=sys.stderr)
    try:
        yield c
    finally:
        if keep:
            print(f"kept: KUBECONFIG={c.kubeconfig}; stop with STATE={state / 'lab'} hack/lab/start.sh stop",
                  file=sys.stderr)
        else:
            lab.stop(state / "lab")
            shutil.rmtree(state, ignore_errors=True)


def populate(c: lab.Cluster, n: int) -> None:
    """Create the bench CRDs and ``n`` objects over them (skipped when they exist already)."""
    from kubectl_fieldown.kube import ClusterClient, ClusterOptions

    for k in KINDS:
        c.apply_crd(crd(k))
    client = ClusterClient(ClusterOptions(kubeconfig=str(c.kubeconfig), gzip=False))
    resources = [client.discovery.resolve(t) for t in types()]
    existing = sum(len(page) for r in resources for page in client.list_pages(r, _all()))
    if existing >= n:
        print(f"{existing} bench objects exist already", file=sys.stderr)
        client.close()
        return

    def create(i: int) -> None:
        res = resources[i % len(resources)]
        ns = NAMESPACES[(i // len(resources)) % len(NAMESPACES)]
        name = f"obj-{i:06d}"
        body: dict[str, Any] = {
            "apiVersion": res.api_version, "kind": res.kind,
            "metadata": {"name": name, "namespace": ns, "labels": {"app": "bench", "shard": str(i % 7)}},
            "spec": {"color": ("red", "green", "blue")[i % 3], "size": i, "replicas": 1 + i % 5,
                     "tags": ["a", "b"], "labels": {"team": "t" + str(i % 13)}},
        }
        mode = (i // len(resources)) % 3
        if mode == 0:  # client-side kubectl apply
            manifest = json.loads(json.dumps(body))
            manifest["metadata"]["annotations"] = {}
            body["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(manifest, sort_keys=True) + "\n"}
            client.create(res, body, ns, field_manager="kubectl-client-side-apply")
        elif mode == 1:  # server-side apply
            client.patch(res, name, ns, body, "apply", field_manager="argocd-controller", force=True)
        else:  # a controller's Update, or kubectl create
            client.create(res, body, ns, field_manager="kubectl-create" if i % 10 == 2 else "bench-controller")

    t0 = time.perf_counter()
    todo = range(existing, n) if existing else range(n)
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _ in pool.map(create, todo):
            pass
    client.close()
    print(f"created {len(todo)} objects in {time.perf_counter() - t0:.1f}s", file=sys.stderr)


def _all() -> Any:
    from kubectl_fieldown.kube import ALL_NAMESPACES

    return ALL_NAMESPACES


# --- the contenders --------------------------------------------------------------------------------


class PlainList:
    """(a): urllib3 with the kubeconfig's credentials, json.loads, limit 500, nothing else."""

    def __init__(self, kubeconfig: Path, tmp: Path) -> None:
        import urllib3

        doc = yaml.safe_load(kubeconfig.read_text())
        ctx_name = doc["current-context"]
        ctx = next(c["context"] for c in doc["contexts"] if c["name"] == ctx_name)
        cl = next(c["cluster"] for c in doc["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in doc["users"] if u["name"] == ctx["user"])
        self.server = cl["server"].rstrip("/")
        kw: dict[str, Any] = {}
        if cl.get("certificate-authority-data"):
            (tmp / "ca.crt").write_bytes(base64.b64decode(cl["certificate-authority-data"]))
            kw["ca_certs"] = str(tmp / "ca.crt")
        elif cl.get("certificate-authority"):
            kw["ca_certs"] = cl["certificate-authority"]
        self.headers = {"Accept": "application/json"}
        if user.get("client-certificate-data"):
            (tmp / "c.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
            (tmp / "c.key").write_bytes(base64.b64decode(user["client-key-data"]))
            kw.update(cert_file=str(tmp / "c.crt"), key_file=str(tmp / "c.key"))
        if user.get("token"):
            self.headers["Authorization"] = f"Bearer {user['token']}"
        self.pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if "ca_certs" in kw else "CERT_NONE", **kw)

    def run(self) -> int:
        count = 0
        for t in types():
            plural = t.split(".", 1)[0]
            token = ""
            while True:
                url = f"{self.server}/apis/{GROUP}/v1/{plural}?limit=500"
                if token:
                    url += "&continue=" + token
                resp = self.pool.request("GET", url, headers=self.headers)
                doc = json.loads(resp.data)
                count += len(doc["items"])
                token = doc["metadata"].get("continue") or ""
                if not token:
                    break
        return count


def audit_args() -> list[str]:
    return ["audit", "-A", "--kinds", ",".join(types()), "-o", "json", "--fail-on", "none"]


@dataclass
class Sample:
    """One run of one contender: wall seconds, CPU seconds of the client (user + system, all
    threads) and of the API server process when it is known, peak RSS (MiB) of a child process."""

    wall: float
    cpu: float
    server: float | None
    rss: float = 0.0


def server_cpu(c: lab.Cluster) -> Callable[[], float | None]:
    """CPU seconds used so far by the lab's API server (None for a cluster we cannot see)."""
    pidfile = c.kubeconfig.parent / "apiserver.pid"
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float | None:
        try:
            fields = Path(f"/proc/{int(pidfile.read_text())}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            return None
        return (int(fields[11]) + int(fields[12])) / tick

    return read


def in_process(fn: Callable[[], Any], server: Callable[[], float | None]) -> Sample:
    s0, c0, t0 = server(), time.process_time(), time.perf_counter()
    fn()
    wall, cpu, s1 = time.perf_counter() - t0, time.process_time() - c0, server()
    return Sample(wall, cpu, None if s0 is None or s1 is None else s1 - s0)


def child(argv: list[str], env: dict[str, str], server: Callable[[], float | None]) -> Sample:
    s0, t0 = server(), time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall, s1 = time.perf_counter() - t0, server()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        assert proc.stderr is not None
        raise SystemExit(f"{' '.join(argv[:3])} failed ({code}): {proc.stderr.read().decode()}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, None if s0 is None or s1 is None else s1 - s0,
                  usage.ru_maxrss / 1024)  # KiB on Linux


def audit_in_process(env: dict[str, str]) -> Callable[[], int]:
    from kubectl_fieldown.cli.main import main

    def run() -> int:
        saved_env = dict(os.environ)
        os.environ.update(env)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                code = main(audit_args())
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
        if code != 0:
            raise SystemExit(f"audit failed with exit code {code}")
        return int(json.loads(out.getvalue())["summary"]["objects"])

    return run


def audit_command() -> list[str]:
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    return [*cmd, *audit_args()]


def kubectl_command(c: lab.Cluster) -> list[str]:
    return [str(c.kubectl_bin), "--kubeconfig", str(c.kubeconfig), "get", ",".join(types()), "-A", "-o", "json"]


# --- main --------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="leave the lab server running (prints its kubeconfig)")
    args = ap.parse_args()

    with cluster(args.keep) as c, tempfile.TemporaryDirectory(prefix="fieldown-bench-") as tmp_name:
        tmp = Path(tmp_name)
        populate(c, args.objects)
        env = dict(os.environ, KUBECONFIG=str(c.kubeconfig), FIELDOWN_CACHE_DIR=str(tmp / "cache"),
                   KUBECACHEDIR=str(tmp / "kube-cache"), NO_COLOR="1")
        # an installed package has its bytecode compiled; without it every run compiles the sources
        # again (~40 ms here), so let the warm-up write it
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        plain = PlainList(c.kubeconfig, tmp)
        audit = audit_in_process(env)
        server = server_cpu(c)

        # warm-up: discovery caches (ours and kubectl's), imports, connections
        listed = plain.run()
        audited = audit()
        child(audit_command(), env, server)
        child(kubectl_command(c), env, server)
        if audited != listed:
            print(f"warning: the audit saw {audited} objects, the LIST {listed}", file=sys.stderr)

        names = ("list", "audit", "audit-subprocess", "kubectl")
        samples: dict[str, list[Sample]] = {n: [] for n in names}
        for i in range(args.runs):
            samples["list"].append(in_process(plain.run, server))
            samples["audit"].append(in_process(audit, server))
            samples["audit-subprocess"].append(child(audit_command(), env, server))
            samples["kubectl"].append(child(kubectl_command(c), env, server))
            print(f"round {i + 1}/{args.runs}: " + ", ".join(f"{n} {samples[n][-1].wall:.2f}s" for n in names)
                  + f" ({samples['audit-subprocess'][-1].rss:.0f} MiB)", file=sys.stderr)

    report(listed, samples, args.runs)
    return 0 if goals_met(samples) else 1


def _best(ss: list[Sample]) -> float:
    return min(x.wall for x in ss)


def goals(samples: dict[str, list[Sample]]) -> list[tuple[str, bool]]:
    a, k = _best(samples["list"]), _best(samples["kubectl"])
    b_in, b_sub = _best(samples["audit"]), _best(samples["audit-subprocess"])
    peak = max(x.rss for x in samples["audit-subprocess"])
    return [
        ("audit <= 2x LIST (in-process)", b_in <= 2 * a),
        ("audit <= 2x LIST (subprocess)", b_sub <= 2 * a),
        ("audit <= 0.5x kubectl (in-process)", b_in <= 0.5 * k),
        ("audit <= 0.5x kubectl (subprocess)", b_sub <= 0.5 * k),
        ("peak RSS <= 100 MiB", peak <= 100),
    ]


def goals_met(samples: dict[str, list[Sample]]) -> bool:
    return all(ok for _, ok in goals(samples))


def report(listed: int, samples: dict[str, list[Sample]], runs: int) -> None:
    med = statistics.median
    a, k = _best(samples["list"]), _best(samples["kubectl"])
    labels = {
        "list": "(a) plain paged LIST (urllib3 + json.loads)",
        "audit": "(b) audit, in-process",
        "audit-subprocess": "(b) audit, subprocess",
        "kubectl": "(c) kubectl get -A -o json",
    }
    # goals on the best of the rounds: on a shared machine other jobs only ever add time, so the
    # minimum is the least disturbed figure; the medians are printed next to it. CPU seconds do not
    # depend on what else runs: they show where the work is (the API server, mostly)
    print(f"\n{listed} objects, 3 types, {len(NAMESPACES)} namespaces, {runs} interleaved rounds\n")
    print(f"  {'':46s} {'wall: best':>10s} {'median':>7s}   {'vs LIST':>7s} {'vs kubectl':>10s}   "
          f"{'CPU: client':>11s} {'server':>7s}")
    for name, label in labels.items():
        ss = samples[name]
        best = _best(ss)
        ratio = f"{best / a:6.2f}x {best / k:9.2f}x" if name.startswith("audit") else f"{'':7s} {'':10s}"
        servers = [x.server for x in ss if x.server is not None]
        server = f"{med(servers):6.2f}s" if servers else "      -"
        print(f"  {label:46s} {best:9.2f}s {med(x.wall for x in ss):6.2f}s   {ratio}   "
              f"{med(x.cpu for x in ss):10.2f}s {server}")
    peak = max(x.rss for x in samples["audit-subprocess"])
    print(f"  {'audit subprocess peak RSS (max of rounds)':46s} {peak:9.0f} MiB")
    print()
    for name, ok in goals(samples):
        print(f"  {name:46s} {'met' if ok else 'NOT met'}")
    print(f"\n  load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    sys.exit(main())
