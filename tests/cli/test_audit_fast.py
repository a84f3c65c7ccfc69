"""``audit`` read without typer (cli/auditfast.py) asks for what the typer command asks for, word for
word, and fails as it fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import Result, run

from kubectl_fieldown.cli import audit as audit_command
from kubectl_fieldown.cli import auditfast, auditrun
from kubectl_fieldown.cli import main as cli_main
from kubectl_fieldown.cli.auditrun import AuditOutput, AuditRequest, FailOn

REPO = Path(__file__).resolve().parents[2]

# every line is one the fast path takes (checked below); a word with spaces is quoted by | instead
ACCEPTED = [
    "audit",
    "audit -A",
    "audit -A --kinds widgets -o json --fail-on none",
    "audit -n shop --kinds=widgets,deployments.apps --kinds configmaps -o yaml",
    "audit --namespace=shop -l app=web --fail-on warning -o junit",
    "audit -A --selector tier|in|(a,b) -o sarif",
    "audit -A --selector=",  # (an empty selector: typer's callback lets it through too)
    "audit -A --applier argocd --field-manager argocd-controller -f k8s/ -R --jobs 2",
    "audit -A --applier=flux:helm-controller --filename=x.yaml --filename y.yaml --recursive --jobs=auto",
    "audit -A --ignore last-applied-size --ignore=untracked --details",
    "audit -A -v --concurrency 8",
    "audit -A --verbose --concurrency=0",
    "audit --context a --context=b -A --context-concurrency 2 --metrics-file m.prom -o prometheus",
    "audit --all-contexts -A --kubeconfig k.yaml -o name",
    "audit --all-namespaces -o text --fail-on info",
    "audit -n shop -A --kubeconfig=k.yaml --field-manager helm",
    "audit -A --as bob --request-timeout 5s",  # global flags are taken out first, as for typer
    "audit -A --jobs many --concurrency x",  # values are checked after the parse, both ways
    "audit -A --applier argocd -f -",  # (stdin)
]

# lines typer reads: every message about them stays typer's
DECLINED = [
    "audit --help", "audit -h", "audit -A -A", "audit -A --all-namespaces", "audit -o json -o yaml", "audit -o JSON",
    "audit --fail-on ERROR", "audit --fail-on never", "audit -o jsonpath", "audit -o custom-columns", "audit -o wide",
    "audit --color never", "audit --no-headers", "audit -Av", "audit -nshop", "audit -n", "audit --kinds",
    "audit -n -A", "audit x", "audit -A x", "audit -- -A", "audit -l a|b|c", "audit --all-namespaces=true",
    "audit -A --details=yes", "show -A", "audit --kinds widgets --unknown", "audit -f",
    "audit -n shop -n prod", "audit -A -l", "audit -A --jobs 2 --jobs 3", "conflicts -A", "audit -A -R -R",
]


def _words(line: str) -> list[str]:
    return [w.replace("|", " ") for w in line.split()]


def _requests(monkeypatch: pytest.MonkeyPatch, argv: list[str], code: int = 0) -> tuple[
        tuple[int, list[AuditRequest]], tuple[int, list[AuditRequest]]]:
    """(exit code, the requests run) without typer and with it, run_audit returning ``code``."""
    fast: list[AuditRequest] = []
    slow: list[AuditRequest] = []

    def keep(into: list[AuditRequest]) -> object:
        def run_audit(request: AuditRequest) -> int:
            into.append(request)
            return code
        return run_audit

    with monkeypatch.context() as m:
        m.setattr(auditrun, "run_audit", keep(fast))
        fast_code = run(*argv).code
    with monkeypatch.context() as m:
        m.setattr(cli_main, "_without_typer", lambda _args: None)
        m.setattr(audit_command, "run_audit", keep(slow))
        slow_code = run(*argv).code
    return (fast_code, fast), (slow_code, slow)


@pytest.mark.parametrize("line", ACCEPTED)
def test_an_accepted_line_asks_what_typer_asks(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _words(line)
    fast, slow = _requests(monkeypatch, argv)
    assert fast == slow
    assert fast[0] == 0 and len(fast[1]) == 1


@pytest.mark.parametrize("code", [1, 2, 130])
def test_the_exit_code_of_the_run_is_the_commands(code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _requests(monkeypatch, ["audit", "-A", "-o", "json"], code)
    assert fast == slow and fast[0] == code


@pytest.mark.parametrize("line", DECLINED)
def test_other_lines_are_left_to_typer(line: str) -> None:
    assert auditfast.parse(_words(line)) is None


def test_the_request_holds_every_option() -> None:
    got = auditfast.parse(["audit", "--kinds", "a,b", "--kinds=c", "-o", "junit", "--fail-on", "info", "--applier",
                           "helm", "--field-manager", "h", "-f", "x", "--filename=y", "-R", "--ignore", "i",
                           "--details", "--concurrency", "2", "--jobs", "3", "-n", "ns", "-A", "-l", "a=b",
                           "--kubeconfig", "k", "--context", "c", "--all-contexts", "--context-concurrency", "5",
                           "--metrics-file", "m"])
    assert got == AuditRequest(kinds=["a,b", "c"], output=AuditOutput.junit, fail_on=FailOn.info, applier="helm",
                               field_manager="h", filenames=["x", "y"], recursive=True, ignore=["i"], details=True,
                               concurrency="2", jobs="3", namespace="ns", all_namespaces=True, selector="a=b",
                               kubeconfig="k", contexts=["c"], all_contexts=True, context_concurrency="5",
                               metrics_file="m")


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "w.yaml").write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    (tmp_path / "broken.yaml").write_text("a: [\n")
    return {"MANIFEST": str(tmp_path / "w.yaml"), "BROKEN": str(tmp_path / "broken.yaml"),
            "MISSING": str(tmp_path / "missing.yaml"), "DIR": str(tmp_path)}


# accepted lines that fail before any request: both ways must say the same, with the same code
FAILING = [
    "audit -A --concurrency 0 --kubeconfig {MISSING}",
    "audit -A --jobs many --kubeconfig {MISSING}",
    "audit -A --context-concurrency 99 --kubeconfig {MISSING}",
    "audit -A --ignore nope --kubeconfig {MISSING}",
    "audit -A -f {MANIFEST} --kubeconfig {MISSING}",
    "audit -A --applier bogus --kubeconfig {MISSING}",
    "audit -A --applier argocd -f {BROKEN} --kubeconfig {MISSING}",
    "audit -A --applier argocd -f {MISSING} --kubeconfig {MISSING}",
    "audit -A --kubeconfig {MISSING}",
    "audit -A -o json --kubeconfig {MANIFEST}",
    "audit --context a --context b --kubeconfig {MISSING}",
    "audit -A --all-contexts --kubeconfig {MISSING}",
    "audit -A --metrics-file {DIR} --kubeconfig {MISSING}",
]


def _typer_only(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Result:
    with monkeypatch.context() as m:
        m.setattr(cli_main, "_without_typer", lambda _args: None)
        return run(*argv)


@pytest.mark.parametrize("line", FAILING)
def test_a_failing_line_fails_as_typer_fails(line: str, inputs: dict[str, str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [w.format(**inputs) for w in line.split()]
    assert auditfast.parse(argv) is not None
    monkeypatch.setenv("KUBECONFIG", inputs["MISSING"])
    fast = run(*argv)
    slow = _typer_only(monkeypatch, argv)
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert fast.code == 2 and fast.err.startswith("error: ") and fast.err.count("\n") == 1, fast.err


def test_audit_does_not_import_typer() -> None:
    code = ("import sys\n"
            "from kubectl_fieldown.cli.main import main\n"
            f"assert main(['audit', '-A', '--kubeconfig', {str(REPO / 'no-such-kubeconfig')!r}]) == 2\n"
            "assert 'typer' not in sys.modules and 'click' not in sys.modules\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("error: "), r.stderr
