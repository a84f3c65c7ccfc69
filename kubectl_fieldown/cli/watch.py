"""``kubectl fieldown watch``: who changes which field, live, and which writers fight.

LIST + WATCH each named type (``kube/watch.py``: bookmarks, relist after 410 Gone, reconnect with
backoff) → hold each object reduced to what attribution needs and keep only real transitions
(``watch/tracker.py``) → the field changes of each write and their writers (``watch/attribution.py``,
with the kind's merge schema from ``kube/kindrules.py``) → fights and quiet rewrites
(``watch/fights.py``) → one line or JSON document per change and fight, and a summary at the end
(``--for`` elapsed, ``--max-changes`` reached, or Ctrl-C).
"""

from __future__ import annotations

import enum
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..fieldpath import parse_path
from . import options
from .completion import complete_resources
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, UsageError, describe, handle_errors, print_error, print_note
from .select import parse_live_args, resolve_targets

if TYPE_CHECKING:
    from ..schema.types import Type
    from ..watch.tracker import Transition

__all__ = ["FailOn", "WatchOutput", "register", "watch"]


class WatchOutput(str, enum.Enum):
    text = "text"
    json = "json"


class FailOn(str, enum.Enum):
    none = "none"
    fight = "fight"


HELP = """Watch who changes which field, live, and which writers fight over a field.

One line per field change as it happens: time (the writer's managedFields entry), object,
path, old -> new value, and the writer (the managedFields entry the write stamped; the
co-owners; 'ambiguous' when managedFields cannot tell); one line per object created or
deleted. A field whose value flips between writers --fights times is a fight, reported
once with each writer's value and the command that ends it when the tool has one. At the
end (--for elapsed, --max-changes reached or Ctrl-C) a summary: fields changed per writer,
objects created and deleted, fights, objects rewritten without a change."""

EPILOG = """\b
Examples:
  # Who changes the Deployment web, for ten minutes
  kubectl fieldown watch deployment/web -n prod --for 10m
\b
  # Every widget in the cluster, replicas only, as JSON lines; fail if writers fight
  kubectl fieldown watch widgets.example.com -A --path .spec.replicas -o json --for 1h --fail-on fight"""


@handle_errors
def watch(
    resources: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TYPE[/NAME]",
            help="What to watch: TYPE/NAME ..., or TYPE followed by names, or TYPE (every object of TYPE in the "
            "namespace, or with -A everywhere; -l to select).",
            show_default=False,
            autocompletion=complete_resources,
        ),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", metavar="PREFIX",
                     help="Only changes at or below PREFIX, in the API server's path syntax (repeatable).",
                     show_default=False),
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option("--for", metavar="DURATION",
                     help="Stop after DURATION (30s, 10m, 1h); default: until Ctrl-C.", show_default=False),
    ] = None,
    max_changes: Annotated[
        int | None,
        typer.Option("--max-changes", metavar="N", min=1,
                     help="Stop after the write that brings the field changes shown to N.", show_default=False),
    ] = None,
    fights: Annotated[
        int,
        typer.Option("--fights", metavar="N", min=1,
                     help="A field whose value flips between writers N times is a fight."),
    ] = 3,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", case_sensitive=False, help="Exit 1 when a fight was found ('fight')."),
    ] = FailOn.none,
    show_secret_values: Annotated[
        bool,
        typer.Option("--show-secret-values",
                     help="Show the values of a Secret's data, stringData and last-applied annotation."),
    ] = False,
    output: Annotated[
        WatchOutput,
        options.output_option("Output format: text (one line per change) or json (one JSON document per line: "
                              "FieldownChange, FieldownFight, FieldownWatchSummary; docs/watch.md)."),
    ] = WatchOutput.text,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> None:
    from .globalflags import GlobalFlagError, parse_duration

    paths = list(path or ())
    for p in paths:
        parse_path(p)  # syntax errors are usage errors, before any request
    seconds: float | None = None
    if duration is not None:
        try:
            seconds = parse_duration(duration)
        except GlobalFlagError as e:
            raise UsageError(f"--for: {e}") from None
        if seconds <= 0:
            raise UsageError(f"--for must be a positive duration, not {duration!r}")
    request = parse_live_args(list(resources or ()), selector, all_namespaces)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    session = _Session(paths, fights, show_secret_values, output)
    code = session.run(request, cluster, seconds, max_changes)
    if code == 0 and fail_on is FailOn.fight and session.detector.fights():
        code = EXIT_FAILURE
    if code:
        raise typer.Exit(code)


