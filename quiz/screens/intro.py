"""Before a new exam: how many questions, how long, its sections in order and the keys; Enter
starts the exam (and its clock), Esc goes back with nothing saved."""

from __future__ import annotations

from collections.abc import Sequence

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..bank import Question
from ..engine import PASS_SCORE, sections_of
from ..text import minutes_text, plural
from .question import ExamScreen

# The exam's keys the intro names, in the words it uses for them.
EXAM_KEYS = [
    ("exam.next_or_review", "next"),
    ("exam.previous", "back"),
    ("exam.flag", "flag"),
    ("exam.review", "review list"),
    ("exam.scenario", "case study"),
    ("exam.pause", "pause"),
]


class ExamIntroScreen(ModalScreen[bool]):
    """Returns True to start the exam, False to go back. The exam is not created until then: going
    back leaves no exam to resume and closes no unfinished one."""

    BINDINGS = [
        Binding("enter", "dismiss(True)", "Start the exam", id="intro.start"),
        Binding("escape", "dismiss(False)", "Back", id="intro.back"),
        # A modal screen takes no keys from the app: help is bound here as well.
        Binding("question_mark", "app.help", "Help", id="intro.help"),
    ]
    AUTO_FOCUS = "#intro"

    def __init__(self, questions: Sequence[Question], seconds: float) -> None:
        super().__init__()
        self.questions = list(questions)
        self.seconds = seconds

    def compose(self):
        with VerticalScroll(id="intro", classes="dialog wide"):
            yield Static(f"Exam: {plural(len(self.questions), 'question')} · {minutes_text(self.seconds)}",
                         classes="section-title")
            yield Static(self.sections_text(), id="intro-sections")
            yield Static(f"Scored 1-1000, {PASS_SCORE} to pass, with a score per domain. The clock starts "
                         "when you press Enter and runs only while the exam is on screen: pausing stops it, "
                         "and home resumes the exam.", id="intro-scoring")
            yield Static(self.keys_text(), id="intro-keys")
            yield Static("Enter starts the exam · Esc goes back (nothing is saved)", classes="hint")
        yield Footer()

    def sections_text(self) -> Content:
        sections = sections_of(self.questions)
        lines = [Content.styled("Sections, in order" if len(sections) > 1 else "One section", "bold")]
        for number, section in enumerate(sections, 1):
            if section.kind == "series":
                what = (f"Yes/no series: {section.title}: {plural(section.size, 'proposed solution')}, "
                        "each answered once, in turn")
            elif section.kind == "case":
                what = (f"Case study: {section.title}: {plural(section.size, 'question')}; its scenario "
                        "opens first")
            else:
                what = f"{plural(section.size, 'question')}: move between them, change answers, flag them"
            lines.append(Content.assemble((f"  {number}. ", "bold"), what))
        if len(sections) > 1:
            lines.append(Content.styled("  A section left (from its review list) is closed for good.", "$text-muted"))
        return Content("\n").join(lines)

    def keys_text(self) -> Content:
        """The exam's keys as the keymap in effect has them."""
        by_id = {binding.id: binding for binding in ExamScreen.BINDINGS if isinstance(binding, Binding)}
        parts = []
        for binding_id, what in EXAM_KEYS:
            keys = self.app.keys_for(by_id[binding_id])
            shown = " / ".join(self.app.get_key_display(Binding(key, "")) for key in keys.split(","))
            parts.append(Content.assemble((shown, "bold $text-accent"), f" {what}"))
        parts.append(Content.assemble(("?", "bold $text-accent"), " every key"))
        return Content.assemble(("Keys: ", "bold"), Content(" · ").join(parts))
