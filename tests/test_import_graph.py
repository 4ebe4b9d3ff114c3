"""The validator reads bottom-up: no import circle, at module level or inside functions.

The graph is built from the source by tools/import_graph.py (run it to see the circles and the
edges that close them). Where a lower layer must call a higher one, the higher one hands it a
callback (the engine gives validator.references its linter, and validator.parallel the function
to map), so no import points back up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
assert _SPEC is not None and _SPEC.loader is not None
import_graph = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(import_graph)

GRAPH = import_graph.edges(ROOT / "validator")


def test_the_graph_sees_the_validator() -> None:
    assert len(GRAPH["module"]) > 30
    assert "validator.rules.assets" in GRAPH["module"]["validator.rules"]
    assert "validator.references" in GRAPH["module"]["validator.engine"]
    assert "validator.parallel" in GRAPH["function"]["validator.engine"]  # loaded for big trees only


def test_no_circle_among_module_level_imports() -> None:
    assert import_graph.cycles(GRAPH["module"]) == []


def test_no_circle_with_function_level_imports() -> None:
    # A function-level import is still a dependency: it must not point back up either.
    assert import_graph.cycles(import_graph.combined(GRAPH)) == []


def test_the_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_graph.cycles(graph) == [["a", "b", "c"]]


def test_imports_are_read_and_classed(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import leaf\n")
    (package / "sub" / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .. import top\nif TYPE_CHECKING:\n    from ..other import X\n")
    (package / "top.py").write_text("def f():\n    from .sub.leaf import g\n")
    (package / "other.py").write_text("import pkg.top\n")
    graph = import_graph.edges(package)
    assert graph["module"]["pkg.sub"] == {"pkg.sub.leaf"}
    assert graph["module"]["pkg.sub.leaf"] == {"pkg.top"}  # the TYPE_CHECKING import never runs
    assert graph["function"]["pkg.top"] == {"pkg.sub.leaf"}
    assert graph["module"]["pkg.other"] == {"pkg.top"}
    assert import_graph.cycles(graph["module"]) == []
    assert import_graph.cycles(import_graph.combined(graph)) == [["pkg.sub.leaf", "pkg.top"]]
