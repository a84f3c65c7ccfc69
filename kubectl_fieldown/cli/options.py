"""Option definitions shared by every command, spelled and explained the way kubectl does.

Use them as parameter annotations so that every command has the same flags::

    def conflicts(namespace: options.Namespace = None, kubeconfig: options.Kubeconfig = None, ...)

Cluster selection follows kubectl: ``--kubeconfig`` else ``$KUBECONFIG`` (a ``:``-separated list)
else ``~/.kube/config``; ``--context`` else the current context; ``-n`` else the context's
namespace else ``default``. ``$KUBECONFIG`` is read by the cluster layer, not bound here, because
it may name several files.

:class:`ClusterArgs` carries these to the cluster layer as one value, and
:func:`cluster_options` turns it into ``kube.client.ClusterOptions`` without importing the
cluster layer at startup (both live in :mod:`.clusterargs`, below this module and
:mod:`.completion`, which needs them too; they are re-exported here).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import typer

from .clusterargs import ClusterArgs, cluster_options
from .completion import complete_context, complete_managers, complete_namespace
from .labelselector import selector_problem

__all__ = [
    "AllNamespaces",
    "ClusterArgs",
    "Color",
    "ColorMode",
    "Context",
    "DryRun",
    "DryRunStrategy",
    "FieldManager",
    "Filename",
    "Kubeconfig",
    "Namespace",
    "NoHeaders",
    "Recursive",
    "Selector",
    "cluster_options",
    "output_option",
]

Kubeconfig = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        metavar="PATH",
        help="Path to the kubeconfig file to use for CLI requests (default: $KUBECONFIG, else ~/.kube/config).",
        show_default=False,
    ),
]

Context = Annotated[
    str | None,
    typer.Option("--context", metavar="NAME", help="The name of the kubeconfig context to use.", show_default=False,
                 autocompletion=complete_context),
]

Namespace = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="If present, the namespace scope for this CLI request.",
        show_default=False,
        autocompletion=complete_namespace,
    ),
]

AllNamespaces = Annotated[
    bool,
    typer.Option(
        "-A",
        "--all-namespaces",
        help="If present, list the requested object(s) across all namespaces. "
        "Namespace in current context is ignored even if specified with --namespace.",
    ),
]

def _check_selector(value: str | None) -> str | None:
    if value is not None and value.strip():
        problem = selector_problem(value)
        if problem is not None:
            raise typer.BadParameter(f"{value!r} is not a label selector: {problem}")
    return value


Selector = Annotated[
    str | None,
    typer.Option(
        "-l",
        "--selector",
        metavar="SELECTOR",
        callback=_check_selector,
        help="Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin' "
        "(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.",
        show_default=False,
    ),
]

Filename = Annotated[
    list[str] | None,
    typer.Option(
        "-f",
        "--filename",
        metavar="FILE",
        help="Filename or directory of manifests naming the objects (repeatable); '-' reads stdin.",
        show_default=False,
    ),
]

Recursive = Annotated[
    bool,
    typer.Option(
        "-R",
        "--recursive",
        help="Process the directory used in -f, --filename recursively.",
    ),
]


def field_manager_option(default_help: str) -> Any:
    """``--field-manager``: the commands that write choose their own default manager name."""
    return typer.Option(
        "--field-manager",
        metavar="NAME",
        help=f"Name of the manager used to track field ownership. {default_help}".strip(),
        autocompletion=complete_managers,
    )


FieldManager = Annotated[str, field_manager_option("")]


class DryRunStrategy(str, enum.Enum):
    """kubectl's ``--dry-run`` values: ``server`` sends the request with ``dryRun=All`` (the server
    runs admission and ownership bookkeeping but stores nothing); ``client`` only prints."""

    none = "none"
    client = "client"
    server = "server"


DryRun = Annotated[
    DryRunStrategy,
    typer.Option(
        "--dry-run",
        metavar="none|client|server",
        help='Must be "none", "server", or "client". If client strategy, only print the object that would be '
        "sent, without sending it. If server strategy, submit server-side request without persisting the resource.",
        case_sensitive=False,
    ),
]


class ColorMode(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


def _set_color(value: ColorMode | str | None) -> ColorMode | str | None:
    from ..render.prefs import set_color_mode

    set_color_mode(str(getattr(value, "value", value) or "auto"))
    return value


Color = Annotated[
    ColorMode,
    typer.Option(
        "--color",
        metavar="auto|always|never",
        callback=_set_color,
        help="Colour the human-readable output: auto (on a terminal, unless NO_COLOR is set), always (even "
        "into a pipe or a file) or never.",
        case_sensitive=False,
    ),
]


def _set_no_headers(value: bool) -> bool:
    from ..render.prefs import set_no_headers

    set_no_headers(bool(value))
    return value


NoHeaders = Annotated[
    bool,
    typer.Option(
        "--no-headers",
        callback=_set_no_headers,
        help="When using a table output format (or custom-columns), don't print headers (default print headers).",
    ),
]


def output_option(help_text: str, metavar: str | None = None) -> Any:
    """``-o/--output``: each command has its own formats (an Enum in its signature); ``metavar`` in
    place of their list where it would not fit an 80-column help (the help text names them)."""
    return typer.Option("-o", "--output", help=help_text, case_sensitive=False, metavar=metavar)
