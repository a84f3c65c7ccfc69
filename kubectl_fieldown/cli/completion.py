"""Shell completion: flags, their values, resource types and object names, like kubectl's.

Two ways in, one set of candidates:

* the shell's own completion (``kubectl-fieldown --install-completion``): typer's scripts call
  ``kubectl-fieldown`` with ``_KUBECTL_FIELDOWN_COMPLETE=complete_<shell>``; :func:`shell_complete`
  answers in that shell's format;
* kubectl's plugin completion (``kubectl fieldown <TAB>``): kubectl runs the executable
  ``kubectl_complete-fieldown`` found on PATH with the plugin's arguments and the word being
  completed last, and reads one candidate per line (``value<TAB>description``) and a last line
  ``:<directive>`` (cobra's; 4 = no file completion, 0 = the shell may complete files).

typer/click complete commands, options and enum values (``-o``, ``--to``, ``--dry-run``) from the
declarations. This module adds what they cannot know: kubectl's generic flags (parsed before typer
by :mod:`.globalflags`, so they are taken out of the words first), resource types from the
cluster's discovery and object names from a LIST, for the ``TYPE[/NAME]`` arguments, and
kubeconfig contexts. Completion must never hang a shell or print an error into it: the cluster is
asked with short timeouts and no retries, and any failure completes nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..base.yamlmodule import import_yaml
from .globalflags import FLAGS, ConnectionFlags, GlobalFlagError, flag_named, set_current, split_global_flags

__all__ = [
    "complete_context",
    "complete_managers",
    "complete_namespace",
    "complete_resources",
    "completion_script",
    "kubectl_plugin_complete",
    "shell_complete",
    "without_generic_flags",
]

#: cobra's ShellCompDirective values that kubectl understands from a plugin's completer
DIRECTIVE_DEFAULT = 0
DIRECTIVE_NO_FILE_COMP = 4

# a slow or dead cluster must not freeze the prompt: one attempt, short waits
_CONNECT_TIMEOUT = 2.0
_READ_TIMEOUT = 5.0


# --- kubectl's generic flags in the words ------------------------------------------------------


def _takes_value(word: str) -> bool:
    """Whether ``word`` is a generic flag whose value is the next word."""
    if word == "-v":
        return False  # a bare -v is a command's --verbose
    spec = flag_named(word)
    return spec is not None and spec.metavar is not None


def without_generic_flags(words: Sequence[str]) -> tuple[ConnectionFlags, list[str]]:
    """The generic flags among the completed ``words`` and the words without them, never failing
    (a half-typed line is the normal case here)."""
    try:
        return split_global_flags(list(words))
    except GlobalFlagError:
        pass
    rest: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif _takes_value(word):
            skip = True
        elif word == "-v" or flag_named(word.partition("=")[0]) is None:
            rest.append(word)
    return ConnectionFlags(), rest


#: the words being completed (without kubectl's generic flags), for the completions that need the
#: command's arguments while an option's value is typed: click leaves the arguments out of the
#: parsed values then, and typer hands the callbacks no words
_words: list[str] = []


def _arguments(ctx: Any) -> list[str]:
    """The positional words after the command's name (TYPE/NAME...), option values left out."""
    command = getattr(ctx, "command", None)
    name = getattr(command, "name", None)
    if name not in _words:
        return []
    with_value = {opt for p in getattr(command, "params", ()) if getattr(p, "param_type_name", "") == "option"
                  and not getattr(p, "is_flag", False) and not getattr(p, "count", False) for opt in p.opts}
    out: list[str] = []
    words = _words[_words.index(name) + 1:]
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in with_value
        else:
            out.append(w)
    return out


def _generic_flag_items(incomplete: str) -> list[tuple[str, str]]:
    return [(name, spec.help.split(". ")[0].rstrip("."))
            for spec in FLAGS for name in spec.names
            if name.startswith("--") and name.startswith(incomplete)]


