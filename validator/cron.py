"""Parse the cron expression of a schedule's `trigger` (SPEC §7.2).

Azure ML takes five space-separated fields, ``MINUTES HOURS DAYS MONTHS DAYS-OF-WEEK``, in the
NCrontab syntax its docs link to: each field is ``*`` or a comma-separated list of items; an
item is a value, a range ``a-b``, or either (or ``*``) followed by a step ``/n``; ``a/n`` means
``a-<max>/n``. Ranges: minutes 0-59, hours 0-23, days 1-31, months 1-12 (or month names),
days of week 0-6 with 0 = Sunday (or day names). Azure ML ignores the DAYS and MONTHS fields
and treats them as ``*``, but a malformed value there still makes the expression invalid.

Choices where crontab dialects differ (documented for the rules that use this module):

* day-of-week ``7`` is rejected: the docs give 0-6 and NCrontab's range ends at 6 (Vixie cron
  reads 7 as Sunday, NCrontab refuses it).
* names are case-insensitive; a name is the full English name or any prefix of it at least
  three letters long (``MON``, ``Tues``, ``THURSDAY``, ``Sept``). NCrontab also takes one- and
  two-letter prefixes (``T`` is Tuesday), which are rejected here as unreadable.
* a range written backwards (``FRI-MON``) is valid for NCrontab, which swaps the ends (it runs
  Monday to Friday, not over the weekend); it is kept in :attr:`Cron.reversed` so a rule can
  warn, and its values are those of the swapped range.
* a step of 0, the nicknames (``@daily``), Quartz's ``?``, ``L``, ``W`` and ``#``, and a
  seconds or years field are rejected.

The parser is total: any text (or any value at all) gives a :class:`Cron` with fields and
problems, never an exception. Offsets are indexes into the expression string, so a rule can
point at the offending field (``Document.locate_text``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

FIELD_NAMES = ("minutes", "hours", "days", "months", "days-of-week")
# What one value of each field is called in a message ("minute 75 is out of range").
_SINGULAR = ("minute", "hour", "day of month", "month", "day of week")
LIMITS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
               "september", "october", "november", "december")
DAY_NAMES = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_NAMES: tuple[tuple[str, ...] | None, ...] = (None, None, None, MONTH_NAMES, DAY_NAMES)
DAYS, MONTHS, DAYS_OF_WEEK = 2, 3, 4
FORMAT = "MINUTES HOURS DAYS MONTHS DAYS-OF-WEEK"

NICKNAMES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
}

_TOKEN = re.compile(r"[^ \t\r\n]+")
_NUMBER = re.compile(r"[0-9]+")
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Problem:
    """A problem in ``text[start:end]`` (``token``); ``field`` is the index of the field it is
    in, or ``None`` when it concerns the whole expression."""

    start: int
    end: int
    token: str
    message: str
    field: int | None = None
    hint: str | None = None


@dataclass(frozen=True)
class Field:
    """One of the five fields: where it is and the values it selects (empty when invalid)."""

    index: int
    text: str
    start: int
    end: int
    values: frozenset[int] = frozenset()

    @property
    def name(self) -> str:
        return FIELD_NAMES[self.index]

    @property
    def is_wildcard(self) -> bool:
        return self.text == "*"


@dataclass(frozen=True)
class Cron:
    text: str
    fields: tuple[Field, ...] = ()
    problems: tuple[Problem, ...] = ()
    reversed: tuple[Problem, ...] = field(default=())

    @property
    def valid(self) -> bool:
        return not self.problems

    def field_problems(self, index: int) -> list[Problem]:
        return [p for p in self.problems if p.field == index]


def parse(text: object) -> Cron:
    """Parse ``text`` (any value; only strings can be valid)."""
    if not isinstance(text, str):
        shown = type(text).__name__
        return Cron("", problems=(Problem(0, 0, "", f"a cron expression is a string, not {shown}"),))
    return _parse(text)


_PLURAL = ("minutes", "hours", "days of the month", "months", "days of the week")


def describe(index: int) -> str:
    """What a field accepts: "hours are 0-23"."""
    low, high = LIMITS[index]
    extra = {MONTHS: " or JAN-DEC", DAYS_OF_WEEK: " (0 = Sunday) or SUN-SAT"}.get(index, "")
    return f"{_PLURAL[index]} are {low}-{high}{extra}"


@lru_cache(maxsize=1024)
def _parse(text: str) -> Cron:
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if len(tokens) != 5:
        return Cron(text, problems=(_count_problem(text, tokens),))
    problems: list[Problem] = []
    reversed_ranges: list[Problem] = []
    fields = []
    for index, (token, start, end) in enumerate(tokens):
        values, field_problems, field_reversed = _parse_field(index, token, start)
        problems += field_problems
        reversed_ranges += field_reversed
        fields.append(Field(index, token, start, end, frozenset() if field_problems else frozenset(values)))
    return Cron(text, tuple(fields), tuple(problems), tuple(reversed_ranges))


def _count_problem(text: str, tokens: list[tuple[str, int, int]]) -> Problem:
    count = len(tokens)
    start = tokens[0][1] if tokens else 0
    end = tokens[-1][2] if tokens else len(text)
    token = text[start:end]
    plural = "field" if count == 1 else "fields"
    stripped = text.strip()
    if stripped.lower() in NICKNAMES:
        return Problem(start, end, token,
                       f"'{stripped}' is a crontab nickname, which Azure ML does not accept; "
                       f"a cron expression has five fields: {FORMAT}",
                       hint=f"write '{NICKNAMES[stripped.lower()]}'")
    if stripped.startswith("@"):
        return Problem(start, end, token,
                       f"'{stripped}' is a crontab nickname, which Azure ML does not accept; "
                       f"a cron expression has five fields: {FORMAT}",
                       hint="Azure ML ignores the DAYS and MONTHS fields, so for a monthly or yearly "
                            "run use a recurrence trigger (`frequency: month`)")
    if count == 0:
        return Problem(0, len(text), text, f"the cron expression is blank; it needs five fields: {FORMAT}",
                       hint="for example '0 * * * *' runs at minute 0 of every hour")
    if count in (6, 7):
        message = (f"cron expression has {count} fields; Azure ML takes exactly five: {FORMAT} "
                   "(no seconds or years field)")
        hint = "remove the seconds (first) or years (last) field"
    else:
        message = f"cron expression has {count} {plural}; Azure ML takes exactly five: {FORMAT}"
        hint = ("for example '0 * * * *' runs at minute 0 of every hour, "
                "'30 6 * * MON-FRI' at 06:30 on weekdays")
    return Problem(start, end, token, message, hint=hint)


def _parse_field(index: int, token: str, offset: int) -> tuple[set[int], list[Problem], list[Problem]]:
    values: set[int] = set()
    problems: list[Problem] = []
    reversed_ranges: list[Problem] = []
    position = 0
    for item in token.split(","):
        start = offset + position
        position += len(item) + 1
        if not item:
            at = max(start - 1, offset)
            problems.append(Problem(at, at + 1, ",", f"empty item in the {FIELD_NAMES[index]} field "
                                    f"'{token}': a list is values separated by single commas", index))
            continue
        _parse_item(index, item, start, token, values, problems, reversed_ranges)
    return values, problems, reversed_ranges


def _parse_item(index: int, item: str, start: int, token: str, values: set[int],
                problems: list[Problem], reversed_ranges: list[Problem]) -> None:
    low, high = LIMITS[index]
    name = FIELD_NAMES[index]
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
        step_start = start + len(base) + 1
        if not _NUMBER.fullmatch(step_text):
            problems.append(Problem(step_start - 1, start + len(item), item[len(base):],
                                    f"'{item}' in the {name} field: a step is '/' and a positive "
                                    "whole number, as in '*/15'", index))
            return
        step = int(step_text)
        if step == 0:
            problems.append(Problem(step_start - 1, start + len(item), item[len(base):],
                                    f"step 0 in '{item}' in the {name} field: a step must be at least 1",
                                    index))
            return
    if base == "*":
        values.update(range(low, high + 1, step))
        return
    if not base:
        problems.append(Problem(start, start + len(item), item,
                                f"'{item}' in the {name} field has nothing before '/': "
                                "write '*/n' or 'a-b/n'", index))
        return
    first_text, dash, last_text = base.partition("-")
    if dash and not (first_text and last_text):
        at = start + len(first_text)
        problems.append(Problem(at, at + 1, "-", f"'{item}' in the {name} field: a range needs a value "
                                "on each side of '-', as in '1-5'", index))
        return
    first = _value(index, first_text, start, problems)
    if first is None:
        return
    if not dash:
        values.update(range(first, high + 1, step) if slash else (first,))
        return
    last = _value(index, last_text, start + len(first_text) + 1, problems)
    if last is None:
        return
    if first > last:
        reversed_ranges.append(Problem(
            start, start + len(base), base,
            f"range '{base}' in the {name} field runs backwards: the cron library Azure ML documents "
            f"(NCrontab) swaps its ends and reads it as '{last_text}-{first_text}'", index))
        first, last = last, first
    values.update(range(first, last + 1, step))


def _value(index: int, text: str, start: int, problems: list[Problem]) -> int | None:
    low, high = LIMITS[index]
    names = _NAMES[index]
    singular = _SINGULAR[index]
    end = start + len(text)
    if _NUMBER.fullmatch(text):
        number = int(text)
        if low <= number <= high:
            return number
        if index == DAYS_OF_WEEK and number == 7:
            message = ("day of week 7 is not accepted: Azure ML numbers the days 0-6 with 0 = Sunday "
                       "(write 0 or SUN)")
        else:
            message = f"{singular} {text} is out of range: {describe(index)}"
        problems.append(Problem(start, end, text, message, index))
        return None
    if names is not None and _WORD.fullmatch(text):
        lowered = text.lower()
        if len(lowered) >= 3:
            for number, full in enumerate(names):
                if full.startswith(lowered):
                    return number + low
        noun = "month" if index == MONTHS else "day"
        return _fail(problems, start, end, text, f"'{text}' is not a {noun} name: {describe(index)}", index)
    if text in ("?", "L", "W") or "#" in text or (text[-1:] in ("L", "W") and text[:-1].isdigit()):
        message = (f"'{text}' in the {FIELD_NAMES[index]} field is a Quartz extension that Azure ML's cron "
                   f"syntax does not have; {describe(index)}")
        return _fail(problems, start, end, text, message, index)
    if _WORD.fullmatch(text):
        message = f"'{text}' is not a number: {describe(index)}"
    else:
        message = f"'{text}' is not a valid {singular} value: {describe(index)}"
    return _fail(problems, start, end, text, message, index)


def _fail(problems: list[Problem], start: int, end: int, token: str, message: str, index: int) -> None:
    problems.append(Problem(start, end, token, message, index))


__all__ = [
    "DAYS",
    "DAYS_OF_WEEK",
    "DAY_NAMES",
    "FIELD_NAMES",
    "FORMAT",
    "LIMITS",
    "MONTHS",
    "MONTH_NAMES",
    "Cron",
    "Field",
    "Problem",
    "describe",
    "parse",
]
