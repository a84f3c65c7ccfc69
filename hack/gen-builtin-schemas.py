#!/usr/bin/env python3
"""Regenerate the offline schemas of built-in kinds: kubectl_fieldown/data/builtin-schemas.json, and
ObjectMeta's part of it, kubectl_fieldown/data/builtin-object-meta.json.

The source is the wheel of the ``kubernetes-validate`` package (SOURCE_VERSION below): per
Kubernetes minor version, ``kubernetes_validate/kubernetes-json-schema/v1.XX.0-local/_definitions.json``
(the cluster OpenAPI of that release as JSON schema, ``$defs``). The extract keeps, of every schema
node, only the keywords the merge-type converter reads (:data:`KEPT_KEYWORDS`, ``required`` of
definitions) and stores each definition once for all the versions where it is the same, so the
~17 MB the tool read (108 MB installed with the package) become ~0.8 MB of package data. The small
file holds the definitions ObjectMeta refers to (``builtin.object_meta_extract``): a custom
resource's schema needs nothing else of the built-in ones, and reads it without the large file.

The extract must give exactly the merge types the full documents give. This script converts both
(``BuiltinSchemas.fingerprint()``: every definition's merge types and the kind index) and refuses
to write when a version differs; the test suite compares the shipped files the same way with the
documents of the installed package (a test dependency pinned to SOURCE_VERSION) on every run.

    .venv/bin/python hack/gen-builtin-schemas.py               # pip-downloads the wheel, writes both files
    .venv/bin/python hack/gen-builtin-schemas.py --wheel W.whl # offline, from a downloaded wheel
    .venv/bin/python hack/gen-builtin-schemas.py --check       # exit 1 if the committed files differ

Re-running it on the same wheel gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubectl_fieldown.schema import builtin  # noqa: E402

SOURCE_PACKAGE = "kubernetes-validate"
SOURCE_VERSION = "1.37.0"
DATA = REPO / "kubectl_fieldown" / "data" / builtin.DATA_FILE
OBJECT_META_DATA = REPO / "kubectl_fieldown" / "data" / builtin.OBJECT_META_FILE
_MEMBER = re.compile(r"^kubernetes_validate/kubernetes-json-schema/v(\d+)\.(\d+)\.0-local/_definitions\.json$")

KEPT_KEYWORDS = (
    # schema/openapi.py SchemaConverter and list_relationship
    "type",
    "format",
    "nullable",
    "$ref",
    "allOf",
    "properties",
    "items",
    "additionalProperties",
    "default",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-map-type",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    # schema/openapi.py kind_index
    "x-kubernetes-group-version-kind",
)
"""Keywords of a schema node the conversion reads. Dropped: descriptions, enums, oneOf (the
int-or-string spelling: a node without ``type`` is untyped whatever its oneOf says), unions."""


def prune(node: Any) -> Any:
    """``node`` with only :data:`KEPT_KEYWORDS`, recursively through the sub-schemas it keeps."""
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEPT_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            value = {name: prune(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties"):
            value = prune(value)
        elif key == "allOf" and isinstance(value, list):
            value = [prune(part) for part in value]
        kept[key] = value
    return kept


def prune_definition(node: Any) -> Any:
    kept = prune(node)
    # `required` of a definition: the zero default of a required key field (schema/builtin.py)
    if isinstance(node, dict) and "required" in node:
        kept["required"] = node["required"]
    return kept


def download_wheel(dest: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--dest", str(dest), f"{SOURCE_PACKAGE}=={SOURCE_VERSION}"],
        check=True,
    )
    wheels = sorted(dest.glob(f"kubernetes_validate-{SOURCE_VERSION}-*.whl"))
    if not wheels:
        sys.exit(f"gen-builtin-schemas: pip download produced no {SOURCE_PACKAGE} {SOURCE_VERSION} wheel")
    return wheels[0]


def read_sources(wheel: Path) -> dict[str, dict[str, Any]]:
    """``{"1.25": $defs, …}`` from the wheel, oldest first."""
    found: dict[tuple[int, int], dict[str, Any]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            match = _MEMBER.match(member)
            if match:
                document = json.loads(archive.read(member))
                found[(int(match[1]), int(match[2]))] = document["$defs"]
    if not found:
        sys.exit(f"gen-builtin-schemas: {wheel.name} has no kubernetes-json-schema/v1.XX.0-local/_definitions.json")
    return {f"{major}.{minor}": found[(major, minor)] for major, minor in sorted(found)}


def build_extract(sources: Mapping[str, Mapping[str, Any]], wheel: Path) -> str:
    versions = list(sources)
    variants: dict[str, list[tuple[list[str], Any]]] = {}
    for version, definitions in sources.items():
        if list(definitions) != sorted(definitions):
            # the extract lists definitions by name; kind_index lets the first claimant win
            sys.exit(f"gen-builtin-schemas: {version}: definitions are not sorted by name")
        for name, node in definitions.items():
            pruned = prune_definition(node)
            text = json.dumps(pruned, separators=(",", ":"))  # key order counts: fields keep it
            for seen_in, seen in variants.setdefault(name, []):
                if json.dumps(seen, separators=(",", ":")) == text:
                    seen_in.append(version)
                    break
            else:
                variants[name].append(([version], pruned))
    header = {
        "format": 1,
        "source": {
            "package": SOURCE_PACKAGE,
            "version": SOURCE_VERSION,
            "wheel": wheel.name,
            "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
            "files": "kubernetes_validate/kubernetes-json-schema/v1.XX.0-local/_definitions.json",
            "tool": "hack/gen-builtin-schemas.py",
        },
        "kept_keywords": [*KEPT_KEYWORDS, "required (of definitions)"],
        "versions": versions,
    }
    return extract_text(header, {name: [[seen_in, node] for seen_in, node in variants[name]]
                                 for name in sorted(variants)})


def extract_text(header: Mapping[str, Any], definitions: Mapping[str, Any]) -> str:
    """An extract as it is written: one definition per line."""
    lines = [json.dumps(header, separators=(",", ":"))[:-1] + ',"definitions":{']
    names = sorted(definitions)
    for i, name in enumerate(names):
        comma = "," if i < len(names) - 1 else ""
        lines.append(f"{json.dumps(name)}:{json.dumps(definitions[name], separators=(',', ':'))}{comma}")
    lines.append("}}")
    return "\n".join(lines) + "\n"


def object_meta_text(document: Mapping[str, Any]) -> str:
    small = builtin.object_meta_extract(document)
    return extract_text({k: v for k, v in small.items() if k != "definitions"}, small["definitions"])


def fingerprints(sources: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    return {version: builtin.BuiltinSchemas(version, definitions).fingerprint()
            for version, definitions in sources.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help=f"a {SOURCE_PACKAGE} {SOURCE_VERSION} wheel (default: pip download)")
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gen-builtin-schemas.") as tmp:
        wheel = args.wheel or download_wheel(Path(tmp))
        sources = read_sources(wheel)
        extract = build_extract(sources, wheel)

    full = fingerprints(sources)
    document = json.loads(extract)
    shipped = {}
    for version in document["versions"]:
        definitions = builtin.definitions_for(document, version)
        shipped[version] = builtin.BuiltinSchemas(version, definitions).fingerprint()
    differ = [v for v in full if full[v] != shipped[v]]
    if differ:
        sys.exit(f"gen-builtin-schemas: the extract changes the merge types of {', '.join(differ)}; "
                 "KEPT_KEYWORDS misses a keyword the converter reads")
    outputs = {DATA: extract, OBJECT_META_DATA: object_meta_text(document)}
    if args.check:
        stale = [p for p, text in outputs.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"gen-builtin-schemas: differs from the generated output: {path.relative_to(REPO)}", file=sys.stderr)
        if not stale:
            print(f"gen-builtin-schemas: up to date ({SOURCE_PACKAGE} {SOURCE_VERSION}, {len(full)} versions)")
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    size = sum(len(json.dumps(d)) for d in sources.values())
    print(f"gen-builtin-schemas: {SOURCE_PACKAGE} {SOURCE_VERSION}: versions {', '.join(full)}; "
          f"{size / 1e6:.1f} MB of definitions -> {len(extract.encode()) / 1e6:.2f} MB "
          f"({DATA.relative_to(REPO)}); merge types identical for every version")
    return 0


if __name__ == "__main__":
    sys.exit(main())
