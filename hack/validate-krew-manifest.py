#!/usr/bin/env python3
"""Check a krew plugin manifest by the rules krew applies, offline.

    python3 hack/validate-krew-manifest.py krew/fieldown.yaml [--archive dist/kubectl-fieldown-vX.Y.Z-linux-amd64.zip]

krew runs these checks when it reads a manifest (``internal/index/validation``: ``ValidatePlugin``,
``validatePlatform``, ``validateFiles``, ``validateSelector``; versions by apimachinery's
``version.ParseSemantic``), and krew-index CI adds more (``cmd/validate-krew-manifest``: the file
is ``<name>.yaml``, every platform selects a supported os/arch and no os/arch is selected twice,
and installing each platform works and extracts a LICENSE file). This is a reading of those rules
(kubernetes-sigs/krew, 2026), not a copy. With ``--archive`` the install step is checked on the
local archive, for the platforms whose ``uri`` names it (one archive per platform): its SHA-256 is the
manifest's, ``bin`` is inside the installation and executable, a
LICENSE is installed. A few rules are this project's own and say so ("project rule").

Exit 0 when the manifest passes, else 1 with one problem per line. Needs PyYAML.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import posixpath
import re
import sys
import tarfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
KIND = "Plugin"
MANIFEST_EXTENSION = ".yaml"
SHORT_DESCRIPTION_WIDTH = 50  # `kubectl krew search` cuts the column at 50 characters
SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")  # Go's `^[\w-]+$` (\w is ASCII in Go)
SHA256 = re.compile(r"^[a-f0-9]{64}$")
WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
SUPPORTED_PLATFORMS = [
    ("windows", "386"), ("windows", "amd64"), ("windows", "arm64"),
    ("linux", "386"), ("linux", "amd64"), ("linux", "arm"), ("linux", "arm64"), ("linux", "ppc64le"),
    ("darwin", "386"), ("darwin", "amd64"), ("darwin", "arm64"),
]
LICENSE_FILES = {"license", "license.txt", "license.md", "licenses", "licenses.txt", "licenses.md", "copying",
                 "copying.txt"}
SPEC_FIELDS = {"version", "shortDescription", "description", "caveats", "homepage", "platforms"}
PLATFORM_FIELDS = {"uri", "sha256", "selector", "files", "bin"}
_VERSION = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$", re.S)
_VERSION_EXTRA = re.compile(r"^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$")


def semver_problem(version: str) -> str | None:
    """Why ``version`` is not a krew version (``v`` + apimachinery ``ParseSemantic``), or None."""
    if not version.startswith("v"):
        return f"version string {version!r} not starting with 'v'"
    match = _VERSION.match(version)
    if not match:
        return f"could not parse {version!r} as version"
    components = match[1].split(".")
    if len(components) != 3:
        return f"illegal version string {version!r}"
    for i, component in enumerate(components):
        if i == 2 and component in ("x", "*"):
            continue
        if component.startswith("0") and component != "0":
            return f"illegal zero-prefixed version component {component!r} in {version!r}"
    extra = match[2]
    if extra:
        parts = _VERSION_EXTRA.match(extra)
        if not parts:
            return f"could not parse pre-release/metadata ({extra}) in version {version!r}"
        for component in (parts[1] or "").split("."):
            if component.isdigit() and component.startswith("0") and component != "0":
                return f"illegal zero-prefixed version component {component!r} in {version!r}"
    return None


def _selector_problem(selector: Any) -> str | None:
    if selector is None:
        return "nil selector is not supported"
    if not isinstance(selector, Mapping):
        return "selector is not a mapping"
    labels = selector.get("matchLabels")
    expressions = selector.get("matchExpressions")
    if labels is None and not expressions:
        return "empty selector is not supported"
    keys = list(labels or {}) + [e.get("key") for e in expressions or () if isinstance(e, Mapping)]
    for key in keys:
        if key not in ("os", "arch"):
            return f"key {key!r} not supported"
    if labels is not None and len(labels) == 0:
        return "`matchLabels` specified but empty"
    if expressions is not None and len(expressions) == 0:
        return "`matchExpressions` specified but empty"
    for e in expressions or ():
        operator, values = e.get("operator"), e.get("values") or []
        if operator in ("In", "NotIn") and not values:
            return f"operator {operator!r} needs values"
        if operator in ("Exists", "DoesNotExist") and values:
            return f"operator {operator!r} takes no values"
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return f"unknown operator {operator!r}"
    return None


def selects(selector: Mapping[str, Any], os_name: str, arch: str) -> bool:
    """``metav1.LabelSelectorAsSelector(selector).Matches({os, arch})``."""
    labels = {"os": os_name, "arch": arch}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for e in selector.get("matchExpressions") or ():
        present, value, values = e["key"] in labels, labels.get(e["key"]), e.get("values") or []
        operator = e["operator"]
        if (
            (operator == "In" and value not in values)
            or (operator == "NotIn" and present and value in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def _platform_problems(p: Any) -> list[str]:
    if not isinstance(p, Mapping):
        return ["is not a mapping"]
    problems = [f"unknown field {k!r} (project rule: krew ignores it)" for k in p if k not in PLATFORM_FIELDS]
    for field in ("uri", "sha256", "bin"):
        if field in p and not isinstance(p[field], str):
            problems.append(f"`{field}` is not a string")
    if not p.get("uri"):
        problems.append("`uri` has to be set")
    if not p.get("sha256"):
        problems.append("`sha256` sum has to be set")
    elif not SHA256.match(str(p["sha256"])):
        problems.append(f"`sha256` value {p['sha256']} is not valid, must match pattern {SHA256.pattern}")
    if not p.get("bin"):
        problems.append("`bin` has to be set")
    files = p.get("files")
    if "files" in p and files is not None:
        if not files:
            problems.append("`files` is invalid: `files` has to be unspecified or non-empty")
        for op in files or ():
            if not isinstance(op, Mapping) or not op.get("from"):
                problems.append("`files` is invalid: `from` field has to be set")
            elif not op.get("to"):
                problems.append("`files` is invalid: `to` field has to be set")
    selector_problem = _selector_problem(p.get("selector"))
    if selector_problem:
        problems.append(f"invalid platform selector: {selector_problem}")
    uri = str(p.get("uri") or "")
    if uri and not uri.startswith("https://"):
        problems.append(f"`uri` {uri!r} is not https (project rule)")
    if uri and not uri.endswith((".zip", ".tar.gz")):
        problems.append(f"`uri` {uri!r} is not a .zip or .tar.gz archive")
    return problems


def manifest_problems(path: Path) -> list[str]:
    """Every rule krew (and krew-index CI, structurally) applies to the manifest at ``path``."""
    if path.suffix != MANIFEST_EXTENSION:
        return [f"expected manifest extension {MANIFEST_EXTENSION!r} but found {path.suffix!r}"]
    name = path.name[: -len(MANIFEST_EXTENSION)]
    try:
        plugin = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        return [f"failed to parse yaml file {str(path)!r}: {e}"]
    if not isinstance(plugin, Mapping):
        return ["the manifest is not a mapping"]
    problems: list[str] = []
    if plugin.get("apiVersion") != API_VERSION:
        problems.append(f"plugin manifest has apiVersion={plugin.get('apiVersion')!r}, not supported")
    if plugin.get("kind") != KIND:
        problems.append(f"plugin manifest has kind={plugin.get('kind')!r}, but only {KIND!r} is supported")
    if not SAFE_NAME.match(name) or name.lower() in WINDOWS_RESERVED:
        problems.append(f"the plugin name {name!r} is not allowed, must match {SAFE_NAME.pattern!r}")
    metadata = plugin.get("metadata") if isinstance(plugin.get("metadata"), Mapping) else {}
    if metadata.get("name") != name:
        problems.append(f"plugin should be named {name!r}, not {metadata.get('name')!r}")
    spec = plugin.get("spec") if isinstance(plugin.get("spec"), Mapping) else {}
    problems += [f"spec: unknown field {k!r} (project rule: krew ignores it)" for k in spec if k not in SPEC_FIELDS]
    for field in ("version", "shortDescription", "description", "caveats", "homepage"):
        if field in spec and not isinstance(spec[field], str):
            problems.append(f"spec.{field} is not a string")
    short = str(spec.get("shortDescription") or "")
    if not short:
        problems.append("should have a short description")
    if "\r" in short or "\n" in short:
        problems.append("should not have line breaks in short description")
    if len(short) > SHORT_DESCRIPTION_WIDTH:
        problems.append(f"shortDescription is {len(short)} characters; `kubectl krew search` shows "
                        f"{SHORT_DESCRIPTION_WIDTH} (project rule)")
    if not spec.get("description"):
        problems.append("spec.description is empty (required by the krew manifest guide; project rule)")
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("should have a platform specified")
    version = str(spec.get("version") or "")
    if not version:
        problems.append("should have a version specified")
    else:
        version_problem = semver_problem(version)
        if version_problem:
            problems.append(f"failed to parse plugin version: {version_problem}")
    for i, platform in enumerate(platforms):
        problems += [f"spec.platforms[{i}] is badly constructed: {p}" for p in _platform_problems(platform)]
    if problems:
        return problems
    for i, platform in enumerate(platforms):
        if not any(selects(platform["selector"], o, a) for o, a in SUPPORTED_PLATFORMS):
            problems.append(f"spec.platform[{i}]'s selector doesn't match any supported platforms")
    for o, a in SUPPORTED_PLATFORMS:
        matching = [i for i, p in enumerate(platforms) if selects(p["selector"], o, a)]
        if len(matching) > 1:
            problems.append(f"multiple spec.platforms (at indexes {matching}) have overlapping selectors that "
                            f"select {o}/{a}")
    return problems


def _archive_members(archive: Path) -> dict[str, int]:
    """Regular files of the archive with their permission bits."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            return {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist() if not i.is_dir()}
    with tarfile.open(archive) as t:
        return {m.name: m.mode & 0o777 for m in t.getmembers() if m.isfile()}


