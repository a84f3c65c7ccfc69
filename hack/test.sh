#!/bin/bash
# hack/test.sh [PYTEST ARGS...] - THE command that runs the whole test suite from a clean clone.
#
#   1. .venv (python3 -m venv, if missing) + pip install -e '.[test]'
#   2. the real-API-server lab (hack/lab/build.sh: idempotent, ~6 min from nothing, ~15 s warm;
#      skipped when FIELDOWN_TEST_KUBECONFIG selects an existing cluster)
#   3. ruff check, mypy (strict, config in pyproject.toml), pytest "$@"
#
# Network: PyPI (pip) and deb.debian.org (the lab's apt-get download) only.
# Environment: PYTHON (default python3) for creating .venv; PREFIX for the lab (default
# ~/.cache/k8slab); FIELDOWN_TEST_KUBECONFIG / FIELDOWN_TEST_KUBECTL to test against another cluster.
# Exits non-zero if any step fails; ruff, mypy and pytest all run even if an earlier one failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ -t 1 ]]; then B=$'\033[1m' R=$'\033[31m' N=$'\033[0m'; else B='' R='' N=''; fi
section() { printf '\n%s==== %s%s\n' "$B" "$*" "$N"; }
die() { printf '\n%sFAILED: %s%s\n' "$R" "$*" "$N" >&2; exit 1; }
t_all=$SECONDS

section "python environment (.venv)"
if [[ ! -x .venv/bin/python ]]; then
  "${PYTHON:-python3}" -m venv .venv || die "python3 -m venv .venv"
fi
PY=.venv/bin/python
"$PY" --version
pip_log=$(mktemp "${TMPDIR:-/tmp}/fieldown-pip.XXXXXX")
# quiet: setuptools' deprecation warnings only shown when the install fails
if "$PY" -m pip install -q --disable-pip-version-check -e '.[test]' >"$pip_log" 2>&1; then
  rm -f "$pip_log"
  echo "installed kubectl-fieldown (editable) with test extras"
else
  tail -n 40 "$pip_log" >&2
  die "pip install -e '.[test]' (full log: $pip_log)"
fi

if [[ -n ${FIELDOWN_TEST_KUBECONFIG:-} ]]; then
  section "API server lab: skipped (FIELDOWN_TEST_KUBECONFIG=$FIELDOWN_TEST_KUBECONFIG)"
else
  section "API server lab (hack/lab/build.sh)"
  lab_log=$(mktemp "${TMPDIR:-/tmp}/k8slab-build.XXXXXX")
  # progress lines only; the whole output is kept in $lab_log and its tail shown on failure
  if hack/lab/build.sh >"$lab_log" 2>&1; then
    grep -E '^\[build|^etcd Version|^Client Version' "$lab_log" | tail -n 4
    rm -f "$lab_log"
    export FIELDOWN_LAB_PREBUILT=1   # tests/lab.py: do not run build.sh a second time
  else
    tail -n 40 "$lab_log" >&2
    die "hack/lab/build.sh (full log: $lab_log)"
  fi
fi

failed=()
has_py() { [[ -n $(find "$@" -name '*.py' -not -path '*/.*' -print -quit 2>/dev/null) ]]; }

section "ruff check"
ruff_paths=()
for d in kubectl_fieldown tests bench; do [[ -d $d ]] && has_py "$d" && ruff_paths+=("$d"); done
if ((${#ruff_paths[@]})); then
  "$PY" -m ruff check "${ruff_paths[@]}" && echo "ruff: ok (${ruff_paths[*]})" || failed+=(ruff)
else
  echo "ruff: nothing to check yet"
fi

section "mypy (strict)"
if has_py kubectl_fieldown; then
  "$PY" -m mypy || failed+=(mypy)
else
  echo "mypy: kubectl_fieldown has no .py files yet, skipped"
fi

section "pytest $*"
"$PY" -m pytest "$@" || failed+=(pytest)

section "summary ($((SECONDS - t_all))s)"
if ((${#failed[@]})); then
  printf '%sFAILED: %s%s\n' "$R" "${failed[*]}" "$N"
  exit 1
fi
echo "all steps passed"
