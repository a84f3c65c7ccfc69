"""What the write commands share: ``migrate``, ``strip-last-applied``, ``handover``, ``reset``, ``undo``.

Each command lives in its own module (cli/<command>.py) and declares only its own flags and what
it plans; the rest is here and beside it, once:

* the flags several of them take (:mod:`.writeflags`: ``--dry-run``, ``-o``, ``--backup-dir``,
  ``--max-retries``, ``-v``, ``--applier``, ``--allow-value-changes``, the object arguments);
* the command itself (:func:`write_command`): the shared flags around the command's own, and
  select (:mod:`.select`) → plan → guarded write → summary → exit code around what it plans (a
  :class:`WriteJob`);
* the planning path every write goes through (:func:`kubectl_fieldown.cli.writeplanner.write_planner`:
  the command's plan on each read of the object, checked against the applier's next apply;
  schemas from :class:`kubectl_fieldown.kube.kindrules.KindRules`);
* the run loop (:func:`write_objects`, :func:`run_all`): fetch → plan → write
  (``kube.writes.execute``: backup, resourceVersion-tested JSON patches, re-plan and retry on
  concurrent changes) → render (one line per object as it goes, a summary), and the exit code.

Bulk runs go on past a failing object and exit 1 if any failed (2 if an input could not be
read). Running a command twice changes nothing the second time: every plan of an
already-written object is empty.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from . import options
from .errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Terminated,
    describe,
    handle_errors,
    print_error,
)
from .writeflags import WriteArgs, WriteOutput

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..kube.kindrules import KindRules
    from ..kube.writes import BackupRun, ObjectTarget, WriteOptions, WriteOutcome
    from ..remedies.commands import FixCommand
    from ..remedies.writeplan import WritePlan
    from .select import Selected, Selection

    # the plan of one object (each read of it planned again), and the planning function of a run
    Plan = Callable[[dict[str, Any]], WritePlan]
    PlanFor = Callable[[ObjectTarget], Plan]

__all__ = [
    "WriteConfig",
    "WriteJob",
    "make_backups",
    "open_client",
    "run_all",
    "run_plans",
    "write_command",
    "write_objects",
    "write_one",
    "write_options",
]


# --- the command: the shared flags around the command's own ------------------------------------


@dataclass(frozen=True)
class WriteJob:
    """What a write command plans, for :func:`write_command` to run. ``command`` names the run in
    backups and in -o json; ``spec_for`` is the command's plan for the object as read;
    ``needs_schema`` is :func:`kubectl_fieldown.cli.writeplanner.write_planner`'s;
    ``warning`` goes to stderr once the objects are named correctly, before anything is read."""

    command: str
    spec_for: Callable[[dict[str, Any]], FixCommand]
    needs_schema: bool = True
    warning: str | None = None


def write_command(body: Callable[..., WriteJob]) -> Callable[..., int]:
    """The typer command of a write command that selects objects. ``body(args, **own)`` checks the
    command's own flags (its parameters after the first, declared as typer parameters) and says what
    to plan; the command takes the object arguments, then those flags, then the rest of
    :class:`kubectl_fieldown.cli.writeflags.WriteArgs`, and runs the job (:func:`run_job`): its
    exit code is the command's."""
    params = list(inspect.signature(WriteArgs, eval_str=True).parameters.values())
    own = list(inspect.signature(body, eval_str=True).parameters.values())[1:]
    names = [p.name for p in own]

    def command(**kwargs: Any) -> int:
        args = WriteArgs(**{k: v for k, v in kwargs.items() if k not in names})
        code = run_job(args, body(args, **{k: kwargs[k] for k in names}))
        if code:
            raise typer.Exit(code)
        return 0

    command.__name__ = command.__qualname__ = body.__name__
    command.__module__ = body.__module__
    command.__doc__ = body.__doc__
    signature = inspect.Signature([params[0], *own, *params[1:]], return_annotation=int)
    command.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {"return": int}
    wrapped = handle_errors(command)
    wrapped.__signature__ = signature  # type: ignore[attr-defined]
    return wrapped


