"""What a rule is. Every rule, whether the loader, the schema check or a ``check`` function
produces its findings, is declared once here with its code, name, severity and documentation;
``aml-lint --explain`` and docs/rules.md are generated from these declarations.

A check function yields :class:`Finding` values (what is wrong, where, the fix) and never names
its code or severity: :meth:`Rule.check`, which the engine calls, stamps both from the
declaration, as ruff assigns a code once, in one table. One function owns one code; where
several rules share their logic (AML202-AML204, undeclared references), each is a registered
function of its own that calls the shared helper (tests/test_rule_registry.py holds rules to
this)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..diagnostic import Diagnostic, Finding, Severity

if TYPE_CHECKING:
    from ..loader import Document

CheckFunction = Callable[["Document"], Iterable[Finding]]

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
    # The check function (stage "check" only): it yields findings without code or severity.
    function: CheckFunction | None = None
    # False where the example cannot be a plain YAML text (bytes, size limits).
    examples_are_runnable: bool = True

    def check(self, document: Document) -> Iterator[Diagnostic]:
        """The rule's findings on ``document``, each stamped with this rule's code and severity."""
        assert self.function is not None, f"{self.code} is reported by the {self.stage} stage, not a check"
        for finding in self.function(document):
            if not isinstance(finding, Finding):
                raise TypeError(f"rule {self.code} yielded {type(finding).__name__}, not a Finding")
            yield document.diagnostic(self.code, finding.message, finding.at, key=finding.key,
                                      severity=self.severity, hint=finding.hint, span=finding.span)

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
