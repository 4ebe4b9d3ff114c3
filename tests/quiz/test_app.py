"""The Textual app driven by keys (Textual's Pilot): practice to the results, an exam with a flag
and a changed answer, a review of due cards, an exam whose time runs out; the command palette,
key remapping, resume, drill and lint.

The trainer runs on the fixed test bank (tests/data/quiz_bank), a clock the test moves and a
fixed seed, so every run asks the same questions in the same order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from quiz_app_support import DAY, FakeClock, answer_keys, clock, trainer, utc  # noqa: F401 (fixtures)

from quiz.app import QuizApp
from quiz.engine import Session, Trainer
from quiz.screens.feedback import FeedbackScreen
from quiz.screens.help import HelpScreen
from quiz.screens.home import DomainPicker, HomeScreen
from quiz.screens.question import ExamScreen, QuestionScreen
from quiz.screens.results import QuestionDetailScreen, ResultsScreen
from quiz.screens.review import ConfirmScreen, ExamReviewScreen
from quiz.screens.stats import StatsScreen
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

pytestmark = pytest.mark.usefixtures("utc")
SIZE = (100, 32)


def run(app: QuizApp, script: Callable[[Pilot], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await script(pilot)
            # Let the last screen finish mounting before the app exits (Textual's Header
            # schedules its title at mount and fails if the screen is gone by then).
            await pilot.pause(0.05)

    asyncio.run(main())


def text(widget: Static) -> str:
    return str(widget.render())


async def until(pilot: Pilot, condition: Callable[[], bool], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError("the app never got there")


# ----------------------------------------------------------------------------- practice


def test_practice_answered_through_to_the_results_records_every_answer(trainer: Trainer, clock: FakeClock) -> None:
    app = QuizApp(trainer, count=5, cursor_blink=False)
    given: list[tuple[str, bool]] = []

    async def script(pilot: Pilot) -> None:
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("p")
        for index in range(5):
            await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
            screen = app.screen
            assert isinstance(screen, QuestionScreen)
            assert text(screen.query_one("#position", Static)).startswith(f"Question {index + 1} of 5")
            question = screen.question
            right = index % 2 == 0
            clock.advance(30)
            await pilot.press(*answer_keys(question, right), "enter")
            await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            verdict = text(app.screen.query_one("#verdict", Static))
            assert verdict == ("✓ Correct" if right else "✗ Not quite")
            given.append((question.id, right))
            # Committed the moment it was given, before moving on.
            assert [(a["question_id"], a["correct"]) for a in trainer.progress.answers()] == given
            await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        assert "3 of 5 right" in text(app.screen.query_one("#headline", Static))
        per_domain = app.screen.per_domain
        assert sum(s.total for s in per_domain.values()) == 5 and sum(s.correct for s in per_domain.values()) == 3
        # Every answer is there to review; w keeps only the missed.
        answers = app.screen.query_one("#answers", OptionList)
        assert answers.option_count == 5
        await pilot.press("w")
        assert answers.option_count == 2
        # A missed question opens read-only with the learner's answer, the answer and why.
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionDetailScreen))
        assert app.screen.answer.question.id == given[1][0] and not app.screen.answer.correct
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))

    run(app, script)
    answers = trainer.progress.answers()
    assert [(a["question_id"], a["correct"]) for a in answers] == given
    assert {a["mode"] for a in answers} == {"practice"}
    assert all(a["seconds"] == 30 for a in answers)
    session = trainer.progress.sessions()[0]
    assert session["mode"] == "practice" and session["ended"] is not None
    assert session["summary"]["answered"] == 5 and session["summary"]["correct"] == 3
    assert len(trainer.progress.cards()) == 5


def test_a_typed_answer_that_is_not_a_number_is_not_submitted(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)
    wrong_line = trainer.bank.by_id()["command-undeclared-input"]

    async def script(pilot: Pilot) -> None:
        app.show_session(Session("practice", [wrong_line], trainer.progress, trainer.clock))
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        # Letters are not typed into a line number; Enter alone asks for one.
        assert app.screen.question.type == "wrong_line"
        await pilot.press("x", "enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert trainer.progress.answers() == []

    run(app, script)


# ----------------------------------------------------------------------------- exam


def test_exam_flag_and_a_changed_answer_are_what_is_graded(trainer: Trainer, clock: FakeClock) -> None:
    app = QuizApp(trainer, count=5, cursor_blink=False)
    seen: dict[str, object] = {}

    async def script(pilot: Pilot) -> None:
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        screen = app.screen
        assert isinstance(screen, ExamScreen)
        exam = screen.exam
        # Go to the first single-choice question.
        target = next(i for i, q in enumerate(exam.questions) if q.type == "single")
        for _ in range(target):
            await pilot.press("right")
        assert exam.position == target
        question = exam.current
        seen["question"] = question
        await pilot.press(*answer_keys(question, correct=False), "f")
        assert exam.response() == answer_keys(question, correct=False)[0]
        assert question.id in exam.flags
        assert "⚑ flagged" in text(screen.query_one("#position", Static))
        # Away and back: the answer is still there, and changed now.
        await pilot.press("right")
        assert exam.position == target + 1
        await pilot.press("left")
        assert exam.position == target
        assert screen.answer_widget.response == answer_keys(question, correct=False)[0]
        clock.advance(40)
        await pilot.press(*answer_keys(question, correct=True))
        assert exam.response() == question.answer
        seen["bank_answer"] = exam.presentation.to_bank(question.answer)
        # The review list shows the flag and the answer.
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        rows = app.screen.query_one("#review-list", OptionList)
        row = str(rows.get_option_at_index(target).prompt)
        assert "⚑" in row and "●" in row  # ● answered (✓ would say right)
        others = [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count) if i != target]
        assert not any("⚑" in r for r in others)
        # Submitting with questions unanswered asks first.
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        seen["result"] = exam.result

    run(app, script)
    question = seen["question"]
    result = seen["result"]
    assert {k: v for k, v in result.responses.items() if v is not None} == {question.id: question.answer}
    assert question not in result.missed and len(result.missed) == 4
    graded = trainer.progress.answers(question_id=question.id)
    # The store keeps the bank's key for what was chosen under the shown letter.
    assert [(a["response"], a["correct"], a["mode"]) for a in graded] == [(seen["bank_answer"], True, "exam")]
    summary = trainer.progress.sessions()[0]["summary"]
    assert summary["correct"] == 1 and summary["total"] == 5 and not summary["timed_out"]
    assert trainer.unfinished_exam() is None


def test_exam_time_running_out_submits_and_shows_the_results(trainer: Trainer, clock: FakeClock) -> None:
    app = QuizApp(trainer, count=3, cursor_blink=False, tick_seconds=0.05, exam_seconds=600)

    async def script(pilot: Pilot) -> None:
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        screen = app.screen
        assert screen.sub_title == "Exam · 10:00 left"
        clock.advance(125)
        await until(pilot, lambda: screen.sub_title == "Exam · 7:55 left")
        question = screen.exam.current
        await pilot.press(*answer_keys(question, correct=True))
        # Time runs out while the review list is open: it closes and the exam is submitted.
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ExamReviewScreen))
        clock.advance(600)
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        assert "time ran out" in text(app.screen.query_one("#result-detail", Static))
        assert [type(s) for s in app.screen_stack] == [HomeScreen, ResultsScreen]

    run(app, script)
    summary = trainer.progress.sessions()[0]["summary"]
    assert summary["timed_out"] is True and summary["total"] == 3 and summary["correct"] == 1
    assert len(trainer.progress.answers()) == 3


def test_an_interrupted_exam_resumes_from_home(trainer: Trainer, clock: FakeClock) -> None:
    app = QuizApp(trainer, count=4, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        exam = app.screen.exam
        await pilot.press(*answer_keys(exam.current), "enter", "escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        modes = app.screen.query_one("#modes", OptionList)
        assert modes.get_option_at_index(0).id == "resume"
        assert "1/4 answered" in str(modes.get_option_at_index(0).prompt)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        resumed = app.screen.exam
        assert resumed is not exam and resumed.session_id == exam.session_id
        assert resumed.position == 1 and len(resumed.responses) == 1
        # Paused: the clock stands still, however long the exam waits at home.
        clock.advance(30)
        left = resumed.remaining
        assert left == 8 * 60 - 30
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        clock.advance(4 * 120 + 1)
        app.screen.refresh_state()
        assert "7:30 left" in str(app.screen.query_one("#modes", OptionList).get_option("resume").prompt)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        assert app.screen.exam.remaining == left and app.screen.sub_title == "Exam · 7:30 left"

    run(app, script)
    assert trainer.unfinished_exam() is not None


# ----------------------------------------------------------------------------- review of due cards


def test_review_asks_the_cards_due_after_ten_days(trainer: Trainer, clock: FakeClock) -> None:
    app = QuizApp(trainer, count=3, cursor_blink=False)
    practiced: list[str] = []

    async def script(pilot: Pilot) -> None:
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)  # nothing is due yet
        await pilot.press("p")
        for index in range(3):
            await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
            question = app.screen.question
            practiced.append(question.id)
            clock.advance(20)
            await pilot.press(*answer_keys(question, correct=index != 1), "enter")
            await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        assert trainer.due() == []
        clock.advance(10 * DAY)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        assert "3 cards due" in str(app.screen.query_one("#modes", OptionList).get_option("review").prompt)
        await pilot.press("v")
        for _ in range(3):
            await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
            assert app.screen.session.mode == "review"
            question = app.screen.question
            await pilot.press(*answer_keys(question), "enter")
            await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        assert "3 of 3 right" in text(app.screen.query_one("#headline", Static))

    run(app, script)
    reviewed = [a for a in trainer.progress.answers() if a["mode"] == "review"]
    assert sorted(a["question_id"] for a in reviewed) == sorted(practiced)
    # The one answered wrong was due first (its card came due soonest).
    assert reviewed[0]["question_id"] == practiced[1]
    assert trainer.due() == []


# ----------------------------------------------------------------------------- feedback


def test_feedback_lints_the_yaml_and_shows_the_contrast_and_the_lab(trainer: Trainer) -> None:
    app = QuizApp(trainer, mode="drill", domain="sweep", cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        assert [type(s) for s in app.screen_stack] == [HomeScreen, QuestionScreen]
        seen = set()
        while isinstance(app.screen, QuestionScreen):
            question = app.screen.question
            await pilot.press(*answer_keys(question, correct=False), "enter")
            await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            screen = app.screen
            if question.id == "sweep-grid-needs-choice":
                await pilot.press("l")
                await until(pilot, lambda: bool(screen.query(".diagnostic")))
                lines = [text(d) for d in screen.query(".diagnostic")]
                assert lines[0].startswith("9:11 AML302 grid sampling needs a 'choice'")
                seen.add("lint")
            if question.id == "sweep-bandit-policy":
                chosen = answer_keys(question, correct=False)[0]
                assert f"You chose {chosen}) {question.options[chosen]}" in text(screen.query_one("#contrast"))
                lab = text(screen.query_one("#lab", Static))
                assert "cd scenarios/sweep-random-bandit" in lab
                assert "aml-run job create --file sweep.yml --stream" in lab
                seen.add("lab")
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(app.screen, FeedbackScreen))
        assert seen == {"lint", "lab"}
        assert isinstance(app.screen, ResultsScreen)

    run(app, script)
    assert {a["question_id"].split("-")[0] for a in trainer.progress.answers()} == {"sweep"}


def test_the_distractor_memory_shows_last_times_wrong_answer(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        first = app.screen.question
        await pilot.press(*answer_keys(first, correct=False), "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        assert not app.screen.query("#previous")
        wrong = app.screen.feedback.response
        await pilot.press("escape", "m")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        assert app.screen.session.mode == "missed" and app.screen.question.id == first.id
        await pilot.press(*answer_keys(first, correct=True), "enter")
        await until(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        previous = text(app.screen.query_one("#previous", Static))
        # The options it names are the ones picked then, whatever letters they show under now.
        picked = [first.options[k] for k in (wrong if isinstance(wrong, list) else [wrong])]
        assert previous.startswith("Last time you answered ")
        assert [previous.find(text.replace("`", "")) for text in picked] == \
            sorted(previous.find(text.replace("`", "")) for text in picked) and all(
                text.replace("`", "") in previous for text in picked)

    run(app, script)


# ----------------------------------------------------------------------------- navigation


def test_drill_asks_for_a_domain_and_asks_only_its_questions(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DomainPicker))
        await pilot.press("5")  # distributed
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        session = app.screen.session
        assert session.mode == "drill" and session.domain == "distributed"
        assert {q.domain for q in session.questions} == {"distributed"}
        assert app.screen.sub_title == "Drill · Distributed training"

    run(app, script)


def test_the_command_palette_offers_every_mode(trainer: Trainer) -> None:
    app = QuizApp(trainer, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        from quiz.app import ModeCommands

        provider = ModeCommands(app.screen)
        names = [name for name, _, _ in provider.commands()]
        assert {"Practice", "Exam", "Review due cards", "Drill a domain", "Missed", "Stats", "Help",
                "Home"} <= set(names)
        assert "Drill: Sweep jobs" in names and "Resume exam" not in names
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"stats")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, StatsScreen))

    run(app, script)


def test_keys_can_be_remapped_by_binding_id(trainer: Trainer, tmp_path: Path) -> None:
    (trainer.progress.folder / "keymap.toml").write_text('home.practice = "x"\nexam.flag = "ctrl+f"\n')
    app = QuizApp(trainer, count=3, cursor_blink=False)

    async def script(pilot: Pilot) -> None:
        assert app.keymap == {"home.practice": "x", "exam.flag": "ctrl+f"}
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("e", "enter")  # Enter starts the exam from its intro
        await until(pilot, lambda: isinstance(app.screen, ExamScreen))
        exam = app.screen.exam
        await pilot.press("ctrl+f")
        assert exam.current.id in exam.flags
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = text(app.screen.query_one("#keys", Static))
        assert "ctrl+f" in keys and "exam.flag" in keys
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))

    run(app, script)
