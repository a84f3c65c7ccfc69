"""``kubectl fieldown migrate``, ``strip-last-applied`` and ``reset``: ownership rewrites that write.

fetch (TYPE/NAME, TYPE, -f, -l, -n, -A) → plan (the pure planners of ``kubectl_fieldown.remedies``,
on each read of the object) → write (``kube.writes.execute``: backup, resourceVersion-tested JSON
patches, re-plan and retry on concurrent changes) → render (one line per object, a summary).

Bulk runs go on past a failing object and exit 1 if any failed. Running a command twice changes
nothing the second time: every plan of an already-migrated object is empty.

This module also holds what the other writing commands (``handover``, ``undo``) share: target
selection, the planning path, the run loop and the common options; :func:`register` registers all five.
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
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, UsageError, describe, handle_errors, print_error
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
    "MigrateTo",
    "WriteOutput",
    "migrate",
    "register",
    "reset",
    "strip_last_applied",
]


class MigrateTo(str, enum.Enum):
    server_side = "server-side"
    client_side = "client-side"


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
        help="Objects: TYPE/NAME ..., TYPE followed by names, or TYPE alone with -l / -n / -A. "
        "Without any, every object of every type in the namespace (-n) or cluster (-A).",
        show_default=False,
        autocompletion=complete_resources,
    ),
]


def parse_retries(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"--max-retries must be a whole number, not {text!r}") from None
    if n < 0 or n > 100:
        raise UsageError(f"--max-retries must be between 0 and 100, not {n}")
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


def parse_paths(texts: Sequence[str], obj: Mapping[str, Any]) -> list[FieldPath]:
    from ..fieldpath import parse_path

    names = path_names(obj)
    return [parse_path(t, names) for t in texts]


# --- the run loop ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunConfig:
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


def make_backups(client: ClusterClient, cfg: RunConfig) -> BackupRun | None:
    from ..kube.writes import BackupRun, default_backup_root

    if cfg.dry_run is not options.DryRunStrategy.none:
        return None
    root = Path(cfg.backup_dir).expanduser() if cfg.backup_dir else default_backup_root()
    return BackupRun(root=root, command=cfg.command, server=client.server, context=client.context)


def write_options(cfg: RunConfig) -> WriteOptions:
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


def run_all(
    client: ClusterClient,
    items: Sequence[Selected],
    act: Callable[[ObjectTarget], WriteOutcome],
    cfg: RunConfig,
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
    except KeyboardInterrupt:
        # Ctrl-C: what was done, the object under way and the backups are still reported
        interrupted = True
    finally:
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
        print_error("interrupted" + (f" while writing {in_flight} (it may or may not have been written)"
                                     if in_flight else "")
                    + f"; {len(outcomes)} of {counted(len(items), 'object')} done, {rest} not started; "
                    "running the command again is safe"
                    + (f"; backups: {backup_dir}" if backup_dir is not None else ""))
        return EXIT_INTERRUPTED
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


def run_plans(
    cluster: options.ClusterArgs,
    sel: Selection,
    cfg: RunConfig,
    planner: Callable[[KindRules], Callable[[ObjectTarget], Callable[[dict[str, Any]], WritePlan]]],
) -> int:
    """Select, then plan, check and write each object with the same planning function."""
    from ..kube.kindrules import KindRules
    from ..kube.writes import execute

    sel.validate()
    client = open_client(cluster)
    try:
        items = list(select(client, sel))
        plan_for = planner(KindRules(client=client))
        backups = make_backups(client, cfg)
        wopts = write_options(cfg)
        return run_all(client, items, lambda t: execute(client, t, plan_for(t), wopts, backups), cfg, backups)
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
                deduced = schema.source.startswith(DEDUCED_SOURCE)
                if needs_schema and deduced:
                    # planning on a deduced schema (every list atomic) would record wrong ownership
                    raise MigrationError(f"no schema is known for {obj.get('kind')} {obj.get('apiVersion')}: "
                                         "ownership cannot be planned exactly (the server publishes no OpenAPI v3 "
                                         "for it)")
                if gvk not in kind_rules:
                    # without a real schema nothing is simulated
                    kind_rules[gvk] = None if deduced else rules_for(schema, "status" in res.subresources,
                                                                     kinds.is_builtin(gvk))
                rules = kind_rules[gvk]
                root = schema.root if needs_schema else DEDUCED
                # a write to the main resource cannot own the status of a kind with a status subresource
                reset = FieldSet([path_from_fields("status")]) if "status" in res.subresources else None
                ctx = PlanContext(root, reset, target.manifest)
                chosen = applier or default_applier(obj, spec)
                paths = parse_paths(keep, obj) if keep else []
                if receiver is not None and chosen is not None and chosen.manager == receiver:
                    # handed to the applier itself: its manifest sets them from now on
                    return write_plan(spec, obj, ctx, rules, now=_now(), applier=chosen, adds=paths)
                return write_plan(spec, obj, ctx, rules, now=_now(), applier=chosen, keep=paths)

            return plan

        return for_target

    return factory


def _own_applier(obj: dict[str, Any], spec: FixCommand) -> Applier | None:
    """The command's own applier (the migration's target), else the one in use."""
    from ..remedies.manifests import detected_applier

    return spec.applier or detected_applier(obj)


def _in_use(obj: dict[str, Any], spec: FixCommand) -> Applier | None:
    from ..remedies.manifests import detected_applier

    return detected_applier(obj)


def migrate_for_applier(text: str, from_managers: Sequence[str] | None, field_manager: str | None,
                        keep_last_applied: bool | None, all_fields: bool, checked_by: Applier | None) -> Applier:
    """``migrate --for KIND[:MANAGER]`` with the options that go with it."""
    from ..appliers import Applier, ApplierError, ApplierKind
    from ..remedies.commands import MIGRATE_FOR_KINDS

    kinds = ", ".join(k.value for k in MIGRATE_FOR_KINDS)
    kind_text, _, manager = text.partition(":")
    if kind_text not in [k.value for k in MIGRATE_FOR_KINDS]:
        raise UsageError(f"--for must be one of {kinds} (optionally KIND:MANAGER), not {text!r}")
    for flag, given in (("--field-manager", field_manager is not None), ("--applier", checked_by is not None),
                        ("--keep-last-applied/--drop-last-applied", keep_last_applied is not None),
                        ("--all-fields", all_fields)):
        if given:
            raise UsageError(f"{flag} does not go with --for: the applier decides (name its manager as "
                             "--for KIND:MANAGER)")
    kind = ApplierKind(kind_text)
    sources = list(from_managers or ())
    extra: dict[str, Any] = {}
    if kind is ApplierKind.argocd and sources:
        if len(sources) != 1 or any(c in sources[0] for c in "*?["):
            raise UsageError("--for argocd takes one --from-manager name: Argo CD's client-side-apply migration "
                             "manager")
        extra["csa_manager"] = sources[0]
    elif kind is ApplierKind.flux and sources:
        extra["override_managers"] = tuple(sources)
    elif sources:
        raise UsageError(f"--from-manager does not go with --for {kind.value}: it migrates the managers it always "
                         "migrates")
    try:
        return Applier.of(kind, manager or None, **extra)
    except ApplierError as e:
        raise UsageError(f"--for {text}: {e}") from None


def parse_applier(text: str | None) -> Applier | None:
    """``--applier KIND`` or ``KIND:MANAGER`` (``flux:helm-controller``, ``ssa:ci``)."""
    from ..appliers import APPLIER_KINDS, Applier, ApplierError

    if text is None:
        return None
    kind, _, manager = text.partition(":")
    if kind not in APPLIER_KINDS:
        raise UsageError(f"--applier must be one of {', '.join(APPLIER_KINDS)} (optionally KIND:MANAGER), not "
                         f"{text!r}")
    try:
        return Applier.of(kind, manager or None)
    except ApplierError as e:
        raise UsageError(f"--applier {text}: {e}") from None


ApplierOption = Annotated[
    str | None,
    typer.Option(
        "--applier",
        metavar="KIND[:MANAGER]",
        help="The applier whose next apply the write is checked against: kubectl, kubectl-client-side, argocd, "
        "flux, helm or ssa, optionally with its manager (flux:helm-controller, ssa:ci). Default: the command's "
        "own, else the one managing the object.",
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


# --- the commands ------------------------------------------------------------------------------

MIGRATE_HELP = """Move objects between client-side and server-side apply, keeping their ownership exact.

