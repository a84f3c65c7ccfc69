"""``-o name``, ``-o jsonpath=``, ``-o custom-columns=``, ``--no-headers`` and ``--color`` on the
command line (docs/output.md). jsonpath and custom-columns are compared with what the lab's kubectl
prints for the same template over the same document."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from cli_helpers import ANSI, run

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
SECRET = REPO / "examples" / "secret.yaml"
APPLY = REPO / "examples" / "apply" / "deployment.yaml"


def both(tmp_path: Path) -> str:
    path = tmp_path / "both.yaml"
    path.write_text(DEPLOYMENT.read_text() + "\n---\n" + SECRET.read_text())
    return str(path)


def test_name(tmp_path: Path) -> None:
    r = run("show", "-i", both(tmp_path), "-o", "name")
    assert (r.code, r.out, r.err) == (0, "deployment.apps/web\nsecret/db-credentials\n", "")
    c = run("conflicts", "-f", str(APPLY), "--live", str(DEPLOYMENT), "--field-manager", "kubectl", "-o", "name")
    assert (c.code, c.out) == (1, "deployment.apps/web\n")  # 1: conflicts predicted, as with every -o


def test_template_spellings_and_usage_errors(tmp_path: Path) -> None:
    f = both(tmp_path)
    for args in (["-o", "jsonpath={.items[*].name}"], ["-o=jsonpath={.items[*].name}"],
                 ["--output=jsonpath={.items[*].name}"], ["-ojsonpath={.items[*].name}"],
                 ["--output", "jsonpath={.items[*].name}"]):
        r = run("show", "-i", f, *args)
        assert (r.code, r.out) == (0, "web db-credentials"), args  # no newline added, as kubectl's
    for args, message in ((["-o", "jsonpath"], "jsonpath format specified but no template given"),
                          (["-o", "jsonpath={.items[?(@.x)]}"], "filters"),
                          (["-o", "custom-columns=NAME"], "expected <header>:<json-path-expr>"),
                          (["-o", "jsonpath={.items[9]}"], "array index out of bounds")):
        r = run("show", "-i", f, *args)
        assert r.code == 2 and message in r.err and r.err.count("\n") == 1, (args, r.err)


def test_custom_columns_and_no_headers(tmp_path: Path) -> None:
    f = both(tmp_path)
    r = run("show", "-i", f, "-o", "custom-columns=KIND:.kind,NAME:.name,NS:.namespace,FIRST:.managers[0].manager,X:.x")
    assert r.out.splitlines() == ["KIND         NAME             NS     FIRST               X",
                                  "Deployment   web              shop   argocd-controller   <none>",
                                  "Secret       db-credentials   shop   external-secrets    <none>"]
    r = run("show", "-i", f, "-o", "custom-columns=NAME:.name", "--no-headers")
    assert r.out == "web\ndb-credentials\n"
    table = run("show", "-i", str(DEPLOYMENT), "-o", "table").text.splitlines()
    bare = run("show", "-i", str(DEPLOYMENT), "-o", "table", "--no-headers").text.splitlines()
    assert table[0].split() == ["PATH", "OWNERS", "VALUE"] and bare[0].startswith(".metadata")
    assert [line.split() for line in bare] == [line.split() for line in table[1:]]


def _under_config(template: str) -> str:
    """The same template over ``.spec.config`` (its first path is the outermost one)."""
    if template.startswith("{range ."):
        return template.replace("{range .", "{range .spec.config.", 1)
    return template.replace("{.", "{.spec.config.", 1)


def _singles(tmp_path: Path, f: str) -> list[Path]:
    out = []
    for i, d in enumerate(yaml.safe_load_all(Path(f).read_text())):
        p = tmp_path / f"one-{i}.json"
        p.write_text(json.dumps(d))
        out.append(p)
    return out


def _store(cluster: lab.Cluster, namespace: str, items: list[Any]) -> None:
    """Widgets w0, w1, ... whose ``spec.config`` (kept as sent: preserve-unknown-fields) is each item."""
    docs = [{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{i}", "namespace": namespace},
             "spec": {"config": item}} for i, item in enumerate(items)]
    cluster.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))
    for i, item in enumerate(items):
        stored = cluster.kubectl_json("get", f"widget/w{i}", "-n", namespace)["spec"]["config"]
        assert stored == item  # the server kept the document as it is


def test_jsonpath_and_custom_columns_print_what_kubectl_prints(cluster: lab.Cluster, namespace: str,
                                                               tmp_path: Path) -> None:
    f = both(tmp_path)
    items = run("show", "-i", f, "-o", "json").json()["items"]
    _store(cluster, namespace, items)
    singles = _singles(tmp_path, f)
    for inner in ("{.name}", "{.managers[*].manager}", "{.managers[0]}", "{.fields[1].owners}",
                  '{range .fields[*]}{.path}{"\\t"}{.owners[*].manager}{"\\n"}{end}', "{.fields[0].value}",
                  "{.nope}", "{.managers[-1:].fieldCount}", "{.fields[2]['path']}"):
        for i, one in enumerate(singles):
            ours = run("show", "-i", str(one), "-o", "jsonpath={range .items[*]}" + inner + "{end}").out
            theirs = cluster.kubectl("get", f"widget/w{i}", "-n", namespace, "-o",
                                     "jsonpath=" + _under_config(inner)).stdout
            assert ours == theirs, inner
    spec = "NAME:.name,KIND:{.kind},MANAGERS:.managers[*].manager,FIELD:.fields[0],OWNERS:.fields[1].owners,X:.x"
    theirs_spec = ",".join(f"{h}:{{.spec.config.{p.strip('{}').lstrip('.')}}}"
                           for h, p in (c.split(":", 1) for c in spec.split(",")))
    for extra in ([], ["--no-headers"]):
        ours = run("show", "-i", f, "-o", "custom-columns=" + spec, *extra).out
        theirs = cluster.kubectl("get", "widgets", "-n", namespace, "-o", "custom-columns=" + theirs_spec,
                                 *extra).stdout
        assert ours == theirs


def test_audit_and_conflicts_formats(cluster: lab.Cluster, namespace: str, tmp_path: Path) -> None:
    manifest = tmp_path / "w.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w", "namespace": namespace}, "spec": {"color": "red"}}))
    cluster.kubectl("apply", "-f", str(manifest))  # client-side apply: a client-side-apply finding
    env = {**cluster.env(), "FIELDOWN_CACHE_DIR": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(sys.executable).parent / "kubectl-fieldown"), *args], capture_output=True,
                              text=True, env=env, timeout=300, check=False)

    assert cli("audit", "-n", namespace, "-o", "name").stdout == "widget.example.com/w\n"
    cols = cli("audit", "-n", namespace, "-o", "custom-columns=ID:.id,NAME:.name,SEVERITY:.severity").stdout
    assert cols.splitlines()[0].split() == ["ID", "NAME", "SEVERITY"]
    assert ["client-side-apply", "w", "warning"] in [line.split() for line in cols.splitlines()[1:]]
    ids = cli("audit", "-n", namespace, "-o", "jsonpath={.items[*].id}").stdout.split()
    assert "client-side-apply" in ids
    summary = cli("audit", "-n", namespace, "--no-headers").stdout
    assert "SEVERITY" not in summary and "client-side-apply" in summary
    got = cli("conflicts", "-f", str(manifest), "--field-manager", "kubectl", "-o",
              'jsonpath={range .items[*]}{.name}:{.conflicts[*].manager}{"\\n"}{end}')
    assert (got.returncode, got.stdout) == (0, "w:\n")


def _in_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with its stdout on a pseudo-terminal; what it wrote."""
    main, sub = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "kubectl_fieldown", *args], stdout=sub,
                                stderr=subprocess.DEVNULL, env=env)
        os.close(sub)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the pty is closed once the process is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
    finally:
        os.close(main)
    return b"".join(chunks).decode()


def test_color() -> None:
    args = ["show", "-i", str(DEPLOYMENT)]
    assert ANSI.search(run(*args).out) is None  # auto, into a pipe: none
    assert ANSI.search(run(*args, "--color=always").out)  # always: even into a pipe
    assert ANSI.search(run(*args, "--color", "never").out) is None
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm-256color"
    assert ANSI.search(_in_a_terminal(args, env))  # auto on a terminal
    assert ANSI.search(_in_a_terminal(args, {**env, "NO_COLOR": "1"})) is None  # NO_COLOR still counts for auto
    assert ANSI.search(_in_a_terminal([*args, "--color=never"], env)) is None
    assert ANSI.search(_in_a_terminal([*args, "--color=always"], {**env, "NO_COLOR": "1"}))


@pytest.mark.parametrize("command", [["show", "-i", str(DEPLOYMENT)],
                                     ["conflicts", "-f", str(APPLY), "--live", str(DEPLOYMENT)]])
def test_color_is_reset_between_runs(command: list[str]) -> None:
    run(*command, "--color=always")
    assert ANSI.search(run(*command).out) is None
