"""The user's intent for an applier's next apply, as data (pure; docs/ownership-model.md, "The user's intent").

When an applier applies its next manifest:

* the manifest's values are applied;
* a field that the applier's *previous configuration* set and the manifest no longer sets is deleted —
  unless another live writer (a scaler, a controller, an imperative edit, another applier) also set
  it: then it keeps that writer's value and owner;
* every other field keeps its value.

The applier's previous configuration is what its own previous identities recorded: its Apply entry
and its Update entry under the same name (Helm 3, an operator that starts applying), Argo CD's
client-side migration manager, Flux's ``--override-manager`` names, any other writer's entry that
recorded the same configuration as the next manifest (:func:`same_configuration`), and the
client-side manager ``kubectl-client-side-apply`` with its last-applied annotation *when that
annotation is the applier's* (:func:`annotation_is_its`). Every other entry is another writer — ``before-first-apply``
and ``ancient-changes`` included (nobody knows who set those fields, so they are kept).

:class:`Intent` is that rule for one live object: the fields the previous configuration set
(``own``), and the fields other writers set (``others``). :mod:`.verify` judges every value change of
a fix and the next apply with it, and the migrations move only fields the manifest sets or that only
the applier's own identities ever set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..appliers import Applier, ApplierKind, applier_for_manager
from ..base.identitymemo import memo, remembered
from ..base.objects import group_of
from ..base.record import Record
from ..base.value import values_equal
from ..fieldpath import FieldSet, Path
from ..fieldpath.lookup import MISSING, child_value, value_at
from ..ownership.managedfields import (
    ANCIENT_CHANGES,
    APPLY,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
    LAST_APPLIED_ANNOTATION,
    STRIPPED_METADATA,
    UPDATE,
    ManagedFieldsEntry,
    ManagedFieldsError,
    decode_entries,
)
from ..schema.types import Type
from ..typed.items import child_type
from ..typed.tofieldset import to_field_set
from .migration import _LAC, LAST_APPLIED_PATH, parsed_annotation

__all__ = ["Intent", "annotation_is_its", "is_own_identity", "same_configuration", "under_leaf"]



def _annotation(live: Mapping[str, Any]) -> dict[str, Any] | None:
    md = live.get("metadata") or {}
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION) \
        if type(md) is dict or isinstance(md, Mapping) else None
    doc = parsed_annotation(la) if isinstance(la, str) else None
    if not isinstance(doc, dict) or group_of(str(doc.get("apiVersion") or "")) != group_of(str(live.get("apiVersion")
                                                                                               or "")):
        return None
    # written at another served version of the object (a CRD served at several, a manifest that moved
    # from one to the other), it is still the applier's last configuration: its fields are read with the
    # schema of the version the object is read at, as the object's own are
    return doc


def manifest_fields(doc: Mapping[str, Any] | None, root: Type) -> FieldSet | None:
    """The fields ``doc`` sets but for the metadata the server strips; None without a document or
    for one the schema cannot read. Within an object's audit the same document gives the same set
    (:mod:`kubectl_fieldown.base.identitymemo`), so what is weighed against it stays remembered
    (:func:`_configuration_overlap`)."""
    if doc is None:
        return None
    try:
        return remembered(memo("manifest_fields"), (doc, root), _without_stripped, doc, root)
    except ValueError:
        return None


def _without_stripped(doc: Mapping[str, Any], root: Type) -> FieldSet:
    return to_field_set(doc, root).difference(STRIPPED_METADATA)


def configuration_fields(doc: Mapping[str, Any] | None, root: Type) -> FieldSet | None:
    """:func:`manifest_fields` without the last-applied annotation (bookkeeping, not configuration)."""
    fs = manifest_fields(doc, root)
    return remembered(memo("configuration_fields"), (fs,), fs.difference, _LAC) if fs is not None else None


def _entries(live: Mapping[str, Any]) -> list[ManagedFieldsEntry]:
    try:
        return decode_entries((live.get("metadata") or {}).get("managedFields"))
    except ManagedFieldsError:
        return []


def annotation_is_its(live: Mapping[str, Any], applier: Applier, manifest: Mapping[str, Any] | None,
                      root: Type) -> bool:
    """Is the last-applied annotation the applier's own previous configuration?

    Yes for client-side ``kubectl apply`` itself, for ``kubectl apply --server-side`` as ``kubectl``
    (kubectl's own migration is this switch), for Argo CD (its ClientSideApplyMigration names the
    client-side manager as its previous identity) and for Flux (it folds ``kubectl*`` as its own). For
    an applier under another name (a CI job, a hotfix, a tuner, Helm) the manifest decides: the
    annotation is its configuration when its manifest is that configuration, changed — it sets more of
    the annotation's fields than it leaves out (a chart that adopted what ``kubectl apply`` applied
    before, or that someone applied client-side in between). A partial manifest (a hotfix, a tuner of a
    few fields) is another configuration next to it. Without a manifest the applier's Apply entry is
    compared the same way; with neither, the annotation is the only record of what it applies — but
    not Helm's: Helm never writes the annotation, its own entries record its chart."""
    doc = _annotation(live)
    if doc is None:
        return False
    kind = applier.kind
    if kind in (ApplierKind.kubectl_client_side, ApplierKind.flux):
        return True
    if kind is ApplierKind.argocd:
        return applier.csa_migration and applier.csa_manager == KUBECTL_CLIENT_SIDE_APPLY
    if kind is ApplierKind.helm and manifest is None:
        return False
    if applier.manager == KUBECTL:
        return True
    la = configuration_fields(doc, root)
    if la is None:
        return False
    mine = configuration_fields(manifest, root)
    if mine is None:
        own = [e for e in _entries(live) if e.manager == applier.manager and e.operation == APPLY
               and not e.subresource]
        if not own:
            return True
        mine = own[0].fields.difference(STRIPPED_METADATA)
    return same_configuration(_valued(doc, la), mine)


