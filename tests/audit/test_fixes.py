"""One fix per object (kubectl_fieldown.audit.fixes): every finding of an object carries the same,
verified fix, for the applier the user names or the one in use."""

from __future__ import annotations

import copy
from typing import Any

from remedies.states import (
    NOW,
    RULES,
    client_side_created,
    edited,
    labelled,
    manifest,
    scaled,
    server_side_applied,
    stored,
)

from kubectl_fieldown.appliers import Applier, ApplierKind, run_applier
from kubectl_fieldown.audit import AuditContext, audit_object
from kubectl_fieldown.audit.fixes import _OWN, detected_applier
from kubectl_fieldown.audit.rules import ObjectFacts


def ctx(applier: Applier | None = None, **kw: Any) -> AuditContext:
    return AuditContext(applier=applier, rules_for=lambda a, k: RULES if k == "Widget" else None, now=NOW, **kw)


def the_fix(obj: dict[str, Any], c: AuditContext) -> Any:
    found = audit_object(obj, c)
    assert found
    fixes = {f.fix for f in found}
    assert len(fixes) == 1, "one fix per object"
    return found, fixes.pop()


def scaled_and_labelled() -> dict[str, Any]:
    return labelled(scaled(client_side_created(), 7), "team", "payments")


def test_the_fix_is_for_the_applier_in_use_and_shared_by_every_finding() -> None:
    found, fix = the_fix(scaled_and_labelled(), ctx())
    assert [f.id for f in found] == ["hpa-replicas-trap", "client-side-apply", "imperative-writer"]
    assert fix.applier == "kubectl apply (client-side)" and not fix.applier_named
    assert fix.verified
    assert fix.argv() == ["strip-last-applied", "widget.example.com/w", "-n", "shop", "--field", ".spec.replicas"]
    assert fix.edits() == ["remove .spec.replicas from the manifest (its writer keeps it)"]


def test_the_fix_for_a_named_applier() -> None:
    _, fix = the_fix(scaled_and_labelled(), ctx(Applier.of("kubectl")))
    assert fix.applier == "kubectl apply --server-side" and fix.applier_named
    assert fix.argv() == []  # kubectl migrates the client-side history itself
    assert fix.drop == (".spec.replicas",)
    assert any(n.startswith("nothing to run") for n in fix.notes)
    _, flux = the_fix(scaled_and_labelled(), ctx(Applier.of("flux")))
    assert flux.argv() == ["handover", "widget.example.com/w", "-n", "shop", "--field", ".metadata.labels.team",
                           "--to", "manual-edits", "--applier", "flux"]


def test_no_fix_without_an_applier_or_a_schema() -> None:
    obj = edited(server_side_applied("my-operator"), "kubectl-edit", color="green")
    obj["metadata"]["managedFields"] = [e for e in obj["metadata"]["managedFields"] if e["operation"] == "Update"]
    _, fix = the_fix(obj, ctx())
    assert not fix.verified and fix.argv() == []
    assert "no applier manages this object" in fix.problems[0]
    _, unknown = the_fix(client_side_created(), AuditContext(now=NOW))
    assert "no schema is known for Widget example.com/v1" in unknown.problems[0]


def test_detected_applier() -> None:
    def facts(obj: dict[str, Any]) -> ObjectFacts:
        return ObjectFacts(obj, obj["metadata"])

    assert detected_applier(facts(client_side_created())) == Applier.of("kubectl-client-side")
    assert detected_applier(facts(server_side_applied("argocd-controller"))) == Applier.of("argocd")


def test_a_fix_is_remembered_for_objects_alike_but_for_their_name() -> None:
    c = ctx()
    a = scaled_and_labelled()
    b = scaled_and_labelled()
    b["metadata"]["name"] = "other"
    _, fa = the_fix(a, c)
    assert len(c.memo) == 1
    _, fb = the_fix(b, c)
    assert len(c.memo) == 1
    assert fb.argv()[1] == "widget.example.com/other" and fb.args == fa.args


