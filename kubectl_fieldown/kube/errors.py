"""Errors of the cluster access layer: one line each, naming the object or resource.

HTTP failures are mapped from the API server's ``Status`` body (``code``, ``reason``,
``message``, ``details.causes``); the CLI prints ``str(error)`` and exits with ``exit_code``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ..base.record import Record

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadResponse",
    "ConfigError",
    "Conflict",
    "Forbidden",
    "Invalid",
    "KubeError",
    "NotFound",
    "RequestContext",
    "StatusCause",
    "Unauthorized",
    "UnknownResourceType",
    "Unreachable",
    "answer_excerpt",
    "error_from_response",
    "is_fatal",
    "one_line",
    "status_causes",
]


_WS = re.compile(r"\s*\n\s*(?:-\s+)?")


def one_line(text: str) -> str:
    """Fold a multi-line server message into one line.

    The server's multi-conflict message is ``conflicts with "bob":\\n- .spec.a\\n- .spec.b``;
    list items become comma-separated so the text still reads naturally."""
    text = text.strip()
    if "\n" not in text:
        return text
    head, *rest = _WS.split(text)
    if not rest:
        return head
    sep = " " if head.endswith(":") else "; "
    return head + sep + ", ".join(r for r in rest if r)


class StatusCause(Record):
    """One ``details.causes`` entry of a Status: for SSA conflicts ``reason`` is
    ``FieldManagerConflict``, ``message`` is ``conflict with "bob"`` and ``field`` ``.spec.replicas``."""

    __slots__ = ("field", "message", "reason")
    reason: Final[str]
    message: Final[str]
    field: Final[str]

    def __init__(self, reason: str, message: str, field: str) -> None:
        self.reason = reason
        self.message = message
        self.field = field

    @property
    def manager(self) -> str | None:
        """The conflicting manager of a FieldManagerConflict cause (``conflict with "bob" ...``)."""
        m = re.match(r'conflicts? with "((?:[^"\\]|\\.)*)"', self.message)
        return m.group(1) if m else None


class RequestContext(Record):
    """What a request was doing, so errors can say so: ``verb`` is the Kubernetes verb
    (get, list, create, update, patch, apply, delete) or the HTTP method for raw paths;
    ``resource`` is ``plural.group`` (``widgets.example.com``) or None for a raw path."""

    __slots__ = ("name", "namespace", "path", "resource", "server", "verb")
    verb: Final[str]
    server: Final[str]
    path: Final[str]
    resource: Final[str | None]
    name: Final[str | None]
    namespace: Final[str | None]

    def __init__(
        self,
        verb: str,
        server: str,
        path: str,
        resource: str | None = None,
        name: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.verb = verb
        self.server = server
        self.path = path
        self.resource = resource
        self.name = name
        self.namespace = namespace

    def target(self) -> str:
        """``widgets.example.com "w1" in namespace "ns"`` (or the path for raw requests)."""
        if self.resource is None:
            return self.path
        out = self.resource
        if self.name:
            out += f' "{self.name}"'
        if self.namespace:
            out += f' in namespace "{self.namespace}"'
        return out


class KubeError(Exception):
    """Base of every error the cluster layer raises; ``str()`` is one human line."""

    exit_code: ClassVar[int] = 1
    fatal: ClassVar[bool] = False
    """Every further request would fail the same way (no config, bad credentials, no server): a
    command over many objects stops instead of printing the same error for each."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(KubeError):
    """No usable kubeconfig, an unknown context, or credentials that cannot be loaded."""

    fatal = True


class Unreachable(KubeError):
    """No (complete) HTTP answer: connection refused, timeout, TLS failure, connection reset.

    ``delivered``: the request may have reached the server (it was sent and the answer did not come
    back in time, or the connection broke after it was sent) — for a write, "it may have been made".
    False when no connection was made (refused, no TLS handshake, name not resolved)."""

    fatal = True

    def __init__(self, server: str, reason: str, *, delivered: bool = False) -> None:
        self.server = server
        self.reason = reason
        self.delivered = delivered
        super().__init__(f"cannot reach the API server at {server}: {reason}")


class BadResponse(KubeError):
    """The server answered, but not with something the API server sends: HTML from a proxy or a
    login page, invalid JSON, a redirect that is not followed, a LIST whose items are not objects,
    an answer above the size limit, a continue token that never ends. The message says what came."""


class UnknownResourceType(KubeError):
    """Discovery has no resource type of that name (kubectl's wording)."""

    def __init__(self, name: str, message: str | None = None) -> None:
        self.name = name
        super().__init__(message or f'the server doesn\'t have a resource type "{name}"')


