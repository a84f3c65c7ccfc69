"""ClusterClient against the real API server: reads, paging, patches, errors, kubeconfig."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml
from silent_server import dead_end_kubeconfig, silent_port

from kubectl_fieldown.kube import (
    ALL_NAMESPACES,
    AlreadyExists,
    ApiError,
    ClusterClient,
    ClusterOptions,
    ConfigError,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    ResourceInfo,
    RetryPolicy,
    Unauthorized,
    Unreachable,
)

# the ``kubeconfig_variant`` fixture (tests/kube/conftest.py): edit a copy of the kubeconfig
KubeconfigFactory = Callable[[Callable[[dict[str, Any]], None]], Path]


def widget(name: str, namespace: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": spec}


def apply(client: ClusterClient, res: ResourceInfo, obj: dict[str, Any], manager: str, **kw: Any) -> dict[str, Any]:
    meta = obj["metadata"]
    return client.patch(res, meta["name"], meta.get("namespace"), obj, "apply", field_manager=manager, **kw)


def managers(obj: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    return {(m["manager"], m["operation"], m.get("subresource")) for m in obj["metadata"]["managedFields"]}


# --------------------------------------------------------------------------------------------
# configuration


def test_client_from_kubeconfig(client: ClusterClient, cluster: lab.Cluster) -> None:
    assert client.server == cluster.server
    assert client.default_namespace == "default"  # the lab context sets namespace: default
    v = client.server_version()
    assert v.major == "1" and v.git_version.startswith("v1.")
    assert v.raw["gitVersion"] == v.git_version
    if not cluster.external:
        assert v.git_version == "v1.36.4"


def test_namespace_option_overrides_context(cluster: lab.Cluster, cache_dir: Path) -> None:
    with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig), namespace="other")) as c:
        assert c.default_namespace == "other"


def test_kubeconfig_env_list_is_merged_first_file_wins(
    cluster: lab.Cluster, client: ClusterClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    kubeconfig_variant: KubeconfigFactory, namespace: str,
) -> None:
    base = yaml.safe_load(cluster.kubeconfig.read_text())
    ctx = next(c for c in base["contexts"] if c["name"] == base["current-context"])["context"]
    # a file with only a context (referring to the cluster and user of the next file)
    first = tmp_path / "first.yaml"
    first.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "alt",
        "contexts": [{"name": "alt", "context": {"cluster": ctx["cluster"], "user": ctx["user"],
                                                 "namespace": namespace}}],
    }))
    missing = tmp_path / "does-not-exist.yaml"
    monkeypatch.setenv("KUBECONFIG", f"{missing}:{first}:{cluster.kubeconfig}")
    with ClusterClient(ClusterOptions()) as c:
        assert c.context == "alt"  # the first file that sets current-context wins, like kubectl
        assert c.default_namespace == namespace
        assert c.server == cluster.server
        assert c.server_version().major == "1"
    with ClusterClient(ClusterOptions(context=base["current-context"])) as c:
        assert c.context == base["current-context"]


def test_unknown_context_is_config_error(cluster: lab.Cluster, cache_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r'^context "nope" does not exist in kubeconfig .*kubeconfig'):
        ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig), context="nope"))


def test_missing_kubeconfig_is_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"no-such\.yaml: no such file"):
        ClusterClient(ClusterOptions(kubeconfig=str(tmp_path / "no-such.yaml")))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "also-missing.yaml"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match=r"^no kubeconfig found .* and not running in a pod"):
        ClusterClient(ClusterOptions())
    assert ConfigError.exit_code == 1


# --------------------------------------------------------------------------------------------
# reads


def test_get_and_not_found(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w1", namespace, replicas=2, color="red"), "bob")
    obj = client.get(widgets, "w1", namespace)
    assert obj["kind"] == "Widget" and obj["apiVersion"] == "example.com/v1"
    assert obj["spec"] == {"replicas": 2, "color": "red"}
    assert managers(obj) == {("bob", "Apply", None)}  # managedFields are not hidden
    with pytest.raises(NotFound) as exc:
        client.get(widgets, "missing", namespace)
    assert str(exc.value) == f'widgets.example.com "missing" not found in namespace "{namespace}"'
    assert exc.value.code == 404 and exc.value.reason == "NotFound"
    assert exc.value.status is not None and exc.value.status["details"]["name"] == "missing"


def test_get_subresource_scale(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w-scale", namespace, replicas=3), "bob")
    scale = client.get(widgets, "w-scale", namespace, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3


def test_list_pages_with_limit(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    for i in range(5):
        apply(client, widgets, widget(f"w{i}", namespace, labels={"i": str(i % 2)}, replicas=i), "bob")
    before = client.request_count
    pages = list(client.list_pages(widgets, namespace, limit=2))
    assert [len(p) for p in pages] == [2, 2, 1]
    assert client.request_count - before == 3  # one GET per page: continue tokens were followed
    items = [it for p in pages for it in p]
    assert [it["metadata"]["name"] for it in items] == [f"w{i}" for i in range(5)]
    assert all(it["apiVersion"] == "example.com/v1" and it["kind"] == "Widget" for it in items)
    assert all(it["metadata"]["managedFields"] for it in items)

    odd = client.list(widgets, namespace, label_selector="i=1", limit=1)
    assert sorted(it["metadata"]["name"] for it in odd) == ["w1", "w3"]
    by_name = client.list(widgets, namespace, field_selector="metadata.name=w4")
    assert [it["spec"]["replicas"] for it in by_name] == [4]


def test_list_default_and_all_namespaces(
    cluster: lab.Cluster, widgets: ResourceInfo, namespace: str, cache_dir: Path
) -> None:
    other = namespace[:50] + "-b"
    if cluster.external:
        cluster.kubectl("create", "namespace", other)
    try:
        with ClusterClient(ClusterOptions(kubeconfig=str(cluster.kubeconfig), namespace=namespace)) as c:
            apply(c, widgets, widget("a", namespace, replicas=1), "bob")
            apply(c, widgets, widget("b", other, replicas=1), "bob")
            assert [it["metadata"]["name"] for it in c.list(widgets)] == ["a"]  # the default namespace
            everywhere = {(it["metadata"]["namespace"], it["metadata"]["name"])
                          for it in c.list(widgets, ALL_NAMESPACES, limit=1)}
            assert {(namespace, "a"), (other, "b")} <= everywhere
    finally:
        if cluster.external:
            cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)


def test_cluster_scoped_ignores_namespace(client: ClusterClient, gizmos: ResourceInfo, namespace: str) -> None:
    name = f"g-{namespace}"
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": {}}
    created = client.create(gizmos, body, "ignored-namespace", field_manager="maker")
    try:
        assert "namespace" not in created["metadata"]
        assert gizmos.path("ignored", name) == f"/apis/example.com/v1/gizmos/{name}"
        assert client.get(gizmos, name, "whatever")["metadata"]["name"] == name
        assert name in {it["metadata"]["name"] for it in client.list(gizmos, namespace)}
    finally:
        client.delete(gizmos, name)
    with pytest.raises(NotFound, match=rf'^gizmos.example.com "{name}" not found$'):
        client.get(gizmos, name)


def test_get_raw_and_json(client: ClusterClient) -> None:
    assert b'"gitVersion"' in client.get_raw("/version")
    index = client.get_json("/openapi/v3")
    assert "apis/example.com/v1" in index["paths"]
    with pytest.raises(NotFound, match=r"could not find the requested resource \(GET /no/such/path\)"):
        client.get_raw("/no/such/path")


# --------------------------------------------------------------------------------------------
# writes


def test_apply_conflict_carries_causes(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1, color="red"), "bob")
    with pytest.raises(Conflict) as exc:
        apply(client, widgets, widget("w", namespace, replicas=3, color="blue"), "alice")
    err = exc.value
    assert err.code == 409 and err.reason == "Conflict"
    assert sorted((c.reason, c.field, c.manager) for c in err.causes) == [
        ("FieldManagerConflict", ".spec.color", "bob"),
        ("FieldManagerConflict", ".spec.replicas", "bob"),
    ]
    assert err.causes[0].message.startswith('conflict with "bob"')
    assert "\n" not in str(err)
    assert str(err) == (f'apply of widgets.example.com "w" in namespace "{namespace}" failed with 2 conflicts: '
                        '.spec.color, .spec.replicas (owned by "bob")')
    assert client.get(widgets, "w", namespace)["spec"] == {"replicas": 1, "color": "red"}  # nothing changed

    forced = apply(client, widgets, widget("w", namespace, replicas=3), "alice", force=True)
    assert forced["spec"] == {"replicas": 3, "color": "red"}
    assert ("alice", "Apply", None) in managers(forced)


def test_apply_dry_run_stores_nothing(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    stored = apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    dry = apply(client, widgets, widget("w", namespace, replicas=7), "alice", force=True, dry_run=True)
    assert dry["spec"]["replicas"] == 7
    assert ("alice", "Apply", None) in managers(dry)
    now = client.get(widgets, "w", namespace)
    assert now["spec"]["replicas"] == 1
    assert now["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert managers(now) == {("bob", "Apply", None)}
    # a dry-run create leaves no object behind either
    client.create(widgets, widget("ghost", namespace, replicas=1), dry_run=True)
    with pytest.raises(NotFound):
        client.get(widgets, "ghost", namespace)


def test_merge_patch_records_update_manager(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1, color="red"), "bob")
    out = client.patch(widgets, "w", namespace, {"spec": {"color": "green"}}, "merge", field_manager="editor")
    assert out["spec"] == {"replicas": 1, "color": "green"}
    assert ("editor", "Update", None) in managers(out)
    # without a field manager the server names it after our User-Agent
    out = client.patch(widgets, "w", namespace, {"spec": {"replicas": 2}}, "merge")
    assert ("kubectl-fieldown", "Update", None) in managers(out)


def test_json_patch_test_op_on_resource_version(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    obj = apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    rv = obj["metadata"]["resourceVersion"]
    stale = [{"op": "test", "path": "/metadata/resourceVersion", "value": str(int(rv) - 1)},
             {"op": "replace", "path": "/spec/replicas", "value": 9}]
    with pytest.raises((Conflict, Invalid)) as exc:
        client.patch(widgets, "w", namespace, stale, "json", field_manager="guard")
    # this server answers a failed "test" with 422 Invalid and no details
    assert exc.value.code in (409, 422)
    assert str(exc.value).startswith(f'patch of widgets.example.com "w" in namespace "{namespace}" rejected')
    assert client.get(widgets, "w", namespace)["spec"]["replicas"] == 1
    fresh = [{"op": "test", "path": "/metadata/resourceVersion", "value": rv},
             {"op": "replace", "path": "/spec/replicas", "value": 9}]
    assert client.patch(widgets, "w", namespace, fresh, "json", field_manager="guard")["spec"]["replicas"] == 9


def test_replace_with_stale_resource_version_conflicts(
    client: ClusterClient, widgets: ResourceInfo, namespace: str
) -> None:
    obj = apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    client.patch(widgets, "w", namespace, {"spec": {"replicas": 2}}, "merge", field_manager="other")
    obj["spec"]["replicas"] = 5
    with pytest.raises(Conflict) as exc:
        client.replace(widgets, obj, field_manager="replacer")
    assert exc.value.code == 409 and not exc.value.causes
    assert str(exc.value).startswith(f'conflict on widgets.example.com "w" in namespace "{namespace}": ')
    assert "the object has been modified" in str(exc.value)
    latest = client.get(widgets, "w", namespace)
    latest["spec"]["replicas"] = 5
    out = client.replace(widgets, latest, field_manager="replacer")
    assert out["spec"]["replicas"] == 5 and ("replacer", "Update", None) in managers(out)


def test_create_existing_is_already_exists(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    client.create(widgets, widget("w", namespace, replicas=1), field_manager="maker")
    with pytest.raises(AlreadyExists, match=r'^widgets.example.com "w" already exists$') as exc:
        client.create(widgets, widget("w", namespace, replicas=1))
    assert isinstance(exc.value, Conflict)


def test_invalid_value_has_causes(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    with pytest.raises(Invalid) as exc:
        client.patch(widgets, "w", namespace, {"spec": {"replicas": "five"}}, "merge")
    assert exc.value.code == 422
    assert "spec.replicas" in {c.field for c in exc.value.causes}
    msg = str(exc.value)
    assert msg.startswith(f'patch of widgets.example.com "w" in namespace "{namespace}" rejected as invalid: ')
    assert "spec.replicas" in msg and "\n" not in msg


def test_strategic_merge_on_custom_resource_is_unsupported(
    client: ClusterClient, widgets: ResourceInfo, namespace: str
) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    with pytest.raises(ApiError) as exc:
        client.patch(widgets, "w", namespace, {"spec": {"replicas": 2}}, "strategic")
    assert exc.value.code == 415 and exc.value.reason == "UnsupportedMediaType"
    assert str(exc.value).startswith('patch widgets.example.com "w"')


def test_status_subresource_apply(client: ClusterClient, widgets: ResourceInfo, namespace: str) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    status = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": namespace},
              "status": {"replicas": 1}}
    out = client.patch(widgets, "w", namespace, status, "apply", field_manager="ctrl", subresource="status")
    assert ("ctrl", "Apply", "status") in managers(out)


def test_patch_argument_checks(client: ClusterClient, widgets: ResourceInfo) -> None:
    before = client.request_count
    with pytest.raises(ValueError, match="field_manager"):
        client.patch(widgets, "w", "ns", {}, "apply")
    with pytest.raises(ValueError, match="force"):
        client.patch(widgets, "w", "ns", {}, "merge", force=True)
    with pytest.raises(ValueError, match="list of operations"):
        client.patch(widgets, "w", "ns", {}, "json")
    assert client.request_count == before


# --------------------------------------------------------------------------------------------
# authentication and reachability (real answers from the real server)


def _without_credentials(doc: dict[str, Any]) -> None:
    for u in doc["users"]:
        u["user"] = {}


def test_anonymous_request_is_forbidden(
    cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str,
    kubeconfig_variant: KubeconfigFactory,
) -> None:
    apply(client, widgets, widget("w", namespace, replicas=1), "bob")
    anon = ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(_without_credentials))))
    with anon:
        with pytest.raises(Forbidden) as exc:
            anon.get(widgets, "w", namespace)
        err = exc.value
        assert err.code == 403 and err.reason == "Forbidden"
        msg = str(err)
        assert msg.startswith(f'forbidden to get widgets.example.com "w" in namespace "{namespace}": ')
        assert 'User "system:anonymous" cannot get resource "widgets"' in msg
        with pytest.raises(Forbidden, match=rf'^forbidden to list widgets.example.com in namespace "{namespace}": '):
            anon.list(widgets, namespace)
        with pytest.raises(Forbidden, match=r"^forbidden to apply widgets.example.com "):
            apply(anon, widgets, widget("w", namespace, replicas=2), "mallory")


def test_unknown_client_certificate_is_unauthorized(
    cluster: lab.Cluster, widgets: ResourceInfo, namespace: str, kubeconfig_variant: KubeconfigFactory,
) -> None:
    if cluster.state_dir is None:
        pytest.skip("needs the lab's PKI (a serving certificate used as a client certificate)")
    pki = cluster.state_dir / "pki"

    def server_cert_as_client(doc: dict[str, Any]) -> None:
        # a certificate from the right CA but without the clientAuth usage: authentication fails
        for u in doc["users"]:
            u["user"] = {"client-certificate": str(pki / "server.crt"), "client-key": str(pki / "server.key")}

    kubeconfig = kubeconfig_variant(server_cert_as_client)
    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig))) as c, pytest.raises(Unauthorized) as exc:
        c.get(widgets, "w", namespace)
    assert exc.value.code == 401
    assert str(exc.value) == f"the API server at {cluster.server} did not accept our credentials (Unauthorized)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_dead_port_is_unreachable_fast(kubeconfig_variant: KubeconfigFactory, widgets: ResourceInfo) -> None:
    port = _free_port()

    def dead(doc: dict[str, Any]) -> None:
        for c in doc["clusters"]:
            c["cluster"]["server"] = f"https://127.0.0.1:{port}"

    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(dead)))) as c:
        with pytest.raises(Unreachable) as exc:
            c.get(widgets, "w", "ns")
        # fast because it is not retried (counted below), not because of a clock: no timing assertion
        assert str(exc.value) == f"cannot reach the API server at https://127.0.0.1:{port}: connection refused"
        assert c.request_count == 1  # a refused connection is not retried
        with pytest.raises(Unreachable):
            c.server_version()


def test_wrong_ca_is_unreachable_tls_error(
    kubeconfig_variant: KubeconfigFactory, widgets: ResourceInfo, cluster: lab.Cluster
) -> None:
    import certifi  # public CAs only: they did not sign the server's certificate

    def wrong_ca(doc: dict[str, Any]) -> None:
        for c in doc["clusters"]:
            c["cluster"].pop("certificate-authority-data", None)
            c["cluster"]["certificate-authority"] = certifi.where()

    kubeconfig = kubeconfig_variant(wrong_ca)
    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig))) as c, pytest.raises(Unreachable) as exc:
        c.server_version()
    msg = str(exc.value)
    assert msg.startswith(f"cannot reach the API server at {cluster.server}: TLS error: ")
    assert "certificate verify failed" in msg and "\n" not in msg
    assert c.request_count == 1  # a certificate refused is refused again: not tried twice


#: a TLS record: a fatal alert, decode_error (RFC 8446 6.2)
_DECODE_ERROR_ALERT = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32])


@contextlib.contextmanager
def _alert_then_forward(server: str, alerts: int) -> Iterator[str]:
    """A TCP proxy to ``server`` (https://HOST:PORT) on a port of its own, whose first ``alerts``
    connections are answered with a decode_error alert once the client has said hello, as the lab's
    server once did under load; the others are passed to the server. Yields the proxy's URL."""
    host, port = server.removeprefix("https://").rsplit(":", 1)
    listener = socket.create_server(("127.0.0.1", 0))
    seen = [0]

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            seen[0] += 1
            if seen[0] <= alerts:
                with conn, contextlib.suppress(OSError):
                    conn.recv(65536)  # the ClientHello
                    conn.sendall(_DECODE_ERROR_ALERT)
                continue
            upstream = socket.create_connection((host, int(port)))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


@pytest.mark.parametrize("alerts, requests, reached", [(1, 2, True), (2, 2, False)])
def test_a_tls_alert_is_tried_once_more(kubeconfig_variant: KubeconfigFactory, cluster: lab.Cluster,
                                        alerts: int, requests: int, reached: bool) -> None:
    """A TLS failure other than a refused certificate gets one more connection on a read; a second
    one is the answer."""
    with _alert_then_forward(cluster.server, alerts) as proxy:
        def through_proxy(doc: dict[str, Any]) -> None:
            for c in doc["clusters"]:
                c["cluster"]["server"] = proxy

        with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(through_proxy)))) as c:
            if reached:
                assert c.server_version().git_version.startswith("v")
            else:
                with pytest.raises(Unreachable) as exc:
                    c.server_version()
                assert str(exc.value) == f"cannot reach the API server at {proxy}: TLS error: " \
                                         "[SSL: TLSV1_ALERT_DECODE_ERROR] tlsv1 alert decode error"
            assert c.request_count == requests


