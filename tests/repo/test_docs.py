"""The README and docs stand on their own for someone who clones the project: every relative
link resolves to a file in the repository, and none leads outside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/README.md")),
        ROOT / "quiz" / "bank" / "README.md"]
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_inside_the_repository(doc: Path) -> None:
    for match in LINK.finditer(doc.read_text()):
        target = match.group(1)
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        resolved = (doc.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert resolved.exists(), f"{doc.name} links to {target}, which does not exist"


def test_the_docs_do_not_lean_on_the_teams_private_notes() -> None:
    for doc in DOCS:
        text = doc.read_text()
        for private in ("../shared", "DESIGN.md", "SPEC.md", "STYLE.md"):
            assert private not in text, f"{doc.relative_to(ROOT)} mentions {private}"


def test_the_quiz_doc_counts_the_bank_as_it_is() -> None:
    from quiz.bank import load_bank

    bank = load_bank()
    text = " ".join((ROOT / "docs" / "quiz.md").read_text().split())
    match = re.search(r"\*\*The bank\*\* .*?\): (\d+) questions .*? Of them, (\d+) are machine-checked", text)
    assert match, "docs/quiz.md's paragraph on the bank"
    assert int(match.group(1)) == len(bank.questions)
    assert int(match.group(2)) == sum(1 for question in bank.questions if question.check)


# The maintainers' design notes (SPEC and its sections), experiment ids (EXP:, EXM:) and issue
# numbers name documents a user does not have: what amllab ships names public documents only, and a
# rule keeps such provenance in its Provenance: paragraph, which is never rendered.
PRIVATE_CITATION = re.compile(r"SPEC|§|\bEX[PM]:|\b[Ii]ssues? #?\d+|(?<![\w&/?=.-])#\d+\b")


def _shipped_texts() -> list[tuple[str, str]]:
    from validator.rules import RULES

    files = [*DOCS, *sorted((ROOT / "quiz" / "bank").iterdir()), *sorted((ROOT / "validator" / "schemas").glob("*.json"))]
    texts = [(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")) for path in files]
    return texts + [(f"aml-lint --explain {code}", rule.explain()) for code, rule in RULES.items()]


def test_shipped_text_cites_public_documents_only() -> None:
    found = [f"{name}: {line.strip()[:100]}" for name, text in _shipped_texts()
             for line in text.splitlines() if PRIVATE_CITATION.search(line)]
    assert found == []


def test_the_citation_check_sees_private_notes() -> None:
    for line in ("(SPEC §4.6, §12 rule 34)", "azure-ai-ml loads it (`EXP:sw_neg_limits`)", "issue 12 found",
                 "fixed in #12", "see §3"):
        assert PRIVATE_CITATION.search(line), line
    for line in ("https://learn.microsoft.com/azure/machine-learning/how-to-train-model?view=azureml-api-2#3-submit",
                 "### AML101", "`--file FILE`", "a spec file"):
        assert not PRIVATE_CITATION.search(line), line


def test_rule_sources_are_public_addresses() -> None:
    from validator.rules import RULES

    for code, rule in RULES.items():
        for url in rule.sources:
            assert url.startswith(("https://learn.microsoft.com/", "https://github.com/Azure/")), (code, url)
        assert PRIVATE_CITATION.search(rule.doc) is None, code


def test_the_lint_doc_counts_the_rules_as_they_are() -> None:
    from validator.rules import RULES

    text = " ".join((ROOT / "docs" / "lint.md").read_text().split())
    match = re.search(r"(\d+) rules: (\d+) errors, (\d+) warnings, (\d+) infos", text)
    assert match, "docs/lint.md's count of the rules"
    severities = [str(rule.severity) for rule in RULES.values()]
    assert [int(n) for n in match.groups()] == [len(RULES), severities.count("error"),
                                                 severities.count("warning"), severities.count("info")]
