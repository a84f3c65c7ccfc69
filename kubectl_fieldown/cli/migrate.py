"""``kubectl fieldown migrate``, ``strip-last-applied`` and ``reset``: ownership rewrites that write.

fetch (TYPE/NAME, TYPE, -f, -l, -n, -A) → plan (the pure planners of ``kubectl_fieldown.migration``,
on each read of the object) → write (``kube.writes.execute``: backup, resourceVersion-tested JSON
patches, re-plan and retry on concurrent changes) → render (one line per object, a summary).

Bulk runs go on past a failing object and exit 1 if any failed. Running a command twice changes
nothing the second time: every plan of an already-migrated object is empty.

This module also holds what the other writing commands (``handover``, ``undo``) share: target
selection, schema lookup, the run loop and the common options; :func:`register` registers all five.
"""

from __future__ import annotations

import contextlib
import enum
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .errors import EXIT_FAILURE, UsageError, handle_errors, print_error

if TYPE_CHECKING:
    from ..fieldpath import Path as FieldPath
    from ..kube.client import ClusterClient
    from ..kube.discovery import ResourceInfo
    from ..kube.writes import BackupRun, ObjectTarget, WriteOptions, WriteOutcome
    from ..migration import Migration
    from ..schema.registry import SchemaRegistry
    from ..schema.types import Type

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


# --- fetch: which objects ----------------------------------------------------------------------

# never worth rewriting, and numerous: kubectl leaves them out of "all" too
_SKIPPED_TYPES = frozenset({"events", "events.events.k8s.io"})


@dataclass(frozen=True)
class Selected:
    """An object to write, or why it could not be named (``where`` says which argument)."""

    where: str
    target: ObjectTarget | None = None
    error: BaseException | None = None


@dataclass(frozen=True)
class Selection:
    args: list[str]
    filenames: list[str]
    recursive: bool
    selector: str | None
    cluster: options.ClusterArgs

    def validate(self) -> None:
        if self.filenames and self.args:
            raise UsageError("when paths, URLs, or stdin is provided as input, you may not specify resource "
                             "arguments as well")
        if self.filenames and self.selector is not None:
            raise UsageError("-l cannot be used with -f: the manifests name the objects")
        if not self.args and not self.filenames and self.selector is None and self.cluster.namespace is None \
                and not self.cluster.all_namespaces:
            raise UsageError("name the objects: TYPE/NAME, TYPE [NAME...], -f FILE, or a whole namespace "
                             "(-n NAMESPACE), selection (-l SELECTOR) or cluster (-A)")
        if self.args:
            from .show import parse_live_args

            parse_live_args(self.args, self.selector, self.cluster.all_namespaces)


def select(client: ClusterClient, sel: Selection) -> Iterator[Selected]:
    """The objects a selection names. Listed objects carry their LIST copy as the first read."""
    from ..kube.client import ALL_NAMESPACES
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import ObjectTarget

    namespace = sel.cluster.namespace or client.default_namespace
    list_ns: Any = ALL_NAMESPACES if sel.cluster.all_namespaces else namespace

    def listed(res: ResourceInfo, label: str) -> Iterator[Selected]:
        try:
            for page in client.list_pages(res, list_ns, label_selector=sel.selector):
                for item in page:
                    md = item.get("metadata") or {}
                    yield Selected(label, ObjectTarget(res, str(md.get("name")), md.get("namespace"), item))
        except KubeError as e:
            if is_fatal(e):
                raise
            yield Selected(label, error=e)

    if sel.filenames:
        yield from _from_manifests(client, sel, namespace)
        return
    if sel.args:
        from .show import parse_live_args

        request = parse_live_args(sel.args, sel.selector, sel.cluster.all_namespaces)
        resolved: dict[str, ResourceInfo] = {}
        for typ, name in request.targets:
            label = f"{typ}/{name}" if name else typ
            try:
                res = resolved.get(typ)
                if res is None:
                    res = resolved[typ] = client.discovery.resolve(typ)
            except KubeError as e:
                if is_fatal(e):
                    raise
                yield Selected(label, error=e)
                continue
            if name is not None:
                yield Selected(label, ObjectTarget(res, name, namespace if res.namespaced else None))
            else:
                yield from listed(res, label)
        return
    seen: set[tuple[str, str]] = set()
    for res in client.discovery.resources():
        if (res.group, res.resource) in seen or res.group_resource in _SKIPPED_TYPES:
            continue
        seen.add((res.group, res.resource))
        if not {"list", "patch"} <= res.verbs or "/" in res.resource:
            continue
        if not res.namespaced and not sel.cluster.all_namespaces:
            continue
        yield from listed(res, res.group_resource)


