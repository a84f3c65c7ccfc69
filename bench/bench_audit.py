#!/usr/bin/env python3
"""Benchmark: ``kubectl fieldown audit`` against a plain paged LIST of the same objects.

Issues "pre-upgrade audit" (section 5) and 24 (performance budget). On a real API server (the lab of
hack/lab, started here on free ports, or the cluster of FIELDOWN_BENCH_KUBECONFIG) with N custom
resources over three bench CRDs and ten namespaces, for each size of ``--objects`` (default 10,000
and 100,000, ascending: the objects of a size are kept for the next), measured in the same run, in
interleaved rounds (so that load on the machine hits every contender alike), best of ``--runs``
(medians printed too), with the CPU seconds of the client and of the lab's API server process:

(a) plain paged LIST in Python: urllib3 + ``json.loads``, limit 500, type after type, nothing else
    (the floor for any Python tool); and the same as a Python subprocess of its own (start-up and
    the urllib3 import included: the floor for any Python command line);
(b) ``kubectl-fieldown audit -A --kinds <the three types> -o json`` as users run it: a subprocess,
    start-up included, with its peak RSS; and the same in this process (``main()``, imports done);
(f) the same subprocess with ``-f`` manifests for every object (ten multi-document YAML files, one
    per namespace): the audit predicts Argo CD's next apply of each object from its manifest (up to
    ``--manifests-max`` objects), in its worker processes (``--jobs auto``: one per CPU); the
    "tree PSS" column sums the memory of the command's processes (workers share pages with it);
(c) ``kubectl get <the three types> -A -o json`` with the lab's kubectl 1.36 (up to
    ``--kubectl-max`` objects: it needs GBs for 100,000).

Goals (issue 24): (b) subprocess <= 1.3x (a); (f) <= (a) + 0.5 ms per predicted object; peak RSS
of (b) <= 100 MiB. The run exits 1 when one is missed.

The objects are a mix: a third created like client-side ``kubectl apply`` (last-applied
annotation, manager kubectl-client-side-apply: findings, annotation parsed, drift compared), a
third by server-side apply (Apply entries), a third by a controller's Update, with every tenth of
those by ``kubectl create`` (imperative-writer findings). They are created in parallel over
keep-alive connections (``--create-workers`` threads; the lab takes a few hundred writes a second)
and kept for later runs when the cluster is external.

``--instructions N`` also counts the -f checks of one object in instructions (valgrind's callgrind,
which load on the machine does not disturb): the first N bench objects, read off the lab as a LIST
gives them, checked with their manifests in one process as an audit's worker checks them, less a run
that checks none. The wall-time goal of (f) moves with the machine's speed from hour to hour; this
count does not.

    python bench/bench_audit.py [--objects 10000,100000] [--runs 3] [--keep] [--instructions 300]
    FIELDOWN_BENCH_KUBECONFIG=~/.kube/config python bench/bench_audit.py --objects 2000
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
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import callgrind  # noqa: E402  (bench/callgrind.py, beside this script)
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


def body(i: int, api_version: str, kind: str) -> dict[str, Any]:
    """Object ``i`` as it is created (and, for the -f variant, as its manifest)."""
    ns = NAMESPACES[(i // len(KINDS)) % len(NAMESPACES)]
    return {
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": f"obj-{i:06d}", "namespace": ns, "labels": {"app": "bench", "shard": str(i % 7)}},
        "spec": {"color": ("red", "green", "blue")[i % 3], "size": i, "replicas": 1 + i % 5,
                 "tags": ["a", "b"], "labels": {"team": "t" + str(i % 13)}},
    }


def populate(c: lab.Cluster, n: int, workers: int = 16) -> None:
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
        body_ = body(i, res.api_version, res.kind)
        mode = (i // len(resources)) % 3
        if mode == 0:  # client-side kubectl apply
            manifest = json.loads(json.dumps(body_))
            manifest["metadata"]["annotations"] = {}
            body_["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(manifest, sort_keys=True) + "\n"}
            client.create(res, body_, ns, field_manager="kubectl-client-side-apply")
        elif mode == 1:  # server-side apply
            client.patch(res, name, ns, body_, "apply", field_manager="argocd-controller", force=True)
        else:  # a controller's Update, or kubectl create
            client.create(res, body_, ns, field_manager="kubectl-create" if i % 10 == 2 else "bench-controller")

    t0 = time.perf_counter()
    todo = range(existing, n) if existing else range(n)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(create, todo):
            pass
    client.close()
    took = time.perf_counter() - t0
    print(f"created {len(todo)} objects in {took:.1f}s ({len(todo) / took:.0f}/s, {workers} threads)", file=sys.stderr)


def write_manifests(directory: Path, n: int) -> Path:
    """A manifest for each of the ``n`` objects, one multi-document YAML file per namespace: the
    object as created, with every fourth one's replicas changed (a next apply that changes a value)."""
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[str]] = {ns: [] for ns in NAMESPACES}
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        doc = body(i, f"{GROUP}/v1", kind)
        if i % 4 == 0:
            doc["spec"]["replicas"] += 1
        files[doc["metadata"]["namespace"]].append(json.dumps(doc))
    for ns, docs in files.items():
        # JSON is YAML: each document on one line, as a generator would write them
        (directory / f"{ns}.yaml").write_text("---\n".join(d + "\n" for d in docs))
    return directory


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
        self.pool_args = kw
        self.pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if "ca_certs" in kw else "CERT_NONE", **kw)

    def command(self) -> list[str]:
        """(a) as its own Python process (start-up and the urllib3 import included): the floor of a
        subprocess in Python that lists these objects, against which audit's start-up is judged."""
        spec = {"server": self.server, "headers": self.headers, "pool": self.pool_args, "group": GROUP,
                "plurals": [t.split(".", 1)[0] for t in types()]}
        return [sys.executable, "-c", _PLAIN_LIST, json.dumps(spec)]

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


