"""Rendering an audit report: a rich summary and details, the JSON document, JUnit XML.

The JSON document is a contract (docs/audit.md): keys are only ever added, never renamed or
removed, and ``version`` changes if that promise is ever broken::

    {"apiVersion": "fieldown.dev/v1", "kind": "FieldownAudit", "version": 1,   (docs/output.md)
     "complete", "interrupted", "failed", "nothingAudited", "failOn",
     "scope": {"namespace", "allNamespaces", "selector", "fieldManager", "types": [...]},
     "summary": {"objects", "objectsByType", "findings", "bySeverity", "byId", "byKind", "byNamespace"},
     "items": [{"id", "severity", "apiVersion", "kind", "namespace", "name", "resource",
                "message", "fix", "details"}]}

JUnit: one ``<testsuite>`` per finding id and one ``<testcase>`` per finding, failed when its
severity is at or above ``--fail-on`` (a passing case carries the message in ``<system-out>``),
plus a ``summary`` suite whose single case records the scope and fails when the audit was
interrupted. Clean objects do not appear: a cluster of 100,000 objects would otherwise give a
100,000-case report.

``rich`` is imported by :func:`render_text` only.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TextIO

from ..audit import RULES, Finding, ObjectFix, Severity
from ..audit.fleet import ContextPart, context_summary
from ..base.record import Record
from .common import counted, terminal_safe, write_yaml
from .fixes import command_line, fix_lines

__all__ = ["FORMAT_VERSION", "AuditReport", "render_json", "render_junit", "render_text", "render_yaml", "to_document"]

FORMAT_VERSION = 1


class AuditReport(Record):
    """Everything a renderer needs; ``findings`` are already in report order."""

    __slots__ = ("complete_types", "contexts", "fail_on", "failed", "field_manager", "findings", "interrupted",
                 "namespace", "nothing_audited", "objects", "objects_by_type", "seconds", "selector", "types")
    findings: Final[Sequence[Finding]]
    objects: Final[int]
    types: Final[Sequence[str]]
    complete_types: Final[Sequence[str]]
    objects_by_type: Final[dict[str, int]]
    namespace: Final[str | None]
    """None: all namespaces."""
    selector: Final[str | None]
    fail_on: Final[str]
    failed: Final[bool]
    field_manager: Final[str | None]
    interrupted: Final[bool]
    seconds: Final[float]
    nothing_audited: Final[bool]
    """No type could be listed (forbidden, failed) or there was none: the audit looked at nothing."""
    contexts: Final[Sequence[ContextPart]]
    """Several kubeconfig contexts audited in one run (docs/fleet.md): each one's part."""

    def __init__(
        self,
        findings: Sequence[Finding],
        objects: int,
        types: Sequence[str],
        complete_types: Sequence[str] = (),
        objects_by_type: dict[str, int] | None = None,
        namespace: str | None = None,
        selector: str | None = None,
        fail_on: str = "error",
        failed: bool = False,
        field_manager: str | None = None,
        interrupted: bool = False,
        seconds: float = 0.0,
        nothing_audited: bool = False,
        contexts: Sequence[ContextPart] = (),
    ) -> None:
        self.findings = findings
        self.objects = objects
        self.types = types
        self.complete_types = complete_types
        self.objects_by_type = objects_by_type if objects_by_type is not None else {}
        self.namespace = namespace
        self.selector = selector
        self.fail_on = fail_on
        self.failed = failed
        self.field_manager = field_manager
        self.interrupted = interrupted
        self.seconds = seconds
        self.nothing_audited = nothing_audited
        self.contexts = contexts

    @property
    def complete(self) -> bool:
        if self.contexts:
            return not self.interrupted and all(c.complete for c in self.contexts)
        return not self.interrupted and len(self.complete_types) == len(self.types)


def _where(f: Finding) -> str:
    return f.namespace or ""


def to_document(report: AuditReport) -> dict[str, Any]:
    lines = _CommandLines()
    return _document(report, [finding_json(f, lines) for f in report.findings], _objects(report.findings, lines))


