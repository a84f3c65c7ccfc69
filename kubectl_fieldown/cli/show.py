"""``kubectl fieldown show``: who owns which field of an object (the command line; what it does is
:mod:`.showrun`)."""

from __future__ import annotations

from typing import Annotated

import typer

from . import options
from .completion import complete_managers, complete_resources
from .errors import handle_errors
from .showrun import ObjectSource, ShowOutput, ShowRequest, TimeMode, build_view, show_objects

__all__ = ["ObjectSource", "ShowOutput", "TimeMode", "build_view", "register", "show"]


HELP = """Show who owns each field of Kubernetes objects (server-side apply managedFields).

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
    code = show_objects(ShowRequest(
        resources=list(resources or ()), filenames=list(filename or ()), recursive=recursive, input_file=input_file,
        output=output, managers=list(manager or ()), paths=list(path or ()), show_unowned=show_unowned,
        show_secret_values=show_secret_values, time=time,
        cluster=options.ClusterArgs(kubeconfig, context, namespace, all_namespaces), selector=selector))
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("show", help=HELP, epilog=EPILOG, no_args_is_help=False)(show)
