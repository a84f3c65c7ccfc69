"""krew/fieldown.yaml and plugin.yaml: krew's rules (hack/validate-krew-manifest.py, checked here on
good and broken manifests), the legacy plugin descriptor's rules, and that both describe the
commands the CLI really has, with the real runtime requirements."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from kubectl_fieldown.cli import main as cli_main
from kubectl_fieldown.cli.globalflags import FLAGS as GENERIC_FLAGS

from .helpers import REPO, load_script

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test extra installs tomli there
    import tomli as tomllib

krew = load_script("validate-krew-manifest")

MANIFEST = REPO / "krew" / "fieldown.yaml"
DESCRIPTOR = REPO / "plugin.yaml"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def cli_commands() -> dict[str, Any]:
    """The commands of the CLI (click commands; typer >= 0.29 vendors click, so duck-typed)."""
    group = typer.main.get_command(cli_main.app)
    commands: dict[str, Any] = dict(getattr(group, "commands", {}))
    assert commands
    return commands


def runtime_requirements() -> list[str]:
    """Distribution names of the runtime dependencies (``kubernetes>=29,<38`` -> ``kubernetes``)."""
    return [re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0] for d in PYPROJECT["project"]["dependencies"]]


# --- the krew manifest ----------------------------------------------------------------------------------


def test_the_krew_manifest_passes_krews_rules() -> None:
    assert krew.manifest_problems(MANIFEST) == []


def test_the_krew_manifest_describes_every_command_and_the_runtime() -> None:
    spec = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["spec"]
    for name in cli_commands():
        if name != "version":
            assert re.search(rf"(?m)^- {re.escape(name)}\b|[ ,]{re.escape(name)}[,:]", spec["description"]), name
    python = PYPROJECT["project"]["requires-python"]
    assert python == ">=3.10" and "Python >= 3.10" in spec["caveats"]
    for requirement in runtime_requirements():
        assert requirement in spec["caveats"], requirement
    assert "kubernetes-validate" not in spec["caveats"]


def test_the_krew_manifest_version_is_the_projects() -> None:
    spec = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["spec"]
    version = PYPROJECT["project"]["version"]
    assert spec["version"] == f"v{version}"
    selected = []
    for platform in spec["platforms"]:
        labels = platform["selector"]["matchLabels"]
        os_arch = f"{labels['os']}-{labels['arch']}"
        assert platform["uri"].endswith(f"/v{version}/kubectl-fieldown-v{version}-{os_arch}.zip")
        assert platform["bin"] == "kubectl-fieldown"
        selected.append(os_arch)
    # one self-contained archive per platform (its compiled modules are the platform's)
    assert sorted(selected) == ["darwin-amd64", "darwin-arm64", "linux-amd64", "linux-arm64"]


def _write(tmp_path: Path, manifest: dict[str, Any], name: str = "fieldown.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    return path


def _good() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return loaded


def _platform(manifest: dict[str, Any]) -> dict[str, Any]:
    platform: dict[str, Any] = manifest["spec"]["platforms"][0]
    return platform


def _set(path: str, value: Any) -> Any:
    def change(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = m
        for part in parents:
            node = _platform(m) if part == "platform" else node[part]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return change


BROKEN = [
    ("apiVersion", _set("apiVersion", "krew.googlecontainertools.github.com/v1alpha1"), "apiVersion="),
    ("kind", _set("kind", "Plugins"), "kind="),
    ("name mismatch", _set("metadata.name", "field-own"), "plugin should be named"),
    ("no short description", _set("spec.shortDescription", ""), "should have a short description"),
    ("line break", _set("spec.shortDescription", "two\nlines"), "line breaks"),
    ("too long for krew search", _set("spec.shortDescription", "x" * 51), "krew search"),
    ("no version", _set("spec.version", KeyError), "should have a version"),
    ("no v", _set("spec.version", "0.1.0"), "not starting with 'v'"),
    ("two components", _set("spec.version", "v0.1"), "illegal version string"),
    ("zero prefix", _set("spec.version", "v0.01.0"), "zero-prefixed"),
    ("bad pre-release", _set("spec.version", "v0.1.0-rc_1"), "pre-release"),
    ("no platforms", _set("spec.platforms", []), "should have a platform"),
    ("no uri", _set("spec.platform.uri", KeyError), "`uri` has to be set"),
    ("no sha256", _set("spec.platform.sha256", KeyError), "`sha256` sum has to be set"),
    ("upper-case sha256", _set("spec.platform.sha256", "A" * 64), "is not valid"),
    ("no bin", _set("spec.platform.bin", KeyError), "`bin` has to be set"),
    ("empty files", _set("spec.platform.files", []), "unspecified or non-empty"),
    ("file without to", _set("spec.platform.files", [{"from": "*"}]), "`to` field"),
    ("no selector", _set("spec.platform.selector", KeyError), "nil selector"),
    ("empty selector", _set("spec.platform.selector", {}), "empty selector"),
    ("unknown key", _set("spec.platform.selector", {"matchLabels": {"distro": "debian"}}), "not supported"),
    ("no platform selected", _set("spec.platform.selector", {"matchLabels": {"os": "plan9"}}), "any supported"),
    ("not an archive", _set("spec.platform.uri", "https://example.com/kubectl-fieldown"), ".tar.gz"),
    ("typo", _set("spec.shortDescripton", "x"), "unknown field"),
]


@pytest.mark.parametrize(("change", "expected"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_krews_rules_catch_a_broken_manifest(tmp_path: Path, change: Any, expected: str) -> None:
    manifest = _good()
    change(manifest)
    problems = krew.manifest_problems(_write(tmp_path, manifest))
    assert any(expected in p for p in problems), problems


def test_krews_rules_catch_overlapping_platforms_and_bad_names(tmp_path: Path) -> None:
    manifest = _good()
    linux = {**_platform(manifest), "selector": {"matchLabels": {"os": "linux", "arch": "amd64"}}}
    manifest["spec"]["platforms"].append(linux)
    problems = krew.manifest_problems(_write(tmp_path, manifest))
    assert any("overlapping selectors" in p and "linux/amd64" in p for p in problems), problems
    for bad in ("con", "field.own"):
        manifest = _good()
        manifest["metadata"]["name"] = bad
        assert any("is not allowed" in p for p in krew.manifest_problems(_write(tmp_path, manifest, f"{bad}.yaml")))
    assert "extension" in krew.manifest_problems(_write(tmp_path, _good(), "fieldown.yml"))[0]


@pytest.mark.parametrize(
    ("version", "ok"),
    [("v0.1.0", True), ("v1.2.3-rc.1+build.5", True), ("v10.0.0", True), ("v1.2.3-0a", True),
     ("v1.2.3-01", False), ("v01.2.3", False), ("v1.2.3.4", False), ("1.2.3", False), ("vx.y.z", False)],
)
def test_versions_are_read_as_krew_reads_them(version: str, ok: bool) -> None:
    assert (krew.semver_problem(version) is None) is ok


def test_selectors_select_as_label_selectors_do() -> None:
    expression = {"matchExpressions": [{"key": "os", "operator": "In", "values": ["darwin", "linux"]}]}
    assert krew.selects(expression, "linux", "arm") and krew.selects(expression, "darwin", "arm64")
    assert not krew.selects(expression, "windows", "amd64")
    both = {
        "matchLabels": {"os": "linux"},
        "matchExpressions": [{"key": "arch", "operator": "NotIn", "values": ["386"]}],
    }
    assert krew.selects(both, "linux", "amd64") and not krew.selects(both, "linux", "386")


# --- plugin.yaml (the legacy kubectl plugin descriptor) ---------------------------------------------------

DESCRIPTOR_FIELDS = {"name", "shortDesc", "longDesc", "example", "command", "flags", "tree"}


def descriptor_problems(node: Any, where: str = "plugin.yaml") -> list[str]:
    """The descriptor's rules (kubectl 1.8-1.11 ``pkg/kubectl/plugins``: name, shortDesc and command
    or tree required, no spaces in names; flags: name and desc, one-letter shorthand), plus no
    unknown fields."""
    if not isinstance(node, dict):
        return [f"{where}: not a mapping"]
    problems = [f"{where}: unknown field {k!r}" for k in node if k not in DESCRIPTOR_FIELDS]
    if not node.get("name") or not node.get("shortDesc") or not (node.get("command") or node.get("tree")):
        problems.append(f"{where}: incomplete plugin descriptor: name, shortDesc and command fields are required")
    if " " in str(node.get("name", "")):
        problems.append(f"{where}: plugin name can't contain spaces")
    for flag in node.get("flags") or ():
        if not flag.get("name") or not flag.get("desc") or " " in flag["name"]:
            problems.append(f"{where}: bad flag {flag!r}")
        if flag.get("shorthand") and not (len(flag["shorthand"]) == 1 and flag["shorthand"].isalpha()):
            problems.append(f"{where}: flag shorthand must be only one letter")
    for child in node.get("tree") or ():
        problems += descriptor_problems(child, f"{where}: {child.get('name') if isinstance(child, dict) else '?'}")
    return problems


def test_the_plugin_descriptor_passes_its_rules() -> None:
    descriptor = yaml.safe_load(DESCRIPTOR.read_text(encoding="utf-8"))
    assert descriptor_problems(descriptor) == []
    assert descriptor_problems({"name": "x y", "shortDesc": "s", "tree": [{"name": "a"}]}) == [
        "plugin.yaml: plugin name can't contain spaces",
        "plugin.yaml: a: incomplete plugin descriptor: name, shortDesc and command fields are required",
    ]


def _first_paragraph(command: Any) -> str:
    return " ".join((command.help or "").split("\n\n")[0].split())


def test_the_plugin_descriptor_describes_every_command() -> None:
    descriptor = yaml.safe_load(DESCRIPTOR.read_text(encoding="utf-8"))
    assert descriptor["name"] == "fieldown" and descriptor["command"] == "kubectl-fieldown"
    commands = cli_commands()
    tree = {child["name"]: child for child in descriptor["tree"]}
    assert list(tree) == list(commands)
    for name, command in commands.items():
        assert tree[name]["command"] == f"kubectl-fieldown {name}"
        assert tree[name]["shortDesc"] == _first_paragraph(command), name
    for requirement in runtime_requirements():
        assert requirement in descriptor["longDesc"], requirement


def test_the_examples_use_real_commands_and_options() -> None:
    descriptor = yaml.safe_load(DESCRIPTOR.read_text(encoding="utf-8"))
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["spec"]
    commands = cli_commands()
    examples = [line for node in [descriptor, *descriptor["tree"]] for line in node.get("example", "").splitlines()]
    examples += [line.strip() for line in manifest["caveats"].splitlines() if "kubectl fieldown" in line]
    checked = 0
    for line in examples:
        words = shlex.split(line.split("|")[-1])
        assert words[:2] == ["kubectl", "fieldown"], line
        command = commands[words[2]]
        options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
        options |= {name for flag in GENERIC_FLAGS for name in flag.names}  # kubectl's, on every command
        for word in words[3:]:
            if word.startswith("-") and word != "-":
                assert word.split("=")[0] in options, f"{line}: {word}"
                checked += 1
    assert checked > 10


#: options whose value is a local file or directory
FILE_OPTIONS = {"-f", "--filename", "-i", "--input", "--live", "--schema"}


def _example_lines() -> list[str]:
    descriptor = yaml.safe_load(DESCRIPTOR.read_text(encoding="utf-8"))
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["spec"]
    lines = [line for node in [descriptor, *descriptor["tree"]] for line in node.get("example", "").splitlines()]
    return lines + [line.strip() for line in manifest["caveats"].splitlines() if "kubectl fieldown" in line]


def _files_named(words: list[str]) -> list[str]:
    out = []
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in FILE_OPTIONS:
            value = value if eq else words[i + 1]
            if value != "-":
                out.append(value)
    return out


def test_the_examples_name_files_that_exist_and_the_offline_ones_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 21: plugin.yaml's examples named web.yaml, api.yaml, manifests/ — files nobody has. Every
    file an example names is in this repository (relative to its root, where the README's commands run),
    and the examples that need no cluster (every object from a file) run as written and answer."""
    named = offline = 0
    for line in _example_lines():
        words = shlex.split(line.split("|")[-1])
        files = _files_named(words)
        for f in files:
            assert (REPO / f).exists(), f"{line}: {f} does not exist"
            named += 1
        cluster_free = (words[2] == "show" and "-i" in words) or "--live" in words
        if cluster_free and "-" not in words:
            code = cli_main.main([*words[2:], "--color", "never"])
            out = capsys.readouterr()
            # 0, or 1 for conflicts predicted: an answer, not a usage or input error
            assert code in (0, 1) and "error:" not in out.err, (line, code, out.err)
            assert out.out.strip(), line
            offline += 1
    assert named >= 5 and offline >= 2
