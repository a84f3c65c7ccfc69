"""The write commands that select objects (migrate, strip-last-applied, handover, reset) are
declarations over cli/writes.py's ``write_command``: each takes the object arguments, its own flags,
then the shared flags of ``writeflags.WriteArgs``, and checks in one order — its own flags, then
--max-retries and --applier, then which objects are named — before it connects (only ``migrate``
checks some of its own flags after --applier: they depend on it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer
from cli_helpers import run

from kubectl_fieldown.cli import main as cli_main
from kubectl_fieldown.cli.writeflags import WriteArgs

OWN = {
    "migrate": ["to", "from_manager", "field_manager", "keep_last_applied", "all_fields", "for_applier"],
    "strip_last_applied": ["field", "client_side_manager"],
    "handover": ["field", "to"],
    "reset": ["to_manager", "drop_manager"],
}


@pytest.mark.parametrize("module", list(OWN))
def test_the_objects_then_the_commands_own_flags_then_the_shared_ones(module: str) -> None:
    group = typer.main.get_command(cli_main.build_app((module,)))
    command = getattr(group, "commands", {})[module.replace("_", "-")]
    shared = [f.name for f in dataclasses.fields(WriteArgs) if f.init]
    assert [p.name for p in command.params] == [shared[0], *OWN[module], *shared[1:]]


# two mistakes each: the one reported first
FIRST_ERROR = [
    (["handover", "--field", ".spec.x", "--max-retries", "x"], "--to MANAGER is required"),
    (["handover", "--field", ".spec.x", "--to", "y", "--max-retries", "x", "--applier", "bogus"],
     "--max-retries must be a whole number"),
    (["handover", "--field", ".spec.x", "--to", "y", "--applier", "bogus"], "--applier must be one of"),
    (["strip-last-applied", "--max-retries", "x"], "name the fields to strip"),
    (["strip-last-applied", "--field", ".metadata.name"], "--field .metadata.name:"),
    (["reset", "--to-manager", "a", "--drop-manager", "b", "--max-retries", "x"], "--to-manager and --drop-manager"),
    (["reset", "--max-retries", "x"], "--max-retries must be a whole number"),
    (["migrate", "--to", "client-side", "--field-manager", "x", "--max-retries", "x"],
     "--max-retries must be a whole number"),
    (["migrate", "--to", "client-side", "--field-manager", "x"], "--field-manager is for --to server-side"),
    (["migrate", "--for", "flux", "--applier", "bogus"], "--applier must be one of"),
    (["migrate", "--for", "flux", "--applier", "kubectl"], "--applier does not go with --for"),
]


@pytest.fixture(autouse=True)
def _no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.delenv("FIELDOWN_DEBUG", raising=False)


@pytest.mark.parametrize(("args", "first"), FIRST_ERROR, ids=[" ".join(a) for a, _ in FIRST_ERROR])
def test_the_first_mistake_is_reported(args: list[str], first: str) -> None:
    r = run(*args)
    assert r.code == 2, r.err
    assert r.err_lines[-1].startswith(f"error: {first}"), r.err


def test_resets_warning_comes_after_the_objects_are_named_correctly() -> None:
    r = run("reset")
    assert r.code == 2
    assert r.err_lines == [r.err_lines[-1]] and r.err_lines[-1].startswith("error: name the objects"), r.err
