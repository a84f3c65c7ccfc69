"""Error mapping from Status bodies as the API server sends them (bodies recorded from the lab
server), and the one-line rule."""

from __future__ import annotations

import json
from typing import Any

from kubectl_fieldown.kube import (
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Invalid,
    KubeError,
    NotFound,
    RequestContext,
    Unauthorized,
    UnknownResourceType,
    Unreachable,
)
from kubectl_fieldown.kube.errors import error_from_response, one_line

CTX = RequestContext(verb="apply", server="https://k:6443", path="/apis/example.com/v1/namespaces/ns/widgets/w1",
                     resource="widgets.example.com", name="w1", namespace="ns")


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return json.dumps(body).encode()


def test_one_line() -> None:
    assert one_line('Apply failed with 2 conflicts: conflicts with "bob":\n- .spec.color\n- .spec.replicas') == \
        'Apply failed with 2 conflicts: conflicts with "bob": .spec.color, .spec.replicas'
    assert one_line("a\nb") == "a; b"
    assert one_line("  plain  ") == "plain"


def test_conflict_with_two_managers() -> None:
    body = status(409, "Conflict", "Apply failed with 2 conflicts: ...", {"causes": [
        {"reason": "FieldManagerConflict", "message": 'conflict with "bob"', "field": ".spec.color"},
        {"reason": "FieldManagerConflict", "message": 'conflict with "carol" using example.com/v1',
         "field": ".spec.replicas"},
    ]})
    err = error_from_response(409, body, CTX)
    assert type(err) is Conflict and isinstance(err, KubeError)
    assert [c.manager for c in err.causes] == ["bob", "carol"]
    assert str(err) == ('apply of widgets.example.com "w1" in namespace "ns" failed with 2 conflicts: '
                        '.spec.color (owned by "bob"); .spec.replicas (owned by "carol")')


def test_other_mappings() -> None:
    assert type(error_from_response(409, status(409, "AlreadyExists", 'widgets.example.com "w1" already exists'),
                                    CTX)) is AlreadyExists
    assert type(error_from_response(422, status(422, "Invalid", "x"), CTX)) is Invalid
    assert type(error_from_response(401, status(401, "Unauthorized", "Unauthorized"), CTX)) is Unauthorized
    forbidden = error_from_response(403, status(403, "Forbidden", 'widgets.example.com "w1" is forbidden: nope'), CTX)
    assert type(forbidden) is Forbidden
    assert str(forbidden) == ('forbidden to apply widgets.example.com "w1" in namespace "ns": '
                              'widgets.example.com "w1" is forbidden: nope')
    # a 404 whose body is not a Status (the lab server's answer for /api)
    nf = error_from_response(404, b'{"paths": ["/apis"]}', RequestContext(verb="GET", server="s", path="/api"))
    assert type(nf) is NotFound and nf.status is None
    assert str(nf) == "the server could not find the requested resource (GET /api)"
    other = error_from_response(500, b"etcdserver: request timed out\n", CTX)
    assert type(other) is ApiError and other.code == 500
    assert str(other) == ('apply widgets.example.com "w1" in namespace "ns" failed (500 InternalError): '
                          "etcdserver: request timed out")


def test_non_http_errors() -> None:
    assert str(Unreachable("https://k:6443", "connection refused")) == \
        "cannot reach the API server at https://k:6443: connection refused"
    assert str(UnknownResourceType("foo")) == 'the server doesn\'t have a resource type "foo"'


def test_which_errors_stop_a_run_over_many_objects() -> None:
    from kubectl_fieldown.kube.errors import (
        ConfigError,
        Forbidden,
        NotFound,
        Unauthorized,
        UnknownResourceType,
        Unreachable,
        is_fatal,
    )

    assert is_fatal(ConfigError("no kubeconfig"))
    assert is_fatal(Unreachable("https://127.0.0.1:1", "connection refused"))
    assert Unauthorized.fatal and not Forbidden.fatal and not NotFound.fatal
    assert not is_fatal(UnknownResourceType("x"))
    assert not is_fatal(ValueError("not a cluster error"))
