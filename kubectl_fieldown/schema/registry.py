"""Where a kind's schema comes from, in order of trust.

1. Sources the user gave explicitly (``--schema FILE``: CRD manifests or OpenAPI documents),
   earliest first;
2. OpenAPI v3 documents the cluster served (added by the shell), earliest first;
3. the offline built-in schemas for the chosen Kubernetes version;
4. otherwise a deduced schema whose source says so — never an error for an unknown kind.

CRDs are converted when first needed, referencing the ObjectMeta of a cluster document if one was
added, else of the offline built-ins.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.record import Record
from .builtin import BuiltinSchemas, builtin_kinds, builtin_object_meta, normalize_version
from .crd import CRDSubresources, crd_name, crd_storage_version, crd_subresources, is_crd, kinds_from_crd
from .openapi import OBJECT_META, SchemaConverter, definitions_of, kinds_from_openapi_v3
from .types import DEDUCED, GroupVersionKind, KindSchema, Type


class SchemaFileError(ValueError):
    """A ``--schema`` file that holds nothing we can use; names the file and document."""


class _CRDSource(Record, mutable=True):
    __slots__ = ("all_versions", "kinds", "manifest", "origin")
    manifest: Mapping[str, Any]
    origin: str
    kinds: dict[GroupVersionKind, KindSchema] | None
    all_versions: dict[GroupVersionKind, Type] | None
    """Every listed version's root, served or not (:meth:`SchemaRegistry.crd_versions`)."""

    def __init__(
        self,
        manifest: Mapping[str, Any],
        origin: str,
        kinds: dict[GroupVersionKind, KindSchema] | None = None,
        all_versions: dict[GroupVersionKind, Type] | None = None,
    ) -> None:
        self.manifest = manifest
        self.origin = origin
        self.kinds = kinds
        self.all_versions = all_versions


class _OpenAPISource(Record, mutable=True):
    __slots__ = ("document", "kinds", "source")
    document: Mapping[str, Any]
    source: str
    kinds: dict[GroupVersionKind, KindSchema] | None

    def __init__(
        self,
        document: Mapping[str, Any],
        source: str,
        kinds: dict[GroupVersionKind, KindSchema] | None = None,
    ) -> None:
        self.document = document
        self.source = source
        self.kinds = kinds


