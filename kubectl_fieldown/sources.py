"""Reading Kubernetes objects from files and stdin (``show -i`` offline, ``-f`` manifests).

Accepts what people actually feed to kubectl: YAML or JSON, several documents per file, ``kind:
List`` (and the ``*List`` kinds ``kubectl get -o yaml`` prints for several objects), ``-`` for
stdin and directories. Every error names the file and the 1-based document number, because a
multi-document file is otherwise impossible to debug from a one-line message.

YAML is read the way the API machinery reads it (sigs.k8s.io/yaml): timestamps stay strings and
map keys become strings, so a hand-written ``creationTimestamp: 2024-01-01T00:00:00Z`` does not turn
into a ``datetime`` that JSON output cannot represent.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MANIFEST_SUFFIXES",
    "InputDocument",
    "SourceError",
    "SourceResult",
    "load_sources",
    "read_objects",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class SourceError(Exception):
    """A file, document or item that could not be read as an object; ``str()`` is one line."""

    exit_code = 1

    def __init__(self, source: str, message: str, document: int | None = None, item: int | None = None) -> None:
        self.source = source
        self.document = document
        self.item = item
        self.reason = message
        super().__init__(f"{_where(source, document, item)}: {message}")


@dataclass(frozen=True)
class InputDocument:
    """One object read from a file.

    ``document`` is the 1-based YAML document number within ``source`` and ``item`` the 1-based
    position inside a ``kind: List`` document (None for a plain document)."""

    source: str
    document: int
    obj: dict[str, Any]
    item: int | None = None

    @property
    def where(self) -> str:
        return _where(self.source, self.document, self.item)


@dataclass(frozen=True)
class LiveName:
    """The object on the cluster that a manifest document names."""

    api_version: str
    kind: str
    name: str
    namespace: str | None


def live_name(doc: InputDocument) -> LiveName:
    """What ``doc`` names on the cluster; :class:`SourceError` when it lacks apiVersion, kind or name."""
    md = doc.obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    api_version, kind, name = doc.obj.get("apiVersion"), doc.obj.get("kind"), md.get("name")
    missing = [k for k, v in (("apiVersion", api_version), ("kind", kind), ("metadata.name", name)) if not v]
    if missing:
        raise SourceError(doc.source, f"cannot name a live object without {' and '.join(missing)}", doc.document,
                          doc.item)
    ns = md.get("namespace")
    return LiveName(str(api_version), str(kind), str(name), str(ns) if ns else None)


@dataclass
class SourceResult:
    """What could be read (in file and document order) and what could not: a bad document does not
    hide the good ones around it."""

    documents: list[InputDocument] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)


def _where(source: str, document: int | None, item: int | None) -> str:
    out = source
    if document is not None:
        out += f": document {document}"
    if item is not None:
        out += f", item {item}"
    return out


def read_objects(path: str, recursive: bool = False) -> list[InputDocument]:
    """All objects of ``path`` (a file, a directory or ``-``); raises the first :class:`SourceError`."""
    result = load_sources(path, recursive=recursive)
    if result.errors:
        raise result.errors[0]
    return result.documents


def load_sources(path: str, recursive: bool = False) -> SourceResult:
    """Like :func:`read_objects`, but collects errors instead of stopping at the first one."""
    result = SourceResult()
    if path == STDIN:
        try:
            text = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as e:
            result.errors.append(SourceError("<stdin>", f"cannot read: {e}"))
            return result
        _parse_into("<stdin>", text, result)
        return result
    if os.path.isdir(path):
        try:
            files = list(_manifest_files(path, recursive))
        except SourceError as e:
            result.errors.append(e)
            return result
        if not files:
            result.errors.append(SourceError(path, f"no {'/'.join(MANIFEST_SUFFIXES)} files in this directory"))
        for f in files:
            _read_file(f, result)
        return result
    _read_file(path, result)
    return result


def _manifest_files(directory: str, recursive: bool) -> Iterator[str]:
    # sorted like kubectl's filepath.Walk so that output order does not depend on the file system
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise SourceError(directory, _os_reason(e)) from None
    for name in names:
        full = os.path.join(directory, name)
        if os.path.isdir(full):
            if recursive:
                yield from _manifest_files(full, recursive)
        elif name.endswith(MANIFEST_SUFFIXES):
            yield full


def _os_reason(e: OSError) -> str:
    return e.strerror or str(e)


def _read_file(path: str, result: SourceResult) -> None:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        result.errors.append(SourceError(path, _os_reason(e)))
        return
    except UnicodeDecodeError:
        result.errors.append(SourceError(path, "not UTF-8 text"))
        return
    _parse_into(path, text, result)


def _parse_into(source: str, text: str, result: SourceResult) -> None:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        # JSON is the common machine-made case (kubectl get -o json); json is much faster than YAML
        try:
            doc = json.loads(text)
        except ValueError:
            pass  # maybe several JSON documents separated by ---, or flow-style YAML
        else:
            _add_document(source, 1, doc, result)
            return
    for number, doc, error in _yaml_documents(source, text):
        if error is not None:
            result.errors.append(error)
            return
        _add_document(source, number, doc, result)


def _yaml_documents(source: str, text: str) -> Iterator[tuple[int, Any, SourceError | None]]:
    import yaml

    number = 0
    loader = _loader_class()(text)
    try:
        while loader.check_data():
            number += 1
            try:
                doc = loader.get_data()
            except yaml.YAMLError as e:
                yield number, None, SourceError(source, "invalid YAML: " + _yaml_reason(e), number)
                return
            yield number, doc, None
    except yaml.YAMLError as e:
        # a syntax error between documents is reported against the document being started
        yield number + 1, None, SourceError(source, "invalid YAML: " + _yaml_reason(e), number + 1)
    finally:
        loader.dispose()


def _yaml_reason(e: Exception) -> str:
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None)
    context = getattr(e, "context", None)
    text = str(problem or e).strip()
    if context and problem:
        text = f"{context.strip()}, {text}"
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(text.split())


_LOADER: Any = None


def _loader_class() -> Any:
    """A safe loader (libyaml-backed when available) that keeps timestamps as strings."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        resolvers = {
            first: [(tag, rx) for tag, rx in entries if tag != "tag:yaml.org,2002:timestamp"]
            for first, entries in base.yaml_implicit_resolvers.items()
        }
        _LOADER = type("FieldownLoader", (base,), {"yaml_implicit_resolvers": resolvers})
    return _LOADER


