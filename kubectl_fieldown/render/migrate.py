"""Output of the commands that write ownership (migrate, strip-last-applied, handover, reset, undo).

Text: one line per object as soon as it is done (``changed``, ``unchanged``, ``failed: <reason>``;
``would change`` in dry runs), the values a refused write would lose (with its notes, and a fix
that keeps every value when one is known), its notes with ``-v``; a dry run shows the ownership
before → after of each field whose owners change, and the per-entry changes and the exact requests
with ``-v``; then a summary.

``-o json`` is a contract (docs/migrate.md); keys are only ever added::

    {"apiVersion": "fieldown.dev/v1", "kind": "FieldownWrite", "version": 1,   (docs/output.md)
     "command", "dryRun": "none"|"client"|"server", "backupDir": str|null,
     "interrupted": bool, "inFlight": str|null   (Ctrl-C: the object whose write was under way),
     "summary": {"changed", "unchanged", "failed", "retries"},
     "items": [{"apiVersion", "kind", "namespace", "name", "result", "retries", "patchesSent",
                "notes": [str], "backup": str|null, "error": str|null,
                "changes": [str], "problems": [str],
                "ownership": [{"path", "before": [str], "after": [str]}],
                "edits": [str]   (what to change in the manifest for the check to hold: a field a
                                  scaler owns, left out of the next apply),
                "alternative": {"command": [str], "edits": [str]}|null   (a refused migrate --for:
                                the words after 'kubectl fieldown' of a fix that keeps every value),
                "patches"?: [ops or apply body, ...]   (dry runs only),
                "requests"?: [{"type", "fieldManager", "purpose", ...}, ...]   (dry runs only)}]}

The last-applied annotation of a Secret holds its data in clear; it is replaced by
``<redacted>`` wherever it would be printed (patch values, applied manifests).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..base.objects import ObjectRef
from ..base.redact import redact_patch_op, redact_request_body
from ..fieldpath import path_string
from .common import terminal_safe, write_yaml

if TYPE_CHECKING:
    from ..kube.writes import WriteOutcome
    from ..remedies.writeplan import OwnershipMove

__all__ = [
    "Progress",
    "object_label",
    "outcome_to_dict",
    "redacted_patches",
    "render_json",
    "render_outcome",
    "render_summary",
    "render_yaml",
    "summary_counts",
    "to_document",
]



def object_label(o: WriteOutcome) -> str:
    """``widget.example.com/w1 -n shop``: kind.group as kubectl prints it after writes."""
    if not o.kind:
        return o.name  # a manifest or argument that named no object: where it is
    return ObjectRef(o.api_version, o.kind, o.namespace, o.name).display()


def redacted_patches(o: WriteOutcome) -> list[Any]:
    """The outcome's requests as they may be shown (a JSON patch's operations, an apply's body): a
    Secret's annotation (its data) is redacted."""
    out: list[Any] = []
    for p in o.patches:
        if isinstance(p, Mapping):
            out.append(redact_request_body(p) if o.is_secret else dict(p))
        else:
            out.append([redact_patch_op(op) for op in p] if o.is_secret else list(p))
    return out


def _redacted_requests(o: WriteOutcome) -> list[dict[str, Any]]:
    out = []
    for r in o.requests:
        r = dict(r)
        if o.is_secret:
            if "patch" in r:
                r["patch"] = [redact_patch_op(op) for op in r["patch"]]
            if "body" in r:
                r["body"] = redact_request_body(r["body"])
        out.append(r)
    return out


def outcome_to_dict(o: WriteOutcome) -> dict[str, Any]:
    d: dict[str, Any] = {
        "apiVersion": o.api_version,
        "kind": o.kind,
        "namespace": o.namespace,
        "name": o.name,
        "result": o.result.value,
        "retries": o.retries,
        "patchesSent": o.patches_sent,
        "notes": list(o.notes),
        "backup": str(o.backup) if o.backup is not None else None,
        "error": o.error,
        "changes": list(o.changes),
        "ownership": [m.to_json() for m in o.moves],
        "problems": list(o.problems),
        "edits": list(o.edits),
        "maybeWritten": o.maybe_written,
        "alternative": {"command": list(o.alternative), "edits": list(o.alternative_edits)}
        if o.alternative or o.alternative_edits else None,
    }
    if o.dry_run != "none":
        d["patches"] = redacted_patches(o)
        d["requests"] = _redacted_requests(o)
    return d


def summary_counts(outcomes: Sequence[WriteOutcome]) -> dict[str, int]:
    counts = {"changed": 0, "unchanged": 0, "failed": 0, "retries": 0, "maybeWritten": 0}
    for o in outcomes:
        counts[o.result.value] += 1
        counts["retries"] += o.retries
        counts["maybeWritten"] += o.maybe_written
    return counts


def to_document(command: str, dry_run: str, outcomes: Sequence[WriteOutcome], backup_dir: Path | None, *,
                interrupted: bool = False, in_flight: str | None = None) -> dict[str, Any]:
    """The ``FieldownWrite`` document of a write command's run."""
    from .envelope import envelope

    return envelope("FieldownWrite", {
        "command": command,
        "dryRun": dry_run,
        "backupDir": str(backup_dir) if backup_dir is not None else None,
        "summary": summary_counts(outcomes),
        "items": [outcome_to_dict(o) for o in outcomes],
        "interrupted": interrupted,
        "inFlight": in_flight,
    })


