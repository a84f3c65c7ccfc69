"""The README's install-and-run commands, run as written (issue 21): on a stock Debian, with its
``python3`` (which refuses ``pip install`` into itself: EXTERNALLY-MANAGED), pipx as ``apt install
pipx`` provides it, a fresh home directory and a ``PATH`` without ``~/.local/bin`` — the state in which
``pipx install . && kubectl-fieldown ...`` failed. The packages come from the package index pip is
configured with (the network's only use); pip's download cache is shared to spare the index."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .helpers import REPO

DEBIAN_PYTHON = Path("/usr/bin/python3")
APT_LINE = "sudo apt install pipx"

IGNORED = shutil.ignore_patterns(".venv", ".git", "dist", "build", "*.egg-info", "__pycache__", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", ".hypothesis")

pytestmark = pytest.mark.skipif(not DEBIAN_PYTHON.exists(), reason="no /usr/bin/python3 (not a Debian/Ubuntu)")


def readme_commands() -> list[str]:
    """The ```sh blocks of the README's "Run it" section, one command per line."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Run it\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def _env(home: Path, path: str) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "TERM": "dumb", "COLUMNS": "100"}
    cache = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")
    env["PIP_CACHE_DIR"] = str(cache)  # downloads only: nothing of the home directory is reused
    for proxy in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        if proxy in os.environ:
            env[proxy] = os.environ[proxy]
    return env


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("clone") / "kubectl-fieldown"
    shutil.copytree(REPO, repo, ignore=IGNORED)
    return repo


def _run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200,
                          check=False)


def _assert_the_example_tree(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Deployment shop/web" in proc.stdout or "shop/web" in proc.stdout, proc.stdout[:2000]
    assert "handover-to-hpa" in proc.stdout and "kube-controller-manager" in proc.stdout


def test_the_readme_names_both_commands() -> None:
    commands = readme_commands()
    assert commands[0] == APT_LINE
    assert commands[1].startswith("pipx install . && ")
    assert commands[2].startswith("python3 -m venv ")
    assert all(c.endswith("kubectl-fieldown show -i examples/deployment.yaml") for c in commands[1:])


def test_pipx_install_and_run_as_written(checkout: Path, tmp_path: Path) -> None:
    # what `apt install pipx` gives: a pipx on PATH that runs on Debian's python3
    tools = tmp_path / "pipx-venv"
    subprocess.run([str(DEBIAN_PYTHON), "-m", "venv", str(tools)], check=True, timeout=300)
    home = tmp_path / "home"
    home.mkdir()
    got = subprocess.run([str(tools / "bin" / "pip"), "install", "--quiet", "pipx"], capture_output=True,
                         text=True, env={**_env(home, "/usr/bin:/bin")}, timeout=600, check=False)
    assert got.returncode == 0, got.stderr[-2000:]
    apt_bin = tmp_path / "apt-bin"  # stands for /usr/bin: pipx alone, beside Debian's own PATH
    apt_bin.mkdir()
    (apt_bin / "pipx").symlink_to(tools / "bin" / "pipx")
    env = _env(home, f"{apt_bin}:/usr/bin:/bin")
    line = readme_commands()[1]
    # the trap the README must avoid: after pipx install, kubectl-fieldown is not on this PATH
    assert shutil.which("kubectl-fieldown", path=env["PATH"]) is None
    proc = _run(line, checkout, env)
    _assert_the_example_tree(proc)
    assert (home / ".local" / "bin" / "kubectl-fieldown").exists()
    assert shutil.which("kubectl-fieldown", path=env["PATH"]) is None  # still not: hence the full path


def test_venv_install_and_run_as_written(checkout: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = _run(readme_commands()[2], checkout, _env(home, "/usr/bin:/bin"))
    _assert_the_example_tree(proc)
    assert (home / ".venvs" / "fieldown" / "bin" / "kubectl_complete-fieldown").exists()
