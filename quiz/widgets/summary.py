"""A question's answer set against the learner's: the options marked right (✓) and chosen wrong
(✗), or the two values side by side. Shown after an answer and for a missed question."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.content import Content

from ..bank import Question
from .text import Hanging, inline


def chosen_keys(question: Question, response: Any) -> list[str]:
    if response is None:
        return []
    if isinstance(response, list):
        return [str(k) for k in response]
    return [str(response)]


def answer_rows(question: Question, response: Any) -> list[Hanging]:
    rows: list[Hanging] = []
    if question.type in ("single", "multiple", "fill_blank"):
        chosen = chosen_keys(question, response)
        right = question.correct_keys
        for key, text in question.options.items():
            if key in right:
                mark, style = ("✓", "bold $text-success")
            elif key in chosen:
                mark, style = ("✗", "bold $text-error")
            else:
                mark, style = (" ", "")
            picked = "▸" if key in chosen else " "
            rows.append(Hanging(Content.assemble((f"{mark}{picked}", style), (f"{key})", "bold")), inline(text),
                                classes="option-mark"))
    yours = inline(question.describe(response))
    gap = " -gap" if rows else ""
    if question.grade(response):
        rows.append(Hanging(Content.styled("Your answer:", "bold"),
                            yours + Content.styled(" ✓", "bold $text-success"), classes="answer-line" + gap))
    else:
        rows.append(Hanging(Content.styled("Your answer:", "bold"),
                            yours + Content.styled(" ✗", "bold $text-error"), classes="answer-line" + gap))
        rows.append(Hanging(Content.styled("The answer: ", "bold"), inline(question.answer_text()),
                            classes="answer-line"))
    return rows


class AnswerSummary(Vertical):
    DEFAULT_CSS = """
    AnswerSummary {
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
    }
    AnswerSummary > .-gap {
        margin: 1 0 0 0;
    }
    """

    def __init__(self, question: Question, response: Any, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question = question
        self.response = response

    def compose(self):
        yield from answer_rows(self.question, self.response)
