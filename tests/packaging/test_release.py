"""hack/release.sh, run as a maintainer runs it (on a copy of the checkout): an sdist and a wheel that
pass ``twine check --strict``, and the krew archive of this platform that krew/fieldown.yaml then points
at — installed as krew installs it (unpacked, its ``bin`` linked) and run with no network, no pip and no
site-packages (issue 21: the first run of the old archive pip-installed 208 MB, silently, and failed
offline)."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from .helpers import REPO, load_script

IGNORED = shutil.ignore_patterns(".venv", ".git", "dist", "build", "*.egg-info", "__pycache__", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", ".hypothesis")
EXAMPLE = REPO / "examples" / "deployment.yaml"
krew = load_script("validate-krew-manifest")


class Release:
    def __init__(self, repo: Path, stdout: str) -> None:
        self.repo = repo
        self.stdout = stdout
        manifest = yaml.safe_load((repo / "krew" / "fieldown.yaml").read_text())
        self.version = manifest["spec"]["version"].lstrip("v")
        self.platforms = manifest["spec"]["platforms"]
        self.dist = repo / "dist"
        archives = [p for p in self.dist.iterdir() if p.name.startswith("kubectl-fieldown-")]
        assert len(archives) == 1, archives
        self.archive = archives[0]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    tmp = tmp_path_factory.mktemp("release")
    repo = tmp / "repo"
    shutil.copytree(REPO, repo, ignore=IGNORED)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp),
           "PYTHON": sys.executable, "RELEASE_TOOLS_PYTHON": sys.executable, "RELEASE_PLATFORMS": "local",
           "PIP_WHEEL_ARGS": "--no-build-isolation", "PIP_NO_INDEX": "1"}
    proc = subprocess.run(["bash", "hack/release.sh"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Release(repo, proc.stdout)


def test_release_builds_checked_packages_and_the_krew_archive(release: Release) -> None:
    assert "PASSED" in release.stdout  # twine check --strict, on the sdist and on the wheel
    version, dist = release.version, release.dist
    wheel = dist / f"kubectl_fieldown-{version}-py3-none-any.whl"
    assert {p.name for p in dist.iterdir()} == {f"kubectl_fieldown-{version}.tar.gz", wheel.name,
                                                  release.archive.name}
    assert release.archive.name.startswith(f"kubectl-fieldown-v{version}-")  # -linux-amd64.zip
    with zipfile.ZipFile(wheel) as z:
        wheel_names = z.namelist()
        entry_points = z.read(next(n for n in wheel_names if n.endswith("entry_points.txt"))).decode()
    # the wheel carries the data the offline schemas need, and both console scripts
    assert "kubectl_fieldown/data/builtin-schemas.json" in wheel_names
    assert "kubectl_fieldown/data/builtin-object-meta.json" in wheel_names
    assert "kubectl-fieldown = " in entry_points and "kubectl_complete-fieldown = " in entry_points
    with zipfile.ZipFile(release.archive) as z:
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
    top = {name.split("/")[0] for name in modes}
    assert top == {"kubectl-fieldown", "kubectl_complete-fieldown", "README.md", "LICENSE", "fieldown-bundle"}
    assert modes["kubectl-fieldown"] == modes["kubectl_complete-fieldown"] == 0o755
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    # the code and its dependencies, the pure ones once, the compiled ones for this Python (no fallback)
    for member in ("fieldown-bundle/run.py", "fieldown-bundle/lib/kubectl_fieldown/data/builtin-schemas.json",
                   "fieldown-bundle/lib/kubectl_fieldown/data/builtin-object-meta.json",
                   "fieldown-bundle/lib/kubernetes/client/configuration.py", "fieldown-bundle/lib/typer/main.py",
                   "fieldown-bundle/lib/yaml/__init__.py", "fieldown-bundle/lib/rich/console.py"):
        assert member in modes, member
    assert any(n.startswith(f"fieldown-bundle/native/{tag}/pydantic_core/") and n.endswith(".so") for n in modes)
    # compiled modules only under native/ (an accelerator's pure fallback runs on every Python)
    assert not [n for n in modes if n.startswith("fieldown-bundle/lib/") and n.endswith((".so", ".pyd"))]
    # the manifest points at it, and krew's install rules pass on it
    (platform,) = [p for p in release.platforms if p["uri"].endswith("/" + release.archive.name)]
    assert platform["sha256"] == hashlib.sha256(release.archive.read_bytes()).hexdigest()
    assert platform["uri"].endswith(f"/v{version}/{release.archive.name}")
    manifest = release.repo / "krew" / "fieldown.yaml"
    assert krew.manifest_problems(manifest) == []
    assert krew.install_problems(manifest, release.archive) == []


# --- installed as krew installs it, run with no network --------------------------------------------------------


def _krew_install(release: Release, root: Path) -> Path:
    """What ``kubectl krew install`` does: unpack the archive into the store, link ``bin`` into
    ~/.krew/bin. Returns that link."""
    store = root / ".krew" / "store" / "fieldown" / f"v{release.version}"
    with zipfile.ZipFile(release.archive) as z:
        z.extractall(store)
        for info in z.infolist():  # zipfile drops the permission bits; krew keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                (store / info.filename).chmod(mode)
    bin_dir = root / ".krew" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "kubectl-fieldown").symlink_to(store / "kubectl-fieldown")
    # the caveats' link for completion
    (bin_dir / "kubectl_complete-fieldown").symlink_to(store / "kubectl_complete-fieldown")
    return bin_dir / "kubectl-fieldown"


def _offline_env(home: Path) -> dict[str, str]:
    """No network (every proxy and index points at a closed port), no pip index, a fresh home; the
    Python on PATH is this interpreter's version (whose compiled modules the local archive carries)."""
    python_dir = home / "python-bin"
    python_dir.mkdir()
    (python_dir / f"python3.{sys.version_info[1]}").symlink_to(sys.executable)
    dead = "http://127.0.0.1:9"
    return {"HOME": str(home), "PATH": f"{python_dir}:/usr/bin:/bin", "LANG": "C.UTF-8", "COLUMNS": "80",
            "http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "all_proxy": dead,
            "PIP_INDEX_URL": dead, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PYTHONPATH": str(home / "nothing"),
            "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"), "NO_COLOR": "1"}


