"""The question bank: it loads strictly, every question cites public pages and says how its
answer is known, the form of the questions gives no answer away, the bank covers the area in the
exam's formats, and the toolkit proves every machine-checked answer.

A question the toolkit contradicts fails here, so the quiz cannot teach what amllab disagrees with.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

import re

from quiz.bank import DOMAINS, TOPICS, TYPES, load_bank, load_file
from quiz.checks import check
from quiz.cli import main
from quiz.errors import BankError
from quiz.fairness import LIMITS, measure, measure_series, measure_wrong_lines

BANK = load_bank()
CHECKED = [q for q in BANK if q.checked]


def test_the_bank_is_big_enough_and_covers_every_domain_and_type() -> None:
    assert len(BANK) >= 360
    assert {q.domain for q in BANK} == set(DOMAINS)
    assert {q.type for q in BANK} == set(TYPES)
    assert len(CHECKED) >= 100
    for domain in DOMAINS:
        questions = BANK.in_domain(domain)
        assert len(questions) >= 40, domain
        # Working things out is part of the exam, not most of a domain.
        assert sum(q.arithmetic for q in questions) <= 0.35 * len(questions), domain


def test_every_topic_and_format_the_exam_asks_is_covered() -> None:
    topics = {t: sum(q.topic == t for q in BANK) for t in TOPICS if t != "v1-v2"}
    assert all(n >= 6 for n in topics.values()), topics
    groups = BANK.groups().values()
    assert sum(g[0].group.kind == "series" for g in groups) >= 8
    assert sum(g[0].group.kind == "case" for g in groups) >= 8
    assert sum(q.type == "multi_blank" for q in BANK) >= 8
    assert sum(q.type == "build_list" for q in BANK) >= 8


def test_the_form_of_a_question_never_gives_its_answer_away() -> None:
    """Before any shuffling: no answer position above 30 %, the longest option the answer in at
    most 35 % of one-answer questions, at most 5 answers 1.4 times as long as every wrong one."""
    figures = measure(BANK)
    assert figures.worst_position[1] <= LIMITS["position"], figures.lines()
    assert figures.longest_share <= LIMITS["longest"], figures.lines()
    assert len(figures.tells) <= LIMITS["tells"], figures.lines()


def test_where_a_series_or_a_wrong_line_sits_never_gives_its_answer_away() -> None:
    """As written: no way of answering a yes/no series by place ("Yes to the first, No to the
    rest", "always No"...) above 60 %; wrong-line questions keyed in either half of their block at
    most 60 %, and no one-line rule ("the last line", "line 2 from the last") twice what guessing
    a line scores."""
    series = measure_series(BANK)
    assert series.solutions >= 40 and series.best_rule[1] <= LIMITS["series_rule"], series.lines()
    lines = measure_wrong_lines(BANK)
    assert lines.count == sum(q.type == "wrong_line" for q in BANK)
    assert lines.half_share <= LIMITS["wrong_line_half"], lines.lines()
    assert lines.position_ratio <= LIMITS["wrong_line_position"], lines.lines()
    assert series.within_limits and lines.within_limits


def test_positions_that_would_give_answers_away_are_measured_as_such() -> None:
    """The measures themselves: series that open with Yes and wrong lines keyed on the last line
    fail their limits."""
    import dataclasses as dc

    opening = [dc.replace(q, answer=q.index == 0) for q in BANK if q.type == "yes_no"]
    figures = measure_series(opening)
    assert figures.best_rule == ("Yes to the first, No to the rest", 1.0) and not figures.within_limits
    last = [dc.replace(q, answer=len(q.yaml.rstrip().splitlines())) for q in BANK if q.type == "wrong_line"]
    figures = measure_wrong_lines(last)
    assert figures.bottom_share == 1.0 and figures.last_share == 1.0 and not figures.within_limits


def test_figures_that_would_give_answers_away_are_measured_as_such() -> None:
    """The measure itself: a bank keyed at a with long right answers fails every limit."""
    import dataclasses as dc

    skewed = [dc.replace(q, options={"a": "the right answer, spelled out at length", "b": "no", "c": "nope"},
                         answer="a", wrong={"b": "x", "c": "y"}) for q in BANK if q.type == "single"][:20]
    figures = measure(skewed)
    assert figures.worst_position == ("a", 1.0) and figures.longest_share == 1.0 and len(figures.tells) == 20
    assert not figures.within_limits


AMLLAB_TEXT = re.compile(r"\bamllab\b|\baml-(lint|run|quiz)\b|\bAML\d{3}\b|scenarios/|"
                         r"study guide|SPEC §", re.IGNORECASE)


def test_what_a_question_says_is_about_azure_ml_not_about_amllab() -> None:
    """Prompts, options, explanations and reasons name no lint code, lab, or amllab itself: that
    belongs beside the question ("lint it", "see it run"), from its check."""
    for question in BANK:
        texts = [question.prompt, question.explanation, *question.options.values(), *question.wrong.values(),
                 *(v for blank in question.blanks for v in blank.options.values())]
        if question.group is not None:
            texts.append(question.group.text)
        found = [m.group(0) for t in texts for m in [AMLLAB_TEXT.search(t)] if m]
        assert not found, f"{question.id}: {found}"


def test_every_question_cites_public_pages_and_says_how_it_is_known() -> None:
    for question in BANK:
        assert question.sources and all(s.startswith("https://") for s in question.sources), question.id
        assert question.evidence in ("documented", "sdk", "observed"), question.id


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
    sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters?view=azureml-api-2]
    evidence: documented
    prompt: Which policy?
    options: {a: bandit, b: truncation}
    answer: a
    explanation: Because.
    wrong: {b: Not this.}
"""
V1 = "https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.banditpolicy"


@pytest.mark.parametrize(("change", "line", "message"), [
    (("answer: a", "answer: c"), 9, "the answer 'c' is not one of the options' keys"),
    (("    wrong: {b: Not this.}\n", ""), 3, "'wrong' does not say why option b is wrong"),
    (("sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters?view=azureml-api-2]",
      "sources: [\"SPEC §4.8 · Hyperparameter tuning a model (v2)\"]"), 5, "is not the URL of a public page"),
    (("sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters?view=azureml-api-2]",
      "sources: [https://example.com/blog]"), 5, "is not the URL of a public page"),
    (("sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters?view=azureml-api-2]",
      f"sources: [{V1}]"), 5, "an SDK v1 page is cited by a question that is not about v1 and v2"),
    (("    evidence: documented\n", ""), 3, "evidence None is not one of"),
    (("evidence: documented", "evidence: folklore"), 6, "evidence 'folklore' is not one of"),
    (("explanation: Because.", "explanation: Option b is a trap."), 10, "names an option by its letter"),
    (("wrong: {b: Not this.}", "wrong: {b: Unlike a) it waits.}"), 10, "names an option by its letter"),
    (("type: single", "type: essay"), 4, "type 'essay' is not one of"),
    (("    explanation: Because.\n", ""), 3, "'explanation' is missing"),
    (("    answer: a\n", "    answer: a\n    hint: x\n"), 10, "unknown key 'hint'"),
    (("id: sweep-ok", "id: Sweep OK"), 3, "must be lowercase words"),
    (("domain: sweep", "domain: deployment"), 3, "domain 'deployment' is not one of"),
    (("    answer: a\n", "    answer: a\n    answer: b\n"), 10, "duplicate key"),
    (("options: {a: bandit, b: truncation}", "options: {a: bandit, c: truncation}"), 8, "keyed a, b, c"),
    (("    wrong: {b: Not this.}\n", "    wrong: {b: Not this.}\n    check: {lint: {}}\n"), 12,
     "check 'lint' needs 'codes'"),
    (("    wrong: {b: Not this.}\n", "    wrong: {b: Not this.}\n    check: {pipeline_order: {}}\n"), 12,
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


MULTIPLE = GOOD.replace("type: single", "type: multiple").replace(
    "options: {a: bandit, b: truncation}", "options: {a: bandit, b: truncation, c: median}").replace(
    "answer: a", "answer: [a, c]")


def test_a_multiple_choice_prompt_says_how_many_to_choose(tmp_path: Path) -> None:
    path = tmp_path / "bank.yml"
    path.write_text(MULTIPLE)
    with pytest.raises(BankError, match="the prompt must say 'Choose two.'"):
        load_file(path)
    path.write_text(MULTIPLE.replace("prompt: Which policy?", "prompt: Which policies cancel trials? Choose two."))
    assert load_file(path)[0].answer == ["a", "c"]


def test_a_learners_own_cards_may_cite_anything(tmp_path: Path) -> None:
    path = tmp_path / "mine.yml"
    path.write_text(GOOD.replace("    evidence: documented\n", "").replace(
        "sources: [https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters?view=azureml-api-2]",
        "source: my notes"))
    with pytest.raises(BankError, match="is not the URL of a public page"):
        load_file(path)  # held to the built-in bank's rules
    (question,) = load_bank([path]).questions  # a file of the learner's: their own cards
    assert question.sources == ("my notes",) and question.evidence == "yours"


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
    --preempt-after, so the learner sees what the lab proves."""
    import yaml

    from quiz.checks import lab_command, labs_folder

    for question in load_bank().questions:
        name = ((question.check or {}).get("scenario") or {}).get("name")
        if not name:
            continue
        meta = yaml.safe_load((labs_folder() / name / "scenario.yml").read_text())
        command = lab_command(question)
        if "steps" in meta:
            assert command == f"aml-run scenario run {name}"
            continue
        assert command.startswith(f"cd scenarios/{name} && ")
        for value in meta.get("set") or []:
            assert f"--set {value}" in command
        if meta.get("preempt_after"):
            assert "--preempt-after " + ",".join(f"{s:g}" for s in meta["preempt_after"]) in command
