"""``-o sarif`` of ``audit -f`` and ``conflicts -f`` on the real API server: valid SARIF 2.1.0 (the
OASIS schema, vendored), each result at the line of the manifest field it is about."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import lab
import pytest
import yaml

from fleet.helpers import cli, validate_sarif

W = "example.com/v1"


@pytest.fixture
def env(cluster: lab.Cluster, tmp_path: Path) -> dict[str, str]:
    e = cluster.env()
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        e.pop(var, None)
    e["FIELDOWN_CACHE_DIR"] = str(tmp_path / "cache")
    return e


@pytest.fixture
def edited(cluster: lab.Cluster, tmp_path: Path) -> tuple[str, Path]:
    """A Widget applied by kubectl, then edited by kubectl-edit (.spec.color); and next manifests for flux
    that set another color, in the second document of a file, with a leading comment block."""
    ns = f"sarif-{uuid.uuid4().hex[:8]}"
    first = {"apiVersion": W, "kind": "Widget", "metadata": {"name": "w", "namespace": ns},
             "spec": {"color": "red", "replicas": 2}}
    cluster.kubectl("apply", "--server-side", "--field-manager=kubectl", "-f", "-", input=yaml.safe_dump(first))
    cluster.kubectl("patch", "widgets", "w", "-n", ns, "--type=merge", "-p", '{"spec":{"color":"green"}}',
                    "--field-manager=kubectl-edit")
    path = tmp_path / "next.yaml"
    path.write_text(
        "# the next manifests\n"
        f"apiVersion: {W}\nkind: Widget\nmetadata:\n  name: other\n  namespace: {ns}\nspec:\n  color: red\n"
        "---\n"
        f"apiVersion: {W}\nkind: Widget\nmetadata:\n  name: w\n  namespace: {ns}\nspec:\n"
        "  replicas: 2\n"
        "  color: blue   # line 17, column 3\n")
    return ns, path


def _results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc["runs"][0]["results"])


def _region(r: dict[str, Any]) -> tuple[str, int, int]:
    loc = r["locations"][0]["physicalLocation"]
    return loc["artifactLocation"]["uri"], loc["region"]["startLine"], loc["region"]["startColumn"]


def test_audit_sarif_points_at_the_conflicting_field(env: dict[str, str], edited: tuple[str, Path]) -> None:
    ns, path = edited
    r = cli(env, "audit", "-n", ns, "--kinds", "widgets", "--field-manager", "flux", "-f", str(path), "-o", "sarif")
    assert r.code == 1, r.err
    doc = r.json()
    validate_sarif(doc)
    run = doc["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert "predicted-conflict" in rule_ids and "imperative-writer" in rule_ids
    predicted = [x for x in _results(doc) if x["ruleId"] == "predicted-conflict"]
    assert len(predicted) == 1
    p = predicted[0]
    assert p["level"] == "error"
    assert rule_ids[p["ruleIndex"]] == "predicted-conflict"
    uri, line, column = _region(p)
    assert (line, column) == (17, 3)
    assert path.read_text().splitlines()[line - 1].strip().startswith("color: blue")
    assert Path(uri.removeprefix("file://")) == path
    assert p["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == f"widget.example.com/{ns}/w"
    # the fold of the field's owners into flux, checked with (and naming) the manifest
    assert p["properties"]["fix"].startswith("kubectl fieldown migrate widget.example.com/w")
    assert p["properties"]["fix"].endswith(f" --manifest {path}")
    assert p["message"]["text"].endswith("\nfix: " + p["properties"]["fix"])
    # the imperative writer's finding names the same field it owns
    imperative = next(x for x in _results(doc) if x["ruleId"] == "imperative-writer")
    assert imperative["level"] == "warning"
    assert _region(imperative)[1:] == (17, 3)


def test_audit_sarif_without_manifests_has_logical_locations(env: dict[str, str], edited: tuple[str, Path]) -> None:
    ns, _ = edited
    r = cli(env, "audit", "-n", ns, "--kinds", "widgets", "-o", "sarif")
    assert r.code == 0, r.err  # only warnings
    doc = r.json()
    validate_sarif(doc)
    results = _results(doc)
    assert results and all("physicalLocation" not in x["locations"][0] for x in results)
    assert {x["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for x in results} == \
        {f"widget.example.com/{ns}/w"}
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_conflicts_sarif(env: dict[str, str], edited: tuple[str, Path], cluster: lab.Cluster) -> None:
    _, path = edited
    r = cli(env, "conflicts", "--field-manager", "flux", "-f", str(path), "-o", "sarif")
    assert r.code == 1, r.err
    doc = r.json()
    validate_sarif(doc)
    results = _results(doc)
    assert [x["ruleId"] for x in results] == ["apply-conflict"]
    assert _region(results[0])[1:] == (17, 3)
    assert results[0]["properties"]["path"] == ".spec.color"
    assert "kubectl-edit" in results[0]["message"]["text"]
    # the server agrees: flux's apply of that document conflicts on that field
    second = path.read_text().split("---\n")[1]
    proc = cluster.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=flux", "-f", "-",
                           input=second, check=False)
    assert proc.returncode != 0 and ".spec.color" in proc.stderr


def test_conflicts_sarif_reports_unreadable_documents(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\n")
    r = cli(env, "conflicts", "--field-manager", "flux", "-f", str(bad), "-o", "sarif")
    assert r.code == 2  # an input error (README)
    assert "has no metadata.name" in r.err
    doc = r.json()
    validate_sarif(doc)
    assert [x["ruleId"] for x in _results(doc)] == ["input-error"]
    assert "has no metadata.name" in _results(doc)[0]["message"]["text"]
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False
