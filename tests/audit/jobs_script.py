"""Run by tests/audit/test_jobs.py in a process of its own: the audit's worker processes are forked
only from a process with one thread, which a test run (with its leftover threads) cannot promise.
Prints one JSON document: for each scenario, whether the workers' findings are the audit's own, and
what the workers did."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from typing import Any

from remedies.states import (
    NOW,
    RULES,
    client_side_created,
    edited,
    labelled,
    manifest,
    scaled,
    server_side_applied,
)

from kubectl_fieldown.appliers import Applier
from kubectl_fieldown.audit import AuditContext, Finding, audit_object, object_key, sort_findings
from kubectl_fieldown.cli.auditjobs import BATCH, start_jobs

OBJECTS = 70


def history(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """An object of one of six histories, and the next manifest of Argo CD for it (some drop a field)."""
    name = f"w{i}"
    m = manifest(name, color=["blue", "red"][i % 2], labels={"a": "x", "b": str(i)})
    live = [
        lambda: client_side_created(m),
        lambda: server_side_applied("argocd-controller", m),
        lambda: server_side_applied("helm", m),
        lambda: scaled(client_side_created(m), 5),
        lambda: edited(server_side_applied("argocd-controller", m), color="green"),
        lambda: labelled(client_side_created(m), "team", "x"),
    ][i % 6]()
    nxt = manifest(name, color="red", labels={"a": "x"} if i % 3 else {"a": "x", "b": str(i)})
    return live, nxt


def context(boom: bool = False) -> tuple[AuditContext, list[dict[str, Any]]]:
    objs, manifests = [], {}
    for i in range(OBJECTS):
        live, nxt = history(i)
        objs.append(live)
        if i % 7:  # most in the manifests (checked by the workers), some not (checked by the audit)
            manifests[object_key(nxt)] = nxt

    def rules_for(api_version: str, kind: str) -> Any:
        if boom:
            raise RuntimeError("boom")
        return RULES if kind == "Widget" else None

    ctx = AuditContext(applier=Applier.of("argocd"), manifests=manifests, rules_for=rules_for, now=NOW)
    return ctx, objs


def serial(ctx: AuditContext, objs: list[dict[str, Any]]) -> list[Finding]:
    return sort_findings(f for o in objs for f in audit_object(o, ctx))


def in_jobs(ctx: AuditContext, objs: list[dict[str, Any]], n: int, known: bool = True,
            kill_first: bool = False) -> tuple[dict[str, int], list[Finding]]:
    jobs = start_jobs(ctx, n, lambda api_version, kind: known)
    assert jobs is not None
    try:
        if kill_first:
            os.kill(jobs.pids[0], signal.SIGKILL)
        found: list[Finding] = []
        for o in objs:
            if object_key(o) in ctx.manifests:
                jobs.add(o, object_key(o))
            else:
                found.extend(audit_object(o, ctx))
        found.extend(jobs.finish())
        return {"size": jobs.size, "redone": jobs.redone}, sort_findings(found)
    finally:
        jobs.close()


def main() -> None:
    out: dict[str, Any] = {"batch": BATCH}
    ctx, objs = context()
    expected = serial(ctx, objs)
    out["findings"] = len(expected)
    out["in_manifests"] = sum(object_key(o) in ctx.manifests for o in objs)

    jobs, found = in_jobs(context()[0], objs, 3)
    out["workers"] = {"same": found == expected, **jobs}

    jobs, found = in_jobs(context()[0], objs, 2, known=False)
    out["unknown_kind"] = {"same": found == expected, "redone": jobs["redone"]}

    jobs, found = in_jobs(context()[0], objs, 2, kill_first=True)
    out["killed"] = {"same": found == expected, "size": jobs["size"]}

    try:
        in_jobs(context(boom=True)[0], objs, 2)
        out["error"] = None
    except RuntimeError as e:
        out["error"] = str(e)

    out["one_job"] = start_jobs(ctx, 1, lambda a, k: True) is None
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        out["with_a_thread"] = start_jobs(ctx, 2, lambda a, k: True) is None
    finally:
        stop.set()
        t.join()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
