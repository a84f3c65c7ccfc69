"""One verified fix per object (kubectl_fieldown.remedies.choose), on engine-built histories: the cases
the remedies issue reported, for each applier. Each fix is checked by the engine — the fix's
requests, then the applier's own request sequence — and must keep every value the user did not drop."""

from __future__ import annotations

from typing import Any

import pytest
from engine.schemas import defaulting_rules, thing

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.base.identitymemo import IdentityMemo
from kubectl_fieldown.fieldpath import parse_path, path_string
from kubectl_fieldown.remedies.choose import KEEPER, choose_fix, verify_command
from kubectl_fieldown.remedies.commands import (
    Handover,
    MigrateFor,
    MigrateToClientSide,
    MigrateToServerSide,
    PlanContext,
    Reset,
    StripLastApplied,
    planned,
)
from kubectl_fieldown.remedies.requests import requests_for, simulate_requests

from .states import (
    NOW,
    RULES,
    client_side_created,
    edited,
    labelled,
    manifest,
    scaled,
    server_side_applied,
    stored,
    updated,
)

REPLICAS = parse_path(".spec.replicas")


def fix_for(obj: dict[str, Any], kind: str, manager: str | None = None, **kw: Any) -> Any:
    return choose_fix(obj, RULES, Applier.of(kind, manager), now=NOW, **kw)


def scaled_and_labelled() -> dict[str, Any]:
    """kubectl apply (client-side); kubectl scale --replicas=7; kubectl label team=payments."""
    return labelled(scaled(client_side_created(), 7), "team", "payments")


def test_client_side_apply_keeps_scaling_when_replicas_leave_the_annotation() -> None:
    fix = fix_for(scaled_and_labelled(), "kubectl-client-side")
    assert fix.ok
    assert fix.command == StripLastApplied((REPLICAS,))
    assert [path_string(p) for p in fix.drop] == [".spec.replicas"]
    final = fix.verification.final
    assert final is not None and final["spec"]["replicas"] == 7 and final["metadata"]["labels"]["team"] == "payments"


def test_kubectl_server_side_needs_no_command_only_replicas_out_of_the_manifest() -> None:
    fix = fix_for(scaled_and_labelled(), "kubectl")
    assert fix.ok and fix.command is None
    assert [path_string(p) for p in fix.drop] == [".spec.replicas"]
    # kubectl's own follow-up (annotation apply, csaupgrade, apply again) ran in the check
    assert fix.verification.run is not None
    assert [r.purpose for r in fix.verification.run.requests][-1] == "apply again by kubectl"


def test_argo_cd_migrates_by_itself() -> None:
    fix = fix_for(scaled_and_labelled(), "argocd")
    assert fix.ok and fix.command is None


def test_flux_would_fold_kubectl_label_into_itself_and_prune_the_label_so_it_moves_aside() -> None:
    obj = scaled_and_labelled()
    nothing = verify_command(None, obj, RULES, PlanContext(RULES.root), Applier.of("flux"), now=NOW,
                             next_manifest=manifest(replicas=None), previous_manifest=manifest())
    assert [c.describe() for c in nothing.unexpected] == ['.metadata.labels ({"team": "payments"} -> unset)']
    fix = fix_for(obj, "flux")
    assert fix.ok
    assert fix.command == Handover((parse_path(".metadata.labels.team"),), KEEPER)


def test_the_old_remedy_reset_to_manager_is_refused_because_the_next_apply_deletes_values() -> None:
    obj = scaled_and_labelled()
    ctx = PlanContext(RULES.root)
    stripped = simulate_requests(obj, requests_for(StripLastApplied((REPLICAS,)).plan(obj, ctx)), RULES, now=NOW)
    v = verify_command(Reset("kubectl"), stripped, RULES, ctx, Applier.of("kubectl"), now=NOW,
                       next_manifest=manifest(replicas=None), previous_manifest=manifest(), keep=(REPLICAS,))
    assert not v.ok
    assert {path_string(c.path) for c in v.unexpected} == {".metadata.labels", ".spec.replicas"}


