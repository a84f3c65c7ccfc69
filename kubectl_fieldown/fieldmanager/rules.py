"""What the server knows about a resource beyond its schema (:class:`ResourceRules`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..fieldpath import EMPTY, FieldSet, path_from_fields
from ..schema.types import KindSchema, Type
from .jsondata import copy_json

Converter = Callable[[dict[str, Any], str], dict[str, Any]]
"""An object (with its ``apiVersion``) as it reads at another version: the server's conversion,
which structured-merge-diff's ``Converter`` does for the field manager."""


class ConversionError(Exception):
    """The object cannot be converted to a version (the server's converter failed)."""


class MissingVersion(ConversionError):
    """The converter does not know the version (SMD ``IsMissingVersionError``): an entry recorded at
    it is dropped instead of failing the write."""


def rename_version(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """Conversion ``None`` (what a CRD without a conversion webhook does): only the apiVersion changes."""
    if type(obj) is not dict or obj.get("apiVersion") == version:
        return obj
    return {**obj, "apiVersion": version}


@dataclass(frozen=True)
class ResourceRules:
    """What the server needs to know about a resource beyond its schema.

    ``reset_fields`` maps an endpoint ("" for the main resource, "status") to the fields that a
    write through it never changes or owns (the main endpoint resets ``status`` when a status
    subresource exists; the status endpoint resets ``spec``).
    """

    schema: KindSchema
    reset_fields: Mapping[str, FieldSet] = field(default_factory=dict)
    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """For built-in kinds: the object as the server's Go types would hold it (zero values of
    non-omitempty fields, non-pointer structs as ``{}``). None for custom resources."""
    custom_resource: bool = True
    """Custom resources go through the CRD validator: nulls the schema does not allow, repeated set
    items and list-map keys, and the schema's value constraints (typed.constraints; not CEL rules).
    Built-in kinds are validated by Go code we do not reproduce."""
    versions: Mapping[str, Type] = field(default_factory=dict)
    """The root types of the kind's versions (apiVersion → root), for a custom resource served
    at several versions with conversion None: the server reconciles, compares and prunes each
    managedFields entry at the entry's own version, with that version's schema (the object itself
    converts by renaming its apiVersion). An entry of a version not listed is read with this
    version's schema."""
    converter: Converter | None = None
    """How an object converts between the kind's versions; None: as with conversion None
    (:func:`rename_version`). Structured-merge-diff's test converters plug in here
    (tests/engine/smd_upstream.py); it may raise :class:`ConversionError` or :class:`MissingVersion`."""
    ignored_at_versions: Mapping[str, FieldSet] | None = None
    """SMD's ``IgnoredFields`` by version, in place of the reset fields (its tests give several
    versions). A CRD's main endpoint passes its reset fields at the request's version only: an
    entry recorded at another version is compared with nothing left out (a status writer's entry
    at another version conflicts with a main-resource apply that carries status); its status
    endpoint passes them at every version (:meth:`ignored`)."""
    storage_version: str = ""
    """The version a custom resource is stored at (its CRD's storage version), when its versions
    are known: a field the storage version's schema does not declare does not survive a write."""
    defaults_objects: bool = True
    """The server defaults the object (the schema's ``default``s) before the field manager sees it, as
    the API server does; False plays structured-merge-diff alone, where a default only completes a
    list item's key (its own test suites run so, tests/engine/test_smd_upstream.py)."""

    @classmethod
    def for_kind(
        cls,
        schema: KindSchema,
        status_subresource: bool,
        normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        custom_resource: bool = True,
        versions: Mapping[str, Type] | None = None,
        storage_version: str = "",
    ) -> ResourceRules:
        reset: dict[str, FieldSet] = {}
        if status_subresource:
            status_reset = [path_from_fields("spec")]
            if custom_resource:
                # apiextensions statusStrategy.GetResetFields: a status write keeps nothing but status
                status_reset = [path_from_fields(f) for f in ("apiVersion", "kind", "metadata", "spec")]
            reset = {"": FieldSet([path_from_fields("status")]), "status": FieldSet(status_reset)}
        return cls(schema, reset, normalize, custom_resource, dict(versions or {}),
                   storage_version=storage_version)

    # read at every step of every write played: worked out once (the schema is not replaced)
    @functools.cached_property
    def api_version(self) -> str:
        return self.schema.gvk.api_version

    @functools.cached_property
    def root(self) -> Type:
        return self.schema.root

    def root_at(self, api_version: str) -> Type:
        """The schema an entry recorded at ``api_version`` is read with."""
        if api_version == self.api_version:
            return self.schema.root
        return self.versions.get(api_version, self.schema.root)

    def unknown_version(self, api_version: str) -> bool:
        """An entry's version that the CRD does not have (when its versions are known): the server
        cannot convert the object to it, and the field manager fails."""
        return bool(self.versions) and api_version != self.api_version and api_version not in self.versions

    def reset(self, subresource: str) -> FieldSet:
        return self.reset_fields.get(subresource, EMPTY)  # (a shared empty set: sets are values)

    def ignored(self, subresource: str, version: str) -> FieldSet:
        """The fields left out when the write is compared at ``version`` (SMD ``IgnoreFilter``): a
        custom resource's main endpoint keys its reset fields by the request's version alone, its
        status endpoint by every version of the CRD."""
        if self.ignored_at_versions is not None:
            return self.ignored_at_versions.get(version, EMPTY)
        if version == self.api_version or not self.custom_resource or (subresource and version in self.versions):
            # a built-in kind's strategies list every version; a CRD's status endpoint too
            # (apiextensions getStatusResetFields), its main endpoint only the request's
            return self.reset(subresource)
        return EMPTY

    def convert(self, obj: dict[str, Any], version: str) -> dict[str, Any]:
        """``obj`` as it reads at ``version`` (raises :class:`ConversionError`). Without a converter:
        conversion None, and for a custom resource whose versions are known the server's typed
        conversion at the target version refuses a field that version does not declare."""
        if self.converter is not None:
            return self.converter(obj, version)
        if type(obj) is not dict or obj.get("apiVersion") == version:
            return obj
        out = rename_version(obj, version)
        if self.custom_resource and version in self.versions:
            from ..typed.validate import typed_errors, typed_message

            errs = typed_errors(out, self.versions[version], undeclared=True)
            if errs:
                raise ConversionError(typed_message(errs))
        return out


def empty_object(rules: ResourceRules) -> dict[str, Any]:
    """The object a create starts from: the kind's Go zero object, or just apiVersion and kind."""
    if rules.schema.zero is not None:
        return dict(copy_json(rules.schema.zero))
    return {"apiVersion": rules.api_version, "kind": rules.schema.gvk.kind}
