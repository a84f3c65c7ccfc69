"""The audit's finding catalogue: ids, severities, titles and why each hurts (docs/audit.md repeats it)."""

from __future__ import annotations

import enum
from typing import Final

from ..base.objects import ANNOTATIONS_LIMIT
from ..base.record import Record
from ..ownership.managedfields import (
    ANCIENT_CHANGES,
    BEFORE_FIRST_APPLY,
    KUBECTL,
    KUBECTL_CLIENT_SIDE_APPLY,
    KUBECTL_LAST_APPLIED,
)

__all__ = [
    "ANNOTATIONS_LIMIT",
    "AUTOSCALER_MANAGERS",
    "ERROR",
    "IMPERATIVE_MANAGERS",
    "INFO",
    "NOT_IMPERATIVE",
    "RULES",
    "SERVER_MANAGERS",
    "WARNING",
    "Rule",
    "Severity",
]


class Severity(str, enum.Enum):
    """How much a finding hurts; ``--fail-on`` compares by :attr:`rank`."""

    info = "info"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return _RANK[self.value]


_RANK = {"info": 0, "warning": 1, "error": 2}


class Rule(Record):
    __slots__ = ("id", "rationale", "severity", "title")
    id: Final[str]
    severity: Final[Severity]
    title: Final[str]
    rationale: Final[str]

    def __init__(self, id: str, severity: Severity, title: str, rationale: str) -> None:
        self.id = id
        self.severity = severity
        self.title = title
        self.rationale = rationale


INFO, WARNING, ERROR = Severity.info, Severity.warning, Severity.error

