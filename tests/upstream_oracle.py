"""Upstream's own Go code as the tests' oracle (hack/upstream-oracle/main.go).

Built from the lab's Debian Go sources with the lab's Go toolchain (hack/lab/build.sh put both
under PREFIX), in GOPATH mode and offline, like hack/gen-builtin-types.sh; the binary is cached
under ``PREFIX/upstream-oracle/<hash of main.go>`` and reused. :class:`UpstreamOracle` keeps one
process and sends it one JSON request per line.

Where the tests need what an applier computes on the client side (client-go's csaupgrade patch,
which Argo CD, Helm 4 and kubectl send), they ask this oracle instead of a Python copy of the rule:
a copy would share any misreading of upstream with the product.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import lab

SOURCE = Path(__file__).resolve().parent.parent / "hack" / "upstream-oracle" / "main.go"


class OracleError(RuntimeError):
    pass


def build(prefix: Path | None = None, source: Path = SOURCE) -> Path:
    """The oracle binary of ``source`` (built if needed). Raises OracleError when the lab is not built."""
    prefix = prefix or lab.lab_prefix()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    binary = prefix / "upstream-oracle" / digest / "upstream-oracle"
    if binary.is_file():
        return binary
    goroots = sorted((prefix / "go-root" / "usr" / "lib").glob("go-*"))
    gosrc = prefix / "gosrc" / "usr" / "share" / "gocode"
    has_sources = (gosrc / "src" / "k8s.io" / "client-go").is_dir()
    if not goroots or not (goroots[0] / "bin" / "go").is_file() or not has_sources:
        raise OracleError(f"no lab Go toolchain and sources under {prefix}: run hack/lab/build.sh")
    goroot = goroots[0]
    with tempfile.TemporaryDirectory(prefix="upstream-oracle-") as tmp:
        pkg = Path(tmp) / "src" / "k8slab.local" / "upstream-oracle"
        pkg.mkdir(parents=True)
        shutil.copy(source, pkg / "main.go")
        path = f"{goroot / 'bin'}:{os.environ.get('PATH', '')}"
        env = {**lab.environ_snapshot(), "GOROOT": str(goroot), "PATH": path,
               "GO111MODULE": "off", "GOFLAGS": "", "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOSUMDB": "off",
               "GOTELEMETRY": "off", "GOPATH": f"{tmp}:{gosrc}", "GOCACHE": str(prefix / "gocache"),
               "CGO_ENABLED": "0"}
        out = Path(tmp) / "upstream-oracle"
        proc = subprocess.run([str(goroot / "bin" / "go"), "build", "-o", str(out), "k8slab.local/upstream-oracle"],
                              cwd=tmp, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise OracleError(f"go build of {source} failed:\n{proc.stderr[-3000:]}")
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".partial")
        shutil.copy(out, partial)
        partial.chmod(0o755)
        partial.replace(binary)
    return binary


class UpstreamOracle:
    """One oracle process; thread-safe (a request and its answer are one exchange)."""

    def __init__(self, binary: Path) -> None:
        self._proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        self._lock = threading.Lock()

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise OracleError(f"the oracle exited: {self._proc.stderr.read() if self._proc.stderr else ''}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise OracleError(answer["error"])
        return answer

    def csaupgrade_patch(self, obj: Mapping[str, Any], csa_managers: Iterable[str], ssa_manager: str,
                         subresource: str = "") -> list[dict[str, Any]] | None:
        """client-go ``csaupgrade.UpgradeManagedFieldsPatch``: the JSON patch, or None (nothing to do)."""
        answer = self.ask({"op": "csaupgrade-patch", "object": obj, "csaManagers": sorted(set(csa_managers)),
                           "ssaManager": ssa_manager, "subresource": subresource})
        patch: list[dict[str, Any]] | None = answer["patch"]
        return patch

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


_shared: UpstreamOracle | None = None
_shared_lock = threading.Lock()


def shared() -> UpstreamOracle:
    """The process-wide oracle (built and started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = UpstreamOracle(build())
        return _shared