def _valued(doc: Mapping[str, Any], fs: FieldSet) -> FieldSet:
    """The leaves of ``fs`` that hold a value in ``doc``: an empty map (kubectl records ``annotations:
    {}``) is no field anyone sets."""
    return FieldSet(q for q in fs.leaves().sorted_paths() if value_at(doc, q) not in ({}, []))


#: what the server sets and no manifest does: an annotation holding them was written from a read copy
_SERVER_METADATA = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields")


def _saved_from_a_read(doc: Mapping[str, Any] | None) -> bool:
    """The annotation records a ``kubectl get`` copy (``kubectl replace``/``edit`` of it rewrite the
    annotation), not a manifest: every value of the object at that time, whoever wrote it."""
    md = doc.get("metadata") if doc is not None else None
    return isinstance(md, Mapping) and any(k in md for k in _SERVER_METADATA)


def _drifted(live: Mapping[str, Any], la_fields: FieldSet) -> FieldSet:
    """The annotation's fields whose live value differs from the annotation's."""
    doc = _annotation(live)
    if doc is None:
        return FieldSet()
    out: list[Path] = []
    _drifted_below(doc, live, la_fields.leaves(), (), out)
    return FieldSet(out)


def _drifted_below(then: Any, now: Any, leaves: FieldSet, prefix: Path, out: list[Path]) -> None:
    # both values walked down the set together, each step once (not every leaf's path from the root);
    # a part either side lacks holds nothing that drifted
    for pe in leaves.members:
        a, b = child_value(then, pe), child_value(now, pe)
        if a is not MISSING and b is not MISSING and not values_equal(a, b):
            out.append((*prefix, pe))
    for pe, below in leaves.children.items():
        a, b = child_value(then, pe), child_value(now, pe)
        if a is not MISSING and b is not MISSING:
            _drifted_below(a, b, below, (*prefix, pe), out)


def _annotation_always_its(applier: Applier) -> bool:
    """The annotation is the applier's whatever its manifest (kubectl's own names, the appliers that
    take a client-side history over by design)."""
    return applier.kind in (ApplierKind.kubectl_client_side, ApplierKind.flux, ApplierKind.argocd) \
        or applier.manager == KUBECTL


def same_configuration(theirs: FieldSet, mine: FieldSet) -> bool:
    """Is a recorded configuration (``theirs``) the applier's own, changed? Each sets more than half of
    the other's fields: a partial configuration next to it (a hotfix, a tuner) is not."""
    return _overlap(theirs, mine) > 0


def _overlap(theirs: FieldSet, mine: FieldSet) -> int:
    """The leaves the two configurations share when each sets more than half of the other's, else 0."""
    a, b = theirs.leaves(), mine.leaves()
    shared = len(a.intersection(b))
    return shared if shared * 2 > len(a) and shared * 2 > len(b) else 0


#: the server's names for writers nobody knows: never anyone's previous identity
_UNKNOWN_WRITERS = frozenset({BEFORE_FIRST_APPLY, ANCIENT_CHANGES})


