"""kubectl_fieldown.manifests.sources: the documents read from text."""

from __future__ import annotations

from kubectl_fieldown.manifests.sources import InputDocument


def test_input_document_is_a_dataclass() -> None:
    d = InputDocument("f.yaml", 2, {"kind": "A"}, 3)
    assert d.where == "f.yaml: document 2, item 3"