def _from_manifests(client: ClusterClient, sel: Selection, namespace: str) -> Iterator[Selected]:
    from ..kube.errors import KubeError, is_fatal
    from ..kube.writes import ObjectTarget
    from ..sources import SourceError, live_name, load_sources

    for path in sel.filenames:
        result = load_sources(path, recursive=sel.recursive)
        for err in result.errors:
            yield Selected(str(err), error=err)
        for doc in result.documents:
            try:
                named = live_name(doc)
            except SourceError as e:
                yield Selected(doc.where, error=e)
                continue
            try:
                res = client.discovery.resolve_kind(named.api_version, named.kind)
            except KubeError as e:
                if is_fatal(e):
                    raise
                yield Selected(doc.where, error=e)
                continue
            ns = named.namespace or namespace
            yield Selected(doc.where, ObjectTarget(res, named.name, ns if res.namespaced else None))


# --- decode: schemas ---------------------------------------------------------------------------


DEDUCED_SOURCE = "deduced"


class Schemas:
    """Each kind's schema, from the cluster's OpenAPI v3 (fetched once per group-version), and its
    resource type (discovery)."""

    def __init__(self, client: ClusterClient) -> None:
        from ..schema.registry import SchemaRegistry

        self._client = client
        self.registry: SchemaRegistry = SchemaRegistry()
        self._fetched: set[str] = set()

    def root(self, obj: Mapping[str, Any]) -> Type:
        """The schema of ``obj``'s kind; a MigrationError when none is known, because planning on a
        deduced schema (every list atomic) would record wrong ownership."""
        from ..kube.errors import KubeError, NotFound, is_fatal
        from ..migration import MigrationError

        gv = str(obj.get("apiVersion") or "")
        if gv not in self._fetched:
            self._fetched.add(gv)
            try:
                self.registry.add_openapi_v3(self._client.openapi.document(gv), f"cluster OpenAPI v3 ({gv})")
            except NotFound:
                pass  # the offline built-in schemas may still know the kind
            except KubeError as e:
                if is_fatal(e):
                    raise
        schema = self.registry.for_object(obj)
        if schema.source.startswith(DEDUCED_SOURCE):
            raise MigrationError(f"no schema is known for {obj.get('kind')} {gv}: ownership cannot be planned "
                                 "exactly (the server publishes no OpenAPI v3 for it)")
        return schema.root


    def subresources(self, obj: Mapping[str, Any]) -> frozenset[str]:
        res = self._client.discovery.resolve_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        return res.subresources


def path_exists(obj: Mapping[str, Any]) -> Callable[[FieldPath, Any], bool]:
    """Group dotted names (``.metadata.labels.app.kubernetes.io/name``) by what the object, its
    last-applied manifest or its managedFields have."""
    import json

    from ..fieldpath import FieldSet
    from ..fieldpath.lookup import exists_in
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
    return exists_in(docs, owned)


def parse_paths(texts: Sequence[str], obj: Mapping[str, Any]) -> list[FieldPath]:
    from ..fieldpath import parse_path

    exists = path_exists(obj)
    return [parse_path(t, exists=exists) for t in texts]


# --- the run loop ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunConfig:
    command: str
    dry_run: options.DryRunStrategy
    output: WriteOutput
    verbose: bool
    backup_dir: str | None
    max_retries: int


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
    return WriteOptions(dry_run=mode, max_retries=cfg.max_retries)  # type: ignore[arg-type]


def failed_outcome(where: str, error: BaseException) -> WriteOutcome:
    """An object that could not even be named (a bad manifest, an unknown type)."""
    from ..kube.writes import Result, WriteOutcome
    from .errors import describe

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
    from ..render.migrate import Progress, render_json, render_outcome, render_summary

    text = cfg.output is WriteOutput.text
    out = sys.stdout
    outcomes: list[WriteOutcome] = []
    progress = Progress(len(items))
    fatal: BaseException | None = None
    try:
        for i, sel in enumerate(items, start=1):
            if sel.target is None:
                assert sel.error is not None
                outcome = failed_outcome(sel.where, sel.error)
            else:
                progress.update(i, sel.target.describe())
                try:
                    outcome = act(sel.target)
                except Exception as e:
                    if not is_fatal(e):
                        raise
                    fatal = e
                    break
            outcomes.append(outcome)
            if text:
                progress.clear()
                render_outcome(outcome, out, verbose=cfg.verbose)
                out.flush()
    finally:
        progress.clear()
    backup_dir = backups.directory if backups is not None and backups.used else None
    if text:
        if len(outcomes) != 1 or cfg.verbose or outcomes[0].result.value != "unchanged" or backup_dir:
            render_summary(outcomes, backup_dir, cfg.dry_run.value, out)
    else:
        render_json(cfg.command, cfg.dry_run.value, outcomes, backup_dir, out)
    out.flush()
    if fatal is not None:
        done = len(outcomes)
        print_error(f"{fatal} (stopped after {done} of {len(items)} objects; a write that was under way may or "
                    "may not have been made: running the command again is safe)")
        return EXIT_FAILURE
    failed = sum(1 for o in outcomes if o.result.value == "failed")
    if not items:
        sys.stderr.write("No objects found.\n")
    if failed:
        if text:
            print_error(f"{failed} of {len(outcomes)} object{'s' if len(outcomes) != 1 else ''} failed")
        return EXIT_FAILURE
    return 0


