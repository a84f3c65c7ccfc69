"""Where a kind's schema and merge rules come from: one order for every command.

``conflicts``, ``audit`` and the write commands used to look schemas up in three different orders
(OpenAPI then CRD, CRD then OpenAPI, OpenAPI only) and told built-in kinds apart in two ways, so
one kind could merge differently in two commands. They all ask :class:`KindRules` now. The first
source that knows the kind wins:

1. ``--schema`` files (CRD manifests or OpenAPI documents the user gave);
2. for a custom resource (a kind in a named group that is not built in): its CRD as the cluster
   serves it — the structural schema the API server builds the resource's merge rules from;
3. the cluster's OpenAPI v3 document of the group-version (disk cached): built-in kinds,
   aggregated APIs, and custom resources whose CRD cannot be read (no right to read CRDs);
4. the offline built-in schemas (``--kube-version``);
5. a deduced schema, whose source says so and why (every list atomic): each command decides
   whether it may work with one.

A built-in kind (held by the API server as Go structs: zero values, no null validation of
custom resources) is one the offline built-ins or the Go round trip know, unless a ``--schema``
CRD defines it.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..schema.registry import SchemaRegistry
from ..schema.types import GroupVersionKind, KindSchema, Type

if TYPE_CHECKING:
    from ..fieldmanager import ResourceRules
    from .client import ClusterClient
    from .crdreader import CrdReader
    from .discovery import ResourceInfo

__all__ = ["KindRules", "rules_for"]


def _gotypes() -> Any:
    """:mod:`kubectl_fieldown.schema.gotypes` (the built-in kinds' Go round trip), if installed."""
    try:
        return importlib.import_module("kubectl_fieldown.schema.gotypes")
    except ImportError:
        return None


def rules_for(schema: KindSchema, status_subresource: bool, builtin: bool,
              versions: Mapping[str, Type] | None = None, storage_version: str = "") -> ResourceRules:
    """The engine's rules for a kind: a built-in kind also gets its Go zero values and round trip;
    a custom resource the schemas of its CRD's other versions (``versions``, apiVersion → root:
    the server reads each managedFields entry at its own version) and its storage version."""
    from ..fieldmanager import ResourceRules

    if not builtin:
        return ResourceRules.for_kind(schema, status_subresource, versions=versions,
                                      storage_version=storage_version)
    gotypes = _gotypes()
    normalize = None
    if gotypes is not None:
        normalize = gotypes.normalizer_for(schema.gvk.api_version, schema.gvk.kind)
        schema = gotypes.with_builtin_zero(schema)
    return ResourceRules.for_kind(schema, status_subresource, normalize=normalize, custom_resource=False)


class KindRules:
    """The schema lookups of one invocation, in the order of the module docstring. ``registry``
    holds the ``--schema`` files (and the offline built-ins); without a ``client`` only those."""

    def __init__(self, registry: SchemaRegistry | None = None, client: ClusterClient | None = None,
                 crds: CrdReader | None = None) -> None:
        self.registry = registry if registry is not None else SchemaRegistry()
        self.client = client
        # the client's CRDs, each read once (given: the ones a LIST's threads read ahead; else made on
        # the first CRD this needs)
        self.crds = crds
        # before any cluster document is added, the registry knows exactly the --schema kinds
        self._explicit = frozenset(self.registry.known_kinds())
        self._asked: set[GroupVersionKind] = set()
        self._openapi_fetched: set[str] = set()
        self._notes: dict[str, str] = {}  # api_version -> why the cluster had no schema

    def lookup(self, gvk: GroupVersionKind, res: ResourceInfo | None = None) -> KindSchema:
        """``gvk``'s schema; ``res`` (its discovery entry) names the CRD of a custom resource."""
        if self.client is not None and gvk not in self._explicit and gvk not in self._asked:
            self._asked.add(gvk)
            self._from_cluster(gvk, res)
        schema = self.registry.lookup(gvk)
        if not schema.resource and res is not None and res.resource:
            schema = dataclasses.replace(schema, resource=res.resource)
        note = self._notes.get(gvk.api_version)
        if schema.deduced and note:
            schema = dataclasses.replace(schema, source=f"{schema.source} ({note})")
        return schema

    def lookup_api_version(self, api_version: str, kind: str, res: ResourceInfo | None = None) -> KindSchema:
        return self.lookup(GroupVersionKind.from_api_version(api_version, kind), res)

    def is_builtin(self, gvk: GroupVersionKind) -> bool:
        """A kind the API server holds as Go structs (zero values, no CRD null validation)."""
        if self.registry.subresources(gvk) is not None:
            return False  # a CRD given with --schema
        if not gvk.in_builtin_group:
            return False
        gotypes = _gotypes()
        if gotypes is not None and gotypes.normalizer_for(gvk.api_version, gvk.kind) is not None:
            return True
        from ..schema.builtin import BuiltinSchemaError

        try:
            builtins = self.registry.builtins()
        except BuiltinSchemaError:
            return False
        return builtins is not None and builtins.definition_name(gvk) is not None

    def rules(self, gvk: GroupVersionKind, status_subresource: bool,
              res: ResourceInfo | None = None) -> ResourceRules:
        return rules_for(self.lookup(gvk, res), status_subresource, self.is_builtin(gvk), self.versions(gvk),
                         self.registry.crd_storage_version(gvk))

    def converts_by_renaming(self, gvk: GroupVersionKind) -> bool:
        """A custom resource whose CRD converts by renaming the apiVersion (strategy None)."""
        return self.registry.converts_by_renaming(gvk)

    def versions(self, gvk: GroupVersionKind) -> dict[str, Type]:
        """The schemas of every version of ``gvk``'s CRD (after :meth:`lookup`; empty for other kinds)."""
        return self.registry.crd_versions(gvk)

    # -- the cluster's sources ----------------------------------------------------------------

    def _from_cluster(self, gvk: GroupVersionKind, res: ResourceInfo | None) -> None:
        if gvk.group and res is not None and not self.is_builtin(gvk) and self._add_crd(gvk, res):
            return
        self._add_openapi(gvk)

    def _add_crd(self, gvk: GroupVersionKind, res: ResourceInfo) -> bool:
        from .crdreader import CrdReader, crd_name
        from .errors import KubeError, is_fatal

        assert self.client is not None
        try:
            if self.crds is None:
                crds = self.client.discovery.resolve_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
                self.crds = CrdReader(self.client, crds)
            crd = self.crds.read(crd_name(res))
        except KubeError as e:
            if is_fatal(e):
                raise
            return False  # an aggregated API, or no right to read CRDs: the OpenAPI document
        self.registry.add_crd(crd, "from the cluster")
        return gvk in self.registry.known_kinds()

    def _add_openapi(self, gvk: GroupVersionKind) -> None:
        from .errors import KubeError, is_fatal

        assert self.client is not None
        if gvk.api_version in self._openapi_fetched:
            return
        self._openapi_fetched.add(gvk.api_version)
        try:
            doc = self.client.openapi.document(gvk.api_version)
        except KubeError as e:
            if is_fatal(e):
                raise
            self._notes[gvk.api_version] = f"cluster OpenAPI v3: {e}"
            return
        self.registry.add_openapi_v3(doc, f"cluster OpenAPI v3 ({gvk.api_version})")
