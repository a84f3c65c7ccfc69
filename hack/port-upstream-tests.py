#!/usr/bin/env python3
"""Port upstream's own test tables to recorded cases (JSON), so the suite runs them through the library.

    hack/port-upstream-tests.py     # rewrites tests/conformance/upstream/*.json from the lab's sources

Reads the Go sources that hack/lab/build.sh unpacked from Debian (PREFIX, default ~/.cache/k8slab)
and extracts the tables verbatim — inputs and expected outputs as upstream wrote them; nothing is
written by hand. Each output file names the source file and the Debian package version it came from.

* client-go util/csaupgrade/upgrade_test.go ``TestUpgradeCSA`` -> client-go-csaupgrade.json
* structured-merge-diff v6 merge/*_test.go (every ``map[string]TestCase`` table, read with Go's own
  go/parser by hack/port-smd-tests/main.go, built with the lab's Go) -> smd-merge.json
* structured-merge-diff v6 typed/*_test.go (every package-level ``...Cases`` table) -> smd-typed.json
* apimachinery pkg/util/strategicpatch/patch_test.go (its YAML test data, raw-case tables and
  TestUnknownField's table, and the MergeItem struct they patch) -> apimachinery-strategicpatch.json
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
PREFIX = Path(os.environ.get("PREFIX") or Path.home() / ".cache" / "k8slab")
GOSRC = PREFIX / "gosrc" / "usr" / "share" / "gocode" / "src"
OUT = REPO / "tests" / "conformance" / "upstream"


def package_version(name: str) -> str:
    debs = sorted((PREFIX / "debs" / "src").glob(f"{name}_*.deb"))
    if not debs:
        sys.exit(f"no {name} .deb under {PREFIX}/debs/src: run hack/lab/build.sh first")
    return subprocess.run(["dpkg-deb", "-f", str(debs[0]), "Version"], capture_output=True, text=True,
                          check=True).stdout.strip()


CASE = re.compile(
    r'Name:\s*"(?P<name>[^"]+)",\s*'
    r'CSAManagers:\s*\[\]string\{(?P<csa>[^}]*)\},\s*'
    r'SSAManager:\s*"(?P<ssa>[^"]+)",\s*'
    r'(?:Options:\s*\[\]csaupgrade\.Option\{csaupgrade\.Subresource\("(?P<sub>[^"]*)"\)\},\s*)?'
    r'OriginalObject:\s*\[\]byte\(`(?P<orig>[^`]*)`\),\s*'
    r'ExpectedObject:\s*\[\]byte\(`(?P<want>[^`]*)`\)',
    re.S,
)


def csaupgrade() -> dict[str, object]:
    rel = "k8s.io/client-go/util/csaupgrade/upgrade_test.go"
    text = (GOSRC / rel).read_text()
    body = text[text.index("func TestUpgradeCSA("):]
    body = body[: body.index("\nfunc ", 1)] if "\nfunc " in body[1:] else body
    # comments between the fields of a case are not part of the table
    body = re.sub(r"^\s*//.*$", "", body, flags=re.M)
    cases = []
    for m in CASE.finditer(body):
        cases.append({
            "name": m["name"],
            "csaManagers": re.findall(r'"([^"]*)"', m["csa"]),
            "ssaManager": m["ssa"],
            "subresource": m["sub"] or "",
            "original": yaml.safe_load(m["orig"]),
            "expected": yaml.safe_load(m["want"]),
        })
    declared = len(re.findall(r"^\t\t\tName:", body, flags=re.M))
    if len(cases) != declared:
        sys.exit(f"{rel}: parsed {len(cases)} of {declared} cases: the table's shape changed")
    return {"source": rel, "function": "TestUpgradeCSA",
            "package": f"golang-k8s-client-go-dev {package_version('golang-k8s-client-go-dev')}", "cases": cases}


def _smd_port(args: list[str]) -> str:
    """Build hack/port-smd-tests/main.go with the lab's Go and run it on ``args``."""
    goroots = sorted((PREFIX / "go-root" / "usr" / "lib").glob("go-*"))
    if not goroots:
        sys.exit(f"no lab Go under {PREFIX}: run hack/lab/build.sh first")
    goroot = goroots[0]
    with tempfile.TemporaryDirectory(prefix="port-smd-") as tmp:
        pkg = Path(tmp) / "src" / "k8slab.local" / "port-smd-tests"
        pkg.mkdir(parents=True)
        shutil.copy(REPO / "hack" / "port-smd-tests" / "main.go", pkg / "main.go")
        env = {**os.environ, "GOROOT": str(goroot), "PATH": f"{goroot / 'bin'}:{os.environ.get('PATH', '')}",
               "GO111MODULE": "off", "GOFLAGS": "", "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOPATH": tmp,
               "GOCACHE": str(PREFIX / "gocache"), "CGO_ENABLED": "0"}
        subprocess.run([str(goroot / "bin" / "go"), "build", "-o", f"{tmp}/port", "k8slab.local/port-smd-tests"],
                       cwd=tmp, env=env, check=True)
        return subprocess.run([f"{tmp}/port", *args], capture_output=True, text=True, check=True).stdout


