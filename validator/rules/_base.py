"""What a rule is. Every rule, whether the loader, the schema check or a ``check`` function
produces its findings, is declared once here with its code, name, severity and documentation;
``aml-lint --explain`` and docs/rules.md are generated from these declarations."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from ..diagnostic import Diagnostic, Severity

if TYPE_CHECKING:
    from ..loader import Document

CheckFunction = Callable[["Document"], Iterable[Diagnostic]]

REGISTRY: dict[str, "Rule"] = {}

ALL_KINDS = frozenset({"commandJob", "sweepJob", "pipelineJob", "commandComponent",
                       "pipelineComponent", "schedule"})


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    bad: str
    good: str
    # Which stage reports it: "file" (loader), "kind" (detection), "schema", "check" or "engine".
    stage: str
    kinds: frozenset[str] = ALL_KINDS
    check: CheckFunction | None = None
    # False where the example cannot be a plain YAML text (bytes, size limits).
    examples_are_runnable: bool = True

    def explain(self) -> str:
        parts = [f"{self.code} {self.name} ({self.severity})", "", self.summary, "", self.doc.strip()]
        parts += ["", "Bad:", "", textwrap.indent(self.bad.strip("\n"), "    "),
                  "", "Good:", "", textwrap.indent(self.good.strip("\n"), "    ")]
        return "\n".join(parts) + "\n"


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def declare(code: str, name: str, severity: Severity, summary: str, *,
            doc: str, bad: str, good: str, stage: str, kinds: Iterable[str] = ALL_KINDS,
            examples_are_runnable: bool = True) -> Rule:
    """Register a rule whose findings come from the loader, kind detection or the schema."""
    if code in REGISTRY:
        raise ValueError(f"duplicate rule code {code}")
    rule = Rule(code, name, severity, summary, _clean(doc), _clean(bad), _clean(good), stage,
                frozenset(kinds), None, examples_are_runnable)
    REGISTRY[code] = rule
    return rule


def check(code: str, name: str, severity: Severity, summary: str, *,
          bad: str, good: str, kinds: Iterable[str] = ALL_KINDS,
          examples_are_runnable: bool = True) -> Callable[[CheckFunction], CheckFunction]:
    """Decorator registering a check function; its docstring is the rule's documentation."""

    def register(function: CheckFunction) -> CheckFunction:
        if code in REGISTRY:
            raise ValueError(f"duplicate rule code {code}")
        REGISTRY[code] = Rule(code, name, severity, summary, _clean(function.__doc__ or ""),
                              _clean(bad), _clean(good), "check", frozenset(kinds), function,
                              examples_are_runnable)
        return function

    return register
