"""Kubeconfig files read without the ``kubernetes`` package, for the kubeconfigs most people have.

``import kubernetes`` costs about 0.4 s of CPU (its package ``__init__`` loads the whole generated
client, pydantic and requests with it): about half the CPU of a whole ``audit`` of 10,000 objects.
A kubeconfig whose context uses a client certificate, a bearer token (``token``, ``tokenFile``) or
nothing, with a server, CA, ``insecure-skip-tls-verify``, ``tls-server-name`` and ``proxy-url``,
needs none of it (their ``extensions``, minikube's for one, are ignored, as the library ignores them).
:func:`load` reads such a kubeconfig into a :class:`LightConfiguration`
with what the library's ``KubeConfigMerger`` + ``KubeConfigLoader`` would have set, attribute for
attribute; anything else (exec plugins, auth providers, basic auth, ``--cluster``/``--user``,
an unknown key, an entry that is not well-formed, a file that does not parse, data that does not
decode) is :class:`Unsupported`, and :mod:`._kubeconfig` hands the files to the library as before,
so that its behaviour and its error messages stay what they were.

The library's rules kept here: files merged in order, the first cluster, context and user of each
name winning; ``current-context`` from the first file that sets it (as kubectl, see
:func:`._kubeconfig.load_config`); relative paths against the directory of the file the entry
comes from (the user's certificate and key: the cluster's file, a quirk of the library);
``*-data`` preferred to the file whenever the key is there; the CA and the client
certificate and key only for an ``https`` server; the server without trailing slashes.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ..base.record import Record
from ..base.yamlmodule import import_yaml

__all__ = ["Light", "LightConfiguration", "Unsupported", "load", "merged_context_names"]

_CLUSTER_KEYS = frozenset({"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify",
                           "tls-server-name", "proxy-url"})
_USER_KEYS = frozenset({"client-certificate", "client-certificate-data", "client-key", "client-key-data", "token",
                        "tokenFile"})
_CONTEXT_KEYS = frozenset({"cluster", "user", "namespace"})


class Unsupported(Exception):
    """Not a kubeconfig this module reads: the library reads it."""


class LightConfiguration:
    """The attributes of ``kubernetes.client.Configuration`` that the transport and the flags use,
    with the library's defaults, and its ``auth_settings``. No ``refresh_api_key_hook``: for the
    kubeconfigs read here the library's hook only sets the same token again (it reloads nothing
    without an exec plugin's or an auth provider's expiry), and ``auth_settings`` answers alike."""

    def __init__(self) -> None:
        self.host = "http://localhost"
        self.ssl_ca_cert: str | None = None
        self.ca_cert_data: str | None = None
        self.cert_file: str | None = None
        self.key_file: str | None = None
        self.verify_ssl = True
        self.tls_server_name: str | None = None
        self.assert_hostname: bool | None = None
        self.proxy: str | None = None
        self.proxy_headers: dict[str, str] | None = None
        # the library's default: multiprocessing.cpu_count() * 5
        self.connection_pool_maxsize = (os.cpu_count() or 1) * 5
        self.api_key: dict[str, str] = {}
        self.api_key_prefix: dict[str, str] = {}
        self.refresh_api_key_hook: Callable[[Any], None] | None = None
        self.username: str | None = None
        self.password: str | None = None

    def get_api_key_with_prefix(self, identifier: str, alias: str | None = None) -> str | None:
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        key = self.api_key.get(identifier, self.api_key.get(alias) if alias is not None else None)
        if not key:
            return None
        prefix = self.api_key_prefix.get(identifier, self.api_key_prefix.get(alias) if alias is not None else None)
        return f"{prefix} {key}" if prefix else key

    def auth_settings(self) -> dict[str, dict[str, Any]]:
        if "BearerToken" in self.api_key or "authorization" in self.api_key:
            return {"BearerToken": {"type": "api_key", "in": "header", "key": "authorization",
                                    "value": self.get_api_key_with_prefix("BearerToken", alias="authorization")}}
        return {}


class Light(Record):
    """A kubeconfig read: the configuration, and the context's entries as the library has them."""

    __slots__ = ("cluster", "configuration", "context", "user")
    configuration: Final[LightConfiguration]
    context: Final[Mapping[str, Any]]
    user: Final[Mapping[str, Any] | None]
    cluster: Final[Mapping[str, Any]]

    def __init__(
        self,
        configuration: LightConfiguration,
        context: Mapping[str, Any],
        user: Mapping[str, Any] | None,
        cluster: Mapping[str, Any],
    ) -> None:
        self.configuration = configuration
        self.context = context
        self.user = user
        self.cluster = cluster


class _Entry(Record):
    __slots__ = ("path", "value")
    value: Final[Mapping[str, Any]]  # the inner mapping ("cluster", "context" or "user")
    path: Final[str]  # the file it comes from

    def __init__(self, value: Mapping[str, Any], path: str) -> None:
        self.value = value
        self.path = path


def _read(path: str) -> dict[str, Any]:
    import_yaml()
    import yaml

    try:
        # exactly as the library's merger reads it (text in the locale's encoding, PyYAML's own
        # SafeLoader): libyaml's CSafeLoader accepts some texts the pure loader refuses
        with open(path) as f:
            doc = yaml.safe_load(f)
    except Exception as e:  # the library reports it, in its words
        raise Unsupported(str(e)) from None
    if not isinstance(doc, dict):
        raise Unsupported("not a mapping")
    return doc


