"""``conflicts --live --schema -o json`` against every recorded server answer (tests/conformance).

Each case's ``live`` object and CRD are written to files and the CLI runs in-process, offline, as a
user would run it, once without and once with ``--force-conflicts``:

* 409: the (manager, path) conflict set equals the server's, in the order of the server's message
  (managers sorted by identity JSON, each manager's paths in field order); ``result`` is null;
  exit 1;
* 200: ``result.managedFields`` (path sets per manager, operation, apiVersion, subresource) and the
  object's spec, labels and annotations equal the server's object; exit 0;
* 422/500: ``result`` is null, no conflicts, exit 1.

Built-in kinds (``builtin/``: Deployment, ConfigMap, Service, Pod) run with the offline built-in
schemas (``--kube-version 1.36``, no ``--schema``) and need the Go typed-zero data of
:mod:`kubectl_fieldown.schema.gotypes`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from kubectl_fieldown.cli.main import PROG_NAME, build_app, install_fast_coercion, main
from kubectl_fieldown.fieldpath import FieldSet, decode_fields_v1

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
CASES = sorted(CONFORMANCE.glob("*.json"))
BUILTIN_CASES = sorted((CONFORMANCE / "builtin").glob("*.json"))
HAS_GOTYPES = importlib.util.find_spec("kubectl_fieldown.schema.gotypes") is not None


@functools.cache
def command() -> Any:
    """The click command that :func:`kubectl_fieldown.cli.main.main` builds for ``conflicts``, built
    once: typer needs ~15 ms to build it, a good part of the time of 500 runs."""
    cmd = typer.main.get_command(build_app(("conflicts",)))
    install_fast_coercion(cmd)
    return cmd


def run_json(args: list[str]) -> tuple[int, dict[str, Any], str]:
    """Run the CLI in-process as :func:`main` does: exit code, parsed stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rv = command().main(args=args, prog_name=PROG_NAME, standalone_mode=False)
    finally:
        sys.stdin = saved
    code = rv if isinstance(rv, int) else 0
    return code, json.loads(out.getvalue()), err.getvalue()


def test_the_cached_command_is_what_main_runs(tmp_path: Path) -> None:
    case = json.loads(CASES[0].read_text())
    (tmp_path / "live.json").write_text(json.dumps(case["live"]))
    (tmp_path / "manifest.json").write_text(json.dumps(case["apply"]["manifest"]))
    args = ["conflicts", "-f", str(tmp_path / "manifest.json"), "--live", str(tmp_path / "live.json"),
            "--field-manager", case["apply"]["manager"], "-n", case["live"]["metadata"]["namespace"], "-o", "json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    assert run_json(args)[:2] == (code, json.loads(out.getvalue()))


def entry_sets(entries: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], FieldSet]:
    return {(e["manager"], e["operation"], e.get("apiVersion", ""), e.get("subresource", "")):
            decode_fields_v1(e.get("fieldsV1")) for e in entries}


