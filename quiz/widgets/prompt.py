"""A question's prompt: Markdown, with its code blocks highlighted and wrapped (never cut at the
right edge), and for a wrong-line question the YAML with line numbers, so the learner can answer
with the number."""

from __future__ import annotations

from collections.abc import Collection

from textual.containers import Vertical
from textual.widgets import Markdown

from ..bank import CODE_BLOCK, Question
from .text import CodeBlock


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
        """The prompt's text as Markdown and its code blocks as wrapped code (a wrong-line
        question's YAML numbered): nothing is cut off at the right edge."""
        prompt = self.question.prompt.strip()
        position = 0
        first_yaml = True
        for match in CODE_BLOCK.finditer(prompt):
            text = prompt[position:match.start()].strip()
            if text:
                yield Markdown(text, classes="prompt-text")
            language = match.group(1) or "yaml"
            numbered = self.question.type == "wrong_line" and language in ("yaml", "yml") and first_yaml
            first_yaml = first_yaml and not numbered
            yield CodeBlock(match.group(2), self.marks if numbered else (), language=language, numbered=numbered,
                            classes="prompt-code")
            position = match.end()
        text = prompt[position:].strip()
        if text:
            yield Markdown(text, classes="prompt-text")
