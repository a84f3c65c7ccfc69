"""The verdict on one generated case (tests/scenarios/test_generated.py): do ``audit`` and ``conflicts``
agree, did every printed command run, and does the object hold the user's intent — or did the tool
say beforehand (and exit non-zero) where it would not?

Computed from the tool's JSON (docs/audit.md, docs/conflicts.md) and the objects alone."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import generated as gen

COMMAND_FAILED = "printed command failed"
TOOL_ERROR = "audit or conflicts could not answer"
DISAGREE_CONFLICTS = "audit and conflicts disagree about conflicts"
DISAGREE_VERDICT = "audit says nothing to do, conflicts predicts otherwise"
APPLY_FAILED = "apply failed, the tool had not said so"
MISS_CLASSES = {
    "value-lost": "a value nobody asked to change was lost",
    "writer-value-lost": "a dropped field another live writer set was lost",
    "older-value-lost": "a field only an older manifest of the applier set was deleted",
    "not-applied": "a value of the manifest was not applied",
    "stayed": "a dropped field stayed without a word",
}
ORDER = [COMMAND_FAILED, TOOL_ERROR, DISAGREE_CONFLICTS, DISAGREE_VERDICT, APPLY_FAILED, *MISS_CLASSES.values()]

_PATH = re.compile(r'\.(?:spec|metadata|status)(?:\.[A-Za-z0-9_/-]+|\[[^\]\s]*\])*')


class AskedLike(Protocol):
    audit_rc: int
    audit: dict[str, Any] | None
    audit_err: str
    conflicts_rc: int
    conflicts: dict[str, Any] | None
    conflicts_err: str
    commands: list[tuple[list[str], int, str]]
    applied: dict[str, Any]


@dataclass
class Verdict:
    classes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, cls: str, problem: str) -> None:
        if cls not in self.classes:
            self.classes.append(cls)
            self.classes.sort(key=ORDER.index)
        self.problems.append(f"{cls}: {problem}")


def _tokens(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for t in texts:
        out.update(_PATH.findall(t))
    return out


def _strings(doc: Any) -> Iterable[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, Mapping):
        for v in doc.values():
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


def _mentioned(path: gen.Path, tokens: set[str], stayed: bool = False) -> bool:
    """Did the tool name ``path`` or a field above it? For a field that stayed, a field below it
    counts too: a list item's ``.image`` that stays means the item stays (soak seed 50's
    seed-5001774: the tool named an item's two fields, the judge wanted the item)."""
    if any(gen.server_path(path[:i]) in tokens for i in range(1, len(path) + 1)):
        return True
    if not stayed:
        return False
    here = gen.server_path(path)
    return any(t.startswith(here) and t[len(here):len(here) + 1] in (".", "[") for t in tokens)


def _under(leaves: Mapping[gen.Path, Any], text: str) -> list[gen.Path]:
    try:
        top = gen.parse_server_path(text)
    except ValueError:
        return []
    return [p for p in leaves if p[:len(top)] == top]


