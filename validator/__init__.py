"""amllab's linter for Azure Machine Learning v2 specs.

The public API is exactly what ``__all__`` lists; everything else is private and may change.
Importing this package loads only the standard library and PyYAML: jsonschema is imported the
first time a file is checked, and torch, mlflow and textual never.

    >>> from validator import lint_text
    >>> report = lint_text("type: command\\ncommand: echo hi\\n", "job.yml")
    >>> [d.code for d in report.diagnostics]
    ['AML102']
"""

from __future__ import annotations

__version__ = "0.1.0"

# What each public name is imported from. Resolved on first use (PEP 562), so that
# `aml-lint --version` and `import validator` stay fast.
_EXPORTS = {
    "AmllabError": "errors", "ConfigError": "errors", "UsageError": "errors",
    "Config": "config", "Diagnostic": "diagnostic", "Severity": "diagnostic",
    "FileReport": "engine", "LintResult": "engine", "lint_file": "engine", "lint_paths": "engine",
    "lint_text": "engine", "RULES": "rules", "Rule": "rules",
    "Spec": "spec", "SpecError": "spec", "load_spec": "spec",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'validator' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AmllabError",
    "Config",
    "ConfigError",
    "Diagnostic",
    "FileReport",
    "LintResult",
    "RULES",
    "Rule",
    "Severity",
    "Spec",
    "SpecError",
    "UsageError",
    "__version__",
    "lint_file",
    "lint_paths",
    "lint_text",
    "load_spec",
]
