"""Which proxy a request to the API server goes through, decided as kubectl (client-go) decides it.

* The kubeconfig cluster's ``proxy-url`` wins, for every request (client-go ``rest.Config.Proxy``).
* Otherwise the environment, as Go's ``http.ProxyFromEnvironment`` (golang.org/x/net/http/httpproxy)
  reads it: ``HTTPS_PROXY`` for https servers and ``HTTP_PROXY`` for http ones (upper case before
  lower case; ``ALL_PROXY`` is not read), a value without a scheme meaning ``http://``. Never for
  ``localhost`` or a loopback address, whatever ``NO_PROXY`` says, and not for hosts that
  ``NO_PROXY`` names: ``*``; an IP address or CIDR block, with an optional port; a domain, which
  matches itself and its subdomains (``.example.com`` and ``*.example.com``: subdomains only).

The Python client sends loopback requests through ``HTTPS_PROXY`` unless ``NO_PROXY`` lists them,
and honours ``NO_PROXY`` even for a kubeconfig ``proxy-url``; kubectl does neither.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["proxy_for"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}


def proxy_for(server: str, environ: Mapping[str, str], kubeconfig_proxy: str | None = None) -> str | None:
    """The proxy URL for requests to ``server`` (an ``https://host:port`` URL), or None for none."""
    if kubeconfig_proxy:
        return _with_scheme(kubeconfig_proxy)
    url = urlsplit(server)
    scheme = url.scheme.lower()
    if scheme == "https":
        proxy = _env(environ, "HTTPS_PROXY", "https_proxy")
    elif scheme == "http":
        proxy = _env(environ, "HTTP_PROXY", "http_proxy")
    else:
        return None
    if not proxy:
        return None
    host = (url.hostname or "").lower()
    try:
        port = str(url.port or _DEFAULT_PORTS[scheme])
    except ValueError:
        return None
    if not _use_proxy(host, port, _env(environ, "NO_PROXY", "no_proxy")):
        return None
    return _with_scheme(proxy)


def _env(environ: Mapping[str, str], *names: str) -> str:
    for name in names:
        value = environ.get(name)
        if value:
            return value
    return ""


def _with_scheme(proxy: str) -> str:
    # Go: a value that does not parse with a scheme it knows is read as host[:port] over http
    scheme = proxy.split("://", 1)[0].lower() if "://" in proxy else ""
    return proxy if scheme in ("http", "https", "socks5") else "http://" + proxy


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def _use_proxy(host: str, port: str, no_proxy: str) -> bool:
    if not host or host == "localhost":
        return False
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return False
    for entry in no_proxy.split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return False
        if "/" in entry:
            try:
                if ip is not None and ip in ipaddress.ip_network(entry, strict=False):
                    return False
            except ValueError:
                pass
            continue
        entry_host, entry_port = _split_host_port(entry)
        if not entry_host:
            continue
        entry_ip = _ip(entry_host)
        if entry_ip is not None:
            if ip is not None and ip == entry_ip and entry_port in ("", port):
                return False
            continue
        if entry_host.startswith("*."):
            entry_host = entry_host[1:]
        subdomains_only = entry_host.startswith(".")
        suffix = entry_host if subdomains_only else "." + entry_host
        if (host.endswith(suffix) or (not subdomains_only and host == entry_host)) and entry_port in ("", port):
            return False
    return True


def _split_host_port(entry: str) -> tuple[str, str]:
    """``host:port``, ``[v6]:port`` or a bare host (an IPv6 address without brackets has no port)."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host, port
    return entry, ""
