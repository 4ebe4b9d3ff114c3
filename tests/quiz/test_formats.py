"""The exam's formats and the fairness of a presentation: options shuffled at each showing (and
kept with an exam), yes/no series and case studies as sections the exam does not return to,
multi-blank code and build lists, custom tests, and the history the stats show."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiz.bank import load_bank
from quiz.engine import LockedError, Session, Trainer, parse_response, units
from quiz.qtypes import Presentation
from quiz.store import Progress
from quiz_app_support import BANK_DIR, FakeClock, clock  # noqa: F401 (fixture)

BANK = load_bank([BANK_DIR])
BUILT_IN = load_bank()


def right_response(question):
    if question.type == "multi_blank":
        return [blank.answer for blank in question.blanks]
    return question.answer


@pytest.fixture
def trainer(tmp_path: Path, clock: FakeClock) -> Trainer:
    return Trainer(BANK, Progress(tmp_path / "data"), clock=clock, seed=11)


# ----------------------------------------------------------------------------- shuffling


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(BUILT_IN) - 1), seed=st.integers(0, 10_000))
def test_a_shuffled_question_grades_as_the_bank_does(index: int, seed: int) -> None:
    """Whatever the order shown, the shown answer is right, maps back to the bank's answer, and
    every other response grades the same shown or not."""
    question = BUILT_IN.questions[index]
    presentation = Presentation.shuffled(question, random.Random(seed))
    shown = presentation.shown
    assert shown.grade(right_response(shown))
    assert presentation.to_bank(right_response(shown)) == right_response(question)
    for key in question.options:
        assert shown.grade(presentation.to_shown(key)) == question.grade(key)
        assert presentation.to_bank(presentation.to_shown(key)) == key
    if question.options:  # every option keeps its text and its reason
        assert sorted(shown.options.values()) == sorted(question.options.values())
        assert sorted(shown.wrong.values()) == sorted(question.wrong.values())


def test_sessions_shuffle_and_the_store_keeps_the_banks_keys(trainer: Trainer, clock: FakeClock) -> None:
    question = BANK.by_id()["sweep-bandit-policy"]
    rng = random.Random(3)
    positions: Counter[str] = Counter()
    for _ in range(30):
        session = Session("practice", [question], trainer.progress, clock, rng=rng)
        positions[session.current.answer] += 1
        session.answer(session.current.answer)
    assert len(positions) == 3, positions  # its three options each held the answer at times
    stored = {a["response"] for a in trainer.progress.answers(question_id="sweep-bandit-policy")}
    assert stored == {"a"}  # the bank's key, whatever the letter shown


def test_a_wrong_choice_is_remembered_as_the_option_not_the_letter(trainer: Trainer, clock: FakeClock) -> None:
    question = BANK.by_id()["cli-stream-logs"]
    rng = random.Random(1)
    first = Session("practice", [question], trainer.progress, clock, rng=rng)
    wrong_key = next(k for k, text in first.current.options.items() if "--follow" in text)
    first.answer(wrong_key)
    again = Session("missed", [question], trainer.progress, clock, rng=rng)
    while next(k for k, t in again.current.options.items() if "--follow" in t) == wrong_key:
        again = Session("missed", [question], trainer.progress, clock, rng=rng)
    feedback = again.answer(again.current.answer)
    assert "--follow" in feedback.previous_contrast


def test_an_exam_keeps_its_order_when_resumed(tmp_path: Path, clock: FakeClock) -> None:
    exam = Trainer(BANK, Progress(tmp_path), clock=clock, seed=5).exam(10)
    exam.select(right_response(exam.current))
    resumed = Trainer(BANK, Progress(tmp_path), clock=clock, seed=99).unfinished_exam()
    assert [q.options for q in resumed.questions] == [q.options for q in exam.questions]
    assert resumed.response() == exam.response()


SERIES = """\
domain: sweep
questions:
  - series: four-ways
    source: my notes
    problem: |
      A random sweep runs 40 trials. You need trials that fall well behind the best one to stop early.
    solutions:
      - {id: four-ways-bandit, solution: You add a bandit policy., answer: yes, explanation: It cancels trials behind the best.}
      - {id: four-ways-median, solution: You add a median stopping policy., answer: yes, explanation: It cancels trials below the median.}
      - {id: four-ways-timeout, solution: You set a trial timeout., answer: no, explanation: It stops long trials whatever their metric.}
      - {id: four-ways-one, solution: You run one trial at a time., answer: no, explanation: It stops no trial.}
