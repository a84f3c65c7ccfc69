#!/usr/bin/env python3
"""Assemble the self-contained krew bundle of kubectl-fieldown: the code and every dependency, ready to
run, so that the archive krew unpacks *is* the plugin (no pip, no network, nothing installed at first run).

    python hack/build-bundle.py --project dist/kubectl_fieldown-X-py3-none-any.whl --out STAGE \
        [--site cp311=/path/to/site-packages ...]

Writes ``STAGE/fieldown-bundle/``:

* ``lib/``: the pure-Python distributions of the dependency closure (with their ``.dist-info``, which
  carries their licences) and kubectl_fieldown itself, unpacked from ``--project``;
* ``native/cpXY/``: the distributions with compiled modules that have no pure-Python fallback
  (pydantic-core, which kubernetes and typer need; orjson, an optional accelerator), one directory per
  CPython version, for the platform the site directories were installed for;
* ``run.py``: puts ``native/cpXY`` of the running Python and ``lib`` first on ``sys.path`` and runs
  the command line (``run.py main ARGS`` or ``run.py complete WORDS``).

Compiled accelerators that come with a pure-Python fallback (PyYAML's libyaml binding, charset-normalizer,
aiohttp, multidict, yarl, frozenlist, propcache) are left out: the fallback runs everywhere, so those
distributions stay in ``lib`` and serve every Python version.

Each ``--site TAG=DIR`` is a site-packages directory holding the dependency closure installed for CPython
``TAG`` (hack/release.sh makes them with ``pip install --target --platform --python-version``); without
``--site`` the running interpreter's own environment is used (``sys.path``), for its own version and
platform only — what the tests do, offline.
"""

from __future__ import annotations

import argparse
import email.parser
import importlib.metadata as md
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

PROJECT = "kubectl-fieldown"
#: distributions whose compiled modules are optional speed-ups with a pure-Python fallback
ACCELERATED = {"pyyaml", "charset-normalizer", "aiohttp", "multidict", "yarl", "frozenlist", "propcache"}
#: parts of distributions this tool never imports: the kubernetes package's asyncio client (41 MB of 72)
DROPPED = ("kubernetes/aio/",)
EXTENSION = re.compile(r"\.(so|pyd|dylib)$|\.cpython-\d+.*\.so$|\.abi3\.so$")

RUN_PY = '''"""kubectl-fieldown's krew bundle: run the command line from the directories beside this file.
Started by the kubectl-fieldown launcher as ``python -I -S run.py main|complete ARGS`` (isolated: no
site-packages, no PYTHON* variables, nothing of the user's Python installation is used)."""
import os
import sys

try:
    here = os.path.dirname(os.path.realpath(__file__))
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    native = os.path.join(here, "native", tag)
    if not os.path.isdir(native):
        have = sorted(os.listdir(os.path.join(here, "native")))
        versions = ", ".join("%s.%s" % (t[2], t[3:]) for t in have)
        sys.stderr.write("error: this kubectl-fieldown archive runs on Python %s; %s is Python %d.%d "
                         "(set FIELDOWN_PYTHON to one of those)\\n" % (versions, sys.executable, *sys.version_info[:2]))
        sys.exit(1)
    sys.path[0:0] = [native, os.path.join(here, "lib")]
    entry = sys.argv.pop(1) if len(sys.argv) > 1 else "main"
    sys.argv[0] = "kubectl-fieldown" if entry == "main" else "kubectl_complete-fieldown"
    from kubectl_fieldown.cli.main import run, run_kubectl_completion
except KeyboardInterrupt:  # Ctrl-C before the command line could report it: quietly, as it does
    sys.stderr.write("\\n")
    os._exit(130)

if entry == "complete":
    run_kubectl_completion()
else:
    run()
'''


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        message = email.parser.Parser().parsestr(z.read(meta).decode("utf-8"))
    return [Requirement(r) for r in message.get_all("Requires-Dist") or ()]


