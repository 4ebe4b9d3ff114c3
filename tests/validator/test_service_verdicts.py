"""Each rule carries what azure-ai-ml does with its golden bad cases (``Rule.service``, from
validator/rules/_service.py, written by tools/sdk_verdicts.py). The recorded verdicts are
compared with the SDK itself where one is at hand: ``AMLLAB_SDK_PYTHON`` names an interpreter
that has azure-ai-ml (or this one has it); otherwise that comparison is skipped."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from validator.rules import RULES
from validator.rules._service import SERVICE

ROOT = Path(__file__).resolve().parents[2]


def test_every_recorded_verdict_names_a_rule_and_is_one_of_three() -> None:
    assert set(SERVICE) <= set(RULES)
    assert set(SERVICE.values()) <= {"rejects", "accepts", "depends"}
    assert all(rule.service == SERVICE.get(code) for code, rule in RULES.items())


def _sdk_python() -> str | None:
    if os.environ.get("AMLLAB_SDK_PYTHON"):
        return os.environ["AMLLAB_SDK_PYTHON"]
    if importlib.util.find_spec("azure") is not None and importlib.util.find_spec("azure.ai.ml") is not None:
        return sys.executable
    return None


def _sdk_or_skip() -> tuple[str, Any]:
    """The SDK's interpreter and tools/sdk_verdicts.py, or skip the test."""
    python = _sdk_python()
    if python is None:
        pytest.skip("azure-ai-ml is not importable here (set AMLLAB_SDK_PYTHON to a Python that has it)")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import sdk_verdicts
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return python, sdk_verdicts


def test_the_recorded_verdicts_are_the_sdks() -> None:
    python, tool = _sdk_or_skip()
    per_rule, _ = tool.verdicts_by_rule(python)
    stale = {code: (SERVICE.get(code), verdict) for code, verdict in per_rule.items() if SERVICE.get(code) != verdict}
    stale.update({code: (verdict, None) for code, verdict in SERVICE.items() if code not in per_rule})
    assert stale == {}, "recorded vs the SDK's; regenerate with python tools/sdk_verdicts.py --sdk-python ..."


def test_the_verdict_tool_reads_a_rule_by_its_telling_cases() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from sdk_verdicts import rule_verdict
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert rule_verdict([False, False], [True]) == "rejects"
    assert rule_verdict([True, True], [True]) == "accepts"
    assert rule_verdict([True, False], [True]) == "depends"
    # A refusal while the good case is refused too tells nothing about the rule.
    assert rule_verdict([False, True], [False]) == "accepts"
    assert rule_verdict([False], [False]) is None


def test_explain_says_what_the_client_does_with_such_a_spec() -> None:
    shown = {code: rule.explain() for code, rule in RULES.items()}
    for code, verdict in SERVICE.items():
        sentence = {"rejects": "refuses such a spec too", "accepts": "accepts such a spec and sends it to the service",
                    "depends": "refuses some specs with this finding"}[verdict]
        assert sentence in shown[code], code
    assert all("the client behind `az ml`" not in shown[code] for code in RULES if code not in SERVICE)


def test_a_findings_own_verdict_is_the_sdks_on_every_golden_case() -> None:
    """Where a finding carries its own verdict (``Diagnostic.service``, which decides whether a
    non-strict ``aml-run job create`` submits the spec), a golden bad case whose every error
    carries one is sent on by the SDK exactly when all say "accepts"."""
    from validator.config import Config
    from validator.diagnostic import Severity
    from validator.engine import lint_file

    python, tool = _sdk_or_skip()
    expected = {}
    for found in tool.golden_cases("fail_").values():
        for case in found:
            errors = [d for d in lint_file(case, Config(root=ROOT)).diagnostics if d.severity is Severity.ERROR]
            if errors and all(d.service is not None for d in errors):
                expected[str(case)] = all(d.service == "accepts" for d in errors)
    assert len(expected) >= 5, expected  # AML101, AML511 and AML519 cases at least
    verdicts = tool.sdk_verdicts(python, [Path(case) for case in expected])
    wrong = {case: accepted for case, accepted in expected.items() if verdicts[case]["accepted"] != accepted}
    assert wrong == {}, "the finding's verdict vs the SDK's"
