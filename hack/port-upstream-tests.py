#!/usr/bin/env python3
"""Port upstream's own test tables to recorded cases (JSON), so the suite runs them through the library.

    hack/port-upstream-tests.py     # rewrites tests/conformance/upstream/*.json from the lab's sources

Reads the Go sources that hack/lab/build.sh unpacked from Debian (PREFIX, default ~/.cache/k8slab)
and extracts the tables verbatim — inputs and expected outputs as upstream wrote them; nothing is
written by hand. Each output file names the source file and the Debian package version it came from.

* client-go util/csaupgrade/upgrade_test.go ``TestUpgradeCSA`` -> client-go-csaupgrade.json
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    doc = csaupgrade()
    (OUT / "client-go-csaupgrade.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"client-go-csaupgrade.json: {len(doc['cases'])} cases from {doc['source']} ({doc['package']})")


if __name__ == "__main__":
    main()
