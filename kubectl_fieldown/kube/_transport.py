"""Raw HTTP to the API server; kubeconfig loading is :mod:`._kubeconfig`'s (re-exported here). These two
are the only modules that import ``kubernetes`` and ``urllib3``.

Imported lazily by :class:`kubectl_fieldown.kube.client.ClusterClient` when a client is created,
because ``import kubernetes`` costs about half a second (its package ``__init__`` pulls in the
whole generated client, whichever submodule is asked for).

We use the official client for what is hard to get right — kubeconfig merging, exec
plugins, auth providers, in-cluster config — and then talk HTTP through a urllib3 pool of our
own, never through its model (de)serialisation, which is several times slower than
``json.loads`` on large LIST answers. Three things are done as kubectl does them rather than as
the Python client does:

* **Key material never touches the disk** (:mod:`._kubeconfig`). The Python client writes the CA, the client certificate
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

import re
import socket
import ssl
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import urllib3
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

from ._bounded import MAX_RESPONSE_BYTES, Deadline, delivered, discard, read_body, watch_connections
from ._httplog import log_request, log_response
from ._kubeconfig import (
    DEFAULT_KUBECONFIG,
    LoadedConfig,
    _release_key_material,
    _short,
    context_names,
    kubeconfig_paths,
    load_config,
)
from .credentials import bearer_header
from .errors import ConfigError, KubeError, Unreachable
from .types import HTTPResponse, RetryPolicy

__all__ = ["DEFAULT_KUBECONFIG", "LoadedConfig", "Transport", "context_names", "describe_connection_error",
           "kubeconfig_paths", "load_config"]


_SSL_SUFFIX = re.compile(r"\s*\(_ssl\.c:\d+\)")


def _tls_may_pass(e: BaseException) -> bool:
    """Whether a TLS failure may not happen again on a new connection: any but a certificate this
    client refuses (a wrong CA, a name mismatch: the same on every try). The lab's API server once
    sent a decode_error alert among tens of thousands of connections under load (a soak of the
    generated scenarios), and the next connection was fine: a read gets one more try, as a reset
    connection does (a write none: it may have been made)."""
    if not isinstance(e, SSLError | ssl.SSLError):
        return False
    cause = e if isinstance(e, ssl.SSLError) else e.__cause__ or (e.args[0] if e.args else None)
    return not isinstance(cause, ssl.SSLCertVerificationError)


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
                if idempotent and attempt == 1 and _tls_may_pass(e) and self._may_wait(deadline, attempt):
                    continue
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
