"""The header: Textual's, with a title update that tolerates its screen going away meanwhile.

Textual's Header schedules its title update when a (sub)title changes; if the screen is removed
before that update runs (an exam's countdown ticking as the exam closes), the update cannot find
the title widget and the app fails. This one lets such a late update pass.
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderTitle


class QuizHeader(Header):
    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # instead of Header's own

        async def set_title() -> None:
            try:
                self.query_one(HeaderTitle).update(self.format_title())
            except (NoScreen, NoMatches):
                pass

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)