def _document(report: AuditReport, items: list[dict[str, Any]], objects: list[dict[str, Any]]) -> dict[str, Any]:
    findings = report.findings
    by_severity = Counter(f.severity.value for f in findings)
    from .envelope import envelope

    return envelope("FieldownAudit", {
        "complete": report.complete,
        "interrupted": report.interrupted,
        "failed": report.failed,
        "nothingAudited": report.nothing_audited,
        "failOn": report.fail_on,
        "scope": {
            "namespace": report.namespace,
            "allNamespaces": report.namespace is None,
            "selector": report.selector,
            "fieldManager": report.field_manager,
            "types": list(report.types),
        },
        "summary": {
            "objects": report.objects,
            "objectsByType": dict(report.objects_by_type),
            "findings": len(findings),
            "bySeverity": {s.value: by_severity.get(s.value, 0) for s in Severity},
            "byId": dict(Counter(f.id for f in findings)),
            "byKind": dict(Counter(f.kind for f in findings)),
            "byNamespace": dict(Counter(_where(f) for f in findings)),
        },
        "items": items,
        "objects": objects,
        # several contexts in one run (docs/fleet.md): a summary each, and the context of every item
        **({"contexts": [context_summary(c, findings) for c in report.contexts]} if report.contexts else {}),
    })


class _CommandLines:
    """Each fix's command line, quoted once: an object's findings share its fix, and the document
    prints the line with every finding and again with the object."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        # by identity: the fixes are the findings', alive for as long as this is used
        self._lines: dict[int, str] = {}

    def __call__(self, fix: ObjectFix) -> str:
        line = self._lines.get(id(fix))
        if line is None:
            line = self._lines[id(fix)] = command_line(fix.argv())
        return line


def finding_json(f: Finding, lines: Callable[[ObjectFix], str]) -> dict[str, Any]:
    """The documented ``-o json`` item (docs/audit.md); ``fix`` is the object's command line, as
    ``lines`` gives it."""
    return {
        "id": f.id,
        "severity": f.severity.value,
        "apiVersion": f.api_version,
        "kind": f.kind,
        "namespace": f.namespace,
        "name": f.name,
        "resource": f.resource,
        "message": f.message,
        "fix": lines(f.fix) if f.fix is not None else "",
        "details": dict(f.details),
        **({"context": f.context} if f.context is not None else {}),
    }


def _objects(findings: Sequence[Finding], lines: Callable[[ObjectFix], str]) -> list[dict[str, Any]]:
    """One entry per object with findings: its fix in full (applier, command, edits, checks)."""
    return list(_iter_objects(findings, lines))


_Key = tuple[str | None, str, str, str | None, str]


def _key(f: Finding) -> _Key:
    return (f.context, f.api_version, f.kind, f.namespace, f.name or "")


def _object_json(f: Finding, ids: list[str], lines: Callable[[ObjectFix], str]) -> dict[str, Any]:
    assert f.fix is not None
    return {"apiVersion": f.api_version, "kind": f.kind, "namespace": f.namespace, "name": f.name,
            "resource": f.resource, "findings": ids, **({"context": f.context} if f.context is not None else {}),
            "fix": {**f.fix.to_json(), "commandLine": lines(f.fix)}}


def _iter_objects(findings: Sequence[Finding], lines: Callable[[ObjectFix], str]) -> Iterator[dict[str, Any]]:
    """The entries of :func:`_objects`, in the order of each object's first finding with a fix."""
    if _grouped_by_object(findings):
        # the usual case (findings sorted by object): one object at a time, nothing kept
        return _iter_groups(findings, lines)
    ids: dict[_Key, list[str]] = {}
    first: dict[_Key, Finding] = {}
    for f in findings:
        if f.name is None:
            continue
        key = _key(f)
        ids.setdefault(key, []).append(f.id)
        if f.fix is not None:
            first.setdefault(key, f)
    return (_object_json(f, ids[key], lines) for key, f in first.items())


def _grouped_by_object(findings: Sequence[Finding]) -> bool:
    """Whether each object's findings are next to each other (the type findings aside)."""
    seen: set[_Key] = set()
    last: _Key | None = None
    for f in findings:
        if f.name is None:
            continue
        key = _key(f)
        if key != last:
            if key in seen:
                return False
            seen.add(key)
            last = key
    return True


def _iter_groups(findings: Sequence[Finding], lines: Callable[[ObjectFix], str]) -> Iterator[dict[str, Any]]:
    last: _Key | None = None
    ids: list[str] = []
    first: Finding | None = None
    for f in findings:
        if f.name is None:
            continue
        key = _key(f)
        if key != last:
            if first is not None:
                yield _object_json(first, ids, lines)
            last, ids, first = key, [], None
        ids.append(f.id)
        if first is None and f.fix is not None:
            first = f
    if first is not None:
        yield _object_json(first, ids, lines)


def _dumps(doc: Any) -> str:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        return bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2)).decode() + "\n"
    except TypeError:  # integers beyond 64 bits in a value: the standard encoder takes them
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_yaml(report: AuditReport, out: TextIO) -> None:
    """:func:`to_document` as YAML (built whole, where :func:`render_json` streams its items)."""
    write_yaml(to_document(report), out)


