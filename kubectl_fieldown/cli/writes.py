"""What the write commands share: ``migrate``, ``strip-last-applied``, ``handover``, ``reset``, ``undo``.

Each command lives in its own module (cli/<command>.py) and declares only its own flags and what
it plans; this module holds the rest, once:

* the flags several of them take (``--dry-run``, ``-o``, ``--backup-dir``, ``--max-retries``,
  ``-v``, ``--applier``, ``--allow-value-changes``, the object arguments);
* the planning path every write goes through (:func:`write_planner`: the command's plan on each
  read of the object, checked against the applier's next apply; schemas from
  :class:`kubectl_fieldown.kube.kindrules.KindRules`);
* the run loop (:func:`run_plans`, :func:`run_all`): fetch (:mod:`.select`) → plan → write
  (``kube.writes.execute``: backup, resourceVersion-tested JSON patches, re-plan and retry on
  concurrent changes) → render (one line per object as it goes, a summary), and the exit code.

Bulk runs go on past a failing object and exit 1 if any failed (2 if an input could not be
read). Running a command twice changes nothing the second time: every plan of an
already-written object is empty.
"""

from __future__ import annotations

import contextlib
import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .completion import complete_resources
from .errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Terminated,
    UsageError,
    describe,
    print_error,
)
from .select import Selected, Selection, select

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..fieldmanager import ResourceRules
    from ..fieldpath import Path as FieldPath
    from ..fieldpath.pathstring import FieldNames
    from ..kube.client import ClusterClient
    from ..kube.kindrules import KindRules
    from ..kube.writes import BackupRun, ObjectTarget, WriteOptions, WriteOutcome
    from ..remedies.commands import FixCommand
    from ..remedies.writeplan import WritePlan
    from ..schema.types import GroupVersionKind

__all__ = [
    "AllObjects",
    "AllowValueChanges",
    "ApplierOption",
    "BackupDir",
    "DryRunOption",
    "MaxRetries",
    "Output",
    "Resources",
    "Verbose",
    "WriteConfig",
    "WriteOutput",
    "check_fields",
    "make_backups",
    "open_client",
    "own_applier",
    "parse_applier",
    "parse_paths",
    "parse_retries",
    "run_all",
    "run_plans",
    "write_one",
    "write_options",
    "write_planner",
]


class WriteOutput(str, enum.Enum):
    text = "text"
    json = "json"


# --- options shared by the writing commands ------------------------------------------------------

Output = Annotated[
    WriteOutput,
    options.output_option("Output format: text (one line per object and a summary) or json (docs/migrate.md)."),
]

BackupDir = Annotated[
    str | None,
    typer.Option(
        "--backup-dir",
        metavar="DIR",
        help="Where to save each object before its first write, one directory per run "
        "(default: $FIELDOWN_BACKUP_DIR, else ~/.kube/fieldown/backups). 'kubectl fieldown undo' restores them.",
        show_default=False,
    ),
]

MaxRetries = Annotated[
    str,
    typer.Option(
        "--max-retries",
        metavar="N",
        help="How many times to read, re-plan and write an object again when it changed meanwhile.",
    ),
]

Verbose = Annotated[bool, typer.Option("-v", "--verbose", help="Say what was done to each object and why.")]

DryRunOption = Annotated[
    options.DryRunStrategy,
    typer.Option(
        "--dry-run",
        metavar="none|client|server",
        help='"client": print the exact JSON patches per object and write nothing (no backup either). '
        '"server": also send them with dryRun=All, so the server checks them; nothing is stored.',
        case_sensitive=False,
    ),
]

Resources = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[TYPE[.GROUP]/NAME ... | TYPE[.GROUP] [NAME ...]]",
        help="Objects: TYPE/NAME ..., TYPE followed by names, or TYPE alone (every object of the type, with -l / "
        "-n / -A). Without any, -l SELECTOR or --all (every object of every type in the namespace or, with -A, "
        "the cluster).",
        show_default=False,
        autocompletion=complete_resources,
    ),
]

AllObjects = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Write every object of every type in the namespace (-n, else the context's) or, with -A, the "
        "cluster. Required when no TYPE, NAME, -f or -l names the objects (as kubectl delete requires it).",
    ),
]


ApplierOption = Annotated[
    str | None,
    typer.Option(
        "--applier",
        metavar="KIND[:MANAGER]",
        help="The applier whose next apply the write is checked against: kubectl, kubectl-client-side, argocd, "
        "flux, helm or ssa, optionally with its manager (flux:helm-controller, ssa:ci) and, for Helm, the "
        "previous release's apply method (helm:previous=server-side). Default: the command's own, else the one "
        "managing the object.",
        show_default=False,
    ),
]

AllowValueChanges = Annotated[
    bool,
    typer.Option(
        "--allow-value-changes",
        help="Write even when the check finds that the write, or the applier's next apply after it, would change "
        "or delete a value you did not ask to change (the values are listed either way).",
    ),
]


