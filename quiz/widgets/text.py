"""Text for the quiz's widgets: option texts with inline `code`, YAML with line numbers.

Pure presentation: these turn a question's text into Textual ``Content`` and decide nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from textual.containers import Horizontal, HorizontalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static

from ..bank import YAML_BLOCK

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


def split_yaml(prompt: str) -> tuple[str, str | None, str]:
    """The prompt around its first ```yaml block: (markdown before, the YAML, markdown after)."""
    match = YAML_BLOCK.search(prompt)
    if match is None:
        return prompt, None, ""
    return prompt[:match.start()], match.group(1), prompt[match.end():]


def numbered(code: str, marks: Collection[int] = (), language: str = "yaml") -> Content:
    """``code`` highlighted, each line after its number; lines in ``marks`` get a marker."""
    lines = highlight(code.rstrip("\n"), language=language).split("\n")
    width = len(str(len(lines)))
    rows: list[Content] = []
    for number, line in enumerate(lines, 1):
        marked = number in marks
        gutter = Content.styled(f"{'▶' if marked else ' '}{number:>{width}} │ ",
                                "bold $text-error" if marked else "$text-muted")
        rows.append(gutter + line)
    return Content("\n").join(rows)


class NumberedCode(HorizontalScroll, can_focus=False):
    """A YAML block with line numbers (wrong-line questions are answered with the number). Long
    lines do not wrap, which would break the numbering: the block scrolls sideways instead."""

    DEFAULT_CSS = """
    NumberedCode {
        width: 1fr;
        height: auto;
        padding: 0 1;
        margin: 1 0;
        background: $boost;
        scrollbar-size-horizontal: 1;
    }
    NumberedCode > Static {
        width: auto;
        text-wrap: nowrap;
    }
    """

    def __init__(self, code: str, marks: Collection[int] = (), *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.code = code
        self.marks = marks

    def compose(self):
        yield Static(numbered(self.code, self.marks))


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