def marker_env(tag: str) -> dict[str, str]:
    version = f"{tag[2]}.{tag[3:]}"
    return {"python_version": version, "python_full_version": f"{version}.0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "extra": ""}


def closure(reqs: list[Requirement], dists: dict[str, md.Distribution], tag: str) -> list[md.Distribution]:
    env = marker_env(tag)
    out: dict[str, md.Distribution] = {}
    todo = list(reqs)
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        key = normalize(req.name)
        if key in out or key == PROJECT:
            continue
        dist = dists.get(key)
        if dist is None:
            sys.exit(f"build-bundle: {req.name} (needed for {tag}) is not installed in the site directory")
        if dist.version not in req.specifier and req.specifier:
            sys.exit(f"build-bundle: {req.name} {dist.version} does not satisfy {req}")
        out[key] = dist
        todo += [Requirement(r) for r in dist.requires or ()]
    return sorted(out.values(), key=lambda d: normalize(d.metadata["Name"]))


def dist_files(dist: md.Distribution) -> list[tuple[str, Path]]:
    """(relative path, source) of the files to ship: no scripts outside the site, no byte code."""
    out = []
    for f in dist.files or ():
        rel = str(f).replace("\\", "/")
        if rel.startswith(("../", *DROPPED)) or "/__pycache__/" in f"/{rel}" or rel.endswith((".pyc", ".pyo")):
            continue
        if rel.endswith(("/RECORD", "/INSTALLER", "/REQUESTED", "/direct_url.json")):
            continue
        src = Path(str(dist.locate_file(f)))
        if src.is_file():
            out.append((rel, src))
    return out


def has_extensions(files: list[tuple[str, Path]]) -> bool:
    return any(EXTENSION.search(rel) for rel, _ in files)


def copy(files: list[tuple[str, Path]], dest: Path, drop_extensions: bool) -> int:
    n = 0
    for rel, src in files:
        if drop_extensions and EXTENSION.search(rel):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        n += 1
    return n


def sites(args: list[str]) -> list[tuple[str, list[str] | None]]:
    if not args:
        return [(f"cp{sys.version_info[0]}{sys.version_info[1]}", None)]
    out = []
    for a in args:
        tag, eq, path = a.partition("=")
        if not eq or not re.fullmatch(r"cp3\d+", tag):
            sys.exit(f"build-bundle: --site {a}: want cpXY=DIR")
        out.append((tag, [path]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", required=True, type=Path, help="the kubectl_fieldown wheel")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--site", action="append", default=[], metavar="cpXY=DIR")
    a = parser.parse_args()
    bundle = a.out / "fieldown-bundle"
    if bundle.exists():
        shutil.rmtree(bundle)
    lib = bundle / "lib"
    lib.mkdir(parents=True)
    with zipfile.ZipFile(a.project) as z:
        z.extractall(lib)
    reqs = project_requirements(a.project)
    pure: dict[str, str] = {}
    for tag, path in sites(a.site):
        found = md.distributions(path=path) if path is not None else md.distributions()
        dists: dict[str, md.Distribution] = {}
        for d in found:
            dists.setdefault(normalize(d.metadata["Name"]), d)  # the first on the path wins, as import does
        native = bundle / "native" / tag
        native.mkdir(parents=True)
        for dist in closure(reqs, dists, tag):
            key = normalize(dist.metadata["Name"])
            files = dist_files(dist)
            if has_extensions(files) and key not in ACCELERATED:
                n = copy(files, native, drop_extensions=False)
                print(f"[bundle] {tag}: {dist.metadata['Name']} {dist.version} (compiled, {n} files)")
            elif key in pure:
                if pure[key] != dist.version:
                    sys.exit(f"build-bundle: {dist.metadata['Name']} is {pure[key]} in one site, {dist.version} "
                             f"in {tag}'s: pin one version")
            else:
                pure[key] = dist.version
                copy(files, lib, drop_extensions=True)
    (bundle / "run.py").write_text(RUN_PY, encoding="utf-8")
    print(f"[bundle] {len(pure)} pure-Python distributions in lib/, native modules for "
          f"{', '.join(sorted(os.listdir(bundle / 'native')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
