"""The in-cluster configuration on the real lab API server: a simulated pod (the service account's
token, ca.crt and namespace files in a directory named by the test hook FIELDOWN_SERVICEACCOUNT_DIR,
KUBERNETES_SERVICE_HOST/PORT set, no kubeconfig anywhere), the requests real.

The lab authenticates client certificates only; a bearer token is authenticated the way every API
server delegates it — a TokenReview sent to the server named by ``--authentication-kubeconfig``. The
lab has no core API to answer it, so this module starts a second lab server with that flag pointing
at a TokenReview endpoint in the test, which accepts one token (as the user
``system:serviceaccount:fieldown:fieldown-audit`` in ``system:masters``, the lab's only authorised group)
and records every token it was asked about."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import lab
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from fleet.helpers import cli

TOKEN = f"fieldown-sa-{uuid.uuid4().hex}"
W = "example.com/v1"


class _Reviews(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        token = str((body.get("spec") or {}).get("token") or "")
        _Reviews.seen.append(token)
        status: dict[str, Any] = {"authenticated": token == TOKEN}
        if token == TOKEN:
            status["user"] = {"username": "system:serviceaccount:fieldown:fieldown-audit",
                              "groups": ["system:serviceaccounts", "system:masters"]}
        answer = json.dumps({"apiVersion": body.get("apiVersion", "authentication.k8s.io/v1"),
                             "kind": "TokenReview", "status": status}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def pod(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("incluster")
    reviews = ThreadingHTTPServer(("127.0.0.1", 0), _Reviews)
    thread = threading.Thread(target=reviews.serve_forever, daemon=True)
    thread.start()
    authn = tmp / "authn.kubeconfig"
    authn.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "core", "cluster": {"server": f"http://127.0.0.1:{reviews.server_address[1]}"}}],
        "users": [{"name": "core", "user": {}}],
        "contexts": [{"name": "core", "context": {"cluster": "core", "user": "core"}}],
        "current-context": "core"}))
    state = tmp / "lab"
    api_port, etcd_port, peer_port = lab.free_ports(3)
    server = lab.start(state, api_port, etcd_port, peer_port,
                       extra_env={"EXTRA_ARGS": f"--authentication-kubeconfig={authn}"})
    try:
        widgets = next(c for c in lab.installed_crds() if c["metadata"]["name"] == "widgets.example.com")
        server.apply_crd(widgets)
        ns = f"pod-{uuid.uuid4().hex[:8]}"
        server.kubectl("apply", "-f", "-", input=yaml.safe_dump(
            {"apiVersion": W, "kind": "Widget", "metadata": {"name": "csa", "namespace": ns},
             "spec": {"color": "red"}}))
        sa = tmp / "serviceaccount"
        sa.mkdir()
        (sa / "token").write_text(TOKEN + "\n")  # trimmed, as client-go's file token source does
        shutil.copy(state / "pki" / "ca.crt", sa / "ca.crt")
        (sa / "namespace").write_text(ns + "\n")
        home = tmp / "home"
        home.mkdir()
        env = lab.environ_snapshot()
        for var in ("KUBECONFIG", "POD_NAMESPACE", "NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "KUBECACHEDIR"):
            env.pop(var, None)
        env.update(HOME=str(home), KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(api_port),
                   FIELDOWN_SERVICEACCOUNT_DIR=str(sa), FIELDOWN_CACHE_DIR=str(tmp / "cache"))
        yield {"env": env, "ns": ns, "sa": sa, "server": server, "tmp": tmp}
    finally:
        lab.stop(state)
        reviews.shutdown()
        reviews.server_close()


def test_audit_in_a_pod_uses_the_service_account(pod: dict[str, Any]) -> None:
    _Reviews.seen.clear()
    metrics = pod["tmp"] / "fieldown.prom"
    r = cli(pod["env"], "audit", "--kinds", "widgets", "-o", "json", "--metrics-file", str(metrics))
    assert r.code == 0, r.err  # a warning only
    doc = r.json()
    assert doc["scope"]["namespace"] == pod["ns"]  # the namespace file
    assert [(i["name"], i["id"]) for i in doc["items"]] == [("csa", "client-side-apply")]
    assert TOKEN in _Reviews.seen  # the token was sent, trimmed, and the server had it reviewed
    fams = {f.name: f for f in text_string_to_metric_families(metrics.read_text())}
    assert [s.labels["context"] for s in fams["fieldown_objects_audited"].samples] == [""]


def test_pod_namespace_comes_first(pod: dict[str, Any]) -> None:
    env = {**pod["env"], "POD_NAMESPACE": "elsewhere"}
    r = cli(env, "audit", "--kinds", "widgets", "-o", "json")
    assert r.code == 0, r.err
    assert r.json()["scope"]["namespace"] == "elsewhere" and r.json()["items"] == []


def test_a_token_the_server_refuses(pod: dict[str, Any], tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    shutil.copytree(pod["sa"], sa)
    (sa / "token").write_text("not-the-token")
    r = cli({**pod["env"], "FIELDOWN_SERVICEACCOUNT_DIR": str(sa)}, "audit", "--kinds", "widgets")
    assert r.code == 2
    # the server's answer to a token its TokenReview refused: 401, not a request as system:anonymous
    assert "did not accept our credentials (Unauthorized)" in r.err
    assert "not-the-token" not in r.err + r.out


def test_not_in_a_pod_without_both_variables(pod: dict[str, Any]) -> None:
    env = dict(pod["env"])
    env.pop("KUBERNETES_SERVICE_PORT")
    r = cli(env, "audit", "--kinds", "widgets")
    assert r.code == 2 and "no kubeconfig found" in r.err and "not running in a pod" in r.err


DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _deploy_docs() -> list[dict[str, Any]]:
    return [d for f in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]


def test_the_cronjob_command_runs_in_the_pod(pod: dict[str, Any]) -> None:
    """deploy/cronjob.yaml's own arguments, the metrics file moved to a temporary directory."""
    job = next(d for d in _deploy_docs() if d["kind"] == "CronJob")
    container = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    args = list(container["args"])
    at = args.index("--metrics-file")
    metrics = pod["tmp"] / "cron.prom"
    args[at + 1] = str(metrics)
    r = cli(pod["env"], *args)
    assert r.code == 0, r.err
    assert r.json()["scope"]["allNamespaces"] is True
    fams = {f.name: f for f in text_string_to_metric_families(metrics.read_text())}
    assert [s.value for s in fams["fieldown_audit_complete"].samples] == [1]
    assert next(s.value for s in fams["fieldown_objects_audited"].samples) >= 2  # the Widget and its CRD


def test_deploy_manifests_are_valid_and_read_only() -> None:
    # Kubernetes 1.36's schemas (kubernetes-validate), in a child process: tests/packaging shadows the
    # "packaging" module it imports here
    docs = _deploy_docs()
    check = ("import json, sys, kubernetes_validate\n"
             "for d in json.load(sys.stdin): kubernetes_validate.validate(d, '1.36', strict=True)\n")
    proc = subprocess.run([sys.executable, "-c", check], input=json.dumps(docs), capture_output=True, text=True,
                          cwd=DEPLOY, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    by_kind = {d["kind"]: d for d in docs}
    role = by_kind["ClusterRole"]
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"get", "list"}
    sa = by_kind["ServiceAccount"]["metadata"]
    binding = by_kind["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]
    pod_spec = by_kind["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == sa["name"]
    assert by_kind["CronJob"]["metadata"]["namespace"] == sa["namespace"]
