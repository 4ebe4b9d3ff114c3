"""A labelled horizontal bar: readiness per domain, a score per domain.

One row (``label  ██████▌░░░░  detail``) when the widget is wide enough, else the label and the
detail above the bar, so the bars stay readable in an 80-column terminal.
"""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

_EIGHTHS = " ▏▎▍▌▋▊▉"
MIN_BAR = 12
MAX_BAR = 30


def bar(value: float, width: int) -> Content:
    """``value`` (0..1) as a bar ``width`` cells wide, in eighths of a cell."""
    value = min(1.0, max(0.0, value))
    eighths = round(value * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (_EIGHTHS[part] if part else "")
    style = "$text-success" if value >= 0.7 else "$text-warning" if value >= 0.4 else "$text-error"
    return Content.assemble((filled, style), ("░" * (width - len(filled)), "$foreground 25%"))


class Meter(Widget):
    DEFAULT_CSS = """
    Meter {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, label: str, value: float, detail: str = "", *, label_width: int = 27,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.label = label
        self.value = value
        self.detail = detail
        self.label_width = label_width

    def _one_row(self, width: int) -> bool:
        return width >= self.label_width + 2 + MIN_BAR + len(self.detail)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1 if self._one_row(width) else 2

    def render(self) -> Content:
        width = self.content_size.width
        if self._one_row(width):
            size = min(MAX_BAR, width - self.label_width - 2 - len(self.detail))
            return Content.assemble(f"{self.label:<{self.label_width}} ", bar(self.value, size), f" {self.detail}")
        label = self.label[:max(1, width - len(self.detail) - 1)]
        gap = max(1, width - len(label) - len(self.detail))
        return Content.assemble(label, " " * gap, self.detail, "\n", bar(self.value, min(MAX_BAR, width)))
