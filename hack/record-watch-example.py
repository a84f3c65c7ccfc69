#!/usr/bin/env python3
"""Record what a real API server sends a watch, for the watch picture (hack/pictures.py replays it).

On the lab server (or any cluster with the Widget CRD of tests/conformance) whose kubeconfig is
given, in namespace ``shop``: a Widget ``w`` applied client-side with ``replicas: 3``; then, while
a LIST + WATCH runs, ``kubectl scale --replicas=5`` and the same ``kubectl apply`` twice each, in
turn (a fight), with ``kubectl apply`` of a second Widget ``w2`` in between. Writes
``examples/watch/replicas-fight.json``: the CRD, the LIST answer and the watch events, as the
server sent them.

    .venv/bin/python hack/record-watch-example.py KUBECONFIG [KUBECTL]
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
OUT = REPO / "examples" / "watch" / "replicas-fight.json"
NS = "shop"


def main() -> int:
    import yaml

    from kubectl_fieldown.kube import ClusterClient, ClusterOptions

    kubeconfig = sys.argv[1]
    kubectl = sys.argv[2] if len(sys.argv) > 2 else "kubectl"
    tmp = Path(tempfile.mkdtemp(prefix="fieldown-record-"))

    def k(*args: str) -> None:
        subprocess.run([kubectl, "--kubeconfig", kubeconfig, "-n", NS, *args], check=True, capture_output=True)

    def apply(name: str, spec: dict[str, Any]) -> None:
        f = tmp / f"{name}.yaml"
        f.write_text(yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget",
                                     "metadata": {"name": name, "namespace": NS}, "spec": spec}))
        k("apply", "-f", str(f))

    k("delete", "widgets", "--all", "--ignore-not-found")
    apply("w", {"replicas": 3, "color": "red"})
    client = ClusterClient(ClusterOptions(kubeconfig=kubeconfig))
    res = client.discovery.resolve("widgets")
    crd = client.get(client.discovery.resolve_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
                     "widgets.example.com")
    raw = client.request("GET", res.path(NS)).json()
    stream = client.open_watch(res, NS, resource_version=raw["metadata"]["resourceVersion"])
    events: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        buf = b""
        try:
            while chunk := stream.read1(1 << 16):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        events.put(json.loads(line))
        except Exception:  # the stream is shut down at the end
            return

    threading.Thread(target=read, daemon=True).start()
    got: list[dict[str, Any]] = []
    for step in ("scale", "apply", "create", "scale", "apply"):
        if step == "scale":
            k("scale", "widget/w", "--replicas=5")
        elif step == "apply":
            apply("w", {"replicas": 3, "color": "red"})
        else:
            apply("w2", {"replicas": 1, "color": "blue"})
        while True:
            ev = events.get(timeout=60)
            if ev["type"] != "BOOKMARK":
                got.append(ev)
                break
    stream.shutdown()
    client.close()
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
        crd["metadata"].pop(key, None)
    crd.pop("status", None)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"crd": crd, "list": raw, "events": got}, indent=1) + "\n")
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