def _configuration_overlap(e: ManagedFieldsEntry, applier: Applier, manifest_fields: FieldSet) -> int:
    """How many of the manifest's fields ``e`` recorded, when it recorded the same configuration as the
    manifest (0 when not, or when ``e`` cannot be an old name of the applier)."""
    if e.subresource or e.manager in _UNKNOWN_WRITERS or e.manager in (KUBECTL_LAST_APPLIED, applier.manager,
                                                                         KUBECTL_CLIENT_SIDE_APPLY):
        return 0
    # each entry is weighed against every other one of its object (``peers``), for every entry and
    # every candidate fix; from here on the answer depends on the two sets alone, so it is remembered
    # for them (values; kept here so that their ids stay theirs; a decoded FieldsV1 seen before is
    # the same set again, fieldsv1.decode's memory)
    key = (id(e.fields), id(manifest_fields))
    known = _OVERLAPS.get(key)
    if known is not None and known[0] is e.fields and known[1] is manifest_fields:
        return known[2]
    theirs = e.fields.difference(STRIPPED_METADATA).difference(_LAC)
    n = _overlap(theirs, manifest_fields)
    if len(_OVERLAPS) >= 512:
        _OVERLAPS.clear()
    _OVERLAPS[key] = (e.fields, manifest_fields, n)
    return n


_OVERLAPS: dict[tuple[int, int], tuple[FieldSet, FieldSet, int]] = {}


def is_own_identity(e: ManagedFieldsEntry, applier: Applier, annotation_its: bool,
                    also: Sequence[str] = (), manifest_fields: FieldSet | None = None,
                    peers: Sequence[ManagedFieldsEntry] = ()) -> bool:
    """Is this entry one of the applier's own previous identities (see the module docstring)? Another
    writer's entry is an old name of it when it recorded the same configuration (the object moved from
    one tool to the next: a Kustomization to a HelmRelease, Helm 3 to a CI job's server-side apply,
    ``kubectl create`` to ``kubectl apply``), and no other entry (``peers``) recorded more of it.
    ``before-first-apply`` and ``ancient-changes`` never are; the client-side manager is its own only
    with its annotation (:func:`annotation_is_its`)."""
    if e.subresource:
        return False
    if e.manager == applier.manager or e.manager in also:
        return True
    if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE:
        return annotation_its
    if manifest_fields is not None:
        # the manifest's own earlier record under another tool: an Apply entry (a Kustomization
        # before a HelmRelease) or an Update entry (Helm 3 before a CI job's server-side apply, a
        # ``kubectl create`` or ``replace`` before ``kubectl apply``) — the one that recorded most of
        # it (``peers``: the object's other entries), not a partial writer beside it
        mine = _configuration_overlap(e, applier, manifest_fields)
        if mine and all(_configuration_overlap(p, applier, manifest_fields) <= mine for p in peers):
            return True
    if applier.kind is ApplierKind.argocd and applier.csa_migration and e.manager == applier.csa_manager:
        return e.operation == UPDATE
    return applier.kind is ApplierKind.flux and any(e.manager.startswith(o) for o in applier.override_managers)