def render_json(report: AuditReport, out: TextIO) -> None:
    """``_dumps(to_document(report))``, written as it is made: the items and objects one by one, so
    that an audit of many objects never holds its whole document (a few KB per finding, as dicts and
    as text) next to its findings. tests/render/test_audit.py checks that the text is the same."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        out.write(_dumps(to_document(report)))
        return
    findings = report.findings
    lines = _CommandLines()
    items = functools.partial(finding_json, lines=lines)
    try:
        # orjson writes the whole document unless it refuses a value (an integer beyond 64 bits):
        # then the standard encoder writes all of it, as _dumps does. Only a finding's details can
        # hold one: the rest of an item and an object's fix are strings, booleans and lists of
        # strings (their types say so), so only the details are tried before anything is written
        for f in findings:
            orjson.dumps(f.details)
        head = bytes(orjson.dumps(_document(report, [], []), option=orjson.OPT_INDENT_2)).decode()
    except TypeError:
        out.write(_dumps(to_document(report)))
        return
    # the two lists are consecutive top-level keys: the only place this text (newlines included,
    # which no JSON string holds) can be
    before, sep, after = head.partition('\n  "items": [],\n  "objects": []')
    if not sep:  # pragma: no cover - to_document's layout changed
        out.write(_dumps(to_document(report)))
        return
    out.write(before + '\n  "items": ')
    _write_list(out, map(items, findings), orjson)
    out.write(',\n  "objects": ')
    _write_list(out, _iter_objects(findings, lines), orjson)
    out.write(after + "\n")


def _write_list(out: TextIO, elements: Iterator[dict[str, Any]], orjson: Any) -> None:
    """A top-level key's list as orjson's OPT_INDENT_2 lays it out: ``[]``, or one element per block,
    indented 4, separated by commas. Written 256 elements at a time, each batch dumped as one list
    (``[\n  A,\n  B\n]``, its elements at indent 2) and indented 2 further: one call of each kind per
    batch instead of per element."""
    batch: list[dict[str, Any]] = []
    first = True

    def flush() -> None:
        nonlocal first
        text = bytes(orjson.dumps(batch, option=orjson.OPT_INDENT_2)).decode()
        out.write(("[\n" if first else ",\n") + "  " + text[2:-2].replace("\n", "\n  "))
        first = False
        batch.clear()

    for x in elements:
        batch.append(x)
        if len(batch) >= 256:
            flush()
    if batch:
        flush()
    out.write("[]" if first else "\n  ]")


# --- JUnit -------------------------------------------------------------------------------------------


def _object_label(f: Finding) -> str:
    return (f"[{f.context}] " if f.context is not None else "") + _bare_label(f)


def _bare_label(f: Finding) -> str:
    if f.name is None:
        return f"{f.resource} (type)" + (f" in {f.namespace}" if f.namespace else "")
    where = f"{f.namespace}/" if f.namespace else ""
    label = f"{f.kind} {where}{f.name}"
    manager = f.details.get("manager") if f.id == "imperative-writer" else None
    return f"{label} ({manager})" if manager else label


def render_junit(report: AuditReport, out: TextIO) -> None:
    # here, not at the top: xml.sax.saxutils imports urllib.request, and with it email and http.client
    from xml.sax.saxutils import escape as xml_escape
    from xml.sax.saxutils import quoteattr

    threshold = Severity(report.fail_on).rank if report.fail_on in Severity.__members__ else 99
    by_id: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_id.setdefault(f.id, []).append(f)
    suites: list[str] = []
    total = failures = 0

    scope = "all namespaces" if report.namespace is None else f"namespace {report.namespace}"
    summary = (f"{counted(report.objects, 'object')} in {counted(len(report.types), 'type')} ({scope}), "
               f"{len(report.findings)} findings, {report.seconds:.1f}s")
    summary_fail = ""
    if report.interrupted:
        summary_fail = (f'<failure type="interrupted" message="interrupted: partial results">'
                        f"{xml_escape(summary)}</failure>")
    elif report.nothing_audited:
        summary_fail = (f'<failure type="nothing-audited" message="nothing was audited: no type could be listed">'
                        f"{xml_escape(summary)}</failure>")
    summary_failed = 1 if summary_fail else 0
    suites.append(
        f'  <testsuite name="summary" tests="1" failures="{summary_failed}" errors="0" '
        f'skipped="0" time="{report.seconds:.3f}">\n'
        f'    <testcase classname="fieldown.audit" name="scope" time="{report.seconds:.3f}">{summary_fail}'
        f"<system-out>{xml_escape(summary)}</system-out></testcase>\n"
        "  </testsuite>\n")
    total += 1
    failures += summary_failed

    for rule_id in [r for r in RULES if r in by_id] + sorted(set(by_id) - set(RULES)):
        cases: list[str] = []
        suite_failures = 0
        for f in by_id[rule_id]:
            fix = "\n".join(fix_lines(f.fix)) if f.fix is not None else ""
            text = f"{f.message}\nfix: {fix}" if fix else f.message
            if f.severity.rank >= threshold:
                suite_failures += 1
                body = (f"<failure type={quoteattr(f.severity.value)} message={quoteattr(f.message)}>"
                        f"{xml_escape(text)}</failure>")
            else:
                body = f"<system-out>{xml_escape(f'{f.severity.value}: {text}')}</system-out>"
            cases.append(f'    <testcase classname={quoteattr("fieldown.audit." + rule_id)} '
                         f"name={quoteattr(_object_label(f))}>{body}</testcase>\n")
        total += len(cases)
        failures += suite_failures
        suites.append(f"  <testsuite name={quoteattr(rule_id)} tests=\"{len(cases)}\" failures=\"{suite_failures}\" "
                      f'errors="0" skipped="0">\n' + "".join(cases) + "  </testsuite>\n")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
              f'<testsuites name="kubectl fieldown audit" tests="{total}" failures="{failures}" errors="0" '
              f'time="{report.seconds:.3f}">\n' + "".join(suites) + "</testsuites>\n")


# --- text --------------------------------------------------------------------------------------------

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_TOP = 10


def render_text(report: AuditReport, out: TextIO, details: bool = False) -> None:
    """A summary (counts by finding, kind and namespace), then the findings grouped — one line per
    finding id and message with the objects that have it, one block per fix with the objects it is
    for (as Popeye does) — or, with ``details``, the findings object by object."""
    from .common import columns, make_console, print_lines
    from .styled import Text

    console = make_console(out)
    findings = report.findings
    scope = "all namespaces" if report.namespace is None else f"namespace {report.namespace}"
    if report.selector:
        scope += f", -l {report.selector}"
    sev = Counter(f.severity.value for f in findings)
    head = Text(f"Audited {counted(report.objects, 'object')} of {counted(len(report.types), 'type')} ({scope}) in "
                f"{report.seconds:.1f}s: ")
    if findings:
        parts = [(f"{sev[s.value]} {s.value}{'s' if s is not Severity.info and sev[s.value] != 1 else ''}",
                  _STYLE[s.value]) for s in reversed(Severity) if sev[s.value]]
        for i, (label, style) in enumerate(parts):
            head.append(label, style=style)
            head.append(", " if i < len(parts) - 1 else "")
    else:
        head.append("no findings", style="green")
    if report.interrupted:
        head.append("  (interrupted: partial results)", style="bold red")
    elif report.nothing_audited:
        head.append("  (nothing audited: no type could be listed)", style="bold red")
    console.print(head)
    for c in report.contexts:
        by_sev = context_summary(c, findings)["bySeverity"]
        c_line = Text(f"  context {terminal_safe(c.context)}: ", style="bold")
        if c.error is not None:
            c_line.append(f"not audited: {terminal_safe(c.error)}", style="bold red")
        else:
            c_counts = ", ".join(f"{n} {s}" for s, n in by_sev.items() if n) or "no findings"
            c_line.append(f"{counted(c.objects, 'object')} of {counted(len(c.types), 'type')} in {c.seconds:.1f}s: "
                          f"{c_counts}" + ("" if c.complete else " (incomplete)"))
        console.print(c_line)
    if not findings:
        return

    from .prefs import no_headers

    by_id = Counter(f.id for f in findings)
    rows = [] if no_headers() else [[Text(h, style="bold") for h in ("SEVERITY", "FINDING", "COUNT", "WHAT")]]
    for rule_id in [r for r in RULES if r in by_id] + sorted(set(by_id) - set(RULES)):
        rule = RULES.get(rule_id)
        worst = max((f.severity for f in findings if f.id == rule_id), key=lambda s: s.rank)
        rows.append([Text(worst.value, style=_STYLE[worst.value]), Text(rule_id), Text(str(by_id[rule_id])),
                     Text(rule.title if rule else "")])
    console.print()
    print_lines(console, columns(rows, gap="  ", right=frozenset({2})))

    for title, counts in (("kind", Counter(f.kind for f in findings)),
                          ("namespace", Counter(_where(f) or "(cluster)" for f in findings))):
        items = counts.most_common()
        line = terminal_safe(", ".join(f"{k} {n}" for k, n in items[:_TOP]))
        if len(items) > _TOP:
            line += f", … {len(items) - _TOP} more"
        console.print(Text(f"By {title}: ", style="bold").append(line, style=""))

    if not details:
        _grouped(console, findings)
        return
    console.print()
    console.print(Text("Details", style="bold"))
    current: tuple[Any, ...] | None = None
    for i, f in enumerate(findings):
        key = (f.context, f.api_version, f.kind, f.namespace, f.name)
        if key != current:
            current = key
            if f.name is None:
                label = f"{f.resource} (type)" + (f" in namespace {f.namespace}" if f.namespace else "")
            else:
                label = f"{f.kind} {f.namespace + '/' if f.namespace else ''}{f.name}"
            if f.context is not None:
                label = f"[{f.context}] {label}"
            console.print(Text(terminal_safe(label), style="bold"))
        row = Text("  ")
        row.append(f"{f.severity.value.upper():<8}", style=_STYLE[f.severity.value])
        row.append(f"{f.id}  ", style="bold")
        row.append(terminal_safe(f.message))
        console.print(row)
        nxt = findings[i + 1] if i + 1 < len(findings) else None
        last_of_object = nxt is None or (nxt.context, nxt.api_version, nxt.kind, nxt.namespace, nxt.name) != key
        if f.fix is not None and last_of_object:
            lines = fix_lines(f.fix)
            for j, line in enumerate(lines):
                console.print(Text("  fix: " if j == 0 else "       ", style="dim").append(terminal_safe(line)))


# --- grouped (the default text) ----------------------------------------------------------------------

_LISTED = 8  # objects named on a line; the rest are counted (all of them with --details)


def _label(f: Finding) -> tuple[str, str | None, str]:
    """(kind, namespace, name): how an object is named in a list of objects; the kind carries the
    object's context when several were audited (``[two] Widget``)."""
    where = f"[{f.context}] " if f.context is not None else ""
    if f.name is None:
        return (f"{where}{f.resource} (type)", f.namespace, "")
    return (f"{where}{f.kind}", f.namespace, f.name)


