"""Every planted defect is caught by the code its planter names (see tests/planted/base.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planted.base import load_planters, valid_fixtures  # noqa: E402
from validator.engine import lint_text  # noqa: E402

def planted_cases():
    """(planter, fixture path, planted YAML text) for every fixture a planter applies to."""
    fixtures = [(kind, path, yaml.safe_load(path.read_text())) for kind, path in valid_fixtures()]
    for planter in load_planters():
        for kind, path, data in fixtures:
            if kind not in planter.kinds:
                continue
            planted = planter.plant(data)
            if planted is not None:  # the fixture may offer nothing to plant into
                yield planter, path, yaml.safe_dump(planted, sort_keys=False, allow_unicode=True)


def plant_and_lint(planter, path: Path, text: str):
    return lint_text(text, str(path), base_dir=path.parent)


CASES = list(planted_cases())


@pytest.mark.parametrize("planter,path,text", CASES,
                         ids=[f"{p.code}-{path.parent.name}/{path.stem}" for p, path, _ in CASES])
def test_planted_defect_is_caught(planter, path: Path, text: str) -> None:
    report = plant_and_lint(planter, path, text)
    assert planter.code in {d.code for d in report.diagnostics}, (planter.description, report.diagnostics)