class Intent(Record):
    """What the applier's previous configuration set (``own``) and what other live writers set
    (``others``), on one live object; ``owners`` names the writers of ``others`` per entry."""

    __slots__ = ("inferred", "other_entries", "others", "own", "root", "superseded")
    own: Final[FieldSet]
    others: Final[FieldSet]
    other_entries: Final[tuple[ManagedFieldsEntry, ...]]
    root: Final[Type | None]
    """The schema: a prefix owned as a member covers what lies below only where it is atomic."""
    inferred: Final[FieldSet]
    """The part of ``own`` that records judged the applier's by their content set: another
    writer's entry, or the annotation of an applier under another name, that recorded the same
    configuration as the next manifest (:func:`same_configuration`). If the applier is in fact
    another writer beside them, these are that writer's fields."""
    superseded: Final[FieldSet]
    """The part of ``own`` that the applier's latest configuration did not set: an older record of it
    (an earlier tool, an earlier name) still owns them because the later apply was under another
    manager and could not prune them. Whether the user still wants them nobody can tell from the
    object: the manifests since have not said (:func:`_superseded`)."""

    def __init__(
        self,
        own: FieldSet,
        others: FieldSet,
        other_entries: tuple[ManagedFieldsEntry, ...] = (),
        root: Type | None = None,
        inferred: FieldSet | None = None,
        superseded: FieldSet | None = None,
    ) -> None:
        self.own = own
        self.others = others
        self.other_entries = other_entries
        self.root = root
        self.inferred = inferred if inferred is not None else FieldSet()
        self.superseded = superseded if superseded is not None else FieldSet()

    @classmethod
    def of(cls, live: Mapping[str, Any], applier: Applier, manifest: Mapping[str, Any] | None, root: Type,
           previous: Mapping[str, Any] | None = None, also: Sequence[str] = ()) -> Intent:
        """``previous`` is the manifest the applier applied before, where the caller knows it (its
        fields count as its own too); ``also`` are further names the user declared its own."""
        # the client-side manager named as one of the applier's own (a fix folds it into the applier)
        # brings its annotation: the configuration it recorded is the applier's too
        its = annotation_is_its(live, applier, manifest, root) or KUBECTL_CLIENT_SIDE_APPLY in also
        own = FieldSet()
        others = FieldSet()
        other_entries: list[ManagedFieldsEntry] = []
        la_fields = configuration_fields(_annotation(live), root) if its else None
        mine = configuration_fields(manifest, root)
        entries = _entries(live)
        by_content = FieldSet()
        records: list[tuple[int, FieldSet]] = []
        possible: list[tuple[int, FieldSet]] = []
        candidates: list[tuple[ManagedFieldsEntry, FieldSet]] = []
        la_certain = its and _annotation_always_its(applier) and not _saved_from_a_read(_annotation(live)) \
            and _annotation_recorded(entries)
        for e in entries:
            if e.manager == KUBECTL_LAST_APPLIED and e.operation == APPLY:
                continue  # owns the annotation only: bookkeeping
            fs = e.fields.difference(_LAC)
            if is_own_identity(e, applier, its, also, mine, entries):
                if e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE and la_fields is not None:
                    # what the client-side manager owns beyond its manifest the server defaulted
                    fs = fs.intersection(la_fields)
                own = own.union(fs)
                record = _configuration_record(e, fs, la_fields, applier, mine)
                if record is not None:
                    records.append((e.unix_time, record))
                if not is_own_identity(e, applier, la_certain, also):
                    by_content = by_content.union(fs)
            else:
                others = others.union(fs)
                other_entries.append(e)
                candidates.append((e, fs))
        own_records = [r for _, r in records]
        for e, fs in candidates:
            maybe = _possible_configuration(e, fs, live, applier, mine, root, own_records)
            if maybe is not None:
                possible.append((e.unix_time, maybe))
        if la_fields is not None:
            own = own.union(la_fields)
            # a value that differs from the one the applier last applied was written by someone
            # since: another live writer, even where managedFields no longer say who (reset, untracked)
            others = others.union(_drifted(live, la_fields))
            if not la_certain:
                by_content = by_content.union(la_fields)
        prev = configuration_fields(previous, root)
        if prev is not None:
            # read off the same records (inferred_manifest): as certain as they are
            own = own.union(prev)
        # a field a record judged its own by content also set rests on that judgement even when a certain
        # record of the applier set it too: were that writer another, its value would have to stay
        return cls(own, others, tuple(other_entries), root, by_content,
                   _superseded(own, records + possible) if records else FieldSet())

    def inferred_set(self, p: Path) -> bool:
        """Did a record judged the applier's only by its content (another writer's entry) set ``p``?"""
        return self.inferred.has_prefix(p) or under_leaf(self.inferred, p, self.root)

    def superseded_set(self, p: Path) -> bool:
        """Did only an older configuration of the applier set ``p``?"""
        return self.superseded.has_prefix(p) or under_leaf(self.superseded, p, self.root)

    def own_set(self, p: Path) -> bool:
        return self.own.has_prefix(p) or under_leaf(self.own, p, self.root)

    def others_set(self, p: Path) -> bool:
        return self.others.has_prefix(p) or under_leaf(self.others, p, self.root)

    def deletion_asked(self, p: Path) -> bool:
        """The manifest no longer sets ``p``: may the next apply delete it?"""
        return self.own_set(p) and not self.others_set(p)

    def other_owners(self, p: Path) -> tuple[str, ...]:
        out = {e.manager + (f" (subresource {e.subresource})" if e.subresource else "")
               for e in self.other_entries if e.fields.has_prefix(p) or under_leaf(e.fields, p, self.root)}
        return tuple(sorted(out))


def _annotation_recorded(entries: Sequence[ManagedFieldsEntry]) -> bool:
    """Does an entry record who wrote the last-applied annotation? After a managedFields reset none does,
    and the annotation may be older than a server-side apply whose record the reset erased: the object
    no longer says whether the annotation is the latest configuration."""
    return any(e.fields.has(LAST_APPLIED_PATH) for e in entries)


