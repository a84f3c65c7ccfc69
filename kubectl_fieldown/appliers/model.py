"""Who applies, and how: the appliers the tool knows and what their runs record.

An :class:`Applier` names a tool and the field manager it writes as. Each tool sends its own
sequence of requests for one object (see :mod:`.run`); the sequence, not a single server-side
apply, decides which fields a switch deletes, which stay forever and what conflicts:

=====================  ==============================================================================
``kubectl``            ``kubectl apply --server-side``: apply; an apply of the last-applied annotation
                       by ``kubectl-last-applied`` (manager ``kubectl`` only); client-go csaupgrade of
                       the Update entries that own the annotation; apply again
``kubectl-client-side`` ``kubectl apply``: a three-way JSON merge patch of the manifest, the live object
                       and the last-applied annotation, written by ``kubectl-client-side-apply``
``argocd``             Argo CD with ``ServerSideApply=true``: csaupgrade of one client-side manager
                       (``ClientSideApplyMigration``) into ``argocd-controller``, then a forced
                       ``kubectl apply --server-side`` (kubectl's own follow-up included)
``flux``               Flux kustomize-controller: dry-run; one JSON patch that folds the ``kubectl*``,
                       ``before-first-apply``, its own Update and ``--override-manager`` entries into
                       its Apply entry and removes the last-applied annotation; a forced apply
``helm``               Helm 4 with ``--server-side``: when the previous release was client-side (its
                       stored apply method; ``previous=server-side`` says it was not), csaupgrade of
                       its own ``helm`` Update entry into ``helm`` Apply; then apply (forced with
                       ``--force-conflicts``). Flux helm-controller (``flux:helm-controller``) is this
                       sequence as ``helm-controller``, always forced
``ssa``                one server-side apply request (controllers, client-go, scripts)
=====================  ==============================================================================
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..base.record import Record
from ..ownership.managedfields import KUBECTL, KUBECTL_CLIENT_SIDE_APPLY, ManagedFieldsEntry, decode_entries

__all__ = [
    "APPLIER_KINDS",
    "Applier",
    "ApplierError",
    "ApplierKind",
    "ApplierRun",
    "Request",
    "applier_for_manager",
    "parse_applier_spec",
]

ARGOCD_MANAGER = "argocd-controller"
FLUX_MANAGER = "kustomize-controller"
HELM_MANAGER = "helm"
#: Flux helm-controller drives the Helm SDK under its own name, and always forces on server-side
#: apply (internal/action/upgrade.go: ``upgrade.ForceConflicts = serverSideApply``)
HELM_CONTROLLER_MANAGER = "helm-controller"

#: the values of ``previous=`` (Helm's stored release apply methods and their long names)
PREVIOUS_CLIENT_SIDE = ("client-side", "csa")
PREVIOUS_SERVER_SIDE = ("server-side", "ssa")


class ApplierError(ValueError):
    """An applier named in a way the tool cannot use (one line)."""


class ApplierKind(str, enum.Enum):
    kubectl = "kubectl"
    kubectl_client_side = "kubectl-client-side"
    argocd = "argocd"
    flux = "flux"
    helm = "helm"
    ssa = "ssa"


APPLIER_KINDS: tuple[str, ...] = tuple(k.value for k in ApplierKind)

_DEFAULT_MANAGER = {
    ApplierKind.kubectl: KUBECTL,
    ApplierKind.kubectl_client_side: KUBECTL_CLIENT_SIDE_APPLY,
    ApplierKind.argocd: ARGOCD_MANAGER,
    ApplierKind.flux: FLUX_MANAGER,
    ApplierKind.helm: HELM_MANAGER,
}

_FORCED_ALWAYS = frozenset({ApplierKind.argocd, ApplierKind.flux})


@dataclass(frozen=True)
class Applier:
    """A tool that applies manifests, with the options that change its requests.

    ``force`` is ``--force-conflicts`` for kubectl and Helm and a plain forced apply for ``ssa``;
    Argo CD and Flux always force. ``csa_manager`` is Argo CD's ClientSideApplyMigration source
    (the Application annotation ``argocd.argoproj.io/client-side-apply-migration-manager``), and
    ``csa_migration=False`` is ``ClientSideApplyMigration=false``. ``override_managers`` are Flux's
    ``--override-manager`` names (prefix matches, Apply and Update).

    For Helm, ``csa_migration`` is the previous release's apply method: True when it was
    client-side (Helm 3, or Helm 4 with ``--server-side=false``), the only case where Helm 4's
    upgrade runs csaupgrade of its own Update entry; False for a release Helm 4 already applied
    server-side (``previous=server-side``), whose apply then meets its own Update entries (objects
    it created by POST) as another manager's."""

    kind: ApplierKind
    manager: str
    force: bool = False
    csa_manager: str = KUBECTL_CLIENT_SIDE_APPLY
    csa_migration: bool = True
    override_managers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.manager:
            raise ApplierError("an applier needs a field manager name")

    @classmethod
    def of(cls, kind: ApplierKind | str, manager: str | None = None, **options: Any) -> Applier:
        """An applier with its tool's default manager unless ``manager`` names another."""
        k = ApplierKind(kind)
        name = manager or _DEFAULT_MANAGER.get(k)
        if not name:
            raise ApplierError(f"--applier {k.value} needs --field-manager: the manager it applies as")
        if name == HELM_CONTROLLER_MANAGER and k in (ApplierKind.flux, ApplierKind.helm):
            # a HelmRelease is reconciled by helm-controller, which runs Helm 4's upgrade with
            # forced conflicts: no kustomize-controller cleanup (annotation, kubectl* managers)
            k = ApplierKind.helm
            options = {**options, "force": True}
        return cls(k, name, **options)

    @property
    def forces(self) -> bool:
        return self.force or self.kind in _FORCED_ALWAYS

    @property
    def helm_controller(self) -> bool:
        return self.kind is ApplierKind.helm and self.manager == HELM_CONTROLLER_MANAGER

    def spec(self, *, previous: bool = True) -> str:
        """How ``--applier`` names this applier (:func:`parse_applier_spec` reads it back);
        ``previous=False`` leaves out Helm's release apply method (``migrate --for`` takes none)."""
        if self.helm_controller:
            text = f"{ApplierKind.flux.value}:{self.manager}"
        elif self.manager == _DEFAULT_MANAGER.get(self.kind):
            text = self.kind.value
        else:
            text = f"{self.kind.value}:{self.manager}"
        if previous and self.kind is ApplierKind.helm and not self.csa_migration:
            text += f":previous={PREVIOUS_SERVER_SIDE[0]}"
        return text

    @property
    def server_side(self) -> bool:
        return self.kind is not ApplierKind.kubectl_client_side

    def describe(self) -> str:
        tool = {
            ApplierKind.kubectl: "kubectl apply --server-side",
            ApplierKind.kubectl_client_side: "kubectl apply (client-side)",
            ApplierKind.argocd: "Argo CD (ServerSideApply=true)",
            ApplierKind.flux: "Flux",
            ApplierKind.helm: "Helm 4 (--server-side)",
            ApplierKind.ssa: "a server-side apply",
        }[self.kind]
        forced = " with --force-conflicts" if self.force and self.kind in (ApplierKind.kubectl, ApplierKind.helm) \
            else " (forced)" if self.force and self.kind is ApplierKind.ssa else ""
        default = _DEFAULT_MANAGER.get(self.kind)
        named = "" if self.manager == default else f" as {self.manager}"
        if self.helm_controller:
            tool, forced, named = "Flux helm-controller (Helm 4, server-side, forced)", "", ""
        if self.kind is ApplierKind.helm:
            # the previous release's apply method decides whether Helm folds its own Update entry
            named += (", upgrading a client-side release" if self.csa_migration
                      else ", release already server-side")
        return tool + forced + named


