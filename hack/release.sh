#!/bin/bash
# hack/release.sh [VERSION] - build the krew release archives and point krew/fieldown.yaml at them.
#
#   0. builds the sdist and wheel for PyPI into dist/ (python -m build) and checks them with
#      `twine check --strict` (build and twine are installed into a temporary venv from PyPI)
#   1. builds the wheel of this checkout (pip wheel --no-deps; version from pyproject.toml unless
#      VERSION is given, which must then match it)
#   2. writes one krew archive per platform, dist/kubectl-fieldown-vVERSION-OS-ARCH.zip, each the whole
#      plugin: the `kubectl-fieldown` launcher (POSIX sh, krew/bin), the `kubectl_complete-fieldown`
#      completer, and fieldown-bundle/ (hack/build-bundle.py: the code and every dependency, the compiled
#      ones for each CPython version of RELEASE_PYTHONS on that platform), README.md and LICENSE. Nothing
#      is downloaded or installed when the plugin runs.
#   3. computes each archive's sha256 and rewrites version, uri and sha256 of its platform in
#      krew/fieldown.yaml
#
# Environment: PYTHON (default .venv/bin/python, else python3; it needs pip and `packaging`);
# RELEASE_PLATFORMS (default "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"; "local": this machine's
# platform and Python version only, from the environment of PYTHON, with no download);
# RELEASE_PYTHONS (default "3.10 3.11 3.12 3.13 3.14"); RELEASE_TOOLS_PYTHON, a Python that
# has build, twine and setuptools (then nothing is downloaded; default: a private venv from PyPI);
# RELEASE_BASE_URL (default
# https://github.com/kubectl-fieldown/kubectl-fieldown/releases/download/vVERSION), where the
# archive will be uploaded; PIP_WHEEL_ARGS, extra arguments for `pip wheel` (e.g.
# --no-build-isolation when PyPI is out of reach and setuptools is installed).
# Upload the archives yourself; this script changes nothing but dist/ and krew/fieldown.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }

PY=${PYTHON:-}
if [[ -z $PY ]]; then
  if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi

project_version=$("$PY" - <<'EOF'
import re
text = open("pyproject.toml", encoding="utf-8").read()
m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', text)
print(m.group(1) if m else "")
EOF
)
[[ -n $project_version ]] || die "no version in pyproject.toml"
VERSION=${1:-$project_version}
VERSION=${VERSION#v}
[[ $VERSION == "$project_version" ]] || die "VERSION $VERSION does not match pyproject.toml ($project_version)"

BASE_URL=${RELEASE_BASE_URL:-https://github.com/kubectl-fieldown/kubectl-fieldown/releases/download/v$VERSION}
MANIFEST=krew/fieldown.yaml
[[ -f $MANIFEST ]] || die "$MANIFEST missing"

stage=$(mktemp -d "${TMPDIR:-/tmp}/fieldown-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT

if [[ -n ${RELEASE_TOOLS_PYTHON:-} ]]; then
  # a Python that already has build, twine and setuptools (the test extras): no download at all
  echo "[release] sdist and wheel for PyPI (python -m build --no-isolation), checked with twine"
  tools=$RELEASE_TOOLS_PYTHON
  build_args=(--no-isolation)
else
  echo "[release] sdist and wheel for PyPI (python -m build in a private venv), checked with twine"
  "${PYTHON_FOR_TOOLS:-python3}" -m venv "$stage/tools" || die "python3 -m venv failed"
  "$stage/tools/bin/pip" install --quiet --disable-pip-version-check build twine >"$stage/tools.log" 2>&1 \
    || { tail -n 20 "$stage/tools.log" >&2; die "pip install build twine failed"; }
  tools=$stage/tools/bin/python
  build_args=()
fi
rm -f dist/kubectl_fieldown-"$VERSION".tar.gz dist/kubectl_fieldown-"$VERSION"-*.whl
"$tools" -m build "${build_args[@]}" --outdir dist . >"$stage/build.log" 2>&1 \
  || { tail -n 30 "$stage/build.log" >&2; die "python -m build failed"; }
"$tools" -m twine check --strict dist/kubectl_fieldown-"$VERSION".tar.gz dist/kubectl_fieldown-"$VERSION"-*.whl \
  || die "twine check failed"

echo "[release] building the wheel of kubectl-fieldown $VERSION"
# shellcheck disable=SC2086  # PIP_WHEEL_ARGS is a list of words on purpose
# setuptools' deprecation chatter goes to a log that is shown only when the build fails
if ! "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps ${PIP_WHEEL_ARGS:-} --wheel-dir "$stage/wheel" . \
  >"$stage/pip.log" 2>&1; then
  tail -n 30 "$stage/pip.log" >&2
  die "pip wheel failed"
fi
wheels=("$stage"/wheel/kubectl_fieldown-"$VERSION"-*.whl)
[[ -f ${wheels[0]} ]] || die "pip wheel produced no kubectl_fieldown-$VERSION wheel"
wheel=${wheels[0]}

# --- the krew archives: one per platform, each the whole plugin (hack/build-bundle.py) ---------------------
# RELEASE_PLATFORMS: "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" (default; the dependencies of
# each CPython version in RELEASE_PYTHONS come from the package index with pip's --platform), or "local":
# this machine's platform only, from the environment of $PY (its Python version; nothing downloaded).
PLATFORMS=${RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
PYTHONS=${RELEASE_PYTHONS:-3.10 3.11 3.12 3.13 3.14}
pip_platforms() {  # pip --platform tags for os/arch (pip widens each to the older compatible ones)
  case $1 in
    linux/amd64) echo "--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64" ;;
    linux/arm64) echo "--platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64" ;;
    darwin/amd64) echo "--platform macosx_10_12_x86_64" ;;
    darwin/arm64) echo "--platform macosx_11_0_arm64" ;;
    *) die "unknown platform $1 (want os/arch: linux/amd64, linux/arm64, darwin/amd64, darwin/arm64)" ;;
  esac
}
if [[ $PLATFORMS == local ]]; then
  PLATFORMS=$("$PY" -c 'import platform, sys
arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "")
print(("darwin" if sys.platform == "darwin" else "linux") + "/" + arch)')
  local_build=1
