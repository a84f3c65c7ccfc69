"""``kubectl fieldown show``: who owns which field of an object.

fetch (live objects, ``-f`` manifests resolved live, or ``-i`` files offline) → decode
(managedFields) → analyse (owner tree, filters, unowned leaves, redaction) → render. Every object
that fails is reported on its own ``error:`` line and the others are still shown (exit 1).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..base.value import MAX_DEPTH, nesting_depth
from ..fieldpath import is_prefix, parse_path
from ..fieldpath.lookup import names_in
from ..ownership.managedfields import ManagedFieldsEntry, ManagedFieldsError, decode_entries
from ..ownership.tree import build_owner_tree, unowned_leaves
from . import options
from .completion import complete_managers, complete_resources
from .errors import EXIT_FAILURE, UsageError, describe, handle_errors, print_error, print_note
from .select import LiveRequest, parse_live_args, resolve_targets

if TYPE_CHECKING:
    from ..kube.client import ClusterClient
    from ..render.common import ObjectView

__all__ = ["ObjectSource", "ShowOutput", "TimeMode", "build_view", "register", "show"]


class ShowOutput(str, enum.Enum):
    tree = "tree"
    blame = "blame"
    table = "table"
    json = "json"
    yaml = "yaml"
    name = "name"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


#: kubectl's formats, printed from the -o json document (cli/outputformat.py)
_KUBE_OUTPUTS = (ShowOutput.name, ShowOutput.jsonpath, ShowOutput.custom_columns)


class TimeMode(str, enum.Enum):
    relative = "relative"
    full = "full"
    none = "none"


HELP = """Show who owns each field of Kubernetes objects (server-side apply managedFields).

\b
Objects come from the cluster (TYPE/NAME, TYPE NAME..., TYPE -l SELECTOR, -f FILE)
or, offline, from a file (-i FILE, -i - for stdin) holding the output of
'kubectl get -o yaml --show-managed-fields' (YAML or JSON, several documents, kind: List)."""

EPILOG = """\b
Examples:
  # Who owns what in a Deployment (a tree with one colour per manager)
  kubectl fieldown show deployment/web -n prod
\b
  # The object's YAML with an owner column, like kubectl-blame
  kubectl fieldown show deploy web -o blame --time full
\b
  # Only what helm and the Argo CD controller own, below .spec
  kubectl fieldown show deploy/web --manager helm --manager 'argocd*' --path .spec
\b
  # Every widget with the label app=shop, as the JSON contract
  kubectl fieldown show widgets.example.com -l app=shop -o json
\b
  # The objects a manifest names, as they are live
  kubectl fieldown show -f k8s/deployment.yaml -o table