def _kind_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a bool"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return f"a {type(v).__name__}"


def _add_document(source: str, number: int, doc: Any, result: SourceResult) -> None:
    if doc is None:
        return  # an empty document (a leading or trailing ---): kubectl skips these too
    if not isinstance(doc, dict):
        result.errors.append(SourceError(source, f"not an object ({_kind_name(doc)})", number))
        return
    try:
        doc = _normalize(doc)
    except ValueError as e:
        result.errors.append(SourceError(source, str(e), number))
        return
    if _is_list(doc):
        for i, item in enumerate(doc["items"], start=1):
            if not isinstance(item, dict):
                result.errors.append(SourceError(source, f"not an object ({_kind_name(item)})", number, i))
                continue
            result.documents.append(InputDocument(source, number, item, i))
        return
    result.documents.append(InputDocument(source, number, doc))


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list)


def _normalize(v: Any) -> Any:
    """Make a YAML value a JSON value: string keys (as sigs.k8s.io/yaml does), no YAML-only types."""
    if isinstance(v, dict):
        if all(type(k) is str for k in v):
            for k, x in v.items():
                if isinstance(x, (dict, list)) or not _is_json_scalar(x):
                    v[k] = _normalize(x)
            return v
        return {_key_string(k): _normalize(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_normalize(x) for x in v]
    if _is_json_scalar(v):
        return v
    if isinstance(v, bytes):  # !!binary: Kubernetes carries bytes as base64 text
        import base64

        return base64.b64encode(v).decode("ascii")
    # dates (an explicit !!timestamp tag), sets, ...: keep the text the user wrote
    return str(v)


def _is_json_scalar(v: Any) -> bool:
    return v is None or type(v) in (str, int, float, bool)


def _key_string(k: Any) -> str:
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, (int, float)):
        return json.dumps(k)
    raise ValueError(f"map key {k!r} is not a string")
