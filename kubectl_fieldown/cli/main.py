"""The ``kubectl-fieldown`` entry point: the typer app and :func:`run`.

kubectl runs ``kubectl-fieldown`` from PATH for ``kubectl fieldown ...``, so usage and help say
``kubectl fieldown``. Shell completion (typer's ``--install-completion``/``--show-completion``)
is the exception: the shell completes the executable, so there the name is ``kubectl-fieldown``.

Startup is kept small because every ``kubectl fieldown`` pays it: typer is told not to use rich
for help and errors (rich_markup_mode=None; rich costs ~0.1 s to import and is only loaded by the
human-readable outputs), command modules import nothing heavy at module level, plain string,
list and Enum parameters bypass typer's pydantic-based coercion (see :func:`install_fast_coercion`),
and running a command imports only that command's module (see :func:`build_app`): the app grows
by a module per command, and ``show -i`` should not pay for all of them. The bare root help
(``kubectl fieldown``, ``--help``, ``help``) needs no typer at all: :func:`root_help` lays it out
as typer would (:mod:`.helptext`), which tests/cli/test_main_help.py checks at every width.
"""

from __future__ import annotations

import enum
import gc
import importlib
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence

from . import _restore_interrupts

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

    import typer


__all__ = ["PROG_NAME", "app", "complete_for_kubectl", "main", "run", "run_kubectl_completion"]

PROG_NAME = "kubectl fieldown"
EXECUTABLE = "kubectl-fieldown"
COMPLETE_VAR = "_KUBECTL_FIELDOWN_COMPLETE"

HELP = """See, predict and repair Kubernetes field ownership (server-side apply managedFields).

Every field of an object that someone set through the API has owners (field managers):
kubectl, helm, controllers, GitOps tools. Their ownership decides who conflicts with whom
and which fields an apply removes. This plugin makes it visible."""

EPILOG = """\b
Examples:
  kubectl fieldown show deployment/web -n prod
  kubectl fieldown show -i saved.yaml -o blame
  kubectl fieldown conflicts -f web.yaml --field-manager argocd
  kubectl fieldown migrate --all --to server-side -n prod --dry-run=client
  kubectl fieldown audit -A --fail-on warning
\b
Run 'kubectl fieldown help COMMAND' for the options of a command,
'kubectl fieldown options' for the flags every command takes (--as, --token, -v=6, ...).
Set FIELDOWN_DEBUG=1 to get a traceback with errors."""

# The command modules (cli/<module>.py, each with a register(app) that registers exactly its one
# command, named like the module with dashes for underscores), in the order of the help. Running
# a command imports only its module; no command module imports another (tests/cli/test_modules.py).
COMMAND_MODULES: tuple[str, ...] = ("show", "conflicts", "audit", "migrate", "strip_last_applied", "handover",
                                    "reset", "undo", "watch", "version")


# The first paragraph of each command's help, for the bare root help (`kubectl fieldown`, `--help`):
# it need not build every command (typer evaluates all their options, most of the start-up time).
# tests/cli/test_main_help.py keeps these equal to the commands' own help.
COMMAND_SUMMARIES: tuple[tuple[str, str], ...] = (
    ("show", "Show who owns each field of Kubernetes objects (server-side apply managedFields)."),
    ("conflicts", "Predict a server-side apply: conflicts, shared fields, deletions and fields that stay."),
    ("audit", "Audit field ownership before switching appliers (kubectl to --server-side, Helm 3 to 4, "
              "client-side pipelines to Argo CD or Flux): every object that will hurt, why, and the command that "
              "fixes it."),
    ("migrate", "Move objects between client-side and server-side apply, keeping their ownership exact."),
    ("strip-last-applied", "Remove fields from the last-applied annotation and from the client-side apply manager."),
    ("handover", "Hand fields over to another manager (a controller, an imperative writer, an applier), with no "
                 "value change."),
    ("reset", "Clear managedFields, give every field that is set to one manager, or drop stale managers."),
    ("undo", "Put back the managedFields and last-applied annotation a write changed."),
    ("watch", "Watch who changes which field, live, and which writers fight over a field."),
    ("version", "Print the version of kubectl-fieldown and of the Python running it."),
    ("options", "Print the list of flags inherited by all commands (kubectl's generic flags)."),
    ("completion", "Print the shell completion script for kubectl-fieldown (bash, zsh or fish), as 'kubectl "
                   "completion' does for kubectl."),
)


