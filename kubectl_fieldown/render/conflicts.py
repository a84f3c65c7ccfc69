"""Output of ``conflicts``: the text report (rich) and the JSON/YAML contract (docs/conflicts.md).

The command hands over :class:`~kubectl_fieldown.conflicts.report.ConflictReport` objects, already
analysed (conflicts in the server's order, co-owners named, secrets redacted, the server dry-run
compared); nothing here fetches, decodes or simulates. The JSON/YAML contract — scripts and acceptance checks depend on
these exact keys; keys are only ever added, and ``version`` changes if that promise is ever broken
(docs/conflicts.md)::

    {"apiVersion": "fieldown.dev/v1", "kind": "FieldownConflicts", "version": 2,   (docs/output.md)
     "items": [{"apiVersion", "kind", "namespace", "name",
                "conflicts": [{"manager", "operation", "apiVersion", "subresource", "path",
                               "liveValue", "appliedValue"}],
                "shared": [path], "deleted": [path], "retained": [path],
                "neverPruned": [{"path", "owners"}], "defaulted": [{"path", "value"}],
                "followup": {"migrated": [manager], "deleted": [path], "error"} | null,
                "rejected": {"status", "reason", "message"} | null,
                "applier": str | null, "requests": [{"verb", "manager", "purpose", "status", "message"}],
                "runs": [{"applier", ...the same keys for each --applier...}],
                "result": {"object", "managedFields"} | null}]}

``rich`` is imported only by :func:`render_text`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..conflicts.applyplan import PlannedConflict
from ..conflicts.report import AGREES, DISAGREES, ConflictReport, DryRunCheck, KubectlFollowup, OwnedPath
from ..fieldpath import FIELD, KEY, Path, path_string
from .common import counted, display_value, path_label, terminal_safe, write_json, write_yaml

if TYPE_CHECKING:
    from .styled import Text

__all__ = [
    "render_json",
    "render_text",
    "render_yaml",
    "report_to_dict",
    "to_document",
]

VALUE_WIDTH = 60


# --- JSON / YAML ---------------------------------------------------------------------------------


def _conflict_dict(c: PlannedConflict) -> dict[str, Any]:
    return {
        "manager": c.manager,
        "operation": c.operation,
        "apiVersion": c.api_version,
        "subresource": c.subresource,
        "path": path_string(c.path),
        "liveValue": c.live_value,
        "appliedValue": c.applied_value,
    }


FORMAT_VERSION = 2


def _prediction(report: ConflictReport) -> dict[str, Any]:
    result: dict[str, Any] | None = None
    if report.result_object is not None:
        result = {"object": report.result_object, "managedFields": report.result_managed_fields}
    followup: dict[str, Any] | None = None
    f = report.kubectl_followup
    if f is not None:
        followup = {"migrated": list(f.managers), "deleted": [path_string(p) for p in f.deletes],
                    "error": f.error or None}
    rejected = ({"status": report.error_status, "reason": report.error_reason, "message": report.error}
                if report.error else None)
    return {
        "conflicts": [_conflict_dict(c) for c in report.conflicts],
        "shared": [path_string(s.path) for s in report.shared],
        "deleted": [path_string(p) for p in report.deleted],
        "retained": [path_string(r.path) for r in report.retained],
        "neverPruned": [{"path": path_string(r.path), "owners": list(r.owners)} for r in report.never_pruned],
        "defaulted": [{"path": path_string(p), "value": v} for p, v in report.defaulted],
        "followup": followup,
        "rejected": rejected,
        "applier": report.applier or None,
        "requests": list(report.requests),
        "result": result,
    }


def report_to_dict(report: ConflictReport) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": report.api_version,
        "kind": report.kind,
        "namespace": report.namespace,
        "name": report.name,
        **_prediction(report),
    }
    out["runs"] = [_prediction(r) for r in ([report, *report.runs] if report.applier else [])]
    return out


def to_document(reports: Sequence[ConflictReport]) -> dict[str, Any]:
    from .envelope import envelope

    return envelope("FieldownConflicts", {"items": [report_to_dict(r) for r in reports]})


def render_json(reports: Sequence[ConflictReport], out: TextIO) -> None:
    write_json(to_document(reports), out)


def render_yaml(reports: Sequence[ConflictReport], out: TextIO) -> None:
    # result.managedFields are the very entries of result.object: the writer keeps them from becoming
    # YAML anchors and aliases
    write_yaml(to_document(reports), out)


# --- text ----------------------------------------------------------------------------------------

INDENT = "  "


def _bare_manager(describe: str) -> str:
    """``"helm" using apps/v1`` → ``helm``: the ways out name a manager the way people say it."""
    if describe.startswith('"'):
        try:
            decoded: Any = json.JSONDecoder().raw_decode(describe)[0]
        except ValueError:
            return describe
        if isinstance(decoded, str):
            return decoded
    return describe


def _and(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _grouped(items: Sequence[OwnedPath]) -> list[tuple[tuple[str, ...], list[Path]]]:
    """Paths grouped by their owners, groups in order of first appearance."""
    groups: dict[tuple[str, ...], list[Path]] = {}
    for it in items:
        groups.setdefault(it.owners, []).append(it.path)
    return list(groups.items())


def _is_key_field(p: Path) -> bool:
    if len(p) < 2 or p[-1][0] != FIELD or p[-2][0] != KEY:
        return False
    return any(n == p[-1][1] for n, _ in p[-2][1])


def _conflicts_by_path(conflicts: Sequence[PlannedConflict]) -> list[list[PlannedConflict]]:
    """Conflicts of several managers on one path are one problem for the reader: one block each."""
    by: dict[Path, list[PlannedConflict]] = {}
    for c in conflicts:
        by.setdefault(c.path, []).append(c)
    return list(by.values())


def report_lines(report: ConflictReport, *, verbose: bool = False, details: bool = False) -> list[Text]:
    """The text block of one object. ``details`` adds where the schema and the status-subresource
    rule came from (always with ``verbose``; offline predictions show it because they rest on it)."""
    from .styled import Text

    lines: list[Text] = []
    head = Text(terminal_safe(report.title), style="bold")
    head.append(f"  {report.api_version}", style="dim")
    if report.where:
        head.append(f"  ({report.where})", style="dim")
    lines.append(head)
    lines.extend(_prediction_lines(report, verbose=verbose, details=details))
    for run in report.runs:
        lines.append(Text(f"{INDENT}---", style="dim"))
        lines.extend(_prediction_lines(run, verbose=verbose, details=False))
    return lines


def _prediction_lines(report: ConflictReport, *, verbose: bool, details: bool) -> list[Text]:
    from .styled import Text

    lines: list[Text] = []
    if report.applier:
        lines.append(Text(f"{INDENT}with {report.applier}:", style="bold"))
        if verbose:
            for r in report.requests:
                answer = str(r["status"]) + (f" {r['message']}" if r.get("message") else "")
                lines.append(Text(f"{INDENT}  request: {r['verb']} by {r['manager'] or '(no fieldManager)'}: "
                                  f"{r['purpose']} → {answer}", style="dim"))
    if verbose or details:
        status = "yes" if report.status_subresource else "no"
        lines.append(Text(f"{INDENT}schema: {report.schema_source}; status subresource: {status}"
                          f" ({report.status_source})", style="dim"))

    for group in _conflicts_by_path(report.conflicts):
        lines.extend(_conflict_block(report, group))

    if report.error:
        status = f"{report.error_status} {report.error_reason}".strip()
        lines.append(Text(INDENT) + Text(f"the server would reject this apply ({status}): ", style="red") +
                     Text(report.error))

    # a key field (``[name="web"].name``) restates its item, which is listed too
    for owners, paths in _grouped([s for s in report.shared if not _is_key_field(s.path)]):
        lines.append(Text(f"{INDENT}shared with {_and(list(owners))}: ") +
                     Text(", ".join(path_label(p) for p in paths), style="cyan"))
    if report.deleted:
        lines.append(Text(f"{INDENT}deletes: ") +
                     Text(", ".join(path_label(p) for p in report.deleted), style="yellow"))
    if report.defaulted:
        lines.append(Text(f"{INDENT}defaulted again in the same write (the schema's default; no apply "
                          "removes it): ") +
                     Text(", ".join(f"{path_label(p)} = {json.dumps(v)}" for p, v in report.defaulted), style="yellow"))
    for owners, paths in _grouped(report.retained):
        lines.append(Text(f"{INDENT}stays (still owned by {_and(list(owners))}): ") +
                     Text(", ".join(path_label(p) for p in paths), style="magenta"))
    for owners, paths in _grouped(report.never_pruned):
        if not owners:
            lines.append(Text(f"{INDENT}never pruned (not in the manifest, and the run drops the entry that "
                              f"owned {'it' if len(paths) == 1 else 'them'}: owned by no one): ") +
                         Text(", ".join(path_label(p) for p in paths), style="magenta"))
            continue
        lines.append(Text(f"{INDENT}never pruned (not in the manifest, only {_and(list(owners))} "
                          f"own{'s' if len(owners) == 1 else ''} {'it' if len(paths) == 1 else 'them'}): ") +
                     Text(", ".join(path_label(p) for p in paths), style="magenta"))

    if report.kubectl_followup is not None:
        lines.append(_followup_line(report.kubectl_followup, report.manager))
    if report.dry_run is not None:
        lines.append(_dry_run_line(report.dry_run))

    style = "red" if report.blocked else ("yellow" if report.conflicts else "green")
    lines.append(Text(INDENT) + Text("→ ", style="dim") + Text(report.summary(), style=f"bold {style}"))
    return lines


def _conflict_block(report: ConflictReport, group: Sequence[PlannedConflict]) -> list[Text]:
    from .styled import Text

    first = group[0]
    p = path_label(first.path)
    live = display_value(first.live_value, VALUE_WIDTH)
    applied = display_value(first.applied_value, VALUE_WIDTH)
    forced = report.forced and not report.error
    label = "taken over" if forced else "conflict"
    line = Text(INDENT) + Text(label, style="yellow" if forced else "bold red") + Text("  ")
    line.append(p, style="bold")
    line.append("  live: ")
    line.append(live, style="bold")
    line.append(" → applied: ")
    line.append(applied, style="bold")
    out = [line]
    owners = [c.describe for c in group]
    pad = INDENT * 3
    out.append(Text(f"{pad}{'was ' if forced else ''}owned by {_and(owners)}", style="dim" if forced else ""))
    if forced:
        return out
    bare = list(dict.fromkeys(_bare_manager(o) for o in owners))
    scaler = [b for b in bare if b in report.scaled]
    ways = [f"remove {p} from your manifest" + (f" ({_and(scaler)} keeps it: it scales)" if scaler else "")]
    if not scaler:
        ways.append(f"--force-conflicts takes it from {_and(bare)}")
        if report.fold_command:
            from .fixes import command_line

            fold = terminal_safe(command_line(report.fold_command))
            verb = "hand it" if report.fold_command[0] == "handover" else f"fold {_and(bare)}"
            ways.append(f"{verb} {'to' if verb == 'hand it' else 'into'} {report.manager} (checked): {fold}")
    out.append(Text(f"{pad}ways out: {ways[0]}"))
    out.extend(Text(f"{pad}          {w}") for w in ways[1:])
    return out


def _followup_line(f: KubectlFollowup, manager: str) -> Text:
    from .styled import Text

    who = _and([json.dumps(m) for m in f.managers])
    line = Text(f"{INDENT}with kubectl apply --server-side: kubectl then moves what {who} owns to "
                f"{json.dumps(manager)} and applies again", style="" if f.deletes or f.error else "dim")
    if f.error:
        line.append(", which fails: ")
        line.append(f.error, style="red")
    elif f.deletes:
        line.append(", which deletes: ")
        line.append(", ".join(path_label(p) for p in f.deletes), style="yellow")
    else:
        line.append(" (nothing else changes)")
    return line


def _dry_run_line(check: DryRunCheck) -> Text:
    from .styled import Text

    line = Text(f"{INDENT}server dry-run: ")
    if check.outcome == AGREES:
        line.append("agrees", style="green")
        if check.detail:
            line.append(f" ({check.detail})", style="dim")
    elif check.outcome == DISAGREES:
        line.append("DISAGREES", style="bold red")
        line.append(f": {check.detail}")
    else:
        line.append("not checked", style="yellow")
        line.append(f": {check.detail}")
    return line


def totals_line(reports: Sequence[ConflictReport], failed: int) -> str:
    """``3 objects: 1 with conflicts, 1 to create, 1 without conflicts; 1 failed``."""
    rejected = sum(1 for r in reports if r.error)
    blocked = sum(1 for r in reports if r.blocked and not r.error)
    forced = sum(1 for r in reports if not r.blocked and r.conflicts)
    creates = sum(1 for r in reports if not r.blocked and not r.conflicts and r.creates)
    clean = len(reports) - rejected - blocked - forced - creates
    parts = [f"{n} {what}" for n, what in ((blocked, "with conflicts"), (rejected, "rejected by the server"),
                                            (forced, "forced"), (creates, "to create"),
                                            (clean, "without conflicts")) if n]
    total = len(reports) + failed
    text = f"{counted(total, 'object')}: " + ", ".join(parts) if parts else counted(total, "object")
    if failed:
        text += f"{', ' if parts else ': '}{failed} not predicted (see the errors)"
    return text


def render_text(
    reports: Sequence[ConflictReport],
    out: TextIO,
    *,
    verbose: bool = False,
    details: bool = False,
    failed: int = 0,
) -> None:
    from .common import make_console, print_lines
    from .styled import Text

    console = make_console(out)
    lines: list[Text] = []
    for n, report in enumerate(reports):
        if n:
            lines.append(Text())
        lines.extend(report_lines(report, verbose=verbose, details=details))
    if len(reports) + failed > 1:
        lines.append(Text())
        lines.append(Text(totals_line(reports, failed), style="bold"))
    if lines:
        print_lines(console, lines)
