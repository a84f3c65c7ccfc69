"""The one list of skips (and expected failures) a CI run may have, each with why it is allowed.

Under ``CI`` (set by CI; ``tests/conftest.py`` reads it) any test that is skipped or xfailed for a
reason not matched here *fails*: a skip that hides a missing tool, a missing install step or an
unmodelled server behaviour must show up red, not as an ``s`` in the summary.

Each key is a regular expression searched in the skip's reason; each value says why the skip is
allowed. The cluster ones cannot happen in the CI run itself, which uses the lab server (no
``FIELDOWN_TEST_KUBECONFIG``); the known failures of the generated scenarios are listed by id in
their own file and shown in every run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

ALLOWED: dict[str, str] = {
    r"^the lab is not built when FIELDOWN_TEST_KUBECONFIG selects an external cluster$":
        "an external cluster (FIELDOWN_TEST_KUBECONFIG) has no lab to check",
    r"^the cluster's kubeconfig does not use client certificates \(an external cluster\)$":
        "client-certificate flags need a kubeconfig with client certificates (only the lab's is known to)",
    r"^needs the lab's CA to make an unprivileged user \(not available on an external cluster\)$":
        "an unprivileged user is made with the lab's CA; an external cluster's CA key is not ours",
    r"^needs the lab's PKI( \(a serving certificate used as a client certificate\))?$":
        "the lab's PKI files exist only for the lab server",
    r"^the lab server is on loopback; an external cluster may not be$":
        "a loopback-only check cannot be made against an external cluster",
    r"^cannot mount a tmpfs here: ":
        "the full-disk test needs a real small filesystem (root, mount); CI runs as root and mounts it",
    r"^known failure \(":
        "issue 17's generated scenarios that still fail, each named with its class in "
        "tests/scenarios/generated_known_failures.json: strict xfails, so a fixed one fails the run until "
        "it is taken off the list (they are the open work, shown in every run's summary)",
}


def allowed(reason: str) -> str | None:
    """Why a skip with this reason is allowed, or None."""
    for pattern, why in ALLOWED.items():
        if re.search(pattern, reason):
            return why
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI a skip or an xfail whose reason is not listed above fails the test: nothing may
    pass silently because a tool, an install step or a model is missing."""
    outcome: Any = yield
    report: pytest.TestReport = outcome.get_result()
    xfailed = hasattr(report, "wasxfail")
    if not in_ci() or not (report.skipped or xfailed):
        return
    reason = _reason(report)
    if allowed(reason) is not None:
        return
    report.outcome = "failed"
    report.longrepr = (f"{'xfailed' if xfailed else 'skipped'} under CI for a reason not listed in "
                       f"tests/allowed_skips.py: {reason}\n"
                       "(fix the cause, or list the reason there with why CI may skip it)")
    if xfailed:
        del report.wasxfail
