"""The user's intent (kubectl_fieldown.remedies.intent) on engine-built histories: whose configuration
the last-applied annotation is, which deletions the next apply may make, and what a migration moves."""

from __future__ import annotations

from typing import Any

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.remedies.commands import MigrateToServerSide, PlanContext
from kubectl_fieldown.remedies.intent import Intent, annotation_is_its, same_configuration

from .states import RULES, client_side_created, edited, labelled, manifest, scaled, server_side_applied

ROOT = RULES.root


def partial(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"},
            "spec": spec}


def test_the_annotation_is_the_configuration_of_kubectl_and_of_the_tools_that_fold_it() -> None:
    obj = client_side_created()
    for kind in ("kubectl", "kubectl-client-side", "argocd", "flux"):
        assert annotation_is_its(obj, Applier.of(kind), None, ROOT), kind
    assert not annotation_is_its(obj, Applier.of("helm"), None, ROOT)


def test_under_another_name_the_manifest_decides() -> None:
    obj = client_side_created()
    ci = Applier.of("ssa", "ci")
    # the same configuration, one field dropped: it is ci's
    assert annotation_is_its(obj, ci, manifest(labels=None), ROOT)
    # a partial manifest next to it (a hotfix of one field): it is another configuration
    assert not annotation_is_its(obj, Applier.of("kubectl", "hotfix"), partial(color="red"), ROOT)
    # without a manifest, its own Apply entry is compared
    obj2 = server_side_applied("ci", partial(color="blue"), live=obj)
    assert not annotation_is_its(obj2, ci, None, ROOT)
    assert annotation_is_its(obj, ci, None, ROOT)  # no record of its own: the annotation is the only one


def test_helm_takes_the_annotation_as_its_chart_only_when_its_manifest_is_that_configuration() -> None:
    # Helm never writes the annotation; a chart adopting what kubectl apply applied (or the same
    # manifest applied client-side between two upgrades) is that configuration, changed
    obj = client_side_created()
    helm = Applier.of("helm")
    assert annotation_is_its(obj, helm, manifest(labels=None), ROOT)
    assert not annotation_is_its(obj, helm, partial(color="red"), ROOT)
    assert not annotation_is_its(obj, helm, None, ROOT)


def test_same_configuration_needs_a_majority_both_ways() -> None:
    a = Intent.of(client_side_created(), Applier.of("kubectl"), manifest(), ROOT).own
    assert same_configuration(a, a)
    one = Intent.of(server_side_applied("t", partial(replicas=3)), Applier.of("ssa", "t"), None, ROOT).own
    assert not same_configuration(a, one) and not same_configuration(one, a)


def test_a_scalers_field_in_the_annotation_keeps_the_scalers_value() -> None:
    obj = scaled(client_side_created(), 9, "horizontal-pod-autoscaler")
    intent = Intent.of(obj, Applier.of("kubectl-client-side"), manifest(replicas=None), ROOT)
    replicas = parse_path(".spec.replicas")
    assert intent.own_set(replicas) and intent.others_set(replicas)
    assert not intent.deletion_asked(replicas)
    assert intent.other_owners(replicas) == ("horizontal-pod-autoscaler (subresource scale)",)
    # a field only the annotation set may go
    assert intent.deletion_asked(parse_path(".spec.labels.a"))


def test_a_label_someone_else_set_is_never_the_appliers_to_delete() -> None:
    obj = labelled(client_side_created(), "team", "payments")
    intent = Intent.of(obj, Applier.of("flux"), manifest(), ROOT)
    assert not intent.deletion_asked(parse_path(".metadata.labels.team"))
    assert not intent.deletion_asked(parse_path(".metadata.labels"))


def test_a_partial_appliers_migration_moves_only_its_fields_and_keeps_the_pipelines_annotation() -> None:
    obj = client_side_created()
    m = MigrateToServerSide(("kubectl-client-side-apply",), "hotfix").plan(
        obj, PlanContext(ROOT, None, partial(color="blue")))
    (target,) = [e for e in m.after if e.manager == "hotfix"]
    assert {str(p) for p in target.fields.leaves().sorted_paths()} == {str(parse_path(".spec.color"))}
    # the client-side pipeline's record stays, so kubectl apply still prunes what its manifest drops
    assert m.last_applied_after is not None


