"""Every scenario's specs lint exactly as its scenario.yml expects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from validator.engine import lint_file

SCENARIOS = sorted(p.parent for p in (ROOT / "scenarios").glob("*/scenario.yml"))


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: p.name)
def test_scenario_lint_expectations(folder: Path) -> None:
    meta = yaml.safe_load((folder / "scenario.yml").read_text())
    expected = sorted(meta["expect"]["lint"])
    specs = [meta["spec"], *meta.get("components", [])]
    found = sorted(d.code for spec in specs for d in lint_file(folder / spec).diagnostics)
    assert found == expected


def test_seed_scenarios_exist() -> None:
    names = {p.name for p in SCENARIOS}
    assert {"command-job", "sweep-job", "distributed-job", "pipeline", "schedule", "broken-spec"} <= names
