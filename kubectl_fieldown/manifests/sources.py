"""Kubernetes objects from text: what ``show -i``, ``--live`` and ``-f`` manifests are made of.

Pure (no I/O): :mod:`kubectl_fieldown.cli.files` reads files, directories and stdin and hands the text
here. Accepts what people actually feed to kubectl: YAML or JSON, several documents per text,
``kind: List`` (and the ``*List`` kinds that ``kubectl get -o yaml`` prints for several objects and
that the LIST endpoint returns). Every error names the source and the 1-based document number,
because a multi-document file is otherwise impossible to debug from a one-line message.

YAML is read the way the API machinery reads it (sigs.k8s.io/yaml), see
:mod:`kubectl_fieldown.manifests.safeyaml`: timestamps stay strings and map keys become strings, so a
hand-written ``creationTimestamp: 2024-01-01T00:00:00Z`` does not turn into a ``datetime`` that JSON
output cannot represent. JSON is read as kubectl passes it on: NaN and infinities are refused, an
invalid surrogate escape becomes U+FFFD, a whole-number float is an integer (``1.0`` is 1) and an
integer beyond int64 the nearest float64.

Limits, so that no input can take unbounded time or memory (docs/show.md, "Input limits"):
:data:`MAX_INPUT_BYTES` per file or stdin, :data:`MAX_DEPTH` levels of nesting, and go-yaml's bound
on alias expansion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from ..base.objects import ObjectRef
from ..base.record import Record
from ..base.value import MAX_DEPTH, valid_text
from .goscalar import json_number
from .safeyaml import YAMLReadError, load_all

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "InputDocument",
    "SourceError",
    "SourceResult",
    "live_name",
    "parse_text",
    "stored_object_problem",
    "too_large",
]

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""The most one file or stdin may hold (256 MiB): beyond it a read is refused, not attempted. A LIST
of 10,000 Deployments with managedFields is about 100 MiB of YAML."""


class SourceError(Exception):
    """A file, document or item that could not be read as an object; ``str()`` is one line."""

    exit_code = 2  # an input error

    def __init__(self, source: str, message: str, document: int | None = None, item: int | None = None) -> None:
        self.source = source
        self.document = document
        self.item = item
        self.reason = message
        super().__init__(f"{_where(source, document, item)}: {message}")


class InputDocument(Record):
    """One object read from a file.

    ``document`` is the 1-based YAML document number within ``source`` and ``item`` the 1-based
    position inside a ``kind: List`` document (None for a plain document)."""

    __slots__ = ("document", "item", "obj", "source")
    source: Final[str]
    document: Final[int]
    obj: Final[dict[str, Any]]
    item: Final[int | None]

    def __init__(self, source: str, document: int, obj: dict[str, Any], item: int | None = None) -> None:
        self.source = source
        self.document = document
        self.obj = obj
        self.item = item

    @property
    def where(self) -> str:
        return _where(self.source, self.document, self.item)


def live_name(doc: InputDocument) -> ObjectRef:
    """What ``doc`` names on the cluster; :class:`SourceError` when it lacks apiVersion, kind or name."""
    md = doc.obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    api_version, kind, name = doc.obj.get("apiVersion"), doc.obj.get("kind"), md.get("name")
    missing = [k for k, v in (("apiVersion", api_version), ("kind", kind), ("metadata.name", name)) if not v]
    if missing:
        raise SourceError(doc.source, f"cannot name a live object without {' and '.join(missing)}", doc.document,
                          doc.item)
    ns = md.get("namespace")
    return ObjectRef(str(api_version), str(kind), str(ns) if ns else None, str(name))


class SourceResult(Record, mutable=True):
    """What could be read (in file and document order) and what could not: a bad document does not
    hide the good ones around it."""

    __slots__ = ("documents", "errors")
    documents: list[InputDocument]
    errors: list[SourceError]

    def __init__(self, documents: list[InputDocument] | None = None, errors: list[SourceError] | None = None) -> None:
        self.documents = [] if documents is None else documents
        self.errors = [] if errors is None else errors


def _where(source: str, document: int | None, item: int | None) -> str:
    out = source
    if document is not None:
        out += f": document {document}"
    if item is not None:
        out += f", item {item}"
    return out