#: the root's own options, as typer lists them (tests/cli/test_main_help.py)
ROOT_OPTIONS: tuple[tuple[str, str], ...] = (
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
    ("-h, --help", "Show this message and exit."),
)
ROOT_USAGE = "[OPTIONS] COMMAND [ARGS]..."


def root_help(width: int) -> str:
    """The bare root help as typer prints it at ``width`` (see :mod:`.helptext`), without typer."""
    from .helptext import render_group_help

    return render_group_help(PROG_NAME, ROOT_USAGE, HELP, ROOT_OPTIONS, COMMAND_SUMMARIES, EPILOG, width)


def root_help_app() -> typer.Typer:
    """The app as the bare root help shows it: the commands as one-line stand-ins."""
    new_app = build_app(())
    for name, summary in COMMAND_SUMMARIES:
        new_app.command(name, help=summary, short_help=summary)(_root)
    return new_app


def _root() -> None:
    # a callback makes typer build a command group even when only one command is registered
    pass


def build_app(modules: Sequence[str] = COMMAND_MODULES) -> typer.Typer:
    """The typer app with the commands of ``modules`` (all of them by default)."""
    import typer

    new_app = typer.Typer(
        name=PROG_NAME,
        help=HELP,
        epilog=EPILOG,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    new_app.callback()(_root)
    for name in modules:
        importlib.import_module(f"{__package__}.{name}").register(new_app)
    # the command list shows each summary whole (click would cut it to fit one line)
    summaries = dict(COMMAND_SUMMARIES)
    for info in new_app.registered_commands:
        if info.name in summaries and info.short_help is None:
            info.short_help = summaries[info.name]
    return new_app


app: typer.Typer  # every command; provided by __getattr__ below
_full_app: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    # `app` (every command) is built on first use, so that importing this module stays cheap
    global _full_app
    if name == "app":
        if _full_app is None:
            _full_app = build_app()
        return _full_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _modules_for(args: Sequence[str]) -> Sequence[str]:
    """Only the invoked command's module when the command is named like it; else every module
    (help, completion, a module that registers several commands)."""
    first = next((a for a in args if not a.startswith("-")), None)
    if first is None or any(a.startswith("-") for a in args[: args.index(first)]):
        return COMMAND_MODULES
    module = first.replace("-", "_")
    return (module,) if module in COMMAND_MODULES else COMMAND_MODULES


def _completed_words() -> list[str]:
    """The words before the one being completed, from typer's bash script (``COMP_WORDS``,
    ``COMP_CWORD``; the executable first); none for other shells, which then get every command."""
    words = os.environ.get("COMP_WORDS", "").split()
    try:
        cword = int(os.environ.get("COMP_CWORD", ""))
    except ValueError:
        return []
    return words[1:cword] if cword >= 2 else []


def _prog_name(args: Sequence[str]) -> str:
    if os.environ.get(COMPLETE_VAR) or any(a in ("--install-completion", "--show-completion") for a in args):
        return EXECUTABLE
    return PROG_NAME


def _commands(command: Any) -> Iterator[Any]:
    yield command
    for sub in (getattr(command, "commands", None) or {}).values():
        yield from _commands(sub)


def _plain_kind(annotation: Any) -> tuple[str, Any] | None:
    """("str" | "bool" | "list" | "enum", enum class) for the annotations we coerce ourselves."""
    from typing import Union, get_args, get_origin  # (typer imports typing; show -i need not)

    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            return None
        annotation, origin = args[0], get_origin(args[0])
    if annotation is str:
        return ("str", None)
    if annotation is bool:
        return ("bool", None)
    if origin is list and get_args(annotation) == (str,):
        return ("list", None)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return ("enum", annotation)
    return None


def install_fast_coercion(command: Any) -> None:
    """Coerce ``str``, ``bool``, ``list[str]`` and Enum parameters without pydantic.

    typer >= 0.2x validates every parameter through a pydantic TypeAdapter; importing pydantic and
    building the adapters costs about 0.3 s, more than the rest of a ``show -i`` run. For these
    annotations the coercion is trivial (click already hands over strings), so it is done here;
    every other annotation keeps typer's own coercion. This uses typer internals
    (``_TyperParameter._runtime_param``); with a typer that lacks them it does nothing.
    """
    import typer

    try:
        from typer._coercion import RuntimeParam
    except ImportError:
        return

    class PlainRuntimeParam(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            kind = _plain_kind(self.annotation)
            assert kind is not None
            if kind[0] == "str":
                return value if isinstance(value, str) else str(value)
            if kind[0] == "bool":
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text in ("1", "true", "t", "yes", "y", "on"):
                    return True
                if text in ("0", "false", "f", "no", "n", "off", ""):
                    return False
                raise typer.BadParameter(f"{value!r} is not a valid boolean.", ctx=ctx, param=param)
            if kind[0] == "list":
                return [v if isinstance(v, str) else str(v) for v in value]
            return _enum_member(kind[1], value, bool(getattr(self.parameter_info, "case_sensitive", True)), param,
                                ctx)

    # the help option is made on first use and cached; make it now (with the names every context
    # of this app uses) so that it gets the plain coercion too
    help_names = list((getattr(command, "context_settings", None) or {}).get("help_option_names") or ["--help"])
    for cmd in _commands(command):
        params = list(getattr(cmd, "params", ()))
        help_option = cmd.get_help_option(typer.Context(cmd, help_option_names=help_names))
        if help_option is not None:
            params.append(help_option)
        for param in params:
            desc = getattr(param, "type_descriptor", None)
            if desc is None or getattr(param, "_runtime_param", 0) is not None or desc.file_annotation is not None:
                continue
            if _plain_kind(desc.annotation) is not None:
                param._runtime_param = PlainRuntimeParam(parameter_info=desc.parameter_info,
                                                         annotation=desc.annotation)


def _enum_member(cls: type[enum.Enum], value: Any, case_sensitive: bool, param: Any, ctx: Any) -> enum.Enum:
    import typer

    if isinstance(value, cls):
        return value
    text = str(value)
    for member in cls:
        if member.value == text or (not case_sensitive and str(member.value).casefold() == text.casefold()):
            return member
    choices = ", ".join(repr(m.value) for m in cls)
    raise typer.BadParameter(f"{text!r} is not one of {choices}.", ctx=ctx, param=param)


def tolerant_output() -> None:
    """Write what the output encoding cannot carry as backslash escapes instead of failing: with
    ``PYTHONIOENCODING=ascii`` (or a legacy console) every tree guide was an internal error. JSON and
    YAML output escape losslessly by themselves (render.common.unicode_ok)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                continue  # a closed or detached stream refuses: nothing will be written to it anyway


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    tolerant_output()
    args = list(sys.argv[1:] if argv is None else argv)
    if not os.environ.get(COMPLETE_VAR) and args in ([], ["-h"], ["--help"], ["help"]):
        # the bare root help, without typer: a third of the start-up (tests/cli/test_main_help.py)
        from .helptext import help_width

        return _print_help(root_help(help_width()))
    from .errors import EXIT_USAGE, print_error
    from .globalflags import ConnectionFlags, GlobalFlagError, print_warnings, set_current, split_global_flags

    _reset_output_flags()
    if not os.environ.get(COMPLETE_VAR):
        try:
            flags, args = split_global_flags(args)
        except GlobalFlagError as e:
            print_error(f"{e} (see 'kubectl fieldown options')")
            return EXIT_USAGE
        print_warnings(flags)
        set_current(flags)
        args = _kubectl_spellings(args)
        from .outputformat import split_templates

        args = split_templates(args)
        body = _without_typer(args)
        if body is not None:
            try:
                return _run_without_typer(body)
            finally:
                set_current(ConnectionFlags())
    import typer

    from .helpformat import install_help_formatter

    # completion must see every command and its options, never the root stand-ins
    bare_help = not os.environ.get(COMPLETE_VAR) and args in ([], ["-h"], ["--help"])
    modules = _modules_for(_completed_words() if os.environ.get(COMPLETE_VAR) else args)
    command = typer.main.get_command(root_help_app() if bare_help else build_app(modules))
    install_fast_coercion(command)
    install_help_formatter(command)
    instruction = os.environ.get(COMPLETE_VAR)
    if instruction:
        from .completion import shell_complete

        return shell_complete(command, EXECUTABLE, COMPLETE_VAR, instruction)
    _restore_interrupts()  # from here on Ctrl-C is reported (partial results, exit 130)
    try:
        return _run_command(command, args)
    finally:
        set_current(ConnectionFlags())  # main() may run again in this process (tests, library use)


def _without_typer(args: Sequence[str]) -> Callable[[], int] | None:
    """The run of ``args`` when its command reads them without typer (None: typer reads them).
    Each command's reader is imported only for its command."""
    if args[:1] == ["show"]:
        from .showfast import parse as parse_show
        from .showrun import show_objects

        show = parse_show(args)
        return None if show is None else (lambda: show_objects(show))
    if args[:1] == ["audit"]:
        from .auditfast import parse as parse_audit
        from .auditrun import run_audit

        audit = parse_audit(args)
        return None if audit is None else (lambda: run_audit(audit))
    return None


def _run_without_typer(body: Callable[[], int]) -> int:
    """A command read without typer, reported as the typer command reports (errors.handle_errors)."""
    from .errors import EXIT_FAILURE, debug_enabled, report, silence_stdout

    _restore_interrupts()
    try:
        return body()
    except BrokenPipeError:
        silence_stdout()
        return EXIT_FAILURE
    except (Exception, KeyboardInterrupt) as e:
        if debug_enabled():
            raise
        return report(e)


def _print_help(text: str) -> int:
    try:
        sys.stdout.write(text.rstrip("\n") + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        from .errors import silence_stdout

        silence_stdout()
        return 1
    return 0


def _reset_output_flags() -> None:
    # --color, --no-headers and an -o template of an earlier main() in this process (tests, library use)
    from ..render import prefs
    from . import outputformat

    prefs.reset()
    outputformat.reset()


#: the cluster flags every command takes, which kubectl also accepts before the command
#: (``kubectl -n shop get pods``); with their value in the next word unless written ``--flag=value``
_LEADING_WITH_VALUE = ("-n", "--namespace", "--context", "--kubeconfig")
_LEADING_SWITCHES = ("-A", "--all-namespaces")


def _leading_flags(args: list[str]) -> tuple[list[str], list[str]]:
    """The cluster flags written before the command, and the rest (command first)."""
    moved: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _LEADING_SWITCHES:
            moved.append(a)
            i += 1
        elif a in _LEADING_WITH_VALUE and i + 1 < len(args):
            moved += args[i:i + 2]
            i += 2
        elif a.startswith(tuple(f"{f}=" for f in _LEADING_WITH_VALUE)) or (a.startswith("-n") and len(a) > 2
                                                                            and not a.startswith("--")):
            moved.append(a)
            i += 1
        else:
            break
    return moved, args[i:]


def _kubectl_spellings(args: list[str]) -> list[str]:
    """kubectl's ``help [COMMAND]``, a ``--version`` flag and cluster flags before the command
    (``kubectl fieldown -n shop show ...``), as the commands typer knows them."""
    moved, rest = _leading_flags(args)
    if moved and rest and not rest[0].startswith("-"):
        args = [rest[0], *moved, *rest[1:]]
    if args[:1] == ["--version"] and len(args) == 1:
        return ["version"]
    if args[:1] == ["help"]:
        return [*args[1:], "--help"]
    return args


def _run_command(command: Any, args: list[str]) -> int:
    from .errors import EXIT_FAILURE, debug_enabled

    try:
        rv = command.main(
            args=args, prog_name=_prog_name(args), complete_var=COMPLETE_VAR, standalone_mode=False
        )
    except BrokenPipeError:
        from .errors import silence_stdout

        silence_stdout()
        return EXIT_FAILURE
    except (Exception, KeyboardInterrupt) as e:
        code = _framework_error(e, args)
        if code is None:
            if debug_enabled():
                raise
            from .errors import report

            return report(e)
        return code
    return rv if isinstance(rv, int) else 0


def _framework_error(e: BaseException, args: Sequence[str] = ()) -> int | None:
    """Report a typer/click exception (bad flags, missing arguments) like kubectl: one line."""
    from .errors import EXIT_USAGE, one_line, print_error

    if isinstance(e, KeyboardInterrupt) or type(e).__name__ == "Abort":
        sys.stderr.write("\n")
        return 130
    exit_code = getattr(e, "exit_code", None)
    format_message = getattr(e, "format_message", None)
    if not isinstance(exit_code, int) or not callable(format_message):
        return None
    if type(e).__name__ == "NoArgsIsHelpError":
        # `kubectl fieldown` alone asks for help, as bare `kubectl` does: help on stdout, success
        sys.stdout.write(str(format_message()).rstrip("\n") + "\n")
        return 0
    message = one_line(str(format_message()))
    if exit_code == EXIT_USAGE:
        ctx = getattr(e, "ctx", None)
        if ctx is not None:
            command_path = getattr(ctx, "command_path", PROG_NAME)
        else:
            # some parser errors carry no context: name the command from the arguments
            first = next((a for a in args if not a.startswith("-")), "")
            known = first in {name for name, _ in COMMAND_SUMMARIES}
            command_path = f"{PROG_NAME} {first}" if known else PROG_NAME
        message = message.rstrip(".")
        message = f"{message[:1].lower()}{message[1:]} (see '{command_path} --help')"
    print_error(message)
    return exit_code


#: CPython's collector thresholds for a run of the command line (see :func:`collect_less_often`)
GC_THRESHOLDS = (50_000, 20, 10)


def collect_less_often() -> None:
    """Run the cyclic garbage collector less often in this process: a command line's choice, not a
    library's (:func:`main` leaves the host process alone).

    A run allocates millions of small containers (decoded pages, paths, sets, findings) and frees
    them by reference counting; cycles are rare. At CPython's default gen-0 threshold (700) the
    collector walks the young objects thousands of times per audit for nothing: a fifth of the CPU
    of ``audit -A`` over 10,000 objects (bench/bench_audit.py). Every generation still runs (the
    long-lived ``watch`` frees its cycles), every 50,000 allocations instead of 700."""
    gc.set_threshold(*GC_THRESHOLDS)


def run() -> None:
    """The console script ``kubectl-fieldown``."""
    collect_less_often()
    code = main()
    # the interpreter's exit runs the collector over every object still alive (the findings and
    # pages of an audit: ~40 ms at 10,000 objects) to find cycles the process's end frees anyway;
    # frozen, they are only freed
    gc.freeze()
    sys.exit(code)


def complete_for_kubectl(argv: Sequence[str] | None = None) -> int:
    """kubectl's plugin completion: ``kubectl fieldown <TAB>`` runs ``kubectl_complete-fieldown``
    with the plugin's words, the one being completed last (see :mod:`.completion`)."""
    import typer

    from .completion import kubectl_plugin_complete

    tolerant_output()
    words = list(sys.argv[1:] if argv is None else argv)
    # once the command is typed, only its module is needed (each TAB starts a new process)
    command = typer.main.get_command(build_app(_modules_for(words[:-1]) if len(words) > 1 else COMMAND_MODULES))
    install_fast_coercion(command)
    return kubectl_plugin_complete(command, words, PROG_NAME)


def run_kubectl_completion() -> None:
    """The console script ``kubectl_complete-fieldown``."""
    sys.exit(complete_for_kubectl())


if __name__ == "__main__":
    run()
