"""Text for the quiz's widgets: option texts with inline `code`, YAML with line numbers.

Pure presentation: these turn a question's text into Textual ``Content`` and decide nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static



_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_FENCE = re.compile(r"^\s*```(\w*)[ \t]*\n(.*?)```\s*$", re.DOTALL)

CODE_STYLE = "$text-accent"


def inline(text: str) -> Content:
    """One option's text: `code` and **bold** styled; a fenced block highlighted as code."""
    fence = _FENCE.match(text)
    if fence:
        return highlight(fence.group(2).rstrip("\n"), language=fence.group(1) or "yaml")
    parts: list[Content] = []
    position = 0
    for match in _CODE.finditer(text):
        parts.append(_bold(text[position:match.start()]))
        parts.append(Content.styled(match.group(1), CODE_STYLE))
        position = match.end()
    parts.append(_bold(text[position:]))
    return Content("").join(parts)


def _bold(text: str) -> Content:
    parts: list[Content] = []
    position = 0
    for match in _BOLD.finditer(text):
        parts.append(Content(text[position:match.start()]))
        parts.append(Content.styled(match.group(1), "bold"))
        position = match.end()
    parts.append(Content(text[position:]))
    return Content("").join(parts)


class CodeBlock(Vertical, can_focus=False):
    """A code block (YAML, Python) that never hides a character: each line wraps under itself,
    after its gutter, so a long line is read whole at 80 columns. With ``numbered`` the gutter
    holds the line's number (wrong-line questions are answered with it); lines in ``marks`` are
    marked."""

    DEFAULT_CSS = """
    CodeBlock {
        width: 1fr;
        height: auto;
        padding: 0 1;
        margin: 1 0;
        background: $boost;
    }
    CodeBlock > Hanging > .hanging-label {
        padding: 0;
    }
    CodeBlock > Hanging > .hanging-text {
        text-wrap: wrap;
        text-overflow: fold;
    }
    """

    def __init__(self, code: str, marks: Collection[int] = (), *, language: str = "yaml", numbered: bool = True,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.code = code
        self.marks = marks
        self.language = language
        self.numbered = numbered

    def compose(self):
        lines = highlight(self.code.rstrip("\n"), language=self.language).split("\n")
        width = len(str(len(lines)))
        for number, line in enumerate(lines, 1):
            marked = number in self.marks
            if self.numbered:
                gutter = Content.styled(f"{'▶' if marked else ' '}{number:>{width}} │ ",
                                        "bold $text-error" if marked else "$text-muted")
            else:
                gutter = Content(" ")
            yield Hanging(gutter, line, classes="code-line")


# The YAML of a wrong-line question and of the lint output: numbered.
NumberedCode = CodeBlock


class Hanging(Horizontal):
    """A label and a text that wraps under itself, not under the label."""

    DEFAULT_CSS = """
    Hanging {
        width: 1fr;
        height: auto;
    }
    Hanging > .hanging-label {
        width: auto;
        padding: 0 1 0 0;
    }
    Hanging > .hanging-text {
        width: 1fr;
    }
    """

    def __init__(self, label: Content | str, text: Content | str, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._label = label
        self._text = text

    def compose(self):
        yield Static(self._label, classes="hanging-label")
        yield Static(self._text, classes="hanging-text")

    def set(self, label: Content | str, text: Content | str | None = None) -> None:
        self._label = label
        if text is not None:
            self._text = text
        if self.is_mounted:
            self.query_one(".hanging-label", Static).update(label)
            if text is not None:
                self.query_one(".hanging-text", Static).update(text)
