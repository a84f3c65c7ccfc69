"""SARIF 2.1.0 (``-o sarif``) for ``audit`` and ``conflicts``: code scanning of manifests.

Every result sits at the file, line and column of the manifest field it is about (the field a
conflict or a kept field names; the object's ``metadata.name`` for a finding about the whole
object), found by :mod:`kubectl_fieldown.manifests.yamlpos`. A result about an object that no ``-f`` file
holds (a plain ``audit`` scans live objects) carries the object as a logical location
(``deployment.apps/shop/web``, kind ``object``; a type the audit could not list: kind ``type``).

Rules: the audit catalogue (:data:`kubectl_fieldown.audit.RULES`) and, for ``conflicts``, the
small fixed set :data:`CONFLICT_RULES`. Levels: error → ``error``, warning → ``warning``, info →
``note``. The fix is text (the tool's command line and the manifest edits): the last lines of the
result's message (``fix: ...``) and its ``properties.fix``. Not a SARIF ``fixes`` entry, which must
be a change of the file's bytes: the fix is a command run against a cluster.
Columns count Unicode code points (``columnKind: unicodeCodePoints``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

from .. import __version__
from ..manifests.yamlpos import DocumentPositions, JSONPath, Position, document_positions, locate_path, locate_text

if TYPE_CHECKING:
    from ..conflicts.report import ConflictReport
    from ..manifests.sources import InputDocument
    from .audit import AuditReport

__all__ = ["CONFLICT_RULES", "ManifestLocator", "SarifResult", "SarifRule", "audit_sarif", "conflicts_sarif",
           "render_sarif"]

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/kubectl-fieldown/kubectl-fieldown"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@dataclass(frozen=True)
class SarifRule:
    id: str
    level: str
    title: str
    help: str


@dataclass(frozen=True)
class SarifResult:
    rule_id: str
    level: str
    message: str
    fix: str = ""
    uri: str | None = None
    position: Position | None = None
    logical: str | None = None
    logical_kind: str = "object"
    properties: Mapping[str, Any] = field(default_factory=dict)


#: ``conflicts``: what an apply of a manifest would do that hurts
CONFLICT_RULES: dict[str, SarifRule] = {r.id: r for r in (
    SarifRule("apply-conflict", "error", "the apply would conflict",
              "another manager owns the field with another value: the server answers 409 Conflict"),
    SarifRule("apply-takes-over", "warning", "the forced apply takes a field over",
              "with --force-conflicts the field is taken from its owner, who may write it back"),
    SarifRule("apply-rejected", "error", "the server would reject the apply",
              "the server's validation refuses the object the apply produces"),
    SarifRule("apply-deletes", "warning", "the apply deletes a field",
              "the applier owned the field and the manifest no longer sets it: the apply removes it"),
    SarifRule("never-pruned", "warning", "a dropped field stays",
              "the manifest no longer sets the field, but another manager owns it too: no apply removes it"),
    SarifRule("input-error", "error", "a manifest could not be read or predicted",
              "the document is not a valid object, or the cluster could not be asked about it"),
)}


# --- positions of manifests ---------------------------------------------------------------------


def _uri(source: str) -> str:
    """A relative path as a relative URI reference (what code scanning resolves against the checkout);
    an absolute one as a file URI."""
    p = source.replace(os.sep, "/")
    if os.path.isabs(source):
        return FsPath(source).as_uri()
    return quote(p, safe="/")


class ManifestLocator:
    """Positions of the documents of the ``-f`` files, read once per file. Standard input cannot be
    read twice: its objects get a logical location."""

    def __init__(self) -> None:
        self._files: dict[str, list[DocumentPositions] | None] = {}

    def _positions(self, source: str) -> list[DocumentPositions] | None:
        if source not in self._files:
            try:
                text = None if source == "-" else FsPath(source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = None
            self._files[source] = document_positions(text) if text is not None else None
        return self._files[source]

    def locate(self, doc: InputDocument, paths: Iterable[str] = (),
               field_paths: Iterable[Any] = ()) -> tuple[str, Position] | None:
        """The file and the position of the first of ``paths`` (printed) or ``field_paths`` (Path)
        that the manifest sets, else of its ``metadata.name``; None when the file is not readable."""
        docs = self._positions(doc.source)
        if not docs or not 1 <= doc.document <= len(docs):
            return None
        positions = docs[doc.document - 1]
        base: JSONPath = ("items", doc.item - 1) if doc.item is not None else ()
        name_at = positions.fields.get((*base, "metadata", "name")) or positions.at(base) or positions.start
        for p in paths:
            pos = locate_text(doc.obj, positions, p, base)
            if pos != (positions.at(base) or positions.start):
                return _uri(doc.source), pos
        for fp in field_paths:
            pos = locate_path(doc.obj, positions, fp, base)
            if pos != (positions.at(base) or positions.start):
                return _uri(doc.source), pos
        return _uri(doc.source), name_at


# --- the document --------------------------------------------------------------------------------


def _result_json(r: SarifResult, rule_index: Mapping[str, int]) -> dict[str, Any]:
    text = r.message + (f"\nfix: {r.fix}" if r.fix else "")
    out: dict[str, Any] = {"ruleId": r.rule_id, "level": r.level, "message": {"text": text}}
    if r.rule_id in rule_index:
        out["ruleIndex"] = rule_index[r.rule_id]
    location: dict[str, Any] = {}
    if r.uri is not None and r.position is not None:
        location["physicalLocation"] = {"artifactLocation": {"uri": r.uri},
                                        "region": {"startLine": r.position.line, "startColumn": r.position.column}}
    if r.logical is not None:
        location["logicalLocations"] = [{"fullyQualifiedName": r.logical, "kind": r.logical_kind}]
    if location:
        out["locations"] = [location]
    props = {**r.properties, **({"fix": r.fix} if r.fix else {})}
    if props:
        out["properties"] = props
    return out


def sarif_document(command: str, rules: Sequence[SarifRule], results: Sequence[SarifResult],
                   successful: bool) -> dict[str, Any]:
    index = {r.id: i for i, r in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kubectl-fieldown",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [{"id": r.id, "name": r.id, "shortDescription": {"text": r.title},
                           "fullDescription": {"text": r.help}, "help": {"text": r.help},
                           "defaultConfiguration": {"level": r.level}} for r in rules],
            }},
            "invocations": [{"executionSuccessful": successful, "commandLine": f"kubectl fieldown {command}"}],
            "columnKind": "unicodeCodePoints",
            "results": [_result_json(r, index) for r in results],
        }],
    }


def render_sarif(doc: Mapping[str, Any], out: TextIO) -> None:
    out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


# --- audit ------------------------------------------------------------------------------------------


def _finding_paths(details: Mapping[str, Any]) -> list[str]:
    """The field paths a finding names in its details (docs/audit.md), first one first."""
    out: list[str] = []
    for key in ("conflicts", "fields", "changes"):
        for item in details.get(key) or ():
            if isinstance(item, str) and key == "changes":
                # a sentence about a change: the paths in it (words that start with a dot)
                out.extend(w.rstrip(":;,") for w in item.split() if w.startswith(".") and len(w) > 1)
            elif isinstance(item, str):
                out.append(item)
            elif isinstance(item, Mapping) and isinstance(item.get("path"), str):
                out.append(item["path"])
    return out


def audit_sarif(report: AuditReport, sources: Mapping[tuple[str, str, str, str], InputDocument],
                locator: ManifestLocator | None = None, command: str = "audit") -> dict[str, Any]:
    """The audit report as SARIF; ``sources`` are the ``-f`` documents by live-object key."""
    from ..audit import RULES
    from .fixes import fix_lines

    locator = locator or ManifestLocator()
    rules = [SarifRule(r.id, LEVEL[r.severity.value], r.title, r.rationale) for r in RULES.values()]
    results: list[SarifResult] = []
    for f in report.findings:
        fix = "\n".join(fix_lines(f.fix)) if f.fix is not None else ""
        props: dict[str, Any] = {"severity": f.severity.value, "apiVersion": f.api_version, "kind": f.kind}
        if f.context is not None:
            props["context"] = f.context
        if f.namespace:
            props["namespace"] = f.namespace
        if f.name is None:
            logical = f.resource + (f" in {f.namespace}" if f.namespace else "")
            results.append(SarifResult(f.id, LEVEL[f.severity.value], f.message, fix, logical=logical,
                                       logical_kind="type", properties=props))
            continue
        props["name"] = f.name
        logical = "/".join(p for p in (f.resource, f.namespace, f.name) if p)
        doc = sources.get((f.api_version, f.kind, f.namespace or "", f.name))
        where = locator.locate(doc, _finding_paths(f.details)) if doc is not None else None
        results.append(SarifResult(f.id, LEVEL[f.severity.value], f.message, fix,
                                   uri=where[0] if where else None, position=where[1] if where else None,
                                   logical=logical, properties=props))
    return sarif_document(command, rules, results, not report.interrupted and not report.nothing_audited)


# --- conflicts ------------------------------------------------------------------------------------


def conflicts_sarif(reports: Sequence[ConflictReport], docs: Mapping[str, InputDocument], errors: Sequence[str],
                    locator: ManifestLocator | None = None) -> dict[str, Any]:
    """``conflicts`` as SARIF: one result per conflicting, deleted or kept field of each applier's run;
    ``docs`` are the manifests by their ``where`` (each report's)."""
    from ..audit.findings import type_ref
    from ..fieldpath import path_string
    from .common import display_value
    from .fixes import command_line

    locator = locator or ManifestLocator()
    results: list[SarifResult] = []

    def add(report: ConflictReport, rule_id: str, message: str, fix: str, path: Any, applier: str) -> None:
        doc = docs.get(report.where)
        where = locator.locate(doc, field_paths=[path] if path is not None else ()) if doc is not None else None
        logical = "/".join(p for p in (type_ref(report.api_version, report.kind), report.namespace, report.name) if p)
        props: dict[str, Any] = {"apiVersion": report.api_version, "kind": report.kind, "name": report.name}
        if report.namespace:
            props["namespace"] = report.namespace
        if applier:
            props["applier"] = applier
        if path is not None:
            props["path"] = path_string(path)
        results.append(SarifResult(rule_id, CONFLICT_RULES[rule_id].level, message, fix,
                                   uri=where[0] if where else None, position=where[1] if where else None,
                                   logical=logical, properties=props))

    for report in reports:
        for run in ([report, *report.runs] if report.applier else [report]):
            who = f"{run.applier}: " if run.applier else ""
            fold = command_line(run.fold_command) if run.fold_command else ""
            for c in run.conflicts:
                p = path_string(c.path)
                values = (f"live {display_value(c.live_value, 60)}, applied {display_value(c.applied_value, 60)}")
                if run.forced and not run.error:
                    add(report, "apply-takes-over", f"{who}{p} is taken over from {c.describe} ({values})",
                        f"remove {p} from the manifest to leave it to {c.describe}", c.path, run.applier)
                else:
                    ways = [f"remove {p} from the manifest", "apply with --force-conflicts to take it"]
                    if fold:
                        ways.append(f"or run (checked): {fold}")
                    add(report, "apply-conflict", f"{who}{p} conflicts with {c.describe} ({values})",
                        "; ".join(ways), c.path, run.applier)
            if run.error:
                add(report, "apply-rejected", f"{who}the server would reject the apply ({run.error_status} "
                    f"{run.error_reason}): {run.error}", "", None, run.applier)
            if not run.blocked:
                for d in run.deletions():
                    add(report, "apply-deletes", f"{who}the apply deletes {path_string(d)}",
                        "set the field in the manifest to keep it", d, run.applier)
                for r in run.never_pruned:
                    add(report, "never-pruned", f"{who}{path_string(r.path)} stays, owned by {', '.join(r.owners)}",
                        "hand the field over or delete it after the apply (kubectl fieldown handover --field PATH)",
                        r.path, run.applier)
    for e in errors:
        results.append(SarifResult("input-error", "error", e))
    return sarif_document("conflicts", list(CONFLICT_RULES.values()), results, not errors)
