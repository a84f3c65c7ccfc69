"""One exit-code model for every command (README "Exit codes", cli/errors.py), as a table:
0 done; 1 could not do it (server unreachable, an object failed) — ``conflicts`` and ``audit`` use 1
for "conflicts predicted" / "findings" and 2 for every error; 2 usage or input errors (bad flags,
files that cannot be read or parsed, a malformed selector, missing arguments); 130 interrupted
(tests/cli/test_write_kills.py, test_audit_robustness.py). Each cell: one ``error:`` line, no traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run

DEAD = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
"""

# the words of each command that make it valid but for the error under test
COMMANDS = {
    "show": (["show", "widgets/w"], ["show", "-i", "{bad}"]),
    "conflicts": (["conflicts", "-f", "{good}", "--field-manager", "x"],
                  ["conflicts", "-f", "{bad}", "--field-manager", "x"]),
    "migrate": (["migrate", "widgets/w", "--to", "server-side"], ["migrate", "-f", "{bad}", "--to", "server-side"]),
    "strip-last-applied": (["strip-last-applied", "widgets/w", "--field", ".spec.x"],
                           ["strip-last-applied", "-f", "{bad}", "--field", ".spec.x"]),
    "handover": (["handover", "widgets/w", "--field", ".spec.x", "--to", "y"],
                 ["handover", "-f", "{bad}", "--field", ".spec.x", "--to", "y"]),
    "reset": (["reset", "widgets/w"], ["reset", "-f", "{bad}"]),
    "audit": (["audit"], ["audit", "-f", "{bad}", "--field-manager", "x"]),
    "undo": (["undo", "{backups}"], ["undo", "{bad}"]),
    "watch": (["watch", "widgets/w", "--for", "1s"], ["watch", "widgets/w", "--path", ".spec[bad"]),
}
# server unreachable: could not do it, except where 1 is a result
UNREACHABLE = {name: 2 if name in ("conflicts", "audit") else 1 for name in COMMANDS}
SELECTOR = ["show", "conflicts", "migrate", "strip-last-applied", "handover", "reset", "audit", "watch"]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    (tmp_path / "dead.kubeconfig").write_text(DEAD)
    (tmp_path / "bad.yaml").write_text("a: [\n")
    (tmp_path / "good.yaml").write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    backups = tmp_path / "backups"
    run_dir = backups / "20260101T000000Z-00000000"
    run_dir.mkdir(parents=True)
    (run_dir / "example.com_Widget_default_w.json").write_text("{}")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "dead.kubeconfig"))
    monkeypatch.setenv("FIELDOWN_BACKUP_DIR", str(backups))
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FIELDOWN_DEBUG", raising=False)
    yield {"bad": str(tmp_path / "bad.yaml"), "good": str(tmp_path / "good.yaml"), "backups": str(run_dir)}


def _words(words: list[str], files: dict[str, str]) -> list[str]:
    return [w.format(**files) for w in words]


def _check(args: list[str], code: int) -> None:
    r = run(*args)
    assert r.code == code, (args, r.code, r.err)
    errors = [line for line in r.err_lines if line.startswith("error: ")]
    assert errors, r.err
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err


# undo reads and checks its backups before it connects: a backup it accepts is made by a write
# (tests/cli/test_migrate_cluster.py), so its row is the input error below
@pytest.mark.parametrize("name", [n for n in COMMANDS if n != "undo"])
def test_server_unreachable(name: str, files: dict[str, str]) -> None:
    _check(_words(COMMANDS[name][0], files), UNREACHABLE[name])


@pytest.mark.parametrize("name", list(COMMANDS))
def test_input_that_cannot_be_read_is_an_input_error(name: str, files: dict[str, str]) -> None:
    _check(_words(COMMANDS[name][1], files), 2)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_unknown_flag_is_a_usage_error(name: str, files: dict[str, str]) -> None:
    _check([*_words(COMMANDS[name][0], files), "--no-such-flag"], 2)


@pytest.mark.parametrize("name", [n for n in COMMANDS if n not in ("show", "audit")])
def test_no_arguments_is_a_usage_error(name: str, files: dict[str, str]) -> None:
    _check([name], 2)


@pytest.mark.parametrize("name", SELECTOR)
def test_a_malformed_selector_is_a_usage_error_before_any_request(name: str, files: dict[str, str]) -> None:
    # the server is unreachable: only a check before any request can answer 2 here
    _check([*_words(COMMANDS[name][0], files), "-l", "app in (web"], 2)
