"""The audit as Prometheus text exposition (``-o prometheus``, ``--metrics-file``).

For the node-exporter textfile collector (or any scraper of a file): gauges of the last run, one
series set per kubeconfig context audited. Label cardinality is bounded by what the cluster has, not
by its size: findings are counted by context, namespace, kind, finding id and severity — never by
object name (a cluster of 100,000 objects gives at most namespaces × kinds × ids series).

::

    fieldown_findings{context,namespace,kind,id,severity}   findings of the last run
    fieldown_objects_audited{context}                      objects looked at
    fieldown_types_audited{context}                        types that were to be listed
    fieldown_types_failed{context}                         types that could not be listed (403, errors)
    fieldown_audit_complete{context}                       1 when every type was listed to its end
    fieldown_context_reachable{context}                    0 for a context that could not be read
    fieldown_audit_duration_seconds{context}               how long the run took
    fieldown_audit_timestamp_seconds                       when the run ended (Unix time)

A cluster-scoped finding has ``namespace=""``; a context without a name (in a pod, from the service
account) is ``context=""``. :func:`write_atomically` replaces the file in one rename, so a reader
sees the previous run's file or this one, never a part.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..audit.fleet import TYPE_FAILURES, UNREACHABLE
from .audit import AuditReport

__all__ = ["ContextRun", "metrics_text", "write_atomically"]


@dataclass(frozen=True)
class ContextRun:
    """One context's part of the run: ``reachable`` False when it could not be read at all."""

    context: str
    report: AuditReport
    reachable: bool = True


def _label(value: str) -> str:
    """A label value as the text format escapes it: backslash, double quote and line feed."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _number(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


def metrics_text(runs: Sequence[ContextRun], ended: float) -> str:
    """The exposition of one audit run (every context of it); ``ended`` is Unix time."""
    lines: list[str] = []

    def family(name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} gauge")
        lines.extend(f"{name}{labels} {_number(v)}" for labels, v in samples)

    findings: list[tuple[str, float]] = []
    for run in runs:
        counts = Counter((f.namespace or "", f.kind, f.id, f.severity.value) for f in run.report.findings)
        for (ns, kind, rule_id, severity), n in sorted(counts.items()):
            findings.append((_labels(context=run.context, namespace=ns, kind=kind, id=rule_id, severity=severity), n))
    family("fieldown_findings", "Findings of the last audit by context, namespace, kind, finding id and severity.",
           findings)

    def per_context(name: str, help_text: str, value: Callable[[ContextRun], float]) -> None:
        family(name, help_text, [(_labels(context=r.context), value(r)) for r in runs])

    per_context("fieldown_objects_audited", "Objects the last audit looked at.", lambda r: r.report.objects)
    per_context("fieldown_types_audited", "Resource types the last audit was to list.", lambda r: len(r.report.types))
    per_context("fieldown_types_failed", "Resource types the last audit could not list (forbidden or failed).",
                lambda r: sum(1 for f in r.report.findings if f.id in TYPE_FAILURES and f.name is None))
    per_context("fieldown_audit_complete", "1 when the last audit listed every type to its end.",
                lambda r: int(r.reachable and r.report.complete and not r.report.nothing_audited))
    per_context("fieldown_context_reachable", "0 when the context could not be reached or read.",
                lambda r: int(r.reachable and not any(f.id == UNREACHABLE for f in r.report.findings)))
    per_context("fieldown_audit_duration_seconds", "How long the last audit of the context took.",
                lambda r: round(r.report.seconds, 3))
    family("fieldown_audit_timestamp_seconds", "When the last audit ended (Unix time).", [("", round(ended, 3))])
    return "\n".join(lines) + "\n"


def write_atomically(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename: a temporary file in the same directory (a rename
    never crosses file systems), written, flushed and fsynced, made readable like a file the user
    writes (the collector runs as another user), renamed over ``path``, then the directory fsynced
    so that the rename itself survives a crash. The temporary file is removed on failure."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # a directory that cannot be opened (some file systems): the rename is done
    try:
        os.fsync(dfd)
    except OSError:
        pass  # not every file system can sync a directory
    finally:
        os.close(dfd)