def parse_retries(text: str) -> int:
    from ..value import excerpt

    if len(text.strip().lstrip("+-0")) > 3 and text.strip().lstrip("+-").isdigit():
        raise UsageError(f"--max-retries must be between 0 and 100, not {excerpt(text)}")
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"--max-retries must be a whole number, not {excerpt(text)!r}") from None
    if n < 0 or n > 100:
        raise UsageError(f"--max-retries must be between 0 and 100, not {excerpt(text)}")
    return n


# --- decode: field names ----------------------------------------------------------------------


def path_names(obj: Mapping[str, Any]) -> FieldNames:
    """Group dotted names (``.metadata.labels.app.kubernetes.io/name``) by what the object, its
    last-applied manifest or its managedFields have."""
    import json

    from ..fieldpath import FieldSet
    from ..fieldpath.lookup import names_in
    from ..managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsError, decode_entries

    md = obj.get("metadata") or {}
    docs: list[Any] = [obj]
    la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if isinstance(la, str):
        with contextlib.suppress(ValueError):
            docs.append(json.loads(la))
    owned = FieldSet()
    try:
        for e in decode_entries(md.get("managedFields")):
            owned = owned.union(e.fields)
    except ManagedFieldsError:
        pass
    return names_in(docs, owned)


def check_fields(texts: Sequence[str]) -> None:
    """``--field`` values, checked before anything is fetched: their syntax, and that a manager can
    own them at all — ``.kind``, ``.apiVersion``, ``.metadata`` itself, ``.metadata.name`` and the other
    fields the server strips from every manager's set are nobody's, so nothing can be handed over
    (and stripping them from the last-applied annotation would break it)."""
    from ..fieldpath import parse_path
    from ..managedfields import never_owned
    from ..value import excerpt

    for text in texts:
        why = never_owned(parse_path(text))
        if why is not None:
            raise UsageError(f"--field {excerpt(text)}: {why}; name a field a manager can own "
                             "(under .spec, .metadata.labels, .metadata.annotations, ...)")


def parse_paths(texts: Sequence[str], obj: Mapping[str, Any]) -> list[FieldPath]:
    from ..fieldpath import parse_path

    names = path_names(obj)
    return [parse_path(t, names) for t in texts]


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


def write_one(client: ClusterClient, target: ObjectTarget, plan: Callable[[dict[str, Any]], WritePlan],
              wopts: WriteOptions, backups: BackupRun | None) -> WriteOutcome:
    """``kube.writes.execute``, and a Secret's values scrubbed from everything its outcome says (notes,
    errors, refusals, patches): the last resort behind the structural redaction (redact.py), for a
    value that reached a message some other way — a server's error text, a simulated 500."""
    import dataclasses

    from ..kube.writes import execute
    from ..redact import scrub_credentials, scrub_value, secret_texts
    from ..value import bounded_message

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
    from ..render.migrate import Progress, render_json, render_outcome, render_summary

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
        render_json(cfg.command, cfg.dry_run.value, outcomes, backup_dir, out, interrupted=interrupted,
                    in_flight=in_flight)
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
    planner: Callable[[KindRules], Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]],
) -> int:
    """Select, then plan, check and write each object with the same planning function."""
    from ..kube.kindrules import KindRules

    sel.validate()
    client = open_client(cluster)
    try:
        items = list(select(client, sel))
        plan_for = planner(KindRules(client=client))
        backups = make_backups(client, cfg)
        wopts = write_options(cfg)
        return run_all(client, items, lambda t: write_one(client, t, plan_for(t), wopts, backups), cfg, backups)
    finally:
        client.close()


# --- plan: every write command plans through the same path ------------------------------------


# the source of a schema the tool made up for want of one (every list atomic)
DEDUCED_SOURCE = "deduced"


def _now() -> str:
    import time

    from ..managedfields import format_time

    return format_time(time.time())


