"""kube/_lightconfig.py reads the common kubeconfigs without the kubernetes package: what it loads
must be what the library loads, attribute for attribute, and everything else must go to the library."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_fieldown.kube import ConfigError, _kubeconfig, _lightconfig
from kubectl_fieldown.kube._transport import load_config
from kubectl_fieldown.kube.types import ConnectionOverrides

CA = b"-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n"
CERT = b"-----BEGIN CERTIFICATE-----\ncert\n-----END CERTIFICATE-----\n"
KEY = b"-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n"


def _b64(data: bytes) -> str:
    return base64.standard_b64encode(data).decode()


def _doc(cluster: dict[str, Any], user: dict[str, Any] | None, context: dict[str, Any] | None = None,
         current: str | None = "c") -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "k", "cluster": cluster}],
        "contexts": [{"name": "c", "context": {"cluster": "k", **({"user": "u"} if user is not None else {}),
                                               **(context or {})}}],
        "users": [{"name": "u", "user": user}] if user is not None else [],
    }
    if current is not None:
        doc["current-context"] = current
    return doc


def _write(path: Path, doc: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _files(tmp_path: Path) -> Path:
    d = tmp_path / "pki"
    d.mkdir(exist_ok=True)
    (d / "ca.crt").write_bytes(CA)
    (d / "admin.crt").write_bytes(CERT)
    (d / "admin.key").write_bytes(KEY)
    (d / "token").write_text("  file-token\n")
    return d


SERVER = "https://127.0.0.1:6443/"

VARIANTS: dict[str, Any] = {
    "client certificate data": lambda d: _doc(
        {"server": SERVER, "certificate-authority-data": _b64(CA)},
        {"client-certificate-data": _b64(CERT), "client-key-data": _b64(KEY)}, {"namespace": "shop"}),
    "relative files": lambda d: _doc(
        {"server": SERVER, "certificate-authority": "pki/ca.crt"},
        {"client-certificate": "pki/admin.crt", "client-key": "pki/admin.key"}),
    "absolute files": lambda d: _doc(
        {"server": SERVER, "certificate-authority": str(d / "ca.crt")},
        {"client-certificate": str(d / "admin.crt"), "client-key": str(d / "admin.key")}),
    "token": lambda d: _doc({"server": SERVER, "insecure-skip-tls-verify": True}, {"token": "abc.def"}),
    "token file": lambda d: _doc({"server": SERVER, "certificate-authority-data": _b64(CA),
                                  "tls-server-name": "kubernetes"}, {"tokenFile": "pki/token"}),
    "token and token file": lambda d: _doc({"server": SERVER}, {"token": "inline", "tokenFile": "pki/token"}),
    "no user": lambda d: _doc({"server": SERVER, "insecure-skip-tls-verify": False}, None),
    "minikube's extensions": lambda d: _doc(
        {"server": SERVER, "certificate-authority": "pki/ca.crt", "extensions": [
            {"name": "cluster_info", "extension": {"provider": "minikube.sigs.k8s.io", "version": "v1.30.1"}}]},
        {"client-certificate": "pki/admin.crt", "client-key": "pki/admin.key"},
        {"namespace": "default", "extensions": [{"name": "context_info", "extension": {"provider": "m"}}]}),
    "plain http": lambda d: _doc({"server": "http://127.0.0.1:8080", "certificate-authority": "missing.crt"},
                                 {"client-certificate": "missing.crt", "token": "t"}),
    "proxy": lambda d: _doc({"server": "https://api.example.com", "proxy-url": "http://proxy.example.com:3128"},
                            {"token": "t"}),
}

LIBRARY_ONLY: dict[str, Any] = {
    "exec plugin": lambda d: _doc({"server": SERVER}, {"exec": {"command": "true", "apiVersion":
                                                               "client.authentication.k8s.io/v1"}}),
    "basic auth": lambda d: _doc({"server": SERVER}, {"username": "a", "password": "b"}),
    "missing file": lambda d: _doc({"server": SERVER, "certificate-authority": "nope.crt"}, {"token": "t"}),
    "bad data": lambda d: _doc({"server": SERVER, "certificate-authority-data": "not base64!"}, {"token": "t"}),
    "unknown context": lambda d: _doc({"server": SERVER}, {"token": "t"}, current="other"),
    "no current context": lambda d: _doc({"server": SERVER}, {"token": "t"}, current=None),
    "empty token": lambda d: _doc({"server": SERVER}, {"token": ""}),
    "missing user": lambda d: {**_doc({"server": SERVER}, {"token": "t"}), "users": []},
    "no server": lambda d: _doc({}, {"token": "t"}),
    "unknown key": lambda d: _doc({"server": SERVER, "disable-compression": True}, {"token": "t"}),
}


def _content(path: Any) -> Any:
    if not isinstance(path, str):
        return path
    with open(path, "rb") as f:
        return f.read()


def _snapshot(loaded: Any) -> dict[str, Any]:
    cfg = loaded.configuration
    out = {k: getattr(loaded, k) for k in ("server", "context", "namespace", "source", "proxy", "token_file",
                                           "token_origin")}
    for attr in ("host", "verify_ssl", "tls_server_name", "assert_hostname", "proxy", "proxy_headers",
                 "connection_pool_maxsize", "username", "password", "ca_cert_data"):
        out[attr] = getattr(cfg, attr)
    for attr in ("ssl_ca_cert", "cert_file", "key_file"):
        out[attr] = _content(getattr(cfg, attr))
        if isinstance(getattr(cfg, attr), str) and not getattr(cfg, attr).startswith("/proc/self/fd/"):
            out[attr + " path"] = getattr(cfg, attr)
    out["auth"] = cfg.auth_settings()
    out["auth again"] = cfg.auth_settings()
    _kubeconfig._release_key_material(cfg)
    return out


def _library_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise _lightconfig.Unsupported("test")

    monkeypatch.setattr(_lightconfig, "load", unsupported)
    monkeypatch.setattr(_lightconfig, "merged_context_names", unsupported)


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any) -> tuple[Any, Any]:
    def run() -> Any:
        try:
            return ("ok", fn())
        except ConfigError as e:
            return ("error", str(e))

    light = run()
    with monkeypatch.context() as m:
        _library_only(m)
        library = run()
    return light, library


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("flags", [ConnectionOverrides(), ConnectionOverrides(server="https://10.0.0.1:443",
                                                                                token="flag-token"),
                                   ConnectionOverrides(insecure_skip_tls_verify=True)], ids=["", "server+token",
                                                                                             "insecure"])
def test_the_light_loader_loads_what_the_library_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       variant: str, flags: ConnectionOverrides) -> None:
    d = _files(tmp_path)
    path = _write(tmp_path / "config", VARIANTS[variant](d))
    called: list[bool] = []
    real = _lightconfig.load

    def light_load(*args: Any) -> Any:
        result = real(*args)
        called.append(True)  # read here, not by the library
        return result

    monkeypatch.setattr(_lightconfig, "load", light_load)
    light, library = _both(monkeypatch, lambda: _snapshot(load_config(path, None, flags)))
    assert called and light[0] == "ok", light
    assert light == library


@pytest.mark.parametrize("variant", sorted(LIBRARY_ONLY))
def test_other_kubeconfigs_go_to_the_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    d = _files(tmp_path)
    path = _write(tmp_path / "config", LIBRARY_ONLY[variant](d))
    with pytest.raises(_lightconfig.Unsupported):
        _lightconfig.load([path], None, _kubeconfig._credential_file)
    if variant in ("exec plugin",):
        return  # the library runs the plugin
    light, library = _both(monkeypatch, lambda: _snapshot(load_config(path, None)))
    assert light == library


def test_merged_files_and_their_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _files(tmp_path)
    (tmp_path / "b" / "pki").mkdir(parents=True)
    (tmp_path / "b" / "pki" / "ca.crt").write_bytes(b"other CA")
    first = _write(tmp_path / "a" / "config", {
        "clusters": [{"name": "k", "cluster": {"server": SERVER, "certificate-authority": str(d / "ca.crt")}}],
        "contexts": [{"name": "x", "context": {"cluster": "k2", "namespace": "first"}}]})
    second = _write(tmp_path / "b" / "config", {
        "current-context": "x",
        "clusters": [{"name": "k", "cluster": {"server": "https://ignored"}},
                     {"name": "k2", "cluster": {"server": SERVER, "certificate-authority": "pki/ca.crt"}}],
        "contexts": [{"name": "x", "context": {"cluster": "k"}}, {"name": "y", "context": {"cluster": "k"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]})
    third = _write(tmp_path / "c" / "config", {"current-context": "y"})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([first, second, third]))
    for context in (None, "x", "y"):
        light, library = _both(monkeypatch, lambda c=context: _snapshot(load_config(None, c)))
        assert light[0] == "ok" and light == library
    light, library = _both(monkeypatch, lambda: _kubeconfig.context_names(None))
    assert light == library == ("ok", ["x", "y"])


def test_a_plain_kubeconfig_does_not_import_kubernetes(tmp_path: Path) -> None:
    d = _files(tmp_path)
    path = _write(tmp_path / "config", VARIANTS["relative files"](d))
    exec_path = _write(tmp_path / "exec-config", LIBRARY_ONLY["basic auth"](d))
    code = (
        "import sys\n"
        "from kubectl_fieldown.kube._transport import load_config, context_names\n"
        f"load_config({path!r}, None); context_names({path!r})\n"
        "print('kubernetes' in sys.modules)\n"
        f"load_config({exec_path!r}, None)\n"
        "print('kubernetes' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_the_users_files_are_relative_to_the_clusters_file_as_in_the_library(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # the library resolves a user's client-certificate and client-key against the directory of the
    # file its context's *cluster* comes from; the token file against the user's own
    for where in ("a", "b"):
        pki = tmp_path / where / "pki"
        pki.mkdir(parents=True)
        (pki / "admin.crt").write_bytes(CERT + where.encode())
        (pki / "admin.key").write_bytes(KEY + where.encode())
        (pki / "token").write_text(f"token-{where}")
    first = _write(tmp_path / "a" / "config", {
        "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": SERVER, "certificate-authority-data": _b64(CA)}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}},
                     {"name": "t", "context": {"cluster": "k", "user": "t"}}]})
    second = _write(tmp_path / "b" / "config", {
        "users": [{"name": "u", "user": {"client-certificate": "pki/admin.crt", "client-key": "pki/admin.key"}},
                  {"name": "t", "user": {"tokenFile": "pki/token"}}]})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([first, second]))
    for context in ("c", "t"):
        light, library = _both(monkeypatch, lambda c=context: _snapshot(load_config(None, c)))
        assert light[0] == "ok" and light == library
    (tmp_path / "a" / "pki" / "admin.crt").unlink()  # only the user's own directory has it now
    with pytest.raises(_lightconfig.Unsupported):
        _lightconfig.load([first, second], "c", _kubeconfig._credential_file)
    light, library = _both(monkeypatch, lambda: _snapshot(load_config(None, "c")))
    assert light == library and light[0] == "error"


@pytest.mark.parametrize("variant", ["context without a cluster", "unnamed context"])
def test_what_the_library_would_refuse_or_skip_goes_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          variant: str) -> None:
    doc = _doc({"server": SERVER}, {"token": "t"})
    if variant == "context without a cluster":
        doc["clusters"].append({"name": "None", "cluster": {"server": SERVER}})
        del doc["contexts"][0]["context"]["cluster"]
    else:
        doc["contexts"].append({"name": "", "context": {"cluster": "k"}})
    path = _write(tmp_path / "config", doc)
    with pytest.raises(_lightconfig.Unsupported):
        _lightconfig.load([path], None, _kubeconfig._credential_file)
    light, library = _both(monkeypatch, lambda: _snapshot(load_config(path, None)))
    assert light == library
    names = _both(monkeypatch, lambda: _kubeconfig.context_names(path))
    assert names[0] == names[1]
