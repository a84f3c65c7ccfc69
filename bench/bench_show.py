#!/usr/bin/env python3
"""Benchmark: start-up of the CLI and decoding throughput of managedFields (issues 2 §8, 24).

Measured in one run, each against a baseline run the same way:

1. wall time (and CPU time) of ``kubectl-fieldown --help``, of ``kubectl-fieldown show -i
   examples/deployment.yaml`` (a Deployment with ~10 managers) as JSON into a pipe and as the tree
   on a terminal (a pseudo-terminal: colours, rich), median (and best) of N subprocess runs, next to
   ``python -c pass`` (the interpreter's own start-up, with the same ``site``).
   Goals (issue 24): ``--help`` <= 0.08 s, the tree on a terminal <= 0.10 s.
2. decode + owner-tree throughput over many objects' managedFields: objects/s and MB/s of
   managedFields JSON, next to ``json.loads`` of the same bytes (the floor for any decoder).

    python bench/bench_show.py [--runs 11] [--objects 2000] [--instructions]

``--instructions`` adds the start-up rows counted in instructions by valgrind, which a busy machine
does not disturb (wall and CPU times on a shared 2-core machine move by 2x from run to run).

Run it with the Python of an install as users have it (``python3 -m venv V && V/bin/pip install .``,
then ``V/bin/python bench/bench_show.py``): an editable install (``pip install -e``, the
development venv) adds its import finder to every start of Python, baseline included (88 million
instructions for ``python -c pass`` instead of 38 million), which flatters the ratios and not the
user's wait.

Exits 1 when a goal is missed (judged on the median).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import callgrind  # noqa: E402  (bench/callgrind.py, beside this script)


def _run(cmd: list[str], tty: bool) -> tuple[float, float]:
    """One run: wall and CPU seconds; its output into a pipe (/dev/null) or a pseudo-terminal."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled
    if not tty:
        env["NO_COLOR"] = "1"
    t0 = time.perf_counter()
    if tty:
        pid, fd = pty.fork()
        if pid == 0:  # the child: stdout and stderr are the terminal
            os.chdir(ROOT)
            os.execve(cmd[0], cmd, env)
        with contextlib.suppress(OSError):
            while os.read(fd, 65536):
                pass
        os.close(fd)
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        pid = proc.pid
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def startup(runs: int) -> bool:
    exe = str(Path(sys.executable).parent / "kubectl-fieldown")
    if not Path(exe).exists():
        exe_cmd = [sys.executable, "-m", "kubectl_fieldown"]
    else:
        exe_cmd = [exe]
    example = ROOT / "examples" / "deployment.yaml"
    rows: list[tuple[str, list[str], bool, float | None]] = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"], False, None),
        ("kubectl-fieldown --help", [*exe_cmd, "--help"], False, 0.08),
        ("show -i deployment.yaml -o json", [*exe_cmd, "show", "-i", str(example), "-o", "json"], False, None),
        ("show -i deployment.yaml (tree, pipe)", [*exe_cmd, "show", "-i", str(example)], False, None),
        ("show -i deployment.yaml (tree, terminal)", [*exe_cmd, "show", "-i", str(example)], True, 0.10),
    ]
    for _, cmd, tty, _ in rows:  # warm-up: bytecode, page cache
        _run(cmd, tty)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in rows}
    for _ in range(runs):  # interleaved, so that load on the machine hits every row alike
        for name, cmd, tty, _ in rows:
            samples[name].append(_run(cmd, tty))
    met = True
    base = statistics.median(w for w, _ in samples[rows[0][0]])
    print(f"start-up, median (best) of {runs} interleaved runs; CPU = user + system of the process")
    for name, _, _, goal in rows:
        walls = [w for w, _ in samples[name]]
        t, cpu = statistics.median(walls), statistics.median(c for _, c in samples[name])
        verdict = ""
        if goal is not None:
            verdict = f"  goal <= {goal:.2f} s: " + ("met" if t <= goal else "NOT met")
            met = met and t <= goal
        print(f"  {name:42s} {t * 1000:5.0f} ms ({min(walls) * 1000:4.0f})  CPU {cpu * 1000:4.0f} ms  "
              f"{t / base:4.1f}x baseline{verdict}")
    print(f"  load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    return met


def instructions() -> None:
    """The same commands' instruction counts (valgrind's callgrind), next to ``python -c pass``: the
    one measure a busy machine does not disturb. The terminal row runs with FORCE_COLOR into a pipe
    (colour as on a terminal; valgrind and a pseudo-terminal do not mix). Run from another directory
    than the repository, so that the installed package is what runs."""
    exe = str(Path(sys.executable).parent / "kubectl-fieldown")
    exe_cmd = [exe] if Path(exe).exists() else [sys.executable, "-m", "kubectl_fieldown"]
    example = str(ROOT / "examples" / "deployment.yaml")
    rows: list[tuple[str, list[str], dict[str, str]]] = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"], {}),
        ("kubectl-fieldown --help", [*exe_cmd, "--help"], {}),
        ("show -i deployment.yaml -o json", [*exe_cmd, "show", "-i", example, "-o", "json"], {}),
        ("show -i deployment.yaml (tree, colour)", [*exe_cmd, "show", "-i", example], {"FORCE_COLOR": "1"}),
    ]
    counts = {}
    for name, cmd, extra in rows:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | extra
        counts[name] = callgrind.instructions(cmd, env=env, cwd="/")
    base = counts[rows[0][0]]
    print("start-up in instructions (valgrind callgrind)")
    for name, n in counts.items():
        print(f"  {name:42s} {n / 1e6:7.0f} M  {n / base:4.1f}x baseline")


def sample_objects(n: int) -> list[dict[str, Any]]:
    """Objects with realistic managedFields: the recorded conformance objects, repeated."""
    cases = sorted((ROOT / "tests" / "conformance").glob("**/*.json"))
    objs = []
    for p in cases:
        if p.name == "README.md":
            continue
        case = json.loads(p.read_text())
        if isinstance(case, dict) and isinstance(case.get("live"), dict):  # builtin*/ cases have another form
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--instructions", action="store_true",
                    help="also count the start-up rows' instructions with valgrind (load does not disturb them)")
    args = ap.parse_args()
    if args.instructions:
        instructions()
    met = startup(args.runs)
    throughput(args.objects, args.repeat)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
