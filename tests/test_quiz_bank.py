"""The question bank: it loads strictly, and the toolkit proves every machine-checked answer.

A question the toolkit contradicts fails here, so the quiz cannot teach what amllab disagrees with.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from quiz.bank import DOMAINS, TYPES, load_bank, load_file
from quiz.checks import check
from quiz.cli import main
from quiz.errors import BankError

BANK = load_bank()
CHECKED = [q for q in BANK if q.checked]


def test_the_bank_is_big_enough_and_covers_every_domain_and_type() -> None:
    assert len(BANK) >= 150
    assert {q.domain for q in BANK} == set(DOMAINS)
    assert {q.type for q in BANK} == set(TYPES)
    assert len(CHECKED) >= 60


@pytest.mark.parametrize("question", CHECKED, ids=lambda q: q.id)
def test_the_toolkit_proves_the_answer(question) -> None:
    result = check(question)
    if result.status == "skipped":  # a lab not runnable yet: counted in the summary, never passed
        pytest.skip(f"{question.id}: {result.detail}")
    assert result.status == "passed", f"{result.where}: {result.detail}"


def _wrong_answers(question):
    """Every other answer the question could have been given."""
    if question.type in ("single", "fill_blank"):
        return [k for k in question.options if k != question.answer]
    if question.type == "numeric":
        return [question.answer + 1]
    if question.type == "wrong_line":
        return [n for n in range(1, len(question.yaml.splitlines()) + 1) if n != question.answer][:3]
    if question.type == "ordering":
        return [list(reversed(question.answer))]
    return [sorted(question.options)[: len(question.answer) - 1] + [k for k in question.options
                                                                      if k not in question.answer][:1]]


TIED = [q for q in CHECKED if next(iter(q.check)) != "scenario" and not (
    next(iter(q.check)) == "lint" and q.type != "wrong_line")]


@pytest.mark.parametrize("question", TIED, ids=lambda q: q.id)
def test_a_wrong_answer_key_fails_the_check(question) -> None:
    """A check proves the answer, not just a fact: with the key changed, it fails."""
    if check(question).status != "passed":
        pytest.skip("the check does not pass (reported above)")
    for wrong in _wrong_answers(question):
        mutated = dataclasses.replace(question, answer=wrong, check=copy.deepcopy(question.check))
        assert check(mutated).status == "failed", f"{question.id}: the check passes with answer {wrong!r}"


def test_aml_quiz_check_runs_the_same_checks(capsys) -> None:
    assert main(["--check"]) == 0
    out = capsys.readouterr().out
    assert f"{len(BANK)} questions" in out and "0 failed" in out


# ----------------------------------------------------------------------------- load errors


GOOD = """\
domain: sweep
questions:
  - id: sweep-ok
    type: single
    source: "SPEC §4.8 · Hyperparameter tuning a model (v2)"
    prompt: Which policy?
    options: {a: bandit, b: truncation}
    answer: a
    explanation: Because.
    wrong: {b: Not this.}
