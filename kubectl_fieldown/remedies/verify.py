"""Does a remedy keep every value? The fix and then the applier's next apply, played on the engine.

A remedy is trusted only after this check (the product's rule: *a remedy never loses data*):

1. the fix's requests are simulated on the live object: they must change no value (they write
   ownership and the last-applied annotation only);
2. then the applier's next run — its real request sequence (:mod:`kubectl_fieldown.appliers`) —
   with the manifest it will apply;
3. every value that differs from the live object must be one the user asked for (the user's intent,
   :mod:`.intent`): a value the next manifest sets, an addition, or the deletion of a field that
   only the applier's previous configuration set and the manifest no longer sets. Anything else — a
   label someone else set, a replicas count a scaler owns, a field another writer also set — is a
   loss, and the remedy is not offered (a write command refuses it unless ``--allow-value-changes``).

The fields the fix tells the user to drop from their manifest but hands to another writer (``keep``,
e.g. ``.spec.replicas`` for a scaler) must keep their live value. A field the previous configuration
set that the manifest dropped and that is still there afterwards is no loss but is reported with its
owners (``dropped_kept``: it stays, and nobody will prune it).
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Final

from ..appliers import Applier, ApplierRun, run_applier
from ..base.identitymemo import CHECK, memo, remembered
from ..base.objects import is_secret_object
from ..base.record import Record
from ..base.redact import scrub, secret_texts, shown_value
from ..base.value import values_equal
from ..fieldmanager import ResourceRules, comes_back_defaulted
from ..fieldpath import FieldSet, Path, is_prefix, path_from_fields, path_string
from ..fieldpath.lookup import MISSING, Lookup
from ..ownership.managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsEntry, decode_entries
from ..typed.compare import compare
from ..typed.tofieldset import to_field_set
from .intent import Intent, under_leaf
from .requests import ApplyRequest, JsonPatchRequest, RequestFailed, WriteRequest, simulate_requests

__all__ = ["BOOKKEEPING", "Checks", "ValueChange", "Verification", "value_changes", "verify"]

#: not values anyone sets: the server's bookkeeping, and the last-applied annotation (a record of
#: a manifest, rewritten by the remedies on purpose)
BOOKKEEPING: FieldSet = FieldSet([
    path_from_fields("metadata", "managedFields"),
    path_from_fields("metadata", "resourceVersion"),
    path_from_fields("metadata", "generation"),
    path_from_fields("metadata", "uid"),
    path_from_fields("metadata", "creationTimestamp"),
    path_from_fields("metadata", "selfLink"),
    path_from_fields("metadata", "annotations", LAST_APPLIED_ANNOTATION),
])


class ValueChange(Record):
    __slots__ = ("after", "before", "path", "removed", "secret")
    path: Final[Path]
    before: Final[Any]
    after: Final[Any]
    """:data:`~kubectl_fieldown.fieldpath.lookup.MISSING` where the field is absent."""
    secret: Final[bool]
    """A change of a Secret: :meth:`describe` shows its values through the one redaction."""
    removed: Final[tuple[Path, ...]]
    """A deletion's leaves (a map or an item goes whole, but its fields may have other writers)."""

    def __init__(
        self,
        path: Path,
        before: Any,
        after: Any,
        secret: bool = False,
        removed: tuple[Path, ...] = (),
    ) -> None:
        self.path = path
        self.before = before
        self.after = after
        self.secret = secret
        self.removed = removed

    @property
    def kind(self) -> str:
        if self.after is MISSING:
            return "deleted"
        if self.before is MISSING:
            return "added"
        return "changed"

    def describe(self) -> str:
        """``.spec.x (1 -> 2)``: the path and both values (short), a Secret's redacted."""

        def show(v: Any) -> str:
            if v is MISSING:
                return "unset"
            import json

            if self.secret:
                v = shown_value(self.path, v)
            text = json.dumps(v, sort_keys=True, ensure_ascii=False)
            return text if len(text) <= 40 else text[:39] + "…"

        return f"{path_string(self.path)} ({show(self.before)} -> {show(self.after)})"


def value_changes(before: Mapping[str, Any], after: Mapping[str, Any], rules: ResourceRules) -> list[ValueChange]:
    """Every field whose value differs (leaves, atomic values and whole items), bookkeeping aside;
    a Secret's changes say so (their values are shown redacted)."""
    secret = is_secret_object(before) or is_secret_object(after)
    before, after = _without_bookkeeping(before), _without_bookkeeping(after)
    c = compare(before, after, rules.root).exclude(BOOKKEEPING)
    out: list[ValueChange] = []
    in_before, in_after = Lookup(before), Lookup(after)  # one index per list: linear in the changes
    for p in _topmost(c.removed):
        below = tuple((*p, *q) for q in c.removed.descend(p).leaves().sorted_paths())
        out.append(ValueChange(p, in_before.at(p), in_after.at(p), secret, below))
    for fs in (c.modified, c.added):
        for p in _topmost(fs):
            out.append(ValueChange(p, in_before.at(p), in_after.at(p), secret))
    return sorted(out, key=lambda ch: ch.path)