"""


@pytest.fixture
def series_bank(tmp_path: Path):
    path = tmp_path / "series.yml"
    path.write_text(SERIES)
    return load_bank([path])


def test_a_series_solutions_are_shuffled_at_each_showing(series_bank, tmp_path: Path, clock: FakeClock) -> None:
    """As options are: over many showings each solution comes first at times, and the one asked
    first is numbered 1 whatever its place in the bank."""
    solutions = list(series_bank.questions)
    progress = Progress(tmp_path / "data")
    rng = random.Random(7)
    first: Counter[str] = Counter()
    for _ in range(40):
        session = Session("practice", solutions, progress, clock, rng=rng)
        assert sorted(q.id for q in session.questions) == sorted(q.id for q in solutions)
        assert [q.index for q in session.questions] == [0, 1, 2, 3]
        first[session.questions[0].id] += 1
    assert set(first) == {q.id for q in solutions}, first
    for seed in range(40):  # the trainer's sessions too
        first[Trainer(series_bank, progress, clock=clock, seed=seed).practice(4).questions[0].id] += 1
    assert min(first.values()) > 5, first
    unshuffled = Session("practice", solutions, progress, clock)  # without rng: as written
    assert [q.id for q in unshuffled.questions] == [q.id for q in solutions]


def test_an_exam_keeps_its_series_order_when_resumed(tmp_path: Path, clock: FakeClock) -> None:
    """A new exam shuffles a series' solutions; resumed, it asks them in that order, numbered as
    they were, where it stopped."""
    bank_order = [q.id for q in BANK.groups()["sweep-stop-poor-trials"]]
    for seed in range(40):
        data = tmp_path / str(seed)
        exam = Trainer(BANK, Progress(data), clock=clock, seed=seed).exam(18)
        series = next(s for s in exam.sections if s.kind == "series")
        asked = [q.id for q in exam.questions[series.start:series.end]]
        if asked != bank_order:
            break
    else:
        pytest.fail("no new exam asked the series in another order than the bank's")
    while exam.section.kind != "series":
        exam.leave_section()
    exam.select(True)
    resumed = Trainer(BANK, Progress(data), clock=clock, seed=99).unfinished_exam()
    assert resumed is not None
    assert [q.id for q in resumed.questions] == [q.id for q in exam.questions]
    assert [q.index for q in resumed.questions[series.start:series.end]] == list(range(series.size))
    assert resumed.position == exam.position and resumed.current.id == asked[0]
    assert resumed.response() is True


def test_plain_shows_a_series_solutions_in_a_fresh_order(series_bank, tmp_path: Path, clock: FakeClock) -> None:
    import io

    from quiz.plain import run

    texts = {q.id: q.prompt.split("**Solution:** ")[1].split("\n")[0] for q in series_bank.questions}
    first: Counter[str] = Counter()
    for seed in range(30):
        out = io.StringIO()
        trainer = Trainer(series_bank, Progress(tmp_path / str(seed)), clock=clock, seed=seed)
        assert run(trainer, mode="practice", count=4, input=io.StringIO("y\n\n" * 4), out=out) == 0
        shown = [line.removeprefix("Solution: ") for line in out.getvalue().splitlines()
                 if line.startswith("Solution: ")]
        assert sorted(shown) == sorted(texts.values())
        first[shown[0]] += 1
    assert set(first) == set(texts.values()), first


# ----------------------------------------------------------------------------- sections


def test_an_exam_holds_series_and_a_case_study_after_the_other_questions(trainer: Trainer) -> None:
    exam = trainer.exam(18)
    kinds = [section.kind for section in exam.sections]
    assert kinds == ["questions", "series", "case"]
    series, case = exam.sections[1], exam.sections[2]
    assert [q.group.kind for q in exam.questions[series.start:series.end]] == ["series"] * series.size
    assert [q.index for q in exam.questions[case.start:case.end]] == list(range(case.size))


def test_a_section_left_cannot_be_entered_again(trainer: Trainer) -> None:
    exam = trainer.exam(18)
    exam.go(3)
    with pytest.raises(LockedError, match="later section"):
        exam.go(exam.sections[1].start)
    exam.leave_section()
    assert exam.position == exam.sections[1].start
    with pytest.raises(LockedError, match="section you have left"):
        exam.go(3)
    assert exam.previous() is exam.current  # no way back


def test_a_series_answer_is_final_and_taken_in_turn(trainer: Trainer) -> None:
    exam = trainer.exam(18)
    exam.leave_section()
    first = exam.current
    with pytest.raises(LockedError, match="answer this solution first"):
        exam.go(exam.position + 1)
    assert exam.select(True)
    assert exam.select(True)  # the same answer again changes nothing
    assert not exam.select(False) and exam.response() is True
    exam.next()
    assert exam.current is not first
    with pytest.raises(LockedError, match="cannot be revisited"):
        exam.go(exam.position - 1)
    assert [item.locked for item in exam.review_items()][exam.sections[0].start] is True


def test_only_the_last_section_submits_and_unanswered_sections_count_wrong(trainer: Trainer) -> None:
    exam = trainer.exam(18)
    assert not exam.last_section
    while exam.leave_section() is not None:
        pass
    assert exam.last_section and exam.section.kind == "case"
    result = exam.submit()
    assert result.correct == 0 and result.total == len(exam.questions)


def test_practice_asks_a_series_or_case_whole(trainer: Trainer) -> None:
    session = trainer.practice(20)
    ids = [q.id for q in session.questions]
    for members in BANK.groups().values():
        where = [ids.index(q.id) for q in members]
        assert where == list(range(where[0], where[0] + len(members)))
    assert sum(len(u) for u in units(BANK.questions)) == len(BANK)


# ----------------------------------------------------------------------------- the new types


def test_multi_blank_is_right_only_with_every_blank_and_counts_each() -> None:
    question = BANK.by_id()["tracking-register"]
    from quiz.qtypes import type_of

    assert question.grade(["a", "b"])
    assert not question.grade(["a", "a"])
    assert type_of(question).partial(question, ["a", "a"]) == (1, 2)
    assert parse_response(question, "a b") == ["a", "b"]
    with pytest.raises(ValueError, match="2 letters"):
        parse_response(question, "a")
    with pytest.raises(ValueError, match="blank 2 takes one of a, b"):
        parse_response(question, "a c")


def test_a_build_list_takes_exactly_its_steps_in_order() -> None:
    question = BANK.by_id()["tracking-log-params"]
    assert question.grade(["a", "c", "d"])
    assert not question.grade(["c", "a", "d"]) and not question.grade(["a", "b", "c", "d"])
    assert parse_response(question, "a c d") == ["a", "c", "d"]
    with pytest.raises(ValueError, match="3 steps"):
        parse_response(question, "a c")


def test_yes_no_answers() -> None:
    question = BANK.by_id()["sweep-stop-poor-trials-1"]
    assert question.grade(True) and not question.grade(False) and not question.grade(None)
    assert parse_response(question, "Y") is True and parse_response(question, "no") is False
    with pytest.raises(ValueError):
        parse_response(question, "maybe")


@pytest.mark.parametrize("count", [0, -3])
def test_a_session_of_no_questions_is_refused(trainer: Trainer, count: int) -> None:
    for start in (trainer.practice, trainer.exam, lambda c: trainer.drill("sweep", c)):
        with pytest.raises(ValueError, match="at least 1"):
            start(count)


# ----------------------------------------------------------------------------- custom tests, stats


def test_custom_tests_draw_flagged_missed_unseen_by_domain_and_type(trainer: Trainer, clock: FakeClock) -> None:
    exam = trainer.exam(6)
    flagged = exam.current
    exam.toggle_flag()
    exam.submit()
    assert [q.id for q in trainer.custom_pool("flagged")] == [flagged.id]
    missed = {q.id for q in trainer.custom_pool("missed")}
    assert flagged.id in missed and len(missed) == 6  # nothing was answered
    assert all(q.domain == "sweep" for q in trainer.custom_pool(domains=["sweep"]))
    assert {q.type for q in trainer.custom_pool(types=["numeric"])} == {"numeric"}
    assert not {q.id for q in trainer.custom_pool("unseen")} & missed
    timed = trainer.custom("all", ["sweep"], [], 3, timed=True)
    assert len(timed.questions) >= 3 and timed.remaining == 120 * len(timed.questions)
    with pytest.raises(ValueError, match="unknown source"):
        trainer.custom_pool("favourites")


def test_stats_keep_each_exams_score_and_the_domain_trend(trainer: Trainer, clock: FakeClock) -> None:
    for right in (False, True):
        exam = trainer.exam(6)
        if right:
            for index, question in enumerate(exam.questions):
                exam.go(index)
                exam.select(right_response(question))
        exam.submit()
        clock.advance(3600)
    stats = trainer.stats()
    assert [e["score"] for e in stats.exams] == [1, 1000]
    assert all(values == [0, 100] for values in stats.domain_trend().values())
