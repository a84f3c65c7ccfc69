"""apimachinery's own strategic merge patch tests (pkg/util/strategicpatch/patch_test.go) through the
library's strategic merge (kubectl_fieldown.appliers.strategic).

hack/port-upstream-tests.py extracts the tables mechanically into
tests/conformance/upstream/apimachinery-strategicpatch.json: the YAML test data, the raw-case tables
and the ``MergeItem`` struct they patch (its fields and patchStrategy/patchMergeKey tags, read with
go/parser), which the library's ``StructMeta`` reads as it reads the built-in kinds' Go types
(``GoStructs``). Each case is played as upstream plays it with the struct schema (what kubectl and
the API server use for built-in kinds; upstream also runs its OpenAPI v2 and v3 lookups, which the
library does not have):

* two-way: ``CreateTwoWayMergePatch(original, modified)`` equals the expected patch, and the patch
  applied to ``original`` (``StrategicMergePatch``) gives ``twoWayResult`` (else ``modified``), or
  fails with the expected error;
* three-way: ``CreateThreeWayMergePatch(original, modified, current)`` — the library computes it as
  kubectl does, with ``overwrite=true``. Upstream first asks for it with ``overwrite=false`` and
  expects a conflict error exactly for the cases whose description says "conflict": that check has
  no counterpart in the library (kubectl never asks for it) and is counted, not played; the patch
  forced with ``overwrite=true`` and its result are played when upstream gives a result;
* custom: the given two-way patch applied to ``original`` gives the expected result;
* ``TestUnknownField``: JSON texts in; the two-way and three-way patches and their results as Go's
  JSON text, or the expected lookup error (fields MergeItem does not have).

Objects of the YAML data are compared, as upstream compares them, after ``sortMergeListsByName``
(restated below: a test helper of upstream's, not part of the product)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.appliers.smpgo import go_sort, sprint_v
from kubectl_fieldown.appliers.smpmerge import (
    DELETE_FROM_PRIMITIVE_LIST,
    DIRECTIVE,
    MERGE,
    RETAIN_KEYS_DIRECTIVE,
    SET_ELEMENT_ORDER,
    StrategicPatchError,
    _dedup_scalars,
    _retain_keys_strategy,
    _sort_scalars,
)
from kubectl_fieldown.appliers.smpmeta import GoStructs, PatchMetaError, StructMeta
from kubectl_fieldown.appliers.strategic import (
    apply_strategic_patch,
    go_decoded,
    three_way_strategic_patch,
    two_way_strategic_patch,
)
from kubectl_fieldown.base.value import go_json

DOC = json.loads((Path(__file__).resolve().parent.parent / "conformance" / "upstream"
                  / "apimachinery-strategicpatch.json").read_text())
SCHEMA = StructMeta({"kind": "struct", "type": DOC["root"]},
                    GoStructs({k: tuple(v) for k, v in DOC["goStructs"].items()}))
CREATE_TABLES = ("createStrategicMergePatchTestCaseData", "strategicMergePatchRawTestCases",
                 "replaceRawExtensionPatchTestCases")
CUSTOM_TABLES = ("customStrategicMergePatchTestCaseData", "customStrategicMergePatchRawTestCases")


# --- sortMergeListsByName (upstream's test helper in patch.go) ------------------------------------


def _sort_map(m: dict[str, Any], schema: StructMeta) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in m.items():
        if k == RETAIN_KEYS_DIRECTIVE or k.startswith(DELETE_FROM_PRIMITIVE_LIST + "/"):
            v = _sort_scalars(list(v))
        elif k.startswith(SET_ELEMENT_ORDER + "/") or k == DIRECTIVE:
            pass
        elif isinstance(v, dict):
            v = _sort_map(v, schema.for_struct(k)[0])
        elif isinstance(v, list):
            sub, meta = schema.for_slice(k)
            if _retain_keys_strategy(meta.strategies)[1] == MERGE:
                v = _sort_list(v, sub, meta.merge_key)
        out[k] = v
    return out


def _sort_list(s: list[Any], schema: StructMeta, merge_key: str) -> list[Any]:
    if not s:
        return s
    if not isinstance(s[0], dict):
        return _sort_scalars(_dedup_scalars(list(s)))
    items = [_sort_map(e, schema) for e in s]
    return go_sort(items, lambda m: sprint_v(m.get(merge_key)))


def sorted_object(v: Any) -> Any:
    """``sortJsonOrFail``: an object of the YAML data as upstream compares it (null stays null)."""
    if v is None:
        return None
    return _sort_map(go_decoded(v), SCHEMA)


def same(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of the JSON bytes: the same Go JSON text (keys sorted, lists in order)."""
    return bool(go_json(go_decoded(a)) == go_json(go_decoded(b)))


# --- the cases --------------------------------------------------------------------------------------


def _inputs(case: dict[str, Any]) -> dict[str, Any]:
    """The case's documents as upstream feeds them: YAML data sorted, raw cases as written."""
    prep = (lambda v: go_decoded(v)) if case["raw"] else sorted_object
    return {f: prep(case[f]) for f in ("original", "modified", "current", "twoWay", "threeWay", "result",
                                       "twoWayResult")}


def _result_given(case: dict[str, Any]) -> bool:
    # len(c.Result) < 1: a raw case's bytes, a YAML case's map
    return bool(case["resultGiven"]) if case["raw"] else bool(case["result"])