def parse_text(source: str, text: str, result: SourceResult | None = None) -> SourceResult:
    """The objects of one text (a file's or stdin's, named ``source`` in errors), added to ``result``.

    An error stops the text at that document: what follows it cannot be trusted to be cut into
    documents correctly. The documents before it are kept."""
    result = result if result is not None else SourceResult()
    if len(text) > MAX_INPUT_BYTES:
        result.errors.append(too_large(source, MAX_INPUT_BYTES))
        return result
    text = valid_text(text)  # text decoded from UTF-8 has no lone surrogates; a library caller's may
    head = text.lstrip()
    if head.startswith(("{", "[")):
        # JSON is the common machine-made case (kubectl get -o json); json is much faster than YAML
        try:
            doc = _json_document(text)
        except _NotJSON:
            pass  # maybe several JSON documents separated by ---, or flow-style YAML
        except ValueError as e:
            result.errors.append(SourceError(source, str(e), 1))
            return result
        else:
            _add_document(source, 1, doc, result)
            return result
    if head.startswith(("{", "[", "---")):
        docs = json_stream(text)
        if docs is not None:
            for number, doc in enumerate(docs, 1):
                _add_document(source, number, doc, result)
            return result
    documents = load_all(text)
    number = 0
    while True:
        try:
            doc = next(documents)
        except StopIteration:
            return result
        except YAMLReadError as e:
            result.errors.append(SourceError(source, str(e), e.document))
            return result
        number += 1
        _add_document(source, number, doc, result)


def too_large(source: str, limit: int) -> SourceError:
    mib = 1024 * 1024
    size = f"{limit // mib} MiB" if limit >= mib and limit % mib == 0 else f"{limit} bytes"
    return SourceError(source, f"more than {size}: refused")


# --- JSON -----------------------------------------------------------------------------------------


class _NotJSON(Exception):
    """Not one JSON document: read the text as YAML."""


class _NotANumber(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _NotANumber(f"{name} is not a number Kubernetes can store (JSON has no NaN or infinity)")


def _finite_float(text: str) -> float | int:
    """A JSON number with a fraction or an exponent as kubectl passes it on: a float64, written back by
    Go without a fraction when it is a whole number (``1.0`` and ``1e3`` reach the server as 1 and 1000)."""
    f = float(text)
    if f in (float("inf"), float("-inf")):
        raise _NotANumber(f"{text} is out of the range of a float64")
    result: float | int = json_number(f)
    return result


# with every ASCII digit made a 0, a run of 19 zeros is where an integer can be beyond int64 (only then
# is parse_int worth its time): str.translate and a substring search are ~15x faster than [0-9]{19}
_DIGITS_AS_ZEROS = str.maketrans("123456789", "000000000")
_LONG_RUN = "0" * 19


def _digits_as_zeros(text: str) -> str:
    return text.translate(_DIGITS_AS_ZEROS)


def _go_int(text: str) -> int | float:
    """A JSON integer as kubectl passes it on: beyond int64 it becomes the nearest float64."""
    v = int(text)
    if -(2**63) <= v < 2**63:
        return v
    if len(text) > 400:
        raise _NotANumber(f"{text[:20]}... is out of the range of a float64")
    try:
        result: int | float = json_number(float(v))
    except OverflowError:
        raise _NotANumber(f"{text[:20]}... is out of the range of a float64") from None
    return result


# an escaped surrogate (\ud800); only escapes can put one in a string read from UTF-8 text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _json_document(text: str) -> Any:
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                         parse_int=_go_int if _LONG_RUN in _digits_as_zeros(text) else None)
    except _NotANumber:
        raise
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        raise _NotJSON from None
    return _checked(doc, fix_surrogates=_SURROGATE_ESCAPE.search(text) is not None)


# --- a YAML stream of JSON documents -----------------------------------------------------------------

