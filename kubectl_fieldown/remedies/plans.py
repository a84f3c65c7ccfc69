"""Ownership plans: pure functions from a live object to the managedFields and annotation it should have.

Every plan is a :class:`Migration`: the entries and last-applied annotation the object should end
up with. :meth:`Migration.requests` turns it into the requests that get it there
(:mod:`.requests`): each guarded by the object's resourceVersion, and ordered so that a run
interrupted between two of them leaves a state the same plan, made again, completes.

* :func:`plan_to_server_side` — client-go ``csaupgrade``, generalised: Update entries and the Apply
  entries of previous appliers (Flux's ``--override-manager``), a manager's own Update entry into
  its Apply entry (Helm 4), several sources (globs), every apiVersion; only the fields the target's
  manifest sets move (the rest stays with its owner, so no value can be pruned by surprise); never
  on a subresource (a ``/scale`` writer keeps ``replicas``); the last-applied annotation kept alive
  as kubectl 1.36 does it, or removed.
* :func:`plan_to_client_side` — the reverse: the annotation kubectl would have written for the
  applier's manifest, and a ``kubectl-client-side-apply`` Update entry.
* :func:`plan_strip_last_applied` — forget fields in the annotation and the client-side manager.
* :func:`plan_handover` — give fields to a manager's Apply entry; everyone else lets go.
* :func:`plan_reset` — ``[{}]``, or one manager owns all; :func:`plan_drop_managers` — remove the
  entries of stale managers (their fields stay, unowned).

The plans live by idea (this module re-exports them, the names documented in docs/library.md
included): :mod:`.migration` (:class:`Migration` and the steps every plan shares),
:mod:`.toserverside`, :mod:`.toclientside`, :mod:`.handover` (strip-last-applied, handover, reset,
dropping managers).
"""

from __future__ import annotations

from .handover import (
    applied_fields,
    plan_drop_managers,
    plan_handover,
    plan_reset,
    plan_strip_last_applied,
    remove_paths,
)
from .migration import (
    ANNOTATIONS_PATH,
    LAST_APPLIED_PATH,
    Migration,
    MigrationError,
    canonical_last_applied_owner,
    entries_differ,
)
from .toclientside import last_applied_manifest, last_applied_text, plan_to_client_side
from .toserverside import last_applied_document, last_applied_fields, plan_to_server_side

__all__ = [
    "ANNOTATIONS_PATH",
    "LAST_APPLIED_PATH",
    "Migration",
    "MigrationError",
    "applied_fields",
    "canonical_last_applied_owner",
    "entries_differ",
    "last_applied_document",
    "last_applied_fields",
    "last_applied_manifest",
    "last_applied_text",
    "plan_drop_managers",
    "plan_handover",
    "plan_reset",
    "plan_strip_last_applied",
    "plan_to_client_side",
    "plan_to_server_side",
    "remove_paths",
]