def _merge(docs: Sequence[tuple[str, dict[str, Any]]]) -> tuple[dict[str, dict[str, _Entry]], str]:
    """The entries by kind and name (the first of each name) and the current context (the first set)."""
    merged: dict[str, dict[str, _Entry]] = {"clusters": {}, "contexts": {}, "users": {}}
    current = ""
    for path, doc in docs:
        for kind, inner in (("clusters", "cluster"), ("contexts", "context"), ("users", "user")):
            items = doc.get(kind) or []
            if not isinstance(items, list):
                raise Unsupported(f"{kind} is not a list")
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                    raise Unsupported(f"an entry of {kind} without a name")  # (context_names skips those)
                value = item.get(inner)
                if not isinstance(value, dict):
                    raise Unsupported(f"{kind} {item['name']}: no {inner}")
                merged[kind].setdefault(item["name"], _Entry(value, path))
        if not current and doc.get("current-context"):
            current = doc["current-context"]
            if not isinstance(current, str):
                raise Unsupported("current-context is not a string")
    return merged, current


def merged_context_names(paths: Sequence[str]) -> list[str]:
    """The context names of ``paths``, in kubectl's order."""
    merged, _ = _merge([(p, _read(p)) for p in paths])
    return list(merged["contexts"])


def _strings(entry: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    for key, value in entry.items():
        if key == "extensions" and what != "user":
            continue  # minikube's, for instance: the library reads nothing of them either
        if key not in allowed:
            raise Unsupported(f"{what}: {key}")
        if key == "insecure-skip-tls-verify":
            if not isinstance(value, bool):
                raise Unsupported(f"{what}: {key} is not a boolean")
        elif not isinstance(value, str) or not value:
            raise Unsupported(f"{what}: {key} is not a string")


def _file_or_data(entry: _Entry, key: str) -> bytes | str | None:
    """The library's ``FileOrData(...).as_file()`` before anything is written: the decoded bytes of
    ``key-data`` (base64), else the path of ``key`` (which must exist), else None."""
    data = entry.value.get(f"{key}-data")
    if data is not None:
        try:
            return base64.standard_b64decode(data.encode())
        except (binascii.Error, ValueError):
            raise Unsupported(f"{key}-data does not decode") from None
    name = entry.value.get(key)
    if name is None:
        return None
    path = os.path.normpath(os.path.join(os.path.abspath(os.path.dirname(entry.path)), name))
    if not os.path.isfile(path):
        raise Unsupported(f"{key}: no such file")  # the library's error names it
    return path


def load(paths: Sequence[str], context: str | None, credential_file: Callable[[bytes], str]) -> tuple[Light, str]:
    """The kubeconfig files ``paths`` with ``context`` (else the current one): the configuration and
    the context's name. Raises :class:`Unsupported` for anything the library must read."""
    merged, current = _merge([(p, _read(p)) for p in paths])
    name = context or current
    ctx = merged["contexts"].get(name)
    if not name or ctx is None:
        raise Unsupported("no such context")  # _kubeconfig reports it
    _strings(ctx.value, _CONTEXT_KEYS, "context")
    if "cluster" not in ctx.value:
        raise Unsupported("a context without a cluster")  # the library's error
    cluster = merged["clusters"].get(ctx.value["cluster"])
    user = merged["users"].get(str(ctx.value["user"])) if "user" in ctx.value else None
    if cluster is None or ("user" in ctx.value and user is None):
        raise Unsupported("the context's cluster or user is missing")
    _strings(cluster.value, _CLUSTER_KEYS, "cluster")
    if user is not None:
        _strings(user.value, _USER_KEYS, "user")
    if "server" not in cluster.value:
        raise Unsupported("no server")
    cfg = LightConfiguration()
    # the library's order: authentication, then the cluster (files are only checked, nothing is written yet)
    if user is not None:
        token = user.value.get("token")
        if token is None and "tokenFile" in user.value:
            token_path = os.path.normpath(os.path.join(os.path.abspath(os.path.dirname(user.path)),
                                                       user.value["tokenFile"]))
            try:
                with open(token_path) as f:
                    token = f.read()
            except (OSError, ValueError):
                raise Unsupported("tokenFile cannot be read") from None
        if token:
            cfg.api_key["BearerToken"] = f"Bearer {token}"
    cfg.host = cluster.value["server"].rstrip("/")
    if cfg.host.startswith("https"):
        files = [(cluster, "certificate-authority", "ssl_ca_cert")]
        if user is not None:
            # the library resolves the user's relative files against the directory of the file the
            # *cluster* comes from (not the user's own, as kubectl would): so do we
            in_cluster_dir = _Entry(user.value, cluster.path)
            files += [(in_cluster_dir, "client-certificate", "cert_file"), (in_cluster_dir, "client-key", "key_file")]
        # everything is checked before any key material is written
        found = [(attr, _file_or_data(entry, key)) for entry, key, attr in files]
        for attr, value in found:
            setattr(cfg, attr, credential_file(value) if isinstance(value, bytes) else value)
    if "insecure-skip-tls-verify" in cluster.value:
        cfg.verify_ssl = not cluster.value["insecure-skip-tls-verify"]
    if "tls-server-name" in cluster.value:
        cfg.tls_server_name = cluster.value["tls-server-name"]
    if "proxy-url" in cluster.value:
        cfg.proxy = cluster.value["proxy-url"]
    return Light(cfg, ctx.value, None if user is None else user.value, cluster.value), name
