"""Hypothesis strategies for hostile input: objects, managedFields and FieldsV1 that are almost
right, text that is not quite YAML or JSON, and the names and values that broke the tool once
(issue 9: control characters, lone surrogates, NaN, deep nesting, aliases, unknown key types)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import strategies as st

NASTY_TEXT = ["", "a", "x\x1b[31m", "\x9b2J", "\x07", "é", "😀", "\ud800", "a\udfffb", "a.b", "app.kubernetes.io/name",
              "<x>&", '"', "\\", "\n", " ", "NaN", "null", "-0", "1e400", "0x1F", "yes", "~", "<<", "*a", "&a", "!!x"]
texts = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=8))
numbers = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, -1, 0.5, 2**53 + 1, 1e21]))
scalars: st.SearchStrategy[Any] = st.one_of(st.none(), st.booleans(), numbers, texts)
values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=10,
)

FIELD_KEYS = ["f:spec", "f:metadata", "f:data", "f:a", "f:a.b", "f:x:bogus", "x:bogus", "r:x", ".", "", "f:", "i:0",
              "i:-1", "i:x", "v:1", 'v:"a"', "v:[1,", "v:NaN", "v:1e400", 'k:{"name":"a"}', "k:null", "k:[1]",
              'k:{"a":[[[[1]]]]}', 'v:"\\ud800"', "f:\x1b[2J", "f:\ud800"]
field_keys = st.one_of(st.sampled_from(FIELD_KEYS), st.text(max_size=6))
fields_v1: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.just({}), st.none(), scalars),
    lambda inner: st.dictionaries(field_keys, inner, max_size=4),
    max_leaves=12,
)

entries = st.fixed_dictionaries(
    {},
    optional={
        "manager": st.one_of(texts, scalars),
        "operation": st.sampled_from(["Apply", "Update", "Patch", "", 5, None, ["Apply"]]),
        "apiVersion": st.sampled_from(["v1", "apps/v1", "example.com/v1", "", None, 3, ["v1"]]),
        "fieldsType": st.sampled_from(["FieldsV1", "", "FieldsV2", None, 3]),
        "fieldsV1": st.one_of(fields_v1, st.text(max_size=20), st.just('{"f:data":{"f:a":{}}}')),
        "time": st.one_of(st.sampled_from(["2024-01-01T00:00:00Z", "soon", "\x1b[1A"]), scalars),
        "subresource": st.one_of(st.sampled_from(["", "status", "scale"]), scalars, st.just([1])),
    },
)

KINDS = ["ConfigMap", "Secret", "SecretList", "List", "Deployment", "Widget", "", None, 5]


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    """Something shaped like a Kubernetes object, each part possibly wrong."""
    metadata = draw(st.one_of(
        st.fixed_dictionaries(
            {"name": st.one_of(texts, st.just("obj"))},
            optional={
                "namespace": st.one_of(st.just("default"), texts, scalars),
                "labels": st.one_of(st.dictionaries(texts, texts, max_size=2), scalars),
                "annotations": st.one_of(st.dictionaries(texts, st.one_of(texts, scalars), max_size=2), scalars),
                "finalizers": st.one_of(st.lists(texts, max_size=2), scalars),
                "managedFields": st.one_of(st.lists(st.one_of(entries, scalars), max_size=3), scalars),
            },
        ),
        scalars,
    ))
    obj: dict[str, Any] = {"apiVersion": draw(st.sampled_from(["v1", "apps/v1", "example.com/v1", "", 3])),
                           "kind": draw(st.sampled_from(KINDS)), "metadata": metadata}
    if draw(st.booleans()):
        obj["data"] = draw(st.one_of(st.dictionaries(texts, texts, max_size=3), values))
    if draw(st.booleans()):
        obj["spec"] = draw(values)
    if obj["kind"] in ("SecretList", "List"):
        obj = {"apiVersion": "v1", "kind": obj["kind"], "items": draw(st.lists(st.one_of(st.just(obj), scalars),
                                                                                  max_size=2))}
    return obj


SPEC_KEYS = ["a", "b.c", "x\x1b[31m", "é", "0", "k:{}", "replicas"]
MANAGERS = ["kubectl", "helm", "x\x1b[2J", "é", "kube-controller-manager"]


@st.composite
def owned_objects(draw: st.DrawFn) -> tuple[dict[str, Any], dict[tuple[str, str], set[str]]]:
    """A well-formed stored object whose managedFields own some of its fields (at least one field
    in at least one entry), and the expected owners of each owned leaf: ``{(section, key):
    {manager, ...}}`` for ``.spec.KEY`` and ``.metadata.labels.KEY`` — computed here from what was
    drawn, not by the product."""
    spec = draw(st.dictionaries(st.sampled_from(SPEC_KEYS), st.one_of(scalars, st.dictionaries(texts, texts,
                                                                                                  max_size=2)),
                                min_size=1, max_size=4))
    labels = draw(st.dictionaries(st.sampled_from(SPEC_KEYS), texts, max_size=3))
    leaves = [("spec", k) for k in spec] + [("labels", k) for k in labels]
    expected: dict[tuple[str, str], set[str]] = {}
    entries = []
    for i in range(draw(st.integers(1, 3))):
        manager = draw(st.sampled_from(MANAGERS))
        owned = draw(st.lists(st.sampled_from(leaves), min_size=1 if i == 0 else 0, unique=True))
        fields: dict[str, Any] = {}
        for section, key in owned:
            expected.setdefault((section, key), set()).add(manager)
            if section == "spec":
                fields.setdefault("f:spec", {})["f:" + key] = {}
            else:
                fields.setdefault("f:metadata", {}).setdefault("f:labels", {})["f:" + key] = {}
        entries.append({"manager": manager, "operation": draw(st.sampled_from(["Apply", "Update"])),
                        "apiVersion": "example.com/v1", "fieldsType": "FieldsV1", "fieldsV1": fields,
                        "time": "2024-01-01T00:00:00Z",
                        **({"subresource": "status"} if draw(st.booleans()) else {})})
    metadata: dict[str, Any] = {"name": "obj", "namespace": "default", "managedFields": entries}
    if labels:
        metadata["labels"] = labels
    return ({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata, "spec": spec}, expected)


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, default_flow_style=None)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Text for ``-i``/``--live``/``-f``: an object as JSON or YAML, maybe several, maybe mangled."""
    docs = draw(st.lists(objects(), min_size=1, max_size=2))
    try:
        as_yaml = "---\n".join(_yaml(d) for d in docs)
    except (yaml.YAMLError, UnicodeEncodeError):
        as_yaml = ""
    as_json = "\n---\n".join(json.dumps(d, ensure_ascii=draw(st.booleans())) for d in docs)
    text = draw(st.sampled_from([as_json, as_yaml])) or as_json
    mangle = draw(st.sampled_from(["none", "none", "truncate", "insert", "deep", "alias", "laughs"]))
    if mangle == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif mangle == "insert":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["[", "{", "}", "&a ", "*a", "!!binary ", "\t", ": ", "- ", "\\u"]))\
            + text[at:]
    elif mangle == "deep":
        n = draw(st.sampled_from([99, 100, 101, 500, 3000]))
        text = f"kind: A\nspec: {'[' * n}{']' * n}\n"
    elif mangle == "alias":
        text = "kind: A\nspec: &a {x: [1, 2]}\nmore: [*a, *a, {<<: *a, y: 1}]\n" + text.replace("kind:", "kind2:", 1)
    elif mangle == "laughs":
        levels = draw(st.integers(2, 9))
        lines = ["kind: A", "l0: &l0 [x, x, x, x, x, x, x, x, x]"]
        lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
        text = "\n".join(lines) + "\n"
    return text
