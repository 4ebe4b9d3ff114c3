"""``aml-quiz``'s Textual app: ``QuizApp(trainer, mode=..., domain=..., count=...).run()``.

The app owns the flow between screens: the home screen picks a mode, :meth:`QuizApp.start_mode`
asks the :class:`quiz.engine.Trainer` for the session and shows its first question; a question
hands its answer to :meth:`QuizApp.answered`, the feedback to :meth:`QuizApp.next_after_feedback`,
an exam its result to :meth:`QuizApp.exam_finished`. Screens never import each other to move on.
Every decision (what to ask, grading, timing, scheduling, saving) is the engine's.

Keys: every binding has an id (``exam.flag``, ``question.submit`` ...; the help screen lists
them), so a user can remap keys with Textual's keymap: ``keymap.toml`` in the data folder
(``exam.flag = "ctrl+f"``), or the ``keymap`` argument.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from functools import partial
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.screen import Screen

from .bank import DOMAINS, Question
from .engine import (EXAM_QUESTIONS, PRACTICE_QUESTIONS, SECONDS_PER_EXAM_QUESTION, ExamResult, Feedback, Session,
                     Trainer)
from .store import DamagedProgressError, ExamBusyError

KEYMAP_FILE = "keymap.toml"
MODES = ("practice", "exam", "review", "drill", "missed", "custom", "stats", "help", "resume")


class ModeCommands(Provider):
    """The command palette's entries: every mode (and each domain's drill)."""

    def commands(self) -> Iterator[tuple[str, str, Any]]:
        app = self.app
        assert isinstance(app, QuizApp)
        start = app.start_mode
        if app.trainer.unfinished_exam() is not None:
            yield "Resume exam", "continue the unfinished exam where it was", partial(start, "resume")
        yield "Practice", "questions you have not met first; feedback after each", partial(start, "practice")
        yield "Exam", "a timed exam across the domains, scored 1-1000", partial(start, "exam")
        yield "Review due cards", "the questions spaced repetition says are due", partial(start, "review")
        yield "Drill a domain", "practice in one domain (pick it)", partial(start, "drill")
        for domain, (title, _) in DOMAINS.items():
            yield f"Drill: {title}", f"practice {domain} questions only", partial(start, "drill", domain)
        yield "Missed", "the questions answered wrong last time", partial(start, "missed")
        yield "Custom test", "flagged, missed or unseen questions, by domain and type", partial(start, "custom")
        yield "Stats", "answers, accuracy, streak, activity", partial(start, "stats")
        yield "Help", "every key", partial(start, "help")
        yield "Home", "the modes and readiness", app.action_home

    async def discover(self) -> Hits:
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)


class DamagedProgressApp(App[bool]):
    """Before the trainer exists: the progress file is damaged; set it aside and start fresh?
    Returns True only for a yes."""

    CSS_PATH = "app.tcss"
    TITLE = "aml-quiz"

    def __init__(self, error: DamagedProgressError) -> None:
        super().__init__()
        self.error = error

    def on_mount(self) -> None:
        from .screens.review import ConfirmScreen

        error = self.error
        question = Content.assemble(
            ("The progress database\n", ""), (str(error.path), "bold"), ("\nis damaged: ", ""),
            (error.problem, "$text-error"),
            ("\n\nMove it aside (as ", ""), (f"{error.path.name}.damaged-<time>", "bold"),
            (", with its -wal and -shm) and start with fresh progress? Its history stays in the moved "
             "file.\n\nNo quits and changes nothing.", ""))
        self.push_screen(ConfirmScreen(question, yes="Yes, set it aside (y)", title="Progress damaged",
                                       wide=True),
                         lambda yes: self.exit(bool(yes)))


class QuizApp(App):
    """The exam trainer. ``mode`` starts a mode at once (home stays underneath)."""

    CSS_PATH = "app.tcss"
    TITLE = "aml-quiz"
    COMMANDS = App.COMMANDS | {ModeCommands}
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        # Ctrl-C quits, as in any terminal program (every answer is saved as it is given).
        Binding("ctrl+c", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(self, trainer: Trainer, mode: str | None = None, domain: str | None = None,
                 count: int | None = None, *, keymap: dict[str, str] | None = None, tick_seconds: float = 1.0,
                 cursor_blink: bool = True, exam_seconds: float | None = None) -> None:
        super().__init__()
        if mode is not None and mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        self.trainer = trainer
        self.initial_mode = mode
        self.initial_domain = domain
        self.count = count
        # How often the exam's countdown is redrawn (the time itself is the engine's clock).
        self.tick_seconds = tick_seconds
        self.cursor_blink = cursor_blink
        # None: the engine's default (two minutes a question).
        self.exam_seconds = exam_seconds
        self.keymap: dict[str, str] = {}
        self._keymap_problem: str | None = None
        if keymap is None:
            keymap = self._read_keymap()
        self.keymap = dict(keymap)

    def _read_keymap(self) -> dict[str, str]:
        folder = getattr(self.trainer.progress, "folder", None)
        path = folder / KEYMAP_FILE if folder is not None else None
        if path is None or not path.is_file():
            return {}
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            self._keymap_problem = f"{path}: {error}; using the default keys"
            return {}
        flat: dict[str, str] = {}

        def walk(prefix: str, value: Any) -> None:
            if isinstance(value, dict):
                for key, inner in value.items():
                    walk(f"{prefix}.{key}" if prefix else str(key), inner)
            elif isinstance(value, str):
                flat[prefix] = value
            else:
                self._keymap_problem = f"{path}: '{prefix}' must be a string of keys, e.g. \"ctrl+f\""

        walk("", data)
        return flat

    def keys_for(self, binding: Binding) -> str:
        """The keys a binding answers to, after the keymap."""
        return self.keymap.get(binding.id, binding.key) if binding.id else binding.key

    def get_default_screen(self) -> Screen:
        from .screens.home import HomeScreen

        return HomeScreen()

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        if self._keymap_problem:
            self.notify(self._keymap_problem, severity="error", timeout=8)
        moved = getattr(self.trainer.progress, "set_aside", None)
        if moved is not None:
            self.notify(f"The damaged progress file is now {moved}; starting with fresh progress.",
                        title="Progress set aside", timeout=10)
        if self.initial_mode:
            self.call_after_refresh(self.start_mode, self.initial_mode, self.initial_domain, True)

    # ------------------------------------------------------------------------- routing

    def go_home(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def action_home(self) -> None:
        self.go_home()

    def action_close(self) -> None:
        """Back to the screen underneath (never past home)."""
        if len(self.screen_stack) > 1:
            self.pop_screen()

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def start_mode(self, mode: str, domain: str | None = None, resume_first: bool = False,
                   confirmed: bool = False) -> None:
        """Start ``mode`` from the home screen. ``resume_first``: an exam resumes the unfinished one
        when there is one (``--mode exam``, as ``--plain`` does). A new exam while one is
        unfinished asks first (``confirmed``), since it closes the other for good."""
        from .screens.home import CustomTestPicker, DomainPicker
        from .screens.intro import ExamIntroScreen
        from .screens.question import ExamScreen
        from .screens.review import ConfirmScreen
        from .screens.stats import StatsScreen

        if getattr(self, "_exit", False) or self._closing:
            return  # quitting: a key typed after q starts nothing
        if mode == "help":
            self.action_help()
            return
        self.go_home()
        trainer = self.trainer
        if mode == "stats":
            self.push_screen(StatsScreen())
            return
        if mode in ("exam", "resume"):
            # Owned by another aml-quiz, the unfinished exam cannot be closed from here: the
            # engine refuses below, with who has it, and nothing needs confirming.
            if mode == "exam" and not resume_first and not confirmed and trainer.unfinished_exam() is not None \
                    and trainer.progress.exam_owner() is None:
                def answered(yes: bool | None) -> None:
                    if yes:
                        self.start_mode("exam", confirmed=True)

                self.push_screen(ConfirmScreen(
                    "An exam is unfinished. A new exam closes it for good: its answers stay on record, "
                    "ungraded. Start a new exam anyway? (c resumes the unfinished one)",
                    yes="Yes, a new exam (y)", title="Unfinished exam"), answered)
                return
            try:
                exam = trainer.resume_exam() if mode == "resume" or resume_first else None
            except ExamBusyError as busy:
                self.notify(str(busy), title="Exam in use", severity="error", timeout=8)
                return
            if exam is None and mode == "resume":
                self.notify("There is no unfinished exam.", timeout=3)
                return
            if exam is not None:
                self.push_screen(ExamScreen(exam))
                return
            # A new exam: its intro first, and the exam (and its clock) only on Enter there. Not
            # even the intro while another aml-quiz owns the unfinished exam: Enter could not start it.
            owner = trainer.progress.exam_owner()
            if owner is not None:
                self.notify(str(ExamBusyError(owner or None)), title="Exam in use", severity="error", timeout=8)
                return
            questions = trainer.exam_questions(self.count or EXAM_QUESTIONS)
            if not questions:
                self.notify("The bank has no questions for an exam.", severity="warning")
                return
            seconds = self.exam_seconds if self.exam_seconds is not None \
                else SECONDS_PER_EXAM_QUESTION * len(questions)

            def intro_closed(start: bool | None) -> None:
                if start:
                    self.begin_exam(questions, seconds)

            self.push_screen(ExamIntroScreen(questions, seconds), intro_closed)
            return
        if mode == "custom":
            def picked(choice: dict[str, Any] | None) -> None:
                if choice:
                    self.start_custom(**choice)

            self.push_screen(CustomTestPicker(self.count or PRACTICE_QUESTIONS), picked)
            return
        if mode == "drill":
            if domain is None:
                def picked_domain(chosen: str | None) -> None:
                    if chosen:
                        self.start_mode("drill", chosen)

                self.push_screen(DomainPicker(), picked_domain)
                return
            session = trainer.drill(domain, self.count or PRACTICE_QUESTIONS)
        elif mode == "practice":
            session = trainer.practice(self.count or PRACTICE_QUESTIONS)
        elif mode == "review":
            if not trainer.due():
                self.notify("Nothing is due for review.", timeout=3)
                return
            session = trainer.review(self.count)
        elif mode == "missed":
            if not trainer.progress.missed_last_time():
                self.notify("Nothing missed last time.", timeout=3)
                return
            session = trainer.missed()
        else:
            raise ValueError(f"unknown mode {mode!r}")
        self.show_session(session)

    def begin_exam(self, questions: list[Question], seconds: float) -> None:
        """A new exam of ``questions``, on screen: what its intro's Enter does."""
        from .screens.question import ExamScreen

        try:
            exam = self.trainer.start_exam(questions, seconds)
        except ExamBusyError as busy:
            self.notify(str(busy), title="Exam in use", severity="error", timeout=8)
            return
        self.push_screen(ExamScreen(exam))

    def start_custom(self, source: str, domains: list[str], types: list[str], count: int, timed: bool) -> None:
        from .screens.question import ExamScreen

        try:
            test = self.trainer.custom(source, domains, types, count, timed)
        except ExamBusyError as busy:
            self.notify(str(busy), title="Exam in use", severity="error", timeout=8)
            return
        if not test.questions:
            self.notify("No question matches that choice.", severity="warning", timeout=4)
            return
        if isinstance(test, Session):
            self.show_session(test)
        else:
            self.push_screen(ExamScreen(test))

    def show_session(self, session: Session) -> None:
        from .screens.question import QuestionScreen, ScenarioScreen

        if not session.questions:
            self.notify("No questions for this mode.", severity="warning", timeout=3)
            return
        self.push_screen(QuestionScreen(session))
        self._show_scenario_first(session.current, ScenarioScreen)

    def _show_scenario_first(self, question: Any, screen: Any) -> None:
        """A case study's first question opens on its scenario, as the exam shows it."""
        if question is not None and question.group is not None and question.group.kind == "case" \
                and question.index == 0:
            self.push_screen(screen(question))

    # ------------------------------------------------------------------------- the flow

    def answered(self, session: Session, feedback: Feedback) -> None:
        """A question of a session was answered: its feedback."""
        from .screens.feedback import FeedbackScreen

        self.switch_screen(FeedbackScreen(session, feedback))

    def next_after_feedback(self, session: Session) -> None:
        """After the feedback: the next question, or the session's results."""
        from .screens.question import QuestionScreen, ScenarioScreen
        from .screens.results import ResultsScreen

        session.advance()
        if session.done:
            self.switch_screen(ResultsScreen.for_session(session))
            return
        self.switch_screen(QuestionScreen(session))
        self._show_scenario_first(session.current, ScenarioScreen)

    def exam_finished(self, screen: Screen, result: ExamResult) -> None:
        """The exam was submitted (time up, or the learner's choice): its results in its place."""
        from .screens.results import ResultsScreen

        # Not awaited: the stack changes at once, and the exam screen cannot await its own removal.
        while self.screen is not screen and len(self.screen_stack) > 1:
            self.pop_screen()
        self.switch_screen(ResultsScreen.for_exam(result))