def write_planner(
    spec_for: Callable[[dict[str, Any]], FixCommand],
    *,
    applier: Applier | None,
    default_applier: Callable[[dict[str, Any], FixCommand], Applier | None],
    keep: Sequence[str] = (),
    receiver: str | None = None,
    needs_schema: bool = True,
) -> Callable[[KindRules], Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]]:
    """The planning function of a write command: for each object, the command's plan
    (:mod:`kubectl_fieldown.remedies.commands`), its requests, and the check that neither they nor
    the applier's next apply (``--applier``, else the command's own, else the one in use) lose a
    value (:func:`kubectl_fieldown.remedies.writeplan.write_plan`). ``keep`` are fields handed to
    another writer: the applier's next manifest leaves them out, and their values must stay — unless
    the applier is that writer (``receiver``)."""

    def factory(kinds: KindRules) -> Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]:
        from ..fieldpath import FieldSet, path_from_fields
        from ..kube.kindrules import rules_for
        from ..remedies.commands import PlanContext
        from ..remedies.plans import MigrationError
        from ..remedies.writeplan import write_plan
        from ..schema.types import DEDUCED, GroupVersionKind

        client = kinds.client
        assert client is not None
        # every read of an object is planned again: build each kind's engine rules once
        kind_rules: dict[GroupVersionKind, ResourceRules | None] = {}

        def for_target(target: ObjectTarget) -> Callable[[dict[str, Any]], WritePlan]:
            def plan(obj: dict[str, Any]) -> WritePlan:
                spec = spec_for(obj)
                api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
                gvk = GroupVersionKind.from_api_version(api_version, kind)
                res = client.discovery.resolve_kind(api_version, kind)
                schema = kinds.lookup(gvk, res)
                chosen = applier or default_applier(obj, spec)
                at = applier_version(obj, chosen, target.manifest)
                if at != api_version and at in kinds.versions(gvk) and kinds.converts_by_renaming(gvk):
                    # The applier applies at another version of this CRD than the one read (discovery's
                    # preferred): plan, check and write there, where its entries and manifest name their
                    # fields by that version's schema. Conversion None: the object only renames its
                    # apiVersion, and the executor sends the write to that version's endpoint.
                    obj = {**obj, "apiVersion": at}
                    api_version = at
                    gvk = GroupVersionKind.from_api_version(api_version, kind)
                    res = client.discovery.resolve_kind(api_version, kind)
                    schema = kinds.lookup(gvk, res)
                deduced = schema.source.startswith(DEDUCED_SOURCE)
                if needs_schema and deduced:
                    # planning on a deduced schema (every list atomic) would record wrong ownership
                    raise MigrationError(f"no schema is known for {obj.get('kind')} {obj.get('apiVersion')}: "
                                         "ownership cannot be planned exactly (the server publishes no OpenAPI v3 "
                                         "for it)")
                if gvk not in kind_rules:
                    # without a real schema nothing is simulated
                    kind_rules[gvk] = None if deduced else rules_for(schema, "status" in res.subresources,
                                                                     kinds.is_builtin(gvk), kinds.versions(gvk))
                rules = kind_rules[gvk]
                root = schema.root if needs_schema else DEDUCED
                # a write to the main resource cannot own the status of a kind with a status subresource
                reset = FieldSet([path_from_fields("status")]) if "status" in res.subresources else None
                ctx = PlanContext(root, reset, target.manifest)
                paths = parse_paths(keep, obj) if keep else []
                if receiver is not None and chosen is not None and chosen.manager == receiver:
                    # handed to the applier itself: its manifest sets them from now on
                    return write_plan(spec, obj, ctx, rules, now=_now(), applier=chosen, adds=paths)
                return write_plan(spec, obj, ctx, rules, now=_now(), applier=chosen, keep=paths)

            return plan

        return for_target

    return factory


def applier_version(obj: Mapping[str, Any], applier: Applier | None, manifest: Mapping[str, Any] | None) -> str:
    """The apiVersion ``applier`` will apply ``obj`` at: its manifest's (``-f``), else the version of
    its own entries (its Apply entry; else the newest Update entry of its name or of the client-side
    manager: Helm 3, kubectl before it went server-side), else that of the last-applied annotation,
    else the version the object was read at."""
    import json

    from ..managedfields import (
        APPLY,
        KUBECTL_CLIENT_SIDE_APPLY,
        LAST_APPLIED_ANNOTATION,
        UPDATE,
        ManagedFieldsError,
        decode_entries,
    )

    read = str(obj.get("apiVersion") or "")
    if manifest is not None and isinstance(manifest.get("apiVersion"), str):
        return str(manifest["apiVersion"])
    if applier is None:
        return read
    try:
        entries = [e for e in decode_entries((obj.get("metadata") or {}).get("managedFields")) if not e.subresource]
    except ManagedFieldsError:
        return read
    applies = [e for e in entries if e.manager == applier.manager and e.operation == APPLY]
    if applies:
        return applies[0].api_version
    updaters = {applier.manager, KUBECTL_CLIENT_SIDE_APPLY}
    updates = sorted((e for e in entries if e.manager in updaters and e.operation == UPDATE),
                     key=lambda e: e.time or "")
    if updates:
        return updates[-1].api_version
    la = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    try:
        doc = json.loads(la) if isinstance(la, str) else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str):
        return str(doc["apiVersion"])
    return read


def own_applier(obj: dict[str, Any], spec: FixCommand) -> Applier | None:
    """The command's own applier (the migration's target), else the one in use; for a handover the
    one in use (:func:`kubectl_fieldown.remedies.commands.checked_applier`)."""
    from ..remedies.commands import checked_applier

    return checked_applier(spec, obj)


def parse_applier(text: str | None) -> Applier | None:
    """``--applier KIND``, ``KIND:MANAGER`` (``flux:helm-controller``, ``ssa:ci``) or Helm's
    ``helm:previous=server-side``."""
    from ..appliers import ApplierError, parse_applier_spec

    if text is None:
        return None
    try:
        return parse_applier_spec(text)
    except ApplierError as e:
        raise UsageError(f"--applier {e}") from None
