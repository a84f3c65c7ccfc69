"""The transport as kubectl behaves: key material never on disk, proxies chosen like client-go, one
line for insecure-skip-tls-verify (issue 9)."""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from kubectl_fieldown.cli.main import main
from kubectl_fieldown.kube import ClusterClient, ClusterOptions
from kubectl_fieldown.kube.proxy import proxy_for

KubeconfigFactory = Callable[[Callable[[dict[str, Any]], None]], Path]

# --- proxies (pure) ----------------------------------------------------------------------------------

HTTPS = {"HTTPS_PROXY": "http://proxy.example:3128"}


@pytest.mark.parametrize(
    ("server", "no_proxy", "proxied"),
    [
        # never proxied, whatever NO_PROXY says (Go: useProxy)
        ("https://127.0.0.1:6443", "", False),
        ("https://127.0.0.2:6443", "", False),
        ("https://[::1]:6443", "", False),
        ("https://localhost:6443", "", False),
        ("https://[::2]:6443", "", True),
        ("https://api.example.com:6443", "", True),
        # NO_PROXY entries
        ("https://api.example.com:6443", "*", False),
        ("https://api.example.com:6443", "example.com", False),  # a domain and its subdomains
        ("https://example.com", "example.com", False),
        ("https://example.com", ".example.com", True),  # a leading dot: subdomains only
        ("https://api.example.com", "*.example.com", False),
        ("https://example.com", "*.example.com", True),
        ("https://fooexample.com", "example.com", True),
        ("https://api.example.com:6443", "example.com:6443", False),
        ("https://api.example.com:6443", "example.com:443", True),
        ("https://10.1.2.3:6443", "10.0.0.0/8", False),
        ("https://10.1.2.3:6443", "10.1.2.3", False),
        ("https://10.1.2.3:6443", "10.1.2.3:6443", False),
        ("https://10.1.2.3:6443", "10.1.2.3:443", True),
        ("https://10.1.2.3:6443", "11.0.0.0/8, API.example.com", True),
        ("https://API.Example.com", " other.org , api.example.com ", False),
        ("https://[2001:db8::1]:6443", "2001:db8::/32", False),
        ("https://[2001:db8::1]:6443", "[2001:db8::1]:6443", False),
    ],
)
def test_proxy_like_client_go(server: str, no_proxy: str, proxied: bool) -> None:
    env = {**HTTPS, "NO_PROXY": no_proxy}
    assert proxy_for(server, env) == ("http://proxy.example:3128" if proxied else None)


def test_proxy_environment_variables() -> None:
    assert proxy_for("https://api.example.com", {}) is None
    # Go reads the upper-case name first; HTTP_PROXY is for http servers only; ALL_PROXY is not read
    assert proxy_for("https://a.example", {"HTTPS_PROXY": "http://up:1", "https_proxy": "http://low:1"}) == \
        "http://up:1"
    assert proxy_for("https://a.example", {"https_proxy": "http://low:1"}) == "http://low:1"
    assert proxy_for("https://a.example", {"HTTP_PROXY": "http://p:1", "ALL_PROXY": "http://p:2"}) is None
    assert proxy_for("http://a.example", {"HTTP_PROXY": "http://p:1"}) == "http://p:1"
    assert proxy_for("https://a.example", {"HTTPS_PROXY": "proxy:3128"}) == "http://proxy:3128"
    assert proxy_for("https://a.example", {"HTTPS_PROXY": "socks5://p:1080"}) == "socks5://p:1080"
    assert proxy_for("https://a.example", {"no_proxy": "a.example", "HTTPS_PROXY": "http://p:1"}) is None


def test_kubeconfig_proxy_url_wins_for_every_server() -> None:
    # client-go's rest.Config.Proxy: loopback and NO_PROXY do not matter
    assert proxy_for("https://127.0.0.1:6443", {"NO_PROXY": "*"}, "http://corp:8080") == "http://corp:8080"


# --- against the lab ---------------------------------------------------------------------------------