# PlainList.run as a program of its own (the spec as JSON in argv[1])
_PLAIN_LIST = """
import json, sys
import urllib3
spec = json.loads(sys.argv[1])
kw = spec["pool"]
pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if "ca_certs" in kw else "CERT_NONE", **kw)
count = 0
for plural in spec["plurals"]:
    token = ""
    while True:
        url = f"{spec['server']}/apis/{spec['group']}/v1/{plural}?limit=500"
        if token:
            url += "&continue=" + token
        doc = json.loads(pool.request("GET", url, headers=spec["headers"]).data)
        count += len(doc["items"])
        token = doc["metadata"].get("continue") or ""
        if not token:
            break
print(count)
"""


def audit_args(manifests: Path | None = None) -> list[str]:
    # the pipeline moves to Argo CD (server-side apply): its next apply of each manifest is predicted
    extra = ["-f", str(manifests), "--applier", "argocd"] if manifests is not None else []
    return ["audit", "-A", "--kinds", ",".join(types()), "-o", "json", "--fail-on", "none", *extra]


@dataclass
class Sample:
    """One run of one contender: wall seconds, CPU seconds of the client (user + system, all
    threads) and of the API server process when it is known, peak RSS (MiB) of a child process."""

    wall: float
    cpu: float
    server: float | None
    rss: float = 0.0
    pss: float = 0.0
    """Peak of the summed PSS (MiB) of the command's processes: itself and its workers (audit --jobs),
    sampled every 200 ms; RSS counts the pages a worker shares with the audit twice, PSS shares them."""


def server_cpu(c: lab.Cluster) -> Callable[[], float | None]:
    """CPU seconds used so far by the lab's API server (None for a cluster we cannot see; for an
    external lab, FIELDOWN_BENCH_STATE names its STATE directory)."""
    pidfile = c.kubeconfig.parent / "apiserver.pid"
    if not pidfile.exists() and os.environ.get("FIELDOWN_BENCH_STATE"):
        pidfile = Path(os.environ["FIELDOWN_BENCH_STATE"]) / "apiserver.pid"
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


# Runs the command (argv[2:]) and writes its wall seconds, CPU seconds, peak RSS (KiB) and exit code
# to the file descriptor argv[1]. Linux keeps a process's peak RSS across exec, and a child forked
# (or vforked) from this bench starts with the bench's own RSS as its peak: hundreds of MiB once
# 100,000 objects have been listed here. A child of this small process starts from its few MiB
# instead, so the peak is the command's own (and its wall time leaves out this process's start).
_MEASURED = """
import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:])
_, status, u = os.wait4(p.pid, 0)
wall = time.perf_counter() - t0
code = os.waitstatus_to_exitcode(status)
os.write(int(sys.argv[1]), f"{wall} {u.ru_utime + u.ru_stime} {u.ru_maxrss} {code}".encode())
"""


