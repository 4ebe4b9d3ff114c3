"""When a schedule's trigger fires (SPEC §7.2), as wall-clock times in the trigger's time zone.

Pure standard library, so the linter, the quiz (which proves its "when does this fire next"
answers with it) and the runner's scheduler share one reading of the rules:

* ``cron``: every minute whose minute, hour and day of week match. Azure ML ignores the DAYS and
  MONTHS fields and treats them as ``*``; day of week 0 is Sunday.
* ``recurrence`` without ``schedule``: ``start_time + k × interval × frequency``. A monthly
  recurrence started on the 31st does not fire in months without a 31st.
* ``recurrence`` with ``schedule`` (frequency ``day``, ``week`` or ``month``): every time that
  matches ``hours`` × ``minutes`` (and ``week_days`` / ``month_days``) inside the periods that are
  ``interval`` periods apart, counted from the period holding ``start_time`` (a day; a week from
  Monday; a calendar month). A week with no ``week_days`` fires on start_time's weekday; a month
  with neither ``month_days`` nor ``week_days`` fires on start_time's day.
* No fire before ``start_time`` or after ``end_time``; without ``start_time`` the schedule starts
  at ``after`` (its creation, in the docs' words).

Times are naive: the wall clock of the trigger's ``time_zone``. A ``start_time`` written with an
offset (``Z``, ``+01:00``) is converted to that zone first.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator, Mapping
from datetime import date, datetime, timedelta
from typing import Any

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNITS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1),
          "week": timedelta(weeks=1)}
# Far enough to find the next fire of any valid trigger (a month_days: [31] recurrence every
# 12 months can wait years), near enough to end quickly on one that never fires.
_HORIZON_DAYS = 366 * 30


class TriggerError(ValueError):
    """The trigger cannot be evaluated (the linter reports why); the message says what is wrong."""


def fire_times(trigger: Mapping[str, Any], after: datetime, *, count: int | None = 1,
               before: datetime | None = None) -> list[datetime]:
    """The fires strictly after ``after``: the first ``count`` of them, or all before ``before``."""
    if count is None and before is None:
        raise ValueError("give count or before")
    result: list[datetime] = []
    for moment in _fires(trigger, after):
        if before is not None and moment >= before:
            break
        result.append(moment)
        if count is not None and len(result) >= count:
            break
    return result


def _fires(trigger: Mapping[str, Any], after: datetime) -> Iterator[datetime]:
    kind = str(trigger.get("type", "")).lower()
    zone = trigger.get("time_zone") or "UTC"
    start = _moment(trigger.get("start_time"), zone, "start_time") or after
    end = _moment(trigger.get("end_time"), zone, "end_time")
    if kind == "cron":
        candidates = _cron(trigger.get("expression"), max(start - timedelta(minutes=1), after))
    elif kind == "recurrence":
        candidates = _recurrence(trigger, start)
    else:
        raise TriggerError(f"trigger type {trigger.get('type')!r} is neither cron nor recurrence")
    limit = after + timedelta(days=_HORIZON_DAYS)
    for moment in candidates:
        if moment > limit or (end is not None and moment > end):
            return
        if moment > after and moment >= start:
            yield moment


def _moment(value: Any, zone: str, key: str) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise TriggerError(f"{key} {value!r} is not an ISO 8601 date-time") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(zone_info(zone)).replace(tzinfo=None)
    return moment


def zone_info(name: str) -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from .timezones import _WINDOWS_TO_IANA, windows_spelling

    spelled = windows_spelling(name) or name
    candidates = [*_WINDOWS_TO_IANA.get(spelled, ()), name]
    for candidate in candidates:
        try:
            return ZoneInfo(candidate)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    raise TriggerError(f"time zone {name!r} is not known")


def _cron(expression: Any, after: datetime) -> Iterator[datetime]:
    from .cron import parse

    cron = parse(expression)
    if not cron.valid:
        raise TriggerError(f"cron expression {expression!r}: {cron.problems[0].message}")
    minutes, hours, _days, _months, days_of_week = (sorted(f.values) for f in cron.fields)
    day = after.date()
    while True:
        if (day.isoweekday() % 7) in days_of_week:  # cron: 0 = Sunday; isoweekday: 7 = Sunday
            for hour in hours:
                for minute in minutes:
                    moment = datetime(day.year, day.month, day.day, hour, minute)
                    if moment > after:
                        yield moment
        day += timedelta(days=1)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _recurrence(trigger: Mapping[str, Any], start: datetime) -> Iterator[datetime]:
    frequency = str(trigger.get("frequency", "")).lower()
    try:
        interval = int(trigger.get("interval", 1))
    except (TypeError, ValueError):
        raise TriggerError(f"interval {trigger.get('interval')!r} is not an integer") from None
    if interval < 1:
        raise TriggerError("interval must be at least 1")
    if frequency not in ("minute", "hour", "day", "week", "month"):
        raise TriggerError(f"frequency {trigger.get('frequency')!r} is not minute, hour, day, week or month")
    pattern = trigger.get("schedule")
    if not pattern or frequency in ("minute", "hour"):
        yield from _every(start, frequency, interval)
        return
    hours = sorted(int(h) for h in _as_list(pattern.get("hours")))
    minutes = sorted(int(m) for m in _as_list(pattern.get("minutes")))
    if not hours or not minutes:
        raise TriggerError("a recurrence schedule needs hours and minutes")
    week_days = {WEEKDAYS.index(str(d).lower()) for d in _as_list(pattern.get("week_days"))
                 if str(d).lower() in WEEKDAYS}
    month_days = {int(d) for d in _as_list(pattern.get("month_days"))}
    for period_days in _periods(start.date(), frequency, interval, week_days, month_days):
        for day in period_days:
            for hour in hours:
                for minute in minutes:
                    yield datetime(day.year, day.month, day.day, hour, minute)


def _every(start: datetime, frequency: str, interval: int) -> Iterator[datetime]:
    k = 0
    while True:
        if frequency == "month":
            months = start.month - 1 + k * interval
            year, month = start.year + months // 12, months % 12 + 1
            if start.day <= calendar.monthrange(year, month)[1]:
                yield start.replace(year=year, month=month)
        else:
            yield start + k * interval * _UNITS[frequency]
        k += 1


def _periods(first: date, frequency: str, interval: int, week_days: set[int],
             month_days: set[int]) -> Iterator[list[date]]:
    k = 0
    while True:
        if frequency == "day":
            yield [first + timedelta(days=k * interval)]
        elif frequency == "week":
            monday = first - timedelta(days=first.weekday()) + timedelta(weeks=k * interval)
            chosen = week_days or {first.weekday()}
            yield [monday + timedelta(days=d) for d in sorted(chosen)]
        else:
            months = first.month - 1 + k * interval
            year, month = first.year + months // 12, months % 12 + 1
            length = calendar.monthrange(year, month)[1]
            days = [date(year, month, d) for d in range(1, length + 1)
                    if d in month_days or (date(year, month, d).weekday() in week_days)]
            if not month_days and not week_days and first.day <= length:
                days = [date(year, month, first.day)]
            yield days
        k += 1
