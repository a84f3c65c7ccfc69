"""The check that a write and the applier's next apply lose nothing (remedies/verify.py): what it
says of a Secret goes through the one redaction (issue 18, item 1)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_fieldown.appliers import Applier, run_applier
from kubectl_fieldown.fieldmanager import ResourceRules, simulate_update
from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.fieldpath.lookup import MISSING
from kubectl_fieldown.kube.kindrules import rules_for
from kubectl_fieldown.remedies.commands import FixCommand, MigrateFor, PlanContext, Reset
from kubectl_fieldown.remedies.verify import ValueChange
from kubectl_fieldown.remedies.writeplan import write_plan
from kubectl_fieldown.schema.registry import SchemaRegistry

NOW = "2026-11-24T10:00:00Z"
TOKEN = "VE9LRU5TRUNSRVRWQUxVRQ=="
SCHEMA = SchemaRegistry().lookup_api_version("v1", "Secret")
RULES: ResourceRules = rules_for(SCHEMA, False, True)


def secret_manifest(**data: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, "type": "Opaque",
            "data": {"user": "dXNlcg==", **data}}


def edited_secret() -> dict[str, Any]:
    """Created with a client-side ``kubectl apply``, then ``.data.token`` added with ``kubectl edit``:
    no manifest sets the token, so an apply that takes ownership of everything deletes it."""
    run = run_applier(Applier.of("kubectl-client-side"), None, secret_manifest(), RULES, now=NOW)
    assert run.ok and run.result is not None
    obj = run.result
    obj["metadata"].update(uid="u", resourceVersion="1")
    new = copy.deepcopy(obj)
    new["data"]["token"] = TOKEN
    return simulate_update(obj, new, "kubectl-edit", RULES, now=NOW).object


def leaks(lines: list[str]) -> list[str]:
    """Lines that show the token, or the start of it (a value cut short is still a leak)."""
    return [x for x in lines if TOKEN[:6] in x or "dXNlcg" in x]


@pytest.mark.parametrize("command", [Reset("kubectl"), MigrateFor(Applier.of("flux"))],
                         ids=["reset-to-kubectl", "migrate-for-flux"])
def test_a_refused_write_of_a_secret_names_the_field_not_its_value(command: FixCommand) -> None:
    obj = edited_secret()
    wp = write_plan(command, obj, PlanContext(SCHEMA.root), RULES, now=NOW, applier=command.applier)
    assert 'the next apply would delete .data.token ("<redacted>" -> unset)' in wp.problems
    assert not leaks(wp.problems + wp.migration.notes)


def test_an_error_that_quotes_a_secret_value_is_scrubbed() -> None:
    """The server's typed conversion quotes the bad value in its 500 (``got
    &value.valueUnstructured{Value:[]interface {}{"…"}}``): the check's problem line must not."""
    manifest = secret_manifest(token=[TOKEN])
    wp = write_plan(Reset("kubectl"), edited_secret(), PlanContext(SCHEMA.root, None, manifest), RULES, now=NOW,
                    applier=Applier.of("kubectl"))
    assert any(p.startswith("the next apply would fail: ") and "expected string" in p for p in wp.problems)
    assert not leaks(wp.problems)
    assert any('"<redacted>"' in p for p in wp.problems)


@pytest.mark.parametrize(("path", "before", "after", "shown"), [
    (".data.token", TOKEN, MISSING, '.data.token ("<redacted>" -> unset)'),
    (".data", {"token": TOKEN}, MISSING, '.data ("<redacted>" -> unset)'),
    (".stringData.x", "plain", "other", '.stringData.x ("<redacted>" -> "<redacted>")'),
    # what is no secret value stays visible: labels, the type
    (".metadata.labels.team", "payments", MISSING, '.metadata.labels.team ("payments" -> unset)'),
    (".type", "Opaque", "kubernetes.io/tls", '.type ("Opaque" -> "kubernetes.io/tls")'),
])
def test_a_secret_change_shows_its_values_redacted(path: str, before: Any, after: Any, shown: str) -> None:
    assert ValueChange(parse_path(path), before, after, secret=True).describe() == shown


def test_other_objects_show_their_values() -> None:
    assert ValueChange(parse_path(".data.token"), "abc", MISSING).describe() == '.data.token ("abc" -> unset)'


