"""``metadata.managedFields`` entries: decoding, identity, ordering and encoding.

Rules from apimachinery's ``pkg/util/managedfields`` (see docs/ownership-model.md): an entry is
identified by manager, operation, subresource and — for Update only — apiVersion; decoding fails
on an unknown operation, an empty apiVersion, a fieldsType other than FieldsV1 or bad FieldsV1.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Iterable, Mapping, Sequence

from ..base.identitymemo import memo, remembered
from ..base.record import Record
from ..base.value import go_json_string_html, go_quote
from ..fieldpath import CANONICAL, FieldSet, FieldsV1Error, Path, decode_fields_v1, fields_v1_object, path_from_fields

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final

APPLY = "Apply"
UPDATE = "Update"
OPERATIONS = (APPLY, UPDATE)

# Managers the API server itself writes.
BEFORE_FIRST_APPLY = "before-first-apply"
ANCIENT_CHANGES = "ancient-changes"
# Managers kubectl writes.
KUBECTL_CLIENT_SIDE_APPLY = "kubectl-client-side-apply"
KUBECTL = "kubectl"
KUBECTL_LAST_APPLIED = "kubectl-last-applied"

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

STRIPPED_METADATA: FieldSet = FieldSet(
    [
        path_from_fields("apiVersion"),
        path_from_fields("kind"),
        path_from_fields("metadata"),
        path_from_fields("metadata", "name"),
        path_from_fields("metadata", "namespace"),
        path_from_fields("metadata", "creationTimestamp"),
        path_from_fields("metadata", "selfLink"),
        path_from_fields("metadata", "uid"),
        path_from_fields("metadata", "clusterName"),
        path_from_fields("metadata", "generation"),
        path_from_fields("metadata", "managedFields"),
        path_from_fields("metadata", "resourceVersion"),
    ]
)
"""Removed from the writer's set after every operation (apimachinery stripmeta.go, non-recursive):
nobody ever owns these."""

_METADATA = path_from_fields("metadata")


def never_owned(path: Path) -> str | None:
    """Why no manager can ever own ``path`` (None: one can): the whole object, a field the server
    strips from every manager's set (apiVersion, kind, metadata itself, metadata.name, uid, ...), or
    anything inside one of those but ``metadata`` (labels and annotations are owned)."""
    if not path:
        return "it is the whole object"
    for stripped in STRIPPED_METADATA.sorted_paths():
        if path == stripped or (stripped != _METADATA and path[: len(stripped)] == stripped):
            return "the API server records no owner of it (it strips it from every manager's fields)"
    return None


class ManagedFieldsError(ValueError):
    """An entry the API server would refuse to decode; names the entry and where in it."""

    def __init__(self, entry_index: int, manager: str, reason: str) -> None:
        self.entry_index = entry_index
        self.manager = manager
        self.reason = reason
        who = f"managedFields[{entry_index}]" + (f" (manager {manager!r})" if manager else "")
        super().__init__(f"{who}: {reason}")


if TYPE_CHECKING:
    from typing import NamedTuple

    class _IdentityFields(NamedTuple):
        manager: str
        operation: str
        api_version: str  # "" for Apply: appliers keep one entry whatever the version
        subresource: str = ""
else:
    from collections import namedtuple

    _IdentityFields = namedtuple("_IdentityFields", ("manager", "operation", "api_version", "subresource"),
                                 defaults=("",))


class ManagerIdentity(_IdentityFields):
    """What makes two entries "the same manager" (apimachinery ``BuildManagerIdentifier``).
    Identities order by their fields, in this order.

    A tuple: the key of every managed set's dictionary, looked up at each step of each write played,
    hashed and compared in C (a pickle carries the fields, and another process hashes them anew)."""

    __slots__ = ()

    def replace(self, **changes: str) -> ManagerIdentity:
        """The identity with some fields changed (as a record's ``replace``)."""
        return self._replace(**changes)

    def json(self) -> str:
        """The identity string the server uses as a map key and sort key (JSON, Go escaping)."""
        parts = [f'"manager":{go_json_string_html(self.manager)}'] if self.manager else []
        if self.operation:
            parts.append(f'"operation":{go_json_string_html(self.operation)}')
        if self.api_version:
            parts.append(f'"apiVersion":{go_json_string_html(self.api_version)}')
        if self.subresource:
            parts.append(f'"subresource":{go_json_string_html(self.subresource)}')
        return "{" + ",".join(parts) + "}"

    def describe(self) -> str:
        """The manager as the server prints it in conflict messages (``printManager``: Go ``%q``)."""
        out = go_quote(self.manager)
        if self.subresource:
            out += f" with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            out += f" using {self.api_version}"
        return out


class ManagedFieldsEntry(Record, uncompared=("fields",)):
    """One entry of ``metadata.managedFields``. Entries compare without their field sets."""

    __slots__ = ("api_version", "fields", "fields_type", "manager", "operation", "subresource", "time")
    manager: Final[str]
    operation: Final[str]
    api_version: Final[str]
    fields: Final[FieldSet]
    time: Final[str | None]
    subresource: Final[str]
    fields_type: Final[str]

    def __init__(self, manager: str, operation: str, api_version: str, fields: FieldSet | None = None,
                 time: str | None = None, subresource: str = "", fields_type: str = "FieldsV1") -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.fields = FieldSet() if fields is None else fields
        self.time = time
        self.subresource = subresource
        self.fields_type = fields_type

    @property
    def identity(self) -> ManagerIdentity:
        return ManagerIdentity(
            self.manager, self.operation, "" if self.operation == APPLY else self.api_version, self.subresource
        )

    @property
    def unix_time(self) -> int:
        """Whole seconds since the epoch; 0 when the entry has no time (as the server sorts)."""
        return parse_time(self.time)

    def with_fields(self, fields: FieldSet) -> ManagedFieldsEntry:
        return self.replace(fields=fields)

    def to_dict(self, style: str = CANONICAL) -> dict[str, Any]:
        """The entry in the server's wire key order, empty keys omitted.

        UNSTRUCTURED: a custom resource's entries are plain maps, written with sorted keys.
        """
        d: dict[str, Any] = {}
        if self.manager:
            d["manager"] = self.manager
        if self.operation:
            d["operation"] = self.operation
        if self.api_version:
            d["apiVersion"] = self.api_version
        if self.time:
            d["time"] = self.time
        d["fieldsType"] = self.fields_type
        # each write the engine plays encodes every entry, most of them holding the same set as before
        d["fieldsV1"] = remembered(memo("fields_v1_object"), (self.fields,), fields_v1_object, self.fields, style,
                                   also=style)
        if self.subresource:
            d["subresource"] = self.subresource
        return d if style == CANONICAL else dict(sorted(d.items()))


@functools.lru_cache(maxsize=4096)  # entries are sorted by time in every decode and every write played
def parse_time(t: str | None) -> int:
    if not t:
        return 0
    try:
        return int(_dt.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def format_time(unix: float) -> str:
    """RFC 3339 with whole seconds in UTC, as the server writes ``time``."""
    return _dt.datetime.fromtimestamp(int(unix), tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def decode_entry(raw: Any, index: int = 0, *, strict: bool = False) -> ManagedFieldsEntry:
    """One entry as the API server decodes it; :class:`ManagedFieldsError` where it would fail.

    ``strict`` also refuses FieldsV1 keys the server would silently drop (see
    :func:`~kubectl_fieldown.fieldpath.decode_fields_v1`): for entries that come from a file, not
    from a server."""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise ManagedFieldsError(index, "", "entry is not an object")
    manager = raw.get("manager") or ""
    if not isinstance(manager, str):
        raise ManagedFieldsError(index, "", "manager is not a string")
    op = raw.get("operation") or ""
    if op not in OPERATIONS:
        raise ManagedFieldsError(index, manager, f"operation must be Apply or Update, not {op!r}")
    api_version = raw.get("apiVersion") or ""
    if not isinstance(api_version, str):
        raise ManagedFieldsError(index, manager, "apiVersion is not a string")
    if not api_version:
        raise ManagedFieldsError(index, manager, "apiVersion is empty")
    ftype = raw.get("fieldsType") or ""
    if ftype == "":
        raise ManagedFieldsError(index, manager, "fieldsType is missing")
    if ftype != "FieldsV1":
        raise ManagedFieldsError(index, manager, f"fieldsType must be FieldsV1, not {ftype!r}")
    t = raw.get("time")
    if t is not None and not isinstance(t, str):
        raise ManagedFieldsError(index, manager, "time is not a string")
    sub = raw.get("subresource") or ""
    if not isinstance(sub, str):
        raise ManagedFieldsError(index, manager, "subresource is not a string")
    fields_v1 = raw.get("fieldsV1")
    if isinstance(fields_v1, str):
        # the server keeps fieldsV1 as raw JSON: a JSON string there is not an object to read
        raise ManagedFieldsError(index, manager, "fieldsV1 must be a JSON object, not a string")
    try:
        fields = decode_fields_v1(fields_v1, strict=strict)
    except FieldsV1Error as e:
        raise ManagedFieldsError(index, manager, str(e)) from None
    return ManagedFieldsEntry(manager, op, api_version, fields, t or None, sub, ftype)


def decode_entries(raw: Any, *, strict: bool = False) -> list[ManagedFieldsEntry]:
    """Decode ``metadata.managedFields``; ``None`` or absent gives no entries. ``strict``: see
    :func:`decode_entry`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManagedFieldsError(0, "", "managedFields is not a list")
    store = memo("decode_entries") if not strict else None
    if store is None:
        return [decode_entry(e, i, strict=strict) for i, e in enumerate(raw)]
    # within one object's audit its entries are decoded some twenty times (the prediction, every
    # candidate fix, its verification, the intent): the same lists (base/identitymemo.py), known by
    # the identity of the list and of each entry (a list changed by adding or replacing one is read again)
    entries: tuple[ManagedFieldsEntry, ...] = remembered(store, (raw, *raw), _decoded, raw, same=_same_entries)
    return list(entries)


def _decoded(raw: list[Any]) -> tuple[ManagedFieldsEntry, ...]:
    return tuple(decode_entry(e, i) for i, e in enumerate(raw))


def _same_entries(a: tuple[ManagedFieldsEntry, ...], b: tuple[ManagedFieldsEntry, ...]) -> bool:
    # (an entry's equality leaves its fields out)
    return [(e, e.fields) for e in a] == [(e, e.fields) for e in b]


def sort_entries(entries: Iterable[ManagedFieldsEntry]) -> list[ManagedFieldsEntry]:
    """The server's order on write: operation, time (seconds), manager, apiVersion, subresource."""
    return sorted(entries, key=lambda e: (e.operation, e.unix_time, e.manager, e.api_version, e.subresource))


def encode_entries(entries: Sequence[ManagedFieldsEntry], style: str = CANONICAL) -> list[dict[str, Any]]:
    return [e.to_dict(style) for e in entries]


def object_entries(obj: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    md = obj.get("metadata")
    if not isinstance(md, Mapping):
        return []
    return decode_entries(md.get("managedFields"))
