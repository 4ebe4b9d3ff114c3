"""After an answer (practice, drill, missed, review): right or not, the contrast with the wrong
choice and with last time's, the explanation, why each chosen wrong option is wrong, the source,
the lab that shows it run, and on ``l`` aml-lint's verdict on the question's YAML."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Markdown, Static

from ..checks import lab_command, lint_snippet, lintable_yaml
from ..engine import Feedback, Session
from ..widgets.header import QuizHeader
from ..widgets.summary import AnswerSummary
from ..widgets.text import NumberedCode, inline
from .question import position_text, session_title


def diagnostic_line(d) -> Content:
    severity = getattr(d.severity, "name", str(d.severity)).lower()
    style = "bold $text-error" if severity == "error" else "bold $text-warning"
    line = Content.assemble((f"{d.line}:{d.column} ", "bold"), (d.code, style), f" {d.message}")
    if getattr(d, "hint", None):
        line = line + Content.assemble("\n    ", (f"→ {d.hint}", "$text-muted"))
    return line


class FeedbackScreen(Screen):
    BINDINGS = [
        Binding("enter,n", "next", "Next", id="feedback.next"),
        Binding("l", "lint", "Lint the YAML", id="feedback.lint"),
        Binding("escape", "app.home", "Home", id="feedback.home"),
    ]
    AUTO_FOCUS = "#feedback"

    def __init__(self, session: Session, feedback: Feedback) -> None:
        super().__init__()
        self.session = session
        self.feedback = feedback
        self.sub_title = session_title(session)

    def compose(self):
        feedback = self.feedback
        question = feedback.question
        yield QuizHeader()
        yield Static(position_text(question, self.session.position + 1, len(self.session.questions)),
                     id="position")
        with VerticalScroll(id="feedback"):
            if feedback.correct:
                yield Static("✓ Correct", id="verdict", classes="verdict -correct")
            else:
                yield Static("✗ Not quite", id="verdict", classes="verdict -wrong")
            yield AnswerSummary(question, feedback.response, id="summary")
            if feedback.contrast:
                yield Static(inline(feedback.contrast), id="contrast", classes="contrast")
            if feedback.previous_contrast:
                yield Static(inline(feedback.previous_contrast), id="previous", classes="contrast -previous")
            if question.type == "wrong_line" and question.yaml is not None:
                yield NumberedCode(question.yaml, {question.answer}, id="answer-code")
            yield Markdown(question.explanation, id="explanation")
            for key, text, why in feedback.chosen_wrong[1:]:
                yield Static(Content.assemble((f"{key}) ", "bold"), inline(text), ": ", inline(why)),
                             classes="why-wrong")
            yield Static(Content.assemble(("Read more (Microsoft Learn): ", "bold"), question.reference),
                         id="source", classes="source")
            command = lab_command(question)
            if command:
                steps = "\n".join(f"  {step}" for step in command.split(" && "))
                yield Static(Content.assemble(("See it run (a lab of amllab's):\n", "bold"),
                                              (steps, "$text-accent")), id="lab", classes="lab")
            yield Vertical(id="lint")
        yield Static("Enter next question · l lints the question's YAML · Esc home", classes="hint", id="hint")
        yield Footer()

    async def action_lint(self) -> None:
        question = self.feedback.question
        text = lintable_yaml(question)
        panel = self.query_one("#lint", Vertical)
        await panel.remove_children()
        if text is None:
            await panel.mount(Static("This question has no YAML to lint.", classes="lint-title"))
            return
        diagnostics = lint_snippet(text)
        title = "aml-lint on the question's YAML" + (
            " (the blank filled with the answer)" if question.type == "fill_blank" else "")
        widgets = [Static(Content.styled(title + ":", "bold"), classes="lint-title"),
                   NumberedCode(text, {d.line for d in diagnostics})]
        if diagnostics:
            widgets += [Static(diagnostic_line(d), classes="diagnostic") for d in diagnostics]
        else:
            widgets.append(Static(Content.styled("clean: no findings", "$text-success"), classes="diagnostic"))
        await panel.mount_all(widgets)
        self.call_after_refresh(panel.scroll_visible, top=True, animate=False)

    def action_next(self) -> None:
        from .question import QuestionScreen
        from .results import ResultsScreen

        session = self.session
        if not self.is_current or not session.answered:
            return  # a key queued before this screen gave way
        session.advance()
        if session.done:
            self.app.switch_screen(ResultsScreen.for_session(session))
        else:
            self.app.switch_screen(QuestionScreen(session))