def test_the_whole_client_side_configuration_moves_into_the_applier_that_owns_it() -> None:
    obj = client_side_created()
    m = MigrateToServerSide(("kubectl-client-side-apply",), "ci").plan(
        obj, PlanContext(ROOT, None, manifest(labels=None)))
    (target,) = [e for e in m.after if e.manager == "ci"]
    assert target.fields.has(parse_path(".spec.labels.a"))  # ci's own: its next apply deletes it
    assert m.last_applied_after is None


def test_without_a_manifest_nothing_of_another_writer_moves() -> None:
    """migrate --from-manager ancient-changes for an applier with no record: nothing is known of
    what its manifest sets, so nothing of ancient-changes moves (the next apply would prune it)."""
    obj = edited(server_side_applied("ci"), "ancient-changes", color="green", strategy={"type": "Recreate"})
    m = MigrateToServerSide(("ancient-changes",), "newcomer").plan(obj, PlanContext(ROOT))
    assert not [e for e in m.after if e.manager == "newcomer"]
    assert any("no manifest of newcomer is known" in n for n in m.notes)


def test_a_deletion_that_needs_another_writers_record_to_be_the_appliers_rests_on_a_guess() -> None:
    """Soak seed 49's seed-4902860: helm applied its chart, team-b applied the same configuration
    but for one field, helm applied again; the next chart drops ``color``. team-b's record is taken
    for an older name of helm by its content (a pipeline that moved tools looks just like it), so
    the deletion is allowed — but it rests on that judgement even though helm's own certain record
    set ``color`` too: were team-b another writer, its value would have to stay. It is ``inferred``,
    which audit reports (inferred-deletions) instead of calling the fix safe."""
    helm = Applier.of("helm")
    labels = {"a": "x", "b": "y", "c": "z"}
    obj = server_side_applied("helm", manifest(labels=labels))
    obj = server_side_applied("team-b", manifest(labels=labels, replicas=None), live=obj)
    obj = server_side_applied("helm", manifest(labels=labels), live=obj)
    intent = Intent.of(obj, helm, manifest(labels=labels, color=None), ROOT)
    color = parse_path(".spec.color")
    assert intent.own_set(color) and not intent.others_set(color)
    assert intent.deletion_asked(color)
    assert intent.inferred_set(color)
    # a field only helm's own record set does not rest on team-b at all
    assert intent.own_set(parse_path(".spec.replicas")) and not intent.inferred_set(parse_path(".spec.replicas"))


def test_an_annotation_written_at_another_served_version_is_still_the_last_configuration() -> None:
    """Soak seed 51's seed-5102892: a Multi applied client-side at v2 and read at v1 (the next
    manifest's version). The annotation was ignored for naming another apiVersion, so ci's older
    ``replicas`` (its Apply entry's, at v2) was not seen as dropped since, and audit called the next
    apply's deletion of it safe. Another group is another object's configuration: not read."""
    import json

    from kubectl_fieldown.ownership.managedfields import LAST_APPLIED_ANNOTATION

    obj = client_side_created()
    annotations = obj["metadata"]["annotations"]
    doc = json.loads(annotations[LAST_APPLIED_ANNOTATION])
    for version, its in (("example.com/v2", True), ("other.example.com/v1", False)):
        annotations[LAST_APPLIED_ANNOTATION] = json.dumps({**doc, "apiVersion": version})
        assert annotation_is_its(obj, Applier.of("kubectl-client-side"), None, ROOT) is its, version