def test_retry_policy_delays() -> None:
    p = RetryPolicy(max_attempts=5, backoff_base=0.2, backoff_max=1.0, retry_after_max=10)
    assert [p.delay(a) for a in (1, 2, 3, 4, 5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
    assert p.delay(1, "3") == 3.0
    assert p.delay(1, "120") == 10.0  # bounded even if the server asks for more
    assert p.delay(2, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.4


def test_exec_credential_plugin(
    cluster: lab.Cluster, client: ClusterClient, widgets: ResourceInfo, namespace: str,
    kubeconfig_variant: KubeconfigFactory, tmp_path: Path,
) -> None:
    """A real client-go credential plugin (ExecCredential v1) handing out the admin certificate."""
    if cluster.state_dir is None:
        pytest.skip("needs the lab's PKI")
    pki = cluster.state_dir / "pki"
    apply(client, widgets, widget("w", namespace, replicas=4), "bob")
    plugin = tmp_path / "cred-plugin.py"
    plugin.write_text(
        "import json, sys\n"
        "if sys.argv[1:] == ['fail']:\n"
        "    sys.exit('token service unavailable')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        f"    'status': {{'clientCertificateData': open({str(pki / 'admin.crt')!r}).read(),\n"
        f"               'clientKeyData': open({str(pki / 'admin.key')!r}).read()}}}}))\n"
    )

    def with_plugin(*args: str) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            for u in doc["users"]:
                u["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                                      "args": [str(plugin), *args], "interactiveMode": "Never"}}
        return edit

    with ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(with_plugin())))) as c:
        assert c.get(widgets, "w", namespace)["spec"]["replicas"] == 4
    with pytest.raises(ConfigError, match=r'^the credential plugin ".*python.*" of context ".*" failed: .*'):
        ClusterClient(ClusterOptions(kubeconfig=str(kubeconfig_variant(with_plugin("fail")))))


def test_get_raw_follows_same_server_redirect(client: ClusterClient) -> None:
    # the server redirects an outdated OpenAPI hash to the current document
    doc = client.get_json("/openapi/v3/apis/example.com/v1?hash=0000")
    assert "com.example.v1.Widget" in doc["components"]["schemas"]


@pytest.fixture
def silent_server() -> Iterator[int]:
    with silent_port() as port:
        yield port


def test_a_silent_tls_handshake_names_the_limit_that_ran_out(silent_server: int, tmp_path: Path) -> None:
    # the connect timeout bounds the TLS handshake; the message named the 60 s read timeout
    from kubectl_fieldown.kube import ClusterClient, ClusterOptions
    from kubectl_fieldown.kube.client import RetryPolicy
    from kubectl_fieldown.kube.errors import Unreachable

    options = ClusterOptions(kubeconfig=str(dead_end_kubeconfig(tmp_path, silent_server)), connect_timeout=0.5,
                             read_timeout=60, retry=RetryPolicy(max_attempts=1))
    with ClusterClient(options) as client, pytest.raises(Unreachable) as caught:
        client.get_json("/version")
    assert str(caught.value).endswith(
        "no TLS handshake within 0.5s (the server accepted the connection but did not answer)"), str(caught.value)
