#!/usr/bin/env python3
"""Benchmark: start-up of the CLI and decoding throughput of managedFields (issue 2, §8).

Measured in one run, each against a baseline run the same way:

1. wall time of ``kubectl-fieldown --help`` and of ``kubectl-fieldown show -i
   examples/deployment.yaml -o json`` (a Deployment with ~10 managers), median of N subprocess
   runs, next to ``python -c pass`` (the interpreter's own start-up). Goal: <= 0.25 s each.
2. decode + owner-tree throughput over many objects' managedFields: objects/s and MB/s of
   managedFields JSON, next to ``json.loads`` of the same bytes (the floor for any decoder).

    python bench/bench_show.py [--runs 11] [--objects 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def wall(cmd: list[str], runs: int) -> float:
    env = dict(os.environ, NO_COLOR="1")
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def startup(runs: int) -> None:
    exe = str(Path(sys.executable).parent / "kubectl-fieldown")
    if not Path(exe).exists():
        exe_cmd = [sys.executable, "-m", "kubectl_fieldown"]
    else:
        exe_cmd = [exe]
    example = ROOT / "examples" / "deployment.yaml"
    rows = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
        ("kubectl-fieldown --help", [*exe_cmd, "--help"]),
        ("show -i deployment.yaml -o json", [*exe_cmd, "show", "-i", str(example), "-o", "json"]),
        ("show -i deployment.yaml (tree)", [*exe_cmd, "show", "-i", str(example)]),
    ]
    base = None
    print(f"start-up, median of {runs} runs")
    for name, cmd in rows:
        t = wall(cmd, runs)
        base = base or t
        goal = "" if base == t else ("  goal <= 0.25 s: " + ("met" if t <= 0.25 else "NOT met"))
        print(f"  {name:34s} {t * 1000:7.0f} ms  {t / base:5.1f}x baseline{goal}")


def sample_objects(n: int) -> list[dict[str, Any]]:
    """Objects with realistic managedFields: the recorded conformance objects, repeated."""
    cases = sorted((ROOT / "tests" / "conformance").glob("**/*.json"))
    objs = []
    for p in cases:
        if p.name == "README.md":
            continue
        case = json.loads(p.read_text())
        objs.append(case["live"])
    if (ROOT / "examples" / "deployment.yaml").exists():
        import yaml

        objs.append(yaml.safe_load((ROOT / "examples" / "deployment.yaml").read_text()))
    return [objs[i % len(objs)] for i in range(n)]


def throughput(n: int, repeat: int) -> None:
    from kubectl_fieldown.ownership.managedfields import decode_entries
    from kubectl_fieldown.ownership.tree import build_owner_tree

    objs = sample_objects(n)
    blobs = [json.dumps(o["metadata"].get("managedFields") or []) for o in objs]
    mf_bytes = sum(len(b) for b in blobs)
    # the floor: parse the managedFields JSON and nothing else
    t_json = min(_timed(lambda: [json.loads(b) for b in blobs]) for _ in range(repeat))
    parsed = [json.loads(b) for b in blobs]
    t_decode = min(_timed(lambda: [decode_entries(p) for p in parsed]) for _ in range(repeat))
    t_tree = min(_timed(lambda: [build_owner_tree(o) for o in objs]) for _ in range(repeat))
    entries = sum(len(p) for p in parsed)
    print(f"\ndecode throughput over {n} objects ({entries} managedFields entries, {mf_bytes / 1e6:.2f} MB of JSON)")
    for name, t in (
        ("json.loads of managedFields (floor)", t_json),
        ("decode entries (FieldsV1 -> FieldSet)", t_decode),
        ("decode + owner tree (with values)", t_tree),
    ):
        print(f"  {name:40s} {t * 1000:8.1f} ms  {n / t:9.0f} objects/s  {mf_bytes / t / 1e6:7.1f} MB/s"
              f"  {t / t_json:5.1f}x floor")


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    startup(args.runs)
    throughput(args.objects, args.repeat)


if __name__ == "__main__":
    main()
