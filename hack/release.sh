#!/bin/bash
# hack/release.sh [VERSION] - build the krew release archive and point krew/fieldown.yaml at it.
#
#   0. builds the sdist and wheel for PyPI into dist/ (python -m build) and checks them with
#      `twine check --strict` (build and twine are installed into a temporary venv from PyPI)
#   1. builds the wheel of this checkout (pip wheel --no-deps; version from pyproject.toml unless
#      VERSION is given, which must then match it)
#   2. writes dist/kubectl-fieldown-vVERSION.zip: the `kubectl-fieldown` launcher (POSIX sh), the
#      `kubectl_complete-fieldown` completer for kubectl's plugin completion, and the wheel. On first run the launcher makes a private virtualenv and pip-installs the wheel
#      (dependencies come from PyPI); after that it just execs it.
#   3. computes the archive's sha256 and rewrites version, uri and sha256 of every platform in
#      krew/fieldown.yaml (pure Python: one archive serves linux/darwin, amd64/arm64)
#
# Environment: PYTHON (default .venv/bin/python, else python3); RELEASE_TOOLS_PYTHON, a Python that
# has build, twine and setuptools (then nothing is downloaded; default: a private venv from PyPI);
# RELEASE_BASE_URL (default
# https://github.com/kubectl-fieldown/kubectl-fieldown/releases/download/vVERSION), where the
# archive will be uploaded; PIP_WHEEL_ARGS, extra arguments for `pip wheel` (e.g.
# --no-build-isolation when PyPI is out of reach and setuptools is installed).
# Upload the archive yourself; this script changes nothing but dist/ and krew/fieldown.yaml.
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
ARCHIVE=kubectl-fieldown-v$VERSION.zip
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

mkdir -p "$stage/archive" dist
cp "$wheel" "$stage/archive/"
cat >"$stage/archive/kubectl-fieldown" <<'LAUNCHER'
#!/bin/sh
# kubectl-fieldown launcher (installed by krew). Runs the wheel next to this file from a private
# virtualenv, created with pip on first use: ${XDG_DATA_HOME:-~/.local/share}/kubectl-fieldown/VERSION.
# FIELDOWN_PYTHON: the interpreter to use (default: the newest python3.x >= 3.10 on PATH).
# FIELDOWN_PIP_ARGS: extra pip install arguments (a proxy, an index, --no-index --find-links ...).
set -eu
VERSION=@VERSION@

self=$0
while [ -L "$self" ]; do  # krew links ~/.krew/bin/kubectl-fieldown to the store: find the store
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=$(dirname "$self")/$link ;;
  esac
done
here=$(cd "$(dirname "$self")" && pwd -P)

venv=${XDG_DATA_HOME:-$HOME/.local/share}/kubectl-fieldown/$VERSION
if [ ! -f "$venv/.installed" ]; then
  py=${FIELDOWN_PYTHON:-}
  if [ -z "$py" ]; then
    for candidate in python3.14 python3.13 python3.12 python3.11 python3.10 python3; do
      if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        py=$(command -v "$candidate")
        break
      fi
    done
  fi
  if [ -z "$py" ]; then
    echo "error: kubectl-fieldown needs Python >= 3.10 on PATH (or FIELDOWN_PYTHON=/path/to/python3)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$venv")"
  lock=$venv.lock
  if ! mkdir "$lock" 2>/dev/null; then
    echo "error: another kubectl-fieldown is installing into $venv (remove $lock if it is not)" >&2
    exit 1
  fi
  trap 'rmdir "$lock" 2>/dev/null || true' EXIT
  echo "kubectl-fieldown: first run, installing $VERSION into $venv with pip ..." >&2
  rm -rf "$venv"
  # a virtualenv cannot be moved, so it is built in place; .installed marks it complete
  # shellcheck disable=SC2086
  if "$py" -m venv "$venv" &&
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ${FIELDOWN_PIP_ARGS:-} \
      "$here"/kubectl_fieldown-"$VERSION"-*.whl; then
    touch "$venv/.installed"
  else
    echo "error: installing kubectl-fieldown into $venv failed (see pip's messages above)" >&2
    rm -rf "$venv"
    exit 1
  fi
  rmdir "$lock" 2>/dev/null || true
  trap - EXIT
fi
exec "$venv/bin/python" -m kubectl_fieldown "$@"
LAUNCHER
cat >"$stage/archive/kubectl_complete-fieldown" <<'COMPLETER'
#!/bin/sh
# kubectl's plugin completion for kubectl-fieldown (`kubectl fieldown <TAB>`). krew puts only
# kubectl-fieldown on PATH; link this file beside it to enable completion (see the caveats).
# Before the first run of kubectl-fieldown has installed it, it offers nothing (and lets the shell
# complete file names): a TAB must never start a pip install.
VERSION=@VERSION@
venv=${XDG_DATA_HOME:-$HOME/.local/share}/kubectl-fieldown/$VERSION
if [ -f "$venv/.installed" ]; then
  exec "$venv/bin/kubectl_complete-fieldown" "$@"
fi
echo ":0"
COMPLETER
for script in kubectl-fieldown kubectl_complete-fieldown; do
  sed -i.bak "s/@VERSION@/$VERSION/" "$stage/archive/$script" && rm -f "$stage/archive/$script.bak"
  chmod 0755 "$stage/archive/$script"
done
[[ -f README.md ]] && cp README.md "$stage/archive/"
[[ -f LICENSE ]] && cp LICENSE "$stage/archive/"

echo "[release] writing dist/$ARCHIVE"
"$PY" - "$stage/archive" "dist/$ARCHIVE" <<'EOF'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible archive bytes
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (os.stat(path).st_mode & 0o777 | 0o100000) << 16  # keep the launcher executable
        with open(path, "rb") as f:
            z.writestr(info, f.read())
EOF

sha=$("$PY" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "dist/$ARCHIVE")
echo "[release] sha256 $sha"

echo "[release] updating $MANIFEST"
"$PY" - "$MANIFEST" "$VERSION" "$BASE_URL/$ARCHIVE" "$sha" <<'EOF'
import re, sys
path, version, uri, sha = sys.argv[1:]
text = open(path, encoding="utf-8").read()
text, n_version = re.subn(r"(?m)^(  version: ).*$", rf"\g<1>v{version}", text)
text, n_uri = re.subn(r"(?m)^(    uri: ).*$", rf"\g<1>{uri}", text)
text, n_sha = re.subn(r'(?m)^(    sha256: ).*$', rf'\g<1>"{sha}"', text)
if n_version != 1 or n_uri == 0 or n_uri != n_sha:
    sys.exit(f"release.sh: unexpected layout of {path}: {n_version} version, {n_uri} uri, {n_sha} sha256 lines")
open(path, "w", encoding="utf-8").write(text)
print(f"[release] {n_uri} platforms -> {uri}")
EOF

echo "[release] done: upload dist/$ARCHIVE to $BASE_URL/, then submit $MANIFEST to krew-index"