def test_server_side_apply_then_scale_drops_replicas_from_the_manifest_instead_of_a_reset() -> None:
    fix = fix_for(scaled(server_side_applied(), 5), "kubectl")
    assert fix.ok and fix.command is None
    assert [path_string(p) for p in fix.drop] == [".spec.replicas"]


@pytest.mark.parametrize("kind", ["kubectl", "argocd", "flux"])
def test_a_named_manifest_without_replicas_needs_no_edit_for_them(kind: str) -> None:
    obj = scaled(server_side_applied(), 5)
    fix = fix_for(obj, kind, manifest=manifest(replicas=None))
    assert fix.ok and fix.drop == ()
    final = fix.verification.final
    assert final is not None and final["spec"]["replicas"] == 5
    # the same manifest still setting replicas: that one field leaves it
    fix = fix_for(obj, kind, manifest=manifest())
    assert [path_string(p) for p in fix.drop] == [".spec.replicas"]


def test_helm_4_upgrading_from_helm_3_folds_its_update_entry_by_itself() -> None:
    obj = updated(server_side_applied("helm"), "helm", lambda o: o["spec"].update(color="green"))
    fix = fix_for(obj, "helm", manifest=manifest(color="yellow"))
    assert fix.ok and fix.command is None


def test_helm_update_entry_folds_into_its_apply_entry() -> None:
    obj = updated(server_side_applied("helm"), "helm", lambda o: o["spec"].update(color="green"))
    # a Helm 4 release that was already server-side: Helm does not fold the entry itself (it only does
    # on its client-side -> server-side upgrade), so the apply would conflict with "helm" using v1
    nothing = verify_command(None, obj, RULES, PlanContext(RULES.root),
                             Applier.of("helm", csa_migration=False), now=NOW,
                             next_manifest=manifest(color="yellow"), previous_manifest=manifest())
    assert nothing.apply_error is not None and 'conflict with "helm" using example.com/v1' in nothing.apply_error
    fix = choose_fix(obj, RULES, Applier.of("helm", csa_migration=False), now=NOW, manifest=manifest(color="yellow"))
    assert fix.ok
    assert isinstance(fix.command, MigrateToServerSide) and fix.command.target == "helm"
    assert "helm" in fix.command.sources


def test_a_previous_appliers_entry_folds_into_the_new_applier_so_dropped_fields_go() -> None:
    obj = server_side_applied("kustomize-controller", manifest(color="red"))
    obj = server_side_applied("helm-controller", manifest(color="red"), live=obj)
    fix = fix_for(obj, "ssa", "helm-controller", manifest=manifest(color=None))
    assert fix.ok
    assert fix.command == MigrateToServerSide(("kustomize-controller",), "helm-controller", None)
    final = fix.verification.final
    assert final is not None and "color" not in final["spec"]


def test_client_side_history_folds_into_a_plain_server_side_applier() -> None:
    # kubernetes#99003: without the migration the field the manifest dropped would stay forever
    fix = fix_for(client_side_created(), "ssa", "ci-applier", manifest=manifest(color=None))
    assert fix.ok
    assert fix.command == MigrateToServerSide(("kubectl-client-side-apply",), "ci-applier", None)
    final = fix.verification.final
    assert final is not None and "color" not in final["spec"] and final["spec"]["replicas"] == 2


def test_an_imperative_edit_the_manifest_overrides_is_folded_in() -> None:
    fix = fix_for(edited(client_side_created(), color="green"), "kubectl")
    assert fix.ok
    assert isinstance(fix.command, MigrateToServerSide) and "kubectl-edit" in fix.command.sources


def test_the_annotation_can_only_go_with_a_server_side_applier() -> None:
    assert fix_for(client_side_created(), "kubectl", drop_last_applied=True).command == \
        MigrateToServerSide(("kubectl-client-side-apply",), "kubectl", False)
    refused = fix_for(client_side_created(), "kubectl-client-side", drop_last_applied=True)
    assert not refused.ok and "needs the last-applied annotation" in refused.refusal


