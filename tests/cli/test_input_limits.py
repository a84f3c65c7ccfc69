"""Hostile input files: one ``error:`` line naming the file and document, no traceback, bounded time
and memory (docs/show.md, "Input limits"). Each case was found by fuzzing (issue 9)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Result, run

from kubectl_fieldown.cli import files
from kubectl_fieldown.cli.files import read_objects
from kubectl_fieldown.manifests import sources
from kubectl_fieldown.manifests.safeyaml import MAX_DEPTH
from kubectl_fieldown.manifests.sources import SourceError, parse_text

OUTPUTS = ["tree", "table", "blame", "json", "yaml"]


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("NO_COLOR", "FORCE_COLOR", "FIELDOWN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield


def one_error(r: Result, *needles: str) -> str:
    assert r.code == 2, (r.code, r.err)  # input the tool cannot read: an input error
    assert len(r.err_lines) == 1, r.err
    line = r.err_lines[0]
    assert line.startswith("error: ") and "internal error" not in line, line
    for n in needles:
        assert n in line, (n, line)
    return line


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


# --- nesting -----------------------------------------------------------------------------------------


def test_deep_yaml_in_a_real_process(tmp_path: Path) -> None:
    """30,000 nested brackets crashed the process (exit 139) inside libyaml 0.2.5's composer."""
    n = 30_000
    f = write(tmp_path, "deep.yaml", "a: " + "[" * n + "]" * n + "\n")
    proc = subprocess.run([sys.executable, "-m", "kubectl_fieldown", "show", "-i", f], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: {f}: document 1: ")
    assert "nest" in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("n", [MAX_DEPTH + 1, 500, 5_000])
def test_deep_yaml(tmp_path: Path, n: int) -> None:
    f = write(tmp_path, "deep.yaml", "---\nkind: A\n---\na: " + "[" * n + "]" * n + "\n")
    r = run("show", "-i", f, "-o", "json")
    line = one_error(r, f"{f}: document 2: ", "(line 4, column")
    # libyaml 0.2.6 has a limit of its own (1,000 levels) that its scanner may meet first
    assert f"nested more than {MAX_DEPTH} levels deep" in line or "exceeded maximum nesting depth" in line
    assert r.json()["items"] == [{"apiVersion": "", "kind": "A", "namespace": None, "name": "", "managers": [],
                                   "fields": []}]


@pytest.mark.parametrize("n", [MAX_DEPTH + 1, 700, 100_000])
def test_deep_json(tmp_path: Path, n: int) -> None:
    f = write(tmp_path, "deep.json", '{"kind": "A", "a": ' + "[" * n + "]" * n + "}")
    one_error(run("show", "-i", f), f"{f}: document 1: nested more than {MAX_DEPTH} levels deep")


def nested(levels: int, leaf: Any, name: str = "a") -> Any:
    for _ in range(levels):
        leaf = {name: leaf}
    return leaf


def test_objects_at_the_depth_limit_work_in_every_output(tmp_path: Path) -> None:
    # the object is level 1 and .spec level 2; fieldsV1 is level 5 (metadata, managedFields, [0])
    owned = MAX_DEPTH - 6
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "deep", "managedFields": [
        {"manager": "m", "operation": "Apply", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": nested(owned, {}, "f:a")}}]}, "spec": nested(MAX_DEPTH - 2, "x")}
    f = write(tmp_path, "deep.json", json.dumps(obj))
    for output in OUTPUTS:
        r = run("show", "-i", f, "-o", output, "--show-unowned")
        assert r.code == 0 and r.err == "", (output, r.err)
    fields = run("show", "-i", f, "-o", "json", "--show-unowned").json()["items"][0]["fields"]
    assert [x["path"] for x in fields] == [".spec" + ".a" * owned]
    assert fields[0]["value"] == nested(MAX_DEPTH - 2 - owned, "x")


# --- aliases -----------------------------------------------------------------------------------------


def test_billion_laughs(tmp_path: Path) -> None:
    """485 bytes that ran for more than a minute at 2.4 GB."""
    lines = ["kind: A", "l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    f = write(tmp_path, "laughs.yaml", "\n".join(lines) + "\n")
    one_error(run("show", "-i", f), f"{f}: document 1: the aliases stand for too much of the document",
              "excessive aliasing")


@pytest.mark.parametrize("text", ["kind: A\nspec: &a [*a]\n", "kind: A\nspec: &a\n  b: *a\n"])
def test_self_referencing_alias(tmp_path: Path, text: str) -> None:
    f = write(tmp_path, "self.yaml", text)
    one_error(run("show", "-i", f), f"{f}: document 1: the alias *a refers to the node that contains it")


# --- numbers and text --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"kind": "A", "spec": {"n": NaN}}', "NaN is not a number Kubernetes can store"),
        ('{"kind": "A", "spec": {"n": -Infinity}}', "-Infinity is not a number Kubernetes can store"),
        ('{"kind": "A", "spec": {"n": 1e400}}', "1e400 is out of the range of a float64"),
        ("kind: A\nspec:\n  ports:\n  - containerPort: .nan\n", "nan is not a number Kubernetes can store"),
        ("kind: A\nspec: {n: -.inf}\n", "-inf is not a number Kubernetes can store (JSON has no NaN or infinity)"),
    ],
)
def test_not_a_number(tmp_path: Path, text: str, needle: str) -> None:
    f = write(tmp_path, "nan.yaml", text)
    one_error(run("show", "-i", f), f"{f}: document 1: ", needle)


@pytest.mark.parametrize("output", OUTPUTS)
def test_lone_surrogate_in_a_name(tmp_path: Path, output: str) -> None:
    """Go reads an invalid surrogate escape as U+FFFD; a lone surrogate failed every output."""
    obj = ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c\\ud800x", "labels": {"k\\udfff": "v"},'
           ' "managedFields": [{"manager": "m\\ud800", "operation": "Apply", "apiVersion": "v1",'
           ' "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:k\\udfff": {}}}}}]}}')
    f = write(tmp_path, "s.json", obj)
    r = run("show", "-i", f, "-o", output)
    assert r.code == 0 and r.err == "", r.err
    assert "m\ufffd" in r.out and "k\ufffd" in r.out
    if output != "table":  # a table of one object has no title
        assert "c\ufffdx" in r.out
    r.out.encode("utf-8")  # nothing left that UTF-8 cannot carry


# --- size --------------------------------------------------------------------------------------------


def test_input_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 100)
    monkeypatch.setattr(sources, "MAX_INPUT_BYTES", 100)
    f = write(tmp_path, "big.yaml", "kind: A\n" + "# padding\n" * 20)
    one_error(run("show", "-i", f), f"{f}: more than 100 bytes: refused")
    one_error(run("show", "-i", "-", stdin="kind: A\n" + "# padding\n" * 20), "<stdin>: more than 100 bytes: refused")
    assert read_objects(write(tmp_path, "small.yaml", "kind: A\n"))[0].obj == {"kind": "A"}
    with pytest.raises(SourceError, match="more than 100 bytes"):
        raise parse_text("lib", "kind: A\n" * 20).errors[0]


