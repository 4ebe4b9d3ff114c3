"""The custom test's radio buttons, checkbox and ticked lists with a mark that shows the choice
without colour: Textual's draw the same block chosen or not and tell them apart by colour only,
which a monochrome terminal, a colour-blind learner or a screen reader loses."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, RadioButton, SelectionList
from textual.widgets._toggle_button import ToggleButton

CHOSEN = "●"  # a radio button on
TICKED = "X"  # a box ticked
EMPTY = " "


class MarkedRadioButton(RadioButton):
    """A radio button whose mark is filled when it is on, empty when off."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 (Textual's name for the mark)
        return CHOSEN if self.value else EMPTY


class MarkedCheckbox(Checkbox):
    """A checkbox with an X when ticked, empty when not."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802
        return TICKED if self.value else EMPTY


class MarkedSelectionList(SelectionList):
    """A selection list whose boxes hold an X when ticked and nothing when not."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        index = self.scroll_offset.y + y
        if index >= self.option_count or self.get_option_at_index(index).value in self.selected:
            return strip
        segments = list(strip)
        # Textual draws the box as three segments, left edge, mark, right edge, before the prompt.
        for position, segment in enumerate(segments[:3]):
            if segment.text == ToggleButton.BUTTON_INNER:
                segments[position] = Segment(EMPTY, segment.style, segment.control)
                return Strip(segments, strip.cell_length)
        return strip
