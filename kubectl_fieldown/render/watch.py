"""Rendering ``watch``: one line (text) or one JSON document per change and per fight, and the summary.

The JSON documents are a contract (docs/watch.md): keys are only ever added, and ``version``
changes if that promise is ever broken. One document per line::

    {"kind": "FieldownChange", "version": 1, "time", "observed", "object", "resourceVersion", "path", "change",
     "old", "new", "writers", "owners", "ambiguous", "coalesced"}
    {"kind": "FieldownObject", "version": 1, "event", "time", "observed", "object", "resourceVersion",
     "writers", "coalesced"}
    {"kind": "FieldownFight", "version": 1, "object", "path", "flips", "writers", "remedy"}
    {"kind": "FieldownWatchSummary", "version": 1, "interrupted", "failed", "writes", "changes",
     "objects", "created", "deleted", "byWriter", "fights", "quietWrites"}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..base.objects import ObjectRef
from ..base.value import escape_controls
from ..fieldpath import Path, path_string
from ..fieldpath.lookup import MISSING
from ..watch.attribution import CREATED, FieldChange, Lifecycle, Write, Writer
from ..watch.fights import Churn, Fight, remedy

__all__ = ["FORMAT_VERSION", "Tally", "change_document", "change_line", "fight_document", "fight_lines",
           "lifecycle_document", "lifecycle_line", "summary_document", "summary_lines"]

FORMAT_VERSION = 1
_VALUE_WIDTH = 60
_FIELDS_SHOWN = 10  # per writer in the text summary


def _object(ref: ObjectRef) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.namespace:
        out["namespace"] = ref.namespace
    return out


def object_text(ref: ObjectRef) -> str:
    ns = f" -n {ref.namespace}" if ref.namespace else ""
    return escape_controls(f"{ref.resource_name}{ns}")


def value_text(v: Any) -> str:
    if v is MISSING:
        return "(absent)"
    text = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if len(text) > _VALUE_WIDTH:
        text = text[: _VALUE_WIDTH - 1] + "…"
    return escape_controls(text)


def _writers_text(c: FieldChange) -> str:
    if c.writer is not None:
        out = f"by {c.writer.label()}"
    elif c.writers:
        out = f"by {' or '.join(w.label() for w in c.writers)} (ambiguous: {c.ambiguous})"
    else:
        out = f"by an unknown writer ({c.ambiguous})"
    others = [w for w in c.owners if w not in c.writers]
    if others:
        out += f"; co-owned with {', '.join(w.label() for w in others)}"
    return escape_controls(out)


def change_line(write: Write, c: FieldChange, coalesced: bool, observed: str) -> str:
    """``observed``: when the watch saw the write, shown when no entry of the write has a time."""
    when = write.time or observed
    relisted = " [relisted: several writes seen as one]" if coalesced else ""
    return (f"{when}  {object_text(write.ref)}  {escape_controls(c.path_text)}: {value_text(c.old)} → "
            f"{value_text(c.new)}  {_writers_text(c)}{relisted}")


def change_document(write: Write, c: FieldChange, coalesced: bool, observed: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"kind": "FieldownChange", "version": FORMAT_VERSION, "time": write.time,
                           "observed": observed,
                           "object": _object(write.ref), "resourceVersion": write.resource_version,
                           "path": c.path_text, "change": c.change}
    if c.old is not MISSING:
        doc["old"] = c.old
    if c.new is not MISSING:
        doc["new"] = c.new
    doc.update({"writers": [w.to_json() for w in c.writers], "owners": [w.to_json() for w in c.owners],
                "ambiguous": c.ambiguous, "coalesced": coalesced})
    return doc


def lifecycle_line(o: Lifecycle, coalesced: bool, observed: str) -> str:
    """``... widget.example.com/d -n shop  created by kubectl-client-side-apply (Update)`` or ``... deleted``."""
    when = o.time or observed
    if o.event == CREATED:
        what = "created" + (f" by {', '.join(w.label() for w in o.writers)}" if o.writers else "")
        relisted = " [relisted: created while the watch was away; the writers may include later ones]"
    else:
        what = "deleted"
        relisted = " [relisted: deleted while the watch was away]"
    return escape_controls(f"{when}  {object_text(o.ref)}  {what}{relisted if coalesced else ''}")


def lifecycle_document(o: Lifecycle, coalesced: bool, observed: str) -> dict[str, Any]:
    return {"kind": "FieldownObject", "version": FORMAT_VERSION, "event": o.event, "time": o.time,
            "observed": observed, "object": _object(o.ref), "resourceVersion": o.resource_version,
            "writers": [w.to_json() for w in o.writers], "coalesced": coalesced}


def _fight_body(f: Fight) -> dict[str, Any]:
    r = remedy(f)
    return {"object": _object(f.ref), "path": f.path_text, "flips": f.flips,
            "writers": [{**fw.writer.to_json(), "value": None if fw.value is MISSING else fw.value,
                         "writes": fw.writes} for fw in f.writers],
            "remedy": {"text": r.text, "commands": list(r.commands)}}


def fight_document(f: Fight) -> dict[str, Any]:
    return {"kind": "FieldownFight", "version": FORMAT_VERSION, **_fight_body(f)}


def fight_lines(f: Fight) -> list[str]:
    who = ", ".join(f"{fw.writer.label()} sets {value_text(fw.value)} ({fw.writes}×)" for fw in f.writers)
    r = remedy(f)
    lines = [escape_controls(f"FIGHT {object_text(f.ref)}  {f.path_text}: {who}; {f.flips} flips"),
             escape_controls(f"  fix: {r.text}")]
    lines += [escape_controls(f"  run: {c}") for c in r.commands]
    return lines


@dataclass
class Tally:
    """What the summary counts: writes, changes per writer and field, objects seen changing."""

    writes: int = 0
    changes: int = 0
    created: int = 0
    deleted: int = 0
    objects: set[ObjectRef] = field(default_factory=set)
    by_writer: dict[Writer | None, dict[tuple[ObjectRef, Path], int]] = field(default_factory=dict)

    def count(self, write: Write) -> None:
        self.writes += 1
        if write.changes:
            self.objects.add(write.ref)
        for c in write.changes:
            self.changes += 1
            per = self.by_writer.setdefault(c.writer, {})
            per[(write.ref, c.path)] = per.get((write.ref, c.path), 0) + 1

    def count_lifecycle(self, o: Lifecycle) -> None:
        if o.event == CREATED:
            self.created += 1
        else:
            self.deleted += 1

    def _ordered(self) -> list[tuple[Writer | None, dict[tuple[ObjectRef, Path], int]]]:
        return sorted(self.by_writer.items(), key=lambda kv: (kv[0] is None, kv[0] or Writer("", "")))


def summary_document(t: Tally, fights: Sequence[Fight], churn: Sequence[Churn], *, interrupted: bool,
                     failed: str | None) -> dict[str, Any]:
    by_writer = []
    for w, per in t._ordered():
        by_writer.append({"writer": w.to_json() if w else None, "changes": sum(per.values()),
                          "fields": [{"object": _object(ref), "path": path_string(p), "changes": n}
                                     for (ref, p), n in per.items()]})
    return {"kind": "FieldownWatchSummary", "version": FORMAT_VERSION, "interrupted": interrupted,
            "failed": failed, "writes": t.writes, "changes": t.changes, "objects": len(t.objects),
            "created": t.created, "deleted": t.deleted, "byWriter": by_writer,
            "fights": [_fight_body(f) for f in fights],
            "quietWrites": [{"object": _object(c.ref), "writes": c.writes, "statusOnly": c.status_only,
                             "ownershipOnly": c.ownership_only, "writers": [w.to_json() for w in c.writers]}
                            for c in churn]}


def summary_lines(t: Tally, fights: Sequence[Fight], churn: Sequence[Churn], *, interrupted: bool) -> list[str]:
    s = "" if t.changes == 1 else "s"
    lines = ["", f"Summary{' (interrupted)' if interrupted else ''}: {t.changes} field change{s} in {t.writes} "
                 f"write{'' if t.writes == 1 else 's'} of {len(t.objects)} object{'' if len(t.objects) == 1 else 's'}"]
    if t.created or t.deleted:
        lines.append(f"Objects created: {t.created}, deleted: {t.deleted}")
    for w, per in t._ordered():
        name = w.label() if w else "ambiguous or unknown writers"
        shown = sorted(per.items(), key=lambda kv: -kv[1])[:_FIELDS_SHOWN]  # the most changed first
        fields = ", ".join(f"{object_text(ref)} {path_string(p)} ({n}×)" for (ref, p), n in shown)
        if len(per) > _FIELDS_SHOWN:
            fields += f" and {len(per) - _FIELDS_SHOWN} more fields (-o json lists them all)"
        lines.append(escape_controls(f"  {name}: {sum(per.values())} change{'' if sum(per.values()) == 1 else 's'}: "
                                     f"{fields}"))
    lines.append(f"Fights: {len(fights) or 'none'}")
    for f in fights:
        lines += ["  " + x for x in fight_lines(f)]
    if churn:
        lines.append("Rewritten without a field change outside .status:")
        for c in churn:
            lines.append(escape_controls(
                f"  {object_text(c.ref)}: {c.writes} writes ({c.status_only} status-only, {c.ownership_only} "
                f"ownership-only) by {', '.join(w.label() for w in c.writers) or 'unknown writers'}"))
    return lines


def emit(out: TextIO, doc: dict[str, Any]) -> None:
    out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()
