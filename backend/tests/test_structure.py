"""The backend's layout rules, checked on the source (no services): no import cycle between
hitcurve modules, no module outside api/routes importing a route module, and the routes within
their line budget (HTTP only: what they answer lives below them). Issue 13."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "backend" / "hitcurve"
ROUTES = PACKAGE / "api" / "routes"
# The routes' line budget: parsing, dependencies, status codes and the call below fit in it.
ROUTES_MAX_LINES = 2000
# Folders that must reach the backend through crud/schemas/domain modules, never through a route
# (the acceptance greps them as text; inside the backend the import graph is checked).
OUTSIDE = ["worker", "e2e", "bench", "scripts", "testing"]


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST, me: str, is_package: bool, known: set[str]) -> set[str]:
    """The hitcurve modules a module imports when it runs (anywhere in it, functions included:
    a cycle hidden in a function is still a cycle; `if TYPE_CHECKING:` blocks never run)."""
    out: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking(node):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = me.split(".") if is_package else me.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in known else base)
    return {m for m in out if m in known and m != me}


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(ast.parse(p.read_text()), m, p.name == "__init__.py", known) for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_backend() -> None:
    graph = _graph()
    assert len(graph) > 50 and graph["hitcurve.api.routes.inventory"], "the graph missed modules"
    assert _cycles(graph) == []


def test_only_the_api_imports_route_modules() -> None:
    inside = sorted(
        m
        for m, deps in _graph().items()
        if not m.startswith("hitcurve.api") and any(d.startswith("hitcurve.api.routes") for d in deps)
    )
    assert inside == []
    outside = []
    for top in OUTSIDE:
        for p in (ROOT / top).rglob("*"):
            if (
                "node_modules" in p.parts
                or not p.is_file()
                or p.suffix not in {".py", ".ts", ".sh", ".md", ""}
            ):
                continue
            text = p.read_text(errors="replace")
            if "api.routes" in text or "api/routes" in text:
                outside.append(str(p.relative_to(ROOT)))
    assert outside == []


def test_routes_stay_within_their_line_budget() -> None:
    lines = {p.name: len(p.read_text().splitlines()) for p in ROUTES.glob("*.py")}
    assert sum(lines.values()) <= ROUTES_MAX_LINES, sorted(lines.items(), key=lambda kv: -kv[1])
