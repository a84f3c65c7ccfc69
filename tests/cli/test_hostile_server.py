"""The command line against a server that answers what no API server answers (issue 18, items
9-11; tests/hostile_server.py): one ``error:`` line that says what came, exit 1 — never an
``internal error`` — and ``--request-timeout`` ending a trickling answer, as kubectl's does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run
from hostile_server import WIDGETS, Answer, Request, answer, hostile_server, json_answer, raw_answer, trickle


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIELDOWN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FIELDOWN_DEBUG", raising=False)


def widget(name: str) -> dict[str, object]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "ns"}}


@pytest.mark.parametrize(("args", "reply", "said"), [
    (["show", "widgets/w"], answer(200, "<html><body>Please sign in</body></html>", "text/html"),
     f'GET {{url}}{WIDGETS}/w: the server answered 200 OK (text/html), not JSON: "<html><body>Please sign in'
     '</body></html>"'),
    (["show", "widgets/w"], answer(200, '{"kind": "Widget", "meta', "application/json"),
     f'GET {{url}}{WIDGETS}/w: the server answered 200 OK (application/json), not JSON: '
     '"{\\"kind\\": \\"Widget\\", \\"meta"'),
    (["show", "widgets/w"], answer(307, "", "text/plain", headers={"Location": "https://sso.example/login?next=/"}),
     f'GET {{url}}{WIDGETS}/w: the server answered 307 Temporary Redirect (text/plain), a redirect to '
     '"https://sso.example/login?next=/"; not followed (the credentials would go with it)'),
    (["show", "widgets"], json_answer({"kind": "WidgetList", "items": [widget("a"), 7]}),
     f"GET {{url}}{WIDGETS}: the server answered 200 OK (application/json) whose items[1] is a JSON number, "
     "not an object"),
    (["show", "widgets"], json_answer({"kind": "WidgetList", "metadata": {"continue": "again"}, "items": []}),
     'list widgets.example.com in namespace "ns": the server answered a continue token it had already given '
     "(after 2 pages); stopped instead of listing the same pages forever"),
    (["show", "widgets/w"], raw_answer("HTTP/1.1 200 OK\r\nContent-Length: 3000000000", lambda: iter([b"[1"])),
     f"GET {{url}}{WIDGETS}/w: the server announced an answer of 2.79397 GiB (Content-Length 3000000000), more "
     "than the 1 GiB this tool reads per answer"),
])
def test_one_line_and_exit_1(args: list[str], reply: Answer, said: str, tmp_path: Path) -> None:
    def route(req: Request) -> Answer:
        return reply

    with hostile_server(route) as server:
        r = run(*args, "--kubeconfig", str(server.kubeconfig(tmp_path)))
    assert r.code == 1, r.err
    assert r.err_lines == ["error: " + said.replace("{url}", server.url)], r.err
    assert "internal error" not in r.err


def test_audit_reports_a_type_it_could_not_read_and_fails(tmp_path: Path) -> None:
    reply = answer(200, "<html>maintenance</html>", "text/html")
    with hostile_server(lambda req: reply) as server:
        r = run("audit", "-o", "json", "--kubeconfig", str(server.kubeconfig(tmp_path)))
    doc = json.loads(r.out)
    (item,) = doc["items"]
    assert (item["id"], item["severity"]) == ("type-error", "error")
    assert item["message"] == (f'GET {server.url}{WIDGETS}: the server answered 200 OK (text/html), not JSON: '
                               '"<html>maintenance</html>"')
    # its only type could not be read: the audit looked at nothing
    assert r.code == 2
    assert r.err_lines == ["error: nothing was audited: none of the 1 type could be listed (1 failed); the findings "
                           "say why (are these the right credentials?)"]


def test_request_timeout_ends_a_trickling_answer(tmp_path: Path) -> None:
    # a byte every second: no read waits 3 s, so only the limit on the whole request can end it
    # (the answer alone would take 80 s)
    with hostile_server(lambda req: trickle(1.0) if req.path == WIDGETS + "/w" else answer(404, "")) as server:
        r = run("show", "widgets/w", "--kubeconfig", str(server.kubeconfig(tmp_path)), "--request-timeout", "3s")
    assert r.code == 1
    assert r.err_lines == [f"error: cannot reach the API server at {server.url}: no complete answer within 3s "
                           "(request timeout; 200 received, the body incomplete)"]


COMMANDS = {
    "show": ["show", "widgets/w"],
    "conflicts": ["conflicts", "-f", "{manifest}", "--field-manager", "x"],
    "migrate": ["migrate", "widgets/w", "--to", "server-side"],
    "strip-last-applied": ["strip-last-applied", "widgets/w", "--field", ".spec.x"],
    "handover": ["handover", "widgets/w", "--field", ".spec.x", "--to", "y"],
    "reset": ["reset", "widgets/w"],
    "audit": ["audit"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_says_what_came_instead_of_json(name: str, tmp_path: Path) -> None:
    """A proxy's login page for everything but discovery: each command ends with its exit code for
    "could not do it" (2 where 1 is a result, README "Exit codes") and an error line quoting the page."""
    manifest = tmp_path / "w.yaml"
    manifest.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\n")
    page = answer(200, "<html><title>Proxy login</title></html>", "text/html")
    with hostile_server(lambda req: page) as server:
        args = [w.replace("{manifest}", str(manifest)) for w in COMMANDS[name]]
        r = run(*args, "--kubeconfig", str(server.kubeconfig(tmp_path)))
    assert r.code == (2 if name in ("conflicts", "audit") else 1), (r.code, r.out, r.err)
    assert "internal error" not in r.err and "Traceback" not in r.err, r.err
    errors = [line for line in r.err_lines if line.startswith("error: ")]
    assert errors, r.err
    assert '"<html><title>Proxy login</title></html>"' in r.out + r.err, r.out + r.err