@pytest.fixture
def installed(release: Release, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    return _krew_install(release, home), _offline_env(home)


def _run(cmd: list[str], env: dict[str, str], cwd: Path = REPO, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          **kw)  # type: ignore[call-overload]


def test_the_installed_archive_runs_offline(installed: tuple[Path, dict[str, str]]) -> None:
    plugin, env = installed
    home = Path(env["HOME"])
    before = sorted(p.name for p in home.iterdir())
    shown = _run([str(plugin), "show", "-i", "examples/deployment.yaml"], env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == ""  # no first-run install, no progress to report: nothing slow happens
    assert "handover-to-hpa" in shown.stdout and "kube-controller-manager" in shown.stdout
    helped = _run([str(plugin), "--help"], env)
    assert helped.returncode == 0 and helped.stderr == ""
    assert "show" in helped.stdout and "conflicts" in helped.stdout
    assert max(len(line) for line in helped.stdout.splitlines()) <= 80
    # the cluster layer (kubernetes, urllib3, pydantic-core) imports from the archive too: an
    # unreachable server is the usual one error line
    dead = _run([str(plugin), "show", "deploy/web", "--kubeconfig", os.devnull, "-s", "https://127.0.0.1:1"], env)
    assert dead.returncode == 1
    assert dead.stderr == "error: cannot reach the API server at https://127.0.0.1:1: connection refused\n"
    # kubectl's plugin completion, through the linked completer
    completer = plugin.parent / "kubectl_complete-fieldown"
    got = _run([str(completer), "show", "-o", ""], env)
    assert got.returncode == 0 and got.stdout.splitlines()[:2] == ["tree", "blame"] and got.stdout.endswith(":4\n")
    # and none of it came from the interpreter's own environment (which holds kubectl_fieldown)
    bare = _run([sys.executable, "-I", "-S", "-c", "import kubectl_fieldown"], env)
    assert bare.returncode == 1 and "ModuleNotFoundError" in bare.stderr
    # nothing was installed or downloaded anywhere in the home directory
    assert sorted(p.name for p in home.iterdir()) == before


def test_ctrl_c_is_quiet_and_leaves_nothing(installed: tuple[Path, dict[str, str]]) -> None:
    """Ctrl-C at any moment — while Python starts, imports, or waits for stdin — exits without a
    traceback and leaves nothing behind (there is no lock: nothing is installed)."""
    plugin, env = installed
    home = Path(env["HOME"])
    before = sorted(p.name for p in home.iterdir())
    proc = subprocess.Popen([str(plugin), "show", "-i", "-"], env=env, cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)
    assert "Traceback" not in err and out == ""
    assert sorted(p.name for p in home.iterdir()) == before
    again = _run([str(plugin), "show", "-i", "examples/deployment.yaml", "-o", "name"], env)
    assert (again.returncode, again.stdout) == (0, "deployment.apps/web\n")


def _on_a_terminal(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``cmd`` with its stderr on a pseudo-terminal; returns what it wrote there."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.run(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=300,
                              check=False)
    finally:
        os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other end is closed and everything was read
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    return proc, data.decode()


def test_the_first_run_says_it_compiles_once(installed: tuple[Path, dict[str, str]]) -> None:
    """The only slow step left is Python compiling the modules on the first run with a Python version
    (about a second of CPU for the cluster layer): done at once, said on a terminal, never again."""
    plugin, env = installed
    cmd = [str(plugin), "show", "-i", "examples/deployment.yaml", "-o", "name"]
    first, said = _on_a_terminal(cmd, env)
    assert (first.returncode, first.stdout) == (0, "deployment.apps/web\n")
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert said.strip() == (f"kubectl-fieldown: first run with Python {version}: compiling its modules "
                            "(once, a few seconds)...")
    native = plugin.resolve().parent / "fieldown-bundle" / "native" / f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert (native / ".compiled").exists()
    assert list((native.parent.parent / "lib" / "kubernetes" / "client" / "__pycache__").glob("configuration.*.pyc"))
    again, said = _on_a_terminal(cmd, env)
    assert (again.returncode, again.stdout, said) == (0, "deployment.apps/web\n", "")


def test_a_python_the_archive_has_no_modules_for_is_one_error_line(installed: tuple[Path, dict[str, str]],
                                                                  tmp_path: Path) -> None:
    plugin, env = installed
    store = plugin.resolve().parent
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    shutil.move(store / "fieldown-bundle" / "native" / tag, tmp_path / tag)
    (store / "fieldown-bundle" / "native" / "cp399").mkdir()
    got = _run([str(plugin), "--help"], {**env, "FIELDOWN_PYTHON": sys.executable})
    assert got.returncode == 1
    assert got.stderr == (f"error: this kubectl-fieldown archive runs on Python 3.99; {sys.executable} is Python "
                          f"{sys.version_info[0]}.{sys.version_info[1]} (set FIELDOWN_PYTHON to one of those)\n")


def test_what_an_older_python_needs_besides_is_found(release: Release) -> None:
    """pip resolves a site for another Python version with the running Python's markers: aiohttp's
    ``async-timeout; python_version < "3.11"`` is then missing for 3.10. build-bundle.py evaluates the
    markers for the target and names what is missing (hack/release.sh installs it and asks again)."""
    import sysconfig

    wheel = release.dist / f"kubectl_fieldown-{release.version}-py3-none-any.whl"
    site = sysconfig.get_paths()["purelib"]

    def missing(tag: str) -> list[str]:
        proc = subprocess.run([sys.executable, str(REPO / "hack" / "build-bundle.py"), "--project", str(wheel),
                               "--site", f"{tag}={site}", "--missing"], capture_output=True, text=True, timeout=120,
                              check=True)
        return proc.stdout.splitlines()

    if sys.version_info >= (3, 11):
        assert any(line.startswith("cp310 async-timeout") for line in missing("cp310")), missing("cp310")
    assert missing(f"cp{sys.version_info[0]}{sys.version_info[1]}") == []
