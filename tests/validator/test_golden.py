"""Golden tests, actionlint-style: tests/golden/<CODE>/<case>.yml is linted and its text output
must equal <case>.out. `pytest --update-golden` rewrites the .out files (review the diff)."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden import GOLDEN, ROOT, case_files, is_fixed_file, render
from validator.rules import RULES


@pytest.mark.parametrize("case", case_files(), ids=lambda p: p.relative_to(GOLDEN).as_posix())
def test_golden_case(case: Path, update_golden: bool) -> None:
    expected_file = case.with_suffix(".out")
    actual = render(case)
    if update_golden:
        expected_file.write_text(actual)
    assert expected_file.exists(), f"missing {expected_file.relative_to(ROOT)}; run pytest --update-golden"
    assert actual == expected_file.read_text()


def _codes_in(out_text: str) -> set[str]:
    codes = set()
    for line in out_text.splitlines():
        parts = line.split(": ", 1)
        if len(parts) == 2 and parts[0].count(":") >= 2:
            token = parts[1].split(" ", 1)[0]
            if token.startswith("AML"):
                codes.add(token)
    return codes


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_has_failing_and_passing_golden_cases(code: str) -> None:
    """Each rule's folder holds at least one case that reports it and one that is clean of it."""
    folder = GOLDEN / code
    cases = case_files(folder) if folder.is_dir() else []
    assert cases, f"no golden cases for {code} in {folder.relative_to(ROOT)}"
    reported = [c for c in cases if code in _codes_in(c.with_suffix(".out").read_text())]
    clean = [c for c in cases if code not in _codes_in(c.with_suffix(".out").read_text())]
    assert reported, f"{code}: no golden case reports it"
    assert clean, f"{code}: no golden case shows a passing spec"
