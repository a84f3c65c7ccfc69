"""``-o prometheus`` and ``--metrics-file``: the exposition parses with the official parser, counts
what the report counts, never names objects, and a reader never sees a half-written file."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubectl_fieldown.audit import Finding, Severity
from kubectl_fieldown.render.audit import AuditReport
from kubectl_fieldown.render.prometheus import ContextRun, metrics_text, write_atomically


def _findings(n: int) -> list[Finding]:
    out = [Finding("client-side-apply", Severity.warning, "apps/v1", "Deployment", f"ns{i % 3}", f"d{i}", "m",
                   resource="deployment.apps") for i in range(n)]
    out.append(Finding("type-forbidden", Severity.error, "v1", "Secret", None, None, "403", resource="secrets"))
    return out


def _samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        assert fam.type == "gauge"
        for s in fam.samples:
            out.setdefault(s.name, []).append((dict(s.labels), s.value))
    return out


def test_exposition_counts_and_labels() -> None:
    report = AuditReport(findings=_findings(7), objects=42, types=["deployments.apps", "secrets"],
                         complete_types=["deployments.apps"], seconds=1.25)
    odd = 'a"b\\c\nd'  # a context name needs the text format's escapes
    text = metrics_text([ContextRun("prod", report), ContextRun(odd, report, reachable=False)], 1700000000.5)
    s = _samples(text)
    findings = {(lab["context"], lab["namespace"], lab["kind"], lab["id"], lab["severity"]): v
                for lab, v in s["fieldown_findings"]}
    assert findings[("prod", "ns0", "Deployment", "client-side-apply", "warning")] == 3
    assert findings[("prod", "ns1", "Deployment", "client-side-apply", "warning")] == 2
    assert findings[("prod", "", "Secret", "type-forbidden", "error")] == 1
    assert findings[(odd, "ns2", "Deployment", "client-side-apply", "warning")] == 2
    assert sum(v for (c, *_), v in findings.items() if c == "prod") == len(report.findings)
    # bounded cardinality: no label carries an object name
    assert all(set(lab) == {"context", "namespace", "kind", "id", "severity"} for lab, _ in s["fieldown_findings"])
    assert "d5" not in text
    per = {name: {lab["context"]: v for lab, v in s[name]} for name in (
        "fieldown_objects_audited", "fieldown_types_failed", "fieldown_types_audited", "fieldown_audit_complete",
        "fieldown_context_reachable", "fieldown_audit_duration_seconds")}
    assert per["fieldown_objects_audited"] == {"prod": 42, odd: 42}
    assert per["fieldown_types_failed"]["prod"] == 1
    assert per["fieldown_types_audited"]["prod"] == 2
    assert per["fieldown_audit_complete"]["prod"] == 0  # secrets were not listed to the end
    assert per["fieldown_context_reachable"] == {"prod": 1, odd: 0}
    assert per["fieldown_audit_duration_seconds"]["prod"] == 1.25
    assert s["fieldown_audit_timestamp_seconds"] == [({}, 1700000000.5)]


def test_a_reader_never_sees_a_half_written_file(tmp_path: Path) -> None:
    target = tmp_path / "fieldown.prom"
    texts = [metrics_text([ContextRun("c", AuditReport(findings=_findings(n), objects=n, types=["t"]))], float(n))
             for n in (0, 500, 3, 2000)]
    stop = threading.Event()
    seen: list[int] = []
    problems: list[str] = []

    def read() -> None:
        while not stop.is_set():
            try:
                text = target.read_text()
            except FileNotFoundError:
                continue  # before the first write
            try:
                fams = {f.name: f for f in text_string_to_metric_families(text)}
                seen.append(int(fams["fieldown_audit_timestamp_seconds"].samples[0].value))
                if text not in texts:
                    problems.append(f"a text no writer wrote ({len(text)} characters)")
            except Exception as e:  # a truncated file fails to parse, or lacks the last family
                problems.append(f"{type(e).__name__}: {e}")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(200):
            write_atomically(str(target), texts[i % len(texts)])
    finally:
        # the reader must have read at least once after the last write before it stops
        done_after = len(seen)
        while len(seen) == done_after and not problems:
            time.sleep(0.001)
        stop.set()
        reader.join()
    assert not problems, problems[:3]
    assert set(seen) <= {0, 500, 3, 2000} and seen
    assert [p.name for p in tmp_path.iterdir()] == ["fieldown.prom"]  # no temporary file left
    mode = target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # readable by the collector, like any file the user writes


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "m.prom"
    write_atomically(str(target), "# old\n")
    with pytest.raises(TypeError):
        write_atomically(str(target), 42)  # type: ignore[arg-type]
    assert target.read_text() == "# old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.prom"]
