"""Undo (kubectl_fieldown.remedies.restore): the backup document and the plan that puts ownership back."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubectl_fieldown.fieldmanager import simulate_apply
from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.ownership.managedfields import decode_entries
from kubectl_fieldown.remedies.plans import MigrationError, entries_differ, plan_strip_last_applied, plan_to_server_side
from kubectl_fieldown.remedies.requests import requests_for, simulate_requests
from kubectl_fieldown.remedies.restore import (
    BackupError,
    Saved,
    backup_document,
    plan_restore,
    plan_undo,
    read_backup_document,
    written_record,
)

from .states import NOW, RULES, client_side_created, labelled, manifest, scaled

LA = "kubectl.kubernetes.io/last-applied-configuration"

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
    with pytest.raises(MigrationError, match=r"written after the backup: kubectl-label \(Update\) was added; "):
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


# --- the record of the write: later writers, the tool's own later writes ------------------------------


def _with_rv(obj: dict[str, Any], rv: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["resourceVersion"] = rv
    return out


def _content(before: dict[str, Any], m: Any, after: dict[str, Any], writes: list[tuple[str, str]],
             command: str = "migrate") -> Any:
    doc = backup_document(before, RESOURCE, {"command": command, "takenAt": NOW}, m,
                          written_record(writes, after, True))
    return read_backup_document(json.loads(json.dumps(doc)), f"{command}.json")


def written_migration() -> tuple[dict[str, Any], dict[str, Any], Any]:
    before = scaled(client_side_created(), 7)
    m = plan_to_server_side(before, RULES.root)
    after = _with_rv(simulate_requests(before, requests_for(m), RULES, now=NOW), "2")
    return before, after, _content(before, m, after, [("1", "2")])


def test_a_later_write_is_found_from_the_recorded_resource_version_and_named() -> None:
    before, after, content = written_migration()
    assert content.written is not None and content.written.resource_version == "2"
    out = restored(after, content)  # nothing wrote since: the original, whole
    assert not entries_differ(decode_entries(out["metadata"]["managedFields"]),
                              decode_entries(before["metadata"]["managedFields"]))
    assert out["metadata"]["annotations"] == before["metadata"]["annotations"]
    # the new owner applies again later and changes a value: its field set stays, its time does not
    new_owner = "kubectl"
    later = _with_rv(simulate_apply(after, manifest(color="red", replicas=None), new_owner, RULES,
                                    now="2026-11-24T11:00:00Z").object, "3")
    with pytest.raises(MigrationError, match=rf"^written after the backup \(resourceVersion 2 -> 3\): "
                                             rf"{new_owner} \(Apply\) wrote at 2026-11-24T11:00:00Z; "
                                             rf".*{new_owner} \(Apply\) changed .spec.color; .*--force"):
        plan_restore(later, content)
    # in the same second as the tool's write, the value it changed still names it
    same_second = _with_rv(simulate_apply(after, manifest(color="red", replicas=None), new_owner, RULES,
                                          now=NOW).object, "3")
    with pytest.raises(MigrationError, match=rf"\(resourceVersion 2 -> 3\): .*{new_owner} \(Apply\) changed "
                                             r"\.spec\.color; restoring"):
        plan_restore(same_second, content)
    # --force: the later writer keeps all it holds, nobody older gets any of it back
    m = plan_restore(later, content, force=True)
    assert any(n.startswith("not restored: what was written after the backup (resourceVersion 2 -> 3) stays")
               and f"{new_owner} (Apply) wrote at" in n for n in m.notes)
    kept = next(e for e in m.after if e.manager == new_owner and e.operation == "Apply")
    assert kept.fields == next(e for e in decode_entries(later["metadata"]["managedFields"])
                               if e.manager == new_owner and e.operation == "Apply").fields
    for e in m.after:
        if e is not kept:
            assert e.fields.intersection(kept.fields).is_empty(), e.manager
    # a write that changed no ownership is still a write after the backup
    with pytest.raises(MigrationError, match=r"resourceVersion 2 -> 9\): no managedFields entry"):
        plan_restore(_with_rv(after, "9"), content)


def test_another_writer_between_two_requests_of_the_tool_is_refused_even_with_force() -> None:
    before, after, _ = written_migration()
    m = plan_to_server_side(before, RULES.root)
    content = _content(before, m, _with_rv(after, "4"), [("1", "2"), ("3", "4")])
    with pytest.raises(MigrationError, match=r"while this tool was writing it \(resourceVersion 2 -> 3"):
        plan_restore(_with_rv(after, "4"), content, force=True)


def test_two_writes_of_the_tool_give_back_the_original_together_and_name_the_newer_alone() -> None:
    before, first_after, first = written_migration()
    m2 = plan_strip_last_applied(first_after, [parse_path(".spec.color")])
    second_after = _with_rv(simulate_requests(first_after, requests_for(m2), RULES, now=NOW), "3")
    assert second_after["metadata"]["annotations"] != before["metadata"]["annotations"]
    second = _content(first_after, m2, second_after, [("2", "3")], command="strip-last-applied")
    for named in ([Saved("1", first), Saved("2", second)], [Saved("2", second), Saved("1", first)]):
        m = plan_undo(second_after, named)
        out = simulate_requests(second_after, requests_for(m), RULES, now=NOW)
        assert not entries_differ(decode_entries(out["metadata"]["managedFields"]),
                                  decode_entries(before["metadata"]["managedFields"]))
        assert out["metadata"]["annotations"] == before["metadata"]["annotations"]
    with pytest.raises(MigrationError, match=r"by this tool: strip-last-applied \(2\); undo that first"):
        plan_undo(second_after, [Saved("1", first)], [Saved("2", second, named=False)])
    forced = plan_undo(second_after, [Saved("1", first)], [Saved("2", second, named=False)], force=True)
    assert forced.last_applied_after == before["metadata"]["annotations"][LA]


def test_an_interrupted_write_whose_ownership_is_the_plan_counts_as_the_tools() -> None:
    before, after, _ = written_migration()
    m = plan_to_server_side(before, RULES.root)
    doc = backup_document(before, RESOURCE, {"command": "migrate"}, m, written_record([], None, False))
    content = read_backup_document(json.loads(json.dumps(doc)), "b.json")
    m2 = plan_restore(_with_rv(after, "2"), content)
    assert any("interrupted before its record was complete" in n for n in m2.notes)
    assert not entries_differ(m2.after, decode_entries(before["metadata"]["managedFields"]))


def test_backups_named_together_across_another_writer_are_refused_naming_both() -> None:
    _, first_after, first = written_migration()
    foreign = _with_rv(labelled(first_after, "team", "payments"), "3")
    m2 = plan_strip_last_applied(foreign, [parse_path(".spec.color")])
    second_after = _with_rv(simulate_requests(foreign, requests_for(m2), RULES, now=NOW), "4")
    second = _content(foreign, m2, second_after, [("3", "4")], command="strip-last-applied")
    with pytest.raises(MigrationError, match=r"^written after the backup \(resourceVersion 2 -> 4\): kubectl-label "
                                             r"\(Update\) was added; .*then this tool's strip-last-applied \(2\); "):
        plan_undo(second_after, [Saved("1", first), Saved("2", second)])
    # --force: the other writer keeps its label, nobody else gets it
    m = plan_undo(second_after, [Saved("1", first), Saved("2", second)], force=True)
    team = parse_path(".metadata.labels.team")
    assert [e.manager for e in m.after if e.fields.has(team)] == ["kubectl-label"]
