"""Kubeconfig loading: which files (``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``), their
contexts, kubectl's generic flags over them, the in-cluster service account, and the key material of
a kubeconfig kept in memory (never on disk). With :mod:`._transport` (raw HTTP over it), the only
modules that import ``kubernetes``: imported lazily, when a client is created (``import kubernetes``
costs about half a second), and only for what :mod:`._lightconfig` does not read itself (exec plugins,
auth providers, the in-cluster account, ...). :mod:`._transport` re-exports :func:`load_config` and
:func:`context_names`.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..base.record import Record
from ..base.yamlmodule import import_yaml
from . import _lightconfig, incluster
from .credentials import bearer_header
from .errors import ConfigError
from .proxy import proxy_for
from .types import ConnectionOverrides

SERVICE_NAMESPACE_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
DEFAULT_KUBECONFIG = "~/.kube/config"


class LoadedConfig(Record):
    """The result of reading kubeconfig (or the in-cluster service account)."""

    __slots__ = ("configuration", "context", "namespace", "proxy", "server", "source", "token_file", "token_origin")
    server: Final[str]
    context: Final[str | None]
    namespace: Final[str | None]  # the context's default namespace (None if it sets none)
    source: Final[str]  # "kubeconfig <paths>" or "in-cluster"
    configuration: Final[Any]  # kubernetes.client.Configuration (untyped library)
    proxy: Final[str | None]  # the proxy URL for this server, chosen as kubectl chooses it
    token_file: Final[str | None]  # the file the bearer token is read from (trimmed at every request)
    token_origin: Final[str]  # where an inline bearer token comes from, for errors

    def __init__(
        self,
        server: str,
        context: str | None,
        namespace: str | None,
        source: str,
        configuration: Any,
        proxy: str | None = None,
        token_file: str | None = None,
        token_origin: str = "the kubeconfig",
    ) -> None:
        self.server = server
        self.context = context
        self.namespace = namespace
        self.source = source
        self.configuration = configuration
        self.proxy = proxy
        self.token_file = token_file
        self.token_origin = token_origin


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


class _Library:
    """The kubernetes library's loaders, imported on first use (about 0.4 s of CPU); untyped, so
    given explicit Any types here."""

    def __init__(self) -> None:
        import_yaml()
        import yaml
        from kubernetes.client.configuration import Configuration
        from kubernetes.config import incluster_config, kube_config
        from kubernetes.config.config_exception import ConfigException

        self.Configuration: Any = Configuration
        self.kube_config: Any = kube_config
        self.KubeConfigMerger: Any = kube_config.KubeConfigMerger
        self.KubeConfigLoader: Any = kube_config.KubeConfigLoader
        self.InClusterConfigLoader: Any = incluster_config.InClusterConfigLoader
        self.read_errors: tuple[type[BaseException], ...] = (ConfigException, yaml.YAMLError, OSError)
        self.ConfigException: type[Exception] = ConfigException


_library: _Library | None = None


def library() -> _Library:
    global _library
    if _library is None:
        _library = _Library()
    return _library


def context_names(kubeconfig: str | None) -> list[str]:
    """The context names of the kubeconfig files kubectl would merge, in their order."""
    paths, _ = kubeconfig_paths(kubeconfig)
    if not paths:
        return []
    with contextlib.suppress(_lightconfig.Unsupported):
        return _lightconfig.merged_context_names(paths)
    lib = library()
    try:
        merger = lib.KubeConfigMerger(os.pathsep.join(paths))
    except lib.read_errors as e:
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
    library().kube_config._create_temp_file_with_content = _credential_file


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
                                            configuration=library().Configuration()), flags)
        where = f"KUBECONFIG={os.environ['KUBECONFIG']}" if os.environ.get("KUBECONFIG") else DEFAULT_KUBECONFIG
        raise ConfigError(f"no kubeconfig found ({where}: no such file) and not running in a pod; "
                          "use --kubeconfig or set KUBECONFIG")
    if not flags.cluster and not flags.user:
        with contextlib.suppress(_lightconfig.Unsupported):
            return _load_light(paths, context, flags)
    lib = library()
    try:
        merger = lib.KubeConfigMerger(os.pathsep.join(paths))
    except lib.read_errors as e:
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
    cfg = lib.Configuration()
    _keep_key_material_in_memory()
    try:
        with _captured_log() as logged:
            loader = lib.KubeConfigLoader(config_dict=merger.config, active_context=name, config_base_path=None)
            loader.load_and_set(cfg)
    except (lib.ConfigException, OSError, ValueError, KeyError) as e:
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


def _load_light(paths: list[str], context: str | None, flags: ConnectionOverrides) -> LoadedConfig:
    """:func:`load_config` for a kubeconfig :mod:`._lightconfig` reads (the same result, without
    importing ``kubernetes``); :class:`._lightconfig.Unsupported` for the others."""
    light, name = _lightconfig.load(paths, context, _credential_file)
    cfg = light.configuration
    user = light.user
    token_file = str(user["tokenFile"]) if user is not None and user.get("tokenFile") and not user.get("token") \
        else None
    token_origin = f'the user of context "{name}"'
    where = os.pathsep.join(paths)
    try:
        if cfg.api_key.get("BearerToken"):
            bearer_header(str(cfg.api_key["BearerToken"]), token_file=token_file, where=token_origin)
    except ConfigError:
        _release_key_material(cfg)
        raise
    server = str(cfg.host).rstrip("/")
    kubeconfig_proxy = light.cluster.get("proxy-url")
    return _overridden(
        LoadedConfig(server=server, context=name, namespace=light.context.get("namespace") or None,
                     source=f"kubeconfig {where}", configuration=cfg,
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
        loaded = loaded.replace(token_file=None, token_origin="--token")
    if server == loaded.server:
        return loaded
    return loaded.replace(server=server, proxy=proxy_for(server, os.environ, kubeconfig_proxy))


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
    lib = library()
    cfg = lib.Configuration()
    account = incluster.service_account()
    try:
        lib.InClusterConfigLoader(token_filename=account.token, cert_filename=account.ca).load_and_set(cfg)
    except (lib.ConfigException, OSError) as e:
        raise ConfigError(f"cannot use the in-cluster service account ({account.directory}): {_short(e)}") from None
    server = str(cfg.host).rstrip("/")
    return LoadedConfig(server=server, context=None, namespace=incluster.pod_namespace(), source="in-cluster",
                        configuration=cfg, proxy=proxy_for(server, os.environ), token_file=account.token)


def _short(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
