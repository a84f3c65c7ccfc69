"""Where discovery and OpenAPI documents are cached on disk, per API server.

Root: ``$FIELDOWN_CACHE_DIR`` if set, else ``$KUBECACHEDIR/fieldown`` (kubectl's cache-dir
variable, so a per-cluster kubectl cache also isolates ours), else ``~/.kube/cache/fieldown``.
Below it one folder per server, named like kubectl names its discovery cache folders
(``127.0.0.1_6443``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

CACHE_DIR_ENV = "FIELDOWN_CACHE_DIR"

_UNSAFE = re.compile(r"[^\w.\-]")


def cache_root() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    kube_cache = os.environ.get("KUBECACHEDIR")
    if kube_cache:
        return Path(kube_cache).expanduser() / "fieldown"
    return Path.home() / ".kube" / "cache" / "fieldown"


def server_dir_name(server: str) -> str:
    """``https://127.0.0.1:6443/`` -> ``127.0.0.1_6443`` (a path prefix such as Rancher's
    ``/k8s/clusters/c-1`` is kept, flattened, so two clusters behind one host do not share)."""
    rest = server.split("://", 1)[-1].rstrip("/")
    return _UNSAFE.sub("_", rest) or "_"


def server_cache_dir(server: str, root: Path | None = None) -> Path:
    return (root if root is not None else cache_root()) / server_dir_name(server)


def read_json(path: Path) -> Any:
    """The parsed file, or None when it is missing or unreadable (a broken cache is a miss)."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def write_bytes_atomic(path: Path, data: bytes) -> bool:
    """Write via a temporary file and rename, so a concurrent reader never sees half a file.
    Returns False (and leaves no temporary file) if the cache is not writable: caching is an
    optimisation, never a reason to fail a command."""
    import tempfile  # pulls in shutil, random, bz2, lzma: only worth it when writing

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