def test_the_fix_of_objects_only_their_applier_wrote_is_made_once_and_names_each_object() -> None:
    def own(name: str, namespace: str, applier: str = "kubectl-client-side") -> dict[str, Any]:
        m = manifest()
        m["metadata"].update(name=name, namespace=namespace)
        if applier == "kubectl-client-side":
            return client_side_created(m)
        return server_side_applied(applier, m)

    for applier in (None, Applier.of("kubectl-client-side"), Applier.of("kubectl"), Applier.of("argocd")):
        c = ctx(applier)
        objects = [own("a", "shop"), own("b", "shop"), own("a", "other"), own("c", "shop", "argocd-controller")]
        named = []
        for obj in objects:
            found = audit_object(obj, c)
            # each as a fresh audit finds it: the remembered fix is the same but for whose it is
            assert found == audit_object(obj, ctx(applier))
            for fix in {f.fix for f in found}:
                assert fix is not None
                named.append((fix.name, fix.namespace))
                assert (fix.name, fix.namespace) == (obj["metadata"]["name"], obj["metadata"]["namespace"])
        if applier is None or applier.kind is ApplierKind.kubectl_client_side:
            # the three client-side objects need no simulation: one fix was made for them
            assert named[:3] == [("a", "shop"), ("b", "shop"), ("a", "other")]
            assert [k[0] for k in c.memo].count(_OWN) == 1


def _with_manifest(applier: Applier, nxt: dict[str, Any]) -> AuditContext:
    from kubectl_fieldown.audit import object_key

    return ctx(applier, manifests={object_key(nxt): nxt})


def test_helm3_to_a_ci_job_folds_the_chart_so_the_dropped_field_goes() -> None:
    # created by Helm 3 (a POST as helm): its Update entry recorded the configuration the CI job
    # applies next, minus .spec.labels: the chart's entry is the job's previous identity
    from kubectl_fieldown.fieldmanager import simulate_update

    live = stored(simulate_update(None, manifest(), "helm", RULES, now=NOW).object)
    nxt = manifest(labels=None)
    found, fix = the_fix(live, _with_manifest(Applier.of("kubectl", "ci"), nxt))
    stay = [f for f in found if f.id == "dropped-fields-stay"]
    assert stay and stay[0].severity.value == "warning" and stay[0].details["fixed"], [f.message for f in found]
    assert [x["path"] for x in stay[0].details["fields"]] == [".spec.labels.a"]
    argv = fix.argv()
    assert argv[:2] == ["migrate", "widget.example.com/w"] and "helm" in argv and "--all-fields" in argv, argv


def test_a_field_only_another_applier_set_stays_and_is_said() -> None:
    # ci applied two fields; deployer applies a manifest that shares one of them: whether ci was
    # deployer under an old name, the object cannot tell: the field that stays is named, exit 1
    live = server_side_applied("ci", {**manifest(), "spec": {"replicas": 2, "color": "blue"}})
    nxt = {**manifest(), "spec": {"replicas": 2, "labels": {"a": "x"}}}
    found, _ = the_fix(live, _with_manifest(Applier.of("ssa", "deployer"), nxt))
    (un,) = [f for f in found if f.id == "unclaimed-fields-stay"]
    assert un.severity.value == "error"
    assert un.details["fields"] == [{"path": ".spec.color", "owners": ["ci"]}], un.details


def test_a_spec_left_empty_does_not_hide_what_stays() -> None:
    # seed-4400377/4400527: the manifest's last spec field dropped leaves ``spec: {}``, a member of its
    # field set but no value covering what lies below: ci's fields still stay, and are named
    live = server_side_applied("ci", {**manifest(), "spec": {"replicas": 2, "color": "blue"}})
    nxt = {**manifest(), "spec": {}}
    found, _ = the_fix(live, _with_manifest(Applier.of("ssa", "deployer"), nxt))
    (un,) = [f for f in found if f.id == "unclaimed-fields-stay"]
    assert [x["path"] for x in un.details["fields"]] == [".spec.color", ".spec.replicas"], un.details


def test_an_empty_metadata_does_not_hide_a_dropped_label() -> None:
    # Helm 4 applied the configuration with a label; client-side kubectl apply takes over with a
    # manifest without it: it cannot prune what helm owns (the three-way patch would delete the
    # whole labels map with it): the label stays, and the audit says so
    m = manifest()
    m["metadata"]["labels"] = {"app": "web"}
    live = labelled(server_side_applied("helm", m), "team", "pay")
    found, fix = the_fix(live, _with_manifest(Applier.of("kubectl-client-side"), manifest()))
    (stay,) = [f for f in found if f.id == "dropped-fields-stay"]
    assert stay.severity.value == "error" and ".metadata.labels.app" in stay.message, stay.message
    assert not any(n.startswith("nothing to run") for n in fix.notes)


