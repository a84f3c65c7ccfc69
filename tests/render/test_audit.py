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
