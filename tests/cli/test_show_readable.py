"""Human output of ``show`` that a person reads (issue 11): what is dim and what is coloured, colours
that stay apart in 16-colour terminals, long values fitted to the terminal, one table for many
objects, and ownership of a map or list item itself told apart from ownership of all of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = REPO / "examples" / "deployment.yaml"
SECRET = REPO / "examples" / "secret.yaml"
SGR = re.compile(r"\x1b\[([0-9;]*)m")


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    yield


def styled_runs(line: str) -> list[tuple[frozenset[str], str]]:
    """A line of rich's output as (SGR parameters, text) runs; rich resets after every styled run."""
    runs: list[tuple[frozenset[str], str]] = []
    params: frozenset[str] = frozenset()
    pos = 0
    for m in SGR.finditer(line):
        if m.start() > pos:
            runs.append((params, line[pos:m.start()]))
        codes = frozenset(c for c in m.group(1).split(";") if c)
        params = frozenset() if codes <= {"0"} else params | codes
        pos = m.end()
    if pos < len(line):
        runs.append((params, line[pos:]))
    return runs


# --- 1. only the guides are dim ----------------------------------------------------------------------


def test_tree_dims_only_the_guides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = run("show", "-i", str(DEPLOYMENT), "--time", "none").out
    tree_lines = [line for line in out.splitlines() if "── " in SGR.sub("", line)]
    assert len(tree_lines) > 50
    for line in tree_lines:
        (guide_params, guide), (label_params, label), *_ = styled_runs(line)
        assert set(guide) <= set("│├└─ ") and "2" in guide_params, f"guides dim: {line!r}"
        assert label.strip() and "2" not in label_params, f"{label!r} must not be dim in {line!r}"
    image = next(line for line in tree_lines if "image: registry.example.com" in line)
    runs = {text: params for params, text in styled_runs(image)}
    assert runs["image: registry.example.com/shop/web:1.8.2"] == frozenset(), "field and value in normal weight"
    assert "2" not in runs["kubectl-edit"] and runs["kubectl-edit"] - {"1"}, "owners coloured, not dim"
