"""Every planted defect is caught by the code its planter names (see tests/planted/base.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from planted.base import load_planters, valid_fixtures  # noqa: E402
from validator.engine import lint_text  # noqa: E402

CASES = [(p, kind, path) for p in load_planters() for kind, path in valid_fixtures() if kind in p.kinds]


def plant_and_lint(planter, path: Path):
    planted = planter.plant(yaml.safe_load(path.read_text()))
    if planted is None:
        return None
    text = yaml.safe_dump(planted, sort_keys=False, allow_unicode=True)
    return lint_text(text, str(path), base_dir=path.parent)


@pytest.mark.parametrize("planter,kind,path", CASES,
                         ids=[f"{p.code}-{path.parent.name}/{path.stem}" for p, _, path in CASES])
def test_planted_defect_is_caught(planter, kind: str, path: Path) -> None:
    report = plant_and_lint(planter, path)
    if report is None:
        pytest.skip("nothing to plant into")
    assert planter.code in {d.code for d in report.diagnostics}, (planter.description, report.diagnostics)