def run_plans(
    cluster: options.ClusterArgs,
    sel: Selection,
    cfg: RunConfig,
    plan_for: Callable[[Schemas], Callable[[dict[str, Any]], Migration]],
) -> int:
    """Select, then plan and write each object with the same planning function."""
    from ..kube.writes import execute

    sel.validate()
    client = open_client(cluster)
    try:
        items = list(select(client, sel))
        schemas = Schemas(client)
        plan = plan_for(schemas)
        backups = make_backups(client, cfg)
        wopts = write_options(cfg)
        return run_all(client, items, lambda t: execute(client, t, plan, wopts, backups), cfg, backups)
    finally:
        client.close()


# --- plan: the planning functions of each command ----------------------------------------------


def _escaped(name: str) -> str:
    """A manager name as a glob that matches only itself."""
    import re

    return re.sub(r"([*?\[])", r"[\1]", name)


def server_side_planner(
    sources: Sequence[str], target: str, keep: bool | None
) -> Callable[[Schemas], Callable[[dict[str, Any]], Migration]]:
    def factory(schemas: Schemas) -> Callable[[dict[str, Any]], Migration]:
        from ..migration import plan_to_server_side

        def plan(obj: dict[str, Any]) -> Migration:
            return plan_to_server_side(obj, schemas.root(obj), source_managers=sources, target=target,
                                       keep_last_applied=keep)

        return plan

    return factory


