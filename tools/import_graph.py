"""The import graph of a package, read from the source (nothing is imported).

Each `import` / `from ... import` of a module inside the package is an edge, classed as
*module-level* (run when the importing module is loaded: the top level, class bodies, `if`
blocks) or *function-level* (inside a `def`: run only when the function is called). An
`if TYPE_CHECKING:` import is left out (it never runs). Importing ``a.b.c`` also runs the
``__init__`` of ``a.b``, but that is not counted as an edge: a package's ``__init__`` is loaded
before any of its modules whatever the design, so it says nothing about their direction.

Prints the strongly connected components of more than one module (the import circles) of the
module-level graph, and of the graph with the function-level imports added.

    python tools/import_graph.py [validator]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules(package: Path) -> dict[str, Path]:
    """Dotted name → file, for every module of ``package`` (a folder with __init__.py)."""
    found = {}
    for file in sorted(package.rglob("*.py")):
        parts = file.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = file
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, bool]]:
    """(import statement, inside a function) for every import that can run."""
    found: list[tuple[ast.stmt, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for other in child.orelse:
                    visit_one(other, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append((child, in_function))
        visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def edges(package: Path) -> dict[str, dict[str, set[str]]]:
    """{"module": {...}, "function": {...}}: importer → imported modules of the package."""
    known = modules(package)
    graph: dict[str, dict[str, set[str]]] = {"module": {m: set() for m in known},
                                             "function": {m: set() for m in known}}
    for name, file in known.items():
        is_package = file.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        for statement, in_function in _imports(ast.parse(file.read_text(encoding="utf-8"), str(file))):
            targets: list[str] = []
            if isinstance(statement, ast.Import):
                targets = [alias.name for alias in statement.names]
            else:
                if statement.level:
                    base = here[:len(here) - statement.level + 1]
                    prefix = ".".join(base + ([statement.module] if statement.module else []))
                else:
                    prefix = statement.module or ""
                for alias in statement.names:  # `from . import loader` names a module
                    candidate = f"{prefix}.{alias.name}"
                    targets.append(candidate if candidate in known else prefix)
            for target in targets:
                while target and target not in known:  # `import a.b.c` where a.b.c is a name
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph["function" if in_function else "module"][name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


def combined(graph: dict[str, dict[str, set[str]]]) -> dict[str, set[str]]:
    return {m: graph["module"][m] | graph["function"][m] for m in graph["module"]}


def main(argv: list[str]) -> int:
    package = ROOT / (argv[0] if argv else "validator")
    graph = edges(package)
    for title, view in (("module-level imports", graph["module"]),
                        ("module- and function-level imports", combined(graph))):
        found = cycles(view)
        print(f"{title}: {len(found)} circle(s)")
        for component in found:
            print(f"  {len(component)} modules: {', '.join(component)}")
            inside = set(component)
            for source in component:
                for target in sorted(view[source] & inside):
                    level = "module" if target in graph["module"][source] else "function"
                    print(f"    {source} -> {target} ({level})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
