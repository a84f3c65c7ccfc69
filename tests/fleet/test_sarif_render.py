"""SARIF rendering without a cluster: levels, the object's line for whole-object findings, types."""

from __future__ import annotations

import sys
from pathlib import Path

from fleet.helpers import cli, validate_sarif
from kubectl_fieldown.audit import RULES, Finding, Severity
from kubectl_fieldown.manifests.sources import InputDocument
from kubectl_fieldown.render.audit import AuditReport
from kubectl_fieldown.render.sarif import audit_sarif

TEXT = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: s
    namespace: prod
  stringData: {a: b}
"""


def test_levels_object_line_and_type_findings(tmp_path: Path) -> None:
    f = tmp_path / "list.yaml"
    f.write_text(TEXT)
    obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "prod"},
           "stringData": {"a": "b"}}
    findings = [
        Finding("secret-last-applied", Severity.error, "v1", "Secret", "prod", "s", "m1", resource="secret"),
        Finding("untracked", Severity.info, "v1", "Secret", "prod", "s", "m2", resource="secret"),
        Finding("type-forbidden", Severity.error, "v1", "ConfigMap", "prod", None, "403", resource="configmaps",
                details={"resource": "configmaps"}),
    ]
    report = AuditReport(findings=findings, objects=1, types=["secrets", "configmaps"])
    doc = audit_sarif(report, {("v1", "Secret", "prod", "s"): InputDocument(str(f), 1, obj, 1)})
    validate_sarif(doc)
    results = doc["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "note", "error"]
    for r in results[:2]:
        region = r["locations"][0]["physicalLocation"]["region"]
        # a finding about the whole object: the item's metadata.name
        assert (region["startLine"], region["startColumn"]) == (7, 5)
    assert "physicalLocation" not in results[2]["locations"][0]
    assert results[2]["locations"][0]["logicalLocations"] == [
        {"fullyQualifiedName": "configmaps in prod", "kind": "type"}]
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    assert rules[list(RULES).index("untracked")]["defaultConfiguration"]["level"] == "note"


def test_a_changed_field_named_in_a_sentence_is_located(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: n\n"
                 "spec:\n  color: red\n  replicas: 3\n")
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "n"},
           "spec": {"color": "red", "replicas": 3}}
    risk = Finding("values-at-risk", Severity.error, "example.com/v1", "Widget", "n", "w", "m",
                   resource="widget.example.com", details={"changes": ["the apply changes .spec.replicas: 5 → 3"]})
    doc = audit_sarif(AuditReport(findings=[risk], objects=1, types=["widgets.example.com"]),
                      {("example.com/v1", "Widget", "n", "w"): InputDocument(str(f), 1, obj)})
    validate_sarif(doc)
    region = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (8, 3)


def test_conflicts_sarif_on_the_examples_offline() -> None:
    """examples/README.md's offline prediction: two fields conflict, each result on its line."""
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(root / "no-such-home")}
    r = cli(env, "conflicts", "-f", "examples/apply/deployment.yaml", "--live", "examples/deployment.yaml",
            "--field-manager", "kubectl", "-o", "sarif", cwd=root)
    assert r.code == 1, r.err
    doc = r.json()
    validate_sarif(doc)
    lines = (root / "examples/apply/deployment.yaml").read_text().splitlines()
    got = []
    for res in doc["runs"][0]["results"]:
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "examples/apply/deployment.yaml"  # relative, as given
        line, column = loc["region"]["startLine"], loc["region"]["startColumn"]
        got.append((res["ruleId"], res["properties"]["path"], lines[line - 1][column - 1:]))
    assert sorted(set(got)) == [("apply-conflict", ".metadata.labels.team", "team: checkout"),
                                ("apply-conflict", ".spec.replicas", "replicas: 3")]
