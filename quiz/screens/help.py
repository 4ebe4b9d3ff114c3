"""Help: every key, screen by screen, read from the screens' bindings and the keymap in effect
(so a remapped key shows as remapped), with the binding ids a keymap uses."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..widgets.header import QuizHeader
from .feedback import FeedbackScreen
from .home import CustomTestPicker, DomainPicker, HomeScreen
from .question import ExamScreen, QuestionScreen, ScenarioScreen
from .results import QuestionDetailScreen, ResultsScreen
from .review import ConfirmScreen, ExamReviewScreen
from .stats import StatsScreen

OPTION_KEYS = [
    ("1–9 / a–h", "choose an option (single, fill the blank)"),
    ("1–9 / a–h, space", "toggle an option (multiple choice: as many as asked)"),
    ("1–9 / a–h", "next item of an ordering or a list to build; backspace undoes"),
    ("y / n", "yes or no (a proposed solution)"),
    ("1–9 / a–f", "complete the code: fill the blank at ▸, then ▸ moves on; ↑/↓ move ▸"),
    ("↑ / ↓", "move the option cursor (space picks)"),
    ("digits", "a wrong line's number, or a number"),
    ("shift+↑ / shift+↓", "scroll the question a little (PgUp / PgDn a page)"),
]
SECTIONS = [
    ("Home", HomeScreen),
    ("Drill: pick a domain", DomainPicker),
    ("Custom test", CustomTestPicker),
    ("A question (practice, drill, missed, review)", QuestionScreen),
    ("Exam (f flags, c shows a case study: an option f or c is chosen with its digit)", ExamScreen),
    ("A case study's scenario", ScenarioScreen),
    ("After an answer", FeedbackScreen),
    ("Exam review list", ExamReviewScreen),
    ("Submit with questions unanswered?", ConfirmScreen),
    ("Results", ResultsScreen),
    ("An answer, reviewed", QuestionDetailScreen),
    ("Stats", StatsScreen),
]


class HelpScreen(Screen):
    BINDINGS = [Binding("escape,q,question_mark", "app.close", "Back", id="help.back")]
    AUTO_FOCUS = "#help"
    SUB_TITLE = "Keys"

    def compose(self):
        yield QuizHeader()
        with VerticalScroll(id="help"):
            yield Static(self.keys_text(), id="keys")
        yield Footer()

    def _keys(self, binding: Binding) -> str:
        keys = self.app.keys_for(binding)
        return " / ".join(self.app.get_key_display(Binding(key, "")) for key in keys.split(","))

    def _row(self, keys: str, what: str, binding_id: str = "") -> Content:
        return Content.assemble((f"  {keys:<18}", "bold $text-accent"), f"{what:<34}", (binding_id, "$text-muted"))

    def keys_text(self) -> Content:
        rows: list[Content] = [Content.styled("Everywhere", "bold underline")]
        for binding in self.app.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                rows.append(self._row(self._keys(binding), binding.description, binding.id))
        rows.append(self._row("ctrl+p", "command palette: every mode"))
        rows.append(self._row("ctrl+q / ctrl+c", "quit (every answer given is saved; an exam's clock stops)"))
        for title, screen in SECTIONS:
            rows += [Content(""), Content.styled(title, "bold underline")]
            if screen is QuestionScreen:
                rows += [self._row(keys, what) for keys, what in OPTION_KEYS]
            for binding in screen.BINDINGS:
                if isinstance(binding, Binding):
                    rows.append(self._row(self._keys(binding), binding.description or binding.action,
                                          binding.id or ""))
        rows += [Content(""), Content.styled("Remapping keys", "bold underline"),
                 Content("  Put keymap.toml in the data folder (--data-dir), one line a binding:"),
                 Content.styled('  exam.flag = "ctrl+f"', "$text-accent"),
                 Content("  The ids are the right-hand column above.")]
        return Content("\n").join(rows)