def test_an_applier_nothing_records_cannot_be_said_to_keep_every_value_without_a_manifest() -> None:
    # Argo CD applied it; kubectl never did: with no manifest named, kubectl's next apply cannot be
    # played, so no fix is verified (it used to say "nothing to run: keeps every value")
    obj = server_side_applied("argocd-controller", manifest(color="red"))
    fix = fix_for(obj, "kubectl")
    assert not fix.ok and fix.command is None and fix.verification.run is None
    assert "cannot be checked" in fix.refusal and "-f" in fix.refusal
    # with the manifest, its apply is played and judged as usual
    named = fix_for(obj, "kubectl", manifest=manifest(color="red"))
    assert named.ok and named.verification.run is not None and not named.refusal
    # a command is still offered when it holds on its own terms: back to client-side apply, the
    # annotation rebuilt from what kubectl applied server-side
    back = fix_for(server_side_applied("kubectl", manifest(color="red")), "kubectl-client-side")
    assert back.ok and back.command == MigrateToClientSide("kubectl") and not back.refusal


def test_an_object_only_its_applier_wrote_needs_no_simulation_and_the_simulation_agrees(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_fieldown.remedies import choose
    from kubectl_fieldown.remedies.manifests import inferred_manifest

    cases = [(client_side_created(), "kubectl-client-side", None), (server_side_applied(), "kubectl", None),
             (server_side_applied("ci"), "ssa", "ci"), (server_side_applied("argocd-controller"), "argocd", None)]
    for obj, kind, manager in cases:
        applier = Applier.of(kind, manager)
        # the long way: the applier's own manifest given explicitly is simulated
        slow = choose_fix(obj, RULES, applier, now=NOW, manifest=inferred_manifest(obj, applier, RULES.root))
        assert slow.ok and slow.command is None and not slow.drop, kind
        with monkeypatch.context() as m:
            m.setattr(choose, "verify_command", lambda *a, **kw: pytest.fail("simulated"))
            fast = choose_fix(obj, RULES, applier, now=NOW)
        assert fast.ok and fast.command is None and not fast.drop, kind
    # anyone else's entry (a scale, a label) means the long way
    with monkeypatch.context() as m:
        m.setattr(choose, "verify_command", lambda *a, **kw: pytest.fail("simulated"))
        with pytest.raises(pytest.fail.Exception):
            choose_fix(scaled(client_side_created(), 3), RULES, Applier.of("kubectl-client-side"), now=NOW)


def test_a_field_another_applier_keeps_after_a_skipped_flux_apply_is_unclaimed() -> None:
    """Soak seed 52's seed-5200642: Flux applied, Helm applied the same configuration, and Flux's
    next manifest drops fields without changing a value — Flux does not apply then, so
    kustomize-controller's entry still holds them next to helm's. They stay with helm's values, which
    is right if helm is another writer and never undone if it was this pipeline under another tool:
    the object cannot tell, and unclaimed-fields-stay must say so (kustomize-controller's leftover
    hold hid them)."""
    labels = {"a": "x", "b": "y"}
    obj = server_side_applied("kustomize-controller", manifest(labels=labels))
    obj = server_side_applied("helm", manifest(labels=labels), live=obj)
    nxt = manifest(labels=None)
    fix = fix_for(obj, "flux", manifest=nxt)
    assert fix.ok and fix.command is None
    unclaimed = {path_string(p): owners for p, owners in fix.unclaimed(obj, nxt, RULES)}
    assert unclaimed == {".spec.labels.a": ("helm",), ".spec.labels.b": ("helm",)}


def test_a_fix_is_planned_once_per_object_inside_an_identity_block() -> None:
    # audit plans the fix it chooses as it verifies it and again as its printed command checks itself
    obj = client_side_created()
    ctx = PlanContext(RULES.root)
    cmd = MigrateToServerSide(("kubectl-client-side-apply",), "ci-applier", None)
    outside = planned(cmd, obj, ctx)
    assert planned(cmd, obj, ctx) is not outside  # nothing is remembered outside a block
    with IdentityMemo():
        first = planned(cmd, obj, ctx)
        assert planned(cmd, obj, ctx) is first
        assert first[1] == outside[1] and first[1]  # the same requests, and there are some
        # a MigrateFor plan gains notes after it is made: never shared
        mf = MigrateFor(Applier.of("kubectl"))
        assert planned(mf, obj, ctx) is not planned(mf, obj, ctx)


def test_the_manifest_read_off_an_apply_entry_is_a_copy_of_the_owned_part_whatever_maps_the_object_holds() -> None:
    """The applier's manifest read off its Apply entry is the owned part of the object, copied: the
    same when the object holds read-only mappings (copied to plain JSON first), and changing it
    changes nothing in the object."""
    import copy
    from types import MappingProxyType

    from kubectl_fieldown.remedies.manifests import inferred_manifest

    obj = scaled(server_side_applied("ci", manifest(labels={"a": "x"})), 3)
    applier = Applier.of("ssa", "ci")
    before = copy.deepcopy(obj)
    plain = inferred_manifest(obj, applier, RULES.root)
    assert plain is not None and plain["spec"]["labels"] == {"a": "x"} and "replicas" not in plain["spec"]
    plain["spec"]["labels"]["a"] = "changed"
    assert obj == before
    wrapped = {**obj, "spec": MappingProxyType({**obj["spec"], "labels": MappingProxyType(obj["spec"]["labels"])})}
    again = inferred_manifest(obj, applier, RULES.root)
    assert again is not None
    assert inferred_manifest(wrapped, applier, RULES.root) == again


def test_a_dropped_field_the_schema_defaults_is_asked_to_go_back_to_its_default() -> None:
    """Dropping ``mode: manual`` from the manifest deletes it and the server defaults it again in the
    same write ("auto", owned by nobody): the deletion the user asked for, not a value lost; and the
    default is no unclaimed field (tests/cli/test_audit_cluster.py checks both on the real server)."""
    from kubectl_fieldown.fieldmanager import simulate_apply

    rules = defaulting_rules()
    live = stored(simulate_apply(None, thing(image="i", mode="manual"), "deployer", rules, now=NOW).object)
    nxt = thing(image="i")
    with IdentityMemo():
        fix = choose_fix(live, rules, Applier.of("ssa", "deployer"), now=NOW, manifest=nxt)
        assert fix.ok and fix.command is None, fix.verification.problems()
        v = fix.verification
        assert v.final is not None and v.final["spec"] == {"image": "i", "mode": "auto"}
        assert [path_string(p) for p in v.dropped_removed] == [".spec.mode"]
        assert v.dropped_kept == [] and fix.unclaimed(live, nxt, rules) == []


def test_a_default_client_side_apply_owned_is_no_unclaimed_field_after_the_switch() -> None:
    rules = defaulting_rules()
    live = run_applier_result(Applier.of("kubectl-client-side"), thing(image="i"), rules)
    assert live["spec"]["mode"] == "auto"
    nxt = thing(image="j")
    with IdentityMemo():
        fix = choose_fix(live, rules, Applier.of("kubectl"), now=NOW, manifest=nxt)
        assert fix.ok and fix.unclaimed(live, nxt, rules) == []
        final = fix.verification.final
        assert final is not None and final["spec"] == {"image": "j", "mode": "auto"}


def test_client_side_apply_dropping_a_defaulted_field_keeps_nothing() -> None:
    """kubectl apply's three-way patch sends null for the dropped ``mode``; the server sets "auto"
    again and the client-side manager owns it: the deletion asked for, not a field that stays."""
    rules = defaulting_rules()
    created = run_applier_result(Applier.of("kubectl-client-side"), thing(image="i", mode="manual"), rules)
    nxt = thing(image="i")
    with IdentityMemo():
        fix = choose_fix(created, rules, Applier.of("kubectl-client-side"), now=NOW, manifest=nxt)
        assert fix.ok and fix.command is None, fix.verification.problems()
        v = fix.verification
        assert v.final is not None and v.final["spec"] == {"image": "i", "mode": "auto"}
        assert [path_string(p) for p in v.dropped_removed] == [".spec.mode"] and v.dropped_kept == []


def run_applier_result(applier: Applier, doc: dict[str, Any], rules: Any) -> dict[str, Any]:
    """The object ``applier`` creates from ``doc``, as the server stores it."""
    from kubectl_fieldown.appliers import run_applier

    run = run_applier(applier, None, doc, rules, now=NOW)
    assert run.result is not None
    return stored(run.result)
