#!/usr/bin/env python3
"""Regenerate the pictures of real output in docs/img/ (show's tree and blame, conflicts, watch) as SVG.

Each picture is one real run of the command line, in this process (``kubectl_fieldown.cli.main``),
on the bundled examples, with colour forced: its output, ANSI colours included, is decoded by
rich (``Text.from_ansi``) into a recording console of a fixed width and saved as SVG. No rendering
is done here, so the pictures show exactly what a terminal shows.

``watch`` needs a server: its picture is a run against a replay of what a real API server sent
(``examples/watch/replicas-fight.json``, recorded by ``hack/record-watch-example.py``: the CRD, the
LIST answer and the watch events), served here over plain HTTP on loopback; "now" is then the
recording's last entry time, so that the times of writes without an entry time fit in.

The pictures do not depend on the day or the machine: "now" is frozen at :data:`FROZEN_NOW` (the
ages in the tree and in blame are relative to it), the width, the colour system and the titles
are fixed, and the environment the tool reads for colour is set here. Lines wider than a picture
are cut with an ellipsis (the script says which), as ``less -S`` would show them.

    .venv/bin/python hack/pictures.py              # writes docs/img/*.svg
    .venv/bin/python hack/pictures.py --out DIR    # writes them to DIR instead

tests/packaging/test_pictures.py regenerates them and compares them with the committed ones: when
the output of the tool changes, run this script and commit docs/img/.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

IMG_DIR = REPO / "docs" / "img"

# a little after the newest managedFields time of examples/deployment.yaml (2024-06-10T09:06:30Z),
# so the ages read like those of a live object
FROZEN_NOW = dt.datetime(2024, 6, 12, 12, 0, 0, tzinfo=dt.timezone.utc)

# what the tool and rich read to decide on colour: set, not inherited, so that every machine gets
# the same pictures (NO_COLOR would turn the colours off, a dumb TERM would too)
COLOUR_ENVIRONMENT = {"FORCE_COLOR": "1", "COLORTERM": "truecolor", "TERM": "xterm-256color"}
UNSET_ENVIRONMENT = ("NO_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


@dataclass(frozen=True)
class Picture:
    """One command run and how much of its output the picture shows."""

    file: str
    # the window title: the command, shortened where it would not fit (the docs give it whole)
    title: str
    args: tuple[str, ...]
    exit_code: int = 0
    width: int = 100
    # a screenful: the lines after it are left out, and a last line says how many
    max_lines: int | None = None
    # a recording of a real server's answers to replay (watch), relative to the repository
    replay: str | None = None

    @property
    def command(self) -> str:
        return "kubectl fieldown " + shlex.join(self.args)

    @property
    def unique_id(self) -> str:
        # the prefix of the SVG's CSS classes: fixed, so regenerating gives the same bytes
        return "fieldown-" + self.file.removesuffix(".svg")


PICTURES = (
    Picture(
        "show-tree.svg",
        "kubectl fieldown show -i examples/deployment.yaml --path …",
        ("show", "-i", "examples/deployment.yaml", "--path", ".metadata.labels", "--path", ".spec.replicas",
         "--path", ".spec.template.spec.containers"),
    ),
    Picture(
        "show-blame.svg",
        "kubectl fieldown show -i examples/deployment.yaml -o blame",
        ("show", "-i", "examples/deployment.yaml", "-o", "blame"),
        max_lines=48,
    ),
    Picture(
        "conflicts.svg",
        "kubectl fieldown conflicts -f examples/apply/deployment.yaml --live … --field-manager kubectl",
        ("conflicts", "-f", "examples/apply/deployment.yaml", "--live", "examples/deployment.yaml",
         "--field-manager", "kubectl"),
        exit_code=1,  # conflicts predicted
        width=108,
    ),
    Picture(
        "watch.svg",
        "kubectl fieldown watch widgets -n shop --max-changes 4",
        ("watch", "widgets", "-n", "shop", "--max-changes", "4"),
        width=150,
        replay="examples/watch/replicas-fight.json",
    ),
)


def _frozen_now() -> dt.datetime:
    return FROZEN_NOW


def _replay_times(recording: dict[str, Any]) -> dt.datetime:
    """The newest managedFields time of the recording."""
    times = [e["time"] for ev in recording["events"] for e in ev["object"]["metadata"].get("managedFields", [])
             if e.get("time")]
    return max(dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc) for t in times)


@contextlib.contextmanager
def _replay_server(recording: dict[str, Any], tmp: Path) -> Iterator[Path]:
    """Serve ``recording`` as an API server would (discovery, the CRD, the LIST, the WATCH: its
    events, then nothing until the client leaves) on loopback; yield a kubeconfig for it."""
    import http.server
    import json
    import threading

    crd = recording["crd"]
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    version = crd["spec"]["versions"][0]["name"]
    done = threading.Event()

    def status(code: int) -> dict[str, Any]:
        return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": "NotFound",
                "message": "the server could not find the requested resource"}

    def resources(gv: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": items}

    routes: dict[str, Any] = {
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
             "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}}
            for g, v in ((group, version), ("apiextensions.k8s.io", "v1"))]},
        f"/apis/{group}/{version}": resources(f"{group}/{version}", [
            {"name": plural, "singularName": crd["spec"]["names"]["singular"], "namespaced": True,
             "kind": crd["spec"]["names"]["kind"], "verbs": ["get", "list", "watch", "patch", "create", "update"]}]),
        "/apis/apiextensions.k8s.io/v1": resources("apiextensions.k8s.io/v1", [
            {"name": "customresourcedefinitions", "singularName": "customresourcedefinition", "namespaced": False,
             "kind": "CustomResourceDefinition", "verbs": ["get", "list", "watch"]}]),
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}": crd,
    }
    ns = recording["list"]["items"][0]["metadata"]["namespace"]
    collection = f"/apis/{group}/{version}/namespaces/{ns}/{plural}"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, doc: Any, code: int = 200) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == collection and "watch=true" in query:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for ev in recording["events"]:
                    data = json.dumps(ev).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                done.wait(60)
                return
            if path == collection:
                self._json(recording["list"])
            elif path in routes:
                self._json(routes[path])
            else:
                self._json(status(404), 404)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp / "replay.kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "replay",
        "clusters": [{"name": "replay", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "u", "user": {"token": "replay"}}],
        "contexts": [{"name": "replay", "context": {"cluster": "replay", "user": "u", "namespace": ns}}]}))
    try:
        yield kubeconfig
    finally:
        done.set()
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _colour_terminal() -> Iterator[None]:
    """The environment of a colour terminal, the repository as working directory (the pictures
    show the example paths as a user types them) and a frozen clock, for the duration."""
    from kubectl_fieldown.render import common

    if not callable(getattr(common, "now_utc", None)):
        raise SystemExit("hack/pictures.py: kubectl_fieldown.render.common.now_utc is gone; "
                         "freeze the clock where the renderers read it now")
    saved_env = dict(os.environ)
    saved_cwd = Path.cwd()
    saved_now = common.now_utc
    os.environ.update(COLOUR_ENVIRONMENT)
    for name in UNSET_ENVIRONMENT:
        os.environ.pop(name, None)
    os.chdir(REPO)
    common.now_utc = _frozen_now
    try:
        yield
    finally:
        common.now_utc = saved_now
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_command(picture: Picture) -> str:
    """The command's standard output, with its ANSI colours."""
    import json
    import tempfile

    from kubectl_fieldown.cli.main import main
    from kubectl_fieldown.render import common

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_colour_terminal())
        if picture.replay:
            recording = json.loads((REPO / picture.replay).read_text())
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fieldown-pictures-")))
            kubeconfig = stack.enter_context(_replay_server(recording, tmp))
            os.environ.update(KUBECONFIG=str(kubeconfig), FIELDOWN_CACHE_DIR=str(tmp / "cache"))
            now = _replay_times(recording)
            common.now_utc = lambda: now
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        code = main(list(picture.args))
    # a replayed watch says on stderr when it has begun: a note, not a failure
    problems = [line for line in err.getvalue().splitlines() if not (picture.replay and line.startswith("note: "))]
    if code != picture.exit_code or problems:
        raise SystemExit(f"hack/pictures.py: {picture.command} exited {code} (expected {picture.exit_code})"
                         f"{': ' + err.getvalue().strip() if err.getvalue() else ''}")
    return out.getvalue()


