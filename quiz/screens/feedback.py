"""After an answer (practice, drill, missed, review, custom): right or not, the question as it
was asked, the answer set against the learner's, the contrast with the wrong choice and with last
time's, the explanation, why each chosen wrong option is wrong, how the answer is known and where
to read on, the lab that shows it run, and on ``l`` aml-lint's verdict on the question's YAML."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Markdown, Static

from ..bank import Question
from ..checks import lab_command, lint_snippet, lint_targets, lintable_yaml
from ..engine import Feedback, Session
from ..text import evidence_line
from ..widgets.header import QuizHeader
from ..widgets.prompt import PromptView
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


def reading_widgets(question: Question) -> list[Widget]:
    """How the answer is known and where to read on: each source on a line of its own that never
    wraps (a URL cut in two cannot be copied or clicked whole); a long one scrolls sideways."""
    widgets: list[Widget] = [Static(Content.assemble((evidence_line(question), "$text-muted")), classes="evidence")]
    lines = [Content.styled("Read more:", "bold")] + [Content.styled(f"  {url}", f"link {url} $text-accent")
                                                       for url in question.sources]
    widgets.append(ScrollableContainer(Static(Content("\n").join(lines), classes="source"), classes="sources"))
    return widgets


def lab_widget(question: Question) -> Static | None:
    command = lab_command(question)
    if not command:
        return None
    steps = "\n".join(f"  {step}" for step in command.split(" && "))
    return Static(Content.assemble(("See it run (a lab of amllab's, run here with aml-run):\n", "bold"),
                                   (steps, "$text-accent")), id="lab", classes="lab")


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
                verdict = "✗ Not quite" + (f" ({feedback.partly})" if feedback.partly else "")
                yield Static(verdict, id="verdict", classes="verdict -wrong")
            marks = {question.answer} if question.type == "wrong_line" else ()
            yield PromptView(question, marks, id="stem")
            yield AnswerSummary(question, feedback.response, id="summary")
            if feedback.contrast:
                yield Static(inline(feedback.contrast), id="contrast", classes="contrast")
            if feedback.previous_contrast:
                yield Static(inline(feedback.previous_contrast), id="previous", classes="contrast -previous")
            yield Markdown(question.explanation, id="explanation")
            for key, text, why in feedback.chosen_wrong[1:]:
                yield Static(Content.assemble((f"{key}) ", "bold"), inline(text), ": ", inline(why)),
                             classes="why-wrong")
            yield from reading_widgets(question)
            lab = lab_widget(question)
            if lab is not None:
                yield lab
            yield Vertical(id="lint")
        hint = "Enter next question · l lints the YAML · Esc home" if lint_targets(question) else \
            "Enter next question · Esc home"
        yield Static(hint, classes="hint", id="hint")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "lint":
            return bool(lint_targets(self.feedback.question))
        return True

    def yaml_on_screen(self) -> bool:
        """Whether what ``l`` lints is the YAML the question shows as it is: its prompt's (not a
        fill-blank's, linted with the answer in the blank, nor options' YAML the options do not show)."""
        question = self.feedback.question
        return question.type != "fill_blank" and lintable_yaml(question) is not None

    async def action_lint(self) -> None:
        question = self.feedback.question
        panel = self.query_one("#lint", Vertical)
        await panel.remove_children()
        targets = lint_targets(question)
        if not targets:
            await panel.mount(Static("This question has no YAML to lint.", classes="lint-title"))
            return
        widgets: list[Static | NumberedCode] = []
        shown = self.yaml_on_screen()
        for label, text in targets:
            diagnostics = lint_snippet(text)
            if shown:
                # The YAML is the question's, on screen above: not printed twice, each finding
                # quotes its line instead.
                lines = text.splitlines()
                widgets.append(Static(Content.styled(f"aml-lint on {label}, shown above:", "bold"),
                                      classes="lint-title"))
                for d in diagnostics:
                    quoted = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
                    line = diagnostic_line(d)
                    if quoted:
                        line = line + Content.assemble("\n    ", (f"line {d.line}: {quoted}", "$text-muted"))
                    widgets.append(Static(line, classes="diagnostic"))
            else:
                widgets += [Static(Content.styled(f"aml-lint on {label}:", "bold"), classes="lint-title"),
                            NumberedCode(text, {d.line for d in diagnostics})]
                widgets += [Static(diagnostic_line(d), classes="diagnostic") for d in diagnostics]
            if not diagnostics:
                widgets.append(Static(Content.styled("clean: no findings", "$text-success"), classes="diagnostic"))
        await panel.mount_all(widgets)
        self.call_after_refresh(panel.scroll_visible, top=True, animate=False)

    def action_next(self) -> None:
        if not self.is_current or not self.session.answered:
            return  # a key queued before this screen gave way
        self.app.next_after_feedback(self.session)
