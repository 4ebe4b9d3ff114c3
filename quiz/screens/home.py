"""The home screen: the modes, readiness per domain, the cards due, and an exam to resume."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Checkbox, Footer, Input, OptionList, RadioSet, SelectionList, Static
from textual.widgets.option_list import Option

from ..bank import DOMAINS, TYPES, WEIGHTS_NOTE
from ..engine import CUSTOM_SOURCES, EXAM_QUESTIONS, PRACTICE_QUESTIONS, percent
from ..text import clock_text, plural
from ..widgets.header import QuizHeader
from ..widgets.meter import Meter
from ..widgets.ticks import MarkedCheckbox, MarkedRadioButton, MarkedSelectionList

READINESS_TITLE = "readiness: recall expected in a week"


class HomeScreen(Screen):
    """Pick a mode with its key or the list; the right side shows where the learner stands."""

    BINDINGS = [
        Binding("p", "start('practice')", "Practice", id="home.practice"),
        Binding("e", "start('exam')", "Exam", id="home.exam"),
        Binding("v", "start('review')", "Review", id="home.review"),
        Binding("d", "start('drill')", "Drill", id="home.drill", show=False),
        Binding("m", "start('missed')", "Missed", id="home.missed", show=False),
        Binding("t", "start('custom')", "Custom test", id="home.custom", show=False),
        Binding("s", "start('stats')", "Stats", id="home.stats", show=False),
        Binding("c", "start('resume')", "Resume exam", id="home.resume"),
        Binding("q", "app.quit", "Quit", id="home.quit", show=False),
    ]
    AUTO_FOCUS = "#modes"
    SUB_TITLE = "Azure ML v2 job specification"

    def compose(self):
        yield QuizHeader()
        with Horizontal(id="home"):
            with Vertical(id="home-left"):
                yield Static("Modes", classes="section-title")
                yield OptionList(id="modes")
            with VerticalScroll(id="home-right"):
                yield Static(READINESS_TITLE, classes="section-title")
                yield Vertical(id="readiness")
                yield Static(id="due")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_state()

    def on_screen_resume(self) -> None:
        self.refresh_state()

    def refresh_state(self) -> None:
        """Read the trainer again: readiness, cards due, an unfinished exam."""
        trainer = self.app.trainer
        count = self.app.count
        due = len(trainer.due())
        unfinished = trainer.unfinished_exam()
        self._unfinished = unfinished is not None
        options: list[Option] = []
        if unfinished is not None:
            answered = sum(1 for item in unfinished.review_items() if item.answered)
            left = f"{clock_text(unfinished.remaining)} left" if not unfinished.expired else "time is up"
            owner = trainer.progress.exam_owner()
            if owner is not None:
                left = f"open in another aml-quiz{f' (pid {owner})' if owner else ''}"
            options.append(_mode("resume", "c", "Resume", f"{answered}/{len(unfinished.questions)} answered, {left}"))
        options += [
            _mode("practice", "p", "Practice", f"{count or PRACTICE_QUESTIONS} questions, feedback"),
            _mode("exam", "e", "Exam", f"{count or EXAM_QUESTIONS} timed questions, /1000"),
            _mode("review", "v", "Review", f"{plural(due, 'card')} due"),
            _mode("drill", "d", "Drill", "one domain"),
            _mode("missed", "m", "Missed", "wrong last time"),
            _mode("custom", "t", "Custom", "pick what to practise"),
            _mode("stats", "s", "Stats", "streak, activity"),
            _mode("help", "?", "Help", "the keys"),
        ]
        modes = self.query_one("#modes", OptionList)
        highlighted = modes.highlighted
        modes.clear_options()
        modes.add_options(options)
        modes.highlighted = 0 if highlighted is None else min(highlighted, len(options) - 1)
        readiness = self.query_one("#readiness", Vertical)
        readiness.remove_children()
        readiness.mount_all(Meter(DOMAINS[d][0], value, f"{percent(value):>3}%")
                            for d, value in trainer.readiness().items())
        self.query_one("#due", Static).update(
            f"{plural(len(trainer.bank), 'question')} in the bank · {plural(due, 'card')} due for review\n\n"
            f"{WEIGHTS_NOTE}")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start" and parameters == ("resume",):
            return getattr(self, "_unfinished", False)
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.action_start(event.option.id)

    def action_start(self, mode: str) -> None:
        self.app.start_mode(mode)


def _mode(mode: str, key: str, name: str, detail: str) -> Option:
    prompt = Content.assemble((f"{key} ", "bold $text-accent"), (f"{name:<9}", "bold"), (detail, "$text-muted"))
    return Option(prompt, id=mode)


class DomainPicker(ModalScreen[str | None]):
    """Drill: which domain."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back", id="picker.back"),
                # A modal screen takes no keys from the app: help is bound here as well.
                Binding("question_mark", "app.help", "Help", id="picker.help")]
    AUTO_FOCUS = "#domains"

    def compose(self):
        with Vertical(id="picker", classes="dialog"):
            yield Static("Drill which domain?", classes="section-title")
            yield OptionList(*(Option(Content.assemble((f"{i} ", "bold $text-accent"), title,
                                                       (f"  ({domain})", "$text-muted")), id=domain)
                               for i, (domain, (title, _)) in enumerate(DOMAINS.items(), 1)), id="domains")
            yield Static(f"Enter or 1-{len(DOMAINS)} picks · Esc goes back", classes="hint")

    def on_key(self, event) -> None:
        if event.key.isdigit() and 1 <= int(event.key) <= len(DOMAINS) and self.is_current:
            event.stop()
            self.dismiss(list(DOMAINS)[int(event.key) - 1])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.is_current:
            self.dismiss(event.option.id)