def candidates(command: Any, words: Sequence[str], incomplete: str, prog_name: str) -> list[tuple[str, str]]:
    """(value, description) pairs for ``incomplete`` after ``words`` (the words after the
    executable's name)."""
    if words and _takes_value(words[-1]):
        return []  # a generic flag's value: a user name, a token, a URL
    pending = list(words[-1:]) if words and words[-1] == "--dry-run" else []  # its value is being typed
    flags, args = without_generic_flags(words[:len(words) - len(pending)])
    args = _command_first(args + pending)
    set_current(flags)  # the cluster flags (--server, --token, --as...) reach the lookups below
    _words[:] = args
    try:
        base = _completion_class("bash")
        completer = base(command, {}, prog_name, "")
        items = completer.get_completions(args, incomplete)
    finally:
        set_current(ConnectionFlags())
        _words.clear()
    out = [(str(item.value), str(item.help or "")) for item in items]
    if incomplete.startswith("--"):
        known = {value for value, _ in out}
        out += [item for item in _generic_flag_items(incomplete) if item[0] not in known]
    return out


def _command_first(args: list[str]) -> list[str]:
    """``-n shop show ...`` as the command runs it (``show -n shop ...``): kubectl's cluster flags may
    come before the command; while the command itself is typed, they are left out."""
    from .main import _leading_flags

    moved, rest = _leading_flags(args)
    if not moved:
        return args
    if not rest:
        return []
    return [rest[0], *moved, *rest[1:]] if not rest[0].startswith("-") else args


def _shell_completion() -> Any:
    try:
        from typer._click import shell_completion
    except ImportError:  # typer before it carried its own click
        from click import shell_completion  # type: ignore[no-redef, import-not-found, unused-ignore]
    return shell_completion


def _completion_class(shell: str) -> Any:
    return _shell_completion().get_completion_class(shell)


# --- the two ways in ---------------------------------------------------------------------------


def shell_complete(command: Any, prog_name: str, complete_var: str, instruction: str) -> int:
    """Answer typer's completion scripts (``complete_bash``, ``complete_zsh``, ...)."""
    action, _, shell = instruction.partition("_")
    base = _completion_class(shell)
    if base is None:
        sys.stderr.write(f"error: shell {shell!r} is not supported for completion\n")
        return 2
    if action != "complete":
        from typer.completion import shell_complete as typer_shell_complete

        return int(typer_shell_complete(command, {}, prog_name, complete_var, instruction))

    item_type = _shell_completion().CompletionItem

    class Completer(base):  # type: ignore[misc, valid-type]
        def get_completions(self, args: list[str], incomplete: str) -> list[Any]:
            return [item_type(value, help=help_text or None)
                    for value, help_text in candidates(command, args, incomplete, prog_name)]

    with _quiet_stderr():
        answer = Completer(command, {}, prog_name, complete_var).complete()
    sys.stdout.write(answer + "\n")
    return 0


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Nothing reaches the terminal from a completion but the candidates: whatever a lookup would
    say on stderr (the insecure-skip-tls-verify warning, a library's warning) would be printed between
    the prompt and the cursor at every TAB. ``FIELDOWN_DEBUG=1`` lets it through."""
    if os.environ.get("FIELDOWN_DEBUG"):
        yield
        return
    saved = sys.stderr
    with open(os.devnull, "w", encoding="utf-8") as devnull:
        sys.stderr = devnull
        try:
            yield
        finally:
            sys.stderr = saved


#: bash falls back to file names when a completion offers nothing (``complete -o default``); for a
#: value that comes from the cluster that would offer local files, which kubectl never does
_BASH_NO_FILES = """
    if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
        case "${COMP_WORDS[COMP_CWORD-1]}" in
            %s) compopt +o default 2>/dev/null ;;
        esac
    fi
    return 0
}"""


def completion_script(command: Any, shell: str, prog_name: str, complete_var: str) -> str:
    """The script that makes ``shell`` complete ``prog_name`` (typer's, which calls back with
    ``complete_var``), as ``kubectl completion SHELL`` prints kubectl's."""
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        shell_complete(command, prog_name, complete_var, f"source_{shell}")
    # zsh reads "#compdef" only on the first line of a file in $fpath
    script = buf.getvalue().lstrip("\n")
    if shell == "bash":
        script = script.replace("\n    return 0\n}", _BASH_NO_FILES % "|".join(_CLUSTER_VALUED), 1)
    return script