def test_a_configuration_like_the_appliers_own_record_is_possibly_its_even_when_the_manifest_grew() -> None:
    """Soak seed 57's seed-5702495: deployer applied server-side, then kubectl applied client-side
    the same configuration without ``color``; deployer's next manifest adds labels and drops
    ``color``. The annotation holds less than half of the grown manifest, but it is deployer's own
    record changed (more than half of it both ways), and newer: ``color`` was dropped then and only
    stayed because a client-side apply prunes what its annotation set. Its deletion now is an older
    manifest's (superseded), which audit names instead of calling the apply safe."""
    from kubectl_fieldown.appliers import run_applier
    from kubectl_fieldown.fieldmanager import simulate_apply

    two = {"a": "x", "b": "y"}
    obj = simulate_apply(None, manifest(labels=two), "deployer", RULES, now="2026-11-24T10:00:00Z").object
    run = run_applier(Applier.of("kubectl-client-side"), obj, manifest(labels=two, color=None), RULES,
                      now="2026-11-24T10:00:05Z")
    assert run.ok and run.result is not None
    grown = manifest(labels={k: "v" for k in "abcdefgh"}, color=None)
    intent = Intent.of(run.result, Applier.of("ssa", "deployer"), grown, ROOT)
    color = parse_path(".spec.color")
    assert intent.deletion_asked(color) and intent.superseded_set(color)
    assert not intent.superseded_set(parse_path(".spec.replicas"))
    # a configuration that is not like the applier's own record stays another writer's
    other = simulate_apply(None, manifest(labels=two), "deployer", RULES, now="2026-11-24T10:00:00Z").object
    other = simulate_apply(other, partial(color="blue"), "tuner", RULES, now="2026-11-24T10:00:05Z").object
    assert not Intent.of(other, Applier.of("ssa", "deployer"), grown, ROOT).superseded_set(parse_path(".spec.replicas"))


def test_the_client_side_manager_named_the_appliers_brings_its_annotation_as_a_configuration() -> None:
    """Soak seed 87's seed-8700364: Helm 3 created the object (its chart sets ``color``), then
    ``kubectl apply`` (client-side) applied twice a configuration without it, and Helm 4's next
    manifest, grown well beyond the annotation, does not set it either. The fix folds both
    ``helm`` and the client-side manager into Helm's Apply entry (``also``): the annotation is then a
    configuration of the applier, newer than the chart, so ``color`` was dropped by a later
    configuration and only an older one set it (superseded: audit says so, instead of calling the
    deletion the one the manifest asks for). Without ``also`` the annotation, which holds less than
    half of the grown manifest, stays another writer's."""
    from kubectl_fieldown.appliers import run_applier
    from kubectl_fieldown.fieldmanager import simulate_update

    chart = manifest(color="green")
    obj = simulate_update(None, chart, "helm", RULES, now="2026-11-24T10:00:00Z").object
    for i, config in enumerate((manifest(color=None, replicas=3), manifest(color=None, replicas=4))):
        run = run_applier(Applier.of("kubectl-client-side"), obj, config, RULES, now=f"2026-11-24T10:00:0{5 + i}Z")
        assert run.ok and run.result is not None
        obj = run.result
    grown = manifest(color=None, replicas=4, labels={k: "v" for k in "abcdefgh"})
    helm = Applier.of("helm")
    color = parse_path(".spec.color")
    folded = Intent.of(obj, helm, grown, ROOT, also=("helm", "kubectl-client-side-apply"))
    assert folded.deletion_asked(color) and folded.superseded_set(color)
    assert not folded.superseded_set(parse_path(".spec.replicas"))
    assert not Intent.of(obj, helm, grown, ROOT).superseded_set(color)


