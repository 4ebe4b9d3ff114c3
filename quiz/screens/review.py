"""The exam's review list (every question: answered or not, flagged or not, in a section left
behind or not), where the learner goes to a question, leaves a section for the next, or submits;
and the yes/no confirmation asked before anything that cannot be undone."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, OptionList, Static
from textual.widgets.option_list import Option

from ..engine import ExamSession
from ..text import clock_text, first_line, plural
from ..widgets.text import inline

SUBMIT = "submit"
ANSWERED = "●"
LEAVE_SECTION = "leave-section"


class ExamReviewScreen(ModalScreen[int | str | None]):
    """Returns the index of the question to go to, ``"submit"``, ``"leave-section"``, or None
    (back). Questions of other sections are listed, marked locked, and cannot be opened."""

    BINDINGS = [
        Binding("s", "submit", "Submit exam", id="review.submit"),
        Binding("x", "leave", "Leave section", id="review.leave"),
        Binding("escape", "dismiss(None)", "Back", id="review.back"),
        # A modal screen takes no keys from the app: help is bound here as well.
        Binding("question_mark", "app.help", "Help", id="review.help"),
    ]
    AUTO_FOCUS = "#review-list"

    def __init__(self, exam: ExamSession) -> None:
        super().__init__()
        self.exam = exam

    def compose(self):
        exam = self.exam
        options = []
        for item in exam.review_items():
            style = "$text-success" if item.answered and not item.locked else "$text-muted"
            row = Content.assemble(
                # ● for answered: ✓ says "right" everywhere else, and nothing is graded before submit.
                (f"{item.index + 1:>2} ", "bold"), (f"{ANSWERED} " if item.answered else "· ", style),
                ("⊘ " if item.locked else "  ", "$text-muted"),
                ("⚑ " if item.flagged else "  ", "bold $text-warning"),
                (f"{item.question.domain:<12} ", "$text-muted"),
                inline(first_line(item.question.prompt, 100)).stylize("$text-muted") if item.locked
                else inline(first_line(item.question.prompt, 100)))
            options.append(Option(row, id=str(item.index), disabled=item.locked))
        with Vertical(id="review", classes="dialog"):
            yield Static(id="review-title", classes="section-title")
            yield OptionList(*options, id="review-list")
            yield Static(self.hint_text(), id="review-hint", classes="hint")
        yield Footer()

    def hint_text(self) -> str:
        end = "s submits" if self.exam.last_section else "x leaves this section (no coming back)"
        return f"{ANSWERED} answered ⚑ flagged ⊘ another section · Enter goes there · {end} · Esc back"

    def on_mount(self) -> None:
        self.query_one("#review-list", OptionList).highlighted = self.exam.position
        self.show_title()
        self.set_interval(self.app.tick_seconds, self.show_title)

    def show_title(self) -> None:
        exam = self.exam
        items = exam.review_items()
        answered = sum(item.answered for item in items)
        flagged = sum(item.flagged for item in items)
        section = f" · section {exam.section_index + 1} of {len(exam.sections)}" if len(exam.sections) > 1 else ""
        self.query_one("#review-title", Static).update(
            f"Review: {plural(len(items), 'question')} · {answered} answered · {flagged} flagged{section} · "
            f"{clock_text(exam.remaining)} left")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit":
            return self.exam.last_section
        if action == "leave":
            return not self.exam.last_section
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.is_current:
            self.dismiss(int(event.option.id or 0))

    def action_submit(self) -> None:
        if not self.is_current or not self.exam.last_section:
            return
        unanswered = self.exam.unanswered
        if not unanswered:
            self.dismiss(SUBMIT)
            return

        def confirmed(yes: bool | None) -> None:
            if yes and self.is_current:
                self.dismiss(SUBMIT)

        self.app.push_screen(ConfirmScreen(
            f"{plural(unanswered, 'question')} unanswered (scored as wrong). Submit anyway?"), confirmed)

    def action_leave(self) -> None:
        if not self.is_current or self.exam.last_section:
            return
        unanswered = self.exam.unanswered_in_section()
        warning = f"{plural(unanswered, 'question')} of it unanswered (scored as wrong). " if unanswered else ""

        def confirmed(yes: bool | None) -> None:
            if yes and self.is_current:
                self.dismiss(LEAVE_SECTION)

        self.app.push_screen(ConfirmScreen(f"Leave this section? {warning}You cannot come back to it.",
                                           yes="Yes, leave it (y)"), confirmed)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; No has the focus (Enter or Esc keeps things as they are)."""

    BINDINGS = [
        Binding("y", "dismiss(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "dismiss(False)", "No", id="confirm.no"),
        # A modal screen takes no keys from the app: help is bound here as well.
        Binding("question_mark", "app.help", "Help", id="confirm.help"),
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