\b
--to server-side: the fields of the source managers (default kubectl-client-side-apply; globs)
become an Apply entry of --field-manager (default kubectl), per subresource and for every
apiVersion, so that the next 'kubectl apply --server-side' of the same manifest changes nothing,
and of the manifest minus a field deletes that field.
--to client-side: the Apply entry of --from-manager (default kubectl) becomes a
kubectl-client-side-apply Update entry, and the last-applied annotation is rebuilt from the fields
it owns, so that the next plain 'kubectl apply' behaves the same way.
--for argocd|flux|helm|kubectl: what that applier's first server-side sync would do to the
object (its managers folded into its Apply entry), done now; see docs/migrate.md.

\b
Every write is a JSON patch guarded by the object's resourceVersion; an object that changes
meanwhile is read, planned and written again. Each object is saved before its first write
(--backup-dir); 'kubectl fieldown undo' puts managedFields and the annotation back."""

MIGRATE_EPILOG = """\b
Examples:
  # Preview, then migrate one Deployment from client-side to server-side apply
  kubectl fieldown migrate deploy/web --to server-side --dry-run=client
  kubectl fieldown migrate deploy/web --to server-side
\b
  # A whole namespace, handing the fields of every kubectl* Update manager to flux
  kubectl fieldown migrate -n shop --to server-side --from-manager 'kubectl*' --field-manager flux