def judge(previous: Mapping[str, Any] | None, before: Mapping[str, Any], attr: gen.Attribution, asked: AskedLike,
          failed: list[str], after: Mapping[str, Any]) -> Verdict:
    """``previous``: the manifest the applier applied last (None for a new applier)."""
    v = Verdict()
    name = gen.NAME
    audit, conflicts = asked.audit, asked.conflicts
    for argv, rc, out in asked.commands:
        v.counts["commands"] += 1
        if rc != 0:
            said = [t.strip() for t in out.splitlines()
                    if "refused" in t or "failed:" in t or t.startswith("error") or t.strip().startswith("!")]
            first = " / ".join(said[:3]) if said else out.strip()[:300]
            v.add(COMMAND_FAILED, f"kubectl fieldown {argv[0]} exited {rc}: {first[:600]}")
    if audit is None or conflicts is None or not conflicts.get("items"):
        v.add(TOOL_ERROR, f"audit exit {asked.audit_rc} {asked.audit_err.strip()[-300:]}; conflicts exit "
                          f"{asked.conflicts_rc} {asked.conflicts_err.strip()[-300:]}")
        return v
    items = [i for i in audit.get("items") or [] if i.get("name") == name]
    fix = next((o.get("fix") for o in audit.get("objects") or [] if o.get("name") == name), None) or {}
    citem = conflicts["items"][0]

    # --- audit and conflicts about the same object and manifest ---
    pcs = [i for i in items if i.get("id") == "predicted-conflict"]
    audit_paths = {c.get("path") for i in pcs for c in (i.get("details") or {}).get("conflicts") or []}
    conf_paths = {c.get("path") for c in citem.get("conflicts") or []}
    c_fail = asked.conflicts_rc == 1 or citem.get("rejected") is not None
    agree = True
    if audit_paths != conf_paths or (c_fail and not pcs) or (pcs and not conf_paths and not c_fail):
        agree = False
        v.add(DISAGREE_CONFLICTS, f"audit predicted-conflict paths {sorted(audit_paths)} (finding "
                                  f"{'present' if pcs else 'absent'}, exit {asked.audit_rc}); conflicts paths "
                                  f"{sorted(conf_paths)} (exit {asked.conflicts_rc})")
    kind = str(before.get("kind") or asked.applied.get("kind"))
    want, was = gen.leaves(asked.applied, kind), gen.leaves(before, kind)
    defaults = gen.DEFAULTS.get(kind)
    prev = gen.leaves(previous, kind) if previous is not None else {}
    intended = {p for p in was if p in prev and p not in want
                and not any(w != "applier" for w in attr.get(p, set()))}
    nothing_to_do = asked.audit_rc == 0 and not fix.get("command") and not fix.get("drop") \
        and not fix.get("problems")
    if nothing_to_do:
        followup = citem.get("followup") or {}
        deleted = [*(citem.get("deleted") or []), *(followup.get("deleted") or [])]
        stays = [*(citem.get("retained") or []), *(n.get("path", "") for n in citem.get("neverPruned") or [])]
        why = []
        if c_fail:
            why.append(f"the apply fails (exit {asked.conflicts_rc}, rejected {citem.get('rejected')})")
        for d in deleted:
            # a field at its schema default is set again in the same write: nothing of it is lost
            unasked = [p for p in _under(was, d) if p not in intended and p not in want
                       and not gen.is_default(defaults, p, was[p])]
            if unasked:
                why.append(f"deletes {d} ({', '.join(gen.server_path(p) for p in unasked[:3])} not dropped)")
        for s in stays:
            dropped = [p for p in _under(was, s) if p in intended]
            if dropped:
                why.append(f"keeps {s}, which the manifest dropped")
        if why:
            agree = False
            v.add(DISAGREE_VERDICT, "; ".join(why))
    if agree:
        v.counts["agree"] += 1

    # --- the object after the fix and the apply ---
    announced = asked.audit_rc != 0
    # the strings themselves, not their JSON: a path's quotes (``[name="a"]``) are escaped in JSON
    texts = [*(str(x) for x in fix.get("problems") or []), *(str(x) for x in fix.get("notes") or []),
             *(str(x) for x in fix.get("edits") or []), *_strings(items),
             *_strings({k: citem.get(k) for k in ("conflicts", "deleted", "retained", "neverPruned", "followup",
                                                  "rejected", "runs")})]
    tokens = _tokens(texts)
    if failed:
        if announced and (c_fail or pcs or fix.get("problems")):
            v.counts["announced"] += 1
            v.counts["announced:apply-failed"] += 1
        else:
            v.add(APPLY_FAILED, "; ".join(failed))
        return v
    for m in gen.misses(before, asked.applied, previous, after, attr, kind):
        if announced and _mentioned(m.path, tokens, stayed=m.kind == "stayed"):
            v.counts["announced"] += 1
            v.counts[f"announced:{m.kind}"] += 1
            continue
        v.add(MISS_CLASSES[m.kind], m.text())
    return v