def kubectl_plugin_complete(command: Any, argv: Sequence[str], prog_name: str) -> int:
    """Answer kubectl's plugin completion: ``argv`` is the plugin's words, the last one the word
    being completed (kubectl passes ``""`` after a space)."""
    words, incomplete = list(argv[:-1]), (argv[-1] if argv else "")
    with _quiet_stderr():
        found = candidates(command, words, incomplete, prog_name)
    for value, help_text in found:
        line = f"{value}\t{help_text}" if help_text else value
        sys.stdout.write(" ".join(line.splitlines()) + "\n")
    # nothing to offer (a file argument, a value we cannot know): let the shell complete files —
    # except for a value that comes from the cluster (-n, as kubectl's: never a local file name)
    no_files = bool(found) or _completes_cluster_value(words, incomplete)
    sys.stdout.write(f":{DIRECTIVE_NO_FILE_COMP if no_files else DIRECTIVE_DEFAULT}\n")
    return 0


#: options whose values come from the cluster or its objects, never from local files
_CLUSTER_VALUED = ("-n", "--namespace", "--context", "--field-manager", "--manager", "--from-manager")


def _completes_cluster_value(words: Sequence[str], incomplete: str) -> bool:
    if incomplete.startswith(tuple(f"{o}=" for o in _CLUSTER_VALUED if o.startswith("--"))):
        return True
    return bool(words) and words[-1] in _CLUSTER_VALUED and not incomplete.startswith("-")


# --- values from the cluster and the kubeconfig -------------------------------------------------


def _client(params: dict[str, Any]) -> Any:
    from ..kube.client import ClusterClient, RetryPolicy
    from .clusterargs import ClusterArgs, cluster_options
    from .globalflags import current

    args = ClusterArgs(kubeconfig=params.get("kubeconfig"), context=params.get("context"),
                       namespace=params.get("namespace"))
    options = cluster_options(args)
    if current().request_timeout is None:
        options = options.replace(connect_timeout=_CONNECT_TIMEOUT, read_timeout=_READ_TIMEOUT)
    return ClusterClient(options.replace(retry=RetryPolicy(max_attempts=1)))


def _all_params(ctx: Any) -> dict[str, Any]:
    params: dict[str, Any] = {}
    while ctx is not None:
        for key, value in (getattr(ctx, "params", None) or {}).items():
            params.setdefault(key, value)
        ctx = getattr(ctx, "parent", None)
    return params