@dataclass
class SchemaRegistry:
    """Answers :meth:`lookup` for any kind; see the module docstring for the order."""

    kube_version: str | None = None
    use_builtins: bool = True
    _explicit: list[_CRDSource | _OpenAPISource] = field(default_factory=list)
    _cluster: list[_OpenAPISource] = field(default_factory=list)
    _deduced: dict[GroupVersionKind, KindSchema] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # An unknown --kube-version is a usage error: report it now, not at the first lookup.
        if self.kube_version is not None and self.use_builtins:
            self.kube_version = normalize_version(self.kube_version)

    # --- adding sources ------------------------------------------------------------------------

    def add_crd(self, manifest: Mapping[str, Any], origin: str = "") -> None:
        """An explicitly given CustomResourceDefinition (v1 or v1beta1)."""
        if not is_crd(manifest):
            raise SchemaFileError(f"{origin or 'document'}: not a CustomResourceDefinition")
        self._explicit.append(_CRDSource(manifest, origin))

    def add_openapi(self, document: Mapping[str, Any], source: str) -> None:
        """An explicitly given OpenAPI v3 (or JSON-schema ``$defs``) document."""
        self._explicit.append(_OpenAPISource(document, source))

    def add_openapi_v3(self, document: Mapping[str, Any], source: str = "cluster OpenAPI v3") -> None:
        """A document the cluster served (``/openapi/v3/apis/<group>/<version>``)."""
        self._cluster.append(_OpenAPISource(document, source))

    def add_document(self, document: Any, origin: str) -> int:
        """A parsed ``--schema`` document, whichever kind it is; returns how many sources it gave."""
        if not isinstance(document, Mapping):
            return 0
        if is_crd(document):
            self.add_crd(document, origin)
            return 1
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
            return sum(self.add_document(item, origin) for item in document.get("items") or ())
        if definitions_of(document):
            self.add_openapi(document, origin)
            return 1
        return 0

    def add_file(self, path: str | Path) -> int:
        """Reads a ``--schema`` file (YAML or JSON, one or several documents): the one place this
        module does I/O. Raises :class:`SchemaFileError` when it holds no CRD or OpenAPI document."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        added = sum(self.add_document(doc, str(path)) for doc in _parse_documents(text, str(path)))
        if added == 0:
            raise SchemaFileError(
                f"{path}: no CustomResourceDefinition or OpenAPI document (components.schemas / $defs) found"
            )
        return added

    # --- answering -----------------------------------------------------------------------------

    def builtins(self) -> BuiltinSchemas | None:
        return builtin_kinds(self.kube_version) if self.use_builtins else None

    def lookup(self, gvk: GroupVersionKind) -> KindSchema:
        for source in self._explicit:
            found = self._kinds_of(source).get(gvk)
            if found is not None:
                return found
        for cluster in self._cluster:
            found = self._kinds_of(cluster).get(gvk)
            if found is not None:
                return found
        builtins = self.builtins()
        if builtins is not None:
            found = builtins.lookup(gvk)
            if found is not None:
                return found
        deduced = self._deduced.get(gvk)
        if deduced is None:
            deduced = KindSchema(gvk=gvk, root=DEDUCED, source=f"deduced: no schema known for {gvk}")
            self._deduced[gvk] = deduced
        return deduced

    def lookup_api_version(self, api_version: str, kind: str) -> KindSchema:
        return self.lookup(GroupVersionKind.from_api_version(api_version, kind))

    def for_object(self, obj: Mapping[str, Any]) -> KindSchema:
        """The schema of an object by its own ``apiVersion`` and ``kind``."""
        return self.lookup_api_version(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    def subresources(self, gvk: GroupVersionKind) -> CRDSubresources | None:
        """The subresources of a kind known from a CRD (``None`` for other kinds)."""
        for source in self._explicit:
            if isinstance(source, _CRDSource) and gvk in self._kinds_of(source):
                return crd_subresources(source.manifest, gvk.version)
        return None

    def crd_versions(self, gvk: GroupVersionKind) -> dict[str, Type]:
        """The root types of every version of ``gvk``'s kind in the CRD that answers for it, served
        or not (apiVersion → root); empty for a kind not known from a CRD."""
        for source in self._explicit:
            if isinstance(source, _CRDSource) and gvk in self._kinds_of(source):
                if source.all_versions is None:
                    every = kinds_from_crd(source.manifest, self._object_meta(), include_unserved=True)
                    source.all_versions = {k: ks.root for k, ks in every.items()}
                return {k.api_version: root for k, root in source.all_versions.items() if k.kind == gvk.kind}
        return {}

    def crd_storage_version(self, gvk: GroupVersionKind) -> str:
        """The apiVersion the CRD that answers for ``gvk`` stores objects at ("" when not a CRD)."""
        for source in self._explicit:
            if isinstance(source, _CRDSource) and gvk in self._kinds_of(source):
                return crd_storage_version(source.manifest)
        return ""

    def converts_by_renaming(self, gvk: GroupVersionKind) -> bool:
        """``gvk`` is a custom resource whose CRD converts between versions by renaming the
        apiVersion alone (conversion strategy None, the default)."""
        for source in self._explicit:
            if isinstance(source, _CRDSource) and gvk in self._kinds_of(source):
                spec = source.manifest.get("spec")
                conversion = spec.get("conversion") if isinstance(spec, Mapping) else None
                strategy = conversion.get("strategy") if isinstance(conversion, Mapping) else None
                return strategy in (None, "None")
        return False

    def known_kinds(self) -> dict[GroupVersionKind, str]:
        """Kinds from explicit and cluster sources, with the source that answers for each."""
        known: dict[GroupVersionKind, str] = {}
        for source in self._sources():
            for gvk, schema in self._kinds_of(source).items():
                known.setdefault(gvk, schema.source)
        return known

    def for_kinds(self, gvks: Iterable[GroupVersionKind]) -> dict[GroupVersionKind, KindSchema]:
        return {gvk: self.lookup(gvk) for gvk in gvks}

    def describe_sources(self) -> list[str]:
        """One line per source, in lookup order (for ``--verbose`` output)."""
        lines = [_describe(s) for s in self._explicit]
        lines.extend(c.source for c in self._cluster)
        if self.use_builtins:
            lines.append(f"offline built-ins ({self.builtins_source()})")
        lines.append("deduced (no schema)")
        return lines

    def builtins_source(self) -> str:
        builtins = self.builtins()
        return builtins.source if builtins is not None else "disabled"

    # --- internals -----------------------------------------------------------------------------

    def _sources(self) -> Iterator[_CRDSource | _OpenAPISource]:
        yield from self._explicit
        yield from self._cluster

    def _kinds_of(self, source: _CRDSource | _OpenAPISource) -> dict[GroupVersionKind, KindSchema]:
        if source.kinds is None:
            if isinstance(source, _CRDSource):
                source.kinds = kinds_from_crd(source.manifest, self._object_meta())
            else:
                source.kinds = kinds_from_openapi_v3(source.document, source.source)
        return source.kinds

    def _object_meta(self) -> Type:
        for source in self._cluster:
            definitions = definitions_of(source.document)
            if OBJECT_META in definitions:
                return SchemaConverter(definitions).named(OBJECT_META)
        return builtin_object_meta(self.kube_version if self.use_builtins else None)


def _describe(source: _CRDSource | _OpenAPISource) -> str:
    if isinstance(source, _OpenAPISource):
        return source.source
    name = f"CRD {crd_name(source.manifest)}"
    return f"{name} ({source.origin})" if source.origin else name


def _parse_documents(text: str, origin: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            pass
        else:
            return parsed if isinstance(parsed, list) else [parsed]
    # the reader of every other input file: bounded nesting and aliases, one-line errors
    from ..manifests.safeyaml import YAMLReadError, load_all

    try:
        return [doc for doc in load_all(text) if doc is not None]
    except YAMLReadError as e:
        raise SchemaFileError(f"{origin}: document {e.document}: {e}") from e
