"""client-go ``util/csaupgrade``, exactly: what clients do to managedFields, not what the server does.

``kubectl apply --server-side`` (since 1.26), Flux and other appliers call it to move the fields of
client-side-apply managers into their server-side Apply entry. Reproducing it matters because the
re-apply that follows then deletes fields the manifest dropped, which a single server-side apply
would have kept. (:mod:`kubectl_fieldown.remedies.plans` is our own, generalised migration; this module
is the upstream algorithm, quirks included: only Update entries of the target's apiVersion are
merged, entries of other versions are dropped.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..fieldpath import FieldSet
from ..ownership.managedfields import APPLY, UPDATE, ManagedFieldsEntry


def upgrade_managed_fields(
    entries: Sequence[ManagedFieldsEntry],
    csa_managers: Iterable[str],
    ssa_manager: str,
    subresource: str = "",
) -> list[ManagedFieldsEntry]:
    """``csaupgrade.UpgradeManagedFields`` on decoded entries.

    Go iterates the manager set in random order; the order only matters when several client-side
    managers are merged into a target that does not exist yet, and here it is sorted.
    """
    out = list(entries)
    for csa in sorted(set(csa_managers)):
        out = _upgrade_one(out, csa, ssa_manager, subresource)
    return out


def _upgrade_one(
    entries: list[ManagedFieldsEntry], csa: str, ssa: str, subresource: str
) -> list[ManagedFieldsEntry]:
    entries = list(entries)
    target = next(
        (i for i, e in enumerate(entries)
         if e.manager == ssa and e.operation == APPLY and e.subresource == subresource),
        None,
    )
    if target is None:
        # the first matching client-side entry in the server's order (oldest first) becomes the applier
        target = next(
            (i for i, e in enumerate(entries) if e.manager == csa and e.operation == UPDATE
             and e.subresource == subresource),
            None,
        )
        if target is None:
            return entries
        entries[target] = entries[target].replace(operation=APPLY, manager=ssa)
    tgt = entries[target]
    source = next(
        (e for e in entries if e.manager == csa and e.operation == UPDATE and e.subresource == subresource
         and e.api_version == tgt.api_version),
        None,
    )
    fields: FieldSet = tgt.fields if source is None else tgt.fields.union(source.fields)
    entries[target] = tgt.with_fields(fields)
    return [e for e in entries if not (e.manager == csa and e.operation == UPDATE and e.subresource == subresource)]


def find_fields_owners(
    entries: Sequence[ManagedFieldsEntry], operation: str, fields: FieldSet
) -> list[ManagedFieldsEntry]:
    """``csaupgrade.FindFieldsOwners``: entries of that operation whose set holds every path of ``fields``."""
    return [e for e in entries if e.operation == operation and all(e.fields.has(p) for p in fields)]
