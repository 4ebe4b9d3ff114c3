"""The public surface is deliberate and small, and importing the linter stays light."""

from __future__ import annotations

import subprocess

from conftest import BIN

import validator


def test_public_api_is_exactly_all() -> None:
    assert sorted(validator.__all__) == sorted([
        "AmllabError", "Config", "ConfigError", "Diagnostic", "FileReport", "LintResult", "RULES",
        "Rule", "Severity", "Spec", "SpecError", "UsageError", "__version__", "lint_file", "lint_paths",
        "lint_text", "load_spec",
    ])
    for name in validator.__all__:
        assert getattr(validator, name) is not None


def test_linting_never_imports_torch_mlflow_textual_or_ray() -> None:
    code = ("import sys, validator\n"
            "validator.lint_paths(['scenarios'])\n"
            "print(','.join(m for m in ('torch', 'mlflow', 'textual', 'ray', 'runner', 'quiz') if m in sys.modules))\n")
    result = subprocess.run([str(BIN / "python"), "-c", code], capture_output=True, text=True, timeout=120,
                            cwd=str(validator.__path__[0]) + "/..")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_lint_text_doctest_example() -> None:
    report = validator.lint_text("type: command\ncommand: echo hi\n", "job.yml")
    assert [d.code for d in report.diagnostics] == ["AML102"]
    assert report.kind == "commandJob"
