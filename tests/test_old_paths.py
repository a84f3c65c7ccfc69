"""The modules that sat at the package's root before they were grouped (issue 25) still import from
their old paths, for code written against them, and give the very objects of their new homes.
(Nothing in the package imports the old paths: tests/test_house.py.)"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

# old path -> new home
MOVED = {
    "kubectl_fieldown.value": "kubectl_fieldown.base.value",
    "kubectl_fieldown.objects": "kubectl_fieldown.base.objects",
    "kubectl_fieldown.redact": "kubectl_fieldown.base.redact",
    "kubectl_fieldown.managedfields": "kubectl_fieldown.ownership.managedfields",
    "kubectl_fieldown.ownership": "kubectl_fieldown.ownership.tree",
    "kubectl_fieldown.sources": "kubectl_fieldown.manifests.sources",
    "kubectl_fieldown.safeyaml": "kubectl_fieldown.manifests.safeyaml",
    "kubectl_fieldown.goscalar": "kubectl_fieldown.manifests.goscalar",
    "kubectl_fieldown.yamlpos": "kubectl_fieldown.manifests.yamlpos",
    "kubectl_fieldown.files": "kubectl_fieldown.cli.files",
    "kubectl_fieldown.applyplan": "kubectl_fieldown.conflicts.applyplan",
    "kubectl_fieldown.conflictreport": "kubectl_fieldown.conflicts.report",
    "kubectl_fieldown.csaupgrade": "kubectl_fieldown.appliers.csaupgrade",
    "kubectl_fieldown.jsonpatch": "kubectl_fieldown.fieldmanager.jsonpatch",
}


def _public(module: object) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


@pytest.mark.parametrize(("old", "new"), MOVED.items(), ids=list(MOVED))
def test_an_old_path_gives_the_objects_of_the_new_home(old: str, new: str) -> None:
    moved, home = importlib.import_module(old), importlib.import_module(new)
    names = _public(home)
    assert names
    for name in names:
        assert getattr(moved, name) is getattr(home, name), (old, name)


def test_the_names_of_the_package_come_from_the_new_homes() -> None:
    import kubectl_fieldown

    for name, module in kubectl_fieldown._EXPORTS.items():
        assert getattr(kubectl_fieldown, name) is getattr(importlib.import_module(f"kubectl_fieldown.{module}"), name)


def test_the_package_loads_no_old_path_and_the_owner_tree_only_when_asked() -> None:
    # kubectl_fieldown.ownership is an old path and the new package: it may load, not its tree
    watched = [*sorted(set(MOVED) - {"kubectl_fieldown.ownership"}), "kubectl_fieldown.ownership.tree"]
    code = ("import sys, kubectl_fieldown.cli.main, kubectl_fieldown.ownership.managedfields\n"
            f"print([m for m in {watched!r} if m in sys.modules])\n"
            "from kubectl_fieldown.ownership import *\n"
            "from kubectl_fieldown.ownership import tree\n"
            "print(OwnerTree is tree.OwnerTree and build_owner_tree is tree.build_owner_tree)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["[]", "True"]
