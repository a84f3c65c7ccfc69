"""kubectl_fieldown.cli.files: reading objects from files, directories and stdin (the text read as
kubectl reads it: kubectl_fieldown.manifests.sources)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kubectl_fieldown.cli import files
from kubectl_fieldown.cli.files import load_sources, read_objects
from kubectl_fieldown.manifests.sources import SourceError


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_yaml_multi_document_with_empty_documents(tmp_path: Path) -> None:
    f = write(tmp_path / "m.yaml", "---\nkind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b}\n...\n")
    docs = read_objects(f)
    assert [(d.obj["kind"], d.document, d.item) for d in docs] == [("A", 1, None), ("B", 3, None)]
    assert docs[1].where == f"{f}: document 3"


def test_json_single_document_and_json_stream(tmp_path: Path) -> None:
    f = write(tmp_path / "o.json", json.dumps({"kind": "A", "spec": {"n": 1, "f": 1.5, "big": 2**63}}, indent=2))
    (doc,) = read_objects(f)
    # beyond int64, kubectl passes on the nearest float64, written in full by Go
    assert doc.obj["spec"] == {"n": 1, "f": 1.5, "big": 9223372036854776000}
    assert type(doc.obj["spec"]["n"]) is int
    g = write(tmp_path / "s.json", '{"kind": "A"}\n---\n{"kind": "B"}\n')
    assert [d.obj["kind"] for d in read_objects(g)] == ["A", "B"]


def test_ints_stay_ints_and_timestamps_stay_strings(tmp_path: Path) -> None:
    f = write(tmp_path / "t.yaml", "kind: A\nmetadata:\n  creationTimestamp: 2024-01-02T03:04:05Z\n"
                                   "spec:\n  replicas: 3\n  ratio: 0.5\n  date: 2024-01-02\n  on: yes\n")
    (doc,) = read_objects(f)
    assert doc.obj["metadata"]["creationTimestamp"] == "2024-01-02T03:04:05Z"
    assert doc.obj["spec"]["date"] == "2024-01-02"
    assert doc.obj["spec"]["replicas"] == 3 and type(doc.obj["spec"]["replicas"]) is int
    assert doc.obj["spec"]["ratio"] == 0.5
    # YAML 1.1 booleans, as sigs.k8s.io/yaml reads them; keys become strings
    assert doc.obj["spec"]["true"] is True


def test_non_string_keys_become_strings(tmp_path: Path) -> None:
    f = write(tmp_path / "k.yaml", "kind: A\ndata:\n  1: one\n  2.5: x\n  on: o\n")
    (doc,) = read_objects(f)
    assert doc.obj["data"] == {"1": "one", "2.5": "x", "true": "o"}


def test_kind_list_and_typed_lists(tmp_path: Path) -> None:
    items = [{"kind": "Widget", "metadata": {"name": "a"}}, {"kind": "Widget", "metadata": {"name": "b"}}]
    f = write(tmp_path / "l.yaml", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    docs = read_objects(f)
    assert [(d.obj["metadata"]["name"], d.document, d.item) for d in docs] == [("a", 1, 1), ("b", 1, 2)]
    assert docs[1].where == f"{f}: document 1, item 2"
    g = write(tmp_path / "w.yaml", json.dumps({"apiVersion": "example.com/v1", "kind": "WidgetList", "items": items}))
    assert len(read_objects(g)) == 2
    # a kind that merely ends in "List" but has no items list is an object
    h = write(tmp_path / "x.yaml", "kind: AccessList\nspec: {items: 3}\n")
    assert read_objects(h)[0].obj["kind"] == "AccessList"


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("kind: A\n---\nkind: B\n"))
    docs = read_objects("-")
    assert [d.source for d in docs] == ["<stdin>", "<stdin>"]
    assert [d.obj["kind"] for d in docs] == ["A", "B"]


def test_directories_flat_unless_recursive(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", "kind: B\n")
    write(tmp_path / "a.json", '{"kind": "A"}')
    write(tmp_path / "c.yml", "kind: C\n")
    write(tmp_path / "notes.txt", "kind: Ignored\n")
    write(tmp_path / "sub" / "d.yaml", "kind: D\n")
    assert [d.obj["kind"] for d in read_objects(str(tmp_path))] == ["A", "B", "C"]
    assert [d.obj["kind"] for d in read_objects(str(tmp_path), recursive=True)] == ["A", "B", "C", "D"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: A\n---\n- 1\n", "document 2: not an object (a list)"),
        ("kind: A\n---\n42\n", "document 2: not an object (a number)"),
        ("true\n", "document 1: not an object (a bool)"),
        ("kind: [\n", "document 1: invalid YAML"),
        ("a: b\n  c: d\n", "document 1: invalid YAML"),
        # the error is in the text after document 3, where a 4th would start
        ("kind: A\n---\nkind: B\n---\n a: b\nc\n", "document 4: invalid YAML: did not find expected <document start>"),
        ('{"kind": "A"', "document 1: invalid YAML"),
    ],
)
def test_errors_name_file_and_document(tmp_path: Path, text: str, message: str) -> None:
    f = write(tmp_path / "bad.yaml", text)
    with pytest.raises(SourceError) as e:
        read_objects(f)
    assert str(e.value).startswith(f"{f}: {message}")
    assert "\n" not in str(e.value)


def test_errors_do_not_hide_good_documents(tmp_path: Path) -> None:
    f = write(tmp_path / "mixed.yaml", "kind: A\n---\n[1]\n---\nkind: C\n")
    result = load_sources(f)
    assert [d.obj["kind"] for d in result.documents] == ["A", "C"]
    assert [str(e) for e in result.errors] == [f"{f}: document 2: not an object (a list)"]


def test_unreadable_inputs(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="No such file or directory"):
        read_objects(str(tmp_path / "missing.yaml"))
    (tmp_path / "latin1.yaml").write_bytes(b"kind: \xff\n")
    with pytest.raises(SourceError, match="not UTF-8"):
        read_objects(str(tmp_path / "latin1.yaml"))




def test_stdin_is_read_in_bytes_when_it_can_be(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 10)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("kind: é\n# more\n".encode())))
    with pytest.raises(SourceError, match="<stdin>: more than 10 bytes: refused"):
        read_objects("-")
    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 1000)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("kind: é\n".encode())))
    assert read_objects("-")[0].obj == {"kind": "é"}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"kind: \xff\n")))
    with pytest.raises(SourceError, match="<stdin>: not UTF-8 text"):
        read_objects("-")


def test_typed_list_items_get_kind_and_api_version_as_client_go_gives_them(tmp_path: Path) -> None:
    doc = {"kind": "WidgetList", "apiVersion": "example.com/v1", "items": [
        {"metadata": {"name": "a"}}, {"kind": "Gadget", "metadata": {"name": "b"}}, {"apiVersion": "x/v1"}]}
    f = write(tmp_path / "w.json", json.dumps(doc))
    objs = [d.obj for d in read_objects(f)]
    assert objs[0] == {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}}
    assert objs[1] == {"kind": "Gadget", "metadata": {"name": "b"}}  # only when both are missing
    assert objs[2] == {"apiVersion": "x/v1"}
    g = write(tmp_path / "l.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": [{"metadata": {}}]}))
    assert read_objects(g)[0].obj == {"metadata": {}}
