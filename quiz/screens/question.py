"""The question screens: one question of a session (practice, drill, missed, review, custom) and
the exam.

The screens ask the engine for the question and hand it the learner's response; the engine
grades, times, schedules and saves, and the app decides which screen comes next. In a session,
Enter submits and the feedback screen follows. In an exam every change of answer is given to the
engine at once (answers can change until the exam is submitted, inside the section the learner
is in); Enter and the arrows move, ``f`` flags, ``r`` opens the review list (where a section is
left and the exam submitted), ``c`` shows a case study's scenario, Esc pauses (the clock stops),
and the timer in the header counts down the engine's ``remaining``.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Markdown, Static

from ..bank import DOMAINS, Question
from ..engine import CHECKPOINT_SECONDS, ExamSession, LockedError, Session, incomplete, parse_response
from ..text import clock_text, how_many
from ..widgets.header import QuizHeader
from ..widgets.options import BlankAnswer, OptionsAnswer, TypedAnswer
from ..widgets.prompt import PromptView

AnswerWidget = OptionsAnswer | BlankAnswer | TypedAnswer


class Pane(VerticalScroll, can_focus=False, inherit_bindings=False):
    """A scrolling part of the question screen that never takes the focus from the answer."""


def answer_hint(question: Question, letters: bool = True) -> str:
    keys = list(question.options)
    span = ""
    if keys:
        span = f"{keys[0]}–{keys[-1]} or 1–{len(keys)}" if letters else f"1–{len(keys)}"
    asks = how_many(question)
    return {
        "single": f"{span} chooses",
        "fill_blank": f"{span} chooses the value for ____",
        "multiple": f"{asks} {span} (or space) toggles",
        "ordering": f"press {span} in the right order; backspace undoes",
        "build_list": f"{asks} Press {span} in order; backspace undoes",
        "wrong_line": "type the number of the wrong line",
        "numeric": "type a number",
        "yes_no": "y yes · n no",
        "multi_blank": "a letter or digit fills the blank at ▸, then ▸ moves to the next · ↑/↓ move ▸",
    }[question.type]


def session_title(session: Session | ExamSession) -> str:
    title = getattr(session, "title", None)
    if title:
        return title
    domain = getattr(session, "domain", None)
    return session.mode.capitalize() + (f" · {DOMAINS[domain][0]}" if domain else "")


def group_text(question: Question) -> str:
    group = question.group
    if group is None:
        return ""
    if group.kind == "case":
        return f"case study: {group.title} ({question.index + 1} of {group.size})"
    return f"series: solution {question.index + 1} of {group.size}"


def position_text(question: Question, position: int, total: int, *extra: str) -> Content:
    parts: list[Any] = [(f"Question {position} of {total}", "bold"), " · ", DOMAINS[question.domain][0], " · ",
                        (question.label, "$text-muted")]
    grouped = group_text(question)
    if grouped:
        parts += [" · ", (grouped, "$text-accent")]
    for item in extra:
        if item:
            parts += [" · ", (item, "bold $text-warning")]
    return Content.assemble(*parts)


class ScenarioScreen(ModalScreen[None]):
    """A case study's scenario, to read (and scroll) before or between its questions."""

    BINDINGS = [Binding("escape,c,q", "dismiss(None)", "Back to the question", id="scenario.back"),
                # A modal screen takes no keys from the app: help is bound here as well.
                Binding("question_mark", "app.help", "Help", id="scenario.help")]
    AUTO_FOCUS = "#scenario"

    def __init__(self, question: Question) -> None:
        super().__init__()
        self.question = question

    def compose(self):
        group = self.question.group
        assert group is not None
        with VerticalScroll(id="scenario", classes="dialog wide"):
            yield Static(f"Case study: {group.title}", classes="section-title")
            yield Markdown(group.text)
            yield Static("↑/↓ PgUp/PgDn scroll · Esc or c back", classes="hint")


