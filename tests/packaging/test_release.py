"""hack/release.sh, run as a maintainer runs it (on a copy of the checkout): an sdist and a wheel that
pass ``twine check --strict``, and the krew archive that krew/fieldown.yaml then points at."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

from .helpers import REPO

IGNORED = shutil.ignore_patterns(".venv", ".git", "dist", "build", "*.egg-info", "__pycache__", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", ".hypothesis")


def test_release_builds_checked_packages_and_the_krew_archive(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo, ignore=IGNORED)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path),
           "PYTHON": sys.executable, "RELEASE_TOOLS_PYTHON": sys.executable,
           "PIP_WHEEL_ARGS": "--no-build-isolation", "PIP_NO_INDEX": "1"}
    proc = subprocess.run(["bash", "hack/release.sh"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout  # twine check --strict, on the sdist and on the wheel
    version = yaml.safe_load((repo / "krew" / "fieldown.yaml").read_text())["spec"]["version"].lstrip("v")
    dist = repo / "dist"
    archive = dist / f"kubectl-fieldown-v{version}.zip"
    assert {p.name for p in dist.iterdir()} == {f"kubectl_fieldown-{version}.tar.gz",
                                                  f"kubectl_fieldown-{version}-py3-none-any.whl", archive.name}
    with zipfile.ZipFile(archive) as z:
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        wheel_names = zipfile.ZipFile(dist / f"kubectl_fieldown-{version}-py3-none-any.whl").namelist()
    assert set(modes) == {"kubectl-fieldown", "kubectl_complete-fieldown", "README.md", "LICENSE",
                          f"kubectl_fieldown-{version}-py3-none-any.whl"}
    assert modes["kubectl-fieldown"] == modes["kubectl_complete-fieldown"] == 0o755
    # the wheel carries the data the offline schemas need, and both console scripts
    assert "kubectl_fieldown/data/builtin-schemas.json" in wheel_names
    entry_points = next(n for n in wheel_names if n.endswith("entry_points.txt"))
    scripts = zipfile.ZipFile(dist / f"kubectl_fieldown-{version}-py3-none-any.whl").read(entry_points).decode()
    assert "kubectl-fieldown = " in scripts and "kubectl_complete-fieldown = " in scripts
    platform = yaml.safe_load((repo / "krew" / "fieldown.yaml").read_text())["spec"]["platforms"][0]
    assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert platform["uri"].endswith(f"/v{version}/{archive.name}")
    # before the launcher's first run has installed the wheel, completion offers nothing and never installs
    store = tmp_path / "store"
    with zipfile.ZipFile(archive) as z:
        z.extractall(store)
    (store / "kubectl_complete-fieldown").chmod(0o755)
    done = subprocess.run([str(store / "kubectl_complete-fieldown"), "show", ""], capture_output=True, text=True,
                          env={**env, "XDG_DATA_HOME": str(tmp_path / "data")}, timeout=60, check=True)
    assert done.stdout == ":0\n" and not (tmp_path / "data").exists()
