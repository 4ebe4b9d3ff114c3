"""The question screens: one question of a session (practice, drill, missed, review) and the exam.

The screens ask the engine for the question and hand it the learner's response; the engine
grades, times, schedules and saves. In a session, Enter submits and the feedback screen follows.
In an exam every change of answer is given to the engine at once (answers can change until the
exam is submitted); Enter and the arrows move, ``f`` flags, ``r`` opens the review list, and the
timer in the header counts down the engine's ``remaining`` (the engine's clock, so tests drive it).
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from ..bank import DOMAINS, Question
from ..engine import ExamSession, Session, parse_response
from ..widgets.header import QuizHeader
from ..widgets.options import KEYED_TYPES, OptionsAnswer, TypedAnswer
from ..widgets.prompt import PromptView
from .home import clock_text


class Pane(VerticalScroll, can_focus=False, inherit_bindings=False):
    """A scrolling part of the question screen that never takes the focus from the answer."""


TYPE_NAMES = {
    "single": "single choice",
    "multiple": "multiple choice",
    "fill_blank": "fill the blank",
    "ordering": "put in order",
    "wrong_line": "find the wrong line",
    "numeric": "number",
}


def answer_hint(question: Question, letters: bool = True) -> str:
    keys = list(question.options)
    span = ""
    if keys:
        span = f"{keys[0]}–{keys[-1]} or 1–{len(keys)}" if letters else f"1–{len(keys)}"
    return {
        "single": f"{span} chooses",
        "fill_blank": f"{span} chooses the value for ____",
        "multiple": f"{span} (or space) toggles; choose every right option",
        "ordering": f"press {span} in the right order; backspace undoes",
        "wrong_line": "type the number of the wrong line",
        "numeric": "type a number",
    }[question.type]


def session_title(session: Session | ExamSession) -> str:
    domain = getattr(session, "domain", None)
    return session.mode.capitalize() + (f" · {DOMAINS[domain][0]}" if domain else "")


def position_text(question: Question, position: int, total: int, *extra: str) -> Content:
    parts: list[Any] = [(f"Question {position} of {total}", "bold"), " · ", DOMAINS[question.domain][0], " · ",
                        (TYPE_NAMES[question.type], "$text-muted")]
    for item in extra:
        if item:
            parts += [" · ", (item, "bold $text-warning")]
    return Content.assemble(*parts)


class QuestionScreen(Screen):
    """The current question of a practice, drill, missed or review session."""

    BINDINGS = [
        Binding("enter", "submit", "Submit", id="question.submit"),
        Binding("escape", "app.home", "Home", id="question.home"),
        Binding("pageup", "scroll_prompt(-1)", "Scroll up", id="question.scroll_up", show=False),
        Binding("pagedown", "scroll_prompt(1)", "Scroll down", id="question.scroll_down", show=False),
    ]
    AUTO_FOCUS = "#answer"
    # Letters the screen's own keys use, which options therefore do not (an exam's f flags).
    RESERVED: frozenset[str] = frozenset()

    def __init__(self, session: Session | ExamSession) -> None:
        super().__init__()
        self.session = session
        self.sub_title = session_title(session)

    @property
    def question(self) -> Question:
        question = self.session.current
        assert question is not None
        return question

    def compose(self):
        yield QuizHeader()
        yield Static(id="position")
        with Pane(id="body"):
            yield PromptView(self.question)
        with Pane(id="answer-area"):
            yield self.answer_input()
        yield Static(id="hint", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.show_state()

    def current_response(self) -> Any:
        return None

    def answer_changed(self, question_id: str, value: Any) -> None:
        """The answer widget's response (or typed text) changed; an exam records it at once."""

    def answer_input(self) -> OptionsAnswer | TypedAnswer:
        question = self.question
        response = self.current_response()
        changed = partial(self.answer_changed, question.id)
        leaving = self.leaving_keys()
        if question.type in KEYED_TYPES:
            return OptionsAnswer(question.type, question.options, response, reserved=self.RESERVED,
                                 on_change=changed, leaving_keys=leaving, id="answer")
        return TypedAnswer(question.type, response, blink=self.app.cursor_blink, on_change=changed,
                           leaving_keys=leaving, id="answer")

    def leaving_keys(self) -> set[str]:
        """Keys that move to another question while the answer widget has the focus."""
        return set()

    def action_scroll_prompt(self, direction: int) -> None:
        body = self.query_one("#body", VerticalScroll)
        if direction < 0:
            body.scroll_page_up()
        else:
            body.scroll_page_down()

    @property
    def answer_widget(self) -> OptionsAnswer | TypedAnswer:
        widget = self.query_one("#answer")
        assert isinstance(widget, (OptionsAnswer, TypedAnswer))
        return widget

    def show_state(self) -> None:
        session = self.session
        self.query_one("#position", Static).update(
            position_text(self.question, session.position + 1, len(session.questions)))
        self.query_one("#hint", Static).update(self.hint())

    def hint(self) -> str:
        return f"{answer_hint(self.question)} · Enter submits"

    def response_from_widget(self) -> tuple[Any, str | None]:
        """The response the answer widget holds, or (None, what is missing)."""
        widget = self.answer_widget
        question = self.question
        if isinstance(widget, TypedAnswer):
            if not widget.value.strip():
                return None, answer_hint(question)
            try:
                return parse_response(question, widget.value), None
            except ValueError as error:
                return None, str(error)
        response = widget.response
        if response is not None:
            return response, None
        if question.type == "ordering":
            left = len(question.options) - len(widget.chosen)
            return None, f"put every option in order ({left} to go)"
        return None, "choose an option first" if question.type != "multiple" else "choose the right options first"

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        await self.run_action("submit")

    def action_submit(self) -> None:
        if not self.is_current:
            return  # a key queued before this screen gave way
        response, problem = self.response_from_widget()
        if problem is not None:
            self.notify(problem, severity="warning", timeout=3)
            return
        from .feedback import FeedbackScreen

        session = self.session
        assert isinstance(session, Session)
        feedback = session.answer(response)
        self.app.switch_screen(FeedbackScreen(session, feedback))