else
  local_build=
fi

mkdir -p dist
archives=()
for plat in $PLATFORMS; do
  os=${plat%/*}
  arch=${plat#*/}
  archive_dir=$stage/archive-$os-$arch
  mkdir -p "$archive_dir"
  site_args=()
  if [[ -n $local_build ]]; then
    echo "[release] $plat: the dependencies of this environment ($("$PY" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'))"
  else
    for pyver in $PYTHONS; do
      tag=cp${pyver/./}
      site=$stage/site-$os-$arch-$tag
      echo "[release] $plat: the dependencies for Python $pyver, from the package index"
      # shellcheck disable=SC2046  # pip_platforms prints several words on purpose
      "$PY" -m pip install --quiet --disable-pip-version-check --no-compile --target "$site" \
        --only-binary=:all: $(pip_platforms "$plat") --python-version "$pyver" --implementation cp \
        "$wheel" >"$stage/pip-$os-$arch-$tag.log" 2>&1 \
        || { tail -n 20 "$stage/pip-$os-$arch-$tag.log" >&2; die "pip install for $plat, Python $pyver failed"; }
      # pip evaluates environment markers for the Python running it, not the target: add what the target
      # needs besides (async-timeout on 3.10, a darwin-only dependency...), until nothing is missing
      for _round in 1 2 3 4 5; do
        missing=$("$PY" hack/build-bundle.py --project "$wheel" --os "$os" --site "$tag=$site" --missing) \
          || die "build-bundle.py --missing failed for $plat, Python $pyver"
        [[ -z $missing ]] && break
        reqs=()
        while read -r _tag req; do reqs+=("$req"); done <<<"$missing"
        echo "[release] $plat: for Python $pyver also ${reqs[*]}"
        # shellcheck disable=SC2046
        "$PY" -m pip install --quiet --disable-pip-version-check --no-compile --target "$site" --no-deps \
          --only-binary=:all: $(pip_platforms "$plat") --python-version "$pyver" --implementation cp \
          "${reqs[@]}" >>"$stage/pip-$os-$arch-$tag.log" 2>&1 \
          || { tail -n 20 "$stage/pip-$os-$arch-$tag.log" >&2; die "pip install ${reqs[*]} for $plat failed"; }
      done
      site_args+=(--site "$tag=$site")
    done
  fi
  "$PY" hack/build-bundle.py --project "$wheel" --os "$os" --out "$archive_dir" ${site_args[@]+"${site_args[@]}"} \
    || die "build-bundle.py failed for $plat"
  for script in kubectl-fieldown kubectl_complete-fieldown; do
    cp "krew/bin/$script" "$archive_dir/$script"
    chmod 0755 "$archive_dir/$script"
  done
  [[ -f README.md ]] && cp README.md "$archive_dir/"
  [[ -f LICENSE ]] && cp LICENSE "$archive_dir/"
  archive=kubectl-fieldown-v$VERSION-$os-$arch.zip
  echo "[release] writing dist/$archive"
  "$PY" - "$archive_dir" "dist/$archive" <<'EOF'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            info = zipfile.ZipInfo(os.path.relpath(path, src), date_time=(1980, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (os.stat(path).st_mode & 0o777 | 0o100000) << 16  # keep the launchers executable
            with open(path, "rb") as f:
                z.writestr(info, f.read())
EOF
  archives+=("dist/$archive")
done

echo "[release] updating $MANIFEST"
"$PY" - "$MANIFEST" "$VERSION" "$BASE_URL" "${archives[@]}" <<'EOF'
import hashlib, os, re, sys
path, version, base, *archives = sys.argv[1:]
text = open(path, encoding="utf-8").read()
text, n_version = re.subn(r"(?m)^(  version: ).*$", rf"\g<1>v{version}", text)
if n_version != 1:
    sys.exit(f"release.sh: unexpected layout of {path}: {n_version} version lines")
for archive in archives:
    name = os.path.basename(archive)
    platform = re.search(r"-(\w+-\w+)\.zip$", name).group(1)  # linux-amd64
    sha = hashlib.sha256(open(archive, "rb").read()).hexdigest()
    pattern = rf'(?m)^(    uri: ).*-{re.escape(platform)}\.zip\n(    sha256: ).*$'
    text, n = re.subn(pattern, rf'\g<1>{base}/{name}\n\g<2>"{sha}"', text)
    if n != 1:
        sys.exit(f"release.sh: {path} has {n} platforms for {platform}, want 1")
    print(f"[release] {platform}: sha256 {sha}")
open(path, "w", encoding="utf-8").write(text)
EOF

echo "[release] done: upload ${archives[*]} to $BASE_URL/, then submit $MANIFEST to krew-index"
