"""What ``kubectl fieldown show`` does, without the command line: :func:`show_objects` runs a
:class:`ShowRequest`.

fetch (live objects, ``-f`` manifests resolved live, or ``-i`` files offline) → decode
(managedFields) → analyse (owner tree, filters, unowned leaves, redaction) → render. Every object
that fails is reported on its own ``error:`` line and the others are still shown (exit 1).

Nothing here imports typer: ``show -i FILE`` in its common forms is parsed without it
(:mod:`.showfast`), and typer is a third of that run's start-up.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator, Mapping, Sequence

from ..base.record import Record
from ..base.value import TOO_DEEP, too_deep
from ..fieldpath import is_prefix, parse_path
from ..fieldpath.lookup import names_in
from ..ownership.managedfields import ManagedFieldsEntry, ManagedFieldsError, decode_entries
from ..ownership.tree import build_owner_tree, unowned_leaves
from .clusterargs import ClusterArgs, cluster_options
from .errors import EXIT_FAILURE, UsageError, describe, print_error, print_note

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final

    from ..render.common import ObjectView
    from .select import LiveRequest

__all__ = ["ObjectSource", "ShowOutput", "ShowRequest", "TimeMode", "build_view", "object_title", "show_objects"]


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


class ShowRequest(Record):
    """One ``show``: where the objects come from (``input_file`` offline, else ``filenames`` or
    ``resources`` live), what to keep of them and how to print them."""

    __slots__ = (
        "cluster",
        "filenames",
        "input_file",
        "managers",
        "output",
        "paths",
        "recursive",
        "resources",
        "selector",
        "show_secret_values",
        "show_unowned",
        "time",
    )
    resources: Final[list[str]]
    filenames: Final[list[str]]
    recursive: Final[bool]
    input_file: Final[str | None]
    output: Final[ShowOutput]
    managers: Final[list[str]]
    paths: Final[list[str]]
    show_unowned: Final[bool]
    show_secret_values: Final[bool]
    time: Final[TimeMode]
    cluster: Final[ClusterArgs]
    selector: Final[str | None]

    def __init__(self, resources: list[str] | None = None, filenames: list[str] | None = None, recursive: bool = False,
                 input_file: str | None = None, output: ShowOutput = ShowOutput.tree, managers: list[str] | None = None,
                 paths: list[str] | None = None, show_unowned: bool = False, show_secret_values: bool = False,
                 time: TimeMode = TimeMode.relative, cluster: ClusterArgs | None = None,
                 selector: str | None = None) -> None:
        self.resources = [] if resources is None else resources
        self.filenames = [] if filenames is None else filenames
        self.recursive = recursive
        self.input_file = input_file
        self.output = output
        self.managers = [] if managers is None else managers
        self.paths = [] if paths is None else paths
        self.show_unowned = show_unowned
        self.show_secret_values = show_secret_values
        self.time = time
        self.cluster = ClusterArgs() if cluster is None else cluster
        self.selector = selector


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


class ObjectSource(Record):
    """An object to show, or why it could not be had. ``where`` names it in error messages.
    ``from_file``: read from a file, not from a server (its managedFields are decoded strictly)."""

    __slots__ = ("error", "from_file", "obj", "where")
    where: Final[str]
    obj: Final[Mapping[str, Any] | None]
    error: Final[BaseException | None]
    from_file: Final[bool]

    def __init__(self, where: str, obj: Mapping[str, Any] | None = None, error: BaseException | None = None,
                 from_file: bool = False) -> None:
        self.where = where
        self.obj = obj
        self.error = error
        self.from_file = from_file


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


def _live(request: LiveRequest, cluster: ClusterArgs) -> Iterator[ObjectSource]:
    from ..kube.client import ALL_NAMESPACES, ClusterClient
    from ..kube.errors import KubeError, is_fatal
    from .select import resolve_targets

    client = ClusterClient(cluster_options(cluster))
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


def _manifests(paths: Sequence[str], recursive: bool, cluster: ClusterArgs) -> Iterator[ObjectSource]:
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
                    client = ClusterClient(cluster_options(cluster))
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


# --- run --------------------------------------------------------------------------------------


def show_objects(req: ShowRequest) -> int:
    """Show the objects ``req`` names; the exit code (0, or the worst failure's). Usage errors raise."""
    from .outputformat import check

    output, args, filename, cluster, selector = req.output, req.resources, req.filenames, req.cluster, req.selector
    check(output.value)
    for p in req.paths:
        parse_path(p)  # syntax errors are usage errors, before anything is fetched

    sources: Iterator[ObjectSource]
    if req.input_file is not None:
        if args or filename:
            raise UsageError("-i reads objects from a file: do not name objects or pass -f as well")
        if selector is not None or cluster.all_namespaces or cluster.namespace is not None:
            raise UsageError("-n, -A and -l select live objects; they cannot be used with -i")
        sources = _offline(req.input_file, req.recursive)
    elif filename:
        if args:
            raise UsageError(
                "when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well"
            )
        if selector is not None:
            raise UsageError("-l cannot be used with -f: the manifests name the objects")
        sources = _manifests(filename, req.recursive, cluster)
    else:
        from .select import parse_live_args

        sources = _live(parse_live_args(args, selector, cluster.all_namespaces), cluster)

    views: list[ObjectView] = []
    failures: list[BaseException] = []
    saved_without: list[ObjectSource] = []
    for src in sources:
        if src.error is not None:
            failures.append(src.error)
            continue
        assert src.obj is not None
        if not src.from_file and too_deep(src.obj):
            # the server keeps up to 10,000 levels (preserve-unknown-fields); files were checked when read
            failures.append(_Located(f"{src.where}: {object_title(src.obj)}", ValueError(TOO_DEEP)))
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
                    managers=req.managers,
                    paths=req.paths,
                    show_unowned=req.show_unowned,
                    show_secret_values=req.show_secret_values,
                )
            )
        except ManagedFieldsError as e:
            failures.append(_Located(f"{src.where}: {object_title(src.obj)}", e))

    if views or output in (ShowOutput.json, ShowOutput.yaml, ShowOutput.jsonpath):
        # JSON and YAML always print a document, so that `| jq` sees {"items": []} rather than nothing
        _render(views, output, req.time)
    if saved_without:
        print_note(_managed_fields_hint(saved_without))
    codes = []
    for f in failures:
        cause = f.error if isinstance(f, _Located) else f
        message, code = describe(cause) or (str(cause), EXIT_FAILURE)
        print_error(str(f) if isinstance(f, _Located) else message)
        codes.append(code)
    # input the tool cannot read is an input error (2); anything else could not be done (1)
    return max(codes, default=0)




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