def run_job(args: WriteArgs, job: WriteJob) -> int:
    """Select → plan → guarded write → summary, for what a command planned; returns the exit code."""
    from .writeplanner import own_applier, write_planner

    retries, applier = args.parsed()
    sel = args.selection()
    if job.warning is not None:
        sel.validate()  # a usage error comes first
        sys.stderr.write(f"warning: {job.warning}\n")
    cfg = WriteConfig(job.command, args.dry_run, args.output, args.verbose, args.backup_dir, retries,
                      args.allow_value_changes)
    planner = write_planner(job.spec_for, applier=applier, default_applier=own_applier,
                            needs_schema=job.needs_schema)
    return run_plans(args.cluster(), sel, cfg, planner)


# --- the run loop ------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteConfig:
    """One run of a write command as the run loop needs it: ``command`` names the run in backups and
    in -o json; ``max_retries`` is --max-retries parsed."""

    command: str
    dry_run: options.DryRunStrategy
    output: WriteOutput
    verbose: bool
    backup_dir: str | None
    max_retries: int
    allow_value_changes: bool = False


def open_client(cluster: options.ClusterArgs) -> ClusterClient:
    from ..kube.client import ClusterClient

    return ClusterClient(options.cluster_options(cluster))


def make_backups(client: ClusterClient, cfg: WriteConfig) -> BackupRun | None:
    from ..kube.writes import BackupRun, default_backup_root

    if cfg.dry_run is not options.DryRunStrategy.none:
        return None
    root = Path(cfg.backup_dir).expanduser() if cfg.backup_dir else default_backup_root()
    return BackupRun(root=root, command=cfg.command, server=client.server, context=client.context)


def write_options(cfg: WriteConfig) -> WriteOptions:
    from ..kube.writes import WriteOptions

    mode = cfg.dry_run.value
    assert mode in ("none", "client", "server")
    return WriteOptions(dry_run=mode, max_retries=cfg.max_retries,  # type: ignore[arg-type]
                        allow_value_changes=cfg.allow_value_changes)


def failed_outcome(where: str, error: BaseException) -> WriteOutcome:
    """An object that could not even be named (a bad manifest, an unknown type)."""
    from ..kube.writes import Result, WriteOutcome

    known = describe(error)
    message = known[0] if known else f"{type(error).__name__}: {error}"
    if where and where not in message:
        message = f"{where}: {message}"
    return WriteOutcome(api_version="", kind="", namespace=None, name=where, result=Result.failed, error=message)


def write_one(client: ClusterClient, target: ObjectTarget, plan: Plan,
              wopts: WriteOptions, backups: BackupRun | None) -> WriteOutcome:
    """``kube.writes.execute``, and a Secret's values scrubbed from everything its outcome says (notes,
    errors, refusals, patches): the last resort behind the structural redaction (base/redact.py), for a
    value that reached a message some other way — a server's error text, a simulated 500."""
    import dataclasses

    from ..base.redact import scrub_credentials, scrub_value, secret_texts
    from ..base.value import bounded_message
    from ..kube.writes import execute

    seen: list[Mapping[str, Any]] = []

    def recorded(obj: dict[str, Any]) -> WritePlan:
        seen.append(obj)
        return plan(obj)

    out = execute(client, target, recorded, wopts, backups)
    if out.error:
        out.error = bounded_message(scrub_credentials(out.error))  # printed on stdout, not by print_error
    texts = secret_texts(target.initial, target.manifest, *seen) if out.is_secret else frozenset()
    if not texts:
        return out
    said = ("notes", "error", "changes", "problems", "edits", "alternative", "alternative_edits", "patches",
            "requests")
    return dataclasses.replace(out, **{k: scrub_value(getattr(out, k), texts) for k in said})


