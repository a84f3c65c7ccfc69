"""Undo (kubectl_fieldown.remedies.restore): the backup document and the plan that puts ownership back."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.managedfields import decode_entries
from kubectl_fieldown.remedies.plans import MigrationError, entries_differ, plan_to_server_side
from kubectl_fieldown.remedies.requests import requests_for, simulate_requests
from kubectl_fieldown.remedies.restore import BackupError, backup_document, plan_restore, read_backup_document

from .states import NOW, RULES, client_side_created, labelled, scaled

RESOURCE = {"group": "example.com", "version": "v1", "resource": "widgets", "kind": "Widget", "namespaced": True}


def migrated() -> tuple[dict[str, Any], dict[str, Any], Any]:
    before = scaled(client_side_created(), 7)
    m = plan_to_server_side(before, RULES.root)
    after = simulate_requests(before, requests_for(m), RULES, now=NOW)
    doc = json.loads(json.dumps(backup_document(before, RESOURCE, {"command": "migrate"}, m)))
    return before, after, read_backup_document(doc, "b.json")


def restored(live: dict[str, Any], content: Any, **kw: Any) -> dict[str, Any]:
    return simulate_requests(live, requests_for(plan_restore(live, content, **kw)), RULES, now=NOW)


def test_undo_puts_back_exactly_what_the_write_changed() -> None:
    before, after, content = migrated()
    out = restored(after, content)
    assert not entries_differ(decode_entries(out["metadata"]["managedFields"]),
                              decode_entries(before["metadata"]["managedFields"]))
    assert out["metadata"]["annotations"] == before["metadata"]["annotations"]
    # and a second undo changes nothing
    assert not plan_restore(out, content).changed


def test_undo_refuses_by_default_when_managers_wrote_after_the_backup_and_keeps_them_with_force() -> None:
    _, after, content = migrated()
    later = labelled(after, "team", "payments")
    with pytest.raises(MigrationError, match=r"after the backup \(kubectl-label \(Update\)\)"):
        plan_restore(later, content)
    out = restored(later, content, force=True)
    owners = {e.manager: e for e in decode_entries(out["metadata"]["managedFields"])}
    assert set(owners) == {"kubectl", "kubectl-client-side-apply", "kubectl-label"}
    assert owners["kubectl"].subresource == "scale"  # the scaler's entry, as before


def test_undo_never_restores_ownership_of_a_field_that_is_gone() -> None:
    before, after, content = migrated()
    gone = copy.deepcopy(after)
    del gone["spec"]["color"]
    m = plan_restore(gone, content)
    color = parse_path(".spec.color")
    assert any(e.fields.has(color) for e in decode_entries(before["metadata"]["managedFields"]))
    assert not any(e.fields.has(color) for e in m.after)


def test_an_edited_backup_and_a_backup_without_uid_are_refused() -> None:
    before, _, _ = migrated()
    doc = backup_document(before, RESOURCE, {}, None)
    doc["object"]["spec"]["color"] = "edited"
    with pytest.raises(BackupError, match="changed after it was written"):
        read_backup_document(doc, "b.json")
    blank = json.loads(json.dumps(backup_document(before, RESOURCE, {}, None)))
    blank["object"]["metadata"]["uid"] = ""
    blank["uid"] = ""
    from kubectl_fieldown.remedies import restore

    blank["sha256"] = restore._digest(blank)  # even with a matching digest
    with pytest.raises(BackupError, match="names no uid"):
        read_backup_document(blank, "b.json")


def test_a_backup_of_another_object_is_refused() -> None:
    _, after, content = migrated()
    other = copy.deepcopy(after)
    other["metadata"]["uid"] = "another"
    with pytest.raises(MigrationError, match="is not the object that was saved"):
        plan_restore(other, content)


def test_undo_brings_the_annotation_back_with_its_owner() -> None:
    before = client_side_created()
    m = plan_to_server_side(before, RULES.root, target="flux")  # drops the annotation
    after = simulate_requests(before, requests_for(m), RULES, now=NOW)
    assert "annotations" not in after["metadata"]
    content = read_backup_document(json.loads(json.dumps(backup_document(before, RESOURCE, {}, m))), "b.json")
    out = restored(after, content)
    assert out["metadata"]["annotations"] == before["metadata"]["annotations"]
    assert not entries_differ(decode_entries(out["metadata"]["managedFields"]),
                              decode_entries(before["metadata"]["managedFields"]))