def _objects_line(objects: Sequence[tuple[str, str | None, str]]) -> str:
    """``3 objects: Widget a, b -n shop; Gizmo edge``: the names of each kind and namespace together,
    at most _LISTED of them."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    for kind, namespace, name in objects[:_LISTED]:
        groups.setdefault((kind, namespace), []).append(name)
    text = "; ".join(f"{kind} {', '.join(n for n in names if n)}".rstrip() + (f" -n {ns}" if ns else "")
                     for (kind, ns), names in groups.items())
    if len(objects) > _LISTED:
        text += f" (+{len(objects) - _LISTED} more; --details lists them)"
    return f"{counted(len(objects), 'object')}: {text}"


def _grouped(console: Any, findings: Sequence[Finding]) -> None:
    from .styled import Text

    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.id, f.message), []).append(f)
    order = {rule_id: i for i, rule_id in enumerate(RULES)}

    def rank(item: tuple[tuple[str, str], list[Finding]]) -> tuple[int, int]:
        # as the summary table: the worst first, then the catalogue's order
        (rule_id, _), members = item
        return (-max(f.severity.rank for f in members), order.get(rule_id, len(order)))

    console.print()
    console.print(Text("Findings", style="bold"))
    for (rule_id, message), members in sorted(groups.items(), key=rank):
        worst = max((f.severity for f in members), key=lambda s: s.rank)
        row = Text("")
        row.append(f"{worst.value.upper():<8}", style=_STYLE[worst.value])
        row.append(f"{rule_id}  ", style="bold")
        row.append(terminal_safe(message))
        console.print(row)
        objects = list(dict.fromkeys(_label(f) for f in members))
        console.print(Text("        " + terminal_safe(_objects_line(objects)), style="dim"))

    # one block per distinct fix: the same words for several objects (nothing to run, the same note)
    # are said once, with the objects they are for
    fixes: dict[tuple[str, ...], list[tuple[str, str | None, str]]] = {}
    seen: set[tuple[Any, ...]] = set()
    for f in findings:
        key = (f.context, f.api_version, f.kind, f.namespace, f.name)
        if f.fix is None or key in seen:
            continue
        seen.add(key)
        fixes.setdefault(tuple(fix_lines(f.fix)), []).append(_label(f))
    fixes.pop((), None)
    if not fixes:
        return
    console.print()
    console.print(Text("Fixes", style="bold"))
    for lines, objects in fixes.items():
        console.print(Text(terminal_safe(_objects_line(objects)), style="dim"))
        for j, line in enumerate(lines):
            console.print(Text("  fix: " if j == 0 else "       ", style="dim").append(terminal_safe(line)))
