"""Schemas: how lists and maps merge (SMD ``schema``), and where schemas come from."""

from .types import (
    DEDUCED,
    NO_DEFAULT,
    UNTYPED,
    GroupVersionKind,
    KindSchema,
    ListType,
    MapType,
    StructField,
    Type,
)

__all__ = [
    "DEDUCED",
    "NO_DEFAULT",
    "UNTYPED",
    "GroupVersionKind",
    "KindSchema",
    "ListType",
    "MapType",
    "StructField",
    "Type",
]
