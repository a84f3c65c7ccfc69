"""Kubeconfig loading and raw HTTP: the only module that imports ``kubernetes`` and ``urllib3``.

Imported lazily by :class:`kubectl_fieldown.kube.client.ClusterClient` when a client is created,
because ``import kubernetes`` costs about half a second (its package ``__init__`` pulls in the
whole generated client, whichever submodule is asked for).

We use the official client for what is hard to get right — kubeconfig merging, exec
plugins, auth providers, in-cluster config — and then talk HTTP through a urllib3 pool of our
own, never through its model (de)serialisation, which is several times slower than
``json.loads`` on large LIST answers. Three things are done as kubectl does them rather than as
the Python client does:

* **Key material never touches the disk.** The Python client writes the CA, the client certificate
  and the client *key* of a kubeconfig's ``*-data`` fields (and of an exec plugin's answer) to
  files in ``$TMPDIR`` and removes them only at a clean exit: SIGKILL or SIGTERM left private keys
  behind. Here they go to anonymous in-memory files (Linux ``memfd``), which are read once into the
  TLS context and closed; where there is no memfd, to a private directory that is removed as soon
  as the TLS context has read them.
* **Proxies** are chosen as kubectl chooses them (:mod:`.proxy`): never for loopback addresses.
* **insecure-skip-tls-verify** is one warning line on stderr, once, instead of urllib3's warning
  (four lines) for every connection.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import re
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import urllib3
import yaml
from kubernetes.client.configuration import Configuration
from kubernetes.config import incluster_config as _incluster
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException
from urllib3._collections import HTTPHeaderDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    InsecureRequestWarning,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)

from . import incluster
from ._bounded import MAX_RESPONSE_BYTES, Deadline, delivered, discard, read_body, watch_connections
from ._httplog import log_request, log_response
from .credentials import bearer_header
from .errors import ConfigError, KubeError, Unreachable
from .proxy import proxy_for
from .types import ConnectionOverrides, HTTPResponse, RetryPolicy

# the library is untyped: give its entry points explicit Any types once, here
KubeConfigMerger: Any = _kube_config.KubeConfigMerger
KubeConfigLoader: Any = _kube_config.KubeConfigLoader
InClusterConfigLoader: Any = _incluster.InClusterConfigLoader
SERVICE_HOST_ENV_NAME: str = _incluster.SERVICE_HOST_ENV_NAME
SERVICE_TOKEN_FILENAME: str = _incluster.SERVICE_TOKEN_FILENAME
SERVICE_CERT_FILENAME: str = _incluster.SERVICE_CERT_FILENAME
SERVICE_NAMESPACE_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
DEFAULT_KUBECONFIG = "~/.kube/config"


@dataclass(frozen=True)
class LoadedConfig:
    """The result of reading kubeconfig (or the in-cluster service account)."""

    server: str
    context: str | None
    namespace: str | None  # the context's default namespace (None if it sets none)
    source: str  # "kubeconfig <paths>" or "in-cluster"
    configuration: Any  # kubernetes.client.Configuration (untyped library)
    proxy: str | None = None  # the proxy URL for this server, chosen as kubectl chooses it
    token_file: str | None = None  # the file the bearer token is read from (trimmed at every request)
    token_origin: str = "the kubeconfig"  # where an inline bearer token comes from, for errors


def kubeconfig_paths(explicit: str | None) -> tuple[list[str], bool]:
    """The kubeconfig files to merge, like kubectl: ``--kubeconfig`` (must exist), else every
    existing file of ``$KUBECONFIG``, else ``~/.kube/config`` if it exists. The flag is True for
    ``--kubeconfig``, which (as in client-go) rules out the in-cluster fallback."""
    if explicit:
        path = os.path.expanduser(explicit)
        # /dev/null (an empty kubeconfig, kubectl's way to use only -s and the credential flags) is
        # no regular file but reads as one
        if not os.path.exists(path) or os.path.isdir(path):
            raise ConfigError(f"kubeconfig {explicit}: no such file")
        return [path], True
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
        return [p for p in paths if os.path.isfile(p)], False
    default = os.path.expanduser(DEFAULT_KUBECONFIG)
    return ([default] if os.path.isfile(default) else []), False


def _empty_file(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return not f.read(4096).strip()
    except OSError:
        return False


def context_names(kubeconfig: str | None) -> list[str]:
    """The context names of the kubeconfig files kubectl would merge, in their order."""
    paths, _ = kubeconfig_paths(kubeconfig)
    if not paths:
        return []
    try:
        merger = KubeConfigMerger(os.pathsep.join(paths))
    except (ConfigException, yaml.YAMLError, OSError) as e:
        raise ConfigError(f"cannot read kubeconfig {os.pathsep.join(paths)}: {_short(e)}") from None
    contexts = [_node_value(c) for c in (_node_value(merger.config or {}).get("contexts") or [])]
    return [str(c["name"]) for c in contexts if isinstance(c, Mapping) and c.get("name")]


def _node_value(node: Any) -> Any:
    return getattr(node, "value", node)


# --- key material in memory --------------------------------------------------------------------

_material_lock = threading.Lock()
_material: dict[str, int | None] = {}  # path -> its memfd (None: a file in the private directory)
_private_dir: str | None = None


def _credential_file(content: Any, temp_file_path: Any = None, force_recreate: bool = False) -> str:
    """Stands in for the kubernetes client's ``_create_temp_file_with_content``: the same contract
    (a path to a file holding ``content``), but an anonymous in-memory file where there is one."""
    data = content.encode() if isinstance(content, str) else bytes(content)
    with _material_lock:
        if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
            fd = os.memfd_create("kubeconfig-credential", os.MFD_CLOEXEC)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            path = f"/proc/self/fd/{fd}"
            _material[path] = fd
            return path
        global _private_dir
        if _private_dir is None:
            _private_dir = tempfile.mkdtemp(prefix="kubectl-fieldown-")  # 0700
            atexit.register(_remove_private_dir)
        fd, path = tempfile.mkstemp(dir=_private_dir)  # 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _material[path] = None
        return path


def _release_key_material(cfg: Any, attrs: tuple[str, ...] = ("ssl_ca_cert", "cert_file", "key_file")) -> None:
    """The TLS context has read them (or a flag replaces them): close the in-memory files (remove
    the files) that hold the CA, certificate and key of ``cfg``, and let nothing refer to them."""
    with _material_lock:
        for attr in attrs:
            path = getattr(cfg, attr, None)
            if not isinstance(path, str) or path not in _material:
                continue
            fd = _material.pop(path)
            with contextlib.suppress(OSError):
                if fd is not None:
                    os.close(fd)
                else:
                    os.remove(path)
            setattr(cfg, attr, None)


def _remove_private_dir() -> None:
    if _private_dir is not None:
        shutil.rmtree(_private_dir, ignore_errors=True)


def _keep_key_material_in_memory() -> None:
    # the loader calls the module-level function by name, for CA, certificate and key data alike
    _kube_config._create_temp_file_with_content = _credential_file


def load_config(kubeconfig: str | None, context: str | None,
                overrides: ConnectionOverrides | None = None) -> LoadedConfig:
    """kubeconfig (or the in-cluster service account, or only the flags) as kubectl reads it, with
    the generic flags (``--server``, ``--token``, ``--cluster``, ``--user``, ...) applied over it."""
    flags = overrides or ConnectionOverrides()
    paths, explicit = kubeconfig_paths(kubeconfig)
    # an empty kubeconfig (kubectl's `--kubeconfig /dev/null -s URL`) adds nothing; kubectl reads it
    nonempty = [p for p in paths if not _empty_file(p)]
    if explicit and not nonempty and not flags.server:
        raise ConfigError(f"kubeconfig {kubeconfig} is empty: give --server (and credentials) or another kubeconfig")
    paths = nonempty
    if not paths:
        if not explicit and incluster.possible():
            if context:
                raise ConfigError(f'context "{context}" does not exist: no kubeconfig found (running in a pod)')
            return _overridden(_load_in_cluster(), flags)
        if flags.server:
            # kubectl needs no kubeconfig when the flags say where the server is
            return _overridden(LoadedConfig(server="", context=None, namespace=None, source="the command-line flags",
                                            configuration=Configuration()), flags)
        where = f"KUBECONFIG={os.environ['KUBECONFIG']}" if os.environ.get("KUBECONFIG") else DEFAULT_KUBECONFIG
        raise ConfigError(f"no kubeconfig found ({where}: no such file) and not running in a pod; "
                          "use --kubeconfig or set KUBECONFIG")
    try:
        merger = KubeConfigMerger(os.pathsep.join(paths))
    except (ConfigException, yaml.YAMLError, OSError) as e:
        raise ConfigError(f"cannot read kubeconfig {os.pathsep.join(paths)}: {_short(e)}") from None
    if merger.config is None:
        raise ConfigError(f"kubeconfig {os.pathsep.join(paths)} has no configuration")
    # kubectl: the first file that sets current-context wins (the Python merger keeps the last)
    current = next((str(merger.config_files[p].get("current-context") or "") for p in merger.paths
                    if (merger.config_files[p] or {}).get("current-context")), "")
    name = context or current
    if not name:
        raise ConfigError(f"kubeconfig {os.pathsep.join(paths)} sets no current-context; use --context")
    contexts = [_node_value(c) for c in (_node_value(merger.config).get("contexts") or [])]
    if not any(isinstance(c, Mapping) and c.get("name") == name for c in contexts):
        raise ConfigError(f'context "{name}" does not exist in kubeconfig {os.pathsep.join(paths)}')
    _point_context(merger.config, name, flags, os.pathsep.join(paths))
    cfg = Configuration()
    _keep_key_material_in_memory()
    try:
        with _captured_log() as logged:
            loader = KubeConfigLoader(config_dict=merger.config, active_context=name, config_base_path=None)
            loader.load_and_set(cfg)
    except (ConfigException, OSError, ValueError, KeyError) as e:
        raise ConfigError(f'cannot use context "{name}" of kubeconfig {os.pathsep.join(paths)}: {_short(e)}') from None
    user = _node_value(getattr(loader, "_user", None)) or {}
    token_file = str(user["tokenFile"]) if isinstance(user, Mapping) and user.get("tokenFile") \
        and not user.get("token") else None
    token_origin = f'the user of context "{name}"'
    if cfg.api_key.get("BearerToken"):
        # refused now rather than at the first request (which checks it again: the library reloads it)
        bearer_header(str(cfg.api_key["BearerToken"]), token_file=token_file, where=token_origin)
    if isinstance(user, Mapping) and "exec" in user and not cfg.api_key.get("BearerToken") and not cfg.cert_file:
        # the library logs a failing credential plugin and carries on without credentials,
        # which would surface later as a baffling 401/403
        command = _node_value(user["exec"]).get("command", "?")
        why = "; ".join(logged) or "no token or client certificate in its output"
        raise ConfigError(f'the credential plugin "{command}" of context "{name}" failed: {why}')
    ctx = loader.current_context.get("context") or {}
    namespace = ctx.get("namespace") or None
    cluster = _node_value(getattr(loader, "_cluster", None)) or {}
    kubeconfig_proxy = cluster.get("proxy-url") if isinstance(cluster, Mapping) else None
    server = str(cfg.host).rstrip("/")
    return _overridden(
        LoadedConfig(server=server, context=name, namespace=namespace, source=f"kubeconfig {os.pathsep.join(paths)}",
                     configuration=cfg,
                     proxy=proxy_for(server, os.environ, str(kubeconfig_proxy) if kubeconfig_proxy else None),
                     token_file=token_file, token_origin=token_origin),
        flags, str(kubeconfig_proxy) if kubeconfig_proxy else None)


def _point_context(config: Any, name: str, flags: ConnectionOverrides, where: str) -> None:
    """``--cluster``/``--user``: the context ``name`` of the merged ``config`` uses them instead
    of its own (kubectl overrides the context, not the entries)."""
    if not flags.cluster and not flags.user:
        return
    root = _node_value(config)
    for key, wanted in (("clusters", flags.cluster), ("users", flags.user)):
        if wanted and not any(_node_value(e).get("name") == wanted for e in (root.get(key) or [])
                              if isinstance(_node_value(e), Mapping)):
            raise ConfigError(f'{key[:-1]} "{wanted}" does not exist in kubeconfig {where}')
    for entry in root.get("contexts") or []:
        value = _node_value(entry)
        if isinstance(value, dict) and value.get("name") == name:
            ctx = dict(_node_value(value.get("context")) or {})
            if flags.cluster:
                ctx["cluster"] = flags.cluster
            if flags.user:
                ctx["user"] = flags.user
            value["context"] = ctx


def _overridden(loaded: LoadedConfig, flags: ConnectionOverrides, kubeconfig_proxy: str | None = None) -> LoadedConfig:
    """``loaded`` with the generic flags that are given applied over it, as kubectl applies them."""
    cfg = loaded.configuration
    server = loaded.server
    if flags.server:
        server = flags.server.rstrip("/")
        if "://" not in server:
            server = "https://" + server  # as client-go does for a bare host:port
        cfg.host = server
    replaced = tuple(attr for attr, given in (
        ("ssl_ca_cert", flags.certificate_authority or flags.insecure_skip_tls_verify),
        ("cert_file", flags.client_certificate), ("key_file", flags.client_key)) if given)
    _release_key_material(cfg, replaced)  # the kubeconfig's own, replaced or dropped below
    for path, what in ((flags.certificate_authority, "--certificate-authority"),
                       (flags.client_certificate, "--client-certificate"), (flags.client_key, "--client-key")):
        if path and not os.path.isfile(os.path.expanduser(path)):
            raise ConfigError(f"{what} {path}: no such file")
    if flags.certificate_authority:
        cfg.ssl_ca_cert = os.path.expanduser(flags.certificate_authority)
        cfg.verify_ssl = True
        if getattr(cfg, "ca_cert_data", None):
            cfg.ca_cert_data = None
    if flags.insecure_skip_tls_verify is not None:
        cfg.verify_ssl = not flags.insecure_skip_tls_verify
        if flags.insecure_skip_tls_verify:
            cfg.ssl_ca_cert = None
    if flags.client_certificate:
        cfg.cert_file = os.path.expanduser(flags.client_certificate)
    if flags.client_key:
        cfg.key_file = os.path.expanduser(flags.client_key)
    if flags.tls_server_name:
        cfg.tls_server_name = flags.tls_server_name
    if flags.token:
        # the flag's token is the bearer token; a kubeconfig's exec plugin must not replace it
        cfg.api_key = {"authorization": bearer_header(f"Bearer {flags.token}", token_file=None, where="--token")}
        cfg.api_key_prefix = {}
        cfg.refresh_api_key_hook = None
        cfg.username = cfg.password = None
        loaded = dataclasses.replace(loaded, token_file=None, token_origin="--token")
    if server == loaded.server:
        return loaded
    return dataclasses.replace(loaded, server=server, proxy=proxy_for(server, os.environ, kubeconfig_proxy))


@contextlib.contextmanager
def _captured_log() -> Iterator[list[str]]:
    """Collect what the kubernetes library logs (it reports exec-plugin failures only that way)
    instead of letting Python's last-resort handler print it."""
    records: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(" ".join(record.getMessage().split()))

    handler = _Collect(level=logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield records
    finally:
        root.removeHandler(handler)


def _load_in_cluster() -> LoadedConfig:
    """The pod's service account (:mod:`.incluster`), through the library's loader, which reads the
    token file again as it rotates."""
    cfg = Configuration()
    account = incluster.service_account()
    try:
        InClusterConfigLoader(token_filename=account.token, cert_filename=account.ca).load_and_set(cfg)
    except (ConfigException, OSError) as e:
        raise ConfigError(f"cannot use the in-cluster service account ({account.directory}): {_short(e)}") from None
    server = str(cfg.host).rstrip("/")
    return LoadedConfig(server=server, context=None, namespace=incluster.pod_namespace(), source="in-cluster",
                        configuration=cfg, proxy=proxy_for(server, os.environ), token_file=account.token)


def _short(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


_SSL_SUFFIX = re.compile(r"\s*\(_ssl\.c:\d+\)")


def describe_connection_error(e: BaseException, connect_timeout: float | None, read_timeout: float | None) -> str:
    """A short reason for :class:`Unreachable`: what failed, not urllib3's nesting.

    Order matters: urllib3 2 makes NewConnectionError a subclass of ConnectTimeoutError."""
    if isinstance(e, ReadTimeoutError):
        # urllib3 reports a TLS handshake that never ends as a read timeout, though the connect
        # timeout bounded it; its message names the limit that ran out
        ran_out = re.search(r"read timeout=([0-9.]+)", str(e))
        waited = float(ran_out.group(1)) if ran_out else read_timeout
        if waited is not None and waited == connect_timeout and waited != read_timeout:
            return f"no TLS handshake within {waited:g}s (the server accepted the connection but did not answer)"
        return f"no answer within {waited or 0:g}s (read timeout)"
    if isinstance(e, SSLError):
        cause = e.__cause__ or (e.args[0] if e.args else e)
        return "TLS error: " + _SSL_SUFFIX.sub("", _short(cause) if isinstance(cause, BaseException) else str(cause))
    if isinstance(e, ProxyError):
        return f"proxy error: {_short(getattr(e, 'original_error', None) or e)}"
    if isinstance(e, NameResolutionError):
        return f"cannot resolve host name ({_short(e.__cause__ or e)})"
    if isinstance(e, NewConnectionError):
        cause = e.__cause__
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.timeout):
            return f"no connection within {connect_timeout or 0:g}s (timeout)"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[0].lower() + cause.strerror[1:]
        return _short(cause or e)
    if isinstance(e, ConnectTimeoutError):
        return f"no connection within {connect_timeout or 0:g}s (timeout)"
    if isinstance(e, ProtocolError):
        inner = e.args[1] if len(e.args) > 1 else None
        if isinstance(inner, ConnectionResetError):
            return "connection reset by the server"
        return f"connection closed by the server ({_short(inner) if inner else _short(e)})"
    if isinstance(e, ssl.SSLError):
        return "TLS error: " + _SSL_SUFFIX.sub("", str(e))
    return _short(e)


def _tls_context(cfg: Any, where: str) -> ssl.SSLContext:
    """The TLS settings of ``cfg`` in one context, read once: CA, client certificate and key."""
    try:
        ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None,
                                         cadata=getattr(cfg, "ca_cert_data", None) or None)
        if not cfg.verify_ssl:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if cfg.cert_file:
            ctx.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    except (ssl.SSLError, OSError, ValueError) as e:
        raise ConfigError(f"cannot use the TLS settings of {where}: {_SSL_SUFFIX.sub('', _short(e))}") from None
    finally:
        _release_key_material(cfg)
    return ctx


