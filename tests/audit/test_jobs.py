"""``audit --jobs``: the -f objects checked in forked worker processes (kubectl_fieldown.cli.auditjobs)
find exactly what the audit's own process finds, whatever happens to the workers.

The scenarios run in a process of their own (jobs_script.py): workers are forked only from a
process with one thread. The same check on a real server, through the command line, is
tests/cli/test_audit_cluster.py::test_jobs_find_what_one_process_finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def outcome() -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)])}
    proc = subprocess.run([sys.executable, str(TESTS / "audit" / "jobs_script.py")], capture_output=True, text=True,
                          env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    # the scenarios are worth something only if there are findings, and batches for several workers
    assert out["findings"] > out["in_manifests"] > 3 * out["batch"]
    return out


def test_workers_find_what_the_audit_finds_alone(outcome: dict[str, Any]) -> None:
    assert outcome["workers"] == {"same": True, "size": 3, "redone": 0}


def test_an_object_needing_rules_the_workers_lack_is_checked_by_the_audit(outcome: dict[str, Any]) -> None:
    # (a worker never looks a kind up: the lookup would use the connection it shares with the audit)
    batches = -(-outcome["in_manifests"] // outcome["batch"])
    assert outcome["unknown_kind"] == {"same": True, "redone": batches}


def test_a_worker_that_dies_leaves_its_objects_to_the_others(outcome: dict[str, Any]) -> None:
    assert outcome["killed"] == {"same": True, "size": 1}


def test_an_error_of_the_engine_is_raised_as_without_workers(outcome: dict[str, Any]) -> None:
    assert outcome["error"] == "boom"


def test_no_workers_for_one_job_or_beside_another_thread(outcome: dict[str, Any]) -> None:
    assert outcome["one_job"] is True
    assert outcome["with_a_thread"] is True