def _without_bookkeeping(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object without the last-applied annotation (and without the annotations map when that
    was all it held): the map going away with it is no loss."""
    md = obj.get("metadata")
    ann = md.get("annotations") if isinstance(md, Mapping) else None
    if not isinstance(ann, Mapping) or LAST_APPLIED_ANNOTATION not in ann:
        return obj
    assert isinstance(md, Mapping)
    rest = {k: v for k, v in ann.items() if k != LAST_APPLIED_ANNOTATION}
    new_md = {k: v for k, v in md.items() if k != "annotations"}
    if rest:
        new_md["annotations"] = rest
    return {**obj, "metadata": new_md}


def _topmost(fs: FieldSet) -> list[Path]:
    out: list[Path] = []
    for p in fs.sorted_paths():
        if out and is_prefix(out[-1], p):
            continue
        out.append(p)
    return out


class Verification(Record, mutable=True):
    """What a fix and the next apply do to the values of one object."""

    __slots__ = ("changes", "dropped_kept", "dropped_removed", "fix_changes", "fix_error", "fixed", "hidden", "intent",
                 "run", "unexpected")
    fixed: dict[str, Any] | None
    """The object after the fix's requests (None when they fail)."""
    run: ApplierRun | None
    fix_error: str | None
    fix_changes: list[ValueChange]
    changes: list[ValueChange]
    unexpected: list[ValueChange]
    """Changes the user did not ask for: the fix must not be offered."""
    dropped_removed: list[Path]
    dropped_kept: list[tuple[Path, tuple[str, ...]]]
    """Fields the previous configuration set that the manifest dropped and that stay (with their
    owners after the apply): they are never pruned."""
    intent: Intent | None
    hidden: frozenset[str]
    """A Secret's values (:func:`~kubectl_fieldown.base.redact.secret_texts`), scrubbed from the problems:
    an error of the fix or of the next apply can quote them (the typed conversion's 500 does)."""

    def __init__(
        self,
        fixed: dict[str, Any] | None,
        run: ApplierRun | None = None,
        fix_error: str | None = None,
        fix_changes: list[ValueChange] | None = None,
        changes: list[ValueChange] | None = None,
        unexpected: list[ValueChange] | None = None,
        dropped_removed: list[Path] | None = None,
        dropped_kept: list[tuple[Path, tuple[str, ...]]] | None = None,
        intent: Intent | None = None,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self.fixed = fixed
        self.run = run
        self.fix_error = fix_error
        self.fix_changes = fix_changes if fix_changes is not None else []
        self.changes = changes if changes is not None else []
        self.unexpected = unexpected if unexpected is not None else []
        self.dropped_removed = dropped_removed if dropped_removed is not None else []
        self.dropped_kept = dropped_kept if dropped_kept is not None else []
        self.intent = intent
        self.hidden = hidden

    @property
    def apply_error(self) -> str | None:
        if self.run is None or self.run.failure is None:
            return None
        return self.run.failure_message

    @property
    def ok(self) -> bool:
        return (self.fix_error is None and not self.fix_changes and not self.unexpected
                and self.apply_error is None)

    @property
    def final(self) -> dict[str, Any] | None:
        if self.run is not None and self.run.result is not None:
            return self.run.result
        return self.fixed

    def problems(self) -> list[str]:
        """One line per reason the fix is refused."""
        out: list[str] = []
        if self.fix_error:
            out.append(f"the fix itself would fail: {self.fix_error}")
        out += [f"the fix would change {c.describe()}" for c in self.fix_changes]
        if self.apply_error:
            out.append(f"the next apply would fail: {self.apply_error}")
        out += [f"the next apply would {'delete' if c.kind == 'deleted' else 'change'} {c.describe()}"
                for c in self.unexpected]
        return [scrub(x, self.hidden) for x in out]


def verify(
    live: Mapping[str, Any],
    fix: Sequence[WriteRequest],
    rules: ResourceRules,
    *,
    now: str,
    applier: Applier | None = None,
    next_manifest: Mapping[str, Any] | None = None,
    previous_manifest: Mapping[str, Any] | None = None,
    keep: Sequence[Path] = (),
    also_own: Sequence[str] = (),
    played: ApplierRun | None = None,
    intents: dict[Any, Any] | None = None,
) -> Verification:
    """Simulate ``fix`` and then ``applier`` applying ``next_manifest``, and judge every value change
    against the user's intent (:class:`.intent.Intent`, on the live object before the fix).

    ``previous_manifest`` is what the applier applied before, where the caller knows it (its fields
    count as the previous configuration's); ``also_own`` names further managers that are the
    applier's own previous identities (the applier a client-side migration comes back from). Without
    an applier or a manifest only the fix itself is checked. ``played`` is the
    applier's run on ``live`` for ``next_manifest`` when the caller has played it already (no fix: the
    same run; with a fix it is not used). ``intents``: the intents found for ``live`` already (by
    :class:`Checks`, which verifies every candidate fix of one object with the same manifests)."""
    hidden = secret_texts(live, next_manifest, previous_manifest)
    try:
        fixed = simulate_requests(live, fix, rules, now=now)
    except RequestFailed as e:
        return Verification(None, fix_error=f"{e.message} ({e.status})", hidden=hidden)
    v = Verification(fixed, hidden=hidden)
    # no request, no change (the fixed object is the live one): the comparison would walk it for nothing
    v.fix_changes = value_changes(live, fixed, rules) if fix else []
    if applier is None or next_manifest is None:
        return v
    run = played if played is not None and not fix else run_applier(applier, fixed, next_manifest, rules, now=now)
    v.run = run
    after = run.result if run.result is not None else fixed
    v.changes = value_changes(live, after, rules)
    kept = list(keep)
    intent = _intent(live, applier, next_manifest, rules, previous_manifest, also_own, intents)
    v.intent = intent
    in_next = Lookup(next_manifest)
    for ch in v.changes:
        if any(is_prefix(k, ch.path) or is_prefix(ch.path, k) for k in kept):
            v.unexpected.append(ch)
            continue
        if _asked(ch, in_next, intent, after, rules):
            if ch.kind != "added" and in_next.at(ch.path) is MISSING:
                v.dropped_removed.append(ch.path)
            continue
        v.unexpected.append(ch)
    owners = decode_entries((after.get("metadata") or {}).get("managedFields")) if isinstance(after, Mapping) \
        else []
    in_after, in_live = Lookup(after), Lookup(live)
    # the same for every candidate fix of the object (one intent and manifest): found once
    for p in remembered(intents, (intent, next_manifest), _dropped, intent, next_manifest, rules, also="dropped"):
        if any(is_prefix(k, p) or is_prefix(p, k) for k in kept):
            continue
        if in_after.at(p) is not MISSING and in_live.at(p) is not MISSING:
            if comes_back_defaulted(after, p, rules):
                # at its schema default: deleted, the server would set it again (client-side apply's
                # null is defaulted back and owned by its manager): nothing is kept that could go
                continue
            v.dropped_kept.append((p, _owners(owners, p)))
    return v


def _intent(live: Mapping[str, Any], applier: Applier, next_manifest: Mapping[str, Any], rules: ResourceRules,
            previous: Mapping[str, Any] | None, also_own: Sequence[str], intents: dict[Any, Any] | None) -> Intent:
    """The intent on ``live`` (before any fix: the same for every candidate), remembered in ``intents``
    (a :class:`Checks`' own, for one live object and its rules) by the identity of the manifests."""
    return remembered(intents, (next_manifest, previous), Intent.of, live, applier, next_manifest, rules.root,
                      previous, also_own, also=(tuple(also_own), applier))


def _asked(ch: ValueChange, manifest: Lookup, intent: Intent, after: Mapping[str, Any], rules: ResourceRules) -> bool:
    """A change the next manifest asks for: its value, an addition, or a field it dropped that only
    the applier's previous configuration set — deleted, or set to its schema default again by the
    server in the same write (what dropping a defaulted field means)."""
    if ch.kind == "added":
        return True
    wanted = manifest.at(ch.path)
    if ch.kind == "changed":
        if wanted is not MISSING:
            return values_equal(wanted, ch.after)
        return intent.deletion_asked(ch.path) and comes_back_defaulted(after, ch.path, rules)
    # every field that goes with it: a map that only the applier's configuration created may hold a
    # key someone else set (an untracked ``kubectl patch`` after a reset)
    return wanted is MISSING and all(intent.deletion_asked(q) for q in ch.removed or (ch.path,))


def _dropped(intent: Intent, manifest: Mapping[str, Any], rules: ResourceRules) -> list[Path]:
    """The fields the previous configuration set that the manifest no longer sets (topmost)."""
    try:
        # one document per manifest within the object's audit, so that its set is found once
        wanted = to_field_set(remembered(memo("without_meta"), (manifest,), _without_meta, manifest), rules.root)
    except ValueError:
        return []
    # by the schema: a map the manifest left empty covers nothing below it
    gone = FieldSet(p for p in intent.own.leaves().not_prefixes_of(wanted).sorted_paths()
                    if not under_leaf(wanted, p, rules.root))
    # the labels and annotations maps themselves are no value anyone sets: their keys are
    return _topmost(gone.difference(BOOKKEEPING).difference(_METADATA_MAPS))


_METADATA_MAPS = FieldSet([path_from_fields("metadata", "labels"), path_from_fields("metadata", "annotations")])


def _without_meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    md = out.pop("metadata", None)
    if isinstance(md, Mapping):
        kept = {k: v for k, v in md.items() if k in ("labels", "annotations")}
        if kept:
            # an empty map would be a member of the set, covering every metadata field below it
            out["metadata"] = kept
    return out


def _owners(entries: Sequence[ManagedFieldsEntry], p: Path) -> tuple[str, ...]:
    out = []
    for e in entries:
        if e.fields.has(p) or not e.fields.descend(p).is_empty():
            label = e.manager + (f" ({e.subresource})" if e.subresource else "") \
                + (" (Update)" if e.operation == "Update" else "")
            out.append(label)
    return tuple(sorted(set(out)))


class Checks:
    """The verifications made for one live object, each remembered by its inputs: a fix chosen for an
    audit is checked as it is chosen and again as its printed command checks itself, mostly with the
    same requests and manifests (equal copies). Inputs are told apart by their ``repr``, which keeps
    1, 1.0, True and "1" apart (dict equality does not), once ``marshal`` has found them made of
    built-in types only (whose ``repr`` is exact); other inputs are checked afresh."""

    def __init__(self, live: Mapping[str, Any], rules: ResourceRules, now: str) -> None:
        self.live, self.rules, self.now = live, rules, now
        self._done: dict[str, Verification] = {}
        self._intents: dict[Any, Any] = {}

    @classmethod
    def of(cls, known: Checks | None, live: Mapping[str, Any], rules: ResourceRules, now: str) -> Checks:
        """``known`` when it holds this object's checks (the same object, rules and time), else new ones."""
        if known is not None and known.live is live and known.rules is rules and known.now == now:
            return known
        return cls(live, rules, now)

    def verify(self, fix: Sequence[WriteRequest], *, applier: Applier | None = None,
               next_manifest: Mapping[str, Any] | None = None, previous_manifest: Mapping[str, Any] | None = None,
               keep: Sequence[Path] = (), also_own: Sequence[str] = (),
               played: ApplierRun | None = None) -> Verification:
        key: str | None = None
        same: tuple[Any, ...] | None = None
        store = memo("checks") if played is None else None
        if store is not None:
            # inside the object's identity block the inputs are not changed in place: the very same
            # ones (the plan's requests are remembered, the manifests too) are the same check, known
            # without the text of them all
            same = (id(self), id(fix), id(applier), id(next_manifest), id(previous_manifest), tuple(keep),
                    tuple(also_own))
            hit = store.get(same)
            if hit is not None and not CHECK:
                known_v: Verification = hit[1]
                return known_v
        if played is None:
            try:
                inputs: Any = (
                    [(type(r).__name__, r.ops if isinstance(r, JsonPatchRequest) else r.body, r.field_manager,
                      r.force if isinstance(r, ApplyRequest) else None, r.purpose) for r in fix],
                    _fields_of(applier) if applier is not None else None,
                    next_manifest, previous_manifest, tuple(keep), tuple(also_own))
                marshal.dumps(inputs)  # only built-in JSON types, exactly (else ValueError): then
                key = repr(inputs)  # tells them apart as marshal does, and copies that share less alike
            except ValueError:
                key = None
            known = self._done.get(key) if key is not None else None
            if CHECK and store is not None and same is not None and same in store:
                assert key is None or known is store[same][1], \
                    "an input changed in place while its check was remembered"
            if known is not None:
                return known
        v = verify(self.live, fix, self.rules, now=self.now, applier=applier, next_manifest=next_manifest,
                   previous_manifest=previous_manifest, keep=keep, also_own=also_own, played=played,
                   intents=self._intents)
        if key is not None:
            self._done[key] = v
        if store is not None and same is not None:
            store[same] = ((self, fix, applier, next_manifest, previous_manifest), v)
        return v


def _fields_of(applier: Applier) -> tuple[Any, ...]:
    """Every option of the applier (its kind by value: marshal takes no enum)."""
    return (applier.kind.value, *(getattr(applier, f.name) for f in fields(applier) if f.name != "kind"))
