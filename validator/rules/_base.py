"""What a rule is. Every rule, whether the loader, the schema check or a ``check`` function
produces its findings, is declared once here with its code, name, severity and documentation;
``aml-lint --explain`` and docs/rules.md are generated from these declarations.

A check function yields :class:`Finding` values (what is wrong, where, the fix) and never names
its code or severity: :meth:`Rule.check`, which the engine calls, stamps both from the
declaration, as ruff assigns a code once, in one table. One function owns one code; where
several rules share their logic (AML202-AML204, undeclared references), each is a registered
function of its own that calls the shared helper (tests/validator/test_rule_registry.py holds rules to
this).

A rule's documentation ends with up to two paragraphs of its own. ``See:`` lists the public
documents the rule rests on (learn.microsoft.com pages, written as their page name, such as
``reference-yaml-job-sweep``, or full ``https://`` addresses); they are rendered after the text.
``Provenance:`` is for maintainers (the design notes and experiments behind the rule) and is
never rendered: users do not have those documents."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..diagnostic import Diagnostic, Finding, Severity

if TYPE_CHECKING:
    from ..loader import Document

CheckFunction = Callable[["Document"], Iterable[Finding]]

# Every rule declared so far, its documentation and examples as written: they are cleaned up
# (:func:`documented`) for ``validator.rules.RULES``, which renders them, not at every start.
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
    # The public documents the rule rests on (full URLs), rendered after the documentation.
    sources: tuple[str, ...] = ()
    # Where the rule comes from in the maintainers' own notes: kept for them, never rendered.
    provenance: str = ""
    # What azure-ai-ml does with the rule's golden bad cases (validator/rules/_service.py,
    # written by tools/sdk_verdicts.py): "rejects" (the client refuses the spec), "accepts" (it
    # sends the spec to the service), "depends" (some cases each way); None: not established.
    service: str | None = None
    # Whether findings can carry a fix (validator/fixes.py): "safe" (``aml-lint --fix`` applies
    # it), "unsafe" (only with ``--unsafe-fixes``: it changes a value's meaning), or None.
    fix: str | None = None

    def check(self, document: Document) -> Iterator[Diagnostic]:
        """The rule's findings on ``document``, each stamped with this rule's code and severity."""
        assert self.function is not None, f"{self.code} is reported by the {self.stage} stage, not a check"
        for finding in self.function(document):
            if not isinstance(finding, Finding):
                raise TypeError(f"rule {self.code} yielded {type(finding).__name__}, not a Finding")
            if finding.fix is not None and self.fix is None:
                raise TypeError(f"rule {self.code} is declared without a fix but yielded one (declare fix=...)")
            yield document.diagnostic(self.code, finding.message, finding.at, key=finding.key,
                                      severity=self.severity, hint=finding.hint, span=finding.span,
                                      service=finding.service, fix=finding.fix)

    @property
    def service_text(self) -> str | None:
        """What azure-ai-ml does with a spec this rule flags, in one sentence, or None."""
        return {
            "rejects": "azure-ai-ml (the client behind `az ml`) refuses such a spec too: it never reaches the service.",
            "accepts": "azure-ai-ml (the client behind `az ml`) accepts such a spec and sends it to the service; "
                       "only aml-lint flags it.",
            "depends": "azure-ai-ml (the client behind `az ml`) refuses some specs with this finding and sends "
                       "others to the service.",
        }.get(self.service or "")

    @property
    def fix_text(self) -> str | None:
        """The rule's fix in one sentence, or None."""
        return {
            "safe": "Fix: safe. `aml-lint --fix` repairs findings that have one unambiguous repair.",
            "unsafe": "Fix: unsafe. `aml-lint --fix --unsafe-fixes` applies the likeliest repair, which "
                      "changes a value's meaning: review it.",
        }.get(self.fix or "")

    def explain(self) -> str:
        parts = [f"{self.code} {self.name} ({self.severity})", "", self.summary, "", self.doc.strip()]
        if self.service_text:
            parts += ["", self.service_text]
        if self.fix_text:
            parts += ["", self.fix_text]
        if self.sources:
            parts += ["", "See:", *(f"    {url}" for url in self.sources)]
        parts += ["", "Bad:", "", textwrap.indent(self.bad.strip("\n"), "    "),
                  "", "Good:", "", textwrap.indent(self.good.strip("\n"), "    ")]
        return "\n".join(parts) + "\n"


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


# A page of Azure Machine Learning's v2 documentation, named in a ``See:`` paragraph.
LEARN = "https://learn.microsoft.com/azure/machine-learning/{page}?view=azureml-api-2"


def _source(name: str) -> str:
    if name.startswith("https://"):
        return name
    page, _, anchor = name.partition("#")
    return LEARN.format(page=page) + (f"#{anchor}" if anchor else "")


def _documentation(text: str) -> tuple[str, tuple[str, ...], str]:
    """The rendered documentation, its public sources and its provenance (see the module's
    docstring), from a rule's docstring or ``doc=``."""
    paragraphs = _clean(text).strip("\n").split("\n\n")
    sources: tuple[str, ...] = ()
    provenance = ""
    while paragraphs and paragraphs[-1].startswith(("See:", "Provenance:")):
        label, _, rest = paragraphs.pop().partition(":")
        if label == "See":
            sources = tuple(_source(name) for name in re.split(r"[\s,]+", rest.strip()) if name)
        else:
            provenance = " ".join(rest.split())
    return "\n\n".join(paragraphs) + "\n", sources, provenance


def _fixability(fix: str | None) -> str | None:
    if fix not in (None, "safe", "unsafe"):
        raise ValueError(f"a rule's fix is 'safe', 'unsafe' or None, not {fix!r}")
    return fix


def declare(code: str, name: str, severity: Severity, summary: str, *,
            doc: str, bad: str, good: str, stage: str, kinds: Iterable[str] = ALL_KINDS,
            examples_are_runnable: bool = True, fix: str | None = None) -> Rule:
    """Register a rule whose findings come from the loader, kind detection or the schema."""
    if code in REGISTRY:
        raise ValueError(f"duplicate rule code {code}")
    rule = Rule(code, name, severity, summary, doc, bad, good, stage, frozenset(kinds), None,
                examples_are_runnable, fix=_fixability(fix))
    REGISTRY[code] = rule
    return rule


def check(code: str, name: str, severity: Severity, summary: str, *,
          bad: str, good: str, kinds: Iterable[str] = ALL_KINDS,
          examples_are_runnable: bool = True, fix: str | None = None) -> Callable[[CheckFunction], CheckFunction]:
    """Decorator registering a check function; its docstring is the rule's documentation."""

    def register(function: CheckFunction) -> CheckFunction:
        if code in REGISTRY:
            raise ValueError(f"duplicate rule code {code}")
        REGISTRY[code] = Rule(code, name, severity, summary, function.__doc__ or "", bad, good, "check",
                              frozenset(kinds), function, examples_are_runnable, fix=_fixability(fix))
        return function

    return register


def documented(rule: Rule, service: str | None = None) -> Rule:
    """``rule`` as declared, with its documentation rendered (its sources and provenance taken
    out), its examples dedented, and the SDK's verdict ``service``."""
    text, sources, provenance = _documentation(rule.doc)
    return replace(rule, doc=text, bad=_clean(rule.bad), good=_clean(rule.good), sources=sources,
                   provenance=provenance, service=service)