def test_the_next_client_side_apply_of_a_builtin_kind_is_played() -> None:
    """A fix checked against client-side ``kubectl apply`` of a Secret: the next apply is kubectl's
    strategic merge patch (issue 20), not a refusal. The manifest dropped ``token`` from the
    last-applied configuration: the patch deletes it, which the user asked for."""
    from kubectl_fieldown.remedies.verify import verify

    applier = Applier.of("kubectl-client-side")
    first = run_applier(applier, None, secret_manifest(token=TOKEN), RULES, now=NOW)
    assert first.ok and first.result is not None
    live = first.result
    live["metadata"].update(uid="u", resourceVersion="1")
    v = verify(live, [], RULES, now=NOW, applier=applier, next_manifest=secret_manifest())
    assert v.run is not None and v.apply_error is None
    assert [(r.verb, r.status) for r in v.run.requests] == [("strategic-patch", 200)]
    assert v.run.requests[0].body["data"] == {"token": None}
    assert v.ok, v.problems()
    assert v.dropped_removed == [parse_path(".data.token")]
    assert v.final is not None and v.final["data"] == {"user": "dXNlcg=="}


def test_a_map_that_goes_whole_is_asked_only_when_every_key_in_it_is() -> None:
    # seed-4500100: after a managedFields reset, client-side applies recorded .spec.labels {a} in the
    # annotation and an untracked edit added .spec.labels.b; kubectl's next server-side apply folds
    # everything into its own entry and deletes the whole map. Only .a was the applier's to delete.
    from kubectl_fieldown.remedies.verify import verify
    from remedies.states import RULES as WIDGET_RULES
    from remedies.states import client_side_created, manifest

    live = client_side_created()
    live["metadata"].pop("managedFields", None)
    live["spec"]["labels"]["b"] = "edited"
    v = verify(live, [], WIDGET_RULES, now=NOW, applier=Applier.of("kubectl"), next_manifest=manifest(labels=None))
    assert [c.path for c in v.unexpected] == [parse_path(".spec.labels")], [c.describe() for c in v.unexpected]
    assert v.unexpected[0].removed == (parse_path(".spec.labels.a"), parse_path(".spec.labels.b"))
    # without the edit the map is the applier's to delete
    live["spec"]["labels"].pop("b")
    v = verify(live, [], WIDGET_RULES, now=NOW, applier=Applier.of("kubectl"), next_manifest=manifest(labels=None))
    assert v.unexpected == [] and v.dropped_removed == [parse_path(".spec.labels")]


# --- Checks: verifications remembered by their inputs ---------------------------------------------


def test_checks_remember_a_verification_by_its_inputs_told_apart_as_the_server_would() -> None:
    from collections import UserDict

    from kubectl_fieldown.remedies.verify import Checks, verify

    from .states import NOW, RULES, client_side_created, manifest

    live = client_side_created()
    kubectl = Applier.of("kubectl")
    checks = Checks(live, RULES, NOW)
    first = checks.verify((), applier=kubectl, next_manifest=manifest(replicas=3))
    # an equal copy of the same inputs: the same verification, not a second simulation
    assert checks.verify((), applier=kubectl, next_manifest=copy.deepcopy(manifest(replicas=3))) is first
    # what it remembers is what verify answers
    fresh = verify(live, (), RULES, now=NOW, applier=kubectl, next_manifest=manifest(replicas=3))
    assert [(c.path, c.kind, c.after) for c in first.changes] == [(c.path, c.kind, c.after) for c in fresh.changes]
    # values Python's equality confuses (3 == 3.0, 1 == True) are other inputs
    assert checks.verify((), applier=kubectl, next_manifest=manifest(replicas=3.0)) is not first
    one = checks.verify((), applier=kubectl, next_manifest=manifest(replicas=1))
    assert checks.verify((), applier=kubectl, next_manifest=manifest(replicas=True)) is not one
    # as are another applier, other fields kept, and inputs of types it cannot tell apart exactly
    assert checks.verify((), applier=Applier.of("argocd"), next_manifest=manifest(replicas=3)) is not first
    assert checks.verify((), applier=kubectl, next_manifest=manifest(replicas=3),
                         keep=[parse_path(".spec.replicas")]) is not first
    # checks made for this object serve only this object, rules and time
    assert Checks.of(checks, live, RULES, NOW) is checks
    assert Checks.of(checks, copy.deepcopy(live), RULES, NOW) is not checks
    assert Checks.of(checks, live, RULES, "2026-11-24T11:00:00Z") is not checks
    assert Checks.of(None, live, RULES, NOW).live is live
    wrapped = UserDict(manifest(replicas=3))
    assert checks.verify((), applier=kubectl, next_manifest=wrapped) is not checks.verify(
        (), applier=kubectl, next_manifest=wrapped)
