"""Help: every key, screen by screen, read from the screens' bindings and the keymap in effect
(so a remapped key shows as remapped), each with what it does in words; the binding ids a
keymap uses are listed apart, under "Remapping keys", for the learner who remaps."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..widgets.header import QuizHeader
from .feedback import FeedbackScreen
from .home import CustomTestPicker, DomainPicker, HomeScreen
from .intro import ExamIntroScreen
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
# What a key does, in words, where the footer's one word is too short to say it. A binding not
# listed here is described by its footer text.
DESCRIPTIONS = {
    "app.help": "this list of keys",
    "app.quit": "quit",
    "home.practice": "practice: questions not met yet first, feedback after each",
    "home.exam": "a timed exam across the domains, scored 1-1000",
    "home.review": "review the cards spaced repetition says are due",
    "home.drill": "drill one domain (pick it)",
    "home.missed": "the questions answered wrong last time",
    "home.custom": "a test of your choice: flagged, missed or unseen, by domain and type",
    "home.stats": "answers, accuracy, streak, exam scores",
    "home.resume": "resume the unfinished exam",
    "home.quit": "quit",
    "picker.back": "back",
    "custom.back": "back",
    "question.submit": "submit the answer",
    "question.scenario": "show the case study's scenario again",
    "question.home": "home (the answers given are saved)",
    "question.scroll_up": "scroll the question up a page",
    "question.scroll_down": "scroll the question down a page",
    "question.scroll_up_line": "scroll the question up a little",
    "question.scroll_down_line": "scroll the question down a little",
    "intro.start": "start the exam (and its clock)",
    "intro.back": "back: no exam is started",
    "exam.next_or_review": "next question (on a section's last: the review list)",
    "exam.previous": "previous question",
    "exam.next": "next question",
    "exam.flag": "flag the question to come back to (again: unflag)",
    "exam.review": "the review list: every question, answered, flagged",
    "exam.scenario": "show the case study's scenario again",
    "exam.pause": "pause: the clock stops, home shows (c resumes)",
    "exam.scroll_up": "scroll the question up a page",
    "exam.scroll_down": "scroll the question down a page",
    "exam.scroll_up_line": "scroll the question up a little",
    "exam.scroll_down_line": "scroll the question down a little",
    "scenario.back": "back to the question",
    "feedback.next": "next question",
    "feedback.lint": "lint the question's YAML with aml-lint",
    "feedback.home": "home (the answers given are saved)",
    "review.submit": "submit the exam (from its last section)",
    "review.leave": "leave this section for good, on to the next",
    "review.back": "back to the question",
    "review.help": "this list of keys",
    "picker.help": "this list of keys",
    "custom.help": "this list of keys",
    "intro.help": "this list of keys",
    "scenario.help": "this list of keys",
    "confirm.help": "this list of keys",
    "confirm.yes": "yes",
    "confirm.no": "no: leave things as they are",
    "results.home": "home",
    "results.only_wrong": "show only the missed answers (again: every answer)",
    "detail.back": "back to the results",
    "stats.back": "back",
}
SECTIONS = [
    ("Home", HomeScreen),
    ("Drill: pick a domain", DomainPicker),
    ("Custom test", CustomTestPicker),
    ("A question (practice, drill, missed, review)", QuestionScreen),
    ("Before a new exam", ExamIntroScreen),
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

    def _row(self, keys: str, what: str) -> Content:
        return Content.assemble((f"  {keys:<18}", "bold $text-accent"), what)

    @staticmethod
    def describe(binding: Binding) -> str:
        """What a binding does, in words (never its id)."""
        return DESCRIPTIONS.get(binding.id or "", binding.description or binding.action)

    def keys_text(self) -> Content:
        rows: list[Content] = [Content.styled("Everywhere", "bold underline")]
        ids: list[tuple[str, list[str]]] = [("Everywhere", [])]
        for binding in self.app.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                rows.append(self._row(self._keys(binding), self.describe(binding)))
                ids[0][1].append(binding.id)
        rows.append(self._row("ctrl+p", "command palette: every mode"))
        rows.append(self._row("ctrl+q / ctrl+c", "quit (every answer given is saved; an exam's clock stops)"))
        for title, screen in SECTIONS:
            rows += [Content(""), Content.styled(title, "bold underline")]
            if screen is QuestionScreen:
                rows += [self._row(keys, what) for keys, what in OPTION_KEYS]
            named = []
            for binding in screen.BINDINGS:
                if isinstance(binding, Binding):
                    rows.append(self._row(self._keys(binding), self.describe(binding)))
                    if binding.id:
                        named.append(binding.id)
            ids.append((title.split(" (")[0], named))
        rows += [Content(""), Content.styled("Remapping keys", "bold underline"),
                 Content("  Put keymap.toml in the data folder (--data-dir), one line a binding, by its id:"),
                 Content.styled('  exam.flag = "ctrl+f"', "$text-accent"),
                 Content("  The ids, screen by screen:")]
        rows += [Content.assemble(f"  {title}: ", (", ".join(named), "$text-muted")) for title, named in ids if named]
        return Content("\n").join(rows)