def applier_for_manager(manager: str, *, force: bool = False) -> Applier:
    """The applier a field manager name stands for: the tools' own names map to their tools
    (``kubectl``, ``argocd-controller``, ``kustomize-controller``/``helm-controller``, ``helm``),
    ``kubectl-client-side-apply`` to client-side kubectl; anything else is a plain server-side
    applier."""
    if manager == KUBECTL:
        return Applier(ApplierKind.kubectl, manager, force=force)
    if manager == KUBECTL_CLIENT_SIDE_APPLY:
        return Applier(ApplierKind.kubectl_client_side, manager)
    if manager == ARGOCD_MANAGER:
        return Applier(ApplierKind.argocd, manager)
    if manager == FLUX_MANAGER:
        return Applier(ApplierKind.flux, manager)
    if manager == HELM_CONTROLLER_MANAGER:
        return Applier.of(ApplierKind.helm, manager)
    if manager == HELM_MANAGER:
        return Applier(ApplierKind.helm, manager, force=force)
    return Applier(ApplierKind.ssa, manager, force=force)


def parse_applier_spec(text: str, *, manager: str | None = None, force: bool = False) -> Applier:
    """``--applier``'s ``KIND[:MANAGER][:previous=client-side|server-side]``.

    ``manager`` is ``--field-manager`` (the spec's own manager wins); ``previous=`` is Helm's
    stored apply method of the release being upgraded (default client-side: the upgrade from a
    Helm 3 release). Raises :class:`ApplierError` for anything else."""
    kind_text, _, rest = text.partition(":")
    if kind_text not in APPLIER_KINDS:
        raise ApplierError(f"must be one of {', '.join(APPLIER_KINDS)} (optionally KIND:MANAGER), not {text!r}")
    parts = rest.split(":") if rest else []
    previous: str | None = None
    # options are the trailing KEY=VALUE parts; what precedes them is the manager (which may hold ':')
    while parts and "=" in parts[-1]:
        key, _, value = parts.pop().partition("=")
        if key != "previous":
            raise ApplierError(f"{text}: unknown option {key!r} (only previous=client-side|server-side, for helm)")
        if value not in PREVIOUS_CLIENT_SIDE + PREVIOUS_SERVER_SIDE:
            raise ApplierError(f"{text}: previous= takes client-side or server-side, not {value!r}")
        previous = value
    kind = ApplierKind(kind_text)
    # client-side kubectl writes as kubectl-client-side-apply unless its own --field-manager names
    # another (the spec's manager): the global --field-manager is another applier's business there
    name = ":".join(parts) or (manager if kind is not ApplierKind.kubectl_client_side else None) or None
    options: dict[str, Any] = {"force": force} if kind is not ApplierKind.kubectl_client_side else {}
    try:
        applier = Applier.of(kind, name, **options)
    except ApplierError as e:
        raise ApplierError(f"{text}: {e}") from None
    if previous is not None:
        if applier.kind is not ApplierKind.helm:
            raise ApplierError(f"{text}: previous= is the previous Helm release's apply method: only for helm "
                               "and flux:helm-controller")
        applier = Applier.of(applier.kind, applier.manager, force=applier.force,
                             csa_migration=previous in PREVIOUS_CLIENT_SIDE)
    return applier


