"""Real-API-server test harness: build, start and stop the lab server of ``hack/lab``.

The lab (see ``hack/lab/README.md``) is a stand-alone Kubernetes API server for CRDs
(``crd-apiserver``: the upstream k8s.io/apiextensions-apiserver request pipeline with real
server-side apply, managedFields, conflicts, dry-run, status/scale subresources), etcd and
kubectl 1.36, all built from Debian packages into ``$PREFIX`` (default ``~/.cache/k8slab``).

Used by ``tests/conftest.py``; usable by hand too::

    from lab import ensure_built, free_ports, start, stop
    ensure_built()
    c = start(Path("/tmp/st"), *free_ports(3))
    c.kubectl("get", "crd")
    stop(Path("/tmp/st"))

Everything here uses files of this repository only (``hack/lab``, ``tests/conformance``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
LAB_DIR = REPO_ROOT / "hack" / "lab"
CONFORMANCE_DIR = Path(__file__).resolve().parent / "conformance"

#: set by hack/test.sh after it ran hack/lab/build.sh: ensure_built() then only checks the binaries
PREBUILT_ENV = "FIELDOWN_LAB_PREBUILT"

# metadata fields the server sets; stripped from recorded CRDs before they are applied again
_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                    "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


def lab_prefix() -> Path:
    """Where hack/lab/build.sh puts everything: $PREFIX, else $XDG_CACHE_HOME/k8slab, else
    ~/.cache/k8slab (the same rule as the scripts)."""
    if os.environ.get("PREFIX"):
        return Path(os.environ["PREFIX"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "k8slab"


def lab_binaries(prefix: Path | None = None) -> dict[str, Path]:
    p = prefix or lab_prefix()
    return {
        "etcd": p / "etcd-root" / "usr" / "bin" / "etcd",
        "apiserver": p / "bin" / "crd-apiserver",
        "kubectl": p / "kubectl-root" / "usr" / "bin" / "kubectl",
    }


def _binaries_present(prefix: Path) -> bool:
    return all(b.is_file() and os.access(b, os.X_OK) for b in lab_binaries(prefix).values())


# --------------------------------------------------------------------------------------------
# the cluster handle


def environ_snapshot() -> dict[str, str]:
    """A copy of os.environ that is safe in worker threads: pytest sets and deletes
    PYTEST_CURRENT_TEST in the main thread, and a copy taken meanwhile (it iterates the keys, then
    reads each) raised KeyError once in a loaded run of the replay tests."""
    for _ in range(1000):
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):
            continue
    raise RuntimeError("os.environ kept changing while it was copied")


@dataclass
class Cluster:
    """A running API server reachable with ``kubeconfig``.

    ``state_dir`` is set for a lab server started by :func:`start` (``None`` for an external
    cluster); ``external`` is True for a cluster the harness did not start (e.g. kind)."""

    kubeconfig: Path
    kubectl_bin: Path
    server: str
    state_dir: Path | None = None
    external: bool = False
    kubectl_cache_dir: Path | None = field(default=None, repr=False)

    def env(self) -> dict[str, str]:
        """os.environ plus KUBECONFIG for this cluster (for running our CLI as a subprocess)."""
        e = environ_snapshot()
        e["KUBECONFIG"] = str(self.kubeconfig)
        if self.kubectl_cache_dir is not None:
            # a per-server discovery cache: ports get reused across sessions with other CRDs
            e["KUBECACHEDIR"] = str(self.kubectl_cache_dir)
        return e

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl (the lab's 1.36 for a lab server) with ``--kubeconfig``.

        ``env`` is merged on top of :meth:`env`. With ``check`` (default) a non-zero exit
        raises AssertionError carrying the command, stdout and stderr."""
        full_env = self.env()
        if env:
            full_env.update(env)
        argv = [str(self.kubectl_bin), "--kubeconfig", str(self.kubeconfig), *args]
        proc = subprocess.run(argv, input=input, capture_output=True, text=True, env=full_env,
                              timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl failed (exit {proc.returncode}): {' '.join(args)}\n"
                f"--- stdout:\n{proc.stdout}\n--- stderr:\n{proc.stderr}"
            )
        return proc

    def kubectl_json(self, *args: str, **kw: Any) -> Any:
        """``kubectl ... -o json`` parsed."""
        return json.loads(self.kubectl(*args, "-o", "json", **kw).stdout)

    def apply_crd(self, manifest: dict[str, Any] | str | Path, timeout: float = 60) -> dict[str, Any]:
        """Apply a CRD (dict, YAML/JSON text, or a file path), wait for condition Established
        and for discovery to serve it. Returns the CRD as the server has it."""
        if isinstance(manifest, Path):
            manifest = manifest.read_text()
        crd = yaml.safe_load(manifest) if isinstance(manifest, str) else manifest
        crd = clean_crd(crd)
        name = crd["metadata"]["name"]
        self.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=fieldown-tests",
                     "-f", "-", input=json.dumps(crd))
        self.kubectl("wait", "--for=condition=Established", f"crd/{name}", f"--timeout={int(timeout)}s",
                     timeout=timeout + 30)
        self.wait_for_discovery([name], timeout=timeout)
        got: dict[str, Any] = self.kubectl_json("get", "crd", name)
        return got

    def wait_for_discovery(self, names: Iterable[str], timeout: float = 60) -> None:
        """Wait until ``kubectl api-resources`` lists every ``plural.group`` in ``names``."""
        want = set(names)
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            proc = self.kubectl("api-resources", "-o", "name", check=False)
            last = proc.stdout + proc.stderr
            have = set(proc.stdout.split())
            if proc.returncode == 0 and want <= have:
                return
            if time.monotonic() > deadline:
                missing = sorted(want - have)
                raise AssertionError(f"discovery does not show {missing} after {timeout}s:\n{last}")
            time.sleep(0.2)

    def server_version(self) -> dict[str, Any]:
        v: dict[str, Any] = self.kubectl_json("version")["serverVersion"]
        return v