def client_side_planner(manager: str) -> Callable[[Schemas], Callable[[dict[str, Any]], Migration]]:
    def factory(schemas: Schemas) -> Callable[[dict[str, Any]], Migration]:
        from ..managedfields import APPLY, KUBECTL_CLIENT_SIDE_APPLY, LAST_APPLIED_ANNOTATION, UPDATE, decode_entries
        from ..migration import Migration, MigrationError, ObjectRef, plan_to_client_side

        def plan(obj: dict[str, Any]) -> Migration:
            md = obj.get("metadata") or {}
            entries = decode_entries(md.get("managedFields"))
            la = (md.get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
            if not any(e.manager == manager and e.operation == APPLY and not e.subresource for e in entries):
                # the planner has nothing to turn over: either done already (a second run, or a retry
                # after the write went through), or this object was never applied by the manager
                if isinstance(la, str) and any(e.manager == KUBECTL_CLIENT_SIDE_APPLY and e.operation == UPDATE
                                               for e in entries):
                    return Migration(ObjectRef.of(obj), str(md.get("resourceVersion") or ""), entries, entries, la,
                                     la, notes=[f"no server-side apply entry of {manager}: already managed by "
                                                "client-side apply"])
                raise MigrationError(f"no server-side apply entry of manager {manager!r} to migrate")
            return plan_to_client_side(obj, schemas.root(obj), manager=manager)

        return plan

    return factory


def strip_planner(
    paths: Sequence[str], managers: Sequence[str]
) -> Callable[[Schemas], Callable[[dict[str, Any]], Migration]]:
    def factory(schemas: Schemas) -> Callable[[dict[str, Any]], Migration]:
        from ..migration import plan_strip_last_applied

        def plan(obj: dict[str, Any]) -> Migration:
            return plan_strip_last_applied(obj, parse_paths(paths, obj), client_side_managers=managers)

        return plan

    return factory


def reset_planner(to_manager: str | None) -> Callable[[Schemas], Callable[[dict[str, Any]], Migration]]:
    def factory(schemas: Schemas) -> Callable[[dict[str, Any]], Migration]:
        from ..fieldpath import FieldSet, path_from_fields
        from ..migration import plan_reset
        from ..schema.types import DEDUCED

        def plan(obj: dict[str, Any]) -> Migration:
            if to_manager is None:
                return plan_reset(obj, DEDUCED)  # clearing looks at no field: no schema needed
            # a write to the main resource cannot own the status of a kind with a status subresource
            # (the server resets those fields), so an Apply entry claiming it would be a lie
            reset_fields = FieldSet([path_from_fields("status")]) if "status" in schemas.subresources(obj) else None
            m = plan_reset(obj, schemas.root(obj), to_manager=to_manager, reset_fields=reset_fields)
            if reset_fields is not None and "status" in obj:
                m.notes.append("the status is left out: it is written through the status subresource")
            return m

        return plan

    return factory


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

    if to is None:
        raise UsageError("--to is required: server-side or client-side")
    retries = parse_retries(max_retries)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    cfg = RunConfig(f"migrate --to {to.value}", dry_run, output, verbose, backup_dir, retries)
    if to is MigrateTo.server_side:
        sources = list(from_manager or [KUBECTL_CLIENT_SIDE_APPLY])
        target = field_manager or KUBECTL
        if any(_glob_matches(target, s) for s in sources):
            raise UsageError(f"the target manager {target!r} is one of the source managers")
        code = run_plans(cluster, sel, cfg, server_side_planner(sources, target, keep_last_applied))
    else:
        if field_manager is not None:
            raise UsageError("--field-manager is for --to server-side; client-side apply always records "
                             f"{KUBECTL_CLIENT_SIDE_APPLY}")
        if keep_last_applied is not None:
            raise UsageError("--keep-last-applied/--drop-last-applied are for --to server-side: client-side apply "
                             "needs the annotation")
        managers = list(from_manager or [KUBECTL])
        if len(managers) != 1 or any(c in managers[0] for c in "*?["):
            raise UsageError("--to client-side takes one --from-manager name (no globs): the Apply manager whose "
                             "manifest becomes the last-applied annotation")
        code = run_plans(cluster, sel, cfg, client_side_planner(managers[0]))
    if code:
        raise typer.Exit(code)
    return 0


def _glob_matches(name: str, glob: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, glob)


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

    paths = list(field or ())
    if not paths:
        raise UsageError("name the fields to strip with --field PATH (e.g. --field .spec.replicas)")
    for p in paths:
        parse_path(p)  # syntax errors before anything is fetched
    retries = parse_retries(max_retries)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    cfg = RunConfig("strip-last-applied", dry_run, output, verbose, backup_dir, retries)
    managers = list(client_side_manager or [KUBECTL_CLIENT_SIDE_APPLY])
    code = run_plans(cluster, sel, cfg, strip_planner(paths, managers))
    if code:
        raise typer.Exit(code)
    return 0


RESET_HELP = """Clear managedFields, or give every field that is set to one manager.

\b
Without --to-manager, managedFields become [{}]: nothing is tracked until the next server-side
apply, which records every field already set as owned by 'before-first-apply' (no conflicts for
anyone until then). With --to-manager NAME, NAME becomes the one Apply manager of every field
currently set (the status excepted when the kind has a status subresource): its next apply then
removes every field that is not in its manifest."""

RESET_EPILOG = """\b
Examples:
  kubectl fieldown reset widget/w1 --dry-run=client
  kubectl fieldown reset deploy/web --to-manager argocd-controller"""


@handle_errors
def reset(
    resources: Resources = None,
    to_manager: Annotated[
        str | None,
        typer.Option("--to-manager", metavar="NAME",
                     help="Make NAME (an Apply manager) the owner of every field currently set.", show_default=False),
    ] = None,
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
    if to_manager is not None and not to_manager.strip():
        raise UsageError("--to-manager needs a manager name")
    retries = parse_retries(max_retries)
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)
    sel = Selection(list(resources or ()), list(filename or ()), recursive, selector, cluster)
    cfg = RunConfig("reset" + (f" --to-manager {to_manager}" if to_manager else ""), dry_run, output, verbose,
                    backup_dir, retries)
    if to_manager is None and output is WriteOutput.text and dry_run is options.DryRunStrategy.none:
        sys.stderr.write("warning: after a reset nothing is tracked until the next server-side apply, which records "
                         "every field already set as owned by before-first-apply\n")
    code = run_plans(cluster, sel, cfg, reset_planner(to_manager))
    if code:
        raise typer.Exit(code)
    return 0


def register(app: typer.Typer) -> None:
    from . import handover, undo

    app.command("migrate", help=MIGRATE_HELP, epilog=MIGRATE_EPILOG, no_args_is_help=True)(migrate)
    app.command("strip-last-applied", help=STRIP_HELP, epilog=STRIP_EPILOG, no_args_is_help=True)(strip_last_applied)
    handover.register(app)
    app.command("reset", help=RESET_HELP, epilog=RESET_EPILOG, no_args_is_help=True)(reset)
    undo.register(app)