def render_json(command: str, dry_run: str, outcomes: Sequence[WriteOutcome], backup_dir: Path | None,
                out: TextIO, *, interrupted: bool = False, in_flight: str | None = None) -> None:
    out.write(json.dumps(to_document(command, dry_run, outcomes, backup_dir, interrupted=interrupted,
                                     in_flight=in_flight), indent=2) + "\n")


def render_yaml(command: str, dry_run: str, outcomes: Sequence[WriteOutcome], backup_dir: Path | None,
                out: TextIO, *, interrupted: bool = False, in_flight: str | None = None) -> None:
    write_yaml(to_document(command, dry_run, outcomes, backup_dir, interrupted=interrupted, in_flight=in_flight),
               out)


def _result_text(o: WriteOutcome) -> str:
    if o.result.value == "failed":
        if o.problems:
            return "failed: refused: it would lose values you did not ask to change (--allow-value-changes " \
                   "writes it anyway)"
        error = o.error or "unknown error"
        if not o.kind and error.startswith(f"{o.name}: "):
            error = error[len(o.name) + 2:]  # the line starts with where it is already
        return f"failed: {error}"
    if o.dry_run != "none" and o.result.value == "changed":
        return "would change" + (" (server dry run)" if o.dry_run == "server" else "")
    return o.result.value


def render_outcome(o: WriteOutcome, out: TextIO, *, verbose: bool = False) -> None:
    """One object: its line, then notes (``-v``), steps and dry-run patches. Every line goes through
    :func:`~.common.terminal_safe`: names, manager names, errors and notes quote the cluster and the
    command line, and an escape sequence in them must not drive the terminal."""

    def write(line: str) -> None:
        out.write(terminal_safe(line) + "\n")

    extra = []
    if o.retries:
        extra.append(f"{o.retries} retr{'y' if o.retries == 1 else 'ies'}")
    if verbose and o.patches_sent:
        extra.append(f"{o.patches_sent} patch{'es' if o.patches_sent != 1 else ''}")
    suffix = f" ({', '.join(extra)})" if extra else ""
    write(f"{object_label(o)}: {_result_text(o)}{suffix}")
    for p in o.problems:
        write(f"  ! {p}")
    if o.alternative or o.alternative_edits:
        from .fixes import command_line

        if o.alternative:
            write(f"  instead, this keeps every value: {command_line(o.alternative)}")
        for e in o.alternative_edits:
            write(f"  {'then: ' if o.alternative else 'instead: '}{e}")
    if not o.alternative:
        for e in o.edits:
            write(f"  then: {e}")
    if verbose or o.dry_run != "none" or (o.problems and o.notes):
        for n in o.notes:
            write(f"  - {n}")
    else:
        from ..remedies.restore import NOT_RESTORED

        for n in o.notes:
            if n.startswith(NOT_RESTORED):  # what an undo could not put back is never only in -v
                write(f"  ! {n}")
    if o.dry_run != "none":
        if o.moves:
            _write_moves(o.moves, out)
        if verbose or not o.moves:
            for c in o.changes:
                write(f"  {c}")
    if o.dry_run != "none" and verbose:
        for r, p in zip(_redacted_requests(o), redacted_patches(o), strict=False):
            what = "apply" if r.get("type") == "apply" else "patch"
            write(f"  {what} (fieldManager {r.get('fieldManager')}): {json.dumps(p)}")
    if verbose and o.backup is not None:
        write(f"  backup: {o.backup}")


_PATH_COLUMN_MAX = 56


def _owners(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "nobody"


def _write_moves(moves: Sequence[OwnershipMove], out: TextIO) -> None:
    """Each field whose owners change, before → after, in one aligned column where paths allow."""
    out.write("  ownership, before → after:\n")
    paths = [terminal_safe(path_string(m.path)) for m in moves]
    width = max((len(p) for p in paths if len(p) <= _PATH_COLUMN_MAX), default=0)
    for shown, m in zip(paths, moves, strict=True):
        change = terminal_safe(f"{_owners(m.before)} → {_owners(m.after)}")
        if len(shown) <= width:
            out.write(f"    {shown.ljust(width)}  {change}\n")
        else:
            out.write(f"    {shown}\n    {'':{width}}  {change}\n")


def render_summary(outcomes: Sequence[WriteOutcome], backup_dir: Path | None, dry_run: str, out: TextIO) -> None:
    c = summary_counts(outcomes)
    changed = "would change" if dry_run != "none" else "changed"
    line = f"{c['changed']} {changed}, {c['unchanged']} unchanged, {c['failed']} failed"
    if c["retries"]:
        line += f" ({c['retries']} retr{'y' if c['retries'] == 1 else 'ies'} after concurrent changes)"
    if c["maybeWritten"]:
        line += (f"; {c['maybeWritten']} of the failed may have been written (the server answered 5xx or not at "
                 "all): run the command again, it reads them and finishes or finds the work done")
    out.write(line + "\n")
    if dry_run != "none":
        out.write("dry run: nothing was written\n")
    elif backup_dir is not None:
        out.write(f"backups: {backup_dir} (undo with: kubectl fieldown undo {backup_dir})\n")


class Progress:
    """``[i/N] object`` on stderr, rewritten in place; only for bulk runs on a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = total > 1 and bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self._shown = False

    def update(self, i: int, label: str) -> None:
        if self.enabled:
            self.stream.write(f"\r\033[K[{i}/{self.total}] {terminal_safe(label)}")
            self.stream.flush()
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False