def test_a_client_side_configuration_inside_the_appliers_own_record_is_possibly_its_shrunk() -> None:
    """Soak seed 90's seed-9000870: Helm applied its chart server-side (``color``, ``replicas``,
    ``labels``); then ``kubectl apply`` (client-side) applied only the labels; Helm's next manifest
    sets none of the three. Helm's own record set ``color`` and ``replicas`` and its next apply deletes
    them — but the newer client-side configuration, wholly inside Helm's, may be that pipeline's
    manifest shrunk (dropped then, not prunable by a client-side apply) as much as a tuner's few fields:
    the object cannot tell, so those deletions rest on an older configuration (superseded: audit names
    them instead of calling them the ones the manifest asks for). Applied before Helm's last apply, the
    same annotation is no newer configuration, and one with a field Helm never set is another writer's."""
    from kubectl_fieldown.appliers import run_applier
    from kubectl_fieldown.fieldmanager import simulate_apply

    helm = Applier.of("helm")
    labels = {"a": "x", "b": "y"}
    chart = manifest(labels=labels, color="green", replicas=3)
    nxt = manifest(labels=None, color=None, replicas=None, size=7)
    color, replicas = parse_path(".spec.color"), parse_path(".spec.replicas")

    def csa(obj: dict[str, Any] | None, config: dict[str, Any], now: str) -> dict[str, Any]:
        run = run_applier(Applier.of("kubectl-client-side"), obj, config, RULES, now=now)
        assert run.ok and run.result is not None
        return run.result

    obj = simulate_apply(None, chart, "helm", RULES, now="2026-11-24T10:00:00Z").object
    shrunk = csa(obj, partial(labels=labels), "2026-11-24T10:00:05Z")
    intent = Intent.of(shrunk, helm, nxt, ROOT)
    assert intent.deletion_asked(color) and intent.deletion_asked(replicas)
    assert intent.superseded_set(color) and intent.superseded_set(replicas)
    assert not intent.superseded_set(parse_path(".spec.labels.a"))

    # the client-side apply before Helm's last one (which changed a value, so its entry has the newer
    # time; an apply that changes nothing keeps the old one): Helm's chart is the latest configuration
    again = simulate_apply(shrunk, manifest(labels=labels, color="red", replicas=3), "helm", RULES,
                           now="2026-11-24T10:00:09Z").object
    assert not Intent.of(again, helm, nxt, ROOT).superseded_set(color)
    # a client-side configuration with a field Helm never set is not Helm's record shrunk
    other = csa(obj, partial(labels=labels, strategy={"type": "Recreate"}), "2026-11-24T10:00:05Z")
    assert not Intent.of(other, helm, nxt, ROOT).superseded_set(color)


def test_a_known_tools_apply_inside_the_appliers_own_record_is_possibly_its_shrunk() -> None:
    """Soak seed 93's seed-9300668: ``kubectl apply`` (client-side) of ``args``, ``config`` and
    ``labels``; then Helm 4 applied server-side only ``config``; client-side kubectl's next manifest
    sets none of ``args`` and ``labels``, and its three-way patch deletes them (its annotation set
    them). Helm's configuration, wholly inside the annotation's and newer, may be the same pipeline's
    manifest shrunk (dropped then, not prunable by Helm's apply): those deletions rest on an older
    configuration (superseded, named by audit). The same few fields applied by a manager no tool is
    known by are a tuner's: another writer, nothing superseded."""
    from kubectl_fieldown.appliers import run_applier
    from kubectl_fieldown.fieldmanager import simulate_apply

    csa = Applier.of("kubectl-client-side")
    first = run_applier(csa, None, manifest(labels={"a": "x"}, color="green", replicas=3), RULES,
                        now="2026-11-24T10:00:00Z")
    assert first.ok and first.result is not None
    # (the later apply holds less than half of the next manifest: not a possible configuration by that)
    nxt = manifest(labels=None, color=None, replicas=3, size=7, strategy={"type": "Recreate"})
    color, labels = parse_path(".spec.color"), parse_path(".spec.labels.a")
    for manager, superseded in (("helm", True), ("argocd-controller", True), ("tuner", False)):
        later = simulate_apply(first.result, partial(replicas=3), manager, RULES, now="2026-11-24T10:00:05Z").object
        intent = Intent.of(later, csa, nxt, ROOT)
        assert intent.deletion_asked(color) and intent.deletion_asked(labels), manager
        assert intent.superseded_set(color) is superseded and intent.superseded_set(labels) is superseded, manager
        assert not intent.superseded_set(parse_path(".spec.replicas")), manager
