"""Every rule's documented bad example triggers it and its good example is clean, so the docs
(`--explain`, docs/rules.md) can never teach something the linter contradicts."""

from __future__ import annotations

import pytest

from conftest import ROOT
from validator.engine import lint_text
from validator.rules import RULES

RUNNABLE = [code for code, rule in RULES.items() if rule.examples_are_runnable]


@pytest.mark.parametrize("code", RUNNABLE)
def test_bad_example_reports_the_rule(code: str) -> None:
    # Examples that name files use the repository's own scenarios and test files.
    report = lint_text(RULES[code].bad, f"{code}-bad.yml", base_dir=ROOT)
    assert code in {d.code for d in report.diagnostics}, report.diagnostics


@pytest.mark.parametrize("code", RUNNABLE)
def test_good_example_is_clean(code: str) -> None:
    report = lint_text(RULES[code].good, f"{code}-good.yml", base_dir=ROOT)
    assert report.diagnostics == []


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_is_fully_documented(code: str) -> None:
    rule = RULES[code]
    assert rule.name and rule.summary and rule.doc.strip() and rule.bad.strip() and rule.good.strip()
    assert rule.code[:3] == "AML" and len(rule.code) == 6
