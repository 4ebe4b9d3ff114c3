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


def _row(mark: str, style: str, picked: str, label: str, text: str) -> Hanging:
    return Hanging(Content.assemble((f"{mark}{picked}", style), (label, "bold")), inline(text),
                   classes="option-mark")


def answer_rows(question: Question, response: Any) -> list[Hanging]:
    """The options marked (✓ right, ✗ chosen wrong, ▸ chosen), then the learner's answer and,
    when it is wrong, the answer. Where the options already show the texts, the two answer lines
    give only their keys, so no text is printed three times."""
    rows: list[Hanging] = []
    if question.type in ("single", "multiple", "fill_blank", "build_list"):
        chosen = chosen_keys(question, response)
        right = question.correct_keys
        for key, text in question.options.items():
            if key in right:
                mark, style = ("✓", "bold $text-success")
            elif key in chosen:
                mark, style = ("✗", "bold $text-error")
            else:
                mark, style = (" ", "")
            rows.append(_row(mark, style, "▸" if key in chosen else " ", f"{key})", text))
    elif question.type == "multi_blank":
        given = response if isinstance(response, list) else []
        for index, blank in enumerate(question.blanks):
            key = given[index] if index < len(given) else None
            ok = key == blank.answer
            mark, style = ("✓", "bold $text-success") if ok else ("✗", "bold $text-error")
            text = f"{blank.options.get(str(key), 'no answer')}" + ("" if ok else f" — the answer: {blank.answer}) "
                                                                       f"{blank.options[blank.answer]}")
            rows.append(_row(mark, style, " ", f"[{blank.label}]", text))
    if rows and question.type in ("multiple", "build_list", "multi_blank"):
        ordered = question.type != "multiple"  # a set reads best in the order the options show
        keys = chosen_keys(question, response)
        right = question.correct_keys
        yours = inline(", ".join(keys if ordered else sorted(keys)) or "no answer")
        expected = inline(", ".join(right if ordered else sorted(right)))
    else:
        yours = inline(question.describe(response))
        expected = inline(question.answer_text())
    gap = " -gap" if rows else ""
    if question.grade(response):
        rows.append(Hanging(Content.styled("Your answer:", "bold"),
                            yours + Content.styled(" ✓", "bold $text-success"), classes="answer-line" + gap))
    else:
        rows.append(Hanging(Content.styled("Your answer:", "bold"),
                            yours + Content.styled(" ✗", "bold $text-error"), classes="answer-line" + gap))
        rows.append(Hanging(Content.styled("The answer: ", "bold"), expected, classes="answer-line"))
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
