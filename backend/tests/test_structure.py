"""The backend's layout rules, checked on the source (no services): no import cycle between
hitcurve modules, no module outside api/routes importing a route module, nothing outside api/
importing the API, the backend never importing the worker, only the launchers loose at the
package's top (everything else lives in a room: a layer folder or one named after a product
noun), no sizing module over 500 lines, and the routes within their line budget (HTTP only: what
they answer lives below them)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "backend" / "hitcurve"
ROUTES = PACKAGE / "api" / "routes"
# The routes' line budget, as a share of the backend: parsing, dependencies, status codes and the
# call below fit in it, and the work is elsewhere. A share, not a count, because the API grows with
# the product (each new question is a route); routes that grow fatter than the rest break it.
ROUTES_MAX_SHARE = 0.14
# Folders that must reach the backend through crud/schemas/domain modules, never through a route
# (the acceptance greps them as text; inside the backend the import graph is checked).
OUTSIDE = ["worker", "e2e", "bench", "scripts", "testing"]
# The only modules at the top of the package: the ASGI app and its launcher.
TOP_LEVEL = {"__init__.py", "main.py", "serve.py"}
# A sizing module does one job (loading, cache, band, -m rules, words, answers) and stays readable.
SIZING_MAX_LINES = 500


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
    backend = sum(len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py"))
    share = sum(lines.values()) / backend
    assert share <= ROUTES_MAX_SHARE, (
        f"{share:.1%} of {backend} lines",
        sorted(lines.items(), key=lambda kv: -kv[1]),
    )


def _imported_names(tree: ast.AST) -> set[str]:
    """Every absolute module name a file imports, anywhere in it (functions included)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_the_backend_never_imports_the_worker() -> None:
    importing = sorted(
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*.py")
        if any(n.split(".")[0] == "hitcurve_worker" for n in _imported_names(ast.parse(p.read_text())))
    )
    assert importing == []
    # Nor names it: comments and docs say "the worker" and the job, in the product's terms.
    naming = sorted(
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*")
        if p.is_file() and "hitcurve_worker" in p.read_text(errors="replace")
    )
    assert naming == []


def test_only_the_api_imports_the_api() -> None:
    inside = sorted(
        m
        for m, deps in _graph().items()
        if not m.startswith("hitcurve.api") and any(d.startswith("hitcurve.api") for d in deps)
    )
    # the launchers: the ASGI app mounts the API's routers, serve runs it with the API's protocol
    assert inside == ["hitcurve.main", "hitcurve.serve"]
    outside = sorted(
        str(p.relative_to(ROOT))
        for top in OUTSIDE
        for p in (ROOT / top).rglob("*.py")
        if "node_modules" not in p.parts
        and any(
            n == "hitcurve.api" or n.startswith("hitcurve.api.")
            for n in _imported_names(ast.parse(p.read_text()))
        )
    )
    assert outside == []


def test_only_the_launchers_are_loose_at_the_top() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == TOP_LEVEL


def test_sizing_modules_stay_short() -> None:
    lines = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "sizing").glob("*.py")}
    assert len(lines) > 1 and max(lines.values()) <= SIZING_MAX_LINES, lines


def test_only_the_api_builds_api_errors() -> None:
    """Code below the API raises the product's own refusals (hitcurve.core.domain), which the API
    maps to their status in one handler; an ApiError, with its HTTP status, is the API's own."""
    building = sorted(
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*.py")
        if "api" not in p.relative_to(PACKAGE).parts[:1]
        and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "ApiError"
            for n in ast.walk(ast.parse(p.read_text()))
        )
    )
    assert building == []