def object_view(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj.get("metadata") or {}
    return {"spec": obj.get("spec"), "labels": md.get("labels"), "annotations": md.get("annotations")}


_GROUP = re.compile(r'^conflicts? with "((?:[^"\\]|\\.)*)"[^:]*:\s*(.*)$')


def message_order(message: str) -> list[tuple[str, str]]:
    """(manager, path) in the order of the server's 409 message, which is deterministic (the causes'
    order between managers is not)."""
    body = message.split(": ", 1)[1]
    out: list[tuple[str, str]] = []
    manager = ""
    for line in body.split("\n"):
        if line.startswith("- "):
            out.append((manager, line[2:]))
            continue
        m = _GROUP.match(line)
        assert m, line
        manager = m.group(1)
        if m.group(2):  # one conflict: "conflict with "x" using v1: .spec.a"
            out.append((manager, m.group(2)))
    return out


def check_answer(case: dict[str, Any], answer: dict[str, Any], code: int, item: dict[str, Any], err: str) -> None:
    status = answer["status"]
    if status == 409:
        want = {(c["manager"], c["path"]) for c in answer["conflicts"]}
        got = [(c["manager"], c["path"]) for c in item["conflicts"]]
        assert set(got) == want
        assert got == message_order(answer["message"]), "conflicts in the server's message order"
        assert item["result"] is None
        assert code == 1, err
        return
    if status in (200, 201):
        assert code == 0, err
        assert item["result"] is not None, err
        obj = item["result"]["object"]
        assert item["result"]["managedFields"] == obj["metadata"].get("managedFields", [])
        assert entry_sets(item["result"]["managedFields"]) == \
            entry_sets(answer["object"]["metadata"].get("managedFields") or [])
        assert object_view(obj) == object_view(answer["object"])
        return
    assert code == 1, err
    assert item["result"] is None
    assert "would reject" in err, err


def run_case(case_file: Path, tmp_path: Path) -> None:
    case = json.loads(case_file.read_text())
    live = case["live"]
    apply = case["apply"]
    (tmp_path / "live.json").write_text(json.dumps(live))
    (tmp_path / "manifest.json").write_text(json.dumps(apply["manifest"]))
    args = ["conflicts", "-f", str(tmp_path / "manifest.json"), "--live", str(tmp_path / "live.json"),
            "--field-manager", apply["manager"], "-o", "json"]
    if case.get("schema"):
        (tmp_path / "crd.json").write_text(json.dumps(case["schema"]))
        args += ["--schema", str(tmp_path / "crd.json")]
    else:
        args += ["--kube-version", "1.36"]  # the cases were recorded with client-go 0.36 types
    ns = live["metadata"].get("namespace")
    if ns:
        args += ["-n", ns]
    for force, key in ((False, "expect"), (True, "expectForced")):
        code, doc, err = run_json([*args, "--force-conflicts"] if force else args)
        (item,) = doc["items"]
        md = live["metadata"]
        assert (item["apiVersion"], item["kind"], item["namespace"], item["name"]) == \
            (live["apiVersion"], live["kind"], md.get("namespace"), md["name"])
        try:
            check_answer(case, case[key], code, item, err)
        except AssertionError as e:
            raise AssertionError(f"{key} ({'forced' if force else 'not forced'}): {e}") from e


def test_there_are_cases() -> None:
    assert len(CASES) > 100
    assert len(BUILTIN_CASES) > 50


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_custom_resource_case(case_file: Path, tmp_path: Path) -> None:
    run_case(case_file, tmp_path)


@pytest.mark.skipif(not HAS_GOTYPES, reason="kubectl_fieldown.schema.gotypes (Go typed zero values of built-in "
                    "kinds) is not installed: built-in kinds cannot be predicted exactly without it")
@pytest.mark.parametrize("case_file", BUILTIN_CASES, ids=lambda p: f"builtin/{p.stem}")
def test_builtin_case(case_file: Path, tmp_path: Path) -> None:
    run_case(case_file, tmp_path)


@pytest.mark.parametrize("name", ["cur-atomic-selector-changed-by-other", "cur-gizmo-cluster-scoped-int-key",
                                  "cur-remove-listmap-item-with-update-owned-subfield",
                                  "cur-set-list-finalizers-shared"])
def test_without_a_schema_the_live_managed_fields_type_the_lists(name: str, tmp_path: Path) -> None:
    """No --schema: each of these cases agreed with the server only once the list keys, sets and
    atomic maps that the live managedFields show were used (kubectl_fieldown/schema/hinted.py);
    with every list atomic each prediction was wrong."""
    case = json.loads((CONFORMANCE / f"{name}.json").read_text())
    live, apply = case["live"], case["apply"]
    (tmp_path / "live.json").write_text(json.dumps(live))
    (tmp_path / "manifest.json").write_text(json.dumps(apply["manifest"]))
    args = ["conflicts", "-f", str(tmp_path / "manifest.json"), "--live", str(tmp_path / "live.json"),
            "--field-manager", apply["manager"], "-o", "json"]
    if live["metadata"].get("namespace"):
        args += ["-n", live["metadata"]["namespace"]]
    code, doc, err = run_json(args)
    check_answer(case, case["expect"], code, doc["items"][0], err)
