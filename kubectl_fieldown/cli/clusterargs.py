"""The cluster-selection flags of one invocation as one value (:class:`ClusterArgs`) and the cluster
layer's options made from them and kubectl's generic flags (:func:`cluster_options`).

Below :mod:`.options` (which declares the flags) and :mod:`.completion` (which reaches the cluster
with them while completing), so that neither imports the other; :mod:`.options` re-exports both
names. Importing this module does not import the cluster layer.
"""

from __future__ import annotations

from ..base.record import Record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Final

    from ..kube.client import ClusterOptions

__all__ = ["ClusterArgs", "cluster_options"]


class ClusterArgs(Record):
    """The cluster-selection flags of one invocation."""

    __slots__ = ("all_namespaces", "context", "kubeconfig", "namespace")
    kubeconfig: Final[str | None]
    context: Final[str | None]
    namespace: Final[str | None]
    all_namespaces: Final[bool]

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None,
                 all_namespaces: bool = False) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.namespace = namespace
        self.all_namespaces = all_namespaces


def cluster_options(args: ClusterArgs) -> ClusterOptions:
    """The cluster layer's options: these flags and kubectl's generic ones (:mod:`.globalflags`)."""
    from ..kube.client import ClusterOptions, ConnectionOverrides
    from .globalflags import current

    flags = current()
    timeouts: dict[str, float | None] = {}
    if flags.request_timeout is not None:
        # kubectl: one limit for the whole request; 0 means none
        limit = flags.request_timeout or None
        timeouts = {"connect_timeout": limit, "read_timeout": limit, "request_timeout": limit}
    overrides = ConnectionOverrides(
        server=flags.server, cluster=flags.cluster, user=flags.user, token=flags.token,
        certificate_authority=flags.certificate_authority, client_certificate=flags.client_certificate,
        client_key=flags.client_key, tls_server_name=flags.tls_server_name,
        insecure_skip_tls_verify=flags.insecure_skip_tls_verify, impersonate=flags.impersonate,
        impersonate_groups=flags.impersonate_groups, impersonate_uid=flags.impersonate_uid)
    return ClusterOptions(kubeconfig=args.kubeconfig, context=args.context, namespace=args.namespace,
                          overrides=overrides, verbosity=flags.verbosity, **timeouts)  # type: ignore[arg-type]