\b
  # Do now what Flux's first server-side sync would do (checked: when that would lose a value,
  # it refuses and names the fix that keeps every value)
  kubectl fieldown migrate -n shop --for flux --dry-run=client
\b
  # Back to client-side apply
  kubectl fieldown migrate -f web.yaml --to client-side
\b
  # Undo a run (the directory is printed at the end of each run)
  kubectl fieldown undo ~/.kube/fieldown/backups/20260101T120000Z-1a2b3c4d"""


@handle_errors
def migrate(
    resources: Resources = None,
    to: Annotated[
        MigrateTo | None,
        typer.Option("--to", metavar="server-side|client-side", help="Where to move the objects.",
                     case_sensitive=False, show_default=False),
    ] = None,
    from_manager: Annotated[
        list[str] | None,
        typer.Option(
            "--from-manager",
            metavar="NAME|GLOB",
            help="--to server-side: the Update managers whose fields move (repeatable, shell globs; "
            "default kubectl-client-side-apply). --to client-side: the one Apply manager to turn into "
            "client-side apply (default kubectl).",
            show_default=False,
        ),
    ] = None,
    field_manager: Annotated[
        str | None,
        options.field_manager_option("--to server-side: the Apply manager that gets the fields (default kubectl)."),
    ] = None,
    keep_last_applied: Annotated[
        bool | None,
        typer.Option(
            "--keep-last-applied/--drop-last-applied",
            help="--to server-side: keep the last-applied annotation (default when the target manager is "
            "kubectl, so a later plain 'kubectl apply' still works) or remove it (default otherwise).",
            show_default=False,
        ),
    ] = None,
    all_fields: Annotated[
        bool,
        typer.Option("--all-fields", help="--to server-side: move every field of the source managers, not only "
                     "those the target's manifest sets (the last-applied annotation, its Apply entry, -f)."),
    ] = False,
    for_applier: Annotated[
        str | None,
        typer.Option(
            "--for",
            metavar="KIND[:MANAGER]",
            help="Do now, guarded and undoable, what that applier's first server-side sync would do (argocd, "
            "flux, helm or kubectl; implies --to server-side): fold the same managers into its Apply entry, "
            "but only the fields its manifest sets and never a subresource entry, and say where that differs "
            "from its own migration. --from-manager: Argo CD's client-side-apply migration manager, Flux's "
            "--override-manager names.",
            show_default=False,
        ),
    ] = None,
    applier: ApplierOption = None,
    allow_value_changes: AllowValueChanges = False,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..managedfields import KUBECTL, KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import MigrateFor, MigrateToClientSide, MigrateToServerSide

    if for_applier is not None:
        if to is MigrateTo.client_side:
            raise UsageError("--for prepares a switch to server-side apply: it cannot go with --to client-side")
        to = MigrateTo.server_side
    if to is None:
        raise UsageError("--to is required: server-side or client-side (or --for APPLIER)")
    retries = parse_retries(max_retries)
    named = parse_applier(applier)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    what = f"migrate --for {for_applier}" if for_applier is not None else f"migrate --to {to.value}"
    cfg = RunConfig(what, dry_run, output, verbose, backup_dir, retries, allow_value_changes)
    spec: MigrateToServerSide | MigrateToClientSide | MigrateFor
    if for_applier is not None:
        spec = MigrateFor(migrate_for_applier(for_applier, from_manager, field_manager, keep_last_applied,
                                              all_fields, named))
    elif to is MigrateTo.server_side:
        if field_manager == KUBECTL_CLIENT_SIDE_APPLY:
            raise UsageError(f"{KUBECTL_CLIENT_SIDE_APPLY} is client-side apply's manager: it cannot be the "
                             "server-side applier")
        spec = MigrateToServerSide(tuple(from_manager or [KUBECTL_CLIENT_SIDE_APPLY]), field_manager or KUBECTL,
                                   keep_last_applied, all_fields)
    else:
        if field_manager is not None:
            raise UsageError("--field-manager is for --to server-side; client-side apply always records "
                             f"{KUBECTL_CLIENT_SIDE_APPLY}")
        if keep_last_applied is not None:
            raise UsageError("--keep-last-applied/--drop-last-applied are for --to server-side: client-side apply "
                             "needs the annotation")
        if all_fields:
            raise UsageError("--all-fields is for --to server-side")
        managers = list(from_manager or [KUBECTL])
        if len(managers) != 1 or any(c in managers[0] for c in "*?["):
            raise UsageError("--to client-side takes one --from-manager name (no globs): the Apply manager whose "
                             "manifest becomes the last-applied annotation")
        spec = MigrateToClientSide(managers[0])
    code = run_plans(cluster, sel, cfg, write_planner(lambda obj: spec, applier=named, default_applier=_own_applier))
    if code:
        raise typer.Exit(code)
    return 0


STRIP_HELP = """Remove fields from the last-applied annotation and from the client-side apply manager.