def _descendants(pid: int) -> list[int]:
    try:
        kids = [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []
    return kids + [d for k in kids for d in _descendants(k)]


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


#: seconds between two samples of the tree's PSS. A sample reads each process's smaps_rollup (the
#: kernel walks its page tables): 4-5 ms of CPU for an audit -f and its workers, so every 50 ms it
#: took ~0.55 s of CPU from a 7 s run bound by the two CPUs (1.4 s of a 13 s run on a loaded machine);
#: every 200 ms it takes ~0.15 s and finds the same peak (118 and 119 MiB): PSS moves with pages
PSS_PERIOD = 0.2


def _tree_pss(root: int, done: threading.Event, peak: list[int]) -> None:
    """The peak summed PSS of ``root``'s descendants (the measured command below the wrapper)."""
    while not done.wait(PSS_PERIOD):
        peak[0] = max(peak[0], sum(_pss_kib(p) for p in _descendants(root)))


def child(argv: list[str], env: dict[str, str], server: Callable[[], float | None]) -> Sample:
    r, w = os.pipe()
    s0 = server()
    done, peak = threading.Event(), [0]
    try:
        proc = subprocess.Popen([sys.executable, "-c", _MEASURED, str(w), *argv], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env, pass_fds=(w,))
        os.close(w)
        w = -1
        sampler = threading.Thread(target=_tree_pss, args=(proc.pid, done, peak), daemon=True)
        sampler.start()
        _, err = proc.communicate()
        done.set()
        sampler.join()
        with os.fdopen(r, "rb") as f:
            r = -1
            report = f.read().decode().split()
    finally:
        for fd in (r, w):
            if fd >= 0:
                os.close(fd)
    s1 = server()
    if proc.returncode != 0 or len(report) != 4 or report[3] != "0":
        code = report[3] if len(report) == 4 else proc.returncode
        raise SystemExit(f"{' '.join(argv[:3])} failed ({code}): {err.decode()}")
    wall, cpu, rss_kib = float(report[0]), float(report[1]), float(report[2])
    return Sample(wall, cpu, None if s0 is None or s1 is None else s1 - s0, rss_kib / 1024, peak[0] / 1024)


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


def audit_command(manifests: Path | None = None) -> list[str]:
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    return [*cmd, *audit_args(manifests)]


def kubectl_command(c: lab.Cluster) -> list[str]:
    return [str(c.kubectl_bin), "--kubeconfig", str(c.kubeconfig), "get", ",".join(types()), "-A", "-o", "json"]


# --- the -f checks in instructions ----------------------------------------------------------------


def count_child(state_path: str, n: int) -> None:
    """Run by valgrind: the -f checks of the first ``n`` saved objects in this one process, as an
    audit's worker makes them (Argo CD next, each object's manifest and the file it came from)."""
    import hashlib

    from kubectl_fieldown.appliers import Applier
    from kubectl_fieldown.audit import AuditContext, audit_object, object_key
    from kubectl_fieldown.kube.kindrules import KindRules
    from kubectl_fieldown.schema import GroupVersionKind
    from kubectl_fieldown.schema.registry import SchemaRegistry

    state = json.loads(Path(state_path).read_text())
    registry = SchemaRegistry()
    for crd_ in state["crds"]:
        registry.add_crd(crd_, "the bench")
    kinds = KindRules(registry)
    known = {(f"{GROUP}/v1", k): kinds.rules(GroupVersionKind(GROUP, "v1", k), False) for k in KINDS}
    ctx = AuditContext(applier=Applier.of("argocd"),
                       manifests={object_key(m): m for _, m in state["manifests"]},
                       manifest_files={object_key(m): f for f, m in state["manifests"]},
                       rules_for=lambda api_version, kind: known.get((api_version, kind)), now=state["now"])
    digest = hashlib.sha256()
    for obj in state["objects"][:n]:
        for finding in audit_object(obj, ctx):
            digest.update(repr(finding).encode())
    print(n, digest.hexdigest()[:16])


def count_instructions(c: lab.Cluster, manifests: Path, count: int) -> None:
    """Instructions of one object's -f checks (valgrind callgrind, which load does not disturb): a
    process that checks the first ``count`` bench objects less one that checks none, from the same
    objects read off the lab (as a LIST gives them), CRDs and manifests, saved as JSON."""
    from kubectl_fieldown.ownership.managedfields import format_time

    if shutil.which("valgrind") is None:
        print("\n-f checks in instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return
    kubectl = [str(c.kubectl_bin), "--kubeconfig", str(c.kubeconfig)]
    listed = json.loads(subprocess.run([*kubectl, "get", ",".join(types()), "-A", "-o", "json",
                                        "--show-managed-fields"], check=True, capture_output=True).stdout)
    crds = json.loads(subprocess.run([*kubectl, "get", "crd", "-o", "json"], check=True,
                                     capture_output=True).stdout)
    # by name: obj-000000, obj-000001, ... take the three histories (and kinds) in turn
    objects = sorted(listed["items"], key=lambda o: o["metadata"]["name"])[:count]
    docs = [(str(f), json.loads(d)) for f in sorted(manifests.glob("*.yaml"))
            for d in f.read_text().split("---\n") if d.strip()]
    state = {"crds": [x for x in crds["items"] if x["spec"]["group"] == GROUP], "objects": objects,
             "manifests": docs, "now": format_time(time.time())}
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(state, f)
    try:
        def child_cmd(n: int) -> list[str]:
            return [sys.executable, __file__, "--count-child", f.name, str(n)]

        n = len(objects)
        # once without valgrind: it compiles the bytecode the counted runs then read
        subprocess.run(child_cmd(1), check=True, stdout=subprocess.DEVNULL, env=env)
        per_object = (callgrind.instructions(child_cmd(n), env=env) - callgrind.instructions(child_cmd(0), env=env)) / n
    finally:
        os.unlink(f.name)
    print(f"\n-f checks in instructions (valgrind callgrind): {per_object / 1e6:.2f} million per object "
          f"(the first {n} bench objects in one process, less none; Argo CD next)")


# --- main --------------------------------------------------------------------------------------------


def main() -> int:
    if sys.argv[1:2] == ["--count-child"]:
        count_child(sys.argv[2], int(sys.argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", default="10000,100000", help="sizes, comma-separated (ascending)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="leave the lab server running (prints its kubeconfig)")
    ap.add_argument("--create-workers", type=int, default=8,
                    help="threads creating objects (the client keeps 5 x CPUs connections)")
    ap.add_argument("--kubectl-max", type=int, default=10_000, help="run kubectl get up to this many objects")
    ap.add_argument("--no-manifests", action="store_true", help="skip the -f variant")
    ap.add_argument("--manifests-max", type=int, default=10_000,
                    help="run the -f variant up to this many objects (it predicts every object: minutes at 100,000)")
    ap.add_argument("--instructions", type=int, default=0, metavar="N",
                    help="also count the -f checks of N objects in instructions (valgrind), e.g. 300")
    args = ap.parse_args()
    sizes = sorted(int(x) for x in str(args.objects).split(",") if x.strip())

    met = True
    with cluster(args.keep) as c, tempfile.TemporaryDirectory(prefix="fieldown-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for n in sizes:
            populate(c, n, args.create_workers)
            manifests = None if args.no_manifests or n > args.manifests_max else \
                write_manifests(tmp / f"manifests-{n}", n)
            met = measure(c, tmp, n, args.runs, manifests, n <= args.kubectl_max) and met
            if args.instructions and n == sizes[0]:
                count_instructions(c, manifests or write_manifests(tmp / f"manifests-{n}", n), args.instructions)
    return 0 if met else 1


def measure(c: lab.Cluster, tmp: Path, n: int, runs: int, manifests: Path | None, with_kubectl: bool) -> bool:
    env = dict(os.environ, KUBECONFIG=str(c.kubeconfig), FIELDOWN_CACHE_DIR=str(tmp / "cache"),
               KUBECACHEDIR=str(tmp / "kube-cache"), NO_COLOR="1")
    # an installed package has its bytecode compiled; without it every run compiles the sources
    # again (~40 ms here), so let the warm-up write it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    plain = PlainList(c.kubeconfig, tmp)
    audit = audit_in_process(env)
    server = server_cpu(c)

    contenders: dict[str, Callable[[], Sample]] = {
        "list": lambda: in_process(plain.run, server),
        "list-subprocess": lambda: child(plain.command(), env, server),
        "audit": lambda: in_process(audit, server),
        "audit-subprocess": lambda: child(audit_command(), env, server),
    }
    if manifests is not None:
        contenders["audit-f"] = lambda: child(audit_command(manifests), env, server)
    if with_kubectl:
        contenders["kubectl"] = lambda: child(kubectl_command(c), env, server)

    # warm-up: discovery caches (ours and kubectl's), imports, connections, bytecode
    listed = plain.run()
    audited = audit()
    for name, run in contenders.items():
        if name not in ("list", "audit"):
            run()
    if audited != listed:
        print(f"warning: the audit saw {audited} objects, the LIST {listed}", file=sys.stderr)

    samples: dict[str, list[Sample]] = {name: [] for name in contenders}
    for i in range(runs):
        for name, run in contenders.items():
            samples[name].append(run())
        print(f"{n} objects, round {i + 1}/{runs}: "
              + ", ".join(f"{name} {samples[name][-1].wall:.2f}s" for name in contenders)
              + f" ({samples['audit-subprocess'][-1].rss:.0f} MiB)", file=sys.stderr)

    report(listed, samples, runs)
    return all(ok for _, ok, _ in goals(samples, listed))


def _best(ss: list[Sample]) -> float:
    return min(x.wall for x in ss)


def goals(samples: dict[str, list[Sample]], n: int) -> list[tuple[str, bool, str]]:
    """(goal, met, the figures)."""
    a = _best(samples["list"])
    sub = _best(samples["audit-subprocess"])
    peak = max(x.rss for x in samples["audit-subprocess"])
    out = [
        ("audit -A (subprocess) <= 1.3x LIST", sub <= 1.3 * a, f"{sub / a:.2f}x"),
        ("peak RSS of audit -A <= 100 MiB", peak <= 100, f"{peak:.0f} MiB"),
    ]
    if "audit-f" in samples:
        f = _best(samples["audit-f"])
        bound = a + 0.0005 * n
        out.insert(1, (f"audit -A -f <= LIST + 0.5 ms x {n} = {bound:.2f}s", f <= bound,
                       f"{f:.2f}s, LIST + {(f - a) / n * 1000:.2f} ms/object"))
    return out


def report(listed: int, samples: dict[str, list[Sample]], runs: int) -> None:
    med = statistics.median
    a = _best(samples["list"])
    k = _best(samples["kubectl"]) if "kubectl" in samples else None
    labels = {
        "list": "(a) plain paged LIST (urllib3 + json.loads)",
        "list-subprocess": "(a) the same LIST as a Python subprocess",
        "audit-subprocess": "(b) audit -A, subprocess (as users run it)",
        "audit": "(b) audit -A, in-process (imports done)",
        "audit-f": "(f) audit -A -f <manifest of every object>",
        "kubectl": "(c) kubectl get -A -o json",
    }
    # goals on the best of the rounds: on a shared machine other jobs only ever add time, so the
    # minimum is the least disturbed figure; the medians are printed next to it. CPU seconds do not
    # depend on what else runs: they show where the work is
    print(f"\n{listed} objects, 3 types, {len(NAMESPACES)} namespaces, {runs} interleaved rounds\n")
    print(f"  {'':46s} {'wall: best':>10s} {'median':>7s}   {'vs LIST':>7s} {'vs kubectl':>10s}   "
          f"{'CPU: client':>11s} {'server':>7s} {'peak RSS':>9s} {'tree PSS':>9s}")
    for name, label in labels.items():
        if name not in samples:
            continue
        ss = samples[name]
        best = _best(ss)
        ratio = f"{best / a:6.2f}x " if name != "list" else f"{'':7s} "
        ratio += f"{best / k:9.2f}x" if k is not None and name.startswith("audit") else f"{'':10s}"
        servers = [x.server for x in ss if x.server is not None]
        server = f"{med(servers):6.2f}s" if servers else "      -"
        rss = f"{max(x.rss for x in ss):5.0f} MiB" if any(x.rss for x in ss) else ""
        pss = f"{max(x.pss for x in ss):5.0f} MiB" if any(x.pss for x in ss) else ""
        print(f"  {label:46s} {best:9.2f}s {med(x.wall for x in ss):6.2f}s   {ratio}   "
              f"{med(x.cpu for x in ss):10.2f}s {server} {rss:>9s} {pss:>9s}")
    print()
    for name, ok, figure in goals(samples, listed):
        print(f"  {name:52s} {'met' if ok else 'NOT met':8s} ({figure})")
    print(f"\n  load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    sys.exit(main())