class QuestionScreen(Screen):
    """The current question of a practice, drill, missed, review or custom session."""

    BINDINGS = [
        Binding("enter", "submit", "Submit", id="question.submit"),
        Binding("c", "scenario", "Case study", id="question.scenario"),
        Binding("escape", "app.home", "Home", id="question.home"),
        Binding("pageup", "scroll_prompt(-1)", "Scroll up", id="question.scroll_up", show=False),
        Binding("pagedown", "scroll_prompt(1)", "Scroll down", id="question.scroll_down", show=False),
        Binding("shift+up", "scroll_prompt(-0.2)", "Scroll up a little", id="question.scroll_up_line", show=False),
        Binding("shift+down", "scroll_prompt(0.2)", "Scroll down a little", id="question.scroll_down_line",
                show=False),
    ]
    AUTO_FOCUS = "#answer"
    # Letters the screen's own keys use, which options therefore do not (an exam's f flags; c
    # shows a case study).
    RESERVED: frozenset[str] = frozenset("c")

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "scenario":
            group = self.question.group
            return group is not None and group.kind == "case"
        return True

    def action_scenario(self) -> None:
        group = self.question.group
        if group is not None and group.kind == "case":
            self.app.push_screen(ScenarioScreen(self.question))

    def current_response(self) -> Any:
        return None

    def answer_changed(self, question_id: str, value: Any) -> None:
        """The answer widget's response (or typed text) changed; an exam records it at once."""

    def answer_input(self) -> AnswerWidget:
        question = self.question
        response = self.current_response()
        changed = partial(self.answer_changed, question.id)
        leaving = self.leaving_keys()
        reserved = self.reserved_keys()
        if question.type == "multi_blank":
            return BlankAnswer(question, response, reserved=reserved, on_change=changed, leaving_keys=leaving,
                               id="answer")
        if question.options or question.type == "yes_no":
            return OptionsAnswer(question, response, reserved=reserved, on_change=changed, leaving_keys=leaving,
                                 id="answer")
        return TypedAnswer(question.type, response, blink=self.app.cursor_blink, on_change=changed,
                           leaving_keys=leaving, id="answer")

    def reserved_keys(self) -> frozenset[str]:
        group = self.question.group
        reserved = set(self.RESERVED)
        if group is None or group.kind != "case":
            reserved.discard("c")
        return frozenset(reserved)

    def leaving_keys(self) -> set[str]:
        """Keys that move to another question while the answer widget has the focus."""
        return set()

    def action_scroll_prompt(self, direction: float) -> None:
        body = self.query_one("#body", VerticalScroll)
        if abs(direction) < 1:
            body.scroll_relative(y=4 if direction > 0 else -4, animate=False)
        elif direction < 0:
            body.scroll_page_up()
        else:
            body.scroll_page_down()

    @property
    def answer_widget(self) -> AnswerWidget:
        widget = self.query_one("#answer")
        assert isinstance(widget, (OptionsAnswer, BlankAnswer, TypedAnswer))
        return widget

    def show_state(self) -> None:
        session = self.session
        self.query_one("#position", Static).update(
            position_text(self.question, session.position + 1, len(session.questions)))
        self.query_one("#hint", Static).update(self.hint())

    def hint(self) -> str:
        letters = not self.reserved_keys() & set(self.question.options)
        return f"{answer_hint(self.question, letters)} · Enter submits"

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
        missing = incomplete(question, response)
        if missing is None:
            return response, None
        if response is None and question.type in ("single", "fill_blank", "yes_no"):
            return None, "choose an option first"
        return None, missing

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
        session = self.session
        assert isinstance(session, Session)
        self.app.answered(session, session.answer(response))