def _quietly(lookup: Callable[[], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    # a shell prints whatever we write to stderr between the prompt and the cursor
    if os.environ.get("FIELDOWN_DEBUG"):
        return lookup()
    try:
        return lookup()
    except (Exception, KeyboardInterrupt):  # a dead cluster, no kubeconfig, RBAC, Ctrl-C: nothing to offer
        return []


def complete_resources(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """Candidates for a ``TYPE[/NAME]...`` argument, as kubectl offers them: resource types,
    ``TYPE/NAME`` after a slash, and names of the type given before."""
    del args  # the parsed values in ctx say more
    params = _all_params(ctx)
    if params.get("input_file") or params.get("filename"):
        return []  # objects come from files: no cluster arguments
    given = [str(v) for v in (params.get("resources") or [])]
    if "/" not in incomplete and not (given and "/" not in given[0]):
        # resource types: from the discovery cache while it is fresh, without loading the cluster
        # layer (the kubernetes package alone takes most of a second to import), as kubectl answers
        # from ~/.kube/cache; a miss asks the server, which fills the cache for the next TAB
        cached = _quietly_or_none(lambda: _cached_types(params))
        if cached is not None:
            return _type_items(cached, incomplete)
    return _quietly(lambda: _resource_candidates(params, given, incomplete))


def _type_items(resources: Sequence[Any], incomplete: str) -> list[tuple[str, str]]:
    types = sorted({(res.group_resource, res.kind) for res in resources
                    if "list" in res.verbs and "/" not in res.resource})
    return [(name, kind) for name, kind in types if name.startswith(incomplete)]


def _quietly_or_none(lookup: Callable[[], Any]) -> Any:
    try:
        return lookup()
    except Exception:  # an unreadable kubeconfig or cache: the slow path decides
        if os.environ.get("FIELDOWN_DEBUG"):
            raise
        return None


def _cached_types(params: dict[str, Any]) -> list[Any] | None:
    from ..kube.discovery import cached_resources

    server = _server_of(params)
    return cached_resources(server) if server else None


def _server_of(params: dict[str, Any]) -> str | None:
    """The API server the cluster flags and the kubeconfig name, read as kubectl reads them (the
    first file that names a context or cluster wins) but without loading credentials; None when
    that needs more (no kubeconfig: in a pod; a context that is not there)."""
    from .globalflags import current

    flags = current()
    if flags.server:
        server = flags.server.rstrip("/")
        return server if "://" in server else "https://" + server
    explicit = params.get("kubeconfig")
    if explicit:
        paths = [os.path.expanduser(str(explicit))]
    elif os.environ.get("KUBECONFIG"):
        paths = [p for p in (os.path.expanduser(p) for p in os.environ["KUBECONFIG"].split(os.pathsep) if p)
                 if os.path.isfile(p)]
    else:
        paths = [p for p in [os.path.expanduser("~/.kube/config")] if os.path.isfile(p)]
    import_yaml()
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs: list[dict[str, Any]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=loader)  # CSafeLoader or SafeLoader
        if isinstance(doc, dict):
            docs.append(doc)

    def entry(key: str, name: Any) -> dict[str, Any] | None:
        for doc in docs:
            for item in doc.get(key + "s") or ():
                if isinstance(item, dict) and item.get("name") == name and isinstance(item.get(key), dict):
                    found: dict[str, Any] = item[key]
                    return found
        return None

    name = params.get("context") or next((d["current-context"] for d in docs if d.get("current-context")), None)
    context = entry("context", name) if name else None
    cluster = entry("cluster", flags.cluster or (context or {}).get("cluster")) if context is not None else None
    found = (cluster or {}).get("server")
    return str(found).rstrip("/") if found else None


def _resource_candidates(params: dict[str, Any], given: list[str], incomplete: str) -> list[tuple[str, str]]:
    with _client(params) as client:
        if "/" in incomplete:
            type_arg, _, prefix = incomplete.partition("/")
            names = _names(client, params, type_arg, prefix)
            return [(f"{type_arg}/{name}", "") for name in names]
        if given and "/" not in given[0]:
            return [(name, "") for name in _names(client, params, given[0], incomplete)
                    if name not in given[1:]]
        return _type_items(client.discovery.resources(), incomplete)


def _names(client: Any, params: dict[str, Any], type_arg: str, prefix: str) -> list[str]:
    from ..kube.client import ALL_NAMESPACES

    res = client.discovery.resolve(type_arg)
    namespace = ALL_NAMESPACES if params.get("all_namespaces") else params.get("namespace")
    names = {str((item.get("metadata") or {}).get("name") or "") for item in client.list(res, namespace)}
    return sorted(name for name in names if name and name.startswith(prefix))


def complete_namespace(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``-n <TAB>``: the cluster's namespaces (none on a server that serves no namespaces)."""
    del args

    def lookup() -> list[tuple[str, str]]:
        with _client(_all_params(ctx)) as client:
            return [(name, "") for name in _names(client, {}, "namespaces", incomplete)]

    return _quietly(lookup)


#: at most this many objects are read to complete a manager name: a prompt must not wait for a LIST
#: of a whole type's objects one GET at a time
_MAX_SCOPE = 50


def complete_managers(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``--field-manager <TAB>``, ``--manager <TAB>``: the managers of the objects in scope — the
    objects named (TYPE/NAME, TYPE NAME..., TYPE), the live objects of the -f manifests, or the
    objects of show's -i file — each with its operations. Nothing without such objects (an audit of
    a whole namespace would have to read it all at the prompt)."""
    del args
    params = _all_params(ctx)
    if not params.get("resources"):
        params["resources"] = _arguments(ctx)
    return _quietly(lambda: _manager_candidates(params, incomplete))


def _manager_candidates(params: dict[str, Any], incomplete: str) -> list[tuple[str, str]]:
    found: dict[str, set[str]] = {}
    for obj in _objects_in_scope(params):
        md = obj.get("metadata") if isinstance(obj, dict) else None
        for e in (md.get("managedFields") if isinstance(md, dict) else None) or ():
            if isinstance(e, dict) and e.get("manager"):
                found.setdefault(str(e["manager"]), set()).add(str(e.get("operation") or ""))
    return [(m, ", ".join(sorted(ops - {""}))) for m, ops in sorted(found.items()) if m.startswith(incomplete)]


def _objects_in_scope(params: dict[str, Any]) -> list[Any]:
    import itertools

    input_file = params.get("input_file")
    if input_file:
        if input_file == "-":
            return []  # stdin belongs to the shell at the prompt
        from .files import load_sources

        return [d.obj for d in load_sources(str(input_file), recursive=bool(params.get("recursive"))).documents]
    filenames = [str(f) for f in params.get("filename") or () if f != "-"]
    resources = [str(r) for r in params.get("resources") or ()]
    if not filenames and not resources:
        return []
    from ..kube.errors import KubeError, is_fatal
    from .clusterargs import ClusterArgs
    from .select import Selection, select

    cluster = ClusterArgs(kubeconfig=params.get("kubeconfig"), context=params.get("context"),
                          namespace=params.get("namespace"), all_namespaces=bool(params.get("all_namespaces")))
    sel = Selection([] if filenames else resources, filenames, bool(params.get("recursive")), params.get("selector"),
                    cluster)
    out: list[Any] = []
    with _client(params) as client:
        for s in itertools.islice(select(client, sel), _MAX_SCOPE):
            if s.target is None:
                continue
            t = s.target
            try:
                out.append(t.initial if t.initial is not None else client.get(t.res, t.name, t.namespace))
            except KubeError as e:
                if is_fatal(e):
                    raise
    return out


def complete_context(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``--context <TAB>``: the contexts of the kubeconfig in use."""
    del args

    def lookup() -> list[tuple[str, str]]:
        from ..kube._transport import context_names

        return [(name, "") for name in context_names(_all_params(ctx).get("kubeconfig"))
                if name.startswith(incomplete)]

    return _quietly(lookup)


def complete_backup_runs(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """Candidates for ``undo BACKUP``: the run directories under the backup directory, newest first,
    described by their command and object count."""
    del args
    from pathlib import Path

    from ..kube.backups import list_runs
    from ..kube.writes import default_backup_root

    params = _all_params(ctx)
    root = Path(str(params["backup_dir"])).expanduser() if params.get("backup_dir") else default_backup_root()
    return _quietly(lambda: [(str(r.directory), f"{r.command} ({r.objects} objects)") for r in list_runs(root)
                             if str(r.directory).startswith(incomplete) or r.directory.name.startswith(incomplete)])
