"""kubectl's generic flags (``--as``, ``--token``, ``--server``, ``-v=6``, ...), accepted anywhere.

kubectl takes these on every command and at any position (``kubectl fieldown show x --as jane``),
so they are taken out of the command line before typer parses it, the way kubectl's global flag
set is parsed beside each command's own flags, and reach the cluster layer through
:func:`kubectl_fieldown.cli.options.cluster_options`. ``kubectl fieldown options`` lists them.

Two of kubectl's spellings are normalised here too: a bare ``--dry-run`` (kubectl still accepts
it, deprecated, meaning ``client``) and ``--dry-run=true|false``.

``-v`` is both kubectl's log level and the ``--verbose`` switch of some commands: a level needs a
number (``-v=6``, ``-v 6``, ``-v6``, ``--v=6``), a bare ``-v`` stays the command's ``--verbose``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from ..base.record import Record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "FLAGS",
    "ConnectionFlags",
    "FlagHelp",
    "GlobalFlagError",
    "current",
    "options_text",
    "parse_duration",
    "print_warnings",
    "set_current",
    "split_global_flags",
]


class GlobalFlagError(ValueError):
    """A generic flag with a missing or malformed value (a usage error)."""


class ConnectionFlags(Record, uncompared=("warnings",)):
    """The generic flags of one invocation; None (or empty) where not given."""

    __slots__ = (
        "certificate_authority",
        "client_certificate",
        "client_key",
        "cluster",
        "impersonate",
        "impersonate_groups",
        "impersonate_uid",
        "insecure_skip_tls_verify",
        "request_timeout",
        "server",
        "tls_server_name",
        "token",
        "user",
        "verbosity",
        "warnings",
    )
    server: Final[str | None]
    cluster: Final[str | None]
    user: Final[str | None]
    token: Final[str | None]
    certificate_authority: Final[str | None]
    client_certificate: Final[str | None]
    client_key: Final[str | None]
    tls_server_name: Final[str | None]
    insecure_skip_tls_verify: Final[bool | None]
    impersonate: Final[str | None]
    impersonate_groups: Final[tuple[str, ...]]
    impersonate_uid: Final[str | None]
    #: seconds; 0 means no timeout (kubectl's "0"); None: not given
    request_timeout: Final[float | None]
    verbosity: Final[int]
    warnings: Final[tuple[str, ...]]

    def __init__(self, server: str | None = None, cluster: str | None = None, user: str | None = None,
                 token: str | None = None, certificate_authority: str | None = None,
                 client_certificate: str | None = None, client_key: str | None = None,
                 tls_server_name: str | None = None, insecure_skip_tls_verify: bool | None = None,
                 impersonate: str | None = None, impersonate_groups: tuple[str, ...] = (),
                 impersonate_uid: str | None = None, request_timeout: float | None = None, verbosity: int = 0,
                 warnings: tuple[str, ...] = ()) -> None:
        self.server = server
        self.cluster = cluster
        self.user = user
        self.token = token
        self.certificate_authority = certificate_authority
        self.client_certificate = client_certificate
        self.client_key = client_key
        self.tls_server_name = tls_server_name
        self.insecure_skip_tls_verify = insecure_skip_tls_verify
        self.impersonate = impersonate
        self.impersonate_groups = impersonate_groups
        self.impersonate_uid = impersonate_uid
        self.request_timeout = request_timeout
        self.verbosity = verbosity
        self.warnings = warnings


class FlagHelp(Record):
    __slots__ = ("attr", "help", "metavar", "names")
    names: Final[tuple[str, ...]]
    metavar: Final[str | None]  # None: a switch
    help: Final[str]
    attr: Final[str]

    def __init__(self, names: tuple[str, ...], metavar: str | None, help: str, attr: str) -> None:
        self.names = names
        self.metavar = metavar
        self.help = help
        self.attr = attr


# kubectl's own wording (kubectl options), trimmed to what this plugin does with each flag
FLAGS: tuple[FlagHelp, ...] = (
    FlagHelp(("--as",), "USER", "Username to impersonate for the operation. User could be a regular user or a "
             "service account in a namespace.", "impersonate"),
    FlagHelp(("--as-group",), "GROUP", "Group to impersonate for the operation, this flag can be repeated to "
             "specify multiple groups.", "impersonate_groups"),
    FlagHelp(("--as-uid",), "UID", "UID to impersonate for the operation.", "impersonate_uid"),
    FlagHelp(("--certificate-authority",), "PATH", "Path to a cert file for the certificate authority.",
             "certificate_authority"),
    FlagHelp(("--client-certificate",), "PATH", "Path to a client certificate file for TLS.", "client_certificate"),
    FlagHelp(("--client-key",), "PATH", "Path to a client key file for TLS.", "client_key"),
    FlagHelp(("--cluster",), "NAME", "The name of the kubeconfig cluster to use.", "cluster"),
    FlagHelp(("--insecure-skip-tls-verify",), None, "If true, the server's certificate will not be checked for "
             "validity. This will make your HTTPS connections insecure.", "insecure_skip_tls_verify"),
    FlagHelp(("--request-timeout",), "DURATION", "The length of time to wait before giving up on a single server "
             "request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero "
             "means don't timeout requests. (default: 5s to connect, 60s for an answer)", "request_timeout"),
    FlagHelp(("-s", "--server"), "URL", "The address and port of the Kubernetes API server.", "server"),
    FlagHelp(("--tls-server-name",), "NAME", "Server name to use for server certificate validation. If it is not "
             "provided, the hostname used to contact the server is used.", "tls_server_name"),
    FlagHelp(("--token",), "TOKEN", "Bearer token for authentication to the API server.", "token"),
    FlagHelp(("--user",), "NAME", "The name of the kubeconfig user to use.", "user"),
    FlagHelp(("-v", "--v"), "LEVEL", "Number for the log level verbosity: 6 logs each request (method, URL, status, "
             "time), 7 also its headers (credentials masked), 8 also the request and response bodies (truncated). "
             "A bare -v is the --verbose switch of the commands that have one.", "verbosity"),
)

_BY_NAME = {name: f for f in FLAGS for name in f.names}


def flag_named(name: str) -> FlagHelp | None:
    """The generic flag called ``name`` (``--as``, ``-s``), if it is one."""
    return _BY_NAME.get(name)
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TRUE = ("1", "t", "true", "y", "yes", "on")
_FALSE = ("0", "f", "false", "n", "no", "off")


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a Go duration (``1m30s``, ``500ms``) or, as kubectl also accepts, a
    plain whole number of seconds."""
    s = text.strip()
    if re.fullmatch(r"\d+", s):
        return float(s)
    pos, total = 0, 0.0
    if not s:
        raise GlobalFlagError('invalid duration "": use a number with a unit, e.g. 30s, 2m, 1h')
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            raise GlobalFlagError(f'invalid duration "{text}": use a number with a unit, e.g. 30s, 2m, 1h')
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    return total


