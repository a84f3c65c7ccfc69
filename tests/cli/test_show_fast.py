"""``show -i`` read without typer (cli/showfast.py) does what the typer command does, word for word."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import Result, run

from kubectl_fieldown.cli import showfast
from kubectl_fieldown.cli.showrun import ShowOutput, ShowRequest, TimeMode

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = str(REPO / "examples" / "deployment.yaml")
SECRET = str(REPO / "examples" / "secret.yaml")

BAD_FIELDS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  uid: u1
  managedFields:
  - manager: m
    operation: Apply
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:x": {"nope": 1}}}
"""
NO_FIELDS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop, uid: u2}\ndata: {x: '1'}\n"


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bad.yaml").write_text(BAD_FIELDS)
    (tmp_path / "nofields.yaml").write_text(NO_FIELDS)
    (tmp_path / "broken.yaml").write_text("a: [\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "one.yaml").write_text(NO_FIELDS)
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "a.yaml").write_text(Path(DEPLOYMENT).read_text())
    (tmp_path / "mixed" / "b.yaml").write_text(BAD_FIELDS)
    return {"DEPLOYMENT": DEPLOYMENT, "SECRET": SECRET, "BAD": str(tmp_path / "bad.yaml"),
            "NOFIELDS": str(tmp_path / "nofields.yaml"), "BROKEN": str(tmp_path / "broken.yaml"),
            "MISSING": str(tmp_path / "missing.yaml"), "DIR": str(tmp_path / "dir"),
            "MIXED": str(tmp_path / "mixed")}


# every line is one the fast path takes (checked below); {NAME} is one of the inputs above
ACCEPTED = [
    "show -i {DEPLOYMENT}",
    "show --input {DEPLOYMENT} -o json",
    "show --input={DEPLOYMENT} --output=yaml",
    "show -i {DEPLOYMENT} -o table --manager kube* --manager helm",
    "show -i {DEPLOYMENT} -o blame --time full",
    "show -i {DEPLOYMENT} --time=none --path .spec --path=.metadata.labels",
    "show -i {DEPLOYMENT} --show-unowned -o table",
    "show -o json --path .spec.replicas -i {DEPLOYMENT}",
    "show -i {SECRET} -o yaml",
    "show -i {SECRET} --show-secret-values -o json",
    "show -i {BAD}",
    "show -i {BAD} -o json",
    "show -i {NOFIELDS}",
    "show -i {BROKEN}",
    "show -i {MISSING} -o json",
    "show -i {DIR} -o table",
    "show -i {MIXED}",
    "show -i {MIXED} -o yaml",
    "show -i {DEPLOYMENT} --path spec.replicas",
    "show -i {DEPLOYMENT} --path .spec.containers[name=]",
    "show -i {DEPLOYMENT} --manager nobody -o table",
    "show -i - -o json",
]

# lines typer reads: every message about them stays typer's
DECLINED = [
    "show", "show -i", "show deploy/web", "show -i x deploy/web", "show -i x -R", "show -i x -o name",
    "show -i x -o jsonpath", "show -i x -o JSON", "show -i x --time FULL", "show -i x --help", "show -i x -h",
    "show -i x -i y", "show -i x -o json -o yaml", "show -i x --color never", "show -i x --no-headers",
    "show -ix", "show -ojson -i x", "show -i x -l app=a", "show -i x -n shop",
    "show -i x --show-unowned --show-unowned", "show -i x -- y", "show -i --show-unowned", "show -i x --manager",
    "show -i x --show-unowned=true",
    "conflicts -i x", "show -i x --path -x",
]


def _typer_only(monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: str) -> Result:
    with monkeypatch.context() as m:
        m.setattr(showfast, "parse", lambda _args: None)
        return run(*argv, stdin=stdin)


@pytest.mark.parametrize("line", ACCEPTED)
def test_an_accepted_line_does_what_typer_does(line: str, inputs: dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [w.format(**inputs) for w in line.split()]
    assert showfast.parse(argv) is not None
    stdin = Path(DEPLOYMENT).read_text() if "-" in argv else ""
    fast = run(*argv, stdin=stdin)
    slow = _typer_only(monkeypatch, argv, stdin)
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


def test_the_accepted_lines_cover_every_outcome(inputs: dict[str, str]) -> None:
    # offline, everything that fails is input the tool cannot read (2); exit 1 needs a cluster
    results = [run(*[w.format(**inputs) for w in line.split()]) for line in ACCEPTED if "-" not in line.split()]
    assert {r.code for r in results} == {0, 2}
    assert any(r.code == 2 and r.out for r in results), "a failed object next to one shown"


@pytest.mark.parametrize("line", DECLINED)
def test_other_lines_are_left_to_typer(line: str) -> None:
    assert showfast.parse(line.split()) is None


def test_the_request_holds_every_option() -> None:
    got = showfast.parse(["show", "--manager", "a", "-i", "f.yaml", "--time", "full", "--path", ".spec",
                          "--manager=b", "-o", "blame", "--show-unowned", "--show-secret-values"])
    assert got == ShowRequest(input_file="f.yaml", output=ShowOutput.blame, time=TimeMode.full, managers=["a", "b"],
                              paths=[".spec"], show_unowned=True, show_secret_values=True)


def test_show_i_does_not_import_typer_or_slow_modules() -> None:
    # typing, dataclasses (with inspect), decimal, threading and contextlib were a third of its
    # start-up (issue 24)
    # (what the interpreter had imported before, an editable install's finder among them, is not show's)
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "from kubectl_fieldown.cli.main import main\n"
            f"assert main(['show', '-i', {DEPLOYMENT!r}]) == 0\n"
            "for name in ('typer', 'typing', 'dataclasses', 'inspect', 'decimal', 'threading', 'contextlib'):\n"
            "    assert name in before or name not in sys.modules, name + ' was imported'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Deployment "), r.stdout[:200]
