"""The exam's review list (every question, answered or not, flagged or not) and the confirmation
before submitting with questions unanswered."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from ..engine import ExamSession
from ..widgets.text import inline
from .home import clock_text

SUBMIT = "submit"


def _first_line(markdown: str, width: int = 60) -> str:
    for line in markdown.strip().splitlines():
        line = line.strip().strip("#").strip()
        if line and not line.startswith("```"):
            return line if len(line) <= width else line[:width - 1] + "…"
    return ""


class ExamReviewScreen(ModalScreen[int | str | None]):
    """Returns the index of the question to go to, ``"submit"``, or None (back)."""

    BINDINGS = [
        Binding("s", "submit", "Submit exam", id="review.submit"),
        Binding("escape", "dismiss(None)", "Back", id="review.back"),
    ]
    AUTO_FOCUS = "#review-list"

    def __init__(self, exam: ExamSession) -> None:
        super().__init__()
        self.exam = exam

    def compose(self):
        exam = self.exam
        options = []
        for item in exam.review_items():
            row = Content.assemble(
                (f"{item.index + 1:>2} ", "bold"),
                ("✓ " if item.answered else "· ", "$text-success" if item.answered else "$text-muted"),
                ("⚑ " if item.flagged else "  ", "bold $text-warning"),
                (f"{item.question.domain:<12} ", "$text-muted"),
                inline(_first_line(item.question.prompt, 100)))
            options.append(Option(row, id=str(item.index)))
        with Vertical(id="review", classes="dialog"):
            yield Static(id="review-title", classes="section-title")
            yield OptionList(*options, id="review-list")
            yield Static("✓ answered ⚑ flagged · Enter goes there · s submits · Esc back", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#review-list", OptionList).highlighted = self.exam.position
        self.show_title()
        self.set_interval(self.app.tick_seconds, self.show_title)

    def show_title(self) -> None:
        exam = self.exam
        items = exam.review_items()
        answered = sum(item.answered for item in items)
        flagged = sum(item.flagged for item in items)
        self.query_one("#review-title", Static).update(
            f"Review: {len(items)} questions · {answered} answered · {flagged} flagged · "
            f"{clock_text(exam.remaining)} left")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.is_current:
            self.dismiss(int(event.option.id or 0))

    def action_submit(self) -> None:
        if not self.is_current:
            return
        unanswered = self.exam.unanswered
        if not unanswered:
            self.dismiss(SUBMIT)
            return

        def confirmed(yes: bool | None) -> None:
            if yes and self.is_current:
                self.dismiss(SUBMIT)

        self.app.push_screen(ConfirmScreen(
            f"{unanswered} question{'' if unanswered == 1 else 's'} unanswered (scored as wrong). Submit anyway?"),
            confirmed)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; No has the focus (Enter or Esc keeps things as they are)."""

    BINDINGS = [
        Binding("y", "dismiss(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "dismiss(False)", "No", id="confirm.no"),
    ]
    AUTO_FOCUS = "#no"

    def __init__(self, question: str | Content, yes: str = "Yes, submit (y)", title: str | None = None,
                 wide: bool = False) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.title = title
        self.wide = wide  # room for a path

    def compose(self):
        with Vertical(id="confirm", classes="dialog wide" if self.wide else "dialog"):
            if self.title:
                yield Static(self.title, id="confirm-title", classes="section-title")
            yield Static(self.question, id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.yes, id="yes", variant="error")
                yield Button("No (n)", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.is_current:
            self.dismiss(event.button.id == "yes")
