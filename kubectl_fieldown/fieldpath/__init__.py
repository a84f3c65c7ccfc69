"""Paths, path sets and the FieldsV1 codec (SMD ``fieldpath``)."""

from .element import (
    FIELD,
    INDEX,
    KEY,
    ROOT,
    VALUE,
    Path,
    PathElement,
    element_value,
    field,
    index,
    key,
    key_fields,
    path_from_fields,
    set_value,
)
from .fieldsv1 import CANONICAL, UNSTRUCTURED, FieldsV1Error, element_key, parse_element
from .fieldsv1 import decode as decode_fields_v1
from .fieldsv1 import encode as encode_fields_v1
from .fieldsv1 import to_json_object as fields_v1_object
from .pathstring import PathSyntaxError, element_string, is_prefix, parse_path, path_string
from .set import EMPTY, FieldSet

__all__ = [
    "CANONICAL",
    "EMPTY",
    "FIELD",
    "INDEX",
    "KEY",
    "ROOT",
    "UNSTRUCTURED",
    "VALUE",
    "FieldSet",
    "FieldsV1Error",
    "Path",
    "PathElement",
    "PathSyntaxError",
    "decode_fields_v1",
    "element_key",
    "element_string",
    "element_value",
    "encode_fields_v1",
    "field",
    "fields_v1_object",
    "index",
    "is_prefix",
    "key",
    "key_fields",
    "parse_element",
    "parse_path",
    "path_from_fields",
    "path_string",
    "set_value",
]