class CustomTestPicker(ModalScreen[dict | None]):
    """A custom test: which questions (all, flagged, missed, unseen), which domains and types (none
    ticked: all), how many, practised or timed. Returns the trainer's ``custom`` arguments."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back", id="custom.back"),
                Binding("question_mark", "app.help", "Help", id="custom.help")]
    AUTO_FOCUS = "#custom-source"
    SOURCES = {"all": "the whole bank", "flagged": "flagged in an exam", "missed": "wrong last time",
               "unseen": "not met yet"}

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def compose(self):
        with VerticalScroll(id="custom", classes="dialog"):
            yield Static("Custom test", classes="section-title")
            with RadioSet(id="custom-source"):
                for index, source in enumerate(CUSTOM_SOURCES):
                    yield MarkedRadioButton(f"{source}: {self.SOURCES[source]}", value=index == 0, id=f"source-{source}")
            yield Static("Domains (none ticked: every domain)", classes="hint")
            yield MarkedSelectionList(*((title, domain) for domain, (title, _) in DOMAINS.items()), id="custom-domains")
            yield Static("Types (none ticked: every type)", classes="hint")
            yield MarkedSelectionList(*((record.label, name) for name, record in TYPES.items()), id="custom-types")
            yield Input(str(self.count), placeholder="how many questions", restrict=r"[0-9]*", id="custom-count")
            yield MarkedCheckbox("Timed and scored as an exam", id="custom-timed")
            yield Button("Start", id="custom-start", variant="primary")
            yield Static("Tab moves · space ticks · Enter on Start begins · Esc back", classes="hint")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.start()

    def start(self) -> None:
        if not self.is_current:
            return
        text = self.query_one("#custom-count", Input).value.strip()
        if not text.isdigit() or int(text) < 1:
            self.notify("how many questions: a whole number, at least 1", severity="warning", timeout=3)
            return
        pressed = self.query_one("#custom-source", RadioSet).pressed_button
        source = (pressed.id or "source-all").removeprefix("source-") if pressed is not None else "all"
        self.dismiss({"source": source,
                      "domains": list(self.query_one("#custom-domains", SelectionList).selected),
                      "types": list(self.query_one("#custom-types", SelectionList).selected),
                      "count": int(text), "timed": self.query_one("#custom-timed", Checkbox).value})
