"""The in-cluster configuration: a pod's service account, found and read as kubectl (client-go) does.

kubectl falls back to it when no kubeconfig is found (``--kubeconfig`` rules it out) and both
``KUBERNETES_SERVICE_HOST`` and ``KUBERNETES_SERVICE_PORT`` are set and non-empty and the token file
exists and is no directory (client-go's ``inClusterClientConfig.Possible``). Then:

* the server is ``https://HOST:PORT`` (an IPv6 host in brackets, ``net.JoinHostPort``);
* the bearer token is the ``token`` file, read again as it rotates (kubelet refreshes projected
  tokens) and trimmed (:mod:`kubectl_fieldown.kube.credentials`);
* the server's certificate is checked against ``ca.crt``;
* the default namespace is ``$POD_NAMESPACE``, else the ``namespace`` file (trimmed), else
  ``default`` (``inClusterClientConfig.Namespace``).

The files live in ``/var/run/secrets/kubernetes.io/serviceaccount``. **Test hook:** the environment
variable ``FIELDOWN_SERVICEACCOUNT_DIR`` names another directory holding ``token``, ``ca.crt`` and
``namespace`` (the tests simulate a pod on the lab server with it); nothing else reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..base.record import Record

__all__ = ["DIR_ENV", "SERVICE_ACCOUNT_DIR", "ServiceAccount", "pod_namespace", "possible", "service_account"]

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
DIR_ENV = "FIELDOWN_SERVICEACCOUNT_DIR"
HOST_ENV = "KUBERNETES_SERVICE_HOST"
PORT_ENV = "KUBERNETES_SERVICE_PORT"


class ServiceAccount(Record):
    """Where the pod's service account files are."""

    __slots__ = ("directory",)
    directory: Final[str]

    def __init__(self, directory: str) -> None:
        self.directory = directory

    @property
    def token(self) -> str:
        return os.path.join(self.directory, "token")

    @property
    def ca(self) -> str:
        return os.path.join(self.directory, "ca.crt")

    @property
    def namespace(self) -> str:
        return os.path.join(self.directory, "namespace")


def service_account(environ: Mapping[str, str] | None = None) -> ServiceAccount:
    env = os.environ if environ is None else environ
    return ServiceAccount(env.get(DIR_ENV) or SERVICE_ACCOUNT_DIR)


def possible(environ: Mapping[str, str] | None = None) -> bool:
    """client-go's ``Possible``: both variables set and non-empty, and the token a file."""
    env = os.environ if environ is None else environ
    if not env.get(HOST_ENV) or not env.get(PORT_ENV):
        return False
    token = Path(service_account(env).token)
    try:
        return token.exists() and not token.is_dir()
    except OSError:
        return False


def pod_namespace(environ: Mapping[str, str] | None = None) -> str | None:
    """``$POD_NAMESPACE``, else the service account's namespace file trimmed; None: neither (``default``)."""
    env = os.environ if environ is None else environ
    if env.get("POD_NAMESPACE"):
        return env["POD_NAMESPACE"]
    try:
        return Path(service_account(env).namespace).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None
