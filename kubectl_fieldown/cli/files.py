"""Reading objects from files, directories and stdin (shell): ``show -i``, ``--live``, ``-f``.

The text is parsed by :mod:`kubectl_fieldown.manifests.sources` (pure). Directories are read like kubectl
reads them: ``*.yaml``, ``*.yml`` and ``*.json`` in name order, subdirectories only when recursive;
``-`` is stdin. No file or stdin is read beyond :data:`~kubectl_fieldown.manifests.sources.MAX_INPUT_BYTES`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

from ..manifests.sources import MAX_INPUT_BYTES, InputDocument, SourceError, SourceResult, parse_text, too_large

__all__ = ["MANIFEST_SUFFIXES", "STDIN", "load_sources", "read_objects"]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_NAME = "<stdin>"


def read_objects(path: str, recursive: bool = False) -> list[InputDocument]:
    """All objects of ``path`` (a file, a directory or ``-``); raises the first :class:`SourceError`."""
    result = load_sources(path, recursive=recursive)
    if result.errors:
        raise result.errors[0]
    return result.documents


def load_sources(path: str, recursive: bool = False) -> SourceResult:
    """Like :func:`read_objects`, but collects errors instead of stopping at the first one: a bad
    document does not hide the good ones around it."""
    result = SourceResult()
    if path == STDIN:
        text = _read_stdin(result)
        if text is not None:
            parse_text(STDIN_NAME, text, result)
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
    # `d/` and `d//` name their files `d/x.yaml`, as kubectl does
    base = directory.rstrip("/") or "/"
    for name in names:
        full = os.path.join(base, name)
        if os.path.isdir(full):
            if recursive:
                yield from _manifest_files(full, recursive)
        elif name.endswith(MANIFEST_SUFFIXES):
            yield full


def _os_reason(e: OSError) -> str:
    return e.strerror or str(e)


def _read_file(path: str, result: SourceResult) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        result.errors.append(SourceError(path, _os_reason(e)))
        return
    if len(data) > MAX_INPUT_BYTES:
        result.errors.append(too_large(path, MAX_INPUT_BYTES))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        result.errors.append(SourceError(path, "not UTF-8 text"))
        return
    parse_text(path, text, result)


def _read_stdin(result: SourceResult) -> str | None:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            data = buffer.read(MAX_INPUT_BYTES + 1)
            if len(data) > MAX_INPUT_BYTES:
                result.errors.append(too_large(STDIN_NAME, MAX_INPUT_BYTES))
                return None
            return str(data.decode("utf-8"))
        text = stream.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        result.errors.append(SourceError(STDIN_NAME, f"cannot read: {_os_reason(e)}"))
        return None
    except UnicodeDecodeError:
        result.errors.append(SourceError(STDIN_NAME, "not UTF-8 text"))
        return None
    if len(text) > MAX_INPUT_BYTES:
        result.errors.append(too_large(STDIN_NAME, MAX_INPUT_BYTES))
        return None
    return text
