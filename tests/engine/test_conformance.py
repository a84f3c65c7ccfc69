"""Every recorded case of tests/conformance agrees with the engine (issue 3, §4).

For each case the prediction for ``apply`` on ``live`` must equal the server's answer without
force (``expect``) and with force (``expectForced``): the status; for 409 the exact set of
(manager, path) conflicts and the message; for 200 the managedFields as path sets per (manager,
operation, apiVersion, subresource), times ignored, and the object's spec, status, labels,
annotations and finalizers. tests/conformance/regressions holds cases the differential test found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conformance_cases import case_files, differences, expected, load, predict

CASES = case_files()


def _id(p: Path) -> str:
    return (f"{p.parent.name}/" if p.parent.name in ("builtin", "regressions") else "") + p.stem


def test_there_are_recorded_cases() -> None:
    assert len(CASES) >= 248


@pytest.mark.parametrize("path", CASES, ids=[_id(p) for p in CASES])
@pytest.mark.parametrize("forced", [False, True], ids=["expect", "expectForced"])
def test_prediction_matches_the_server(path: Path, forced: bool) -> None:
    case = load(path)
    answer = case["expectForced" if forced else "expect"]
    diffs = differences(expected(answer), predict(case, forced))
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("forced", [False, True], ids=["expect", "expectForced"])
def test_inputs_are_never_modified(forced: bool) -> None:
    # the engine shares unchanged parts of the live object and the manifest with its result and
    # copies only once; no input may be written to on the way
    import copy
    import json

    for path in CASES:
        case = load(path)
        before = json.dumps(case, sort_keys=True)
        snapshot = copy.deepcopy(case)
        predict(case, forced)
        assert json.dumps(case, sort_keys=True) == before, path.name
        assert case == snapshot


def test_update_inputs_are_never_modified() -> None:
    import copy
    import json

    from kubectl_fieldown.fieldmanager import simulate_update

    from .conformance_cases import rules_for

    for path in CASES:
        case = load(path)
        live = case["live"]
        new = copy.deepcopy(live)
        new.setdefault("metadata", {}).setdefault("labels", {})["touched"] = "yes"
        new["metadata"]["managedFields"] = [{}] if path.stem.endswith("0") else live["metadata"].get("managedFields")
        before = json.dumps([live, new], sort_keys=True)
        simulate_update(live, new, "updater", rules_for(case), now="2026-11-22T04:00:00Z")
        for subresource in ("status", ""):
            simulate_update(live, new, "updater", rules_for(case), now="2026-11-22T04:00:00Z", subresource=subresource)
        assert json.dumps([live, new], sort_keys=True) == before, path.name
