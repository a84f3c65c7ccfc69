"""The manifests the remedies check the next apply with (kubectl_fieldown.remedies.manifests)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.remedies.manifests import with_live_fields
from kubectl_fieldown.remedies.migration import MigrationError

LIVE: dict[str, Any] = {
    "apiVersion": "example.com/v2", "kind": "Multi", "metadata": {"name": "w", "labels": {"team": "pay"}},
    "spec": {"color": "teal", "finalizers": ["f3", "f1"],
             "containers": [{"name": "side", "image": "img:1", "env": [{"name": "B", "value": "1"}]},
                            {"name": "main", "image": "img:2"}]},
}


def paths(*texts: str) -> list[Any]:
    return [parse_path(t) for t in texts]


@pytest.mark.parametrize(("manifest_spec", "fields", "want_spec"), [
    # two fields of one item are one item (a hand-over of .image and .name used to append the item twice:
    # the server refuses a list-map with duplicate keys)
    ({"color": "red"}, ('.spec.containers[name="main"].image', '.spec.containers[name="main"].name'),
     {"color": "red", "containers": [{"name": "main", "image": "img:2"}]}),
    # an item the manifest has already gets the field, not a second copy
    ({"containers": [{"name": "main", "image": "img:9", "args": ["-v"]}]}, ('.spec.containers[name="main"].image',),
     {"containers": [{"name": "main", "image": "img:2", "args": ["-v"]}]}),
    # deeper: an env item under an item the manifest lacks
    ({}, ('.spec.containers[name="side"].env[name="B"].value',),
     {"containers": [{"name": "side", "env": [{"name": "B", "value": "1"}]}]}),
    # a whole item missing from the manifest comes as it is live; a set item once
    ({"finalizers": ["f3"]}, ('.spec.containers[name="side"]', '.spec.finalizers[="f3"]', '.spec.finalizers[="f1"]'),
     {"finalizers": ["f3", "f1"], "containers": [LIVE["spec"]["containers"][0]]}),
    ({"color": {"odd": 1}}, (".spec.color",), {"color": "teal"}),
])
def test_live_fields_join_the_manifest_item_by_item(manifest_spec: dict[str, Any], fields: tuple[str, ...],
                                                    want_spec: dict[str, Any]) -> None:
    m = {"apiVersion": "example.com/v2", "kind": "Multi", "metadata": {"name": "w"}, "spec": manifest_spec}
    out = with_live_fields(m, LIVE, paths(*fields))
    assert out["spec"] == want_spec
    assert m["spec"] == manifest_spec  # the caller's manifest is left as it was


def test_labels_join_the_metadata_and_a_missing_field_is_an_error() -> None:
    m = {"apiVersion": "example.com/v2", "kind": "Multi", "metadata": {"name": "w"}, "spec": {}}
    assert with_live_fields(m, LIVE, paths(".metadata.labels.team"))["metadata"] == {"name": "w",
                                                                                   "labels": {"team": "pay"}}
    with pytest.raises(MigrationError, match="not set on the object"):
        with_live_fields(m, LIVE, paths(".spec.replicas"))
