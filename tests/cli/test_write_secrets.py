"""A Secret's values never reach what the write commands print (issue 18, item 1): refusals, the
values a dry run would change, errors, ``-v`` notes and requests, ``-o json``'s problems and error.

The lab has no core API (tests/lab.py), so the run loop's own step — ``cli.writes.write_one``:
plan, check, write, and the last-resort scrub of a Secret's values — is driven here with a client
that serves one Secret, and its outcome rendered in every form the commands print. The planning is
the product's own (write_plan on the built-in Secret schema with its Go round trip), as the commands
run it on a real cluster.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from remedies.test_verify import NOW, RULES, SCHEMA, TOKEN, edited_secret, secret_manifest

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.cli.writes import write_one
from kubectl_fieldown.kube import ResourceInfo
from kubectl_fieldown.kube.writes import ObjectTarget, Result, WriteOptions, WriteOutcome
from kubectl_fieldown.remedies.commands import FixCommand, MigrateFor, PlanContext, Reset
from kubectl_fieldown.remedies.writeplan import WritePlan, write_plan
from kubectl_fieldown.render.migrate import render_json, render_outcome, render_yaml

SECRETS = ResourceInfo(group="", version="v1", resource="secrets", kind="Secret", namespaced=True,
                       verbs=frozenset({"get", "list", "patch"}))


class OneSecret:
    """Serves the one Secret; a dry-run patch answers what it was sent (the check happens before)."""

    server = "https://fake:6443"
    context = "fake"

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def get(self, res: ResourceInfo, name: str, namespace: str | None = None) -> dict[str, Any]:
        return copy.deepcopy(self.obj)

    def patch(self, *a: Any, **kw: Any) -> dict[str, Any]:
        raise AssertionError("nothing is sent in these tests")


def planner(command: FixCommand, manifest: dict[str, Any] | None = None) -> Callable[[dict[str, Any]], WritePlan]:
    def plan(obj: dict[str, Any]) -> WritePlan:
        return write_plan(command, obj, PlanContext(SCHEMA.root, None, manifest), RULES, now=NOW,
                          applier=command.applier)
    return plan


def printed(o: WriteOutcome) -> str:
    """Everything the commands print of an outcome: the text with -v, then -o json, then -o yaml."""
    out = io.StringIO()
    render_outcome(o, out, verbose=True)
    render_json("reset", o.dry_run, [o], None, out)
    out.write(YAML_FOLLOWS)
    render_yaml("reset", o.dry_run, [o], None, out)
    return out.getvalue()


YAML_FOLLOWS = "--- -o yaml ---\n"


def leaked(text: str) -> bool:
    return TOKEN[:6] in text or "dXNlcg" in text


@pytest.mark.parametrize("dry_run", ["none", "client"])
@pytest.mark.parametrize("command", [Reset("kubectl"), MigrateFor(Applier.of("flux"))],
                         ids=["reset-to-kubectl", "migrate-for-flux"])
def test_a_refusal_names_the_field_not_the_value(command: FixCommand, dry_run: str) -> None:
    client = OneSecret(edited_secret())
    o = write_one(client, ObjectTarget(SECRETS, "s", "ns"), planner(command),  # type: ignore[arg-type]
                  WriteOptions(dry_run=dry_run), None)  # type: ignore[arg-type]
    assert o.result is Result.failed and o.problems
    text = printed(o)
    assert '! the next apply would delete .data.token ("<redacted>" -> unset)' in text
    doc = json.loads(text[text.index("{"):text.index(YAML_FOLLOWS)])
    assert doc["items"][0]["problems"] and doc["items"][0]["error"].startswith("refused: ")
    assert not leaked(text)


def test_a_dry_run_that_is_allowed_shows_no_value() -> None:
    """With --allow-value-changes the dry run prints the values that would change, the notes and
    the requests it would send (an apply body carrying the data)."""
    client = OneSecret(edited_secret())
    o = write_one(client, ObjectTarget(SECRETS, "s", "ns"), planner(Reset("kubectl")),  # type: ignore[arg-type]
                  WriteOptions(dry_run="client", allow_value_changes=True), None)
    assert o.result is Result.changed and o.problems and o.patches
    text = printed(o)
    assert "<redacted>" in text and not leaked(text)


def test_an_error_that_quotes_the_manifest_is_scrubbed() -> None:
    """A manifest (-f) whose value has the wrong type: the simulated 500 quotes it, as the server's does."""
    manifest = secret_manifest(token=[TOKEN])
    client = OneSecret(edited_secret())
    o = write_one(client, ObjectTarget(SECRETS, "s", "ns", manifest=manifest),  # type: ignore[arg-type]
                  planner(Reset("kubectl"), manifest), WriteOptions(), None)
    assert o.result is Result.failed and any("expected string" in p for p in o.problems)
    assert not leaked(printed(o))


def test_a_plan_error_quoting_a_value_is_scrubbed_by_the_last_resort() -> None:
    """Whatever the message's source, the outcome of a Secret says none of its values."""
    from kubectl_fieldown.remedies.plans import MigrationError

    def plan(obj: dict[str, Any]) -> WritePlan:
        raise MigrationError(f"cannot plan: .data.token is {obj['data']['token']!r}")

    o = write_one(OneSecret(edited_secret()), ObjectTarget(SECRETS, "s", "ns"), plan,  # type: ignore[arg-type]
                  WriteOptions(), None)
    assert o.result is Result.failed and o.error == "cannot plan: .data.token is '<redacted>'"
