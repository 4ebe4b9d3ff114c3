"""Results: an exam's score (1-1000, 700 passes) or a session's tally, the score per domain, the
missed questions; Enter on a missed question opens it read-only with its answer and explanation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Digits, Footer, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from ..bank import DOMAINS, Question
from ..engine import PASS_SCORE, DomainScore, ExamResult, Session
from ..widgets.header import QuizHeader
from ..widgets.meter import Meter
from ..widgets.prompt import PromptView
from ..widgets.summary import AnswerSummary
from ..widgets.text import inline
from .question import TYPE_NAMES
from .review import _first_line


class ResultsScreen(Screen):
    BINDINGS = [Binding("escape", "app.home", "Home", id="results.home")]
    AUTO_FOCUS = "#missed"

    def __init__(self, *, mode: str, headline: Content, detail: str, per_domain: dict[str, DomainScore],
                 missed: Sequence[tuple[Question, Any]], score: int | None = None, passed: bool | None = None) -> None:
        super().__init__()
        self.mode = mode
        self.headline = headline
        self.detail = detail
        self.per_domain = per_domain
        self.missed = list(missed)
        self.score = score
        self.passed = passed
        self.sub_title = "Exam results" if mode == "exam" else "Session summary"

    @classmethod
    def for_exam(cls, result: ExamResult) -> ResultsScreen:
        verdict = ("PASS", "bold $text-success") if result.passed else ("FAIL", "bold $text-error")
        headline = Content.assemble(("Score ", "bold"), (f"{result.score} / 1000", "bold"), "  ", verdict,
                                    (f"  ({PASS_SCORE} to pass)", "$text-muted"))
        detail = f"{result.correct} of {result.total} right" + (" · time ran out" if result.timed_out else "")
        missed = [(q, result.responses.get(q.id)) for q in result.missed]
        return cls(mode="exam", headline=headline, detail=detail, per_domain=result.per_domain, missed=missed,
                   score=result.score, passed=result.passed)

    @classmethod
    def for_session(cls, session: Session) -> ResultsScreen:
        summary = session.summary()
        answered, right = summary["answered"], summary["correct"]
        share = round(100 * right / answered) if answered else 0
        headline = Content.assemble((f"{session.mode.capitalize()} done: ", "bold"),
                                    (f"{right} of {answered} right", "bold"), f" ({share}%)")
        missed = [(f.question, f.response) for f in session.results if not f.correct]
        return cls(mode=session.mode, headline=headline, detail="Every answer is saved and scheduled for review.",
                   per_domain=session.per_domain(), missed=missed)

    def compose(self):
        yield QuizHeader()
        with VerticalScroll(id="results"):
            if self.score is not None:
                yield Digits(str(self.score), id="score", classes="-pass" if self.passed else "-fail")
            yield Static(self.headline, id="headline")
            yield Static(self.detail, id="result-detail", classes="hint")
            yield Static("By domain", classes="section-title")
            with Vertical(id="per-domain"):
                for domain, score in self.per_domain.items():
                    yield Meter(DOMAINS[domain][0], score.percent / 100,
                                f"{score.correct}/{score.total} {score.percent:>3}%")
            if self.missed:
                yield Static(f"Missed ({len(self.missed)}): Enter opens one", classes="section-title")
                yield OptionList(*(Option(Content.assemble((f"{q.id}  ", "bold"),
                                                           inline(_first_line(q.prompt, 100)).stylize("$text-muted")), id=str(i))
                                   for i, (q, _) in enumerate(self.missed)), id="missed")
            else:
                yield Static("Nothing missed.", classes="section-title")
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        question, response = self.missed[int(event.option.id or 0)]
        self.app.push_screen(QuestionDetailScreen(question, response))


class QuestionDetailScreen(Screen):
    """A question, read-only, with the learner's response, the answer and why."""

    BINDINGS = [Binding("escape,q", "app.close", "Back", id="detail.back")]
    AUTO_FOCUS = "#detail"

    def __init__(self, question: Question, response: Any) -> None:
        super().__init__()
        self.question = question
        self.response = response
        self.sub_title = "A missed question"

    def compose(self):
        question = self.question
        yield QuizHeader()
        yield Static(Content.assemble((question.id, "bold"), " · ", DOMAINS[question.domain][0], " · ",
                                      (TYPE_NAMES[question.type], "$text-muted")), id="position")
        with VerticalScroll(id="detail"):
            yield PromptView(question, {question.answer} if question.type == "wrong_line" else ())
            yield AnswerSummary(question, self.response)
            yield Markdown(question.explanation, id="explanation")
            for key, why in question.wrong.items():
                yield Static(Content.assemble((f"{key}) ", "bold"), inline(question.options.get(key, "")), ": ",
                                              inline(why)), classes="why-wrong")
            yield Static(Content.assemble(("Read more (Microsoft Learn): ", "bold"), question.reference),
                         classes="source")
        yield Footer()
