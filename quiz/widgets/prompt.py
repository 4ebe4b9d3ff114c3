"""A question's prompt: Markdown (its ```yaml blocks highlighted by Textual's Markdown), and for
a wrong-line question the YAML with line numbers, so the learner can answer with the number."""

from __future__ import annotations

from collections.abc import Collection

from textual.containers import Vertical
from textual.widgets import Markdown

from ..bank import Question
from .text import NumberedCode, split_yaml


class PromptView(Vertical):
    DEFAULT_CSS = """
    PromptView {
        height: auto;
        width: 1fr;
    }
    PromptView Markdown {
        margin: 0;
        padding: 0;
    }
    """

    def __init__(self, question: Question, marks: Collection[int] = (), *, id: str | None = None) -> None:
        super().__init__(id=id, classes="prompt")
        self.question = question
        self.marks = marks

    def compose(self):
        question = self.question
        if question.type != "wrong_line":
            yield Markdown(question.prompt.strip(), classes="prompt-text")
            return
        before, code, after = split_yaml(question.prompt)
        if before.strip():
            yield Markdown(before.strip(), classes="prompt-text")
        if code is not None:
            yield NumberedCode(code, self.marks, classes="prompt-code")
        if after.strip():
            yield Markdown(after.strip(), classes="prompt-text")
