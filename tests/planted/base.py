"""Planted defects: each planter takes a valid fixture (as data), plants one known defect, and
names the code that must catch it. tests/validator/test_planted_defects.py runs every planter on every valid
fixture it applies to; tools/planted_report.py prints the per-family table (planted, caught,
share) together with the share of valid fixtures that stay clean.

Planters live in planters_<family>.py modules of this package, one module per rule family, so
families can be written independently. A planter returns None when the fixture offers nothing
to plant into (for example a sweep with no early-termination policy, for a policy defect).
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parent.parent.parent
VALID = ROOT / "tests" / "fixtures" / "valid"
KIND_FOLDERS = ("commandJob", "sweepJob", "pipelineJob", "commandComponent", "pipelineComponent", "schedule")

PlantFunction = Callable[[dict], "dict | None"]


@dataclass(frozen=True)
class Planter:
    family: str          # "AML3"
    code: str            # the code that must be reported
    description: str
    kinds: frozenset[str]
    plant: PlantFunction


PLANTERS: list[Planter] = []


def planter(code: str, description: str, kinds: Iterable[str]) -> Callable[[PlantFunction], PlantFunction]:
    """Register ``function(data) -> mutated copy | None`` as a planter of ``code``."""

    def register(function: PlantFunction) -> PlantFunction:
        def plant(data: dict) -> dict | None:
            return function(copy.deepcopy(data))

        PLANTERS.append(Planter(code[:4], code, description, frozenset(kinds), plant))
        return function

    return register


def load_planters() -> list[Planter]:
    package = Path(__file__).parent
    for module in sorted(pkgutil.iter_modules([str(package)]), key=lambda m: m.name):
        if module.name.startswith("planters_"):
            importlib.import_module(f"planted.{module.name}")
    return PLANTERS


def valid_fixtures() -> list[tuple[str, Path]]:
    """(kind, path) of every top-level valid fixture."""
    return [(kind, path) for kind in KIND_FOLDERS for path in sorted((VALID / kind).glob("*.yml"))]


def get(data: Any, *path: Any) -> Any:
    """data[path...] or None, for planters that probe optional parts."""
    for part in path:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and -len(data) <= part < len(data):
            data = data[part]
        else:
            return None
    return data