def test_a_partial_applier_under_another_name_is_told_what_kubectl_folds_into_it() -> None:
    # a client-side pipeline's object; a tuner applies most of the same configuration with kubectl
    # --server-side --field-manager tuner: kubectl folds the client-side manager into tuner, and the
    # apply deletes what the tuner's manifest lacks — the pipeline's values, if tuner is not it
    live = client_side_created()
    nxt = manifest(labels=None)
    found, _ = the_fix(live, _with_manifest(Applier.of("kubectl", "tuner"), nxt))
    (inf,) = [f for f in found if f.id == "inferred-deletions"]
    assert inf.severity.value == "error" and inf.details["fields"] == [".spec.labels"], inf.details
    # kubectl under its own name: the annotation is its configuration, the deletion is asked
    found, _ = the_fix(live, _with_manifest(Applier.of("kubectl"), nxt))
    assert not [f for f in found if f.id == "inferred-deletions"], [f.message for f in found]


def _at(obj: dict[str, Any], manager: str, time: str) -> dict[str, Any]:
    for e in obj["metadata"]["managedFields"]:
        if e["manager"] == manager:
            e["time"] = time
    return obj


def test_a_deletion_only_an_older_configuration_asks_for_is_said() -> None:
    # Argo CD applied color (blue); Helm 4 took over later with a manifest without it (it could not prune
    # Argo CD's field); Argo CD syncs again without it: its apply deletes color, which its latest
    # manifest and Helm's never mentioned — an error, with the field named
    older = server_side_applied("argocd-controller", manifest())
    nxt = manifest(color=None)
    live = _at(_at(server_side_applied("helm", nxt, older), "argocd-controller", "2026-11-24T09:00:00Z"),
               "helm", "2026-11-24T09:30:00Z")
    found, _ = the_fix(live, _with_manifest(Applier.of("argocd"), nxt))
    (sup,) = [f for f in found if f.id == "superseded-deletions"]
    assert sup.severity.value == "error" and sup.details["fields"] == [".spec.color"], sup.details
    # Helm's apply came first: Argo CD's latest configuration set color, and its manifest drops it now
    first = _at(_at(server_side_applied("helm", nxt, older), "argocd-controller", "2026-11-24T09:30:00Z"),
                "helm", "2026-11-24T09:00:00Z")
    found, _ = the_fix(first, _with_manifest(Applier.of("argocd"), nxt))
    assert not [f for f in found if f.id == "superseded-deletions"], [f.message for f in found]


def test_a_deletion_after_a_later_half_matching_configuration_is_said() -> None:
    # deployer applied containers; a client-side kubectl apply followed whose annotation shares exactly
    # half of the next manifest's fields both ways (not clearly deployer's configuration, not clearly
    # another one); deployer applies again without containers: only its older apply set them, and the
    # later one may have been its own under another tool that could not prune them (lab seed-4500341)
    older = manifest(labels={"a": "x", "b": "y", "c": "z"},
                     containers=[{"name": "main", "image": "img:1"}])
    live = server_side_applied("deployer", older)
    later = manifest(labels={"a": "x", "b": "y", "c": "z", "d": "w"})
    run = run_applier(Applier.of("kubectl-client-side"), live, later, RULES, now=NOW)
    assert run.ok and run.result is not None
    nxt = manifest(replicas=None, color=None, labels={"a": "x", "b": "y", "c": "z"})
    found, fix = the_fix(stored(run.result, 2), _with_manifest(Applier.of("kubectl", "deployer"), nxt))
    (sup,) = [f for f in found if f.id == "superseded-deletions"]
    assert sup.details["fields"] == [".spec.containers"], sup.details
    assert not any(n.startswith("nothing to run") for n in fix.notes)
    # the client-side apply came first: deployer's own apply is the latest configuration
    first = _at(_at(stored(run.result, 2), "deployer", "2026-11-24T09:30:00Z"),
                "kubectl-client-side-apply", "2026-11-24T09:00:00Z")
    found, _ = the_fix(first, _with_manifest(Applier.of("kubectl", "deployer"), nxt))
    assert not [f for f in found if f.id == "superseded-deletions"], [f.message for f in found]