class ExamScreen(QuestionScreen, inherit_bindings=False):
    """A timed exam: answers change freely until submit; flags; a review list; a countdown."""

    BINDINGS = [
        Binding("enter", "submit", "Next", id="exam.next_or_review"),
        Binding("left", "previous", "Prev", id="exam.previous"),
        Binding("right", "next", "Next", id="exam.next", show=False),
        Binding("f", "flag", "Flag", id="exam.flag"),
        Binding("r", "review", "Review list", id="exam.review"),
        Binding("escape", "app.home", "Pause", id="exam.pause"),
        Binding("pageup", "scroll_prompt(-1)", "Scroll up", id="exam.scroll_up", show=False),
        Binding("pagedown", "scroll_prompt(1)", "Scroll down", id="exam.scroll_down", show=False),
    ]
    RESERVED = frozenset("f")

    def __init__(self, exam: ExamSession) -> None:
        super().__init__(exam)
        self.exam = exam
        self._finished = False
        # One move at a time: the widgets of two questions never mount together.
        self._moving = asyncio.Lock()
        self.sub_title = self.timer_text()

    def on_mount(self) -> None:
        self.show_state()
        self._ticker = self.set_interval(self.app.tick_seconds, self.tick)
        if self.exam.expired:
            self.call_later(self.finish)

    def current_response(self) -> Any:
        return self.exam.response()

    def show_state(self) -> None:
        exam = self.exam
        question = exam.current
        flagged = "⚑ flagged" if question.id in exam.flags else ""
        answered = "answered" if exam.response() is not None else ""
        self.query_one("#position", Static).update(
            position_text(question, exam.position + 1, len(exam.questions), answered, flagged))
        self.query_one("#hint", Static).update(self.hint())
        self.show_timer()

    def hint(self) -> str:
        letters = not self.RESERVED & set(self.question.options)
        last = self.exam.position == len(self.exam.questions) - 1
        return f"{answer_hint(self.question, letters)} · Enter {'review list' if last else 'next'} · ←/→ move"

    def timer_text(self) -> str:
        return f"Exam · {clock_text(self.exam.remaining)} left"

    def show_timer(self) -> None:
        self.sub_title = self.timer_text()

    def tick(self) -> None:
        """Every second: the countdown; at zero the exam is submitted and its results shown."""
        if self._finished:
            return
        if self.exam.expired:
            self.call_later(self.finish)
        else:
            self.show_timer()

    # ------------------------------------------------------------------------- answers

    def _select(self, response: Any) -> None:
        if self._finished:
            return
        if not self.exam.select(response):
            self.call_later(self.finish)
            return
        self.show_state()

    def answer_changed(self, question_id: str, value: Any) -> None:
        if question_id != self.exam.current.id:
            return
        if isinstance(value, str):  # typed: a number, or nothing while it is not one
            text = value.strip()
            try:
                value = parse_response(self.question, text) if text else None
            except ValueError:
                value = None
        if value != self.exam.response():
            self._select(value)

    # ------------------------------------------------------------------------- moving

    async def show_question(self) -> None:
        body = self.query_one("#body", VerticalScroll)
        area = self.query_one("#answer-area", VerticalScroll)
        await body.remove_children()
        await area.remove_children()
        await body.mount(PromptView(self.question))
        await area.mount(self.answer_input())
        body.scroll_home(animate=False)
        area.scroll_home(animate=False)
        # At once (widget.focus() waits for the next turn): the next key goes to the new answer.
        self.set_focus(self.answer_widget, scroll_visible=False)
        self.show_state()

    def leaving_keys(self) -> set[str]:
        keys: set[str] = set()
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id in ("exam.previous", "exam.next", "exam.next_or_review"):
                keys.update(k.strip() for k in self.app.keys_for(binding).split(","))
        return keys

    def _stay(self) -> None:
        """The screen stayed on the question: its answer widget takes keys again."""
        for widget in self.query("#answer"):
            if isinstance(widget, (OptionsAnswer, TypedAnswer)):
                widget.leaving = False

    async def _go(self, index: int) -> None:
        if self._finished:
            return
        if self.exam.expired:
            await self.finish()
            return
        async with self._moving:
            if self._finished or not self.is_attached:
                return
            if index != self.exam.position:
                self.exam.go(index)
                await self.show_question()
            else:
                self._stay()

    async def action_next(self) -> None:
        await self._go(min(self.exam.position + 1, len(self.exam.questions) - 1))

    async def action_previous(self) -> None:
        await self._go(max(self.exam.position - 1, 0))

    async def action_submit(self) -> None:
        """Enter: keep the answer and go on; on the last question, the review list."""
        widget = self.answer_widget
        if isinstance(widget, TypedAnswer) and widget.value.strip():
            _, problem = self.response_from_widget()
            if problem is not None:
                self._stay()
                self.notify(problem, severity="warning", timeout=3)
                return
        if self.exam.position < len(self.exam.questions) - 1:
            await self.action_next()
        else:
            self.action_review()

    def action_flag(self) -> None:
        if self._finished:
            return
        flagged = self.exam.toggle_flag()
        self.show_state()
        self.notify("flagged for review" if flagged else "flag removed", timeout=1.5)

    def action_review(self) -> None:
        from .review import ExamReviewScreen

        if self._finished:
            return
        self.app.push_screen(ExamReviewScreen(self.exam), self._reviewed)

    def _reviewed(self, choice: int | str | None) -> None:
        self._stay()
        if choice == "submit":
            self.call_later(self.finish)
        elif isinstance(choice, int):
            self.call_later(self._go, choice)

    async def finish(self) -> None:
        """Submit (time up, or the learner's choice) and show the results in this screen's place."""
        if self._finished or self not in self.app.screen_stack:
            return  # done already, or paused (left for home): it resumes from there
        self._finished = True
        self._ticker.stop()
        result = self.exam.submit()
        from .results import ResultsScreen

        # Not awaited: the stack changes at once, and this screen cannot await its own removal.
        while self.app.screen is not self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        self.app.switch_screen(ResultsScreen.for_exam(result))
