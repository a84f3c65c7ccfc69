"""The house rules of the package's layout (issue 25): no import cycle among kubectl_fieldown's
modules, no module over 600 lines, and no module loose at the package's root but ``__init__``,
``__main__`` and the compat modules of the old paths (each one star import of its new home, which
nothing in the package imports); and the "Layout" map of docs/development.md names every module
in its package's entry.

The import graph is built statically with ``ast`` from module-level imports only: every ``import``
and ``from ... import`` that runs when the module is imported, including those nested in a
module-level ``if``/``try`` — and those under ``if TYPE_CHECKING:`` too, since a cycle of
type-only imports is still a knot in the design (and would become a real one the day an annotation
is evaluated). Imports inside functions and methods do not count: they are lazy on purpose (start-up
speed: the cluster layer is imported only when a command talks to a cluster).

``from package import name`` is an edge to ``package.name`` when that is a module, else to the
package (its ``__init__``); a package's ``__init__`` counts like any module (a re-export is an
import)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import kubectl_fieldown

MAX_LINES = 600
PACKAGE = "kubectl_fieldown"
# the old paths of the modules grouped into packages (tests/test_old_paths.py); no new one
COMPAT = frozenset({"applyplan", "conflictreport", "csaupgrade", "files", "goscalar", "jsonpatch", "managedfields",
                    "objects", "redact", "safeyaml", "sources", "value", "yamlpos"})
ROOT = Path(kubectl_fieldown.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([PACKAGE, *parts])] = path
    return found


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run (or, under ``if TYPE_CHECKING:``, are read by the type checker) at import
    time: anywhere but inside a function (or a lambda)."""
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append(child)
            elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child)

    visit(tree)
    return out


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> set[str]:
    """The package's modules that one import statement of module ``name`` (at ``path``) imports."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = alias.name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target:
                out.add(target)
        return out
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    if node.level:
        base_parts = package.split(".")
        if node.level > 1:
            base_parts = base_parts[: len(base_parts) - (node.level - 1)]
        base = ".".join(base_parts)
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    if not base.startswith(PACKAGE):
        return out
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            out.add(sub)
        elif base in modules:
            out.add(base)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _module_level_imports(tree):
            graph[name] |= _targets(name, path, node, modules)
    for name in graph:
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycle() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles among kubectl_fieldown's modules (module-level imports):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_no_module_over_600_lines() -> None:
    big = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    over = sorted((n, name) for name, n in big.items() if n > MAX_LINES)
    assert not over, f"modules over {MAX_LINES} lines: " + ", ".join(f"{name} ({n})" for n, name in over)


def test_the_graph_sees_imports() -> None:
    """The graph is not empty by mistake: a module-level edge and a TYPE_CHECKING one are found, a lazy
    one (inside a function) is not."""
    graph = _graph()
    assert "kubectl_fieldown.fieldpath" in graph["kubectl_fieldown.ownership.tree"]
    assert "kubectl_fieldown.kube.discovery" in graph["kubectl_fieldown.kube.client"]  # under TYPE_CHECKING
    assert "kubectl_fieldown.kube.client" not in graph["kubectl_fieldown.cli.completion"]  # inside _client()
    assert sum(len(v) for v in graph.values()) > 100


def test_nothing_loose_at_the_root_but_the_entry_points_and_the_compat_modules() -> None:
    loose = {path.stem for path in ROOT.glob("*.py")} - {"__init__", "__main__"}
    assert loose == COMPAT, f"modules at the package's root: {sorted(loose - COMPAT)} (put them in a package)"


def test_a_compat_module_is_one_star_import_of_its_new_home() -> None:
    modules = _modules()
    for stem in sorted(COMPAT):
        path = ROOT / f"{stem}.py"
        doc, star = ast.parse(path.read_text(encoding="utf-8")).body  # a docstring, then the one import
        assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant), stem
        assert isinstance(star, ast.ImportFrom) and [a.name for a in star.names] == ["*"], stem
        assert _targets(f"{PACKAGE}.{stem}", path, star, modules) - {f"{PACKAGE}.{n}" for n in COMPAT}, stem


def test_nothing_in_the_package_imports_an_old_path() -> None:
    """Lazy imports (inside functions) included: the compat modules are for code outside."""
    modules = _modules()
    old = {f"{PACKAGE}.{n}" for n in COMPAT}
    found = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and name not in old:
                found += [f"{name} imports {t}" for t in sorted(_targets(name, path, node, modules) & old)]
    assert not found, "\n".join(found)


def _layout() -> tuple[str, dict[str, str]]:
    """docs/development.md's Layout map: the text of the package's own entry (its root modules) and,
    per package (``base/``), the text of its entry with the lines below it."""
    doc = (ROOT.parent / "docs" / "development.md").read_text(encoding="utf-8")
    block = doc.split("## Layout", 1)[1].split("```")[1]
    root, entries, current = [], {}, None
    for line in block.splitlines():
        if line.startswith(f"{PACKAGE}/"):
            current = "."
        elif line and not line.startswith(" "):  # tests/, hack/, ...: past the package
            current = None
        elif re.match(r"  \S", line) and line.split()[0].endswith("/"):
            current = line.split()[0]
        if current == ".":
            root.append(line)
        elif current is not None:
            entries[current] = entries.get(current, "") + line + "\n"
    return "\n".join(root), entries


def test_the_layout_in_development_md_names_every_module_where_it_is() -> None:
    root, entries = _layout()
    missing = [f"{p.name} (root)" for p in sorted(ROOT.glob("*.py")) if p.name not in root]
    for name, path in _modules().items():
        parts = name.split(".")[1:]
        if len(parts) == 1 and path.name == "__init__.py":
            missing += [] if f"{parts[0]}/" in entries else [f"{parts[0]}/"]
        elif len(parts) == 2 and not re.search(rf"\b{parts[1]}\b", entries.get(f"{parts[0]}/", "")):
            missing.append(f"{parts[0]}/{parts[1]}.py")
    assert not missing, "not in docs/development.md's Layout where they are: " + ", ".join(missing)