class ExamScreen(QuestionScreen, inherit_bindings=False):
    """A timed exam: answers change freely until submit, inside the current section; flags; a
    review list; a countdown that runs only while the exam is on screen."""

    BINDINGS = [
        Binding("enter", "submit", "Next", id="exam.next_or_review"),
        Binding("left", "previous", "Prev", id="exam.previous"),
        Binding("right", "next", "Next", id="exam.next", show=False),
        Binding("f", "flag", "Flag", id="exam.flag"),
        Binding("r", "review", "Review list", id="exam.review"),
        Binding("c", "scenario", "Case study", id="exam.scenario"),
        Binding("escape", "pause", "Pause", id="exam.pause"),
        Binding("pageup", "scroll_prompt(-1)", "Scroll up", id="exam.scroll_up", show=False),
        Binding("pagedown", "scroll_prompt(1)", "Scroll down", id="exam.scroll_down", show=False),
        Binding("shift+up", "scroll_prompt(-0.2)", "Scroll up a little", id="exam.scroll_up_line", show=False),
        Binding("shift+down", "scroll_prompt(0.2)", "Scroll down a little", id="exam.scroll_down_line", show=False),
    ]
    RESERVED = frozenset("fc")

    def __init__(self, exam: ExamSession) -> None:
        super().__init__(exam)
        self.exam = exam
        self._finished = False
        self._since_checkpoint = 0.0
        # One move at a time: the widgets of two questions never mount together.
        self._moving = asyncio.Lock()
        self.sub_title = self.timer_text()

    def on_mount(self) -> None:
        self.exam.start_clock()
        self.show_state()
        self.call_after_refresh(self.scenario_on_entry)
        self._ticker = self.set_interval(self.app.tick_seconds, self.tick)
        if self.exam.expired:
            self.call_later(self.finish)

    def on_screen_resume(self) -> None:
        if not self._finished:
            self.exam.start_clock()

    def on_unmount(self) -> None:
        # Closed (quit, pause, a crash of the app): the clock stops until the exam is resumed.
        if not self._finished:
            self.exam.pause()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "previous":
            return self.exam.can_go(self.exam.position - 1)
        return super().check_action(action, parameters)

    def current_response(self) -> Any:
        return self.exam.response()

    def show_state(self) -> None:
        exam = self.exam
        question = exam.current
        flagged = "⚑ flagged" if question.id in exam.flags else ""
        answered = "answered" if exam.answered() else ""
        section = ""
        if len(exam.sections) > 1:
            section = f"section {exam.section_index + 1} of {len(exam.sections)}"
        self.query_one("#position", Static).update(
            position_text(question, exam.position + 1, len(exam.questions), section, answered, flagged))
        self.query_one("#hint", Static).update(self.hint())
        self.show_timer()
        self.refresh_bindings()

    def hint(self) -> str:
        exam = self.exam
        letters = not self.reserved_keys() & set(self.question.options)
        last = exam.position == exam.section.end - 1
        then = "review list" if last else "next"
        if exam.section.kind == "series":
            return f"{answer_hint(self.question, letters)} · Enter {then} · answers in a series are final"
        return f"{answer_hint(self.question, letters)} · Enter {then} · ←/→ move"

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
            return
        self.show_timer()
        self._since_checkpoint += self.app.tick_seconds
        if self._since_checkpoint >= CHECKPOINT_SECONDS:
            self._since_checkpoint = 0.0
            self.exam.checkpoint()

    def action_pause(self) -> None:
        """Esc: the clock stops, home shows; Resume continues where this was."""
        self.exam.pause()
        self.app.go_home()

    # ------------------------------------------------------------------------- answers

    def _select(self, response: Any) -> None:
        if self._finished:
            return
        if not self.exam.select(response):
            if self.exam.expired:
                self.call_later(self.finish)
            else:
                self.notify("this solution is answered: a series' answers are final", severity="warning", timeout=3)
                self.call_later(self.show_question)
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
        # The position line and hint first: building the new question's prompt can take a moment,
        # and until then they would tell of the question just left.
        self.show_state()
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
        self.scenario_on_entry()

    def scenario_on_entry(self) -> None:
        """Entering a case study's section opens its scenario first, as the exam does."""
        exam = self.exam
        if exam.section.kind == "case" and exam.position == exam.section.start and not exam.answered():
            self.action_scenario()

    def leaving_keys(self) -> set[str]:
        keys: set[str] = set()
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id in ("exam.previous", "exam.next", "exam.next_or_review"):
                keys.update(k.strip() for k in self.app.keys_for(binding).split(","))
        return keys

    def _stay(self) -> None:
        """The screen stayed on the question: its answer widget takes keys again."""
        for widget in self.query("#answer"):
            if isinstance(widget, (OptionsAnswer, BlankAnswer, TypedAnswer)):
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
            if index == self.exam.position or not 0 <= index < len(self.exam.questions):
                self._stay()
                return
            try:
                self.exam.go(index)
            except LockedError as locked:
                self._stay()
                self.notify(str(locked), severity="warning", timeout=3)
                return
            await self.show_question()

    async def action_next(self) -> None:
        await self._go(min(self.exam.position + 1, self.exam.section.end - 1))

    async def action_previous(self) -> None:
        await self._go(max(self.exam.position - 1, self.exam.section.start))

    async def action_submit(self) -> None:
        """Enter: keep the answer and go on; on a section's last question, the review list."""
        widget = self.answer_widget
        if isinstance(widget, TypedAnswer) and widget.value.strip():
            _, problem = self.response_from_widget()
            if problem is not None:
                self._stay()
                self.notify(problem, severity="warning", timeout=3)
                return
        if self.exam.position < self.exam.section.end - 1:
            await self.action_next()
        else:
            self._stay()
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
        from .review import LEAVE_SECTION, SUBMIT

        self._stay()
        if choice == SUBMIT:
            self.call_later(self.finish)
        elif choice == LEAVE_SECTION:
            if self.exam.leave_section() is not None:
                self.call_later(self.show_question)
        elif isinstance(choice, int):
            self.call_later(self._go, choice)

    async def finish(self) -> None:
        """Submit (time up, or the learner's choice) and show the results in this screen's place."""
        if self._finished or self not in self.app.screen_stack:
            return  # done already, or paused (left for home): it resumes from there
        self._finished = True
        self._ticker.stop()
        self.app.exam_finished(self, self.exam.submit())
