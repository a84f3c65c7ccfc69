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
    # the first run with a Python version compiles the modules it imports (Python keeps them in
    # __pycache__): the cluster layer too, at once and said on a terminal, rather than silently at the
    # first command that talks to a cluster; a read-only installation compiles nothing and says nothing
    ready = os.path.join(native, ".compiled")
    if entry == "main" and not os.path.exists(ready) and os.access(native, os.W_OK):
        if sys.stderr.isatty():
            sys.stderr.write("kubectl-fieldown: first run with Python %d.%d: compiling its modules "
                             "(once, a few seconds)...\\n" % sys.version_info[:2])
            sys.stderr.flush()
        try:
            import kubectl_fieldown.cli.main as cli_main
            import kubectl_fieldown.kube._kubeconfig as kubeconfig
            import kubectl_fieldown.kube._transport  # noqa: F401
            cli_main.build_app()  # typer and every command (the bare root help imports neither)
            kubeconfig.library()  # the kubernetes package: for exec plugins, auth providers, in-cluster
            open(ready, "w").close()
        except Exception:  # the command that needs it reports what is wrong, as one error line
            pass
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


#: environment markers of each target OS (pip evaluates markers for the running interpreter only,
#: whatever --platform and --python-version say: what it left out is reported by --missing)
OS_MARKERS = {"linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
              "darwin": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"}}


def marker_env(tag: str, target_os: str) -> dict[str, str]:
    version = f"{tag[2]}.{tag[3:]}"
    return {"python_version": version, "python_full_version": f"{version}.0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "extra": "", **OS_MARKERS[target_os]}


def closure(reqs: list[Requirement], dists: dict[str, md.Distribution], tag: str,
            target_os: str) -> tuple[list[md.Distribution], list[Requirement]]:
    """The distributions the project needs on ``tag``/``target_os``, and the requirements the site lacks."""
    env = marker_env(tag, target_os)
    out: dict[str, md.Distribution] = {}
    missing: dict[str, Requirement] = {}
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
            missing.setdefault(key, req)
            continue
        if dist.version not in req.specifier and req.specifier:
            sys.exit(f"build-bundle: {req.name} {dist.version} does not satisfy {req}")
        out[key] = dist
        todo += [Requirement(r) for r in dist.requires or ()]
    return sorted(out.values(), key=lambda d: normalize(d.metadata["Name"])), list(missing.values())


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
    parser.add_argument("--out", type=Path)
    parser.add_argument("--site", action="append", default=[], metavar="cpXY=DIR")
    parser.add_argument("--os", dest="target_os", choices=sorted(OS_MARKERS),
                        default="darwin" if sys.platform == "darwin" else "linux")
    parser.add_argument("--missing", action="store_true",
                        help="print the requirements (name and version range, without marker) the sites lack "
                             "for their Python version and --os, one a line, and exit")
    a = parser.parse_args()
    reqs = project_requirements(a.project)
    chosen: dict[str, list[md.Distribution]] = {}
    lacking: list[str] = []
    for tag, path in sites(a.site):
        found = md.distributions(path=path) if path is not None else md.distributions()
        dists: dict[str, md.Distribution] = {}
        for d in found:
            dists.setdefault(normalize(d.metadata["Name"]), d)  # the first on the path wins, as import does
        chosen[tag], missing = closure(reqs, dists, tag, a.target_os)
        lacking += [f"{tag} {r.name}{r.specifier}" for r in missing]
    if a.missing:
        if lacking:
            print("\n".join(lacking))
        return 0
    if lacking:
        sys.exit("build-bundle: not installed in the site directories: " + ", ".join(lacking))
    if a.out is None:
        sys.exit("build-bundle: --out is required")
    bundle = a.out / "fieldown-bundle"
    if bundle.exists():
        shutil.rmtree(bundle)
    lib = bundle / "lib"
    lib.mkdir(parents=True)
    with zipfile.ZipFile(a.project) as z:
        z.extractall(lib)
    # a pure distribution of one version for every Python goes to lib/ once; one that differs (pip chose
    # another version for an older Python) goes to each version's native/ directory, as compiled ones do
    versions: dict[str, set[str]] = {}
    for dists_of_tag in chosen.values():
        for dist in dists_of_tag:
            versions.setdefault(normalize(dist.metadata["Name"]), set()).add(dist.version)
    in_lib: set[str] = set()
    for tag, dists_of_tag in chosen.items():
        native = bundle / "native" / tag
        native.mkdir(parents=True)
        for dist in dists_of_tag:
            key = normalize(dist.metadata["Name"])
            files = dist_files(dist)
            compiled = has_extensions(files) and key not in ACCELERATED
            everywhere = len(versions[key]) == 1 and all(key in {normalize(d.metadata["Name"]) for d in ds}
                                                         for ds in chosen.values())
            if compiled or not everywhere:
                n = copy(files, native, drop_extensions=not compiled)
                why = "compiled" if compiled else "this version only"
                print(f"[bundle] {tag}: {dist.metadata['Name']} {dist.version} ({why}, {n} files)")
            elif key not in in_lib:
                in_lib.add(key)
                copy(files, lib, drop_extensions=True)
    (bundle / "run.py").write_text(RUN_PY, encoding="utf-8")
    print(f"[bundle] {len(in_lib)} pure-Python distributions in lib/, native modules for "
          f"{', '.join(sorted(os.listdir(bundle / 'native')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
