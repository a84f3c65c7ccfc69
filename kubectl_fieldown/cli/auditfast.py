"""``audit`` in its common forms, read without typer.

``audit -A`` as a subprocess is measured against a plain LIST of the same objects (issue 24: within
1.3x, start-up included), and importing typer and building the command was ~25 ms of CPU of a run
whose LIST of 10,000 objects takes 0.4 s. :func:`parse` reads the command lines made only of the
options below, exactly as the typer command reads them; any other word (a flag it does not know,
``--help``, a value it is unsure of, an option given twice, ``--color``, ``--no-headers``, a
kubectl template format) returns None, and typer reads the line instead, so that every message and
every other form stays typer's. The values are checked by :func:`.auditrun.run_audit`, as they are
after typer. tests/cli/test_audit_fast.py reads each accepted line both ways and compares the
requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from .auditrun import AuditOutput, AuditRequest, FailOn
from .fastwords import read_words
from .labelselector import selector_problem

__all__ = ["parse"]

#: the single-valued options, by every spelling, and the field of the request they set
_SINGLE = {"-o": "output", "--output": "output", "--fail-on": "fail_on", "--applier": "applier",
           "--field-manager": "field_manager", "-n": "namespace", "--namespace": "namespace", "-l": "selector",
           "--selector": "selector", "--kubeconfig": "kubeconfig", "--concurrency": "concurrency", "--jobs": "jobs",
           "--context-concurrency": "context_concurrency", "--metrics-file": "metrics_file"}
#: the repeatable ones
_REPEATED = {"--kinds": "kinds", "-f": "filenames", "--filename": "filenames", "--ignore": "ignore",
             "--context": "contexts"}
_SWITCHES = {"-A": "all_namespaces", "--all-namespaces": "all_namespaces", "-R": "recursive",
             "--recursive": "recursive", "--details": "details", "-v": "details", "--verbose": "details",
             "--all-contexts": "all_contexts"}
#: the -o formats with no template (jsonpath= and custom-columns= go through typer)
_OUTPUTS = {o.value: o for o in AuditOutput if o not in (AuditOutput.jsonpath, AuditOutput.custom_columns)}
_FAIL_ON = {f.value: f for f in FailOn}


def parse(args: Sequence[str]) -> AuditRequest | None:
    """The request of ``audit ARGS...`` (``args[0] == "audit"``) when typer is not needed to read it."""
    if not args or args[0] != "audit":
        return None
    words = read_words(args[1:], _SINGLE, _REPEATED, _SWITCHES)
    if words is None:
        return None
    single, repeated, switches = words.single, words.repeated, words.switches
    defaults = AuditRequest()
    output = _OUTPUTS.get(single.get("output", defaults.output.value))
    fail_on = _FAIL_ON.get(single.get("fail_on", defaults.fail_on.value))
    if output is None or fail_on is None:
        return None  # another spelling, a template format or a wrong one: typer's to read or to refuse
    selector = single.get("selector")
    if selector is not None and selector.strip() and selector_problem(selector) is not None:
        return None  # typer's message for it
    return AuditRequest(
        kinds=repeated["kinds"], output=output, fail_on=fail_on, applier=single.get("applier"),
        field_manager=single.get("field_manager"), filenames=repeated["filenames"], recursive="recursive" in switches,
        ignore=repeated["ignore"], details="details" in switches,
        concurrency=single.get("concurrency", defaults.concurrency), jobs=single.get("jobs", defaults.jobs),
        namespace=single.get("namespace"), all_namespaces="all_namespaces" in switches, selector=selector,
        kubeconfig=single.get("kubeconfig"), contexts=repeated["contexts"], all_contexts="all_contexts" in switches,
        context_concurrency=single.get("context_concurrency", defaults.context_concurrency),
        metrics_file=single.get("metrics_file"))
