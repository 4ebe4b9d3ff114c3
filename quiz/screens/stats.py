"""Stats: answers, accuracy, the streak, an activity calendar, every exam's score and each
domain's trend across exams, the scheduler's settings, and the recent sessions."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ..bank import DOMAINS
from ..fitting import describe
from ..widgets.calendar import ActivityCalendar
from ..widgets.header import QuizHeader

RECENT = 8
TREND = 5
BARS = "▁▂▃▄▅▆▇█"


def sparkline(scores: list[int]) -> str:
    """Scores on the 1-1000 scale as bars, oldest first."""
    return "".join(BARS[min(len(BARS) - 1, max(0, score * len(BARS) // 1001))] for score in scores)


def direction(values: list[int]) -> str:
    """How a domain moved between its last two exams."""
    if len(values) < 2:
        return ""
    change = values[-1] - values[-2]
    return f"▲ {change}" if change > 0 else f"▼ {-change}" if change < 0 else "="


def session_result(session: dict[str, Any]) -> str:
    if not session["ended"]:
        return "unfinished"
    summary = session["summary"] or {}
    if summary.get("abandoned"):
        return "abandoned for a new exam"
    if "score" in summary:
        return (f"score {summary['score']} {'pass' if summary.get('passed') else 'fail'}"
                + (" (time ran out)" if summary.get("timed_out") else ""))
    return f"{summary.get('correct', 0)} of {summary.get('answered', 0)} right"


class StatsScreen(Screen):
    BINDINGS = [Binding("escape,q", "app.close", "Back", id="stats.back")]
    AUTO_FOCUS = "#stats"
    SUB_TITLE = "Stats"

    def compose(self):
        trainer = self.app.trainer
        stats = trainer.stats()
        today = date.fromtimestamp(trainer.clock())
        yield QuizHeader()
        with VerticalScroll(id="stats"):
            yield Static(Content.assemble(
                (f"{stats.answered}", "bold"), " answers · ", (f"{stats.accuracy}%", "bold"), " right · streak ",
                (f"{stats.streak} day{'' if stats.streak == 1 else 's'}", "bold")), id="totals")
            yield Static("Activity, last 12 weeks (answers a day)", classes="section-title")
            yield ActivityCalendar(stats.activity, today, id="calendar")
            exams = stats.exams
            if exams:
                yield Static(f"Exam scores, oldest first (700 passes): {sparkline([e['score'] for e in exams])}  "
                             + " ".join(str(e["score"]) for e in exams[-TREND:]), classes="section-title",
                             id="scores")
                trend: DataTable = DataTable(id="trend", show_cursor=False, zebra_stripes=True)
                trend.add_columns("domain", *(f"exam {len(exams) - TREND + i + 1}" if len(exams) > TREND
                                              else f"exam {i + 1}" for i in range(min(TREND, len(exams)))), "trend")
                for domain, values in stats.domain_trend().items():
                    shown = values[-TREND:]
                    cells = [f"{v}%" for v in shown] + [""] * (min(TREND, len(exams)) - len(shown))
                    trend.add_row(DOMAINS[domain][0], *cells, direction(values))
                yield trend
            yield Static(describe(trainer.progress), id="scheduler", classes="hint")
            yield Static("Recent sessions", classes="section-title")
            table: DataTable = DataTable(id="sessions", show_cursor=False, zebra_stripes=True)
            table.add_columns("#", "mode", "started", "result")
            for session in stats.sessions[:RECENT]:
                started = datetime.fromtimestamp(session["started"]).strftime("%Y-%m-%d %H:%M")
                table.add_row(str(session["id"]), session["mode"], started, session_result(session))
            if not stats.sessions:
                yield Static("No sessions yet.", classes="hint")
            else:
                yield table
        yield Footer()