def _level(text: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()):
        raise GlobalFlagError(f'invalid argument "{text}" for "-v, --v" flag: a log level is a number, e.g. -v=6')
    return int(text)


def _bool(text: str, name: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise GlobalFlagError(f'invalid argument "{text}" for "{name}" flag: use true or false')


def _with(flags: ConnectionFlags, spec: FlagHelp, name: str, value: str) -> ConnectionFlags:
    if spec.attr == "impersonate_groups":
        return flags.replace(impersonate_groups=(*flags.impersonate_groups, value))
    if spec.attr == "request_timeout":
        return flags.replace(request_timeout=parse_duration(value))
    if spec.attr == "verbosity":
        return flags.replace(verbosity=_level(value))
    if spec.attr == "insecure_skip_tls_verify":
        return flags.replace(insecure_skip_tls_verify=_bool(value, name))
    changes: dict[str, Any] = {spec.attr: value}
    return flags.replace(**changes)


_DRY_RUN_VALUES = ("none", "client", "server")


def split_global_flags(args: Sequence[str]) -> tuple[ConnectionFlags, list[str]]:
    """The generic flags in ``args`` and the command line without them (``--dry-run`` spellings
    normalised). Stops at ``--``, after which everything is an argument."""
    flags = ConnectionFlags()
    warnings: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            rest.extend(args[i - 1:])
            break
        name, eq, value = token.partition("=")
        if name == "--dry-run":
            if not eq and not (i < len(args) and args[i].lower() in _DRY_RUN_VALUES):
                warnings.append("--dry-run is deprecated and can be replaced with --dry-run=client.")
                rest.append("--dry-run=client")
            elif eq and value.lower() in ("true", "false"):
                warnings.append(f"--dry-run={value} is deprecated (boolean value) and can be replaced with "
                                f"--dry-run={'client' if value.lower() == 'true' else 'none'}.")
                rest.append("--dry-run=client" if value.lower() == "true" else "--dry-run=none")
            else:
                rest.append(token)
            continue
        if name in ("-v", "--v"):
            if eq:
                flags = flags.replace(verbosity=_level(value))
            elif i < len(args) and re.fullmatch(r"\d+", args[i]):
                flags = flags.replace(verbosity=_level(args[i]))
                i += 1
            elif name == "--v":
                raise GlobalFlagError('flag needs an argument: --v (a log level, e.g. --v=6)')
            else:
                rest.append(token)  # the command's own -v (--verbose)
            continue
        if re.fullmatch(r"-v\d+", token):
            flags = flags.replace(verbosity=int(token[2:]))
            continue
        spec = _BY_NAME.get(name)
        if spec is None and re.fullmatch(r"-s[^=-].*", token):
            spec, name, eq, value = _BY_NAME["-s"], "-s", "=", token[2:]
        if spec is None:
            rest.append(token)
            continue
        if spec.metavar is None:  # a switch
            flags = _with(flags, spec, name, value if eq else "true")
            continue
        if not eq:
            if i >= len(args):
                raise GlobalFlagError(f"flag needs an argument: {name}")
            value = args[i]
            i += 1
        flags = _with(flags, spec, name, value)
    if (flags.impersonate_groups or flags.impersonate_uid) and not flags.impersonate:
        raise GlobalFlagError("--as-group and --as-uid need --as: requesting groups or a uid without "
                              "impersonating a user")
    if flags.insecure_skip_tls_verify and flags.certificate_authority:
        raise GlobalFlagError("--certificate-authority and --insecure-skip-tls-verify cannot be used together: "
                              "specifying a root certificates file with the insecure flag is not allowed")
    return flags.replace(warnings=tuple(warnings)), rest


# The flags of the running invocation: main() sets them before the command runs (kubectl keeps
# its global flags the same way, beside each command's own), cluster_options() reads them.
_current = ConnectionFlags()


def set_current(flags: ConnectionFlags) -> None:
    global _current
    _current = flags


def current() -> ConnectionFlags:
    return _current


def print_warnings(flags: ConnectionFlags) -> None:
    for text in flags.warnings:
        sys.stderr.write(f"warning: {text}\n")


def options_text() -> str:
    lines = ["The following options can be passed to any command (before or after its arguments):", ""]
    for spec in FLAGS:
        names = ", ".join(spec.names)
        lines.append(f"  {names}{'' if spec.metavar is None else '=' + spec.metavar}")
        lines.append(f"      {spec.help}")
    lines += ["", "Also: --kubeconfig, --context, -n/--namespace (see each command's --help)."]
    return "\n".join(lines)