class _Session:
    """One watch: what is held, counted and printed."""

    def __init__(self, paths: Sequence[str], fights: int, show_secret_values: bool, output: WatchOutput) -> None:
        from ..render.watch import Tally
        from ..watch.fights import FightDetector
        from ..watch.tracker import Tracker

        self.paths = list(paths)
        self.show_secret_values = show_secret_values
        self.json = output is WatchOutput.json
        # with --path, each object is held with only the top-level fields the prefixes are in
        parsed = [parse_path(p) for p in paths]
        keep = None if not parsed or any(not p for p in parsed) else frozenset(str(p[0][1]) for p in parsed)
        self.tracker = Tracker(keep=keep)
        self.detector = FightDetector(fights)
        self.tally = Tally()
        self.types: dict[int, Type] = {}

    def run(self, request: Any, cluster: options.ClusterArgs, seconds: float | None, max_changes: int | None) -> int:
        import queue
        import threading

        from ..kube.client import ALL_NAMESPACES, ClusterClient
        from ..kube.kindrules import KindRules
        from ..kube.watch import Event, Failed, Notice, Snapshot, TypeWatch, WatchItem
        from ..schema.types import GroupVersionKind

        client = ClusterClient(options.cluster_options(cluster))
        rules = KindRules(client=client)
        q: queue.Queue[WatchItem] = queue.Queue()
        stop = threading.Event()
        watches: list[TypeWatch] = []
        labels: list[str] = []
        interrupted = False
        failure: BaseException | None = None
        try:
            for t in resolve_targets(client, request):
                if t.res is None:
                    assert t.error is not None
                    raise t.error
                if t.res.verbs and not {"list", "watch"} <= t.res.verbs:
                    raise UsageError(f"{t.label}: the server does not offer list and watch for "
                                     f"{t.res.group_resource}")
                if t.name is not None:
                    client.get(t.res, t.name, cluster.namespace)  # a named object that is not there: 404, exit 1
                scope = len(watches)
                ns = ALL_NAMESPACES if cluster.all_namespaces else cluster.namespace
                gvk = GroupVersionKind.from_api_version(t.res.api_version, t.res.kind)
                self.types[scope] = rules.lookup(gvk, t.res).root
                watches.append(TypeWatch(client, scope, t.res, ns, q, stop, label_selector=request.selector,
                                         name=t.name))
                where = "all namespaces" if cluster.all_namespaces or not t.res.namespaced else \
                    f"namespace {cluster.namespace or client.default_namespace}"
                labels.append(f"{t.label}" + (f" in {where}" if t.res.namespaced else ""))
            deadline = time.monotonic() + seconds if seconds is not None else None
            for w in watches:
                w.start()
            waiting = len(watches)
            while deadline is None or time.monotonic() < deadline:
                wait = 0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))
                try:
                    item = q.get(timeout=wait)
                except queue.Empty:
                    continue
                if isinstance(item, Failed):
                    failure = item.error
                    break
                if isinstance(item, Notice):
                    print_note(item.text)
                    continue
                if isinstance(item, Snapshot):
                    transitions = self.tracker.snapshot(item.scope, item.items, item.relist)
                    if not item.relist:
                        waiting -= 1
                        if waiting == 0:
                            n = len(self.tracker)
                            print_note(f"watching {', '.join(labels)} ({n} object{'' if n == 1 else 's'}); "
                                       "Ctrl-C to stop")
                else:
                    assert isinstance(item, Event)
                    transitions = self.tracker.event(item.scope, item.type, item.obj)
                for tr in transitions:
                    self._transition(tr)
                if max_changes is not None and self.tally.changes >= max_changes:
                    break
        except KeyboardInterrupt:
            interrupted = True
        finally:
            stop.set()
            for w in watches:
                w.close()
            client.close()
        failed, code = None, EXIT_INTERRUPTED if interrupted else 0
        if failure is not None:
            failed, code = describe(failure) or (f"internal error: {type(failure).__name__}: {failure} (this is a "
                                                 "bug; run with FIELDOWN_DEBUG=1 and report it)", EXIT_FAILURE)
        self._summary(interrupted, failed)
        if failed is not None:
            print_error(failed)
        return code

    def _transition(self, tr: Transition) -> None:
        from ..ownership.managedfields import format_time
        from ..render.common import now_utc
        from ..render.watch import (
            change_document,
            change_line,
            emit,
            fight_document,
            fight_lines,
            lifecycle_document,
            lifecycle_line,
        )
        from ..watch.attribution import attribute, created, deleted

        if tr.new is None or tr.old is None:
            # created (no earlier values to change from: its writers are its entries) or deleted
            if tr.new is not None:
                o = created(tr.new)
            else:
                assert tr.old is not None
                self.detector.forget(tr.old.ref)
                o = deleted(tr.old, tr.deleted_at)
            self.tally.count_lifecycle(o)
            observed = format_time(now_utc().timestamp())
            if self.json:
                emit(sys.stdout, lifecycle_document(o, tr.coalesced, observed))
            else:
                sys.stdout.write(lifecycle_line(o, tr.coalesced, observed) + "\n")
                sys.stdout.flush()
            return
        write = attribute(tr.old, tr.new, self.types[tr.scope], path_texts=self.paths,
                          show_secret_values=self.show_secret_values, new_parsed=tr.new_parsed)
        if self.paths and not write.changes:
            return  # nothing below --path: not a write of the watched fields
        self.tally.count(write)
        out = sys.stdout
        observed = format_time(now_utc().timestamp())
        for c in write.changes:
            if self.json:
                emit(out, change_document(write, c, tr.coalesced, observed))
            else:
                out.write(change_line(write, c, tr.coalesced, observed) + "\n")
        for f in self.detector.observe(write):
            if self.json:
                emit(out, fight_document(f))
            else:
                out.write("\n".join(fight_lines(f)) + "\n")
        out.flush()

    def _summary(self, interrupted: bool, failed: str | None) -> None:
        from ..render.watch import emit, summary_document, summary_lines

        fights, churn = self.detector.fights(), self.detector.churn()
        if self.json:
            emit(sys.stdout, summary_document(self.tally, fights, churn, interrupted=interrupted, failed=failed))
        else:
            sys.stdout.write("\n".join(summary_lines(self.tally, fights, churn, interrupted=interrupted)) + "\n")
            sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("watch", help=HELP, epilog=EPILOG, no_args_is_help=False)(watch)
