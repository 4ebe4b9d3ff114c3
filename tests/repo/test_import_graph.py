"""Every package reads bottom-up: no import circle in validator/, runner/ or quiz/, at module
level or inside functions; the packages themselves run one way (quiz -> runner -> validator, and
quiz -> validator); and runner/ and quiz/ use only the validator's declared sibling API
(validator/sibling_api.py), never a name that starts with an underscore.

The graph is built from the source by tools/import_graph.py (run it to see the circles and the
edges that close them). Where a lower layer must call a higher one, the higher one hands it a
callback (the engine gives validator.references its linter, and validator.parallel the function
to map; a job type registers its executor with the run contract), so no import points back up.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
assert _SPEC is not None and _SPEC.loader is not None
import_graph = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(import_graph)

GRAPH = import_graph.edges(ROOT / "validator")
PACKAGES = ("validator", "runner", "quiz")
GRAPHS = {package: import_graph.edges(ROOT / package) for package in PACKAGES}


def test_the_graph_sees_the_validator() -> None:
    assert len(GRAPH["module"]) > 30
    assert "validator.rules.file_level" in GRAPH["module"]["validator.rules"]
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



@pytest.mark.parametrize("package", PACKAGES)
def test_no_circle_in_any_package(package: str) -> None:
    graph = GRAPHS[package]
    assert len(graph["module"]) > 10
    assert import_graph.cycles(graph["module"]) == []
    assert import_graph.cycles(import_graph.combined(graph)) == []


def _imports_of(package: str) -> list[tuple[str, str, str]]:
    """(file, module, name) for every name a package's files take from another package (a
    module imported whole counts by the attributes read off it)."""
    found = []
    for file in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(file.read_text())
        whole: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] in PACKAGES and node.module.split(".")[0] != package:
                for alias in node.names:
                    if importlib.util.find_spec(f"{node.module}.{alias.name}") if _is_package(node.module) else False:
                        whole[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    else:
                        found.append((file.name, node.module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in PACKAGES and alias.name.split(".")[0] != package:
                        found.append((file.name, alias.name, "*"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in whole:
                found.append((file.name, whole[node.value.id], node.attr))
    return found


def _is_package(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


def test_packages_depend_one_way() -> None:
    assert not [i for i in _imports_of("validator") if i[1].split(".")[0] in ("runner", "quiz")]
    assert not [i for i in _imports_of("runner") if i[1].split(".")[0] == "quiz"]


@pytest.mark.parametrize("package", ["runner", "quiz"])
def test_the_runner_and_the_quiz_use_only_the_validators_declared_api(package: str) -> None:
    from validator.sibling_api import SIBLING_API

    stray = [f"{file}: {module}.{name}" for file, module, name in _imports_of(package)
             if module.split(".")[0] == "validator" and name not in SIBLING_API.get(module, ())]
    assert stray == []


def test_no_name_with_an_underscore_crosses_packages() -> None:
    crossing = [f"{file}: {module}.{name}" for package in PACKAGES for file, module, name in _imports_of(package)
                if name.startswith("_") and not name.startswith("__")]
    assert crossing == []


def test_the_declared_api_names_what_exists() -> None:
    from importlib import import_module

    from validator.sibling_api import SIBLING_API

    for module, names in SIBLING_API.items():
        loaded = import_module(module)
        assert [name for name in names if not hasattr(loaded, name)] == [], module
