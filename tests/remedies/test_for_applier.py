"""``migrate --for``: the applier's own first-sync migration, done ahead of time, checked (pure)."""

from __future__ import annotations

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.ownership.managedfields import APPLY
from kubectl_fieldown.remedies.commands import Handover, MigrateFor, MigrateToServerSide, PlanContext
from kubectl_fieldown.remedies.writeplan import write_plan

from .states import NOW, RULES, client_side_created, labelled, scaled

CTX = PlanContext(RULES.root)


def test_each_applier_folds_what_its_own_migration_folds() -> None:
    assert MigrateFor(Applier.of("argocd")).migration() == MigrateToServerSide(
        ("kubectl-client-side-apply",), "argocd-controller")
    assert MigrateFor(Applier.of("argocd", csa_manager="ci")).migration().sources == ("ci",)
    flux = MigrateFor(Applier.of("flux", override_managers=("old-",))).migration()
    assert flux.target == "kustomize-controller"
    assert flux.sources == ("kubectl*", "kubectl-last-applied", "before-first-apply", "kustomize-controller", "old-*")
    assert MigrateFor(Applier.of("helm")).migration() == MigrateToServerSide(("helm",), "helm")
    assert MigrateFor(Applier.of("kubectl")).migration() == MigrateToServerSide(("kubectl-client-side-apply",),
                                                                               "kubectl")


def test_the_command_line_names_the_applier_and_its_options() -> None:
    assert MigrateFor(Applier.of("flux")).args() == ["--for", "flux"]
    assert MigrateFor(Applier.of("flux", "helm-controller", override_managers=("kustomize-controller",))).args() == [
        "--for", "flux:helm-controller", "--from-manager", "kustomize-controller"]
    assert MigrateFor(Applier.of("argocd", csa_manager="ci")).args() == ["--for", "argocd", "--from-manager", "ci"]


def test_argo_cd_gets_its_apply_entry_now_and_the_notes_compare_with_its_own_migration() -> None:
    obj = client_side_created()
    wp = write_plan(MigrateFor(Applier.of("argocd")), obj, CTX, RULES, now=NOW, applier=Applier.of("argocd"))
    assert wp.problems == [] and wp.alternative is None
    owners = {(e.manager, e.operation) for e in wp.migration.after}
    assert ("argocd-controller", APPLY) in owners
    assert not any(e.manager == "kubectl-client-side-apply" for e in wp.migration.after)
    assert any("same as with Argo CD" in n for n in wp.migration.notes)


def test_flux_with_a_kubectl_label_is_refused_and_names_the_fix_that_keeps_the_label() -> None:
    obj = labelled(client_side_created(), "team", "payments")
    wp = write_plan(MigrateFor(Applier.of("flux")), obj, CTX, RULES, now=NOW, applier=Applier.of("flux"))
    assert any(".metadata.labels" in p for p in wp.problems)
    assert wp.alternative is not None and wp.alternative.ok
    assert isinstance(wp.alternative.command, Handover) and wp.alternative.command.to == "manual-edits"


def test_a_scaled_replicas_is_left_out_of_the_checked_apply_and_the_user_told_to_drop_it() -> None:
    obj = scaled(client_side_created(), 7)
    wp = write_plan(MigrateFor(Applier.of("kubectl")), obj, CTX, RULES, now=NOW, applier=Applier.of("kubectl"))
    assert wp.problems == []
    assert wp.edits == ["remove .spec.replicas from your manifest (its writer keeps it)"]
    assert wp.expected is not None and wp.verification is not None
    final = wp.verification.final
    assert final is not None and final["spec"]["replicas"] == 7


def test_a_fold_of_all_fields_is_checked_with_what_the_applier_owns_after_it() -> None:
    # a client-side object (the annotation has color), then deployer's server-side apply with a
    # finalizer the annotation lacks; `migrate --from-manager deployer --field-manager ci --all-fields`
    # (audit's fix, verified with ci's manifest) declares deployer's fields ci's and removes the
    # annotation. Without -f the check took the removed annotation for ci's next manifest, and the
    # apply of it deleted the finalizer: the printed command refused (lab: generated seed-4700316)
    from kubectl_fieldown.remedies.requests import simulate_requests

    from .states import manifest, server_side_applied

    live = server_side_applied("deployer", manifest(replicas=None, color=None, labels={"b": "y"}, finalizers=["f2"]),
                               client_side_created())
    fold = MigrateToServerSide(("deployer",), "ci", all_fields=True)
    ci = Applier.of("ssa", "ci")
    wp = write_plan(fold, live, CTX, RULES, now=NOW, applier=ci)
    assert wp.problems == [], wp.problems
    assert wp.verification is not None and wp.verification.run is not None
    assert wp.verification.run.result is not None
    assert wp.verification.run.result["spec"] == live["spec"]  # ci's next apply changes nothing
    after = simulate_requests(live, wp.requests, RULES, now=NOW)
    assert after["spec"]["finalizers"] == ["f2"]
    assert [(e["manager"], e["operation"]) for e in after["metadata"]["managedFields"]
            if e["manager"] in ("ci", "deployer")] == [("ci", APPLY)]