def clean_crd(crd: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD as recorded from a server (e.g. a conformance case's ``schema``) made applicable:
    no status, no server-set metadata."""
    out = {k: v for k, v in crd.items() if k != "status"}
    meta = {k: v for k, v in dict(crd.get("metadata") or {}).items() if k not in _SERVER_METADATA}
    out["metadata"] = meta
    out.setdefault("apiVersion", "apiextensions.k8s.io/v1")
    out.setdefault("kind", "CustomResourceDefinition")
    return out


#: the CRD served at two versions (Multi, v1 and v2, conversion None): issue 17's class 4
MULTI_CRD = CONFORMANCE_DIR / "multiversion" / "crd-multi.yaml"


def multiversion_crd() -> dict[str, Any]:
    """The Multi CRD (``multis.example.com``, served at v1 and v2), ready to apply."""
    return clean_crd(yaml.safe_load(MULTI_CRD.read_text()))


TRIO_CRD = CONFORMANCE_DIR / "multiversion" / "crd-trio.yaml"


def trio_crd() -> dict[str, Any]:
    """The Trio CRD (``trios.example.com``, served at v1, v2 and v3; a field at one version only)."""
    return clean_crd(yaml.safe_load(TRIO_CRD.read_text()))


def preset_crd() -> dict[str, Any]:
    """The Preset CRD (``presets.example.com``): the Widget's schema with defaults added where users
    meet them — a scalar (``spec.mode: auto``), an object defaulted to ``{}`` whose field has a
    default of its own (``spec.policy.retries: 3``), a field of list-map items
    (``containers[].pullPolicy``), a field inside an object the user sets (``strategy.type``) and
    one in the values of a map of objects (``components.*.replicas``); the server sets each again
    when a write removes it (the generated scenarios' defaulted kind). ``tolerations`` is an atomic
    list of objects (no list type)."""
    crd, schema = _widget_as("Preset")
    spec = schema["properties"]["spec"]["properties"]
    spec["mode"] = {"type": "string", "default": "auto"}
    spec["policy"] = {"type": "object", "default": {}, "properties": {
        "retries": {"type": "integer", "default": 3}, "timeout": {"type": "integer"}}}
    spec["containers"]["items"]["properties"]["pullPolicy"] = {"type": "string", "default": "IfNotPresent"}
    spec["strategy"]["properties"]["type"]["default"] = "RollingUpdate"
    spec["components"] = {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "image": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}}}
    spec["tolerations"] = {"type": "array", "items": {"type": "object", "properties": {
        "key": {"type": "string"}, "operator": {"type": "string"}, "value": {"type": "string"}}}}
    return crd


def blob_crd() -> dict[str, Any]:
    """The Blob CRD (``blobs.example.com``): the Widget with an unstructured ``spec`` (preserve
    unknown fields, as many operators' CRDs have), where every list is atomic and every map
    granular; its status and subresources are the Widget's."""
    crd, schema = _widget_as("Blob")
    schema["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return crd


def _widget_as(kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of the Widget CRD (one version) renamed to ``kind`` (plural: ``kind`` + s, lower case),
    and its copy's openAPIV3Schema, for the caller to change."""
    widget = next(c for c in conformance_crds() if c["metadata"]["name"] == "widgets.example.com")
    crd = copy.deepcopy(widget)
    singular = kind.lower()
    crd["metadata"] = {"name": f"{singular}s.{widget['spec']['group']}"}
    crd["spec"]["names"] = {"plural": f"{singular}s", "singular": singular, "kind": kind, "listKind": f"{kind}List"}
    (version,) = crd["spec"]["versions"]
    return crd, version["schema"]["openAPIV3Schema"]


def installed_crds() -> list[dict[str, Any]]:
    """Every CRD the ``cluster`` fixture installs: the conformance cases' kinds, then Multi and Trio."""
    return [*conformance_crds(), multiversion_crd(), trio_crd()]


def conformance_crds(conformance_dir: Path = CONFORMANCE_DIR) -> list[dict[str, Any]]:
    """The CRDs embedded as ``schema`` in the conformance cases: one per kind (Widget, Gadget,
    Gizmo), cleaned for applying, sorted by name."""
    by_name: dict[str, dict[str, Any]] = {}
    for f in sorted(conformance_dir.glob("*.json")):
        case = json.loads(f.read_text())
        schema = case.get("schema")
        if not schema:
            continue
        name = schema["metadata"]["name"]
        if name not in by_name:
            by_name[name] = clean_crd(schema)
    if not by_name:
        raise RuntimeError(f"no CRD schemas found in {conformance_dir}")
    return [by_name[n] for n in sorted(by_name)]


# --------------------------------------------------------------------------------------------
# build


def _stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def ensure_built(
    prefix: Path | None = None,
    progress: Callable[[str], None] | None = _stderr_progress,
    log_path: Path | None = None,
) -> Path:
    """Run hack/lab/build.sh (idempotent: ~15 s on a warm cache, ~6 min from nothing) and
    return the PREFIX. Its ``[build ...]`` lines go to ``progress``; the whole output goes to
    ``log_path`` (default: a temporary file). Raises RuntimeError with the log tail on failure.

    With FIELDOWN_LAB_PREBUILT=1 (set by hack/test.sh, which just ran the build) and all binaries
    present, the build is not run again."""
    prefix = prefix or lab_prefix()
    if os.environ.get(PREBUILT_ENV) == "1" and _binaries_present(prefix):
        return prefix
    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="k8slab-build-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    env = dict(os.environ, PREFIX=str(prefix))
    tail: deque[str] = deque(maxlen=40)
    t0 = time.monotonic()
    if progress:
        progress(f"[lab] building the API server lab in {prefix} (log: {log_path})")
    try:
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                ["bash", str(LAB_DIR / "build.sh")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, text=True, env=env, cwd=str(LAB_DIR),
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                tail.append(line.rstrip("\n"))
                if progress and line.startswith("[build"):
                    progress(line.rstrip("\n"))
            rc = proc.wait()
    except OSError as e:
        raise RuntimeError(f"could not run {LAB_DIR / 'build.sh'}: {e}") from e
    if rc != 0 or not _binaries_present(prefix):
        raise RuntimeError(
            f"hack/lab/build.sh failed (exit {rc}, PREFIX={prefix}); full log: {log_path}; last lines:\n"
            + "\n".join(tail)
        )
    if progress:
        progress(f"[lab] build ok in {time.monotonic() - t0:.1f}s")
    return prefix


# --------------------------------------------------------------------------------------------
# start / stop


def free_ports(n: int = 3) -> list[int]:
    """``n`` distinct TCP ports free on 127.0.0.1 right now (held open together while picking)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def start(
    state_dir: Path,
    api_port: int,
    etcd_port: int,
    etcd_peer_port: int,
    *,
    prefix: Path | None = None,
    no_fsync: bool = True,
    ready_timeout: int = 60,
    extra_env: Mapping[str, str] | None = None,
) -> Cluster:
    """Start etcd + crd-apiserver (hack/lab/start.sh) with a fresh etcd in ``state_dir`` on the
    given 127.0.0.1 ports; wait for /readyz. PIDs are recorded in ``state_dir``; the admin
    kubeconfig is ``state_dir/kubeconfig``. Raises RuntimeError (with log tails) on failure."""
    prefix = prefix or lab_prefix()
    state_dir = Path(state_dir).resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    kubeconfig = state_dir / "kubeconfig"
    _become_subreaper()
    env = dict(os.environ)
    for k in ("KEEP_DATA", "SERVER", "EXTRA_ARGS", "ETCD_BIN"):
        env.pop(k, None)
    env.update(
        PREFIX=str(prefix), STATE=str(state_dir), API_PORT=str(api_port), ETCD_PORT=str(etcd_port),
        ETCD_PEER_PORT=str(etcd_peer_port), READY_TIMEOUT=str(ready_timeout),
        ETCD_UNSAFE_NO_FSYNC="1" if no_fsync else "0",
    )
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run(
        ["bash", str(LAB_DIR / "start.sh"), str(kubeconfig)], capture_output=True, text=True, env=env,
        stdin=subprocess.DEVNULL, timeout=ready_timeout + 60, check=False,
    )
    (state_dir / "start.out").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not kubeconfig.is_file():
        stop(state_dir)  # start.sh cleans up after itself; this is belt and braces
        raise RuntimeError(
            f"hack/lab/start.sh failed (exit {proc.returncode}, STATE={state_dir}):\n"
            f"{proc.stdout}{proc.stderr}{_log_tails(state_dir)}"
        )
    cache = state_dir / "kube-cache"
    cache.mkdir(exist_ok=True)
    return Cluster(
        kubeconfig=kubeconfig,
        kubectl_bin=lab_binaries(prefix)["kubectl"],
        server=f"https://127.0.0.1:{api_port}",
        state_dir=state_dir,
        kubectl_cache_dir=cache,
    )


def _log_tails(state_dir: Path, n: int = 20) -> str:
    out = []
    for name in ("etcd.log", "apiserver.log"):
        p = state_dir / name
        if p.is_file():
            lines = p.read_text(errors="replace").splitlines()[-n:]
            out.append(f"\n--- {p} (last {n} lines):\n" + "\n".join(lines))
    return "".join(out)


def _become_subreaper() -> None:
    """Best effort (Linux): make this process the reaper of the daemons start.sh leaves behind,
    so that stop() can reap them instead of leaving zombies for an init that may never reap
    (e.g. a container whose PID 1 is not an init). Only the recorded PIDs are ever waited for."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _proc_exe(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)")
    except OSError:
        return None  # gone, a zombie, or not ours to inspect


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state in ("Z", "X")  # a zombie waiting for its (re)parent to reap it is gone enough
    except (OSError, IndexError):
        return True


def _expected_exe(state_dir: Path, which: str) -> str | None:
    """The binary start.sh recorded for ``which`` (etcd: etcd.bin; apiserver: server.name)."""
    try:
        if which == "etcd":
            return os.path.realpath((state_dir / "etcd.bin").read_text().strip())
        return (state_dir / "server.name").read_text().strip()  # compared by basename
    except OSError:
        return None


def stop(state_dir: Path, timeout: float = 10) -> list[int]:
    """Stop the API server and etcd recorded in ``state_dir`` (``apiserver.pid``, ``etcd.pid``),
    by those PIDs only, and only if each PID still runs the recorded binary. SIGTERM, then
    SIGKILL after ``timeout`` s. Returns the PIDs that were signalled."""
    state_dir = Path(state_dir)
    stopped: list[int] = []
    for which, pidfile in (("apiserver", "apiserver.pid"), ("etcd", "etcd.pid")):
        pf = state_dir / pidfile
        try:
            pid = int(pf.read_text().strip())
        except (OSError, ValueError):
            continue
        exe = _proc_exe(pid)
        expected = _expected_exe(state_dir, which)
        ours = exe is not None and expected is not None and (
            exe == expected if which == "etcd" else os.path.basename(exe) == expected)
        if ours and not _gone(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while not _gone(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not _gone(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 5
                while not _gone(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
            stopped.append(pid)
        _reap(pid)  # only ever succeeds for an exited child of ours (see _become_subreaper)
        with contextlib.suppress(OSError):
            pf.unlink()
    return stopped


def restart_apiserver(state_dir: Path, *, down: Callable[[], None] | None = None, ready_timeout: float = 120,
                      stop_timeout: float = 30) -> int:
    """Stop the lab's API server recorded in ``state_dir`` (SIGTERM, by its PID, as :func:`stop`)
    and start it again with the same command line, etcd untouched: resourceVersions go on where
    they were. ``down`` runs while no API server runs. Waits until ``/readyz`` answers 200 and returns
    the new PID (recorded in ``apiserver.pid``)."""
    import ssl
    import urllib.error
    import urllib.request

    state_dir = Path(state_dir).resolve()
    pid = recorded_pids(state_dir)["apiserver"]
    argv = (Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0")).decode().split("\0")
    exe = _proc_exe(pid)
    if exe is None or os.path.basename(exe) != _expected_exe(state_dir, "apiserver"):
        raise RuntimeError(f"PID {pid} recorded in {state_dir} is not the lab's API server")
    port = next(a.split("=", 1)[1] for a in argv if a.startswith("--secure-port="))
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + stop_timeout
    while not _gone(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + stop_timeout
        time.sleep(0.05)
    _reap(pid)
    if down is not None:
        down()
    _become_subreaper()
    with open(state_dir / "apiserver.log", "ab") as log:
        proc = subprocess.Popen([exe, *argv[1:]], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    (state_dir / "apiserver.pid").write_text(f"{proc.pid}\n")
    ctx = ssl.create_default_context(cafile=str(state_dir / "pki" / "ca.crt"))
    deadline = time.monotonic() + ready_timeout
    last = ""
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the API server exited ({proc.returncode}) on restart:{_log_tails(state_dir)}")
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=ctx, timeout=5) as r:
                if r.status == 200:
                    return proc.pid
        except (urllib.error.URLError, OSError) as e:
            last = str(e)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the API server is not ready {ready_timeout}s after its restart ({last})"
                               f"{_log_tails(state_dir)}")
        time.sleep(0.1)


def recorded_pids(state_dir: Path) -> dict[str, int]:
    """The PIDs start.sh recorded in ``state_dir``: {"apiserver": pid, "etcd": pid} (those present)."""
    out: dict[str, int] = {}
    for which in ("apiserver", "etcd"):
        with contextlib.suppress(OSError, ValueError):
            out[which] = int((Path(state_dir) / f"{which}.pid").read_text().strip())
    return out


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    return not _gone(pid)
