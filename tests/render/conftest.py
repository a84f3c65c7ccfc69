"""The renderers read NO_COLOR, FORCE_COLOR, FIELDOWN_DEBUG and COLUMNS: each test starts without them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    yield