def install_problems(path: Path, archive: Path) -> list[str]:
    """What ``kubectl krew install --manifest path --archive archive`` would refuse, per platform."""
    plugin = yaml.safe_load(path.read_text(encoding="utf-8"))
    problems: list[str] = []
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    members = _archive_members(archive)
    # one archive per platform: the platforms whose uri names this archive are the ones it installs
    chosen = [(i, p) for i, p in enumerate(plugin["spec"]["platforms"])
              if posixpath.basename(p["uri"]) == archive.name]
    if not chosen:
        problems.append(f"no spec.platforms uri names the archive {archive.name} (project rule)")
    for i, p in chosen:
        where = f"spec.platforms[{i}]"
        if p["sha256"] != digest:
            problems.append(f"{where}: sha256 {p['sha256']} is not the archive's ({digest})")
        installed: dict[str, int] = {}
        for op in p.get("files") or [{"from": "*", "to": "."}]:
            for member, mode in members.items():
                if fnmatch.fnmatchcase(member, op["from"]):
                    installed[posixpath.normpath(posixpath.join(op["to"], posixpath.basename(member)))] = mode
        bin_path = posixpath.normpath(p["bin"])
        if bin_path.startswith("../") or posixpath.isabs(bin_path):
            problems.append(f"{where}: bin {p['bin']!r} is outside the installation directory")
        elif bin_path not in installed:
            problems.append(f"{where}: bin {p['bin']!r} is not installed from the archive")
        elif not installed[bin_path] & 0o111:
            problems.append(f"{where}: bin {p['bin']!r} is not executable in the archive (project rule)")
        if not any(posixpath.basename(f).lower() in LICENSE_FILES for f in installed):
            problems.append(f"{where}: could not find license file among {sorted(installed)}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--archive", type=Path, help="the release archive the manifest points at")
    args = parser.parse_args()
    problems = manifest_problems(args.manifest)
    if not problems and args.archive is not None:
        problems = install_problems(args.manifest, args.archive)
    for problem in problems:
        print(f"{args.manifest}: {problem}", file=sys.stderr)
    if not problems:
        print(f"{args.manifest}: valid krew manifest" + (f" for {args.archive}" if args.archive else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
