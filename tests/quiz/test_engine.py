"""quiz.engine and quiz.store: scoring, weighting, the timer, FSRS through SQLite, crash safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiz.bank import DOMAINS, Bank, Question
from quiz.engine import (DomainScore, Trainer, exam_plan, parse_response, rating_for, scaled_score, streak)
from quiz.store import Progress
from quiz_app_support import FakeClock, clock  # noqa: F401 (fixture)

DAY = 86400.0


def make_question(qid: str, domain: str = "sweep", qtype: str = "single", **fields) -> Question:
    base = dict(id=qid, domain=domain, type=qtype, prompt=f"Question {qid}?", explanation="Because.",
                sources=("https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters",))
    if qtype == "single":
        base.update(options={"a": "Bandit", "b": "Truncation selection", "c": "Median stopping"}, answer="a",
                    wrong={"b": "Truncation cancels a percentage.", "c": "Median compares running averages."})
    elif qtype == "multiple":
        base.update(options={"a": "x", "b": "y", "c": "z"}, answer=["a", "c"], wrong={"b": "no"})
    elif qtype == "ordering":
        base.update(options={"a": "train", "b": "prep", "c": "score"}, answer=["b", "a", "c"])
    elif qtype == "numeric":
        base.update(answer=12)
    elif qtype == "wrong_line":
        base.update(prompt="```yaml\na: 1\nb: 2\n```\n", answer=2)
    base.update(fields)
    return Question(**base)


def make_bank(per_domain: int = 10) -> Bank:
    return Bank(tuple(make_question(f"{d.replace('_', '-')}-{i}", d) for d in DOMAINS for i in range(per_domain)))


@pytest.fixture
def trainer(tmp_path: Path, clock: FakeClock) -> Trainer:
    """Options in the bank's order: these tests answer by the bank's keys (shuffling has its own)."""
    return Trainer(make_bank(), Progress(tmp_path / "data"), clock=clock, seed=7, shuffle=False)


# ----------------------------------------------------------------------------- scoring and weights


def test_scaled_score_weights_domains_as_the_exam_does() -> None:
    perfect = {"command": DomainScore(4, 4), "sweep": DomainScore(4, 4)}
    assert scaled_score(perfect) == 1000
    # command and sweep weigh the same (15 each): half of one domain is a quarter of the weight.
    assert scaled_score({"command": DomainScore(2, 4), "sweep": DomainScore(4, 4)}) == 750
    # schedule (10) counts less than sweep (15): the same miss costs less.
    assert scaled_score({"schedule": DomainScore(0, 2), "sweep": DomainScore(2, 2)}) == round(1000 * 15 / 25)
    assert scaled_score({"sweep": DomainScore(0, 3)}) == 1  # the scale starts at 1
    assert scaled_score({}) == 1


def test_the_exam_draws_domains_in_the_exam_weights(trainer: Trainer) -> None:
    exam = trainer.exam(40)
    drawn = {d: sum(q.domain == d for q in exam.questions) for d in DOMAINS}
    assert drawn == {"assets": 8, "command": 6, "tracking": 6, "sweep": 6, "distributed": 4, "pipeline": 6,
                     "schedule": 4}
    assert len({q.id for q in exam.questions}) == 40


@settings(max_examples=200, deadline=None)
@given(count=st.integers(0, 200), available=st.fixed_dictionaries({d: st.integers(0, 60) for d in DOMAINS}))
def test_exam_plan_fills_the_exam_without_overdrawing_a_domain(count: int, available: dict[str, int]) -> None:
    plan = exam_plan(count, available)
    assert sum(plan.values()) == min(count, sum(available.values()))
    assert all(0 <= plan[d] <= available[d] for d in plan)
    # A domain that was not capped gets its weighted share, give or take the one rounding seat.
    open_domains = [d for d in plan if plan[d] < available[d]]
    if len(open_domains) == len(plan) and plan:
        weight = sum(DOMAINS[d][1] for d in plan)
        for d in plan:
            assert abs(plan[d] - count * DOMAINS[d][1] / weight) < 1 + 1e-9


def test_ratings_come_from_correctness_and_time() -> None:
    question = make_question("sweep-x")
    assert rating_for(question, False, 1) == "Again"
    assert rating_for(question, True, 1) == "Easy"
    assert rating_for(question, True, 15) == "Good"
    assert rating_for(question, True, 600) == "Hard"


# ----------------------------------------------------------------------------- the exam


def test_flag_change_and_submit(trainer: Trainer, clock: FakeClock) -> None:
    exam = trainer.exam(6)
    first = exam.current
    exam.select("b")
    assert exam.toggle_flag() is True
    exam.next()
    exam.select("a")
    exam.previous()
    assert exam.current is first and exam.response() == "b"
    exam.select("a")  # changed before submit
    assert [item.flagged for item in exam.review_items()][0] is True
    clock.advance(30)
    result = exam.submit()
    assert result.responses[first.id] == "a"
    assert result.correct == 2 and result.total == 6
    assert first not in result.missed and len(result.missed) == 4
    answers = trainer.progress.answers(session_id=exam.session_id)
    assert len(answers) == 6 and {a["question_id"]: a["response"] for a in answers}[first.id] == "a"
    assert exam.select("b") is False  # a submitted exam cannot change


def test_time_running_out_ends_the_exam(trainer: Trainer, clock: FakeClock) -> None:
    exam = trainer.exam(3, seconds=90)
    exam.start_clock()  # on screen
    exam.select(exam.current.answer)
    clock.advance(60)
    assert exam.remaining == 30 and not exam.expired
    clock.advance(31)
    assert exam.expired and exam.remaining == 0
    exam.next()
    assert exam.select("a") is False  # too late
    result = exam.submit()
    assert result.timed_out and result.correct == 1 and len(result.missed) == 2
    assert trainer.progress.sessions()[0]["summary"]["timed_out"] is True


def test_an_interrupted_exam_resumes_as_it_was(tmp_path: Path, clock: FakeClock) -> None:
    bank = make_bank()
    exam = Trainer(bank, Progress(tmp_path), clock=clock, seed=1).exam(5, seconds=600)
    exam.start_clock()
    clock.advance(40)
    exam.select(exam.current.answer)
    exam.toggle_flag()
    exam.go(3)  # saved at +40 s, with the clock running
    clock.advance(100)  # then the process dies without another save
    # A new process: a fresh Progress on the same folder.
    resumed = Trainer(bank, Progress(tmp_path), clock=clock, seed=2).unfinished_exam()
    assert resumed is not None
    assert [q.id for q in resumed.questions] == [q.id for q in exam.questions]
    assert [p.orders for p in resumed.presentations] == [p.orders for p in exam.presentations]
    assert resumed.position == 3 and resumed.flags == {exam.questions[0].id}
    assert resumed.responses == exam.responses and resumed.response(exam.questions[0]) == exam.questions[0].answer
    # The clock ran until the last save; the time after it, and while closed, is not counted.
    assert resumed.remaining == 560 and not resumed.running
    clock.advance(1000)
    assert resumed.remaining == 560
    resumed.submit()
    assert Trainer(bank, Progress(tmp_path), clock=clock).unfinished_exam() is None


def test_the_exam_clock_runs_only_while_the_exam_is_shown(trainer: Trainer, clock: FakeClock) -> None:
    exam = trainer.exam(3, seconds=300)
    clock.advance(50)  # built but not shown yet
    assert exam.remaining == 300
    exam.start_clock()
    clock.advance(60)
    assert exam.remaining == 240
    exam.pause()
    clock.advance(3600)  # paused: home screen, or aml-quiz closed
    assert exam.remaining == 240 and not exam.expired
    exam.start_clock()
    clock.advance(240)
    assert exam.expired


def test_an_exam_saved_with_a_deadline_keeps_it(tmp_path: Path, clock: FakeClock) -> None:
    """Exams saved before the clock could pause carry an absolute deadline: it still stands."""
    bank = make_bank()
    progress = Progress(tmp_path)
    ids = [q.id for q in bank.questions[:3]]
    progress.start_session("exam", ids, {"responses": {}, "flags": [], "position": 0,
                                         "deadline": clock() + 500}, now=clock())
    clock.advance(100)
    resumed = Trainer(bank, progress, clock=clock).unfinished_exam()
    assert resumed is not None and resumed.remaining == 400


def test_a_new_exam_abandons_the_unfinished_one(trainer: Trainer) -> None:
    first = trainer.exam(4)
    first.select("b")
    second = trainer.exam(4)
    assert trainer.unfinished_exam().session_id == second.session_id
    second.submit()
    assert trainer.unfinished_exam() is None
    old = next(s for s in trainer.progress.sessions() if s["id"] == first.session_id)
    assert old["ended"] is not None and old["summary"] == {"abandoned": True}
    assert trainer.progress.answers(session_id=first.session_id) == []  # nothing graded


# ----------------------------------------------------------------------------- FSRS and modes


def test_fsrs_cards_round_trip_through_sqlite(tmp_path: Path, clock: FakeClock) -> None:
    bank = make_bank(2)
    trainer = Trainer(bank, Progress(tmp_path), clock=clock, seed=3)
    session = trainer.practice(4)
    outcomes = {}
    while not session.done:
        question = session.current
        right = len(outcomes) % 2 == 0
        clock.advance(10)
        feedback = session.answer("a" if right else "b")
        outcomes[question.id] = feedback.rating
        session.advance()
    reopened = Progress(tmp_path)
    cards = reopened.cards()
    assert set(cards) == set(outcomes)
    for qid, rating in outcomes.items():
        # Again and Hard are due in a day, Good in two, Easy later: the card kept its schedule.
        due_in = cards[qid].due.timestamp() - clock()
        assert (due_in <= DAY + 1) == (rating in ("Again", "Hard")), (rating, due_in)
    later = Trainer(bank, reopened, clock=clock)
    assert later.due() == []
    clock.advance(DAY + 1)
    due = {q.id for q in later.due()}
    assert due == {qid for qid, rating in outcomes.items() if rating in ("Again", "Hard")}
    review = later.review()
    assert {q.id for q in review.questions} == due


def test_distractor_memory_and_missed_mode(trainer: Trainer, clock: FakeClock) -> None:
    session = trainer.drill("sweep", 1)
    question = session.current
    feedback = session.answer("b")
    assert not feedback.correct
    assert feedback.contrast == ("You chose b) Truncation selection. Truncation cancels a percentage. "
                                 "The answer is a) Bandit.")
    session.advance()
    missed = trainer.missed()
    assert [q.id for q in missed.questions] == [question.id]
    clock.advance(5)
    again = missed.answer("c")
    assert again.previous_contrast == "Last time you answered b) Truncation selection."
    missed.advance()
    fixed = trainer.missed()
    fixed.answer("a")
    fixed.advance()
    assert trainer.missed().questions == []


def test_practice_shows_questions_not_yet_met_first(trainer: Trainer) -> None:
    first = trainer.practice(30)
    seen = set()
    while not first.done:
        seen.add(first.current.id)
        first.answer("a")
        first.advance()
    second = trainer.practice(30)
    assert not seen & {q.id for q in second.questions}


def test_readiness_grows_with_right_answers(trainer: Trainer, clock: FakeClock) -> None:
    assert trainer.readiness()["sweep"] == 0
    for response in ("b", "a"):
        session = trainer.drill("sweep", 10)
        while not session.done:
            clock.advance(10)
            session.answer(response)
            session.advance()
        if response == "b":
            after_wrong = trainer.readiness()["sweep"]
    after_right = trainer.readiness()["sweep"]
    assert 0 < after_wrong < after_right <= 1
    assert trainer.readiness()["command"] == 0


def test_streak_counts_consecutive_days() -> None:
    from datetime import date

    days = {date(2027, 1, d): 1 for d in (1, 2, 3, 5, 6)}
    assert streak(days, date(2027, 1, 6)) == 2
    assert streak(days, date(2027, 1, 7)) == 2  # today not yet practised: the streak still stands
    assert streak(days, date(2027, 1, 8)) == 0


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True),
       separator=st.sampled_from([" ", ",", ", "]))
def test_typed_answers_parse_back_to_what_was_meant(keys: list[str], separator: str) -> None:
    multiple = make_question("sweep-m", qtype="multiple")  # its answer has two keys: "Choose two."
    ordering = make_question("sweep-o", qtype="ordering")
    text = separator.join(keys)
    if len(keys) == 2:
        assert parse_response(multiple, text) == keys
    else:  # as many as the question asks for, no fewer, no more
        with pytest.raises(ValueError, match="choose two"):
            parse_response(multiple, text)
    if len(keys) == 3:
        assert parse_response(ordering, text.upper()) == keys
    else:
        with pytest.raises(ValueError):
            parse_response(ordering, text)


def test_a_wrong_line_outside_the_snippet_is_refused_not_graded() -> None:
    question = make_question("sweep-w", qtype="wrong_line")  # a two-line snippet
    assert parse_response(question, "2") == 2
    for typed in ("99", "0", "-1", "1.5", "x"):
        with pytest.raises(ValueError, match="line number, 1-2"):
            parse_response(question, typed)


def test_grading_each_type() -> None:
    assert make_question("s-1").grade("A")
    assert make_question("s-2", qtype="multiple").grade(["c", "a"])
    assert not make_question("s-3", qtype="multiple").grade(["a"])
    assert make_question("s-4", qtype="ordering").grade(["b", "a", "c"])
    assert not make_question("s-5", qtype="ordering").grade(["a", "b", "c"])
    assert make_question("s-6", qtype="numeric").grade(12.0)
    assert make_question("s-7", qtype="numeric", tolerance=0.5).grade(12.4)
    assert make_question("s-8", qtype="wrong_line").grade("2")
    assert not make_question("s-9").grade(None)


# ----------------------------------------------------------------------------- crash safety


def _bank_file(tmp_path: Path) -> Path:
    lines = ["domain: sweep", "questions:"]
    for i in range(6):
        lines += [f"  - id: sweep-crash-{i}", "    type: single", "    source: my notes",
                  f"    prompt: Question {i}?", "    options: {a: right, b: wrong}", "    answer: a",
                  "    explanation: Because.", "    wrong: {b: Not this.}"]
    path = tmp_path / "bank.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "quiz", "--plain", "--bank", str(_bank_file(tmp_path)),
                             "--data-dir", str(tmp_path / "data"), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)


def _read_until(process: subprocess.Popen, marker: str, timeout: float = 30) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        assert time.monotonic() < deadline, seen
        char = process.stdout.read(1)
        assert char, seen
        seen += char
    return seen


def _key_of(shown: str, text: str) -> str:
    """The letter the options just shown give the option ``text`` (they are shuffled)."""
    return next(line.split(")")[0].strip() for line in shown.splitlines() if line.strip().endswith(f") {text}"))


def test_a_killed_practice_session_loses_no_answer(tmp_path: Path) -> None:
    process = _start(tmp_path, "--mode", "practice", "--count", "6")
    try:
        for option in ("right", "wrong"):
            shown = _read_until(process, "answer (")
            process.stdin.write(_key_of(shown, option) + "\n")
            _read_until(process, "Enter for the next question")
            process.stdin.write("\n")
        _read_until(process, "answer (")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    answers = Progress(tmp_path / "data").answers()
    # Kept in the bank's keys (a: right, b: wrong), whatever letters the options were shown with.
    assert [a["response"] for a in answers] == ["a", "b"]
    assert [a["correct"] for a in answers] == [True, False]
    assert len(Progress(tmp_path / "data").cards()) == 2


def test_a_killed_exam_resumes_with_its_answers_and_flags(tmp_path: Path) -> None:
    process = _start(tmp_path, "--mode", "exam", "--count", "4")
    try:
        shown = _read_until(process, "n/p/f/r/s>")
        process.stdin.write(_key_of(shown, "right") + "\n")  # answers question 1 and moves on
        _read_until(process, "n/p/f/r/s>")
        process.stdin.write("f\n")  # flags question 2
        _read_until(process, "flagged")
        _read_until(process, "n/p/f/r/s>")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    process = _start(tmp_path, "--mode", "exam")
    try:
        out = _read_until(process, "n/p/f/r/s>")
        assert "Resuming your unfinished exam." in out
        assert "Question 2 of 4" in out and "flagged" in out
        process.stdin.write("s\n")
        _read_until(process, "submit anyway?")
        process.stdin.write("y\n")
        out = _read_until(process, "missed")
        assert "1 of 4 right" in out
    finally:
        process.kill()
        process.wait()