"""


@pytest.mark.parametrize(("change", "line", "message"), [
    (("answer: a", "answer: c"), 8, "the answer 'c' is not one of the options' keys"),
    (("    wrong: {b: Not this.}\n", ""), 3, "'wrong' does not say why option b is wrong"),
    (("source: \"SPEC §4.8 · Hyperparameter", "source: \"somewhere · Hyperparameter"), 5, "the source must cite"),
    (("source: \"SPEC §4.8 · Hyperparameter tuning a model (v2)\"", "source: \"SPEC §4.8\""), 5,
     "the title of a public page"),
    (("type: single", "type: essay"), 4, "type 'essay' is not one of"),
    (("    explanation: Because.\n", ""), 3, "'explanation' is missing"),
    (("    answer: a\n", "    answer: a\n    hint: x\n"), 9, "unknown key 'hint'"),
    (("id: sweep-ok", "id: Sweep OK"), 3, "must be lowercase words"),
    (("domain: sweep", "domain: deployment"), 3, "domain 'deployment' is not one of"),
    (("    answer: a\n", "    answer: a\n    answer: b\n"), 9, "duplicate key"),
    (("options: {a: bandit, b: truncation}", "options: {a: bandit, c: truncation}"), 7, "keyed a, b, c"),
    (("    wrong: {b: Not this.}\n", "    wrong: {b: Not this.}\n    check: {lint: {}}\n"), 11,
     "check 'lint' needs 'codes'"),
    (("    wrong: {b: Not this.}\n", "    wrong: {b: Not this.}\n    check: {pipeline_order: {}}\n"), 11,
     "cannot prove a single question"),
])
def test_load_errors_name_the_file_line_and_question(tmp_path: Path, change, line, message) -> None:
    path = tmp_path / "bank.yml"
    path.write_text(GOOD.replace(*change))
    with pytest.raises(BankError) as caught:
        load_file(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}:"), text
    assert message in text
    if "id:" not in change[1] and "duplicate" not in message and "domain" not in change[0]:
        assert "question 'sweep-ok'" in text


def test_what_a_learner_reads_names_only_what_they_can_open() -> None:
    """The app shows each question's public pages; the maintainers' SPEC and seed citations
    (notes that do not ship) appear nowhere a learner reads."""
    for question in load_bank().questions:
        assert question.reference and "SPEC" not in question.reference and "seed:" not in question.reference
        shown = [question.prompt, question.explanation, *question.options.values(), *question.wrong.values()]
        assert not any("SPEC §" in text for text in shown), question.id


def test_an_id_used_twice_names_both_places(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text(GOOD)
    (tmp_path / "b.yml").write_text(GOOD)
    with pytest.raises(BankError, match=r"b\.yml:3: question 'sweep-ok': the id is already used at .*a\.yml:3"):
        load_bank([tmp_path])


def test_bad_bank_on_the_command_line_is_one_line_not_a_traceback(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bank.yml"
    path.write_text(GOOD.replace("answer: a", "answer: [a"))
    assert main(["--check", "--bank", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"aml-quiz: error: {path}:") and "Traceback" not in err and err.count("\n") == 1


def test_a_contradicted_question_fails_the_check_command(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bank.yml"
    path.write_text(GOOD.replace("    prompt: Which policy?", "    prompt: |\n      How many?\n      ```yaml\n"
                                 "      search_space: {lr: {type: choice, values: [1, 2, 3]}}\n      ```")
                    .replace("type: single", "type: numeric").replace("    options: {a: bandit, b: truncation}\n", "")
                    .replace("answer: a", "answer: 4").replace("    wrong: {b: Not this.}\n", "    check: {grid_size: {}}\n"))
    assert main(["--check", "--bank", str(path)]) == 1
    out = capsys.readouterr().out
    assert "grid_size FAILED: the search space holds 3 configurations, the answer says 4" in out


def test_a_questions_lab_commands_run_the_job_as_the_lab_does() -> None:
    """The feedback's "see it run" commands submit the lab's job with the lab's own --set and
    --preempt-after, so the learner sees what the lab proves (a spot job that is preempted)."""
    import yaml

    from quiz.checks import SCENARIOS_DIR, lab_command

    shown = 0
    for question in load_bank().questions:
        name = ((question.check or {}).get("scenario") or {}).get("name")
        if not name:
            continue
        meta = yaml.safe_load((SCENARIOS_DIR / name / "scenario.yml").read_text())
        command = lab_command(question)
        if "steps" in meta:
            assert command == f"aml-run scenario run {name}"
            continue
        assert command.startswith(f"cd scenarios/{name} && ")
        for value in meta.get("set") or []:
            assert f"--set {value}" in command
        if meta.get("preempt_after"):
            assert "--preempt-after " + ",".join(f"{s:g}" for s in meta["preempt_after"]) in command
            shown += 1
    assert shown, "a question leans on the spot-job lab"
