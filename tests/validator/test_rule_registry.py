"""A rule's code and severity are declared once, in its ``@check`` (or ``declare``): check
functions yield findings (what is wrong, where, the fix) and the registry stamps the rest."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from validator.diagnostic import Diagnostic, Finding, Severity
from validator.loader import parse
from validator.rules import RULES, Rule

RULES_DIR = Path(__file__).resolve().parents[2] / "validator" / "rules"
DECLARING = {"check", "declare"}  # the one place a code and a severity are written


def _name(call: ast.Call) -> str | None:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def _is_code(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("AML")


def _is_severity(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Severity"


def _restatements(source: str) -> list[str]:
    found = []
    for call in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)):
        name = _name(call)
        if name in DECLARING:
            continue
        where = f"line {call.lineno}: {ast.unparse(call)[:80]}"
        if name in ("diagnostic", "Diagnostic"):
            found.append(f"{where} (yield a Finding; the registry adds code and severity)")
            continue
        # A literal code or severity handed to anything else (replace(), a helper) restates one.
        for keyword in call.keywords:
            if (keyword.arg == "code" and _is_code(keyword.value)) or _is_severity(keyword.value):
                found.append(f"{where} ({keyword.arg}={ast.unparse(keyword.value)})")
        found += [f"{where} ({ast.unparse(arg)})" for arg in call.args if _is_severity(arg)]
    return found


# _base.py is the registry itself: Rule.check is where the code and severity are stamped on.
@pytest.mark.parametrize("module", sorted(p.name for p in RULES_DIR.glob("*.py") if p.name != "_base.py"))
def test_no_rule_restates_a_code_or_severity(module: str) -> None:
    assert _restatements((RULES_DIR / module).read_text(encoding="utf-8")) == []


def test_the_scan_sees_a_restatement() -> None:
    source = (
        'yield document.diagnostic("AML301", "m", (), severity=Severity.WARNING)\n'
        'replace(d, code="AML549", severity=Severity.WARNING)\n'
        'check("AML301", "name", Severity.WARNING, "summary")\n'
    )
    assert len(_restatements(source)) == 3  # the call, and replace()'s code and severity


def test_one_function_owns_one_code() -> None:
    # Rules that share logic (AML202-AML204) are registered functions of their own around a
    # shared helper, so the registry can name the code of every finding a function yields.
    functions = [rule.function for rule in RULES.values() if rule.function is not None]
    assert len(functions) == len(set(functions))
    assert all(rule.stage == "check" for rule in RULES.values() if rule.function is not None)


def _rule(function) -> Rule:
    return Rule("AML999", "test-rule", Severity.WARNING, "s", "d", "b", "g", "check", function=function)


def test_rule_check_stamps_code_and_severity() -> None:
    document, _ = parse("job.yml", "command: echo\ncompute: local\n")

    def function(document):
        yield Finding("wrong compute", ("compute",), hint="fix it")
        yield Finding("the compute key", ("compute",), key=True)

    first, second = _rule(function).check(document)
    assert (first.code, first.severity, first.message, first.hint) == ("AML999", Severity.WARNING, "wrong compute", "fix it")
    assert (first.line, first.column, first.pointer) == (2, 10, "/compute")
    assert (second.line, second.column, second.code) == (2, 1, "AML999")


def test_a_rule_that_yields_a_diagnostic_is_refused() -> None:
    document, _ = parse("job.yml", "command: echo\n")

    def function(document):
        yield Diagnostic("job.yml", 1, 1, "AML999", "m")

    with pytest.raises(TypeError, match="AML999 yielded Diagnostic"):
        list(_rule(function).check(document))


def test_a_finding_has_no_code_or_severity() -> None:
    with pytest.raises(TypeError):
        Finding("m", (), code="AML301")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Finding("m", (), severity=Severity.ERROR)  # type: ignore[call-arg]


def test_sources_are_rendered_and_provenance_is_not() -> None:
    rule = RULES["AML310"]
    assert rule.sources == ("https://learn.microsoft.com/azure/machine-learning/reference-yaml-job-sweep"
                            "?view=azureml-api-2",)
    assert "EXP:" in rule.provenance and "SPEC" in rule.provenance
    explained = rule.explain()
    assert rule.sources[0] in explained and "Provenance" not in explained and rule.provenance not in explained
    assert "See:" not in rule.doc and "Provenance:" not in rule.doc


def test_each_family_is_listed_with_exactly_the_kinds_its_checks_apply_to() -> None:
    # A family is imported only for the kinds FAMILIES lists: a kind missing there would leave
    # its checks unrun, a kind too many would import the family for nothing.
    from validator.rules import FAMILIES

    always = {"file_level", "schema"}  # imported with the registry itself
    found: dict[str, set[str]] = {}
    for rule in RULES.values():
        family = rule.function.__module__.rsplit(".", 1)[-1] if rule.function is not None else None
        if rule.stage == "python":  # declared, reported by the reader of Python sources
            family = "python_source"
        if family is not None and family not in always:
            found.setdefault(family, set()).update(rule.kinds)
    assert {family: frozenset(kinds) for family, kinds in found.items()} == FAMILIES
    modules = {path.stem for path in RULES_DIR.glob("*.py") if not path.stem.startswith("_")}
    assert modules == set(FAMILIES) | always