def _possible_configuration(e: ManagedFieldsEntry, fs: FieldSet, live: Mapping[str, Any], applier: Applier,
                            manifest_fields: FieldSet | None, root: Type,
                            own_records: Sequence[FieldSet]) -> FieldSet | None:
    """Another writer's whole configuration (an Apply entry, the client-side manager's annotation) that
    holds at least half of the next manifest's fields, or that is one of the applier's own whole records
    (``own_records``) changed, or (a known tool's) lies wholly inside one: not clearly the applier's
    (:func:`same_configuration` with the manifest wants more than half both ways), not clearly another
    configuration either — the manifest may have shrunk, or grown, since. If it was the applier's, under
    another tool, what its older records set and this one did not was dropped then and only stayed
    because that apply could not prune it."""
    if manifest_fields is None or e.subresource or e.manager in _UNKNOWN_WRITERS:
        return None
    if e.operation == APPLY:
        theirs: FieldSet | None = fs.difference(STRIPPED_METADATA)
    elif e.manager == KUBECTL_CLIENT_SIDE_APPLY:
        doc = _annotation(live)
        la = configuration_fields(doc, root)
        theirs = _valued(doc, la) if doc is not None and la is not None else None
    else:
        return None
    if theirs is None:
        return None
    shared = len(theirs.leaves().intersection(manifest_fields.leaves()))
    if shared and shared * 2 >= len(manifest_fields.leaves()):
        return theirs
    # or one of the applier's own whole configurations, changed (the manifest may have grown since)
    if any(same_configuration(theirs, r) for r in own_records):
        return theirs
    # or, written by a tool that applies whole manifests (client-side kubectl apply, Helm, Argo CD,
    # Flux, kubectl apply --server-side), wholly inside one of them: that configuration shrunk (a
    # pipeline that moved to the tool with fewer fields, then back) or a tuner's few fields. The object
    # cannot tell; only what rests on it being the applier's is affected (a deletion of what the newer
    # record lacks is named superseded, not called the one the manifest asks for). A manager of no
    # known tool applying a few of the fields is a tuner's (another writer)
    if applier_for_manager(e.manager).kind is not ApplierKind.ssa:
        leaves = theirs.leaves()
        if not leaves.is_empty() and any(leaves.issubset(r.leaves()) for r in own_records):
            return theirs
    return None


def _configuration_record(e: ManagedFieldsEntry, fs: FieldSet, la_fields: FieldSet | None, applier: Applier,
                          manifest_fields: FieldSet | None) -> FieldSet | None:
    """What one own entry records as a whole configuration the applier's identity applied: an Apply
    entry; the client-side manager's annotation; another tool's Update entry that recorded the
    manifest's configuration (Helm 3, ``kubectl create``). ``None`` for a partial record (an operator's
    own Update entry beside its apply, a field or two): it says nothing of what was dropped."""
    if e.operation == APPLY:
        return fs
    if e.manager == KUBECTL_CLIENT_SIDE_APPLY:
        return la_fields
    if applier.kind is ApplierKind.helm and e.manager == applier.manager:
        return fs  # Helm 3's release under Helm 4's name: the whole chart, patched three-way
    if manifest_fields is not None and _configuration_overlap(e, applier, manifest_fields):
        return fs
    return None


def _superseded(own: FieldSet, records: Sequence[tuple[int, FieldSet]]) -> FieldSet:
    """The fields of ``own`` that a latest configuration record does not hold. Which record came last
    the object says only to the second, and not at all for an entry without a time (the server leaves
    some unstamped: a new manager's apply that changed no value, a ``/scale`` write): those are all
    taken as latest, so a field any of them lacks may be one the last manifest dropped."""
    if len(records) < 2:
        return FieldSet()
    latest = max(t for t, _ in records)
    kept: FieldSet | None = None
    for t, fs in records:
        if t == latest or t == 0:
            kept = fs if kept is None else kept.intersection(fs)
    assert kept is not None
    return FieldSet(p for p in own.leaves().sorted_paths() if not kept.has(p))


def under_leaf(fs: FieldSet, p: Path, root: Type | None = None) -> bool:
    """A proper prefix of ``p`` is a member that covers ``p``: an atomic value (an atomic map or list,
    owned whole). A member that is a granular map or a list item only records who created the node
    (its "." marker): what lies below has owners of its own. Without a schema every member covers."""
    t: Type | None = root
    for i in range(1, len(p)):
        t = child_type(t, p[i - 1]) if t is not None else None
        if fs.has(p[:i]) and (root is None or t is None or _atomic(t, p[i])):
            return True
    return False


def _atomic(t: Type, below: Any) -> bool:
    """Is the node of type ``t`` that ``below`` (the next path element) descends into owned whole?
    The element says which side of the type it is (a field: the map; an item: the list)."""
    if below[0] == 0:
        return t.map is None or t.map.atomic
    return t.list is None or t.list.relationship == "atomic"

