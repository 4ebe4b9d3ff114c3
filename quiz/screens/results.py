"""Results: an exam's score (1-1000, 700 passes) or a session's tally, the score per domain, and
the review of every answer (right, wrong, flagged); Enter on one opens it read-only with the
learner's answer, the answer, the explanation, how it is known and where to read on."""

from __future__ import annotations

from collections.abc import Sequence

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import Digits, Footer, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from ..bank import DOMAINS
from ..engine import PASS_SCORE, DomainScore, ExamResult, ReviewedAnswer, Session
from ..text import first_line
from ..widgets.header import QuizHeader
from ..widgets.meter import Meter
from ..widgets.prompt import PromptView
from ..widgets.summary import AnswerSummary
from ..widgets.text import inline
from .feedback import lab_widget, reading_widgets


class ResultsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.home", "Home", id="results.home"),
        Binding("w", "only_wrong", "Only the missed", id="results.only_wrong"),
    ]
    # The list takes the focus in on_mount, without the scroll that auto-focus makes to bring it
    # into view: the screen opens at its top, on the score.
    AUTO_FOCUS = None

    def __init__(self, *, mode: str, headline: Content, detail: str, per_domain: dict[str, DomainScore],
                 answers: Sequence[ReviewedAnswer], score: int | None = None, passed: bool | None = None) -> None:
        super().__init__()
        self.mode = mode
        self.headline = headline
        self.detail = detail
        self.per_domain = per_domain
        self.answers = list(answers)
        self.only_wrong = False
        self._follow_highlight = True
        self.score = score
        self.passed = passed
        self.sub_title = "Exam results" if mode == "exam" else "Session summary"

    @classmethod
    def for_exam(cls, result: ExamResult) -> ResultsScreen:
        verdict = ("PASS", "bold $text-success") if result.passed else ("FAIL", "bold $text-error")
        headline = Content.assemble(("Score ", "bold"), (f"{result.score} / 1000", "bold"), "  ", verdict,
                                    (f"  ({PASS_SCORE} to pass)", "$text-muted"))
        detail = f"{result.correct} of {result.total} right" + (" · time ran out" if result.timed_out else "")
        return cls(mode="exam", headline=headline, detail=detail, per_domain=result.per_domain,
                   answers=result.answers, score=result.score, passed=result.passed)

    @classmethod
    def for_session(cls, session: Session) -> ResultsScreen:
        summary = session.summary()
        answered, right = summary["answered"], summary["correct"]
        share = round(100 * right / answered) if answered else 0
        headline = Content.assemble((f"{session.mode.capitalize()} done: ", "bold"),
                                    (f"{right} of {answered} right", "bold"), f" ({share}%)")
        answers = [ReviewedAnswer(f.question, f.response, f.correct, f.parts, False) for f in session.results]
        return cls(mode=session.mode, headline=headline, detail="Every answer is saved and scheduled for review.",
                   per_domain=session.per_domain(), answers=answers)

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
            yield Static(id="answers-title", classes="section-title")
            yield OptionList(id="answers")
        yield Footer()

    def on_mount(self) -> None:
        self.show_answers()
        self.set_focus(self.query_one("#answers", OptionList), scroll_visible=False)

    def show_answers(self) -> None:
        shown = [(i, a) for i, a in enumerate(self.answers) if not (self.only_wrong and a.correct)]
        missed = sum(not a.correct for a in self.answers)
        which = "the missed" if self.only_wrong else "every answer"
        self.query_one("#answers-title", Static).update(
            f"Review {which} ({missed} missed of {len(self.answers)}): Enter opens one · "
            f"w {'shows all' if self.only_wrong else 'shows only the missed'}")
        options = self.query_one("#answers", OptionList)
        options.clear_options()
        options.add_options(Option(self._row(number, answer), id=str(number)) for number, answer in shown)
        if shown:
            # Not followed: the list starts on its first row without scrolling the score away.
            self._follow_highlight = False
            options.highlighted = 0

    @staticmethod
    def _row(number: int, answer: ReviewedAnswer) -> Content:
        mark = ("✓ ", "bold $text-success") if answer.correct else ("✗ ", "bold $text-error")
        return Content.assemble((f"{number + 1:>2} ", "bold"), mark, ("⚑ " if answer.flagged else "  ", "$text-warning"),
                                inline(first_line(answer.question.prompt, 84)).stylize("$text-muted"))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """The page scrolls to keep the highlighted row in sight: the list is as long as its rows
        (one line each) and the page, not the list, scrolls."""
        event.stop()
        if not self._follow_highlight:
            self._follow_highlight = True
            return
        answers = event.option_list
        row = answers.virtual_region.y + answers.gutter.top + event.option_index
        self.query_one("#results", VerticalScroll).scroll_to_region(Region(0, row, 1, 1), animate=False)

    def action_only_wrong(self) -> None:
        self.only_wrong = not self.only_wrong
        self.show_answers()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.app.push_screen(QuestionDetailScreen(self.answers[int(event.option.id or 0)]))


class QuestionDetailScreen(Screen):
    """A question, read-only, with the learner's response, the answer and why."""

    BINDINGS = [Binding("escape,q", "app.close", "Back", id="detail.back")]
    AUTO_FOCUS = "#detail"

    def __init__(self, answer: ReviewedAnswer) -> None:
        super().__init__()
        self.answer = answer
        self.sub_title = "Your answer, reviewed"

    def compose(self):
        answer = self.answer
        question = answer.question
        yield QuizHeader()
        verdict = ("✓ right", "bold $text-success") if answer.correct else ("✗ missed", "bold $text-error")
        yield Static(Content.assemble(verdict, " · ", DOMAINS[question.domain][0], " · ",
                                      (question.label, "$text-muted")), id="position")
        with VerticalScroll(id="detail"):
            if question.group is not None and question.group.kind == "case":
                yield Static(Content.styled(f"Case study: {question.group.title}", "bold"), classes="section-title")
                yield Markdown(question.group.text, classes="scenario")
            yield PromptView(question, {question.answer} if question.type == "wrong_line" else ())
            yield AnswerSummary(question, answer.response)
            yield Markdown(question.explanation, id="explanation")
            for key, why in question.wrong.items():
                yield Static(Content.assemble((f"{key}) ", "bold"), inline(question.options.get(key, "")), ": ",
                                              inline(why)), classes="why-wrong")
            yield from reading_widgets(question)
            lab = lab_widget(question)
            if lab is not None:
                yield lab
        yield Footer()
