"""The pictures in docs/img/ stay true to the code: hack/pictures.py, run again, draws the same ones,
and every picture the README and docs/ show exists.

When the output of the tool changes (text, layout, colours), this test fails until the pictures are
regenerated: ``.venv/bin/python hack/pictures.py`` and commit docs/img/.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .helpers import REPO, load_script

pictures = load_script("pictures")

IMG_DIR = REPO / "docs" / "img"
SVG = "{http://www.w3.org/2000/svg}"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Run:
    """Text in one style: its CSS declaration (colour, weight) as rich wrote it."""

    style: str
    text: str


@dataclass(frozen=True)
class Drawn:
    """What an SVG terminal picture shows: its title and, line by line, the styled text."""

    title: str
    lines: tuple[tuple[Run, ...], ...]


def drawn(svg: bytes, unique_id: str) -> Drawn:
    """The text and styles of a picture of rich's ``export_svg``, without its layout.

    The test compares this rather than the bytes: the bytes are the same when the same rich
    version draws them, but rich's SVG template (fonts, clip paths, class numbering, how a line
    is split into <text> elements) may change with another version of rich, which the project
    does not pin. Text, colours and weights are what the pictures must keep true.

    Rich leaves out runs of blanks and places each <text> at its column: the columns come back
    from the x coordinates (rich's cell width is the textLength of a run over its cells)."""
    from rich.cells import cell_len

    root = ET.fromstring(svg)
    css = "".join(style.text or "" for style in root.iter(f"{SVG}style"))
    classes = {name: " ".join(decl.split()) for name, decl in re.findall(r"\.([\w-]+)\s*\{([^}]*)\}", css)}
    title = ""
    cells: dict[int, dict[int, tuple[str, str]]] = {}
    line_clip = re.compile(rf"url\(#{re.escape(unique_id)}-line-(\d+)\)")
    cell_width = 0.0
    for text in root.iter(f"{SVG}text"):
        cls = text.get("class", "")
        # rich writes each line's newline into its last <text>: not drawn
        content = (text.text or "").replace("\xa0", " ").replace("\n", "")
        if cls == f"{unique_id}-title":
            title = content
            continue
        m = line_clip.fullmatch(text.get("clip-path", ""))
        assert m, f"a <text> outside the terminal lines: {ET.tostring(text)!r}"
        if not content:
            continue
        if not cell_width:
            cell_width = float(text.get("textLength", "0")) / cell_len(content)
            assert cell_width > 0
        line = cells.setdefault(int(m.group(1)), {})
        column = round(float(text.get("x", "0")) / cell_width)
        style = classes.get(cls, "")
        for ch in content:
            # a blank looks the same in any foreground style
            line[column] = (ch, "" if ch == " " else style)
            column += cell_len(ch)
    out: list[tuple[Run, ...]] = []
    for n in range(max(cells, default=-1) + 1):
        line = cells.get(n, {})
        runs: list[Run] = []
        for column in range(max(line, default=-1) + 1):
            ch, style = line.get(column, (" ", ""))
            if ch and runs and runs[-1].style == style:
                runs[-1] = Run(style, runs[-1].text + ch)
            else:
                runs.append(Run(style, ch))
        # the padding to the right edge is layout, not output
        while runs and not runs[-1].text.strip():
            runs.pop()
        out.append(tuple(runs))
    return Drawn(title, tuple(out))


def test_the_committed_pictures_are_what_the_script_draws(tmp_path: Path) -> None:
    # a process of its own: the script sets the environment and the clock for the runs it draws
    r = subprocess.run([sys.executable, str(REPO / "hack" / "pictures.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.file for p in pictures.PICTURES)
    assert sorted(p.name for p in IMG_DIR.glob("*.svg")) == sorted(p.file for p in pictures.PICTURES), \
        "docs/img/ holds exactly the pictures hack/pictures.py draws"
    for picture in pictures.PICTURES:
        fresh = drawn((tmp_path / picture.file).read_bytes(), picture.unique_id)
        committed = drawn((IMG_DIR / picture.file).read_bytes(), picture.unique_id)
        assert fresh.lines, picture.file
        assert committed == fresh, (
            f"docs/img/{picture.file} is not what '{picture.command}' prints now: "
            "run .venv/bin/python hack/pictures.py and commit docs/img/"
        )


def test_the_pictures_show_the_real_output() -> None:
    """The drawn text is the command's own output (checked on a few lines that matter), so the
    comparison above is not between two empty or broken drawings."""
    by_file = {p.file: p for p in pictures.PICTURES}

    def text_of(name: str) -> list[str]:
        picture = by_file[name]
        return ["".join(run.text for run in line) for line in drawn((IMG_DIR / name).read_bytes(),
                                                                       picture.unique_id).lines]

    tree = text_of("show-tree.svg")
    assert tree[0] == "Deployment shop/web"
    assert any("replicas: 4" in line and "handover-to-hpa, kubectl (Update, scale)" in line for line in tree)
    assert any(line.split()[:2] == ["MANAGER", "OPERATION"] for line in tree), "the legend"
    blame = text_of("show-blame.svg")
    assert any(line.startswith("handover-to-hpa, kubectl (Update, scale)") and line.endswith("replicas: 4")
               for line in blame)
    assert blame[-1].startswith("… (") and blame[-1].endswith(" more lines)")
    conflicts = text_of("conflicts.svg")
    assert conflicts[0].startswith("Deployment shop/web")
    assert any(line.strip().startswith("conflict  .spec.replicas") for line in conflicts)
    assert conflicts[-1].strip() == "→ 3 conflicts on 2 fields: the apply fails as it is"
    watch = text_of("watch.svg")
    assert watch[0].endswith("widget.example.com/w -n shop  .spec.replicas: 3 → 5  by kubectl (Update, /scale)")
    assert any(line.endswith("widget.example.com/w2 -n shop  created by kubectl-client-side-apply (Update)")
               for line in watch)
    assert any(line.startswith("  run: kubectl fieldown strip-last-applied widget.example.com/w -n shop")
               for line in watch)
    assert "Fights: 1" in watch


IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)[^)]*\)|<img\b[^>]*\bsrc=\"(?P<html_src>[^\"]+)\"")


def test_every_picture_the_docs_show_exists_and_has_alt_text() -> None:
    shown: set[Path] = set()
    for doc in DOCS:
        for m in IMAGE.finditer(doc.read_text(encoding="utf-8")):
            src = m.group("src") or m.group("html_src")
            if re.match(r"[a-z]+:", src):
                continue  # a picture elsewhere on the web is not ours to check
            target = (doc.parent / src).resolve()
            assert target.is_file(), f"{doc.relative_to(REPO)} shows {src}, which does not exist"
            if m.group("src"):
                assert m.group("alt").strip(), f"{doc.relative_to(REPO)}: {src} has no alt text"
            shown.add(target)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("show-tree.svg", "conflicts.svg"):
        assert f"docs/img/{name}" in readme, f"the README shows {name}"
    unshown = sorted(p.name for p in IMG_DIR.glob("*.svg") if p.resolve() not in shown)
    assert not unshown, f"pictures no document shows: {unshown}"
