"""Manifests are read exactly as kubectl reads them (issue 18, item 12).

kubectl turns YAML into JSON with sigs.k8s.io/yaml (go-yaml v2: YAML 1.1-ish, but not PyYAML's
YAML 1.1) and the API machinery reads that JSON back (whole-number floats become integers,
integers beyond int64 floats). Every form below is given to the lab's real kubectl
(``create --dry-run=client -o json``, what ``apply`` sends) and to our reader, and both must give
the same JSON value, with the same JSON types: ``1`` is not ``1.0`` and ``true`` is not ``1``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import lab
import pytest

from kubectl_fieldown.manifests.sources import parse_text

# --- the forms -----------------------------------------------------------------------------------

INTS = [
    "0", "-0", "+0", "1", "+1", "-1", "007", "017", "018", "08", "0o10", "0O10", "0o18", "0x1F", "0X1f",
    "-0x1F", "+0x1F", "0x", "0b101", "-0b101", "+0b101", "0B11", "0b102", "1_000", "1__0", "_1", "1_", "0x_1F",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "99999999999999999999", "123456789012345678901234567890",
    "0x8000000000000000", "0xFFFFFFFFFFFFFFFF", "0x10000000000000000", "-0b" + "1" * 63, "-0b1" + "0" * 63,
    "-0b1" + "0" * 64,
    "9007199254740993", "12345678901234567890123",
]
FLOATS = [
    "1.0", "1.", ".5", "+.5", "-.5", "1.5", "1e3", "1E3", "12e03", "1e+3", "1e-3", "1.0e3", "6.8523015e+5",
    "685.230_15e+03", "1e21", "1e20", "1.2345678901234567e20", "1e-7", "1e-6", "0.000001", "1e308", "1e309",
    "1e999", "-1e999", "1e-400", "-1e-400", "-0.0", "0.0", "0.1", "3.14159265358979323846", "._5", ".5_0", ".e5",
    ".", "1.5.5", "0x1p3", "1_0.5", "1e", "e3", "1e3.5", "+", "+-1", "0.5e-3", "5e-324", "2e-324",
]
SEXAGESIMAL = ["12:30", "1:30:00", "190:20:30.15", "-1:30", "12:3a"]
SPECIAL = [".iNf", "inf", "nan", "Infinity", "-Infinity", "NaN", "+inf", ".Nan"]
BOOLS = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
    "FALSE", "on", "On", "ON", "off", "Off", "OFF", "tRUE", "yES", "oN", "oFF", "t", "f",
]
NULLS = ["~", "null", "Null", "NULL", "nULL", "", "''", '""']
TIMESTAMPS = [
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-14T21:59:43Z",
    "2001-13-01", "2001-1-2", "20011-12-14", "2001-12-14 21:59:43.10",
]
TAGGED = [
    "!!str 12", "!!str yes", "!!str ~", '!!int "7"', "!!int 0x10", "!!int 017", '!!float "2"', "!!float 1",
    "!!float 1e3", '!!bool "yes"', "!!bool off", '!!null ""', "!!null ~", "!!null null", "!Ref x", "! 12", "! yes",
    "!custom 1e3", "!!timestamp 2001-12-14", "!!timestamp 2001-12-14 21:59:43.10", "!!binary aGVsbG8=",
    '!!binary "/w=="', '!!binary "4oI="', '!!binary "7aCA"', "!!binary |\n      aGVs\n      bG8=",
    "!!str", "!!map x", "!!seq 1", "!!set 1", "!!merge <<", "!!value =", "!<tag:yaml.org,2002:int> 12",
    "!!float 0x1F", "!!int +12",
]
QUOTED = [
    "'1e3'", '"yes"', '"0x1F"', "'~'", '"null"', "'12:30'", '"1.0"', "|\n      1e3", ">-\n      yes",
    "'<<'", "<<", "=", '"\\u00e9"', "'2001-12-14'",
]
COLLECTIONS = [
    "{a: 1, <<: {a: 2, b: 3}, b: 4}",
    "{<<: [{a: 1}, {a: 2, z: 0}]}",
    "{<<: {a: 1}, <<: {a: 2}}",
    "[&x {a: 1, b: 2}, {<<: *x, b: 3}, {b: 3, <<: *x}]",
    "{!!merge <<: {a: 1}}",
    '{"<<": {a: 1}}',
    "{'<<': 1}",
    "{<<: {}}",
    "{<<: [], a: 1}",
    "[&a 1e3, *a, {*a : x}]",
    "[&k on, {*k : v}]",
    "{<<: {<<: {a: 1}, b: 2}, c: 3}",
    "{a: 1, a: 2}",
    "!!set {a, b}",
    "!!omap [a: 1, b: 2]",
    "!!seq [1, 2]",
    "!custom {a: 1}",
]
VALUE_FORMS = INTS + FLOATS + SEXAGESIMAL + SPECIAL + BOOLS + NULLS + TIMESTAMPS + TAGGED + QUOTED + COLLECTIONS

KEY_FORMS = [
    "on", "y", "Y", "n", "yes", "No", "off", "OFF", "true", "FALSE", "018", "08", "1.0", "1e3", "12e03", "0x1F",
    "0o10", "1_000", "1.5", "0.1", "3.14159265358979", "1e6", "123456", "1234567", "1e-7", "0.0001", "0.00001",
    "1e39", "-1e39", "16777217", "1e38", ".inf", "-.inf", ".nan", "-0.0", "9223372036854775807",
    "-9223372036854775808", "99999999999999999999", "12:30", "2001-12-14", "!!binary aGVsbG8=", "'1e3'", '"on"',
    "!!str 1", "!!float 1", "!Ref 1", "a", "''", "1", "-1", "+1",
]

# refused by kubectl; our reader must refuse them too
ERROR_VALUES = [
    ".inf", ".Inf", ".INF", "+.inf", "-.inf", "-.INF", ".nan", ".NaN", ".NAN", "!!int 1.5", "!!int abc",
    "!!bool 1", "!!null x", '!!binary "!!!"', "!!binary aGVsbG8", "!!timestamp foo", "!!timestamp 2001-13-01",
    "!!timestamp 2001-02-29", "!!timestamp 2001-12-14 24:00:00", "!!timestamp 2001-12-14 21:59:43.10 -5",
    "!!timestamp 2001-12-14T21:59:43", "!!float 1e999", "!!int 1e3",
    "!!float yes", "!!int 9223372036854775808.5", "{<<: 1}", "{<<: [1]}", "{<<: ~}",
    "[&l [{a: 1}], {<<: *l}]", "-", "{? [1] : x}", "{? {a: 1} : x}", "!!float .nan",
]
ERROR_KEYS = ["~", "null", "", "18446744073709551615", "9223372036854775808", "!!null x"]


def _doc(i: int, body: str) -> str:
    return f"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: f{i}\nspec:\n  config:\n{body}\n"


def value_doc(i: int, form: str) -> str:
    return _doc(i, f"    v: {form}")


def key_doc(i: int, form: str) -> str:
    return _doc(i, f"    {form}: k")


# --- the two readers -----------------------------------------------------------------------------


class KubectlRefused(Exception):
    """kubectl could not read the file (its stderr is the message)."""


def kubectl_reads(cluster: lab.Cluster, path: Path) -> Any:
    """What kubectl sends for ``path``: the objects of ``create --dry-run=client -o json`` (the same
    decoding as apply; --validate=false because it is the reading that is compared, not a schema)."""
    proc = cluster.kubectl("create", "--dry-run=client", "--validate=false", "-o", "json", "-f", str(path),
                           check=False)
    if proc.returncode != 0:
        raise KubectlRefused(proc.stderr.strip())
    objs: list[Any] = []
    decoder, text, at = json.JSONDecoder(), proc.stdout, 0
    while text[at:].strip():  # one JSON object per document, one after the other
        obj, at = decoder.raw_decode(text, len(text) - len(text[at:].lstrip()))
        objs.extend(obj["items"] if obj.get("kind") == "List" else [obj])
    return objs


def we_read(text: str) -> Any:
    result = parse_text("x.yaml", text)
    if result.errors:
        return None
    return [d.obj for d in result.documents]


def typed(v: Any) -> Any:
    """``v`` with each scalar tagged by its JSON type, so that 1 == 1.0 == True no longer holds."""
    if isinstance(v, dict):
        return {k: typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [typed(x) for x in v]
    return (type(v).__name__, v)


def configs(objs: list[dict[str, Any]]) -> list[Any]:
    return [typed(o["spec"]["config"]) for o in objs]


def _compare(cluster: lab.Cluster, tmp_path: Path, forms: list[str], make: Any) -> None:
    text = "---\n".join(make(i, f) for i, f in enumerate(forms))
    path = tmp_path / "forms.yaml"
    path.write_text(text)
    theirs = kubectl_reads(cluster, path)
    ours = we_read(text)
    assert ours is not None, parse_text("x.yaml", text).errors
    assert len(ours) == len(theirs) == len(forms)
    differ = [(f, t, o) for f, t, o in zip(forms, configs(theirs), configs(ours), strict=True) if t != o]
    assert not differ, "\n".join(f"{f!r}: kubectl {t}, we {o}" for f, t, o in differ)


# --- tests -----------------------------------------------------------------------------------------


def test_every_scalar_and_collection_form_reads_as_in_kubectl(cluster: lab.Cluster, tmp_path: Path) -> None:
    _compare(cluster, tmp_path, VALUE_FORMS, value_doc)


def test_every_key_form_reads_as_in_kubectl(cluster: lab.Cluster, tmp_path: Path) -> None:
    _compare(cluster, tmp_path, KEY_FORMS, key_doc)


def test_generated_plain_scalars_read_as_in_kubectl(cluster: lab.Cluster, tmp_path: Path) -> None:
    """Every plain scalar of up to three characters of the alphabet that decides go-yaml's number rules
    (digits, signs, the dot, exponents, base prefixes, underscores, colons), as values and as keys."""
    alphabet = "01789+-._eExobO:"
    every = [f for n in (1, 2, 3) for f in map("".join, itertools.product(alphabet, repeat=n))]
    for make in (value_doc, key_doc):
        forms = [f for f in every if we_read(make(0, f)) is not None]
        assert len(forms) > 4000
        _compare(cluster, tmp_path, forms, make)
        # those we refuse (YAML indicators: "-" alone, a ":" before the end of the line): kubectl too.
        # One file each, all in one directory: kubectl reads every file and prints those it can read.
        refused = sorted(set(every) - set(forms))
        bad = tmp_path / f"bad-{make.__name__}"
        bad.mkdir()
        for i, f in enumerate(refused):
            (bad / f"{i}.yaml").write_text(make(i, f))
        proc = cluster.kubectl("create", "--dry-run=client", "--validate=false", "-o", "name", "-f", str(bad),
                               check=False)
        accepted = [refused[int(line.rsplit("/f", 1)[1])] for line in proc.stdout.split()]
        assert proc.returncode != 0 and not accepted, f"kubectl reads what we refuse: {accepted}"


@pytest.mark.parametrize("form", ERROR_VALUES)
def test_values_kubectl_refuses_are_refused(cluster: lab.Cluster, tmp_path: Path, form: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(value_doc(0, form))
    with pytest.raises(KubectlRefused):
        kubectl_reads(cluster, path)
    assert we_read(value_doc(0, form)) is None, f"we accept {form!r}"


@pytest.mark.parametrize("form", ERROR_KEYS)
def test_keys_kubectl_refuses_are_refused(cluster: lab.Cluster, tmp_path: Path, form: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(key_doc(0, form))
    with pytest.raises(KubectlRefused):
        kubectl_reads(cluster, path)
    assert we_read(key_doc(0, form)) is None, f"we accept the key {form!r}"


def test_json_numbers_read_as_in_kubectl(cluster: lab.Cluster, tmp_path: Path) -> None:
    """A JSON manifest: whole-number floats reach the server as integers, integers beyond int64 as floats."""
    numbers = ["1.0", "1e3", "1E2", "-0", "-0.0", "0.1", "1.5e300", "1e21", "1e-7", "18446744073709551615",
               "9223372036854775807", "9223372036854775808", "-9223372036854775809", "12345678901234567890123",
               "1.2345678901234567e20", "100000000000000000000"]
    differ = []
    for i, n in enumerate(numbers):  # one JSON document per file, the common case
        text = _JSON_OBJ.format(i=i, n=n)
        path = tmp_path / "number.json"
        path.write_text(text)
        theirs, ours = configs(kubectl_reads(cluster, path)), configs(we_read(text))
        if theirs != ours:
            differ.append(f"{n}: kubectl {theirs}, we {ours}")
    assert not differ, "\n".join(differ)


_JSON_OBJ = ('{{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {{"name": "f{i}"}}, '
             '"spec": {{"config": {{"v": {n}}}}}}}')


def test_replicas_1e3_is_an_integer() -> None:
    """The case of the issue: ``replicas: 1e3`` is the integer 1000 that kubectl sends, not a float."""
    (obj,) = we_read("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 1e3}\n")
    assert obj["spec"]["replicas"] == 1000 and type(obj["spec"]["replicas"]) is int


def test_conflicts_of_yaml_numbers_predicts_what_kubectl_apply_does(
        cluster: lab.Cluster, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``replicas: 1e3`` was a float for us, so ``conflicts -f`` predicted the server's refusal of a
    float for an integer field while kubectl's apply succeeds (it sends 1000)."""
    from cli_helpers import run

    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    manifest = tmp_path / "w.yaml"
    manifest.write_text(f"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: {namespace}\n"
                        "spec:\n  replicas: 1e3\n  config:\n    on: 018\n    y: 1.0\n    x: 0o10\n")
    r = run("conflicts", "-f", str(manifest), "--field-manager", "bob", "--server-dry-run", "-o", "json",
            "--kubeconfig", str(cluster.kubeconfig))
    assert r.code == 0, r.out + r.err  # (with --server-dry-run: no conflict, no error, the server agrees)
    predicted = r.item()["result"]["object"]["spec"]
    cluster.kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(manifest))
    live = cluster.kubectl_json("get", "widget", "w", "-n", namespace)["spec"]
    # (y: is the key true too, and the later one)
    assert typed(predicted) == typed(live) == typed({"replicas": 1000, "config": {"true": 1, "x": 8}})