def run_all(
    client: ClusterClient,
    items: Sequence[Selected],
    act: Callable[[ObjectTarget], WriteOutcome],
    cfg: WriteConfig,
    backups: BackupRun | None,
) -> int:
    """Act on every selected object, printing as it goes; returns the exit code."""
    from ..kube.errors import is_fatal
    from ..render.common import counted
    from ..render.migrate import Progress, render_json, render_outcome, render_summary, render_yaml

    text = cfg.output is WriteOutput.text
    out = sys.stdout
    outcomes: list[WriteOutcome] = []
    progress = Progress(len(items))
    fatal: BaseException | None = None
    interrupted = False
    in_flight: str | None = None
    input_errors = 0
    terminated = False
    restore_sigterm = _sigterm_interrupts()
    try:
        for i, sel in enumerate(items, start=1):
            if sel.target is None:
                assert sel.error is not None
                outcome = failed_outcome(sel.where, sel.error)
                known = describe(sel.error)
                input_errors += known is not None and known[1] == EXIT_USAGE
            else:
                progress.update(i, sel.target.describe())
                in_flight = sel.target.describe()
                try:
                    outcome = act(sel.target)
                except Exception as e:
                    if not is_fatal(e):
                        raise
                    fatal = e
                    break
            in_flight = None
            outcomes.append(outcome)
            if text:
                progress.clear()
                render_outcome(outcome, out, verbose=cfg.verbose)
                out.flush()
    except KeyboardInterrupt as e:
        # Ctrl-C or SIGTERM: what was done, the object under way and the backups are still reported
        interrupted = True
        terminated = isinstance(e, Terminated)
    finally:
        restore_sigterm()
        progress.clear()
    backup_dir = backups.directory if backups is not None and backups.used else None
    if text:
        if interrupted or len(outcomes) != 1 or cfg.verbose or outcomes[0].result.value != "unchanged" \
                or backup_dir:
            render_summary(outcomes, backup_dir, cfg.dry_run.value, out)
    else:
        render = render_yaml if cfg.output is WriteOutput.yaml else render_json
        render(cfg.command, cfg.dry_run.value, outcomes, backup_dir, out, interrupted=interrupted, in_flight=in_flight)
    out.flush()
    if interrupted:
        rest = len(items) - len(outcomes) - (1 if in_flight else 0)
        print_error(("terminated (SIGTERM)" if terminated else "interrupted")
                    + (f" while writing {in_flight} (it may or may not have been written)" if in_flight else "")
                    + f"; {len(outcomes)} of {counted(len(items), 'object')} done, {rest} not started; "
                    "running the command again is safe"
                    + (f"; backups: {backup_dir}" if backup_dir is not None else ""))
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    if fatal is not None:
        done = len(outcomes)
        print_error(f"{fatal} (stopped after {done} of {counted(len(items), 'object')}; a write that was under way "
                    "may or may not have been made: running the command again is safe)")
        return EXIT_FAILURE
    failed = sum(1 for o in outcomes if o.result.value == "failed")
    if not items:
        sys.stderr.write("No objects found.\n")
    if failed:
        if text:
            print_error(f"{failed} of {len(outcomes)} object{'s' if len(outcomes) != 1 else ''} failed")
        # a manifest that cannot be read is an input error, whatever else happened
        return EXIT_USAGE if input_errors else EXIT_FAILURE
    return 0


def _sigterm_interrupts() -> Callable[[], None]:
    """Until the returned function is called, SIGTERM (CI cancelling a job, ``timeout``, ``kill``)
    stops the run as Ctrl-C does — the summary, the object under way, the backup directory — and
    exits 143. Left alone where SIGTERM is ignored (the parent asked for that) or off the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def stop(signum: int, frame: object) -> None:
        raise Terminated()

    def restore() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, stop)
    return restore


def run_plans(
    cluster: options.ClusterArgs,
    sel: Selection,
    cfg: WriteConfig,
    planner: Callable[[KindRules], PlanFor],
) -> int:
    """Select, then plan, check and write each object with the same planning function."""
    from ..kube.kindrules import KindRules
    from .select import select

    sel.validate()
    return write_objects(cluster, cfg, lambda client: (list(select(client, sel)), planner(KindRules(client=client))))


def write_objects(
    cluster: options.ClusterArgs,
    cfg: WriteConfig,
    prepare: Callable[[ClusterClient], tuple[Sequence[Selected], PlanFor]],
) -> int:
    """Connect, name the objects and their plans (``prepare``), and write each one (:func:`run_all`)."""
    client = open_client(cluster)
    try:
        items, plan_for = prepare(client)
        backups = make_backups(client, cfg)
        wopts = write_options(cfg)
        return run_all(client, items, lambda t: write_one(client, t, plan_for(t), wopts, backups), cfg, backups)
    finally:
        client.close()
