"""The write commands' outcomes as text and JSON (render/migrate.py): a Secret's values never
shown, one line per object, the summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

from kubectl_fieldown.kube.writes import Result, WriteOutcome
from kubectl_fieldown.render.migrate import outcome_to_dict, render_outcome, render_summary

LA = "kubectl.kubernetes.io/last-applied-configuration"


def secret_outcome() -> WriteOutcome:
    pointer = "/metadata/annotations/" + LA.replace("/", "~1")
    apply_body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "annotations": {
        LA: '{"stringData":{"pw":"hunter2"}}', "keep": "me"}}}
    patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
             {"op": "replace", "path": pointer, "value": '{"data":{"pw":"aHVudGVyMg=="}}'}]
    return WriteOutcome(api_version="v1", kind="Secret", namespace="ns", name="db", result=Result.changed,
                        dry_run="client", notes=["rebuilt"], patches=[apply_body, patch],
                        requests=[{"type": "apply", "fieldManager": "kubectl-last-applied", "body": apply_body},
                                  {"type": "json-patch", "fieldManager": "x", "patch": patch}])


def test_secret_annotation_is_never_printed() -> None:
    o = secret_outcome()
    text = io.StringIO()
    render_outcome(o, text, verbose=True)
    doc = json.dumps(outcome_to_dict(o))
    for shown in (text.getvalue(), doc):
        assert "hunter2" not in shown and "aHVudGVyMg" not in shown
        assert "<redacted>" in shown and '"keep": "me"' in shown


def test_text_lines_and_summary(tmp_path: Path) -> None:
    ok = WriteOutcome(api_version="example.com/v1", kind="Widget", namespace="ns", name="a", result=Result.changed,
                      retries=2, patches_sent=2)
    bad = WriteOutcome(api_version="example.com/v1", kind="Widget", namespace=None, name="b", result=Result.failed,
                       error="boom")
    out = io.StringIO()
    for o in (ok, bad):
        render_outcome(o, out)
    render_summary([ok, bad], tmp_path, "none", out)
    assert out.getvalue().splitlines() == [
        "widget.example.com/a -n ns: changed (2 retries)",
        "widget.example.com/b: failed: boom",
        "1 changed, 0 unchanged, 1 failed (2 retries after concurrent changes)",
        f"backups: {tmp_path} (undo with: kubectl fieldown undo {tmp_path})",
    ]
    assert outcome_to_dict(ok) == {"apiVersion": "example.com/v1", "kind": "Widget", "namespace": "ns", "name": "a",
                                   "result": "changed", "retries": 2, "patchesSent": 2, "notes": [], "backup": None,
                                   "error": None, "changes": [], "ownership": [], "problems": [], "edits": [],
                                   "maybeWritten": False, "alternative": None}


def test_every_text_line_is_safe_for_a_terminal() -> None:
    """Issue 18, item 4: a manager name with an escape sequence (from the server's managedFields, or
    given with --from-manager) is written escaped in every line, as ``show`` writes it."""
    evil = "evil\x1b]0;pwned\x07\x9b31m"
    o = WriteOutcome(api_version="example.com/v1", kind="Widget", namespace="ns", name="w", result=Result.failed,
                     dry_run="client", notes=[f"moved the fields of {evil} into kubectl (Apply)"],
                     problems=[f"the next apply would fail: conflict with \"{evil}\": .spec.x"],
                     changes=[f"- {evil} (Update, example.com/v1) (owned .spec.x)"],
                     edits=[f"remove .spec.x from your manifest ({evil})"], error=f"refused: {evil}",
                     requests=[{"type": "apply", "fieldManager": evil}], patches=[{"a": evil}])
    out = io.StringIO()
    render_outcome(o, out, verbose=True)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert text.count("evil\\u001b]0;pwned\\u0007\\u009b31m") >= 5, text


def test_yaml_is_the_json_document(tmp_path: Path) -> None:
    """``-o yaml`` of the write commands: the ``FieldownWrite`` document of ``-o json``, as YAML (a
    Secret's values redacted the same way)."""
    import yaml

    from kubectl_fieldown.render.migrate import render_json, render_yaml

    outcomes = [secret_outcome(), WriteOutcome(api_version="example.com/v1", kind="Widget", namespace=None, name="b",
                                               result=Result.failed, error="boom")]
    as_json, as_yaml = io.StringIO(), io.StringIO()
    render_json("migrate --to server-side", "client", outcomes, tmp_path, as_json, interrupted=True, in_flight="x")
    render_yaml("migrate --to server-side", "client", outcomes, tmp_path, as_yaml, interrupted=True, in_flight="x")
    assert yaml.safe_load(as_yaml.getvalue()) == json.loads(as_json.getvalue())
    assert "hunter2" not in as_yaml.getvalue() and "&id" not in as_yaml.getvalue()  # no anchors for a repeated body