# --- typed lists as the LIST endpoint returns them -----------------------------------------------------


SECRET_LIST = {
    "kind": "SecretList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
    "items": [{"metadata": {"name": "s", "namespace": "default", "managedFields": [
        {"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:password": {}}, "f:stringData": {"f:token": {}}}}]},
        "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "hunter2"}, "type": "Opaque"}],
}


@pytest.mark.parametrize("output", OUTPUTS)
def test_raw_secret_list_is_redacted(tmp_path: Path, output: str) -> None:
    """``kubectl get --raw /api/v1/secrets`` items have no kind: they are Secrets all the same."""
    f = write(tmp_path, "secrets.json", json.dumps(SECRET_LIST))
    r = run("show", "-i", f, "-o", output, "--show-unowned")
    assert r.code == 0, r.err
    assert "aHVudGVyMg==" not in r.out and "hunter2" not in r.out
    assert "<redacted>" in r.out


# --- objects no server returns -------------------------------------------------------------------------


def entry(**extra: Any) -> dict[str, Any]:
    return {"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:x": {}}}, **extra}


def config_map(metadata: dict[str, Any], value: str = "1") -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "c", "namespace": "default", **metadata}, "data": {"x": value}})


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (entry(subresource=[1]), "managedFields[0] (manager 'a'): subresource is not a string"),
        (entry(fieldsV1={"f:data": {"x:bogus": {}}}), "unknown key 'x:bogus', the API server never writes one"),
        (entry(fieldsV1='{"f:data":' * 700 + "{}" + "}" * 700), "fieldsV1 must be a JSON object, not a string"),
        (entry(fieldsV1={"f:data": {"v:" + "[" * 2000 + "]" * 2000: {}}}), "nested more than 100 levels deep"),
    ],
)
def test_bad_managed_fields_entries(tmp_path: Path, output: str, bad: dict[str, Any], needle: str) -> None:
    f = write(tmp_path, "cm.json", config_map({"managedFields": [bad]}))
    r = run("show", "-i", f, "-o", output)
    one_error(r, f"{f}: document 1: ConfigMap default/c: ", needle)