class ApiError(KubeError):
    """The server answered with an HTTP error. ``status`` is the parsed Status body (None if the
    body was not a Status), ``code`` the HTTP status and ``reason`` the Status reason."""

    def __init__(
        self,
        message: str,
        *,
        code: int,
        reason: str = "",
        status: Mapping[str, Any] | None = None,
        context: RequestContext | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.status: dict[str, Any] | None = dict(status) if status is not None else None
        self.context = context

    @property
    def server_message(self) -> str:
        return str((self.status or {}).get("message") or "")

    @property
    def causes(self) -> list[StatusCause]:
        return status_causes(self.status)


class Unauthorized(ApiError):
    """HTTP 401: the server did not accept our credentials."""

    fatal = True


class Forbidden(ApiError):
    """HTTP 403: authenticated but not allowed (RBAC denial)."""


class NotFound(ApiError):
    """HTTP 404: the object (or the path) does not exist."""


class Conflict(ApiError):
    """HTTP 409: an SSA apply conflict (causes carry each conflicting field and manager) or a
    resourceVersion / precondition conflict."""


class AlreadyExists(Conflict):
    """HTTP 409 with reason AlreadyExists (create of an existing object)."""


class Invalid(ApiError):
    """HTTP 422: the object or patch was rejected; ``causes`` name the fields."""


def status_causes(status: Mapping[str, Any] | None) -> list[StatusCause]:
    """The ``details.causes`` of a Status body (empty when there are none)."""
    details = (status or {}).get("details") or {}
    out: list[StatusCause] = []
    for c in details.get("causes") or ():
        if isinstance(c, Mapping):
            out.append(StatusCause(reason=str(c.get("reason") or ""), message=str(c.get("message") or ""),
                                   field=str(c.get("field") or "")))
    return out


def _parse_status(body: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return doc
    return None


def _body_excerpt(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace").strip()
    if text.startswith("{"):
        return ""  # a JSON document that is not a Status (e.g. the 404 path index): not a message
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def answer_excerpt(body: bytes, limit: int = 80) -> str:
    """The start of an answer's body on one line, quoted: ``"<html><head><title>Sign in…"``."""
    text = " ".join(body[: limit * 4].decode("utf-8", "replace").split())
    if not text:
        return "an empty body"
    return json.dumps(text[:limit] + ("…" if len(text) > limit or len(body) > limit * 4 else ""),
                      ensure_ascii=False)


_GENERIC = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def _conflict_message(ctx: RequestContext, causes: list[StatusCause], server_message: str) -> str:
    field_causes = [c for c in causes if c.reason == "FieldManagerConflict" and c.field]
    if field_causes:
        # group fields by manager so a ten-field conflict with one manager stays readable
        by_manager: dict[str, list[str]] = {}
        for c in field_causes:
            by_manager.setdefault(c.manager or c.message, []).append(c.field)
        parts = [f'{", ".join(fields)} (owned by "{m}")' for m, fields in by_manager.items()]
        n = len(field_causes)
        return f"apply of {ctx.target()} failed with {n} conflict{'s' if n != 1 else ''}: " + "; ".join(parts)
    return f"conflict on {ctx.target()}: {one_line(server_message) or 'the object was modified'}"


def error_from_response(code: int, body: bytes, ctx: RequestContext) -> ApiError:
    """Map an HTTP error answer to the matching :class:`ApiError` subclass with a one-line message."""
    status = _parse_status(body)
    reason = str((status or {}).get("reason") or _GENERIC.get(code, ""))
    server_message = one_line(str((status or {}).get("message") or "")) or _body_excerpt(body)
    kw: dict[str, Any] = {"code": code, "reason": reason, "status": status, "context": ctx}
    target = ctx.target()

    if code == 401:
        return Unauthorized(
            f"the API server at {ctx.server} did not accept our credentials (Unauthorized)"
            + (f": {server_message}" if server_message and server_message != "Unauthorized" else ""),
            **kw)
    if code == 403:
        what = f"{ctx.verb} {target}" if ctx.resource else f"{ctx.verb} {ctx.path}"
        return Forbidden(f"forbidden to {what}: {server_message or 'access denied'}", **kw)
    if code == 404:
        if status is not None and server_message:
            msg = server_message
            if ctx.namespace and f'"{ctx.namespace}"' not in msg:
                msg += f' in namespace "{ctx.namespace}"'
        elif ctx.resource:
            msg = f"{target} not found (the server could not find the requested resource)"
        else:
            msg = f"the server could not find the requested resource ({ctx.verb} {ctx.path})"
        return NotFound(msg, **kw)
    if code == 409:
        if reason == "AlreadyExists":
            return AlreadyExists(server_message or f"{target} already exists", **kw)
        return Conflict(_conflict_message(ctx, status_causes(status), server_message), **kw)
    if code == 422:
        causes = status_causes(status)
        if causes:
            detail = "; ".join(f"{c.field}: {c.message}" if c.field else c.message for c in causes)
            return Invalid(f"{ctx.verb} of {target} rejected as invalid: {one_line(detail)}", **kw)
        return Invalid(f"{ctx.verb} of {target} rejected as invalid: {server_message or reason}", **kw)
    label = f"{code} {reason}".strip()
    return ApiError(f"{ctx.verb} {target} failed ({label}): {server_message or 'no details from the server'}", **kw)


def is_fatal(e: BaseException) -> bool:
    """See :attr:`KubeError.fatal`."""
    return isinstance(e, KubeError) and e.fatal
