"""Start-up speed: importing the cluster layer must not import ``kubernetes`` (about half a
second); creating a client for a kubeconfig of certificates or tokens does not either (kube/_lightconfig.py);
only a kubeconfig the library must read (exec plugins, auth providers, ...) imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lab

CHECK = """
import sys
import kubectl_fieldown.kube
from kubectl_fieldown.kube import *  # noqa: F403
from kubectl_fieldown.kube import client, discovery, errors, openapi, cache  # noqa: F401
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "urllib3", "yaml"))
print(",".join(heavy))
"""


def test_import_does_not_load_kubernetes() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_creating_a_client_does_not_load_it(cluster: lab.Cluster, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from kubectl_fieldown.kube import ClusterClient, ClusterOptions\n"
        "assert 'kubernetes' not in sys.modules\n"
        f"c = ClusterClient(ClusterOptions(kubeconfig={str(cluster.kubeconfig)!r}))\n"
        "print(c.server_version().major)\n"
        "assert 'kubernetes' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**cluster.env(), "FIELDOWN_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"