class _ConnectProxy:
    """A CONNECT proxy on loopback that counts the tunnels it opened."""

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self.authorizations: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    def _tunnel(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            target = head.split(b" ")[1].decode()
            host, _, port = target.rpartition(":")
            self.tunnels.append(target)
            self.authorizations += [line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n")
                                    if line.lower().startswith(b"proxy-authorization:")]
            with socket.create_connection((host.strip("[]"), int(port))) as upstream:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                pair = {conn: upstream, upstream: conn}
                while True:
                    ready, _, _ = select.select(list(pair), [], [], 30)
                    if not ready:
                        return
                    for s in ready:
                        data = s.recv(65536)
                        if not data:
                            return
                        pair[s].sendall(data)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def proxy() -> Iterator[_ConnectProxy]:
    p = _ConnectProxy()
    try:
        yield p
    finally:
        p.close()


def test_loopback_bypasses_https_proxy(cluster: lab.Cluster, proxy: _ConnectProxy,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTPS_PROXY sent requests to 127.0.0.1 through the proxy; kubectl never does."""
    if not cluster.server.startswith("https://127.0.0.1:"):
        pytest.skip("the lab server is on loopback; an external cluster may not be")
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig))) as c:
        assert c.server_version().git_version
    assert proxy.tunnels == []


def test_kubeconfig_proxy_url_is_used(cluster: lab.Cluster, proxy: _ConnectProxy,
                                      kubeconfig_variant: KubeconfigFactory) -> None:
    def via_proxy(doc: dict[str, Any]) -> None:
        for c in doc["clusters"]:
            c["cluster"]["proxy-url"] = proxy.url

    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(via_proxy)))) as c:
        assert c.server_version().git_version
    assert proxy.tunnels == [cluster.server.removeprefix("https://")]
    assert proxy.authorizations == []


def test_proxy_credentials_are_sent_as_basic_authentication(cluster: lab.Cluster, proxy: _ConnectProxy,
                                                            kubeconfig_variant: KubeconfigFactory) -> None:
    import base64

    def via_proxy(doc: dict[str, Any]) -> None:
        for c in doc["clusters"]:
            c["cluster"]["proxy-url"] = proxy.url.replace("http://", "http://alice:s%40cret@")

    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(via_proxy)))) as c:
        assert c.server_version().git_version
    assert proxy.authorizations == ["Basic " + base64.b64encode(b"alice:s@cret").decode()]


def test_insecure_skip_tls_verify_warns_once_on_one_line(cluster: lab.Cluster, namespace: str,
                                                         kubeconfig_variant: KubeconfigFactory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_fieldown.kube import _transport

    def insecure(doc: dict[str, Any]) -> None:
        for c in doc["clusters"]:
            c["cluster"].pop("certificate-authority-data", None)
            c["cluster"]["insecure-skip-tls-verify"] = True

    monkeypatch.setattr(_transport, "_insecure_warned", set())
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig_variant(insecure)))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["audit", "-n", namespace, "--concurrency", "4"])
    assert code == 0, err.getvalue()
    assert err.getvalue() == (f"warning: the TLS certificate of {cluster.server} is not verified "
                              "(insecure-skip-tls-verify)\n")


# --- key material --------------------------------------------------------------------------------------

_HOLD = """
import os, sys
from kubectl_fieldown.kube import ClusterClient, ClusterOptions
c = ClusterClient(ClusterOptions(kubeconfig=sys.argv[1]))
print(c.server_version().git_version, flush=True)
sys.stdin.readline()  # held here until the test has looked
"""


def _kubeconfig_with_exec_plugin(cluster: lab.Cluster, tmp_path: Path) -> Path:
    assert cluster.state_dir is not None
    pki = cluster.state_dir / "pki"
    plugin = tmp_path / "cred-plugin.py"
    plugin.write_text(
        "import json\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        f"    'status': {{'clientCertificateData': open({str(pki / 'admin.crt')!r}).read(),\n"
        f"               'clientKeyData': open({str(pki / 'admin.key')!r}).read()}}}}))\n"
    )
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    for u in doc["users"]:
        u["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                              "args": [str(plugin)], "interactiveMode": "Never"}}
    path = tmp_path / "exec-kubeconfig.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("credentials", ["kubeconfig data", "exec plugin"])
@pytest.mark.parametrize("end", [signal.SIGKILL, signal.SIGTERM])
def test_no_key_material_on_disk(cluster: lab.Cluster, tmp_path: Path, credentials: str, end: signal.Signals) -> None:
    """The kubernetes client wrote the CA, certificate and private key to $TMPDIR and removed them
    only at a clean exit. Nothing is written there now, while connected or after any end."""
    if cluster.state_dir is None:
        pytest.skip("needs the lab's PKI (client-certificate-data in its kubeconfig)")
    kubeconfig = cluster.kubeconfig if credentials == "kubeconfig data" else \
        _kubeconfig_with_exec_plugin(cluster, tmp_path)
    assert "client-key-data" in cluster.kubeconfig.read_text()
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(kubeconfig)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # connected: the TLS handshake used the key
        assert line.startswith("v"), proc.stderr.read() if proc.stderr else ""
        assert list(tmpdir.iterdir()) == []
        own = [os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{proc.pid}/fd")] \
            if Path(f"/proc/{proc.pid}/fd").is_dir() else []
        assert not any("kubeconfig-credential" in target for target in own)  # read once, then closed
        proc.send_signal(end)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(tmpdir.iterdir()) == []