SMD = "sigs.k8s.io/structured-merge-diff/v6"


def smd_merge() -> dict[str, object]:
    rel = f"{SMD}/merge"
    doc: dict[str, object] = json.loads(_smd_port([str(GOSRC / rel)]))
    deb = "golang-k8s-sigs-structured-merge-diff-v6-dev"
    return {"source": f"{rel}/*_test.go", "package": f"{deb} {package_version(deb)}", **doc}


APIMACHINERY_SMP = "k8s.io/apimachinery/pkg/util/strategicpatch"


def _yaml_doc(text: str | None) -> object:
    """A test's YAML text as Go's yaml.YAMLToJSON reads it (absent or empty: null)."""
    return yaml.safe_load(text) if text else None


def strategicpatch() -> dict[str, object]:
    """apimachinery's strategic merge patch tables (patch_test.go): the YAML test data
    (``createStrategicMergePatchTestCaseData`` and ``customStrategicMergePatchTestCaseData``: objects)
    and the ``[]StrategicMergePatchRawTestCase`` tables (``strategicMergePatchRawTestCases``,
    ``customStrategicMergePatchRawTestCases``, ``replaceRawExtensionPatchTestCases``: YAML texts,
    read here), with the Go struct the tests patch (``MergeItem``, with its tags)."""
    doc = json.loads(_smd_port(["-tables", str(GOSRC / APIMACHINERY_SMP)]))
    tables: dict[str, list[dict[str, object]]] = {}
    fields = ("original", "modified", "current", "twoWay", "threeWay", "result", "twoWayResult")
    for name in ("createStrategicMergePatchTestCaseData", "customStrategicMergePatchTestCaseData"):
        cases = yaml.safe_load(doc["data"][name])["testCases"]
        tables[name] = [{"description": c["description"], **{f: c.get(f) for f in fields}, "raw": False}
                        for c in cases]
    for name in ("strategicMergePatchRawTestCases", "customStrategicMergePatchRawTestCases",
                 "replaceRawExtensionPatchTestCases"):
        if doc[name].get("unsupported"):
            sys.exit(f"{APIMACHINERY_SMP}: {name}: {doc[name]['unsupported']}")
        out = []
        for c in doc[name]["cases"]:
            d = c.get("StrategicMergePatchRawTestCaseData") or {}
            out.append({"description": c["Description"],
                        **{f: _yaml_doc(d.get(f[0].upper() + f[1:])) for f in fields},
                        # a raw case without TwoWayResult expects Modified (as for YAML data's null)
                        "twoWayResultGiven": bool(d.get("TwoWayResult")), "resultGiven": bool(d.get("Result")),
                        "expectedError": d.get("ExpectedError") or "", "raw": True})
        tables[name] = out
    # TestUnknownField: JSON texts, the patches and results compared as Go's JSON text
    unknown = doc.get("TestUnknownField") or {}
    if unknown.get("unsupported") or not unknown.get("cases"):
        sys.exit(f"{APIMACHINERY_SMP}: TestUnknownField: {unknown.get('unsupported') or 'not found'}")
    deb = "golang-k8s-apimachinery-dev"
    return {"source": f"{APIMACHINERY_SMP}/patch_test.go", "package": f"{deb} {package_version(deb)}",
            "root": "MergeItem", "goStructs": doc["goStructs"], "tables": tables,
            "unknownField": dict(sorted(unknown["cases"].items()))}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    doc = csaupgrade()
    (OUT / "client-go-csaupgrade.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"client-go-csaupgrade.json: {len(doc['cases'])} cases from {doc['source']} ({doc['package']})")
    deb = "golang-k8s-sigs-structured-merge-diff-v6-dev"
    typed = {"source": f"{SMD}/typed/*_test.go", "package": f"{deb} {package_version(deb)}",
             **json.loads(_smd_port(["-tables", str(GOSRC / SMD / "typed")]))}
    (OUT / "smd-typed.json").write_text(json.dumps(typed, indent=1, sort_keys=False) + "\n")
    print(f"smd-typed.json: tables {', '.join(k for k in typed if k.endswith('Cases'))}")
    smp = strategicpatch()
    (OUT / "apimachinery-strategicpatch.json").write_text(json.dumps(smp, indent=1, sort_keys=False) + "\n")
    tables = smp["tables"]
    assert isinstance(tables, dict)
    print(f"apimachinery-strategicpatch.json: {', '.join(f'{k} ({len(v)})' for k, v in tables.items())}")
    smd = smd_merge()
    (OUT / "smd-merge.json").write_text(json.dumps(smd, indent=1, sort_keys=False) + "\n")
    cases = smd["cases"]
    assert isinstance(cases, list)
    print(f"smd-merge.json: {len(cases)} cases, {sum(1 for c in cases if not c.get('unsupported'))} expressible "
          f"({smd['package']})")


if __name__ == "__main__":
    main()
