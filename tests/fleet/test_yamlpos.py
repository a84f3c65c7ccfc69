"""Positions of manifest fields (kubectl_fieldown.manifests.yamlpos): every key and item of the repository's
manifests is located on the line and column where it is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubectl_fieldown.fieldpath.element import field, index, key
from kubectl_fieldown.manifests.safeyaml import load_all
from kubectl_fieldown.manifests.yamlpos import document_positions, locate_path, locate_text

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted([*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("hack/lab/examples/*.yaml"),
                    *ROOT.glob("tests/**/*.yaml")])


def _walk(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out: list[tuple[tuple[Any, ...], Any]] = []
    stack = [(path, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(v, dict):
            for k, child in v.items():
                out.append(((*p, k), child))
                stack.append(((*p, k), child))
        elif isinstance(v, list):
            for i, child in enumerate(v):
                out.append(((*p, i), child))
                stack.append(((*p, i), child))
    return out


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_key_of_the_repository_manifests_is_on_its_line(path: Path) -> None:
    text = path.read_text()
    lines = text.splitlines()
    docs = list(load_all(text))
    positions = document_positions(text)
    assert len(positions) == len(docs)
    checked = 0
    for doc, pos in zip(docs, positions, strict=True):
        for p, _ in _walk(doc):
            if p not in pos.fields:
                # inside an alias: located at the alias (the deepest recorded field above it)
                above = next(p[:n] for n in range(len(p) - 1, 0, -1) if p[:n] in pos.fields)
                at = pos.fields[above]
                assert "*" in lines[at.line - 1], (p, at)
                continue
            at = pos.fields[p]
            rest = lines[at.line - 1][at.column - 1:]
            if isinstance(p[-1], str):
                # the key itself starts there (plain or quoted)
                assert rest.lstrip("\"'").startswith(p[-1]), (p, at, rest)
            else:
                # a list item: the line holds "- " before it, or it is inside [ ]
                before = lines[at.line - 1][: at.column - 1].rstrip()
                assert before.endswith(("-", "[", ",")), (p, at, before)
            checked += 1
    assert checked > 0


def test_documents_lists_and_flow_collections() -> None:
    text = "---\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n" \
           "  metadata: {name: a}\n  data:\n    x: '1'\n    'y.z': \"2\"\n"
    positions = document_positions(text)
    assert len(positions) == len(list(load_all(text))) == 2
    doc = list(load_all(text))[1]
    item = doc["items"][0]
    at = locate_text(item, positions[1], ".data.y.z", ("items", 0))
    assert (at.line, at.column) == (11, 5)
    at = locate_text(item, positions[1], ".metadata.name", ("items", 0))
    assert (at.line, at.column) == (8, 14)
    # not set by the manifest: its nearest enclosing field that is
    at = locate_text(item, positions[1], ".data.nope", ("items", 0))
    assert (at.line, at.column) == (9, 3)


def test_keyed_and_set_list_items() -> None:
    text = ("spec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    image: y\n"
            "  finalizers: [p, q]\n")
    doc = next(iter(load_all(text)))
    pos = document_positions(text)[0]
    at = locate_path(doc, pos, (field("spec"), field("containers"), key({"name": "b"}), field("image")))
    assert (at.line, at.column) == (6, 5)
    at = locate_path(doc, pos, (field("spec"), field("containers"), index(0)))
    assert (at.line, at.column) == (3, 5)


def test_a_complex_key_does_not_shift_the_fields_after_it() -> None:
    text = "? [x, y]\n: 1\nb: 2\n"
    pos = document_positions(text)[0]
    assert pos.fields[("b",)].line == 3


def test_invalid_yaml_gives_what_was_read_before() -> None:
    assert len(document_positions("a: 1\n---\nb: [\n")) == 1


def test_json_manifests_are_located_too() -> None:
    """``kubectl get -o json`` output: read by the json module, located by the YAML parser (JSON is
    YAML's flow style)."""
    import json

    obj = next(iter(load_all((ROOT / "examples" / "deployment.yaml").read_text())))
    text = json.dumps(obj, indent=2)
    lines = text.splitlines()
    pos = document_positions(text)
    assert len(pos) == 1
    at = locate_text(obj, pos[0], '.spec.template.spec.containers[name="web"].image')
    assert lines[at.line - 1][at.column - 1:].startswith('"image": "registry.example.com/shop/web:')
    for p, _ in _walk(obj):
        if isinstance(p[-1], str):
            at = pos[0].fields[p]
            assert lines[at.line - 1][at.column - 1:].startswith(json.dumps(p[-1])), p
