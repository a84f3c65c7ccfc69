"""The flags the write commands share, declared once: ``migrate``, ``strip-last-applied``,
``handover``, ``reset`` (every one in :class:`WriteArgs`, whose fields are the flags' declarations)
and ``undo`` (the ones it takes), and the checks of their values (``--max-retries``, ``--applier``,
``--field``). :func:`kubectl_fieldown.cli.writes.write_command` makes a command of them; the run
loop is :mod:`.writes`, the planning path :mod:`.writeplanner`.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import options
from .completion import complete_resources
from .errors import UsageError

if TYPE_CHECKING:
    from ..appliers import Applier
    from ..fieldpath import Path as FieldPath
    from ..fieldpath.pathstring import FieldNames
    from .select import Selection

__all__ = [
    "AllObjects",
    "AllowValueChanges",
    "ApplierOption",
    "BackupDir",
    "DryRunOption",
    "MaxRetries",
    "NextManifest",
    "Output",
    "Resources",
    "Verbose",
    "WriteArgs",
    "WriteOutput",
    "check_fields",
    "field_option",
    "parse_applier",
    "parse_paths",
    "parse_retries",
    "path_names",
]


class WriteOutput(str, enum.Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


# --- options shared by the writing commands ------------------------------------------------------

Output = Annotated[
    WriteOutput,
    options.output_option("Output format: text (one line per object and a summary), json or yaml (the same "
                          "document: docs/migrate.md)."),
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

NextManifest = Annotated[
    list[str] | None,
    typer.Option(
        "--manifest",
        metavar="FILE",
        help="The manifests the applier applies next (file or directory, repeatable), for the check only: each "
        "object named otherwise is checked against its document (one must name it). 'audit -f' prints it in "
        "its fixes.",
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
    from ..base.value import excerpt

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
    from ..ownership.managedfields import LAST_APPLIED_ANNOTATION, ManagedFieldsError, decode_entries

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


def field_option(help: str) -> Any:
    """``--field PATH`` (repeatable): the fields a command writes, checked by :func:`check_fields`."""
    return typer.Option("--field", metavar="PATH", help=help, show_default=False)


def check_fields(texts: Sequence[str] | None, verb: str) -> list[str]:
    """``--field`` values, checked before anything is fetched: that there is one (``verb`` says what
    the command does with them), their syntax, and that a manager can own them at all — ``.kind``,
    ``.apiVersion``, ``.metadata`` itself, ``.metadata.name`` and the other fields the server strips
    from every manager's set are nobody's, so nothing can be handed over (and stripping them from the
    last-applied annotation would break it)."""
    from ..base.value import excerpt
    from ..fieldpath import parse_path
    from ..ownership.managedfields import never_owned

    paths = list(texts or ())
    if not paths:
        raise UsageError(f"name the fields to {verb} with --field PATH (e.g. --field .spec.replicas)")
    for text in paths:
        why = never_owned(parse_path(text))
        if why is not None:
            raise UsageError(f"--field {excerpt(text)}: {why}; name a field a manager can own "
                             "(under .spec, .metadata.labels, .metadata.annotations, ...)")
    return paths


def parse_paths(texts: Sequence[str], obj: Mapping[str, Any]) -> list[FieldPath]:
    from ..fieldpath import parse_path

    names = path_names(obj)
    return [parse_path(t, names) for t in texts]

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


# --- the flags of the write commands that select objects -----------------------------------------


@dataclass
class WriteArgs:
    """The flags every write command that selects objects takes (``migrate``, ``strip-last-applied``,
    ``handover``, ``reset``), as given: the fields are their declarations, in the order of the help,
    where :func:`kubectl_fieldown.cli.writes.write_command` puts the command's own flags after the
    object arguments (``resources``)."""

    resources: Resources = None
    applier: ApplierOption = None
    allow_value_changes: AllowValueChanges = False
    manifest: NextManifest = None
    filename: options.Filename = None
    recursive: options.Recursive = False
    dry_run: DryRunOption = options.DryRunStrategy.none
    output: Output = WriteOutput.text
    backup_dir: BackupDir = None
    max_retries: MaxRetries = "5"
    verbose: Verbose = False
    namespace: options.Namespace = None
    all_namespaces: options.AllNamespaces = False
    selector: options.Selector = None
    all_objects: AllObjects = False
    kubeconfig: options.Kubeconfig = None
    context: options.Context = None
    _parsed: tuple[int, Applier | None] | None = field(default=None, init=False, repr=False)

    def parsed(self) -> tuple[int, Applier | None]:
        """``--max-retries`` and ``--applier``, checked in that order (once: a command that needs the
        applier to plan checks them where it needs it, else the run does, after the command's own
        flags)."""
        if self._parsed is None:
            retries = parse_retries(self.max_retries)
            self._parsed = (retries, parse_applier(self.applier))
        return self._parsed

    def cluster(self) -> options.ClusterArgs:
        return options.ClusterArgs(self.kubeconfig, self.context, self.namespace, self.all_namespaces)

    def selection(self) -> Selection:
        from .select import Selection

        return Selection(list(self.resources or ()), list(self.filename or ()), self.recursive, self.selector,
                         self.cluster(), self.all_objects, list(self.manifest or ()))
