"""Fuzzing the command line with hostile input (issue 9): whatever the input, one ``error:`` line per
problem, a documented exit code, no traceback and no "internal error". Derandomized (tests/conftest.py)
and bounded: a few seconds on two cores."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cli_helpers import Result, run
from fuzz_inputs import documents, objects
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

OUTPUTS = ["tree", "table", "blame", "json", "yaml"]


def assert_clean(r: Result, codes: set[int]) -> None:
    assert r.code in codes, (r.code, r.err)
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    for line in r.err_lines:
        assert line.startswith(("error: ", "warning: ", "note: ")) or line == "", line
        assert not re.search("[\\x00-\\x1f\\x7f-\\x9f]", line), line


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents(), st.sampled_from(OUTPUTS), st.booleans())
def test_show_input(text: str, output: str, unowned: bool) -> None:
    r = run("show", "-i", "-", "-o", output, *(["--show-unowned"] if unowned else []), stdin=text)
    assert_clean(r, {0, 2})
    if output == "json":
        json.loads(r.out)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents(), st.sampled_from(["tree", "json"]), st.text(max_size=40))
def test_show_path_filter(text: str, output: str, path: str) -> None:
    r = run("show", "-i", "-", "-o", output, "--path", "." + path, stdin=text)
    assert_clean(r, {0, 1, 2})


def _named(obj: Any, value: str) -> Any:
    # a manifest and a live object for the same ConfigMap, so that the engine gets to work
    if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
        obj = {**obj, "apiVersion": "v1", "kind": "ConfigMap", "metadata": {**obj["metadata"], "name": "c"}}
        obj["data"] = {"a": value}
    return obj


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(live=objects(), manifest=objects(), force=st.booleans(), output=st.sampled_from(["text", "json"]))
def test_conflicts_live(tmp_path_factory: Any, live: Any, manifest: Any, force: bool, output: str) -> None:
    d: Path = tmp_path_factory.mktemp("fuzz")
    (d / "live.json").write_text(json.dumps(_named(live, "1")))
    (d / "m.json").write_text(json.dumps(_named(manifest, "2")))
    r = run("conflicts", "-f", str(d / "m.json"), "--live", str(d / "live.json"), "--field-manager", "fuzz",
            "-o", output, *(["--force-conflicts"] if force else []))
    assert_clean(r, {0, 1, 2})
