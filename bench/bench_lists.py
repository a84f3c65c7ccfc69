#!/usr/bin/env python3
"""Benchmark: keyed lists of N items (issue 18, item 13), for N = 1k, 2k, 4k, 8k, 16k.

A Deployment whose one container has N ``ports`` (a list map keyed by containerPort and protocol)
and N ``env`` entries (keyed by name). Its live object carries managedFields from two managers
(client-side apply and a server-side applier, written by the engine itself); the manifest of a
third applier changes a few items. For each N, in one process, the times of:

* the baseline: ``json.loads`` of the live object (what any reader must do at least);
* ``show -i LIVE`` (the tree, to /dev/null), as the CLI runs it;
* ``conflicts --live LIVE -f MANIFEST`` (the manifest in YAML), as the CLI runs it;

and, per doubling of N, the ratio of each time to the time for N/2 (2.0 is linear, 4.0
quadratic). Times are CPU time of this process (``time.process_time``), so that other work on a
busy machine does not count. Not a test: nothing is asserted.

    python bench/bench_lists.py [--sizes 1000,2000,4000,8000,16000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from kubectl_fieldown.cli.main import main as cli
from kubectl_fieldown.fieldmanager import ResourceRules, simulate_apply, simulate_update
from kubectl_fieldown.schema.builtin import builtin_kinds
from kubectl_fieldown.schema.types import GroupVersionKind


def rules() -> ResourceRules:
    ks = builtin_kinds().lookup(GroupVersionKind("apps", "v1", "Deployment"))
    assert ks is not None
    return ResourceRules.for_kind(ks, True, None, custom_resource=False)


def deployment(n: int, variant: int) -> dict[str, Any]:
    ports = [{"containerPort": 1000 + k, "protocol": "TCP", "name": f"p{k}"} for k in range(n)]
    env = [{"name": f"VAR_{k}", "value": f"v{k}"} for k in range(n)]
    if variant:
        ports[n // 2]["name"] = "changed"
        env[n // 3]["value"] = "changed"
        del env[-1]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "big", "namespace": "default", "labels": {"app": "big"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "big"}},
            "template": {
                "metadata": {"labels": {"app": "big"}},
                "spec": {"containers": [{"name": "main", "image": "nginx", "ports": ports, "env": env}]},
            },
        },
    }


def live_object(n: int, r: ResourceRules) -> dict[str, Any]:
    first = deployment(n, 0)
    live = simulate_update(None, first, "kubectl-client-side-apply", r, now="2026-11-22T01:00:00Z").object
    live["metadata"]["uid"] = "uid-1"
    live["metadata"]["resourceVersion"] = "1"
    live["metadata"]["creationTimestamp"] = "2026-11-22T01:00:00Z"
    live = simulate_apply(live, deployment(n, 0), "argocd-controller", r, now="2026-11-22T01:10:00Z",
                          force=True).object
    return live


def timed(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def run_cli(argv: list[str]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli(argv)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=["show", "conflicts"], default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    r = rules()
    rows: list[tuple[int, int, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            live = live_object(n, r)
            live_path, manifest_path = Path(tmp) / f"live-{n}.json", Path(tmp) / f"manifest-{n}.yaml"
            text = json.dumps(live)
            live_path.write_text(text)
            manifest_path.write_text(yaml.safe_dump(deployment(n, 1)))
            base = timed(lambda t=text: json.loads(t), max(args.repeat, 3))  # type: ignore[misc]
            show = conflicts = float("nan")
            if args.only in (None, "show"):
                show = timed(lambda p=live_path: run_cli(["show", "-i", str(p), "-o", "tree"]),  # type: ignore[misc]
                             args.repeat)
            if args.only in (None, "conflicts"):
                conflicts = timed(  # type: ignore[misc]
                    lambda p=live_path, m=manifest_path: run_cli(
                        ["conflicts", "--live", str(p), "-f", str(m), "--field-manager", "flux"]),
                    args.repeat)
            rows.append((n, len(text), base, show, conflicts))
            print(f"N={n:>6}  {len(text) / 1e6:6.2f} MB  json.loads {base:7.3f} s  show {show:7.2f} s  "
                  f"conflicts {conflicts:7.2f} s", file=sys.stderr)

    print(f"{'N':>7} {'MB':>6} {'json.loads':>11} {'show -i':>9} {'conflicts':>10}   ratio per doubling "
          f"(2 = linear, 4 = quadratic)")
    prev: tuple[int, int, float, float, float] | None = None
    for row in rows:
        n, size, base, show, conflicts = row
        ratios = ""
        if prev is not None and n == 2 * prev[0]:
            ratios = (f"json.loads {base / prev[2]:.1f}  show {show / prev[3]:.1f}  "
                      f"conflicts {conflicts / prev[4]:.1f}")
        print(f"{n:>7} {size / 1e6:>6.2f} {base:>10.3f}s {show:>8.2f}s {conflicts:>9.2f}s   {ratios}")
        prev = row


if __name__ == "__main__":
    main()