@dataclass(frozen=True)
class Rendered:
    svg: str
    cut_lines: int  # lines wider than the picture, shown cut with an ellipsis


def render_svg(picture: Picture, ansi: str) -> Rendered:
    from rich.console import Console
    from rich.terminal_theme import SVG_EXPORT_THEME
    from rich.text import Text

    lines = list(Text.from_ansi(ansi.rstrip("\n")).split("\n"))
    if picture.max_lines is not None and len(lines) > picture.max_lines:
        rest = len(lines) - picture.max_lines
        lines = lines[: picture.max_lines]
        lines.append(Text(f"… ({rest} more lines)", style="dim italic"))
    console = Console(
        file=io.StringIO(),
        record=True,
        width=picture.width,
        force_terminal=True,
        color_system="truecolor",
        no_color=False,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(Text("\n").join(lines), no_wrap=True, overflow="ellipsis", crop=True)
    cut = sum(1 for line in lines if line.cell_len > picture.width)
    svg = console.export_svg(title=picture.title, theme=SVG_EXPORT_THEME, unique_id=picture.unique_id)
    return Rendered(svg, cut)


def generate(out_dir: Path, pictures: Sequence[Picture] = PICTURES) -> list[Path]:
    """Write every picture to ``out_dir``; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for picture in pictures:
        rendered = render_svg(picture, run_command(picture))
        if rendered.cut_lines:
            print(f"{picture.file}: {rendered.cut_lines} line(s) wider than {picture.width} columns, cut",
                  file=sys.stderr)
        path = out_dir / picture.file
        # bytes, not text mode: the same file on every platform (no CRLF on Windows)
        path.write_bytes(rendered.svg.encode("utf-8"))
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=IMG_DIR, help="directory to write to (default: docs/img)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