# What YAML reads otherwise than JSON or may refuse, so that a text holding any of it goes to the YAML
# reader: an escaped surrogate (YAML refuses it, even in a pair), tabs and characters outside YAML's
# printable set or that it takes as line breaks (NEL, U+2028, U+2029), a key whose ':' is on a later
# line or more than 1,024 characters after its start (libyaml's limits on an implicit key), the
# merge key, and integers beyond int64 (go-yaml makes them uint64 or a float). The characters are
# named themselves: a class of the complement of YAML's printable set takes ~6 ms to compile, at every
# start-up.
_NOT_SAFE = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_KEY_AWAY = re.compile(r'"[ \t]*[\r\n][ \t\r\n]*:|"[^"]{1000,}"[ \t]*:')
_STREAM_SEPARATOR = re.compile(r"^---$", re.MULTILINE)


_JSON_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)


def json_stream(text: str) -> list[Any] | None:
    """The documents of a YAML stream whose every document is one JSON object or array between
    ``---`` lines (``jsonnet -y``, generators that write JSON), read with json; or None, and the text is
    read as YAML.

    json reads such a document exactly as the YAML reader does (tests/core/test_json_stream.py checks it
    against :func:`kubectl_fieldown.manifests.safeyaml.load_all`); a text with anything the two may read
    differently, or that either refuses, returns None, so its values and its errors are the YAML
    reader's. It is several times faster: a 10,000-document stream is read in a tenth of the time."""
    if _NOT_SAFE.search(text) or _LONG_RUN in _digits_as_zeros(text) \
            or '"<<"' in text or _KEY_AWAY.search(text) or ("\\u" in text and _SURROGATE_ESCAPE.search(text)):
        return None
    body = text[3:] if text.startswith("---\n") else text
    if body.rstrip().endswith("\n..."):  # the end-of-document marker after the last document
        body = body.rstrip()[:-3]
    docs: list[Any] = []
    decode = _JSON_DECODER.decode
    for chunk in _STREAM_SEPARATOR.split(body):
        if not chunk.strip().startswith(("{", "[")):
            return None  # an empty document (YAML's null), a scalar, YAML
        try:
            doc = decode(chunk)
            if chunk.count("{") + chunk.count("[") > MAX_DEPTH:  # else it cannot be nested that deep
                doc = _checked(doc, fix_surrogates=False)
        except (ValueError, RecursionError):  # not JSON, or JSON beyond the limits: the YAML reader's error
            return None
        docs.append(doc)
    return docs


def _checked(doc: Any, fix_surrogates: bool) -> Any:
    """``doc`` within :data:`MAX_DEPTH`; with ``fix_surrogates``, lone surrogates become U+FFFD as Go's
    decoder makes them (without, they would fail every UTF-8 output). No recursion."""
    if fix_surrogates and type(doc) is str:
        return valid_text(doc)
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        if type(node) is dict:
            if fix_surrogates and any(valid_text(k) is not k for k in node):
                items = list(node.items())
                node.clear()
                node.update((valid_text(k), v) for k, v in items)
            for k, v in node.items():
                tv = type(v)
                if tv is dict or tv is list:
                    stack.append((v, depth + 1))
                elif fix_surrogates and tv is str:
                    node[k] = valid_text(v)
        elif type(node) is list:
            for i, v in enumerate(node):
                tv = type(v)
                if tv is dict or tv is list:
                    stack.append((v, depth + 1))
                elif fix_surrogates and tv is str:
                    node[i] = valid_text(v)
    return doc


# --- objects as the server returns them -----------------------------------------------------------

_META_STRINGS = ("name", "namespace", "generateName", "uid", "resourceVersion", "selfLink", "creationTimestamp",
                 "deletionTimestamp")
_META_INTEGERS = ("generation", "deletionGracePeriodSeconds")


