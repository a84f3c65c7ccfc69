"""Bad input, usage errors and exit codes: one ``error:`` line on stderr, no traceback, partial results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import Result, run

from kubectl_fieldown.cli import main as main_module

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield


def assert_one_error(r: Result, code: int, *needles: str) -> str:
    assert r.code == code, (r.code, r.err)
    assert len(r.err_lines) == 1, r.err
    line = r.err_lines[0]
    assert line.startswith("error: "), line
    assert "Traceback" not in r.err
    for n in needles:
        assert n in line, (n, line)
    return line


def widget(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "ns", **extra},
            "spec": {"color": "blue"}}


# --- bad input files (exit 1) ---------------------------------------------------------------------------


def test_invalid_yaml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n")
    line = assert_one_error(run("show", "-i", str(bad)), 2, str(bad), "document 1", "invalid YAML", "line")
    assert r"\n" not in line


def test_invalid_yaml_after_good_documents_keeps_them(tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text(yaml.safe_dump(widget("good")) + "---\nkind: [unclosed\n")
    r = run("show", "-i", str(f), "-o", "json")
    assert_one_error(r, 2, "two.yaml: document 2: invalid YAML")
    assert [i["name"] for i in r.json()["items"]] == ["good"]


def test_document_that_is_not_an_object(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text(yaml.safe_dump(widget("first")) + "---\n- a\n- b\n---\n" + yaml.safe_dump(widget("third")))
    r = run("show", "-i", str(f), "-o", "json")
    assert_one_error(r, 2, f"{f}: document 2: not an object (a list)")
    assert [i["name"] for i in r.json()["items"]] == ["first", "third"]
    r = run("show", "-i", "-", stdin='"just a string"\n')
    assert_one_error(r, 2, "<stdin>: document 1: not an object (a string)")


def test_list_item_that_is_not_an_object() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [widget("a"), 42]}
    r = run("show", "-i", "-", "-o", "json", stdin=json.dumps(doc))
    assert_one_error(r, 2, "<stdin>: document 1, item 2: not an object (a number)")
    assert [i["name"] for i in r.json()["items"]] == ["a"]


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}},
         "operation must be Apply or Update"),
        ({"manager": "x", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {}}, "apiVersion is empty"),
        ({"manager": "x", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2", "fieldsV1": {}},
         "fieldsType must be FieldsV1"),
        ({"manager": "x", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
          "fieldsV1": {"i:1.5": {}}}, "managedFields[1]"),
    ],
)
def test_undecodable_managed_fields(entry: dict[str, Any], reason: str) -> None:
    good = {"manager": "alice", "operation": "Apply", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:color": {}}}}
    broken = widget("broken", managedFields=[good, entry])
    stream = yaml.safe_dump(widget("fine", managedFields=[good])) + "---\n" + yaml.safe_dump(broken)
    r = run("show", "-i", "-", "-o", "json", stdin=stream)
    assert_one_error(r, 2, "<stdin>: document 2", "Widget ns/broken", "managedFields[1]", reason)
    assert [i["name"] for i in r.json()["items"]] == ["fine"]


def test_managed_fields_not_a_list() -> None:
    r = run("show", "-i", "-", stdin=json.dumps(widget("w", managedFields={"oops": 1})))
    assert_one_error(r, 2, "Widget ns/w", "managedFields is not a list")
    assert r.out == ""


def test_missing_file_and_empty_directory(tmp_path: Path) -> None:
    assert_one_error(run("show", "-i", str(tmp_path / "nope.yaml")), 2, "nope.yaml", "No such file or directory")
    assert_one_error(run("show", "-i", str(tmp_path)), 2, str(tmp_path), "no .yaml/.yml/.json files")


def test_json_output_always_prints_a_document_even_when_everything_failed(tmp_path: Path) -> None:
    r = run("show", "-i", str(tmp_path / "nope.yaml"), "-o", "json")
    assert r.code == 2
    assert r.json() == {"apiVersion": "fieldown.dev/v1", "kind": "FieldownShow", "version": 1, "items": []}


# --- usage errors (exit 2) -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["show"], "you must specify the type of resource"),
        (["show", "-i", str(DEPLOYMENT), "-o", "bogus"], "'bogus' is not one of"),
        (["show", "-i", str(DEPLOYMENT), "--time", "sometimes"], "'sometimes' is not one of"),
        (["show", "--no-such-flag"], "no such option: --no-such-flag"),
        (["show", "-i", str(DEPLOYMENT), "widget/x"], "-i reads objects from a file"),
        (["show", "-i", str(DEPLOYMENT), "-l", "app=x"], "cannot be used with -i"),
        (["show", "-f", str(DEPLOYMENT), "widget/x"], "may not specify resource arguments"),
        (["show", "widgets", "widget/x"], "no need to specify a resource type as a separate argument"),
        (["show", "widgets", "w1", "-l", "app=x"], "name cannot be provided when a selector is specified"),
        (["show", "widgets", "w1", "-A"], "cannot be retrieved by name across all namespaces"),
        (["show", "-i", str(DEPLOYMENT), "--path", "spec.replicas"], "invalid path"),
        (["show", "-i", str(DEPLOYMENT), "--path", ".spec.containers[name=]"], "invalid path"),
        (["nope"], "no such command"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    r = run(*args)
    line = assert_one_error(r, 2)
    assert needle.lower() in line.lower(), line
    assert r.out == ""


def test_usage_error_points_at_the_command_help() -> None:
    line = assert_one_error(run("show", "--no-such-flag"), 2)
    assert "(see 'kubectl fieldown show --help')" in line


# --- internal errors and FIELDOWN_DEBUG -----------------------------------------------------------------


def test_unexpected_exception_is_one_line_unless_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_fieldown.cli import showrun as show_module

    def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("kaput")

    monkeypatch.setattr(show_module, "build_view", boom)
    assert_one_error(run("show", "-i", str(DEPLOYMENT)), 1, "internal error: RuntimeError: kaput", "FIELDOWN_DEBUG=1")
    monkeypatch.setenv("FIELDOWN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="kaput"):
        run("show", "-i", str(DEPLOYMENT))


# --- help, version, entry points ------------------------------------------------------------------------


def test_help_of_every_command_has_examples() -> None:
    import typer

    root = run("--help")
    assert root.code == 0
    assert root.out.startswith("Usage: kubectl fieldown [OPTIONS] COMMAND [ARGS]...")
    assert "Examples:" in root.out
    group: Any = typer.main.get_command(main_module.app)
    assert set(group.commands) >= {"show", "version"}
    for name in group.commands:
        r = run(name, "--help")
        assert r.code == 0, name
        assert r.out.startswith(f"Usage: kubectl fieldown {name} "), name
        assert "Examples:" in r.out, name
        assert "kubectl fieldown " + name in r.out.split("Examples:")[1], name
    assert run("-h").out == root.out


def test_bare_invocation_prints_help() -> None:
    r = run()
    assert r.code == 0
    assert r.out.startswith("Usage: kubectl fieldown [OPTIONS] COMMAND [ARGS]...")
    assert r.err == ""


def test_show_help_lists_every_flag() -> None:
    out = run("show", "--help").out
    for flag in ("-n, --namespace", "-A, --all-namespaces", "-l, --selector", "-f, --filename", "-R, --recursive",
                 "-i, --input", "-o, --output", "--manager", "--path", "--show-unowned", "--show-secret-values",
                 "--time", "--context", "--kubeconfig"):
        assert flag in out, flag


def test_version() -> None:
    from kubectl_fieldown import __version__

    r = run("version")
    assert r.code == 0
    assert r.out.startswith(f"kubectl-fieldown {__version__} (Python ")


def _script_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        env.pop(var, None)
    return env


def test_python_dash_m() -> None:
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", "--help"], capture_output=True, text=True,
                          env=_script_env(), timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: kubectl fieldown [OPTIONS] COMMAND [ARGS]...")
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", "show", "--bogus"], capture_output=True,
                          text=True, env=_script_env(), timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")


def test_console_script_bad_file_exits_2_without_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "kubectl-fieldown"
    if not script.exists():
        pytest.fail(f"{script} missing: pip install -e . into this environment")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    proc = subprocess.run([str(script), "show", "-i", str(bad)], capture_output=True, text=True,
                          env=_script_env(), timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {bad}: document 1: invalid YAML")
    assert proc.stderr.count("\n") == 1
    assert proc.stdout == ""


def test_broken_pipe_is_quiet() -> None:
    script = Path(sys.executable).parent / "kubectl-fieldown"
    proc = subprocess.run(f"'{script}' show -i '{DEPLOYMENT}' -o table | head -n 1", shell=True, capture_output=True,
                          text=True, env=_script_env(), timeout=60, check=False)
    assert proc.stdout.startswith("PATH")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.parametrize("argv", [["completion", "bash"], ["--show-completion", "bash"]])
def test_completion_uses_the_executable_name(argv: list[str]) -> None:
    # typer's --show-completion names the shell it finds among the process' ancestors; its own test
    # switch makes it take the shell as a value instead, so that the test does not depend on being
    # started from a shell (a detached CI runner has none)
    env = dict(_script_env(), _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", *argv],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "_KUBECTL_FIELDOWN_COMPLETE" in proc.stdout
    assert "kubectl-fieldown" in proc.stdout
    assert "kubectl fieldown" not in proc.stdout


# --- startup cost: what --help and show -i must not import -----------------------------------------------


def test_running_a_command_imports_only_its_module() -> None:
    modules = main_module.COMMAND_MODULES
    assert main_module._modules_for(["show", "-i", "x.yaml"]) == ("show",)
    assert main_module._modules_for(["version"]) == ("version",)
    assert main_module._modules_for(["--help"]) == modules
    assert main_module._modules_for([]) == modules
    assert main_module._modules_for(["--show-completion", "bash"]) == modules
    assert main_module._modules_for(["no-such-module-command"]) == modules  # may live in any module
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, io, contextlib\n"
         "from kubectl_fieldown.cli.main import main, COMMAND_MODULES\n"
         "with contextlib.redirect_stdout(io.StringIO()): main(['version'])\n"
         "print(sorted(m for m in COMMAND_MODULES if 'kubectl_fieldown.cli.' + m in sys.modules))"],
        capture_output=True, text=True, env=_script_env(), timeout=60, check=True)
    assert proc.stdout.strip() == "['version']"

_PROBE = """
import sys, io, contextlib
from kubectl_fieldown.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"kubernetes", "urllib3", "rich", "yaml", "pydantic"})
print(code, " ".join(heavy))
"""


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["--help"], set()),
        (["show", "--help"], set()),
        (["show", "-i", str(DEPLOYMENT), "-o", "json"], {"yaml"}),
        (["show", "-i", str(DEPLOYMENT)], {"yaml", "rich"}),
    ],
)
def test_no_heavy_imports(args: list[str], allowed: set[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True,
                          env=_script_env(), timeout=60, check=True)
    code, _, heavy = proc.stdout.strip().partition(" ")
    assert code == "0"
    assert set(heavy.split()) <= allowed, heavy
