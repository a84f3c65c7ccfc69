#!/bin/bash
# hack/explore.sh [SEED] - look for new failures: every generated test with a fresh seed and a
# bigger budget (part of the release checklist, docs/development.md "Exploring").
#
# CI runs the same tests derandomized / on fixed seeds, so it never finds anything new. This run
# draws new examples and cases; whatever fails is kept as a regression case:
#   * property tests (hypothesis, profile "explore"): the failing example is printed; pin it as an
#     @example(...) on the test, next to the fix;
#   * the differential test writes each disagreement to tests/conformance/regressions/ (replayed by
#     tests/engine/test_conformance.py on every run): commit the file with the fix;
#   * the applier replays print the failing case ids (random/<seed>): add the seed to
#     REGRESSION_SEEDS of tests/appliers/test_replay.py with the fix.
# Needs what hack/test.sh sets up (.venv, the lab); runs everything even when one step fails.
# Environment: EXPLORE_DIFF_CASES (default 2000), EXPLORE_REPLAY_CASES (default 600).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[[ -x $PY ]] || { echo "run hack/test.sh once first (it creates .venv and builds the lab)" >&2; exit 2; }
SEED=${1:-$(( (RANDOM << 15 | RANDOM) ))}
echo "explore seed: $SEED (run again with: hack/explore.sh $SEED)"
failed=()

echo "==== property tests (hypothesis explore profile, seed $SEED)"
HYPOTHESIS_PROFILE=explore "$PY" -m pytest -q -p no:cacheprovider --hypothesis-seed="$SEED" \
  tests/core/test_fuzz_core.py tests/cli/test_fuzz.py tests/core/test_safeyaml.py tests/core/test_fieldset.py \
  tests/core/test_pathstring.py tests/core/test_value.py || failed+=(properties)

echo "==== differential test (seed $SEED, ${EXPLORE_DIFF_CASES:-2000} cases)"
FIELDOWN_DIFF_SEED=$SEED FIELDOWN_DIFF_CASES=${EXPLORE_DIFF_CASES:-2000} \
  "$PY" -m pytest -q -p no:cacheprovider tests/engine/test_differential.py || failed+=(differential)

echo "==== applier replays (seed $SEED, ${EXPLORE_REPLAY_CASES:-600} random cases)"
FIELDOWN_REPLAY_SEED=$SEED FIELDOWN_REPLAY_CASES=${EXPLORE_REPLAY_CASES:-600} FIELDOWN_REPLAY_CURATED=none \
  "$PY" -m pytest -q -p no:cacheprovider tests/appliers/test_replay.py || failed+=(replays)

if ((${#failed[@]})); then
  echo "explore seed $SEED found failures in: ${failed[*]} (keep each as a regression case, see the top of this script)"
  exit 1
fi
echo "explore seed $SEED: nothing new"