#: The finding catalogue, in the order the summary lists it.
RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("predicted-conflict", ERROR, "the applier's next apply would conflict",
         "the engine played the applier's requests for the given manifest: without force the apply fails with 409; "
         "an applier that forces (Argo CD, Flux) takes the fields from their owners silently"),
    Rule("values-at-risk", ERROR, "no fix keeps every value",
         "the engine played every candidate fix and then the applier's next apply (the same simulation as "
         "conflicts --applier): each one deletes or changes a value nobody asked to change, or fails; the "
         "finding lists what will change"),
    Rule("dropped-fields-stay", ERROR, "fields the manifest dropped stay",
         "with -f: the manifest no longer sets fields that only the applier's previous configuration set, and the "
         "engine's simulation of the next apply (after the fix) keeps them, owned by a manager the applier never "
         "prunes; a warning when the fix makes them go"),
    Rule("inferred-deletions", ERROR, "deletions that rest on a guess of the applier's history",
         "with -f: the next apply deletes fields the manifest no longer sets whose owner is the applier's previous "
         "identity only because it recorded the same configuration (the annotation for an applier under another "
         "name, which kubectl's own migration folds into it; another tool's entry), or only by an annotation whose "
         "writer no managedFields entry records (after a reset): if the applier is in fact another writer beside "
         "it, or the annotation is older than an apply whose record the reset erased, they are not its values"),
    Rule("superseded-deletions", ERROR, "deletions of fields only an older configuration set",
         "with -f: the next apply deletes fields that an older configuration of the applier set (an earlier tool or "
         "manager name) and a later one did not: its own, or another manager's whole configuration that holds at "
         "least half of the manifest's fields; that later apply could not prune them, so they stayed, and "
         "whether they are still wanted no manifest since has said"),
    Rule("unclaimed-fields-stay", ERROR, "fields of an earlier configuration stay",
         "with -f: the engine's simulation of the next apply keeps fields the manifest does not set that only another "
         "applier's Apply entry, a whole-configuration writer (helm, kubectl create/replace, the client-side "
         "manager) or nobody (before-first-apply, ancient-changes, an untracked object) owns: whether they were "
         "this applier's, dropped from its manifest, or another writer's, the object cannot say"),
    Rule("hpa-replicas-trap", ERROR, "replicas in the last-applied annotation, scaled by someone else",
         "every client-side apply resets .spec.replicas to the manifest's value, fighting the autoscaler; "
         "removing replicas from the manifest makes the next client-side apply delete the field (scale to the "
         "default); a server-side applier conflicts with the scale writer"),
    Rule("secret-last-applied", ERROR, "Secret with a last-applied annotation",
         "kubectl copied the Secret's data in clear (base64) into an annotation, which is shown wherever metadata "
         "is (describe, audit logs, metadata-only watches, backups that redact data)"),
    Rule("last-applied-size", WARNING, "last-applied annotation close to the 256 KiB limit",
         "annotations are limited to 256 KiB in total; once the annotation grows past it every client-side "
         "apply fails (size is in the finding; error at 90% of the limit)"),
    Rule("mixed-appliers", WARNING, "client-side and server-side appliers",
         "client-side apply (kubectl-client-side-apply) and server-side appliers manage the same object: fields "
         "removed from one manifest stay owned by the other manager and are never pruned"),
    Rule("client-side-apply", WARNING, "managed by client-side apply",
         "a switch to any server-side applier inherits the last-applied annotation and the "
         "kubectl-client-side-apply manager: fields it owns conflict or are never pruned until migrated"),
    Rule("apply-and-update-same-manager", WARNING, "one manager name both applies and updates",
         "the Update entry keeps its fields when the manager's next apply drops them, and the manager's own "
         "apply conflicts with it when values differ"),
    Rule("stale-applier", WARNING, "another applier still owns fields",
         "an Apply entry of a manager that is not the applier (a previous GitOps tool, a one-off server-side "
         "apply): its fields are never pruned when the applier drops them, and conflict when values differ"),
    Rule("update-manager-keeps-fields", WARNING, "an updater co-owns fields the applier sets",
         "an Update manager (Helm 3, a controller, a script) owns fields the applier also sets: after a switch to "
         "server-side apply, dropping them from the manifest does not remove them"),
    Rule("imperative-writer", WARNING, "fields owned by imperative writers",
         "kubectl edit/patch/scale/label/... own fields (Update); a declarative applier that sets them to another "
         "value conflicts (or with force takes them over silently)"),
    Rule("before-first-apply", WARNING, "before-first-apply owns fields",
         "the server gave every field that existed at the first server-side apply to before-first-apply: appliers "
         "conflict on them and can never prune them"),
    Rule("last-applied-drift", WARNING, "live value differs from the last-applied annotation",
         "someone changed a field that the annotation records: the next client-side apply silently reverts it, "
         "and kubectl's server-side conflict waiver does not cover it"),
    Rule("ancient-changes", INFO, "ancient-changes owns fields",
         "more than 10 Update managers: the oldest were merged into ancient-changes, so who wrote those fields "
         "is lost; appliers conflict with it"),
    Rule("untracked", INFO, "no managedFields",
         "nothing is tracked: the first server-side apply records every existing field as before-first-apply"),
    # errors, so that the default --fail-on fails an audit that did not see everything (issue 18)
    Rule("type-forbidden", ERROR, "resource type not listable (403)",
         "the audit is incomplete: the credentials may not list this type"),
    Rule("type-error", ERROR, "resource type could not be listed",
         "the audit is incomplete: listing this type failed after retries"),
    # audit --context A --context B / --all-contexts: a cluster nobody looked at never passes for a clean one
    Rule("context-unreachable", ERROR, "kubeconfig context not audited",
         "the context could not be reached or read (no such context, connection refused, credentials "
         "refused, nothing listable): the audit says nothing about that cluster"),
)}

ORDER = {rid: i for i, rid in enumerate(RULES)}

#: Update managers that are imperative writers (globs): kubectl's per-command managers and plain
#: ``kubectl`` (kubectl scale, and kubectl before 1.18, send no fieldManager; the server names
#: the manager after the User-Agent)
IMPERATIVE_MANAGERS: tuple[str, ...] = (KUBECTL, "kubectl-*")
#: kubectl managers that are not imperative writers: client-side apply has its own finding, and
#: kubectl-last-applied only owns the annotation for kubectl apply --server-side
NOT_IMPERATIVE = frozenset({KUBECTL_CLIENT_SIDE_APPLY, KUBECTL_LAST_APPLIED})
SERVER_MANAGERS = frozenset({BEFORE_FIRST_APPLY, ANCIENT_CHANGES})
#: autoscalers that write replicas without the scale subresource (writes through the scale
#: subresource, which the HorizontalPodAutoscaler controller uses, are recognised as such)
AUTOSCALER_MANAGERS: tuple[str, ...] = ("horizontal-pod-autoscaler", "keda-operator*", "*autoscaler*", "vpa-*")
