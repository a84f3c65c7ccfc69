"""Facts about Kubernetes objects that every part of the tool must answer the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["is_secret", "is_secret_object"]


def is_secret(api_version: object, kind: object) -> bool:
    """The core Secret (``v1``), whose values are redacted in every output. A custom kind that is
    also called Secret (another group) is an ordinary object: its schema is the CRD's."""
    return kind == "Secret" and api_version == "v1"


def is_secret_object(obj: Mapping[str, Any]) -> bool:
    return is_secret(obj.get("apiVersion"), obj.get("kind"))