\b
The documented way to give a field that is in your manifest to an imperative writer or a
controller (kubectl scale, an autoscaler): afterwards the next 'kubectl apply' of the manifest
without the field leaves the field alone instead of deleting it. Paths use the API server's
syntax: .spec.replicas, .spec.containers[name="web"].image, .metadata.labels.app.kubernetes.io/name"""

STRIP_EPILOG = """\b
Examples:
  # Let the HorizontalPodAutoscaler own replicas; then remove replicas from web.yaml
  kubectl fieldown strip-last-applied deploy/web --field .spec.replicas
  kubectl apply -f web.yaml"""


@handle_errors
def strip_last_applied(
    resources: Resources = None,
    field: Annotated[
        list[str] | None,
        typer.Option("--field", metavar="PATH", help="A field to forget (repeatable).", show_default=False),
    ] = None,
    client_side_manager: Annotated[
        list[str] | None,
        typer.Option(
            "--client-side-manager",
            metavar="GLOB",
            help="The client-side apply managers to remove the fields from (repeatable; default "
            "kubectl-client-side-apply).",
            show_default=False,
        ),
    ] = None,
    applier: ApplierOption = None,
    allow_value_changes: AllowValueChanges = False,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..fieldpath import parse_path
    from ..managedfields import KUBECTL_CLIENT_SIDE_APPLY
    from ..remedies.commands import StripLastApplied

    paths = list(field or ())
    if not paths:
        raise UsageError("name the fields to strip with --field PATH (e.g. --field .spec.replicas)")
    for p in paths:
        parse_path(p)  # syntax errors before anything is fetched
    retries = parse_retries(max_retries)
    named = parse_applier(applier)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    cfg = RunConfig("strip-last-applied", dry_run, output, verbose, backup_dir, retries, allow_value_changes)
    managers = tuple(client_side_manager or [KUBECTL_CLIENT_SIDE_APPLY])

    def spec_for(obj: dict[str, Any]) -> FixCommand:
        return StripLastApplied(tuple(parse_paths(paths, obj)), managers)

    # the stripped fields go to another writer: client-side apply's next patch must leave their values
    code = run_plans(cluster, sel, cfg, write_planner(spec_for, applier=named, default_applier=_own_applier,
                                                      keep=paths))
    if code:
        raise typer.Exit(code)
    return 0


RESET_HELP = """Clear managedFields, give every field that is set to one manager, or drop stale managers.

