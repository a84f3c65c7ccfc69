"""Kubeconfig loading and raw HTTP: the only module that imports ``kubernetes`` and ``urllib3``.

Imported lazily by :class:`kubectl_fieldown.kube.client.ClusterClient` when a client is created,
because ``import kubernetes`` costs about half a second (its package ``__init__`` pulls in the
whole generated client, whichever submodule is asked for).

We use the official client for what is hard to get right — kubeconfig merging, exec
plugins, auth providers, client certificates, CA data, proxies, in-cluster config — and then
talk HTTP through the urllib3 pool it configured, never through its model (de)serialisation,
which is several times slower than ``json.loads`` on large LIST answers.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml
from kubernetes.client.configuration import Configuration
from kubernetes.client.rest import RESTClientObject
from kubernetes.config import incluster_config as _incluster
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)

from .client import HTTPResponse, RetryPolicy
from .errors import ConfigError, Unreachable

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


def kubeconfig_paths(explicit: str | None) -> tuple[list[str], bool]:
    """The kubeconfig files to merge, like kubectl: ``--kubeconfig`` (must exist), else every
    existing file of ``$KUBECONFIG``, else ``~/.kube/config`` if it exists. The flag is True for
    ``--kubeconfig``, which (as in client-go) rules out the in-cluster fallback."""
    if explicit:
        path = os.path.expanduser(explicit)
        if not os.path.isfile(path):
            raise ConfigError(f"kubeconfig {explicit}: no such file")
        return [path], True
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
        return [p for p in paths if os.path.isfile(p)], False
    default = os.path.expanduser(DEFAULT_KUBECONFIG)
    return ([default] if os.path.isfile(default) else []), False


def _node_value(node: Any) -> Any:
    return getattr(node, "value", node)


def load_config(kubeconfig: str | None, context: str | None) -> LoadedConfig:
    paths, explicit = kubeconfig_paths(kubeconfig)
    if not paths:
        if not explicit and os.environ.get(SERVICE_HOST_ENV_NAME) and os.path.isfile(SERVICE_TOKEN_FILENAME):
            if context:
                raise ConfigError(f'context "{context}" does not exist: no kubeconfig found (running in a pod)')
            return _load_in_cluster()
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
    cfg = Configuration()
    try:
        with _captured_log() as logged:
            loader = KubeConfigLoader(config_dict=merger.config, active_context=name, config_base_path=None)
            loader.load_and_set(cfg)
    except (ConfigException, OSError, ValueError, KeyError) as e:
        raise ConfigError(f'cannot use context "{name}" of kubeconfig {os.pathsep.join(paths)}: {_short(e)}') from None
    user = _node_value(getattr(loader, "_user", None)) or {}
    if isinstance(user, Mapping) and "exec" in user and not cfg.api_key.get("BearerToken") and not cfg.cert_file:
        # the library logs a failing credential plugin and carries on without credentials,
        # which would surface later as a baffling 401/403
        command = _node_value(user["exec"]).get("command", "?")
        why = "; ".join(logged) or "no token or client certificate in its output"
        raise ConfigError(f'the credential plugin "{command}" of context "{name}" failed: {why}')
    ctx = loader.current_context.get("context") or {}
    namespace = ctx.get("namespace") or None
    return LoadedConfig(server=str(cfg.host).rstrip("/"), context=name, namespace=namespace,
                        source=f"kubeconfig {os.pathsep.join(paths)}", configuration=cfg)


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
    cfg = Configuration()
    try:
        InClusterConfigLoader(token_filename=SERVICE_TOKEN_FILENAME,
                              cert_filename=SERVICE_CERT_FILENAME).load_and_set(cfg)
    except ConfigException as e:
        raise ConfigError(f"cannot use the in-cluster service account: {_short(e)}") from None
    try:
        namespace: str | None = Path(SERVICE_NAMESPACE_FILENAME).read_text().strip() or None
    except OSError:
        namespace = None
    return LoadedConfig(server=str(cfg.host).rstrip("/"), context=None, namespace=namespace,
                        source="in-cluster", configuration=cfg)


def _short(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


_SSL_SUFFIX = re.compile(r"\s*\(_ssl\.c:\d+\)")


def describe_connection_error(e: BaseException, connect_timeout: float, read_timeout: float) -> str:
    """A short reason for :class:`Unreachable`: what failed, not urllib3's nesting.

    Order matters: urllib3 2 makes NewConnectionError a subclass of ConnectTimeoutError."""
    if isinstance(e, ReadTimeoutError):
        return f"no answer within {read_timeout:g}s (read timeout)"
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
            return f"no connection within {connect_timeout:g}s (timeout)"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[0].lower() + cause.strerror[1:]
        return _short(cause or e)
    if isinstance(e, ConnectTimeoutError):
        return f"no connection within {connect_timeout:g}s (timeout)"
    if isinstance(e, ProtocolError):
        inner = e.args[1] if len(e.args) > 1 else None
        if isinstance(inner, ConnectionResetError):
            return "connection reset by the server"
        return f"connection closed by the server ({_short(inner) if inner else _short(e)})"
    if isinstance(e, ssl.SSLError):
        return "TLS error: " + _SSL_SUFFIX.sub("", str(e))
    return _short(e)


class Transport:
    """HTTP to one API server through the official client's configured urllib3 pool."""

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        connect_timeout: float,
        read_timeout: float,
        user_agent: str,
        retry: RetryPolicy,
        gzip: bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.loaded = loaded
        self.server = loaded.server
        self._cfg = loaded.configuration
        self._pool = RESTClientObject(self._cfg).pool_manager
        self._timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._retry = retry
        self._sleep = sleep
        self._base_headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if gzip:
            # the server compresses large answers only when asked; LISTs shrink about 10x
            self._base_headers["Accept-Encoding"] = "gzip"
        self.requests_sent = 0

    def close(self) -> None:
        self._pool.clear()

    def _auth_headers(self) -> dict[str, str]:
        # auth_settings() runs the refresh hook, so expiring exec-plugin tokens are renewed
        out: dict[str, str] = {}
        for setting in self._cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                out[str(setting["key"])] = str(setting["value"])
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
        doing anything). Raises :class:`Unreachable` when there is no HTTP answer."""
        url = self.server + path
        h = dict(self._base_headers)
        h.update(self._auth_headers())
        if headers:
            h.update(headers)
        attempt = 0
        while True:
            attempt += 1
            self.requests_sent += 1
            try:
                resp = self._pool.urlopen(method, url, body=body, headers=h, retries=False, redirect=False,
                                          timeout=self._timeout, preload_content=True, decode_content=True)
            except ProtocolError as e:
                if idempotent and attempt < self._retry.max_attempts:
                    self._sleep(self._retry.delay(attempt))
                    continue
                raise Unreachable(self.server, describe_connection_error(e, self._connect_timeout,
                                                                         self._read_timeout)) from None
            except (HTTPError, OSError) as e:
                raise Unreachable(self.server, describe_connection_error(e, self._connect_timeout,
                                                                         self._read_timeout)) from None
            status = int(resp.status)
            retry_after = resp.headers.get("Retry-After")
            # a 429 with Retry-After (API priority and fairness) was rejected before any effect,
            # so even a write may be sent again; 5xx after a write may have taken effect
            transient = status in (500, 502, 503, 504, 429) if idempotent else (status == 429 and retry_after)
            if transient and attempt < self._retry.max_attempts:
                self._sleep(self._retry.delay(attempt, retry_after))
                continue
            return HTTPResponse(status=status, headers={k.lower(): v for k, v in resp.headers.items()},
                            data=bytes(resp.data or b""))