_insecure_warned: set[str] = set()


def _warn_insecure(server: str) -> None:
    # once per server and process, on one line (urllib3 warns on four lines at every connection)
    if server not in _insecure_warned:
        _insecure_warned.add(server)
        sys.stderr.write(f"warning: the TLS certificate of {server} is not verified (insecure-skip-tls-verify)\n")
        sys.stderr.flush()


def _pool_manager(loaded: LoadedConfig) -> Any:
    """A urllib3 pool for ``loaded``: its TLS context, and its proxy as kubectl would choose it."""
    cfg = loaded.configuration
    kw: dict[str, Any] = {"maxsize": int(cfg.connection_pool_maxsize or 10)}
    if loaded.server.startswith("https"):
        kw["ssl_context"] = _tls_context(cfg, loaded.source)
        if cfg.tls_server_name:
            kw["server_hostname"] = cfg.tls_server_name
        if cfg.assert_hostname is not None:
            kw["assert_hostname"] = cfg.assert_hostname
        if not cfg.verify_ssl:
            warnings.filterwarnings("ignore", category=InsecureRequestWarning)
            _warn_insecure(loaded.server)
    return watch_connections(_plain_pool_manager(loaded, kw))


def _plain_pool_manager(loaded: LoadedConfig, kw: dict[str, Any]) -> Any:
    cfg = loaded.configuration
    proxy = loaded.proxy
    if proxy is None:
        return urllib3.PoolManager(**kw)
    if proxy.lower().startswith("socks"):
        try:
            from urllib3.contrib.socks import SOCKSProxyManager
        except ImportError:
            raise ConfigError(f"the proxy {proxy} needs the PySocks package (pip install pysocks)") from None
        # Go's socks5 proxies resolve host names on the proxy: urllib3 calls that socks5h
        return SOCKSProxyManager(re.sub("^socks5://", "socks5h://", proxy, flags=re.I),
                                 headers=getattr(cfg, "proxy_headers", None), **kw)
    headers = dict(getattr(cfg, "proxy_headers", None) or {})
    parts = urlsplit(proxy)
    if parts.username is not None and not any(k.lower() == "proxy-authorization" for k in headers):
        # Go sends the user information of a proxy URL as basic authentication; urllib3 does not
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers.update(urllib3.util.make_headers(proxy_basic_auth=credentials))
        proxy = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return urllib3.ProxyManager(proxy, proxy_headers=headers or None, **kw)