def _apply(original: Any, patch: Any, want: Any, expected_error: str) -> list[str]:
    """``testPatchApplication``."""
    try:
        got = apply_strategic_patch(go_decoded(original or {}), go_decoded(patch or {}), SCHEMA)
    except (StrategicPatchError, PatchMetaError) as e:
        if expected_error and expected_error in str(e):
            return []
        return [f"cannot apply the patch: {e}"]
    if expected_error:
        return [f"applied, upstream expects an error containing {expected_error!r}"]
    return [] if same(got, want) else [f"result {go_json(got)}, upstream {go_json(go_decoded(want))}"]


def two_way(case: dict[str, Any]) -> list[str]:
    d = _inputs(case)
    want_result = d["twoWayResult"] if d["twoWayResult"] is not None else d["modified"]
    try:
        patch = two_way_strategic_patch(d["original"], d["modified"], SCHEMA)
    except (StrategicPatchError, PatchMetaError) as e:
        return [f"cannot create the two-way patch: {e}"]
    if not same(patch, d["twoWay"]):
        return [f"two-way patch {go_json(patch)}, upstream {go_json(go_decoded(d['twoWay']))}"]
    return _apply(d["original"], patch, want_result, case.get("expectedError") or "")


def three_way(case: dict[str, Any]) -> list[str]:
    d = _inputs(case)
    try:
        patch = three_way_strategic_patch(d["original"], d["modified"] or {}, d["current"] or {}, SCHEMA)
    except (StrategicPatchError, PatchMetaError) as e:
        return [f"cannot create the three-way patch: {e}"]
    if not same(patch, d["threeWay"]):
        return [f"three-way patch {go_json(patch)}, upstream {go_json(go_decoded(d['threeWay']))}"]
    return _apply(d["current"], patch, d["result"], case.get("expectedError") or "")


def custom(case: dict[str, Any]) -> list[str]:
    d = _inputs(case)
    want = d["twoWayResult"] if d["twoWayResult"] is not None else d["modified"]
    return _apply(d["original"], d["twoWay"], want, case.get("expectedError") or "")


def _items() -> tuple[list[Any], Counter[str]]:
    """Every played check, and what is counted and not played (by reason)."""
    played: list[Any] = []
    not_played: Counter[str] = Counter()
    for table in CREATE_TABLES:
        for case in DOC["tables"][table]:
            played.append(pytest.param(two_way, case, id=f"{table}:{case['description']}/TwoWay"))
            if "conflict" in case["description"]:
                not_played["ThreeWay: the conflict error of overwrite=false"] += 1
                if not _result_given(case):
                    continue
            played.append(pytest.param(three_way, case, id=f"{table}:{case['description']}/ThreeWay"))
    for table in CUSTOM_TABLES:
        for case in DOC["tables"][table]:
            played.append(pytest.param(custom, case, id=f"{table}:{case['description']}"))
    return played, not_played


PLAYED, NOT_PLAYED = _items()


@pytest.mark.parametrize(("check", "case"), PLAYED)
def test_upstream_strategic_patch_case(check: Any, case: dict[str, Any]) -> None:
    differences = check(case)
    assert not differences, "\n".join(differences)


def test_tables_recorded() -> None:
    counts = {k: len(v) for k, v in DOC["tables"].items()}
    assert counts == {"createStrategicMergePatchTestCaseData": 22, "customStrategicMergePatchTestCaseData": 18,
                      "strategicMergePatchRawTestCases": 94, "customStrategicMergePatchRawTestCases": 10,
                      "replaceRawExtensionPatchTestCases": 2}, counts
    assert set(NOT_PLAYED) <= {"ThreeWay: the conflict error of overwrite=false"}, NOT_PLAYED
    assert len(DOC["unknownField"]) == 15


# --- TestUnknownField: JSON texts in, Go's JSON text out ------------------------------------------

UNKNOWN = DOC["unknownField"]


def _text(v: Any) -> str:
    return str(go_json(v))


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_upstream_unknown_field_two_way(name: str) -> None:
    tc = UNKNOWN[name]
    try:
        patch = two_way_strategic_patch(go_decoded(json.loads(tc["Original"])), go_decoded(json.loads(tc["Modified"])),
                                        SCHEMA)
    except (StrategicPatchError, PatchMetaError) as e:
        assert tc.get("ExpectedTwoWayErr"), f"error making the two-way patch: {e}"
        assert tc["ExpectedTwoWayErr"] in str(e)
        return
    assert _text(patch) == tc["ExpectedTwoWay"]
    result = apply_strategic_patch(go_decoded(json.loads(tc["Original"])), patch, SCHEMA)
    assert _text(result) == tc["ExpectedTwoWayResult"]


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_upstream_unknown_field_three_way(name: str) -> None:
    tc = UNKNOWN[name]
    try:
        original, modified = go_decoded(json.loads(tc["Original"])), go_decoded(json.loads(tc["Modified"]))
        patch = three_way_strategic_patch(original, modified, go_decoded(json.loads(tc["Current"])), SCHEMA)
    except (StrategicPatchError, PatchMetaError) as e:
        assert tc.get("ExpectedThreeWayErr"), f"error making the three-way patch: {e}"
        assert tc["ExpectedThreeWayErr"] in str(e)
        return
    assert _text(patch) == tc["ExpectedThreeWay"]
    result = apply_strategic_patch(go_decoded(json.loads(tc["Current"])), patch, SCHEMA)
    assert _text(result) == tc["ExpectedThreeWayResult"]
