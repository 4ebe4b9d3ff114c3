"""SVG snapshots of every screen of the quiz app (pytest-textual-snapshot's ``snap_compare``).

Deterministic by construction: the fixed test bank, a fixed seed, a clock the test holds (the
exam's timer shows the engine's remaining time on that clock, never real time), local time in
UTC, a fixed terminal size, the cursor not blinking, and no notifications on screen. Sessions are
built with the engine directly where the screen needs a particular question.

After a deliberate change of the screens (or a Textual upgrade, pinned in pyproject.toml):

    .venv/bin/python -m pytest tests/quiz/test_snapshots.py --snapshot-update

and look at the SVGs in tests/__snapshots__/test_quiz_snapshots/ before committing them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from quiz_app_support import DAY, START, FakeClock, answer_keys, clock, trainer, utc  # noqa: F401 (fixtures)
from textual.pilot import Pilot

from quiz.app import QuizApp
from quiz.engine import ExamSession, Session, Trainer
from quiz.screens.question import ExamScreen, QuestionScreen
from quiz.screens.results import ResultsScreen

pytestmark = pytest.mark.usefixtures("utc")
SIZE = (100, 32)
SMALL = (80, 24)


def app_for(trainer: Trainer, **options) -> QuizApp:
    return QuizApp(trainer, cursor_blink=False, **options)


def questions(trainer: Trainer, *ids: str):
    by_id = trainer.bank.by_id()
    return [by_id[i] for i in ids]


def session_of(trainer: Trainer, *ids: str, mode: str = "practice") -> Session:
    return Session(mode, questions(trainer, *ids), trainer.progress, trainer.clock)


def practise(trainer: Trainer, clock: FakeClock, count: int, wrong: set[int] = frozenset()) -> Session:
    """A practice session answered with the engine, as the app would."""
    session = trainer.practice(count)
    index = 0
    while not session.done:
        clock.advance(25)
        question = session.current
        session.answer(_response(question, correct=index not in wrong))
        session.advance()
        index += 1
    return session


def _response(question, correct: bool = True):
    keys = answer_keys(question, correct)
    if question.type in ("wrong_line", "numeric"):
        return int("".join(keys))
    if question.type == "yes_no":
        return keys == ["y"]
    if question.type in ("single", "fill_blank"):
        return keys[0]
    return keys


def showing(screen_factory: Callable[[], object], *keys: str):
    async def run_before(pilot: Pilot) -> None:
        await pilot.app.push_screen(screen_factory())
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()

    return run_before


# ----------------------------------------------------------------------------- home


def test_home_first_start(snap_compare, trainer: Trainer) -> None:
    assert snap_compare(app_for(trainer), terminal_size=SMALL)


def test_home_with_progress_due_cards_and_an_exam_to_resume(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    practise(trainer, clock, 8, wrong={1, 4})
    clock.advance(4 * DAY)
    exam = trainer.exam(6, seconds=600)
    exam.select(_response(exam.current))
    exam.next()
    clock.advance(135)
    assert snap_compare(app_for(trainer), terminal_size=SIZE)


def test_drill_domain_picker(snap_compare, trainer: Trainer) -> None:
    assert snap_compare(app_for(trainer), terminal_size=SMALL, press=["d"])


# ----------------------------------------------------------------------------- questions


def test_question_single_choice_chosen(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "command-outputs-folder", "sweep-grid-size")),
                         "b")
    assert snap_compare(app_for(trainer), terminal_size=SMALL, run_before=run_before)


def test_question_multiple_choice_two_toggled(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "sweep-bayesian-distributions")), "b", "e")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_question_ordering_half_built(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "pipeline-step-order")), "b", "c")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_question_wrong_line_with_line_numbers(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "sweep-grid-needs-choice")), "9")
    assert snap_compare(app_for(trainer), terminal_size=(100, 36), run_before=run_before)


def test_question_fill_blank_in_a_drill(snap_compare, trainer: Trainer) -> None:
    def screen():
        return QuestionScreen(Session("drill", questions(trainer, "command-compute-prefix"), trainer.progress,
                                      trainer.clock, domain="command"))

    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=showing(screen))


def test_question_numeric(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "distributed-total-processes")), "8")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_question_yes_no_in_a_series(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "sweep-stop-poor-trials-1",
                                                           "sweep-stop-poor-trials-2")), "y")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_question_multi_blank_one_blank_filled(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "tracking-register")), "a")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_question_build_list_two_placed(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "tracking-log-params")), "a", "c")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_case_study_scenario(snap_compare, trainer: Trainer) -> None:
    from quiz.screens.question import ScenarioScreen

    def screen():
        return QuestionScreen(session_of(trainer, "case-contoso-reuse", "case-contoso-order"))

    run_before = showing(screen, "c")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)
    assert ScenarioScreen  # the screen shown


def test_question_yaml_wraps_at_80_columns(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "sweep-grid-needs-choice")))
    assert snap_compare(app_for(trainer), terminal_size=SMALL, run_before=run_before)


def _sections(trainer: Trainer, clock: FakeClock) -> ExamSession:
    """An exam of five questions, a yes/no series and a case study, in its series now."""
    exam = ExamSession(questions(trainer, "command-outputs-folder", "sweep-grid-size", "assets-scale-to-zero",
                                 "sweep-stop-poor-trials-1", "sweep-stop-poor-trials-2", "case-contoso-reuse",
                                 "case-contoso-order"), trainer.progress, clock, seconds=840)
    exam.select("a")
    exam.leave_section()
    exam.select(True)
    exam.next()
    clock.advance(200)
    return exam


def test_exam_review_list_with_sections_left_and_to_come(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    run_before = showing(lambda: ExamScreen(_sections(trainer, clock)), "r")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_custom_test_picker(snap_compare, trainer: Trainer) -> None:
    assert snap_compare(app_for(trainer), terminal_size=(100, 40), press=["t"])


def _exam(trainer: Trainer, clock: FakeClock) -> ExamSession:
    exam = ExamSession(questions(trainer, "sweep-bayesian-distributions", "command-outputs-folder",
                                 "distributed-total-processes", "pipeline-step-order"),
                       trainer.progress, clock, seconds=480)
    exam.select(["b", "c"])
    exam.toggle_flag()
    exam.go(2)
    exam.select(8)
    exam.go(0)
    clock.advance(83)
    return exam


def test_exam_question_with_the_timer_and_a_flag(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    run_before = showing(lambda: ExamScreen(_exam(trainer, clock)))
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_exam_review_list(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    run_before = showing(lambda: ExamScreen(_exam(trainer, clock)), "r")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_exam_submit_with_unanswered_questions_asks(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    run_before = showing(lambda: ExamScreen(_exam(trainer, clock)), "r", "s")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


# ----------------------------------------------------------------------------- feedback


def test_feedback_wrong_with_contrast_and_last_times_answer(snap_compare, trainer: Trainer,
                                                            clock: FakeClock) -> None:
    earlier = session_of(trainer, "command-compute-prefix")
    earlier.answer("c")
    earlier.advance()
    clock.advance(DAY)
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "command-compute-prefix", "sweep-grid-size")),
                         "b", "enter")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


def test_feedback_with_lint_output(snap_compare, trainer: Trainer) -> None:
    run_before = showing(lambda: QuestionScreen(session_of(trainer, "sweep-grid-needs-choice")),
                         "1", "0", "enter", "l")
    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=run_before)


# ----------------------------------------------------------------------------- results


def test_exam_results(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    def screen():
        exam = trainer.exam(8, seconds=960)
        for index, question in enumerate(exam.questions):
            exam.go(index)
            exam.select(_response(question, correct=index % 3 != 0))
            clock.advance(30)
        return ResultsScreen.for_exam(exam.submit())

    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=showing(screen))


def test_session_summary_and_a_missed_question(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    def screen():
        return ResultsScreen.for_session(practise(trainer, clock, 5, wrong={0, 3}))

    assert snap_compare(app_for(trainer), terminal_size=SIZE, run_before=showing(screen))


def test_missed_question_read_only(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    def screen():
        return ResultsScreen.for_session(practise(trainer, clock, 5, wrong={0, 3}))

    assert snap_compare(app_for(trainer), terminal_size=(100, 40), run_before=showing(screen, "w", "down", "enter"))


def test_post_exam_review_of_every_answer(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    def screen():
        exam = ExamSession(questions(trainer, "command-outputs-folder", "sweep-grid-size", "tracking-register",
                                     "sweep-bayesian-distributions"), trainer.progress, clock, seconds=480)
        exam.select("a")
        exam.toggle_flag()
        exam.go(2)
        exam.select(["a", "a"])
        exam.go(3)
        exam.select(["b", "c", "e"])
        return ResultsScreen.for_exam(exam.submit())

    assert snap_compare(app_for(trainer), terminal_size=(100, 36), run_before=showing(screen, "down", "down", "enter"))


# ----------------------------------------------------------------------------- stats and help


def test_stats_with_twelve_weeks_of_activity(snap_compare, trainer: Trainer, clock: FakeClock) -> None:
    clock.advance(-80 * DAY)
    for day in range(80):
        if day > 70 or not (day % 7 in (2, 5) or day % 11 == 0):
            practise(trainer, clock, 1 + day % 5, wrong={1})
        clock.now[0] = clock.now[0] - (clock.now[0] - START) % DAY + DAY
    for right in (1, 3):  # two exams: the score history and each domain's trend
        exam = trainer.exam(4, seconds=480)
        for index, question in enumerate(exam.questions[:right]):
            exam.go(index)
            exam.select(_response(question))
        exam.submit()
        clock.advance(3600)
    assert snap_compare(app_for(trainer), terminal_size=(100, 44), press=["s"])


def test_help(snap_compare, trainer: Trainer) -> None:
    assert snap_compare(app_for(trainer), terminal_size=(100, 40), press=["question_mark"])


# ----------------------------------------------------------------------------- a damaged progress file


def test_damaged_progress_asks_before_setting_it_aside(snap_compare) -> None:
    from pathlib import Path

    from quiz.app import DamagedProgressApp
    from quiz.store import DamagedProgressError

    # A fixed path and finding: the screen, not a temporary folder's name, is under test.
    error = DamagedProgressError(Path("/home/learner/.local/share/amllab/quiz/progress.sqlite3"),
                                 "Page 3: btreeInitPage() returns error code 11")
    assert snap_compare(DamagedProgressApp(error), terminal_size=SMALL)
