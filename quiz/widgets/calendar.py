"""An activity calendar, GitHub-style: one column a week, one row a weekday, a cell's shade by
the answers given that day."""

from __future__ import annotations

from datetime import date, timedelta

from textual.content import Content
from textual.widgets import Static

WEEKDAYS = ("Mon", "", "Wed", "", "Fri", "", "Sun")
# Answers in a day → shade; 0 gets the empty cell.
LEVELS = ((1, "$success 35%"), (3, "$success 55%"), (6, "$success 80%"), (10, "$success"))
EMPTY = "$foreground 15%"
CELL = "■"


def level_style(count: int) -> str:
    style = EMPTY
    for threshold, shade in LEVELS:
        if count >= threshold:
            style = shade
    return style


def calendar(activity: dict[date, int], today: date, weeks: int = 12) -> Content:
    """``weeks`` columns ending with this week (Monday first), month names above."""
    first = today - timedelta(days=today.weekday()) - timedelta(weeks=weeks - 1)
    columns = [first + timedelta(weeks=w) for w in range(weeks)]
    # A month's name above the first week (column, two cells wide) that starts in it; the first
    # column's month only when its name fits before the next one's.
    starts = [(index, monday.strftime("%b")) for index, monday in enumerate(columns)
              if index == 0 or monday.month != columns[index - 1].month]
    if len(starts) > 1 and starts[1][0] <= 2:
        starts = starts[1:]
    header = [" "] * (weeks * 2 + 3)
    free_from = 0
    for index, name in starts:
        start = index * 2
        if start >= free_from:
            header[start:start + 3] = list(name)
            free_from = start + 4
    rows = [Content("    " + "".join(header).rstrip())]
    for weekday in range(7):
        parts: list[Content | str | tuple[str, str]] = [f"{WEEKDAYS[weekday]:<4}"]
        for monday in columns:
            day = monday + timedelta(days=weekday)
            if day > today:
                parts.append("  ")
            else:
                parts.append((CELL, level_style(activity.get(day, 0))))
                parts.append(" ")
        rows.append(Content.assemble(*parts))
    legend: list[Content | str | tuple[str, str]] = ["    less "]
    for style in (EMPTY, *(shade for _, shade in LEVELS)):
        legend += [(CELL, style), " "]
    legend.append("more")
    rows.append(Content.assemble(*legend))
    return Content("\n").join(rows)


class ActivityCalendar(Static):
    DEFAULT_CSS = """
    ActivityCalendar {
        width: auto;
        height: auto;
    }
    """

    def __init__(self, activity: dict[date, int], today: date, weeks: int = 12, *, id: str | None = None) -> None:
        super().__init__(calendar(activity, today, weeks), id=id)
