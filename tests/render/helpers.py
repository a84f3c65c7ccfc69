"""What the tests of show's human output share: rich's SGR runs, a Widget with long values, one
object rendered as a table or blame at a given width."""

from __future__ import annotations

import io
import re
from typing import Any

from kubectl_fieldown.cli.show import build_view
from kubectl_fieldown.ownership.managedfields import decode_entries

SGR = re.compile(r"\x1b\[([0-9;]*)m")


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


def codes_per_owner(text: str, owners: list[str]) -> dict[str, frozenset[str]]:
    """The SGR parameters each owner label is printed with (each must be printed one way)."""
    seen: dict[str, set[frozenset[str]]] = {}
    for line in text.splitlines():
        for params, run_text in styled_runs(line):
            if run_text in owners:
                seen.setdefault(run_text, set()).add(params)
    assert set(seen) == set(owners)
    assert all(len(p) == 1 for p in seen.values()), seen
    return {o: next(iter(p)) for o, p in seen.items()}


LONG = "".join("abcdefghij"[i % 10] for i in range(500))


MULTI = "first line\nsecond line\nthird line\n"


def long_widget() -> dict[str, Any]:
    fields_v1 = {"f:spec": {".": {}, "f:long": {}, "f:multi": {}}}
    return {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "long", "namespace": "shop", "managedFields": [
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "example.com/v1",
             "time": "2024-06-10T09:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields_v1},
            {"manager": "a-controller-with-a-rather-long-manager-name", "operation": "Apply",
             "apiVersion": "example.com/v1", "time": "2024-06-10T09:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:size": {}}}}]},
        "spec": {"long": LONG, "multi": MULTI, "size": 3},
    }


def render_object(output: str, obj: dict[str, Any], width: int | None, colour: bool) -> list[str]:
    from kubectl_fieldown.render.blame import render_blame
    from kubectl_fieldown.render.table import render_table

    view = build_view(obj, decode_entries(obj["metadata"]["managedFields"]))
    buf = io.StringIO()
    if output == "table":
        render_table([view], buf, width=width)
    else:
        render_blame([view], buf, width=width, time_mode="none")
    return SGR.sub("", buf.getvalue()).splitlines()