class Transport:
    """HTTP to one API server through a urllib3 pool configured from kubeconfig."""

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        connect_timeout: float | None,
        read_timeout: float | None,
        user_agent: str,
        retry: RetryPolicy,
        gzip: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        headers: Sequence[tuple[str, str]] = (),
        verbosity: int = 0,
        request_timeout: float | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.loaded = loaded
        self.server = loaded.server
        self._cfg = loaded.configuration
        self._pool = _pool_manager(loaded)
        self._timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._retry = retry
        self._sleep = sleep
        self._base_headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if gzip:
            # the server compresses large answers only when asked; LISTs shrink about 10x
            self._base_headers["Accept-Encoding"] = "gzip"
        self._extra_headers = tuple(headers)
        self._verbosity = verbosity
        self._request_timeout = request_timeout
        self._max_response_bytes = max_response_bytes
        self.requests_sent = 0

    def close(self) -> None:
        self._pool.clear()

    def _auth_headers(self) -> dict[str, str]:
        # auth_settings() runs the refresh hook, so expiring exec-plugin tokens are renewed
        out: dict[str, str] = {}
        for setting in self._cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                key, value = str(setting["key"]), str(setting["value"])
                # the library sets the token again at every request (a token file read again, an
                # exec plugin's renewed token): trimmed and checked every time, as client-go does
                out[key] = bearer_header(value, token_file=self.loaded.token_file, where=self.loaded.token_origin) \
                    if key.lower() == "authorization" else value
        return out

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        idempotent: bool,
    ) -> HTTPResponse:
        """Send one request, retrying transient failures: for idempotent requests 429, 500, 502,
        503, 504 and a reset connection; for others only 429 (the server rejected it before
        doing anything). Raises :class:`Unreachable` when there is no HTTP answer, or none within
        the request timeout (the whole request and its retries, as kubectl's ``--request-timeout``),
        and :class:`~.errors.BadResponse` for an answer above the size limit."""
        url = self.server + path
        shown_url = url.split("?", 1)[0]  # errors name the path; continue tokens are long
        h = HTTPHeaderDict(self._base_headers)
        h.update(self._auth_headers())
        if headers:
            h.update(headers)
        for key, value in self._extra_headers:
            h.add(key, value)  # repeated headers (Impersonate-Group) stay separate lines
        deadline = Deadline(self._request_timeout)
        attempt = 0
        while True:
            attempt += 1
            self.requests_sent += 1
            started = time.monotonic()
            if self._verbosity >= 7:
                log_request(method, url, h, body, self._verbosity)
            timeout = urllib3.Timeout(connect=deadline.bound(self._connect_timeout),
                                      read=deadline.bound(self._read_timeout))
            deadline.start()
            resp: Any = None
            try:
                resp = self._pool.urlopen(method, url, body=body, headers=h, retries=False, redirect=False,
                                          timeout=timeout, preload_content=False, decode_content=False)
                data = read_body(resp, self._max_response_bytes, f"{method} {shown_url}")
                if deadline.expired:
                    raise deadline.error(self.server, resp)  # the body ended when the socket was shut down
                if self._verbosity >= 6:
                    log_response(method, url, resp, data, started, self._verbosity)
            except KubeError:
                discard(resp)
                raise
            except ProtocolError as e:
                discard(resp)
                if deadline.ran_out(e):
                    raise deadline.error(self.server, resp) from None
                if idempotent and attempt < self._retry.max_attempts and self._may_wait(deadline, attempt):
                    continue
                raise Unreachable(self.server, describe_connection_error(e, self._connect_timeout,
                                                                         self._read_timeout),
                                  delivered=True) from None
            except (HTTPError, OSError) as e:
                discard(resp)
                if deadline.ran_out(e):
                    raise deadline.error(self.server, resp) from None
                raise Unreachable(self.server, describe_connection_error(e, self._connect_timeout,
                                                                         self._read_timeout),
                                  delivered=delivered(e, resp)) from None
            finally:
                deadline.stop()
            status = int(resp.status)
            retry_after = resp.headers.get("Retry-After")
            # a 429 with Retry-After (API priority and fairness) was rejected before any effect,
            # so even a write may be sent again; 5xx after a write may have taken effect
            transient = status in (500, 502, 503, 504, 429) if idempotent else (status == 429 and retry_after)
            if transient and attempt < self._retry.max_attempts and self._may_wait(deadline, attempt, retry_after):
                continue
            return HTTPResponse(status=status, headers={k.lower(): v for k, v in resp.headers.items()},
                                data=data, method=method, url=shown_url)

    def open_stream(self, path: str, *, read_timeout: float | None) -> tuple[Any, HTTPResponse | None]:
        """GET ``path`` and return its answer unread when it is a 200 (a WATCH: events arrive as the
        server sends them; the caller reads it with ``read1`` and closes it), else the answer read
        (bounded) as an :class:`HTTPResponse` for the error mapping. No retry (the caller reconnects
        with its own backoff), no gzip (the events must arrive one by one), no overall deadline (a
        watch lasts as long as the caller wants: ``read_timeout`` bounds each silence).
        :class:`Unreachable` when there is no answer."""
        url = self.server + path
        shown_url = url.split("?", 1)[0]
        h = HTTPHeaderDict(self._base_headers)
        h["Accept-Encoding"] = "identity"
        h.update(self._auth_headers())
        for key, value in self._extra_headers:
            h.add(key, value)
        self.requests_sent += 1
        started = time.monotonic()
        if self._verbosity >= 7:
            log_request("GET", url, h, None, self._verbosity)
        resp: Any = None
        try:
            resp = self._pool.urlopen("GET", url, headers=h, retries=False, redirect=False,
                                      timeout=urllib3.Timeout(connect=self._connect_timeout, read=read_timeout),
                                      preload_content=False, decode_content=False)
            if self._verbosity >= 6:
                log_response("GET", url, resp, b"", started, min(self._verbosity, 7))
            if int(resp.status) == 200:
                return resp, None
            data = read_body(resp, self._max_response_bytes, f"GET {shown_url}")
        except KubeError:
            discard(resp)
            raise
        except (HTTPError, OSError) as e:
            discard(resp)
            raise Unreachable(self.server, describe_connection_error(e, self._connect_timeout, read_timeout),
                              delivered=delivered(e, resp)) from None
        return None, HTTPResponse(status=int(resp.status), headers={k.lower(): v for k, v in resp.headers.items()},
                                  data=data, method="GET", url=shown_url)

    def _may_wait(self, deadline: Deadline, attempt: int, retry_after: str | None = None) -> bool:
        """Wait before the next attempt, unless the wait would outlast the request timeout."""
        delay = self._retry.delay(attempt, retry_after)
        left = deadline.remaining()
        if left is not None and delay >= left:
            return False
        self._sleep(delay)
        return True

