"""Usage errors of the fleet flags: exit 2, one line, before any cluster is asked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet.helpers import cli


@pytest.mark.parametrize(("args", "message"), [
    (["--context-concurrency", "0"], "error: --context-concurrency must be between 1 and 16, not 0"),
    (["--context-concurrency", "x"], "error: --context-concurrency must be a whole number, not 'x'"),
    (["--all-contexts", "--context", "a"], "error: --all-contexts audits every context: give it or --context"),
    (["--metrics-file", "/nonexistent-dir/m.prom"], "error: --metrics-file /nonexistent-dir/m.prom: no such directory"),
    (["--metrics-file", "/"], "error: --metrics-file /: is a directory"),
])
def test_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    # a kubeconfig whose server nothing listens on: a usage error must come before any request
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\n"
                          "contexts: [{name: a, context: {cluster: c, user: u}}]\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    r = cli(env, "audit", "--kubeconfig", str(kubeconfig), "-A", *args)
    assert r.code == 2, r.err
    assert r.err.startswith(message) and len(r.err.splitlines()) == 1, r.err
    assert r.out == ""