class Request(Record):
    """One request an applier sends, and what the server answers.

    ``verb`` is ``apply``, ``json-patch``, ``merge-patch``, ``strategic-patch`` or ``create``; ``status`` the HTTP
    status the server would answer (200/201, 409 conflict, 422/400/500 rejections)."""

    __slots__ = ("body", "changed", "force", "manager", "message", "purpose", "status", "verb")
    verb: Final[str]
    manager: Final[str]
    purpose: Final[str]
    body: Final[Any]
    force: Final[bool]
    status: Final[int]
    message: Final[str]
    changed: Final[bool]
    """The object itself (not only managedFields) changed."""

    def __init__(
        self,
        verb: str,
        manager: str,
        purpose: str,
        body: Any,
        force: bool = False,
        status: int = 200,
        message: str = "",
        changed: bool = False,
    ) -> None:
        self.verb = verb
        self.manager = manager
        self.purpose = purpose
        self.body = body
        self.force = force
        self.status = status
        self.message = message
        self.changed = changed

    @property
    def ok(self) -> bool:
        return self.status < 300


class ApplierRun(Record, mutable=True):
    """What an applier's sequence does to one object.

    ``result`` is the object after the last request that succeeded (the live object when nothing
    was written; None when the object did not exist and was not created). ``error`` is the request
    that made the tool stop (kubectl exits non-zero, a GitOps sync fails); ``warnings`` are the
    requests kubectl only warns about (its migration follow-up). ``taken_over`` lists what a forced
    apply took from other managers (the conflicts it would have had without force)."""

    __slots__ = ("applier", "conflicts", "error", "live", "manifest", "requests", "result", "taken_over", "warnings")
    applier: Applier
    live: Mapping[str, Any] | None
    manifest: Mapping[str, Any]
    requests: list[Request]
    result: dict[str, Any] | None
    error: Request | None
    warnings: list[Request]
    conflicts: list[Any]
    """fieldmanager.FieldConflict of the apply that failed with 409 (empty otherwise)."""
    taken_over: list[Any]
    """fieldmanager.FieldConflict that a forced apply resolved by taking the fields."""

    def __init__(
        self,
        applier: Applier,
        live: Mapping[str, Any] | None,
        manifest: Mapping[str, Any],
        requests: list[Request] | None = None,
        result: dict[str, Any] | None = None,
        error: Request | None = None,
        warnings: list[Request] | None = None,
        conflicts: list[Any] | None = None,
        taken_over: list[Any] | None = None,
    ) -> None:
        self.applier = applier
        self.live = live
        self.manifest = manifest
        self.requests = requests if requests is not None else []
        self.result = result
        self.error = error
        self.warnings = warnings if warnings is not None else []
        self.conflicts = conflicts if conflicts is not None else []
        self.taken_over = taken_over if taken_over is not None else []

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def failure(self) -> Request | None:
        """The request that keeps the run from doing what it is for: the one the tool stopped on, or
        kubectl's second apply after its managedFields migration, which kubectl only warns about —
        the fields the manifest dropped then stay."""
        if self.error is not None or not self.warnings:
            return self.error
        return next((r for r in self.warnings if r.verb == "apply" and r.purpose.startswith("apply again")), None)

    @property
    def failure_message(self) -> str:
        r = self.failure
        if r is None:
            return ""
        if r is self.error:
            return r.message
        return (f"{r.message} (kubectl's second apply, after folding the client-side manager; kubectl only "
                "warns, and the fields the manifest dropped stay)")

    @property
    def entries(self) -> list[ManagedFieldsEntry]:
        if self.result is None:
            return []
        return decode_entries((self.result.get("metadata") or {}).get("managedFields"))

    @property
    def writes(self) -> list[Request]:
        """The requests that the server accepted (they are what the tool changes)."""
        return [r for r in self.requests if r.ok]
