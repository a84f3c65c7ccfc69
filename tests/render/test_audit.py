"""audit's text output never lets cluster data drive the terminal (names, messages, fix lines)."""

from __future__ import annotations

import io

from kubectl_fieldown.audit import Finding, Severity
from kubectl_fieldown.audit.findings import ObjectFix
from kubectl_fieldown.render.audit import AuditReport, render_text

ESC = "\x1b[31m"


def test_control_characters_from_the_cluster_are_escaped() -> None:
    fix = ObjectFix("widget.example.com", f"w{ESC}", "shop", "kubectl apply --server-side", False,
                    command="handover", args=("--field", ".metadata.labels.t", "--to", f"m{ESC}"), verified=True)
    f = Finding("imperative-writer", Severity.warning, "example.com/v1", "Widget", "shop", f"w{ESC}",
                f"kubectl-label{ESC} owns .metadata.labels.t", fix=fix, resource="widget.example.com")
    for details, label in ((True, "Widget shop/w\\u001b[31m"), (False, "1 object: Widget w\\u001b[31m -n shop")):
        out = io.StringIO()
        render_text(AuditReport([f], 1, ["widgets.example.com"], ["widgets.example.com"]), out, details=details)
        text = out.getvalue()
        assert "\x1b" not in text
        assert "kubectl-label\\u001b[31m owns" in text
        assert label in text.splitlines()
        assert "fix: kubectl fieldown handover" in text


def _reports() -> list[AuditReport]:
    from remedies.states import NOW, RULES, client_side_created, labelled, scaled, server_side_applied

    from kubectl_fieldown.audit import AuditContext, audit_object
    from kubectl_fieldown.audit.fleet import ContextPart

    c = AuditContext(applier=None, rules_for=lambda a, k: RULES if k == "Widget" else None, now=NOW)
    objs = [labelled(scaled(client_side_created(), 7), "team", "payments"), client_side_created(),
            scaled(server_side_applied(), 3)]
    for i, o in enumerate(objs):
        o["metadata"]["name"] = f"w{i}"
    found = [f for o in objs for f in audit_object(o, c)]
    assert found
    types = ["widgets.example.com"]
    many = [f for f in found if f.name == found[0].name]
    others = [f for f in found if f.name != found[0].name]
    assert len(many) > 1 and others
    big = Finding("imperative-writer", Severity.warning, "example.com/v1", "Widget", "shop", "w", "é ✓ \u2028",
                  details={"value": 2**70}, resource="widget.example.com")
    parts = [ContextPart("a", findings=found[:2], objects=2, types=types, complete_types=types),
             ContextPart("b", error="unreachable")]
    # more items and objects than one batch of the writer (256), and a last batch that is not full
    fleet = [client_side_created() for _ in range(600)]
    for i, o in enumerate(fleet):
        o["metadata"]["name"] = f"f{i:03d}"
    fleet_found = [f for o in fleet for f in audit_object(o, c)]
    assert len({f.name for f in fleet_found}) == 600
    return [
        AuditReport(fleet_found, 600, types, types),
        AuditReport([], 0, types, types),
        AuditReport([], 0, [], [], nothing_audited=True),
        AuditReport(found, 3, types, types, namespace="shop", selector="a=b"),
        AuditReport(found[:1], 1, types, [], interrupted=True),
        AuditReport([*found, big], 4, types, types),  # orjson refuses 2**70: the standard encoder writes it all
        AuditReport(found, 3, types, types, contexts=parts),
        # an object's findings apart from each other: the objects are gathered all the same
        AuditReport([*many[:1], *others, *many[1:]], 3, types, types),
    ]


def test_json_is_written_as_it_is_made_and_reads_as_the_whole_document() -> None:
    from kubectl_fieldown.render.audit import _dumps, _grouped_by_object, render_json, to_document

    reports = _reports()
    assert [_grouped_by_object(r.findings) for r in reports][-2:] == [True, False]
    for report in reports:
        out = io.StringIO()
        render_json(report, out)
        assert out.getvalue() == _dumps(to_document(report))


def test_yaml_is_the_json_document() -> None:
    """``audit -o yaml``: the document ``-o json`` streams, as YAML."""
    import contextlib
    import json

    import yaml

    from kubectl_fieldown.cli.auditrun import AuditOutput, render

    for report in _reports():
        written = []
        for fmt in (AuditOutput.json, AuditOutput.yaml):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                render(report, fmt, {})
            written.append(out.getvalue())
        assert yaml.safe_load(written[1]) == json.loads(written[0])