def stored_object_problem(obj: Mapping[str, Any]) -> str | None:
    """Why ``obj`` cannot be an object as the API server returns it, or None.

    For files that stand for live objects (``show -i``, ``conflicts --live``): the server decodes
    ``metadata`` into a typed ObjectMeta, so what it returns always has these types, and the analysis
    relies on them. A manifest to apply is not checked here: the server's answer to a badly typed one
    is part of the prediction."""
    for k in ("apiVersion", "kind"):
        v = obj.get(k)
        if v is not None and not isinstance(v, str):
            return _not_stored(f"{k} is {_kind_name(v)}, not a string")
    md = obj.get("metadata")
    if md is None:
        return None
    if not isinstance(md, Mapping):
        return _not_stored(f"metadata is {_kind_name(md)}, not an object")
    for k in _META_STRINGS:
        v = md.get(k)
        if v is not None and not isinstance(v, str):
            return _not_stored(f"metadata.{k} is {_kind_name(v)}, not a string")
    for k in _META_INTEGERS:
        v = md.get(k)
        if v is not None and (type(v) is not int):
            return _not_stored(f"metadata.{k} is {_kind_name(v)}, not an integer")
    for k in ("labels", "annotations"):
        v = md.get(k)
        if v is None:
            continue
        if not isinstance(v, Mapping):
            return _not_stored(f"metadata.{k} is {_kind_name(v)}, not a map of strings")
        for name, x in v.items():
            if x is not None and not isinstance(x, str):
                return _not_stored(f"metadata.{k}[{name!r}] is {_kind_name(x)}, not a string")
    v = md.get("finalizers")
    if v is not None:
        if not isinstance(v, list):
            return _not_stored(f"metadata.finalizers is {_kind_name(v)}, not a list of strings")
        for i, x in enumerate(v):
            if not isinstance(x, str):
                return _not_stored(f"metadata.finalizers[{i}] is {_kind_name(x)}, not a string")
    v = md.get("ownerReferences")
    if v is not None and not isinstance(v, list):
        return _not_stored(f"metadata.ownerReferences is {_kind_name(v)}, not a list")
    return None  # managedFields: decoding them says what is wrong, entry by entry


def _not_stored(why: str) -> str:
    return f"not an object as the API server returns it: {why}"


# --- documents and lists --------------------------------------------------------------------------


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
    if isinstance(v, Mapping):
        return "an object"
    return f"a {type(v).__name__}"


def _add_document(source: str, number: int, doc: Any, result: SourceResult) -> None:
    if doc is None:
        return  # an empty document (a leading or trailing ---): kubectl skips these too
    if not isinstance(doc, dict):
        result.errors.append(SourceError(source, f"not an object ({_kind_name(doc)})", number))
        return
    if _is_list(doc):
        _add_items(source, number, doc, result, 0, 0)
        return
    result.documents.append(InputDocument(source, number, doc))


#: lists in lists (a List holding a SecretList) are flattened to this depth, as kubectl's
#: FlattenListVisitor flattens them; deeper nesting is no list anyone writes
_LIST_DEPTH = 10


def _add_items(source: str, number: int, doc: dict[str, Any], result: SourceResult, count: int, depth: int) -> int:
    """The items of a list document, lists inside it flattened (numbered in that order, as
    kubectl's FlattenListVisitor yields them); returns how many items were numbered so far."""
    item_kind = str(doc["kind"])[: -len("List")]
    api_version = doc.get("apiVersion")
    for item in doc["items"]:
        count += 1
        if not isinstance(item, dict):
            result.errors.append(SourceError(source, f"not an object ({_kind_name(item)})", number, count))
            continue
        if _is_list(item) and depth < _LIST_DEPTH:
            count = _add_items(source, number, item, result, count - 1, depth + 1)
            continue
        if item_kind and not item.get("kind") and not item.get("apiVersion"):
            # the LIST endpoint (and kubectl get --raw) leaves kind and apiVersion out of the items of a
            # typed list; apimachinery's unstructured decoder puts them back from the list, and so do
            # we: a Secret must be known as one to be redacted
            item = {"apiVersion": api_version, "kind": item_kind,
                    **{k: v for k, v in item.items() if k not in ("apiVersion", "kind")}}
        elif item_kind and (not item.get("kind") or not item.get("apiVersion")) \
                and "Secret" in (item_kind, item.get("kind")):
            # only when both are missing (apimachinery); other items are read as they are, and kubectl
            # refuses them ("Object 'Kind' is missing", quoting the item whole). One that may be a
            # Secret is refused here too, without quoting it: it could not be known as one
            missing = "kind" if not item.get("kind") else "apiVersion"
            result.errors.append(SourceError(source, f"an item of a {doc['kind']} without {missing} (kubectl cannot "
                                             "read it either: only an item without both takes the list's)",
                                             number, count))
            continue
        result.documents.append(InputDocument(source, number, item, count))
    return count


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list)