\b
Without options, managedFields become [{}]: nothing is tracked until the next server-side apply,
which records every field already set as owned by 'before-first-apply' (no conflicts for anyone
until then). With --to-manager NAME, NAME becomes the one Apply manager of every field currently set
(the status excepted when the kind has a status subresource): its next apply then removes every
field that is not in its manifest. With --drop-manager NAME, the entries of NAME go (a previous
applier, as flux-operator's 'migrate owner'): the fields only it owned keep their values, unowned.

\b
Before writing, the next apply of the applier (--applier, else --to-manager's, else the one
managing the object) is played on the engine; a write after which it would delete or change a
value you did not ask to change is refused unless --allow-value-changes."""

RESET_EPILOG = """\b
Examples:
  kubectl fieldown reset widget/w1 --dry-run=client
  kubectl fieldown reset deploy/web --drop-manager kustomize-controller
  kubectl fieldown reset deploy/web --to-manager argocd-controller"""


@handle_errors
def reset(
    resources: Resources = None,
    to_manager: Annotated[
        str | None,
        typer.Option("--to-manager", metavar="NAME",
                     help="Make NAME (an Apply manager) the owner of every field currently set.", show_default=False),
    ] = None,
    drop_manager: Annotated[
        list[str] | None,
        typer.Option("--drop-manager", metavar="NAME|GLOB",
                     help="Remove every entry of this manager (repeatable, shell globs); its fields keep their "
                     "values.", show_default=False),
    ] = None,
    applier: ApplierOption = None,
    allow_value_changes: AllowValueChanges = False,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    dry_run: DryRunOption = options.DryRunStrategy.none,
    output: Output = WriteOutput.text,
    backup_dir: BackupDir = None,
    max_retries: MaxRetries = "5",
    verbose: Verbose = False,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
) -> int:
    from ..remedies.commands import DropManagers, Reset

    if to_manager is not None and not to_manager.strip():
        raise UsageError("--to-manager needs a manager name")
    if to_manager is not None and drop_manager:
        raise UsageError("--to-manager and --drop-manager do not go together")
    retries = parse_retries(max_retries)
    named = parse_applier(applier)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    what = f" --to-manager {to_manager}" if to_manager else "".join(f" --drop-manager {m}" for m in drop_manager or ())
    cfg = RunConfig("reset" + what, dry_run, output, verbose, backup_dir, retries, allow_value_changes)
    spec: FixCommand
    if drop_manager:
        spec = DropManagers(tuple(drop_manager))
    else:
        spec = Reset(to_manager)
        if to_manager is None and output is WriteOutput.text and dry_run is options.DryRunStrategy.none:
            sys.stderr.write("warning: after a reset nothing is tracked until the next server-side apply, which "
                             "records every field already set as owned by before-first-apply\n")
    code = run_plans(cluster, sel, cfg, write_planner(lambda obj: spec, applier=named, default_applier=_own_applier,
                                                      needs_schema=to_manager is not None))
    if code:
        raise typer.Exit(code)
    return 0


def register(app: typer.Typer) -> None:
    from . import handover, undo

    app.command("migrate", help=MIGRATE_HELP, epilog=MIGRATE_EPILOG, no_args_is_help=False)(migrate)
    app.command("strip-last-applied", help=STRIP_HELP, epilog=STRIP_EPILOG, no_args_is_help=False)(strip_last_applied)
    handover.register(app)
    app.command("reset", help=RESET_HELP, epilog=RESET_EPILOG, no_args_is_help=False)(reset)
    undo.register(app)