\b
  # Offline: saved output, including fields nobody owns (defaulted ones)
  kubectl get deploy web -o yaml --show-managed-fields > web.yaml
  kubectl fieldown show -i web.yaml --show-unowned
  kubectl get deploy web -o json --show-managed-fields | kubectl fieldown show -i - -o json"""


# --- analyse (pure) ----------------------------------------------------------------------------

def build_view(
    obj: Mapping[str, Any],
    entries: Sequence[ManagedFieldsEntry],
    *,
    managers: Sequence[str] = (),
    paths: Sequence[str] = (),
    show_unowned: bool = False,
    show_secret_values: bool = False,
) -> ObjectView:
    """Analyse one decoded object: its owner tree, filtered; unowned leaves; secrets redacted."""
    from ..render.common import ObjectView, redact_secret

    shown = obj if show_secret_values else redact_secret(obj)
    tree = build_owner_tree(shown, entries)
    owned = tree.owned_set()
    # a dotted path is grouped into field names by what this object has (labels with dots)
    names = names_in([shown], owned)
    prefixes = [parse_path(p, names) for p in paths]
    fields = list(tree.filtered(managers, prefixes).fields)
    if show_unowned and not managers:
        extra = [f for f in unowned_leaves(shown, owned) if not prefixes or any(is_prefix(p, f.path) for p in prefixes)]
        if extra:
            # canonical order is element order along the path, which is tuple order of paths
            fields = sorted([*fields, *extra], key=lambda f: f.path)
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    ns = md.get("namespace")
    return ObjectView(
        api_version=str(obj.get("apiVersion") or ""),
        kind=str(obj.get("kind") or ""),
        namespace=str(ns) if ns else None,
        name=str(md.get("name") or ""),
        obj=shown,
        entries=list(entries),
        fields=fields,
        owned=owned,
    )


def object_title(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    kind = obj.get("kind") or "object"
    ns = f"{md['namespace']}/" if md.get("namespace") else ""
    return f"{kind} {ns}{md.get('name') or '<no name>'}"


# --- fetch -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectSource:
    """An object to show, or why it could not be had. ``where`` names it in error messages.
    ``from_file``: read from a file, not from a server (its managedFields are decoded strictly)."""

    where: str
    obj: Mapping[str, Any] | None = None
    error: BaseException | None = None
    from_file: bool = False


def _offline(path: str, recursive: bool) -> Iterator[ObjectSource]:
    from ..manifests.sources import SourceError, stored_object_problem
    from .files import load_sources

    result = load_sources(path, recursive=recursive)
    for doc in result.documents:
        problem = stored_object_problem(doc.obj)
        if problem is not None:
            yield ObjectSource(doc.where, error=SourceError(doc.source, problem, doc.document, doc.item))
            continue
        yield ObjectSource(doc.where, doc.obj, from_file=True)
    for e in result.errors:
        yield ObjectSource(str(e), error=e)


def _live(request: LiveRequest, cluster: options.ClusterArgs) -> Iterator[ObjectSource]:
    from ..kube.client import ALL_NAMESPACES, ClusterClient
    from ..kube.errors import KubeError, is_fatal

    client = ClusterClient(options.cluster_options(cluster))
    try:
        for t in resolve_targets(client, request):
            label, name, res = t.label, t.name, t.res
            if res is None:
                assert t.error is not None
                yield ObjectSource(label, error=t.error)
                continue
            try:
                if name is not None:
                    yield ObjectSource(label, client.get(res, name, cluster.namespace))
                    continue
                ns = ALL_NAMESPACES if cluster.all_namespaces else cluster.namespace
                items = client.list(res, ns, label_selector=request.selector)
                if not items:
                    # kubectl's wording, on stderr so that -o json stays a clean document
                    where = "" if not res.namespaced or cluster.all_namespaces else \
                        f" in {cluster.namespace or client.default_namespace} namespace"
                    sys.stderr.write(f"No resources found{where}.\n")
                for item in items:
                    yield ObjectSource(label, item)
            except KubeError as e:
                if is_fatal(e):
                    raise
                yield ObjectSource(label, error=e)
    finally:
        client.close()


def _manifests(paths: Sequence[str], recursive: bool, cluster: options.ClusterArgs) -> Iterator[ObjectSource]:
    """The live objects that the manifests in ``paths`` name (apiVersion, kind, name, namespace)."""
    from ..kube.client import ClusterClient
    from ..kube.errors import KubeError, is_fatal
    from ..manifests.sources import SourceError, live_name
    from .files import load_sources

    client: ClusterClient | None = None
    try:
        for path in paths:
            result = load_sources(path, recursive=recursive)
            for e in result.errors:
                yield ObjectSource(str(e), error=e)
            for doc in result.documents:
                try:
                    named = live_name(doc)
                except SourceError as e:
                    yield ObjectSource(doc.where, error=e)
                    continue
                if client is None:
                    client = ClusterClient(options.cluster_options(cluster))
                try:
                    res = client.discovery.resolve_kind(named.api_version, named.kind)
                    yield ObjectSource(doc.where, client.get(res, named.name, named.namespace or cluster.namespace))
                except KubeError as e:
                    if is_fatal(e):
                        raise
                    yield ObjectSource(doc.where, error=_Located(doc.where, e))
    finally:
        if client is not None:
            client.close()


class _Located(Exception):
    """An error of one manifest document, prefixed with where the document is."""

    def __init__(self, where: str, error: BaseException) -> None:
        self.error = error
        super().__init__(f"{where}: {error}")


# --- render ------------------------------------------------------------------------------------


def _render(views: Sequence[ObjectView], output: ShowOutput, time_mode: TimeMode) -> None:
    out = sys.stdout
    if output in _KUBE_OUTPUTS:
        from ..base.objects import ObjectRef
        from ..render.jsonout import to_document
        from .outputformat import print_kube

        names = [ObjectRef(v.api_version, v.kind, v.namespace, v.name).resource_name for v in views]
        print_kube(output.value, to_document(views), names, out)
    elif output is ShowOutput.json:
        from ..render.jsonout import render_json

        render_json(views, out)
    elif output is ShowOutput.yaml:
        from ..render.jsonout import render_yaml

        render_yaml(views, out)
    elif output is ShowOutput.table:
        from ..render.common import output_width
        from ..render.table import render_table

        render_table(views, out, width=output_width(out))
    elif output is ShowOutput.blame:
        from ..render.blame import render_blame
        from ..render.common import output_width

        render_blame(views, out, time_mode=time_mode.value, width=output_width(out))
    else:
        from ..render.tree import render_tree

        render_tree(views, out, time_mode=time_mode.value)
    out.flush()


# --- the command -------------------------------------------------------------------------------


@handle_errors
def show(
    resources: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TYPE[/NAME]",
            help="Live objects: TYPE/NAME ..., or TYPE followed by names (none: every object of TYPE). "
            "TYPE is resolved like kubectl: plural, singular, short name, kind or TYPE.GROUP (widgets.example.com).",
            show_default=False,
            autocompletion=complete_resources,
        ),
    ] = None,
    filename: options.Filename = None,
    recursive: options.Recursive = False,
    input_file: Annotated[
        str | None,
        typer.Option(
            "-i",
            "--input",
            metavar="FILE|-",
            help="Offline: read the objects from FILE or a directory ('-' is stdin) instead of the cluster: "
            "YAML or JSON, several documents, kind: List, as 'kubectl get -o yaml --show-managed-fields' prints them.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        ShowOutput,
        options.output_option("Output format: tree (default), blame (the YAML with an owner column), "
                              "table (path, owners, value), json or yaml (the documented contract), name "
                              "(kind.group/name), jsonpath=TEMPLATE or custom-columns=SPEC (kubectl's, over the "
                              "json document; docs/output.md)."),
    ] = ShowOutput.tree,
    manager: Annotated[
        list[str] | None,
        typer.Option(
            "--manager",
            metavar="GLOB",
            help="Only fields owned by a manager matching GLOB (repeatable; shell-style: 'kubectl*'). "
            "Co-owners of a matching field are still shown.",
            show_default=False,
            autocompletion=complete_managers,
        ),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option(
            "--path",
            metavar="PREFIX",
            help="Only fields at or below PREFIX, in the API server's path syntax "
            "(.spec.template.spec.containers[name=\"web\"], .metadata.labels.app.kubernetes.io/name). Repeatable.",
            show_default=False,
        ),
    ] = None,
    show_unowned: Annotated[
        bool,
        typer.Option("--show-unowned", help="Also list set fields that nobody owns (defaulted fields, for instance)."),
    ] = False,
    show_secret_values: Annotated[
        bool,
        typer.Option(
            "--show-secret-values",
            help="Show the values of a Secret's data, stringData and last-applied annotation instead of <redacted>.",
        ),
    ] = False,
    time: Annotated[
        TimeMode,
        typer.Option(
            "--time",
            help="How to show when an entry last changed: relative (5m, 3d), full (RFC 3339) or none.",
            case_sensitive=False,
        ),
    ] = TimeMode.relative,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    selector: options.Selector = None,
    kubeconfig: options.Kubeconfig = None,
    context: options.Context = None,
    no_headers: options.NoHeaders = False,
    color: options.Color = options.ColorMode.auto,
) -> None:
    del no_headers, color  # read by the renderers (render/prefs.py), set when the flags are parsed
    from .outputformat import check

    check(output.value)
    args = list(resources or ())
    managers = list(manager or ())
    paths = list(path or ())
    for p in paths:
        parse_path(p)  # syntax errors are usage errors, before anything is fetched
    cluster = options.ClusterArgs(kubeconfig, context, namespace, all_namespaces)

    sources: Iterator[ObjectSource]
    if input_file is not None:
        if args or filename:
            raise UsageError("-i reads objects from a file: do not name objects or pass -f as well")
        if selector is not None or all_namespaces or namespace is not None:
            raise UsageError("-n, -A and -l select live objects; they cannot be used with -i")
        sources = _offline(input_file, recursive)
    elif filename:
        if args:
            raise UsageError(
                "when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well"
            )
        if selector is not None:
            raise UsageError("-l cannot be used with -f: the manifests name the objects")
        sources = _manifests(filename, recursive, cluster)
    else:
        sources = _live(parse_live_args(args, selector, all_namespaces), cluster)

    views: list[ObjectView] = []
    failures: list[BaseException] = []
    saved_without: list[ObjectSource] = []
    for src in sources:
        if src.error is not None:
            failures.append(src.error)
            continue
        assert src.obj is not None
        if not src.from_file and nesting_depth(src.obj) > MAX_DEPTH:
            # the server keeps up to 10,000 levels (preserve-unknown-fields); files were checked when read
            too_deep = ValueError(f"nested more than {MAX_DEPTH} levels deep, more than the tool analyses")
            failures.append(_Located(f"{src.where}: {object_title(src.obj)}", too_deep))
            continue
        md = src.obj.get("metadata")
        if src.from_file and _saved_without_managed_fields(src.obj):
            saved_without.append(src)
        try:
            entries = decode_entries(md.get("managedFields") if isinstance(md, Mapping) else None,
                                     strict=src.from_file)
            views.append(
                build_view(
                    src.obj,
                    entries,
                    managers=managers,
                    paths=paths,
                    show_unowned=show_unowned,
                    show_secret_values=show_secret_values,
                )
            )
        except ManagedFieldsError as e:
            failures.append(_Located(f"{src.where}: {object_title(src.obj)}", e))

    if views or output in (ShowOutput.json, ShowOutput.yaml, ShowOutput.jsonpath):
        # JSON and YAML always print a document, so that `| jq` sees {"items": []} rather than nothing
        _render(views, output, time)
    if saved_without:
        print_note(_managed_fields_hint(saved_without))
    codes = []
    for f in failures:
        cause = f.error if isinstance(f, _Located) else f
        message, code = describe(cause) or (str(cause), EXIT_FAILURE)
        print_error(str(f) if isinstance(f, _Located) else message)
        codes.append(code)
    if failures:
        # input the tool cannot read is an input error (2); anything else could not be done (1)
        raise typer.Exit(max(codes))


def _saved_without_managed_fields(obj: Mapping[str, Any]) -> bool:
    """An object saved from a server (it has a uid) with its managedFields left out: kubectl's
    ``get -o yaml`` drops them unless asked. A manifest (no uid) never had any."""
    md = obj.get("metadata")
    return isinstance(md, Mapping) and bool(md.get("uid")) and "managedFields" not in md


def _managed_fields_hint(saved: Sequence[ObjectSource]) -> str:
    from ..base.objects import ObjectRef

    first = saved[0].obj
    assert first is not None
    ref = ObjectRef.of(first)
    ns = f" -n {ref.namespace}" if ref.namespace else ""
    who = (f"{saved[0].where}: {object_title(first)} has" if len(saved) == 1
           else f"{saved[0].where} and {len(saved) - 1} more objects have")
    return (f"{who} no managedFields: 'kubectl get -o yaml' leaves them out unless asked; save it again with "
            f"'kubectl get {ref.type_name} {ref.name or 'NAME'}{ns} -o yaml --show-managed-fields' "
            "(if the server has none either, they were reset and nothing is owned)")


def register(app: typer.Typer) -> None:
    app.command("show", help=HELP, epilog=EPILOG, no_args_is_help=False)(show)