def test_after_a_reset_a_deletion_resting_on_the_annotation_alone_is_a_guess() -> None:
    # a client-side object whose managedFields were reset: nothing records who wrote the annotation,
    # which may be older than a server-side apply the reset erased (lab seed-4500525); kubectl's next
    # server-side apply folds the untracked fields and deletes what the annotation alone says it set
    live = client_side_created()
    nxt = manifest(color=None)
    found, _ = the_fix(live, _with_manifest(Applier.of("kubectl"), nxt))
    assert not [f for f in found if f.id == "inferred-deletions"], [f.message for f in found]
    reset = copy.deepcopy(live)
    del reset["metadata"]["managedFields"]
    found, _ = the_fix(reset, _with_manifest(Applier.of("kubectl"), nxt))
    (inf,) = [f for f in found if f.id == "inferred-deletions"]
    assert inf.details["fields"] == [".spec.color"], inf.details


def test_with_fix_keeps_every_other_field() -> None:

    from kubectl_fieldown.audit import Finding, Severity
    from kubectl_fieldown.audit.findings import ObjectFix

    fix = ObjectFix("widget.example.com", "w", "shop", "kubectl", False, command=None)
    f = Finding("imperative-writer", Severity.warning, "example.com/v1", "Widget", "shop", "w", "m", None,
                "widget.example.com", {"manager": "x"}, "ctx")
    got = f.with_fix(fix)
    want = f.replace(fix=fix)
    assert [getattr(got, x) for x in Finding._fields] == [getattr(want, x) for x in Finding._fields]
    assert Finding._fields[-1] == "context" and len(Finding._fields) == 11  # every field is copied


def test_a_later_configuration_holding_the_shrunk_manifest_makes_an_older_field_a_guess() -> None:
    # ci applied color; a client-side kubectl apply of the same configuration without color followed
    # (it could not prune ci's color); ci applies a manifest of one field the annotation holds: its
    # apply deletes color, which only ci's older configuration set (lab: generated seed-4802459)
    live = server_side_applied("ci", manifest())
    later = manifest(color=None, finalizers=["f1", "f2"])  # it holds the next manifest, and more
    run = run_applier(Applier.of("kubectl-client-side"), live, later, RULES, now=NOW)
    assert run.ok and run.result is not None
    nxt = manifest(color=None, labels=None)
    found, fix = the_fix(stored(run.result, 2), _with_manifest(Applier.of("ssa", "ci"), nxt))
    (sup,) = [f for f in found if f.id == "superseded-deletions"]
    assert sup.details["fields"] == [".spec.color"], sup.details
    assert not any(n.startswith("nothing to run") for n in fix.notes)


def test_an_object_too_deep_to_analyse_gets_no_fix_unless_it_needs_no_analysis() -> None:
    from kubectl_fieldown.base.value import MAX_DEPTH

    def deep(obj: dict[str, Any]) -> dict[str, Any]:
        value: Any = "x"
        for _ in range(MAX_DEPTH + 5):
            value = {"d": value}
        obj["spec"]["config"] = value
        return obj

    # only its applier's own record: its re-apply changes nothing, which the entries' names say alone
    found, own = the_fix(deep(client_side_created()), ctx())
    assert [f.id for f in found] == ["client-side-apply"]
    assert own.verified and any(n.startswith("nothing to run") for n in own.notes), own
    # another writer's fields: deciding the fix needs the engine, which does not go that deep
    _, other = the_fix(deep(scaled_and_labelled()), ctx())
    assert not other.verified and other.argv() == []
    assert other.problems == (f"nested more than {MAX_DEPTH} levels deep, more than the tool analyses: "
                              "no fix can be checked",)


def test_with_a_manifest_an_object_too_deep_to_analyse_is_not_played_and_its_fix_says_why() -> None:
    # the engine walks an object recursively: 500 levels (a tenant's preserve-unknown-fields value,
    # which the server keeps) ended the whole audit -f with a RecursionError
    from kubectl_fieldown.base.value import MAX_DEPTH

    obj = client_side_created()
    value: Any = "x"
    for _ in range(MAX_DEPTH * 5):
        value = {"d": value}
    obj["spec"]["config"] = value
    found, fix = the_fix(obj, _with_manifest(Applier.of("kubectl"), manifest()))
    assert "predicted-conflict" not in [f.id for f in found]
    assert not fix.verified and fix.problems == (
        f"nested more than {MAX_DEPTH} levels deep, more than the tool analyses: no fix can be checked",)