def test_bad_metadata_of_an_object_from_a_file(tmp_path: Path) -> None:
    f = write(tmp_path, "cm.json", config_map({"annotations": 5, "managedFields": [entry()]}))
    one_error(run("show", "-i", f), f"{f}: document 1: not an object as the API server returns it: "
                                     "metadata.annotations is a number, not a map of strings")


@pytest.mark.parametrize("force", [[], ["--force-conflicts"]])
@pytest.mark.parametrize(
    ("metadata", "needle"),
    [
        ({"annotations": 5}, "metadata.annotations is a number, not a map of strings"),
        ({"labels": {"a": 1}}, "metadata.labels['a'] is a number, not a string"),
        ({"finalizers": ["x", 2]}, "metadata.finalizers[1] is a number, not a string"),
        ({"managedFields": [entry(fieldsV1={"f:data": {"r:x": {}}})]}, "unknown key 'r:x'"),
    ],
)
def test_bad_live_objects_of_conflicts(tmp_path: Path, force: list[str], metadata: dict[str, Any],
                                       needle: str) -> None:
    """``metadata.annotations: 5`` in a --live object was an internal error with --force-conflicts."""
    live = write(tmp_path, "live.json", config_map({"managedFields": [entry()], **metadata}))
    manifest = write(tmp_path, "m.json", config_map({}, value="2"))
    r = run("conflicts", "-f", manifest, "--live", live, "--field-manager", "b", *force)
    assert r.code == 2, r.err
    assert "internal error" not in r.err and "Traceback" not in r.err
    assert r.err_lines == [
        f"error: {live}: document 1: ConfigMap default/c (v1): not an object as the API server returns it: {needle}"
        if "metadata" in needle else f"error: {live}: document 1: ConfigMap default/c (v1): managedFields[0] "
                                     f"(manager 'a'): {needle}, the API server never writes one (it drops such keys, "
                                     "and everything below them, when it reads managedFields), at fieldsV1 f:data",
        f"error: {manifest}: document 1: ConfigMap default/c (v1): cannot predict against the --live object "
        f"{live}: document 1",
    ]


def _secret_item(**type_meta: Any) -> dict[str, Any]:
    item = copy.deepcopy(SECRET_LIST["items"][0])  # type: ignore[index]
    return {**type_meta, **item}


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize(("doc", "readable"), [
    pytest.param({**SECRET_LIST, "items": [_secret_item(apiVersion="v1")]}, False, id="items-with-apiVersion-no-kind"),
    pytest.param({**SECRET_LIST, "items": [_secret_item(kind="Secret")]}, False, id="items-with-kind-no-apiVersion"),
    pytest.param({"kind": "List", "apiVersion": "v1", "items": [SECRET_LIST]}, True, id="List-holding-a-SecretList"),
    pytest.param({"kind": "List", "apiVersion": "v1", "items": [
        {"kind": "List", "apiVersion": "v1", "items": [{**SECRET_LIST, "items": [_secret_item(apiVersion="v1")]}]}]},
        False, id="lists-in-lists"),
])
def test_no_secret_in_a_list_is_shown(tmp_path: Path, output: str, doc: dict[str, Any], readable: bool) -> None:
    """Issue 18, item 3. kubectl flattens lists inside lists (FlattenListVisitor), so a SecretList in a
    List holds Secrets. An item of a typed list takes the list's kind and apiVersion only when it has
    neither (apimachinery's unstructured decoder); with one of them kubectl refuses it ("Object 'Kind'
    is missing", quoting it whole), and the tool refuses it too — without quoting it."""
    f = write(tmp_path, "secrets.json", json.dumps(doc))
    r = run("show", "-i", f, "-o", output, "--show-unowned")
    assert "aHVudGVyMg==" not in r.out + r.err and "hunter2" not in r.out + r.err
    if readable:
        assert r.code == 0, r.err
        assert "<redacted>" in r.out
    else:
        assert r.code == 2, r.out + r.err
        assert "an item of a SecretList without " in r.err
