"""AML6xx: schedules — the cron expression, the recurrence pattern, time zones, start and end
times, and what `create_job` points at (SPEC §7, §11.10-11, §12 rules 60-65).

A schedule runs one of three actions: `create_job` (a job), `import_data` (a data import) or
`create_monitor` (a model monitor). SPEC §7 describes only the first; azure-ai-ml loads the
other two as ImportDataSchedule and MonitorSchedule (`Schedule._resolve_cls_and_type` picks the
class by key), and Microsoft's examples use them (`EXM:cli/assets/data/simple_import_schedule.yml`,
`EXM:cli/monitoring/out-of-box-monitoring.yaml`). Their triggers are checked exactly like a job
schedule's; the shape of their bodies is the schema's (AML1xx), and AML648/AML649 cover the
data import file and the monitor's unchecked parts.

Keys the reference page spells differently (`timezone`, `pattern`), types, enums and required
keys are the schema's (AML1xx); these rules check what the schema cannot: values inside the
cron string, ranges, combinations, and the job file a schedule would create jobs from.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import cron, expressions, timezones
from ..diagnostic import Finding, Severity
from ..kinds import KIND_TITLES, OTHER_JOB_TYPES
from ..loader import Document, Path_, count_before
from ..references import Referenced, is_arm_id, is_local_path, resolve
from ..suggest import closest
from ._base import check
from ._shape import problems as shape_problems
from ..values import mapping as _mapping

KINDS = ("schedule",)
JOB_KINDS = ("commandJob", "sweepJob", "pipelineJob")
FREQUENCIES = ("minute", "hour", "day", "week", "month")

CRON = """\
$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: nightly_retrain
display_name: Nightly retrain
trigger:
  type: cron
  expression: "0 2 * * *"
  start_time: "2025-01-01T00:00:00"
  time_zone: UTC
create_job: azureml:nightly-retrain-pipeline
"""

RECURRENCE = """\
$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: weekly_retrain
trigger:
  type: recurrence
  frequency: week
  interval: 1
  schedule:
    hours: [9]
    minutes: [0]
    week_days: [monday, wednesday, friday]
  start_time: "2025-01-06T00:00:00"
  time_zone: "Eastern Standard Time"
create_job: azureml:weekly-retrain-pipeline
"""

OVERRIDES = """\
$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: nightly_retrain
trigger:
  type: cron
  expression: "0 2 * * *"
  time_zone: UTC
create_job:
  type: pipeline
  job: azureml:nightly-retrain-pipeline
  experiment_name: nightly-retrain
  inputs:
    run_label: ${{creation_context.trigger_time}}
  outputs:
    trained_model:
      type: uri_folder
      path: azureml://datastores/workspaceblobstore/paths/models/${{name}}/
"""

# A schedule file's own folder is where create_job paths resolve; the documentation examples
# are linted from the repository root, so the ones about local files name repository files.
LOCAL = """\
$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: churn_retrain
trigger:
  type: cron
  expression: "0 2 * * *"
  time_zone: UTC
create_job: scenarios/pipeline/pipeline.yml
"""


# ----------------------------------------------------------------------------- helpers
def _trigger(document: Document) -> tuple[dict, str | None]:
    """The trigger mapping and its type (`cron`/`recurrence`, told from its keys when `type`
    is missing or wrong: the schema reports that)."""
    trigger = _mapping(_mapping(document.data).get("trigger"))
    kind = trigger.get("type")
    kind = kind.lower() if isinstance(kind, str) else None
    if kind not in ("cron", "recurrence"):
        kind = "cron" if "expression" in trigger else "recurrence" if "frequency" in trigger else None
    return trigger, kind


def _frequency(trigger: dict) -> str | None:
    value = trigger.get("frequency")
    if isinstance(value, str) and value.lower() in FREQUENCIES:
        return value.lower()
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _items(value: Any, where: Path_) -> Iterator[tuple[Path_, Any]]:
    """The values of a pattern entry, which is one value or a list of them."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield where + (index,), item
    elif value is not None:
        yield where, value


def _occurrence(text: str, start: int, token: str) -> int:
    """How many times ``token`` starts before ``start`` (overlapping, as locate_text counts)."""
    return count_before(text, token, start, overlapping=True) if token else 0


def _span(document: Document, where: Path_, text: str, start: int, token: str) -> tuple[int, int, int] | None:
    if not token.strip():
        return None
    return document.locate_text(where, token, _occurrence(text, start, token))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _cron(document: Document) -> tuple[Path_, cron.Cron] | None:
    trigger, kind = _trigger(document)
    expression = trigger.get("expression")
    if kind != "cron" or not isinstance(expression, str) or not expression:
        return None  # missing, empty or not a string: the schema says so
    return ("trigger", "expression"), cron.parse(expression)


# ----------------------------------------------------------------------------- cron
@check("AML601", "cron-field-count", Severity.ERROR,
       "A cron expression does not have exactly five fields.",
       bad=CRON.replace('"0 2 * * *"', '"every day at 2"'), good=CRON, kinds=KINDS)
def cron_field_count(document: Document) -> Iterator[Finding]:
    """
    Azure ML reads a cron expression as five space-separated fields, `MINUTES HOURS DAYS MONTHS
    DAYS-OF-WEEK` (NCrontab syntax). A seconds or years field, a crontab nickname such as `@daily`,
    or words (`every hour`) are not cron. The SDK does not parse the expression (it loads `every
    hour`), so the mistake surfaces only when the service refuses the schedule.

    See: reference-yaml-schedule, how-to-schedule-pipeline-job

    Provenance: SPEC §7.2; EXP:s_cron_bad_expr.
    """
    found = _cron(document)
    if found is None:
        return
    where, parsed = found
    for problem in parsed.problems:
        if problem.field is None:
            span = _span(document, where, parsed.text, problem.start, problem.token)
            yield Finding(problem.message, where, hint=problem.hint, span=span)


@check("AML602", "cron-field-value", Severity.ERROR,
       "A field of a cron expression is malformed or out of range.",
       bad=CRON.replace('"0 2 * * *"', '"0 24 * * *"'), good=CRON, kinds=KINDS)
def cron_field_value(document: Document) -> Iterator[Finding]:
    """
    Minutes are 0-59, hours 0-23, days of the month 1-31, months 1-12 or `JAN`-`DEC`, days of the
    week 0-6 with 0 = Sunday or `SUN`-`SAT`; each field is `*`, a value, a range `a-b`, a step
    `*/n` or `a-b/n`, or a comma-separated list of those. Names are case-insensitive and may be
    written in full (`MONDAY`) or shortened to three letters or more. A day of week `7` is
    rejected: the docs number the days 0-6 and NCrontab refuses 7 (other crontabs read it as
    Sunday). Quartz extensions (`?`, `L`, `W`, `#`) and a step of 0 are not part of the syntax. The
    DAYS and MONTHS fields must be valid too, although Azure ML then ignores them (AML603).

    See: reference-yaml-schedule, how-to-schedule-pipeline-job

    Provenance: SPEC §7.2.
    """
    found = _cron(document)
    if found is None:
        return
    where, parsed = found
    for problem in parsed.problems:
        if problem.field is not None:
            span = _span(document, where, parsed.text, problem.start, problem.token)
            yield Finding(problem.message, where, hint=problem.hint, span=span)


@check("AML603", "cron-ignored-field", Severity.WARNING,
       "The DAYS or MONTHS field of a cron expression is set, but Azure ML ignores it.",
       bad=CRON.replace('"0 2 * * *"', '"0 2 1 * *"'), good=CRON, kinds=KINDS)
def cron_ignored_field(document: Document) -> Iterator[Finding]:
    """
    Azure ML does not support the DAYS (day of the month) and MONTHS fields: "If you pass one of
    these values, it will be ignored and treated as `*`". `0 2 1 * *` therefore runs at 02:00
    every day, not on the first of the month. For a monthly run use a recurrence trigger with
    `frequency: month` and `schedule.month_days`.

    See: how-to-schedule-pipeline-job

    Provenance: SPEC §7.2.
    """
    found = _cron(document)
    if found is None:
        return
    where, parsed = found
    for field in parsed.fields:
        if field.index not in (cron.DAYS, cron.MONTHS) or parsed.field_problems(field.index):
            continue
        low, high = cron.LIMITS[field.index]
        if field.values == frozenset(range(low, high + 1)):
            continue  # `*`, `*/1`, `1-31`: the same as what Azure ML uses anyway
        label = field.name.upper()
        message = (f"the {label} field is '{field.text}', but Azure ML ignores the DAYS and MONTHS fields "
                   "of a cron expression and treats them as '*': the schedule fires on every day of "
                   "every month that its other fields allow")
        hint = ("write '*' there; to run on given days of the month use a recurrence trigger with "
                "`frequency: month` and `schedule.month_days`")
        span = _span(document, where, parsed.text, field.start, field.text)
        yield Finding(message, where, hint=hint, span=span)


@check("AML604", "cron-reversed-range", Severity.WARNING,
       "A range in a cron expression runs backwards (`FRI-MON`).",
       bad=CRON.replace('"0 2 * * *"', '"0 2 * * FRI-MON"'),
       good=CRON.replace('"0 2 * * *"', '"0 2 * * MON-FRI"'), kinds=KINDS)
def cron_reversed_range(document: Document) -> Iterator[Finding]:
    """
    NCrontab, the cron syntax Azure ML's docs point to, swaps the ends of a backwards range:
    `FRI-MON` selects Monday to Friday, not Friday over the weekend to Monday as other
    crontabs (which reject it or wrap around) would suggest. Write the range forwards, or list
    the days (`FRI,SAT,SUN,MON` or `0,1,5,6`).
    """
    found = _cron(document)
    if found is None:
        return
    where, parsed = found
    for problem in parsed.reversed:
        span = _span(document, where, parsed.text, problem.start, problem.token)
        yield Finding(problem.message, where,
                      hint="write the range forwards, or list the values with commas",
                      span=span)


# ----------------------------------------------------------------------------- recurrence
def _recurrence(document: Document) -> tuple[dict, dict | None] | None:
    trigger, kind = _trigger(document)
    if kind != "recurrence":
        return None
    pattern = trigger.get("schedule")
    return trigger, pattern if isinstance(pattern, dict) else None


@check("AML610", "recurrence-interval", Severity.ERROR,
       "A recurrence `interval` is less than 1.",
       bad=RECURRENCE.replace("interval: 1", "interval: 0"), good=RECURRENCE, kinds=KINDS)
def recurrence_interval(document: Document) -> Iterator[Finding]:
    """
    `interval` counts frequency units between runs ("every 2 weeks"), so it must be at least 1. The
    SDK accepts 0 and negative numbers (it does no range check), and the schedule cannot be created
    from them.

    See: reference-yaml-schedule

    Provenance: SPEC §12 rule 62.
    """
    found = _recurrence(document)
    if found is None:
        return
    interval = found[0].get("interval")
    if _is_int(interval) and interval < 1:
        unit = _frequency(found[0]) or "frequency unit"
        yield Finding(
            f"interval {interval} is not a number of {unit}s: it must be at least 1",
            ("trigger", "interval"), hint=f"write `interval: 1` to run every {unit}")


@check("AML611", "recurrence-time-range", Severity.ERROR,
       "A recurrence pattern's `hours` are outside 0-23 or its `minutes` outside 0-59.",
       bad=RECURRENCE.replace("hours: [9]", "hours: [9, 24]"), good=RECURRENCE, kinds=KINDS)
def recurrence_time_range(document: Document) -> Iterator[Finding]:
    """
    `schedule.hours` are hours of the day, 0-23, and `schedule.minutes` minutes of the hour, 0-59.
    The SDK does not check them (it loads hours 25 and minutes 75); there is no such time, so the
    schedule cannot fire as written. Midnight is hour 0.

    See: reference-yaml-schedule

    Provenance: SPEC §7.2; EXP:s_hours_oob.
    """
    found = _recurrence(document)
    if found is None or found[1] is None:
        return
    for key, high, noun in (("hours", 23, "hour"), ("minutes", 59, "minute")):
        for where, value in _items(found[1].get(key), ("trigger", "schedule", key)):
            if _is_int(value) and not 0 <= value <= high:
                hint = "midnight is hour 0" if key == "hours" and value == 24 else None
                yield Finding(f"{noun} {value} is out of range: {key} are 0-{high}",
                              where, hint=hint)


@check("AML612", "week-days-frequency", Severity.ERROR,
       "`week_days` is set but the frequency is not `week` or `month`.",
       bad=RECURRENCE.replace("frequency: week", "frequency: day"), good=RECURRENCE, kinds=KINDS)
def week_days_frequency(document: Document) -> Iterator[Finding]:
    """
    Days of the week narrow a weekly or monthly recurrence only: with frequency `day` (or `hour`,
    `minute`) the docs give the pattern hours and minutes alone, so the listed days do not restrict
    when the job runs, and a schedule meant for Monday-Wednesday-Friday would run every day. Use
    `frequency: week` with `interval: 1`.

    See: reference-yaml-schedule, how-to-schedule-pipeline-job

    Provenance: SPEC §7.2, §12 rule 62.
    """
    found = _recurrence(document)
    if found is None or found[1] is None or "week_days" not in found[1]:
        return
    frequency = _frequency(found[0])
    if frequency in (None, "week", "month"):
        return
    yield Finding(
        f"week_days only applies with frequency week or month, not '{frequency}': "
        "the listed days would not restrict the runs",
        ("trigger", "schedule", "week_days"), key=True,
        hint="set `frequency: week` (and `interval: 1`) to run on these days every week")


@check("AML613", "month-days-frequency", Severity.WARNING,
       "`month_days` is set but the frequency is not `month`.",
       bad=RECURRENCE.replace("week_days: [monday, wednesday, friday]", "month_days: [1, 15]"),
       good=RECURRENCE.replace("frequency: week", "frequency: month")
                      .replace("week_days: [monday, wednesday, friday]", "month_days: [1, 15]"),
       kinds=KINDS)
def month_days_frequency(document: Document) -> Iterator[Finding]:
    """
    Days of the month belong to a monthly recurrence (`frequency: month`). With a daily or weekly
    frequency the docs do not say what they would do **[inference]**: most likely they are ignored
    and the job runs on every day (or week) the rest of the trigger allows.

    See: reference-yaml-schedule

    Provenance: SPEC §7.2.
    """
    found = _recurrence(document)
    if found is None or found[1] is None or "month_days" not in found[1]:
        return
    frequency = _frequency(found[0])
    if frequency in (None, "month"):
        return
    yield Finding(
        f"month_days is documented only with frequency month, not '{frequency}'",
        ("trigger", "schedule", "month_days"), key=True,
        hint="set `frequency: month` to run on these days of every month")


@check("AML614", "pattern-frequency", Severity.WARNING,
       "A recurrence `schedule` pattern is combined with frequency `minute` or `hour`.",
       bad=RECURRENCE.replace("frequency: week", "frequency: hour")
                     .replace("    week_days: [monday, wednesday, friday]\n", ""),
       good=RECURRENCE.replace("frequency: week", "frequency: day")
                      .replace("    week_days: [monday, wednesday, friday]\n", ""),
       kinds=KINDS)
def pattern_frequency(document: Document) -> Iterator[Finding]:
    """
    The docs define the `schedule` pattern for frequency `day` (hours and minutes) and `week` or
    `month` (also week days). With frequency `minute` or `hour` the runs follow `start_time` plus
    multiples of `interval`, and what a pattern that names hours (it must: `hours` is required)
    would do on top of that is not documented. Use frequency `day` with the hours listed, or drop
    the pattern.

    See: reference-yaml-schedule, how-to-schedule-pipeline-job

    Provenance: SPEC §7.2.
    """
    found = _recurrence(document)
    if found is None or found[1] is None:
        return
    frequency = _frequency(found[0])
    if frequency not in ("minute", "hour"):
        return
    yield Finding(
        f"a `schedule` pattern with frequency '{frequency}': the docs define the pattern only "
        "for frequency day, week and month, so what it does here is not documented",
        ("trigger", "schedule"), key=True,
        hint="use `frequency: day` with `schedule.hours` listing the hours, or drop `schedule` "
             "and let start_time and interval set the runs")


@check("AML615", "month-days-range", Severity.ERROR,
       "A recurrence pattern's `month_days` are outside 1-31.",
       bad=RECURRENCE.replace("frequency: week", "frequency: month")
                     .replace("week_days: [monday, wednesday, friday]", "month_days: [0, 15]"),
       good=RECURRENCE.replace("frequency: week", "frequency: month")
                      .replace("week_days: [monday, wednesday, friday]", "month_days: [1, 15]"),
       kinds=KINDS)
def month_days_range(document: Document) -> Iterator[Finding]:
    """
    Days of the month are 1-31. The SDK does not check them; a day 0 or 32 names no date, so
    the schedule cannot run on it as written.
    """
    found = _recurrence(document)
    if found is None or found[1] is None:
        return
    for where, value in _items(found[1].get("month_days"), ("trigger", "schedule", "month_days")):
        if _is_int(value) and not 1 <= value <= 31:
            yield Finding(f"day of month {value} is out of range: month_days are 1-31", where)


@check("AML616", "month-days-short-months", Severity.WARNING,
       "`month_days` include 29, 30 or 31, which some months do not have.",
       bad=RECURRENCE.replace("frequency: week", "frequency: month")
                     .replace("week_days: [monday, wednesday, friday]", "month_days: [31]"),
       good=RECURRENCE.replace("frequency: week", "frequency: month")
                      .replace("week_days: [monday, wednesday, friday]", "month_days: [1]"),
       kinds=KINDS)
def month_days_short_months(document: Document) -> Iterator[Finding]:
    """
    A monthly recurrence on day 29, 30 or 31 does not fire in months without that day: day 31 skips
    February, April, June, September and November; day 29 skips February in three years out of
    four. For "the end of every month" there is no pattern; run on day 1 and process the previous
    month.

    See: reference-yaml-schedule

    Provenance: SPEC §7.2 ("months without that day do not fire").
    """
    found = _recurrence(document)
    if found is None or found[1] is None:
        return
    for where, value in _items(found[1].get("month_days"), ("trigger", "schedule", "month_days")):
        if _is_int(value) and 29 <= value <= 31:
            missing = {29: "February (outside leap years)", 30: "February",
                       31: "February, April, June, September and November"}[value]
            yield Finding(
                f"day {value} does not exist in every month: the schedule skips {missing}",
                where,
                hint="use a day that every month has (1-28), or accept the skipped months")


@check("AML617", "duplicate-pattern-value", Severity.WARNING,
       "A value is listed twice in a recurrence pattern.",
       bad=RECURRENCE.replace("[monday, wednesday, friday]", "[monday, wednesday, Monday]"),
       good=RECURRENCE, kinds=KINDS)
def duplicate_pattern_value(document: Document) -> Iterator[Finding]:
    """
    Listing the same hour, minute, week day (week days ignore case) or day of the month
    twice does not make the job run twice; it usually hides a typo for another value.
    """
    found = _recurrence(document)
    if found is None or found[1] is None:
        return
    for key in ("hours", "minutes", "week_days", "month_days"):
        values = found[1].get(key)
        if not isinstance(values, list):
            continue
        seen: dict[Any, int] = {}
        for index, value in enumerate(values):
            normal = value.lower() if isinstance(value, str) else value
            if isinstance(normal, (dict, list)) or isinstance(value, bool):
                continue
            if normal in seen:
                yield Finding(
                    f"'{value}' is listed twice in {key} (first as item {seen[normal] + 1})",
                    ("trigger", "schedule", key, index),
                    hint="remove the repeated value, or correct it to the one you meant")
            else:
                seen[normal] = index


# ----------------------------------------------------------------------------- time zone
_OFFSET_NAME = re.compile(r"^(?:UTC|GMT)\s*[+-]\s*\d", re.IGNORECASE)


def _time_zone(document: Document) -> str | None:
    trigger, _ = _trigger(document)
    value = trigger.get("time_zone")
    return value if isinstance(value, str) and value.strip() else None


@check("AML620", "unknown-time-zone", Severity.ERROR,
       "`time_zone` is neither a Windows time-zone name nor an IANA name.",
       bad=CRON.replace("time_zone: UTC", 'time_zone: "Pacific Standrd Time"'),
       good=CRON.replace("time_zone: UTC", 'time_zone: "Pacific Standard Time"'), kinds=KINDS)
def unknown_time_zone(document: Document) -> Iterator[Finding]:
    """
    Azure ML documents the Windows time-zone names for `time_zone` ("UTC", "Pacific Standard Time",
    "W. Europe Standard Time", "UTC-11", ...: 131 values). The SDK passes any string through, so a
    misspelt name is only refused by the service. IANA names (`America/Los_Angeles`) are not errors
    here but get AML621. Abbreviations (`PST`, `CET`) and offsets (`UTC+01:00`) are not time-zone
    names.

    See: reference-yaml-schedule

    Provenance: SPEC §7.2; EXP:s_bad_tz.
    """
    name = _time_zone(document)
    if name is None or timezones.is_documented(name) or timezones.windows_spelling(name) \
            or timezones.looks_like_iana(name):
        return
    message = f"unknown time zone '{name}'"
    hint = "write a Windows time-zone name such as 'UTC', 'Pacific Standard Time' or 'W. Europe Standard Time'"
    stripped = name.strip()
    abbreviation = timezones.ABBREVIATIONS.get(stripped.upper())
    if abbreviation:
        message += f": abbreviations are not time-zone names; did you mean '{abbreviation}'?"
    elif _OFFSET_NAME.match(stripped):
        message += ": a UTC offset is not a time-zone name"
        hint = ("Azure ML names only the fixed offsets 'UTC-11', 'UTC-09', 'UTC-08', 'UTC-02', 'UTC' and "
                "'UTC+12'; otherwise write the region's name (for example 'W. Europe Standard Time' for "
                "UTC+01:00 with daylight saving)")
    else:
        close = closest(stripped, timezones.WINDOWS_TIME_ZONES)
        if close:
            message += f"; did you mean '{close}'?"
    yield Finding(message, ("trigger", "time_zone"), hint=hint)


@check("AML621", "time-zone-spelling", Severity.WARNING,
       "`time_zone` is an IANA name or a Windows name Azure ML does not document.",
       bad=CRON.replace("time_zone: UTC", "time_zone: America/Los_Angeles"),
       good=CRON.replace("time_zone: UTC", 'time_zone: "Pacific Standard Time"'), kinds=KINDS)
def time_zone_spelling(document: Document) -> Iterator[Finding]:
    """
    The SDK accepts any string for `time_zone` (it loads `America/Los_Angeles`), but the docs list
    only Windows time-zone names, spelt exactly. An IANA name, a documented name in other letter
    case, or a Windows zone missing from Azure ML's list (such as "Yukon Standard Time") may be
    accepted by the service or not; the documented spelling is certain to be. The hint gives the
    Windows name where amllab knows it.

    See: reference-yaml-schedule

    Provenance: EXP:s_bad_tz; SPEC §7.2.
    """
    name = _time_zone(document)
    if name is None or timezones.is_documented(name):
        return
    spelled = timezones.windows_spelling(name)
    if spelled and timezones.is_documented(spelled):
        message = f"time zone '{name}' is spelt '{spelled}' in the list Azure ML documents"
        hint = f"write '{spelled}'"
    elif spelled or timezones.is_other_windows(name):
        message = f"'{spelled or name}' is a Windows time zone that Azure ML's documented list does not include"
        hint = "use a documented zone with the same rules, or check that the service accepts it"
    elif timezones.looks_like_iana(name):
        windows = timezones.windows_for_iana(name)
        message = (f"'{name}' is an IANA time-zone name: the SDK passes it through, but Azure ML documents "
                   "Windows time-zone names")
        hint = f"write '{windows}'" if windows else "write the Windows name of this zone"
    else:
        return  # neither: AML620
    yield Finding(message, ("trigger", "time_zone"), hint=hint)


# ----------------------------------------------------------------------------- start/end
# The SDK reads these with marshmallow's ISO-8601 parser: a date, `T` or a space, hh:mm with
# optional seconds and fraction, and an optional `Z` or ±hh[:mm] offset (no date-only form).
_ISO_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})[T ]([0-9]{1,2}):([0-9]{1,2})"
    r"(?::([0-9]{1,2})(?:\.([0-9]{1,6})[0-9]{0,6})?)?(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?")


def parse_datetime(text: str) -> dt.datetime | None:
    """``text`` as the SDK reads a schedule time, or ``None`` when it would refuse it."""
    match = _ISO_DATETIME.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    tzinfo = None
    if offset == "Z":
        tzinfo = dt.UTC
    elif offset:
        digits = offset[1:].replace(":", "")
        delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        try:
            tzinfo = dt.timezone(-delta if offset[0] == "-" else delta)
        except ValueError:
            return None
    try:
        return dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
                           int((fraction or "0").ljust(6, "0")), tzinfo=tzinfo)
    except ValueError:
        return None


def _times(document: Document) -> dict[str, tuple[str, dt.datetime | None]]:
    trigger, _ = _trigger(document)
    found = {}
    for key in ("start_time", "end_time"):
        value = trigger.get(key)
        if isinstance(value, str) and value:
            found[key] = (value, parse_datetime(value))
    return found


@check("AML630", "invalid-datetime", Severity.ERROR,
       "`start_time` or `end_time` is not an ISO-8601 date and time.",
       bad=CRON.replace('"2025-01-01T00:00:00"', '"tomorrow"'), good=CRON, kinds=KINDS)
def invalid_datetime(document: Document) -> Iterator[Finding]:
    """
    The SDK refuses anything but an ISO-8601 date and time ("Not a valid ISO8601-formatted datetime
    string: tomorrow"): `2025-01-31T09:00:00`, optionally with seconds' fractions and a `Z` or
    `+hh:mm` offset. A date alone (`2025-01-31`) is not enough, and the date must exist (no
    2025-02-30).

    See: reference-yaml-schedule

    Provenance: SPEC §8.2.
    """
    for key, (text, parsed) in _times(document).items():
        if parsed is None:
            yield Finding(
                f"{key} '{text}' is not an ISO-8601 date and time "
                "(Azure ML: \"Not a valid ISO8601-formatted datetime string\")",
                ("trigger", key), hint="write it as 'YYYY-MM-DDThh:mm:ss', for example '2025-01-31T09:00:00'")


@check("AML631", "end-before-start", Severity.ERROR,
       "`end_time` is not after `start_time`.",
       bad=CRON.replace('  time_zone: UTC', '  end_time: "2024-12-31T00:00:00"\n  time_zone: UTC'),
       good=CRON.replace('  time_zone: UTC', '  end_time: "2025-12-31T00:00:00"\n  time_zone: UTC'),
       kinds=KINDS)
def end_before_start(document: Document) -> Iterator[Finding]:
    """
    A schedule is active from `start_time` until `end_time`; an end at or before the start leaves
    no time in which it can fire. The SDK does not compare them. Times without an offset are read
    in `time_zone`; when only one of the two has an offset they are not compared.

    See: reference-yaml-schedule

    Provenance: EXP:s_end_before_start.
    """
    times = _times(document)
    start = times.get("start_time", ("", None))[1]
    end_text, end = times.get("end_time", ("", None))
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return
    if end <= start:
        start_text = times["start_time"][0]
        relation = "the same time as" if end == start else "before"
        yield Finding(
            f"end_time '{end_text}' is {relation} start_time '{start_text}': the schedule "
            "would never fire", ("trigger", "end_time"),
            hint="set end_time after start_time, or remove it to run until the schedule is disabled")


_UTC_NAMES = {"utc", "etc/utc", "etc/gmt", "etc/uct", "etc/universal", "etc/zulu", "gmt", "uct", "universal",
              "zulu"}


@check("AML632", "offset-and-time-zone", Severity.WARNING,
       "`start_time` or `end_time` carries a UTC offset that disagrees with `time_zone`.",
       bad=CRON.replace('"2025-01-01T00:00:00"', '"2025-01-01T00:00:00+02:00"')
               .replace("time_zone: UTC", 'time_zone: "Pacific Standard Time"'),
       good=CRON.replace("time_zone: UTC", 'time_zone: "Pacific Standard Time"'), kinds=KINDS)
def offset_and_time_zone(document: Document) -> Iterator[Finding]:
    """
    The reference page shows start times with an offset (`2022-05-10T10:15:00-04:00`) and also has
    `time_zone` (default UTC); it does not say which one wins when both are given and disagree, so
    the first run may be hours off. A `Z` or `+00:00` offset with `time_zone: UTC` agrees and is
    not reported. Write the time without an offset and let `time_zone` say where it is, or drop
    `time_zone`.

    See: reference-yaml-schedule

    Provenance: SPEC §7.2.
    """
    zone = _time_zone(document)
    if zone is None:
        return
    for key, (text, parsed) in _times(document).items():
        if parsed is None or parsed.tzinfo is None:
            continue
        if parsed.utcoffset() == dt.timedelta(0) and zone.strip().lower() in _UTC_NAMES:
            continue
        yield Finding(
            f"{key} '{text}' has its own UTC offset and time_zone is '{zone}': "
            "which of the two applies is not documented",
            ("trigger", key),
            hint=f"write {key} without the offset (time_zone then says where it is), or drop time_zone")


# ----------------------------------------------------------------------------- create_job
def _job_reference(document: Document) -> tuple[Path_, str, dict | None] | None:
    """Where the job reference is, its text, and the create_job mapping (object form)."""
    create_job = _mapping(document.data).get("create_job")
    if isinstance(create_job, str) and create_job.strip():
        return ("create_job",), create_job.strip(), None
    if isinstance(create_job, dict):
        job = create_job.get("job")
        if isinstance(job, str) and job.strip():
            return ("create_job", "job"), job.strip(), create_job
    return None


def _local_job(document: Document) -> tuple[Path_, str, dict | None, Referenced] | None:
    found = _job_reference(document)
    if found is None or not is_local_path(found[1]):
        return None
    where, reference, mapping = found
    return where, reference, mapping, resolve(document, reference)


def _shown_path(document: Document, reference: str) -> str:
    """Where a reference resolves, as the user named the schedule file: relative paths stay
    relative (so messages do not depend on where the repository is checked out)."""
    text = reference.removeprefix("file:")
    return os.path.normpath(Path(document.path).parent / text)


def _declared_type(mapping: dict | None) -> str | None:
    value = (mapping or {}).get("type")
    return value.lower() if isinstance(value, str) else None


def _not_a_job(referenced: Referenced, reference: str, declared: str | None) -> str | None:
    """Why the referenced file cannot be a schedule's job, or ``None``."""
    kind = referenced.kind
    if kind in ("commandComponent", "pipelineComponent"):
        return f"'{reference}' is a component, not a job: a schedule creates jobs"
    if kind == "schedule":
        return f"'{reference}' is a schedule, not a job: a schedule creates jobs"
    if kind is None:
        data = referenced.data
        if referenced.document is None or not isinstance(data, dict):
            return None  # unreadable or not YAML: its own errors say so (AML641)
        if isinstance(data.get("type"), str) and data["type"] in OTHER_JOB_TYPES:
            return None  # a spark, parallel... job: amllab does not check it
        return f"'{reference}' is not an Azure ML job spec: a schedule creates jobs"
    expected = {"pipeline": "pipelineJob", "command": "commandJob"}.get(declared or "")
    if expected and kind != expected:
        return (f"create_job says `type: {declared}`, but '{reference}' is a {KIND_TITLES.get(kind, kind)}")
    return None


@check("AML640", "create-job-file-missing", Severity.ERROR,
       "`create_job` names a local job file that does not exist.",
       bad=LOCAL.replace("scenarios/pipeline/pipeline.yml", "scenarios/pipeline/pipline.yml"),
       good=LOCAL, kinds=KINDS)
def create_job_file_missing(document: Document) -> Iterator[Finding]:
    """
    A local `create_job` path (or the `job:` of the object form) is resolved against the schedule
    file's folder, and the SDK loads it at once ("No such file or directory"). A folder is not a
    job file either.

    See: reference-yaml-schedule

    Provenance: SPEC §7.4.
    """
    found = _local_job(document)
    if found is None:
        return
    where, reference, _, referenced = found
    if referenced.exists and not referenced.path.is_dir():
        return
    if referenced.exists:
        yield Finding(f"create_job '{reference}' is a folder, not a job file "
                      f"(resolved to {_shown_path(document, reference)})", where,
                      hint="name the job's YAML file, for example './pipeline.yml'")
        return
    message = f"create_job file '{reference}' does not exist (resolved to {_shown_path(document, reference)})"
    hint = "the path is relative to the schedule file's folder"
    if is_arm_id(reference):
        hint = (f"the SDK reads the ARM id '{reference.strip()}' as a local file path; name the job's "
                "YAML file, for example './pipeline.yml'")
    folder = referenced.path.parent
    if folder.is_dir():
        try:
            candidates = sorted(p.name for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))
        except OSError:
            candidates = []
        close = closest(referenced.path.name, candidates)
        if close:
            message += f"; did you mean '{close}'?"
    yield Finding(message, where, hint=hint)


@check("AML641", "create-job-file-errors", Severity.ERROR,
       "The job file that `create_job` names has errors of its own.",
       bad=LOCAL.replace("scenarios/pipeline/pipeline.yml", "scenarios/broken-spec/job.yml"),
       good=LOCAL, kinds=KINDS)
def create_job_file_errors(document: Document) -> Iterator[Finding]:
    """
    The schedule submits the referenced job each time it fires, so every error in that file
    fails every run (or the schedule's creation, when the SDK loads the file). The file is
    linted in its own right; this reports one line at the reference with the count and the
    first error; lint the job file itself to see them all.
    """
    found = _local_job(document)
    if found is None:
        return
    where, reference, mapping, referenced = found
    if not referenced.exists or referenced.path.is_dir():
        return
    if _not_a_job(referenced, reference, _declared_type(mapping)):
        return  # AML642
    problems = referenced.problems()
    if not problems:
        return
    first = min(problems, key=lambda d: (d.line, d.column))
    message = (f"job '{reference}' has {_plural(len(problems), 'error')} "
               f"(first: {first.line}:{first.column} {first.code} {first.message})")
    yield Finding(message, where, hint=f"run `aml-lint {reference}` and fix the job file")


@check("AML642", "create-job-not-a-job", Severity.ERROR,
       "The file that `create_job` names is not a job (a component, a schedule...).",
       bad=LOCAL.replace("scenarios/pipeline/pipeline.yml", "scenarios/pipeline/components/train_model.yml"),
       good=LOCAL, kinds=KINDS)
def create_job_not_a_job(document: Document) -> Iterator[Finding]:
    """
    A schedule creates jobs: `create_job` loads the file as a job of any type (the SDK loads a
    sweep job too). A component file has no compute, no bound inputs and no job type; point at a
    pipeline job that uses it. In the object form, `type:` must match the file (a `type: pipeline`
    override cannot turn a command job into a pipeline).

    See: reference-yaml-schedule

    Provenance: EXP:s_create_job_sweep_file; SPEC §7.4.
    """
    found = _local_job(document)
    if found is None:
        return
    where, reference, mapping, referenced = found
    if not referenced.exists or referenced.path.is_dir():
        return
    reason = _not_a_job(referenced, reference, _declared_type(mapping))
    if reason:
        hint = ("point create_job at a pipeline job file whose step uses the component"
                if referenced.kind in ("commandComponent", "pipelineComponent") else
                "point create_job at a job file (type command, sweep or pipeline)")
        yield Finding(reason, where, hint=hint)


@check("AML643", "create-job-object-type", Severity.WARNING,
       "The object form of `create_job` has `type: command` or `type: spark`.",
       bad=OVERRIDES.replace("type: pipeline", "type: command"),
       good=OVERRIDES, kinds=KINDS)
def create_job_object_type(document: Document) -> Iterator[Finding]:
    """
    The docs say "Only pipeline job is supported" for a `create_job` mapping with overrides; the
    SDK also has command and spark variants. Such a schedule may work through the SDK and still be
    outside what the service documents. To schedule a command job without overrides, write
    `create_job: ./job.yml`.

    See: how-to-schedule-pipeline-job, reference-yaml-schedule

    Provenance: SPEC §7.4, §11 row 11.
    """
    create_job = _mapping(document.data).get("create_job")
    if not isinstance(create_job, dict):
        return
    declared = _declared_type(create_job)
    if declared in ("command", "spark"):
        yield Finding(
            f"create_job with `type: {declared}` and overrides: the docs support only "
            "`type: pipeline` for this form", ("create_job", "type"),
            hint="schedule a pipeline job, or give the job file as `create_job: ./job.yml` without overrides")


@check("AML644", "remote-job-without-type", Severity.ERROR,
       "An `azureml:` job with overrides in `create_job` has no `type`.",
       bad=OVERRIDES.replace("  type: pipeline\n", ""), good=OVERRIDES, kinds=KINDS)
def remote_job_without_type(document: Document) -> Iterator[Finding]:
    """
    With a local job file the SDK reads the type from the file; with a job already in the workspace
    (`job: azureml:<name>`) it cannot, and refuses overrides without `type`: "'type' must be
    specified when scheduling a remote job with updates."

    See: reference-yaml-schedule

    Provenance: SPEC §7.4.
    """
    create_job = _mapping(document.data).get("create_job")
    if not isinstance(create_job, dict) or "type" in create_job:
        return
    job = create_job.get("job")
    if not isinstance(job, str) or is_local_path(job) or not job.strip().startswith("azureml:"):
        return
    overrides = [key for key in create_job if key != "job"]
    if overrides:
        yield Finding(
            f"create_job overrides {', '.join(repr(k) for k in overrides)} of the workspace job "
            f"'{job}' without `type`: Azure ML needs the type of a remote job to apply updates",
            ("create_job",), key=True, hint="add `type: pipeline` (the type of the job being scheduled)")


def _strings(value: Any, where: Path_ = ()) -> Iterator[tuple[Path_, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, where + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, where + (index,))


def _references(document: Document, context: str) -> Iterator[tuple[Path_, expressions.Template,
                                                                    expressions.Reference]]:
    for where, text in _strings(document.data):
        if "${{" not in text:
            continue
        template = expressions.parse(text)
        for reference in template.references:
            if reference.context == context:
                yield where, template, reference


def _input_site(where: Path_) -> str | None:
    """The input name when ``where`` is a create_job input value (`x: ...` or `x: {value: ...}`)."""
    if len(where) == 3 and where[:2] == ("create_job", "inputs"):
        return str(where[2])
    if len(where) == 4 and where[:2] == ("create_job", "inputs") and where[3] == "value":
        return str(where[2])
    return None


def _job_data(document: Document) -> dict | None:
    """The referenced local job's data, when it is a job amllab reads."""
    found = _local_job(document)
    if found is None:
        return None
    _, reference, mapping, referenced = found
    if referenced.kind not in JOB_KINDS or _not_a_job(referenced, reference, _declared_type(mapping)):
        return None
    data = referenced.data
    return data if isinstance(data, dict) else None


def _kind_of_literal(value: Any) -> str | None:
    """What a job input is when it cannot take a string: "an integer", "a data input"..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, dict):
        if "value" in value:
            return _kind_of_literal(value.get("value"))
        kind = value.get("type")
        if isinstance(kind, str) and kind not in ("string",):
            return f"a {kind} input" if kind in ("integer", "number", "boolean") else f"a data input ({kind})"
        if "path" in value:
            return "a data input"
    return None


@check("AML645", "trigger-time-site", Severity.ERROR,
       "`${{creation_context.trigger_time}}` is used outside a string input of `create_job`.",
       bad=OVERRIDES.replace("  experiment_name: nightly-retrain\n",
                             "  experiment_name: nightly-retrain\n  display_name: run-${{creation_context.trigger_time}}\n"),
       good=OVERRIDES, kinds=KINDS)
def trigger_time_site(document: Document) -> Iterator[Finding]:
    """
    The time a schedule fired is available as `${{creation_context.trigger_time}}` in the **string
    inputs** of the job it creates: `create_job.inputs.<name>`. Anywhere else (a display name, a
    tag, an output path, the schedule's own fields) it is not resolved and stays literal text;
    bound to an input the job declares as a number, boolean or data input, it hands the steps a
    timestamp they cannot use. `creation_context` has no other member.

    See: how-to-schedule-pipeline-job

    Provenance: SPEC §7.3.
    """
    job_inputs: dict | None = None
    for where, template, reference in _references(document, "creation_context"):
        span = document.locate_text(where, reference.text, _occurrence(template.text, reference.start, reference.text))
        if reference.parts != ("creation_context", "trigger_time"):
            message = (f"'{reference.text}' is not a schedule expression: the only member of creation_context "
                       "is 'trigger_time'")
            yield Finding(message, where, span=span,
                          hint="write '${{creation_context.trigger_time}}'")
            continue
        name = _input_site(where)
        if name is None:
            yield Finding(
                f"'{reference.text}' is resolved only in string inputs of create_job; here it stays "
                "literal text", where, span=span,
                hint="pass it as an input (`create_job.inputs.<name>: ${{creation_context.trigger_time}}`) "
                     "and use the input in the job")
            continue
        if job_inputs is None:
            job_inputs = _mapping((_job_data(document) or {}).get("inputs"))
        declared = _kind_of_literal(job_inputs.get(name)) if name in job_inputs else None
        if declared:
            yield Finding(
                f"input '{name}' of the job is {declared}, but '{reference.text}' is a string "
                "(the trigger time)", where, span=span,
                hint="bind the trigger time to a string input of the job")


@check("AML646", "job-name-site", Severity.WARNING,
       "`${{name}}` is used in `create_job` outside an output path (or an input).",
       bad=OVERRIDES.replace("  experiment_name: nightly-retrain\n",
                             "  experiment_name: nightly-retrain\n  tags:\n    run: ${{name}}\n"),
       good=OVERRIDES, kinds=KINDS)
def job_name_site(document: Document) -> Iterator[Finding]:
    """
    `${{name}}`, the name of the job a trigger creates, is documented for output paths ("allowed in
    pipeline outputs paths"), where it gives every run its own folder. Microsoft's
    cron-with-settings example also passes it as an input value, so inputs are not reported, nor is
    the `path` of an inline `import_data`, where the data import examples put it. Elsewhere (tags,
    names, settings, the schedule's own fields) it is not documented to be resolved and may stay
    literal text.

    See: how-to-schedule-pipeline-job,
         https://github.com/Azure/azureml-examples/blob/main/cli/schedules/cron-with-settings-job-schedule.yml,
         https://github.com/Azure/azureml-examples/blob/main/cli/assets/data/data_import_schedule_database_inline.yml

    Provenance: SPEC §7.3.
    """
    for where, template, reference in _references(document, "name"):
        if reference.parts != ("name",):
            continue
        if where[:2] in (("create_job", "outputs"), ("create_job", "inputs")):
            continue
        if where == ("import_data", "path"):
            continue  # where the data import examples put it
        span = document.locate_text(where, reference.text, _occurrence(template.text, reference.start, reference.text))
        yield Finding(
            f"'{reference.text}' is documented only in output paths of create_job; here it may stay "
            "literal text", where, span=span,
            hint="use it in `create_job.outputs.<name>.path`, or pass it as an input")


@check("AML647", "unknown-override-port", Severity.WARNING,
       "`create_job` overrides an input or output that the job file does not declare.",
       bad=LOCAL.replace("create_job: scenarios/pipeline/pipeline.yml",
                         "create_job:\n  type: pipeline\n  job: scenarios/pipeline/pipeline.yml\n"
                         "  inputs:\n    raw_dataset:\n      type: uri_folder\n      path: azureml:churn-raw:4\n"),
       good=LOCAL.replace("create_job: scenarios/pipeline/pipeline.yml",
                          "create_job:\n  type: pipeline\n  job: scenarios/pipeline/pipeline.yml\n"
                          "  inputs:\n    raw_data:\n      type: uri_folder\n      path: azureml:churn-raw:4\n"),
       kinds=KINDS)
def unknown_override_port(document: Document) -> Iterator[Finding]:
    """
    The overrides of the object form are deep-merged into the job file: an override for an input
    the job does not declare adds a new input that no step reads, while the input that was meant
    keeps its old value. Checked when the job is a local file amllab can read.

    See: reference-yaml-schedule

    Provenance: SPEC §7.4.
    """
    create_job = _mapping(document.data).get("create_job")
    if not isinstance(create_job, dict):
        return
    job = _job_data(document)
    if job is None:
        return
    reference = str(create_job.get("job"))
    for section, noun in (("inputs", "input"), ("outputs", "output")):
        overrides = create_job.get(section)
        if not isinstance(overrides, dict):
            continue
        declared = _mapping(job.get(section))
        for name in overrides:
            if name in declared:
                continue
            message = f"create_job overrides {noun} '{name}', which '{reference}' does not declare"
            close = closest(str(name), declared)
            if close:
                message += f"; did you mean '{close}'?"
            known = ", ".join(str(k) for k in declared) or "none"
            yield Finding(
                message, ("create_job", section, name), key=True,
                hint=f"the job declares {section}: {known}; an unknown one is added without effect")


# ----------------------------------------------------------------------------- import_data, create_monitor
IMPORT_INLINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: nightly_orders_import
trigger:
  type: cron
  expression: "30 1 * * *"
  time_zone: UTC
import_data:
  type: mltable
  name: orders_snapshot
  path: azureml://datastores/workspaceblobstore/paths/imports/orders/
  source:
    type: database
    query: select * from orders
    connection: azureml:orders_db
"""

MONITOR = """\
$schema: https://azuremlschemas.azureedge.net/latest/monitorSchedule.schema.json
name: churn_model_monitor
trigger:
  type: recurrence
  frequency: day
  interval: 1
  schedule:
    hours: 4
    minutes: 0
create_monitor:
  compute:
    instance_type: standard_e4s_v3
    runtime_version: "3.4"
  monitoring_target:
    ml_task: classification
    endpoint_deployment_id: azureml:churn-endpoint:blue
"""


def _import_file(document: Document) -> tuple[str, Referenced | None] | None:
    """The `import_data` file reference and what it resolves to (None: not a local path)."""
    value = _mapping(document.data).get("import_data")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    return text, resolve(document, text) if is_local_path(text) else None


@check("AML648", "import-data-file", Severity.ERROR,
       "The data import file that `import_data` names is missing or is not a data import.",
       bad=IMPORT_INLINE.split("import_data:")[0] + "import_data: ./imports/orders_import.yml\n",
       good=IMPORT_INLINE, kinds=KINDS)
def import_data_file(document: Document) -> Iterator[Finding]:
    """
    `import_data` is a data import written inline or the path of a YAML file holding one, resolved
    against the schedule file's folder (Microsoft's `simple_import_schedule.yml` example names
    `./snowflake-import.yml`). azure-ai-ml reads the file when it loads the schedule
    (`ImportDataFileRefField`), so a missing file, or one that is not a data import (`name`, `path`
    for the imported data, `source` with `type: database` and a `query`, or `type: file_system` and
    a `path`, and a `connection`), stops the schedule from being created. The file's content is
    checked as the inline form is; an `azureml:` reference is not a form `import_data` takes. The
    older `file:./import.yml` form is read too (AML810).

    See: reference-yaml-schedule,
         https://github.com/Azure/azureml-examples/blob/main/cli/assets/data/simple_import_schedule.yml
    """
    found = _import_file(document)
    if found is None:
        return
    reference, referenced = found
    where = ("import_data",)
    if referenced is None:
        yield Finding(
            f"import_data '{reference}' is not a file: import_data is the path of a data import "
            "YAML file or an inline data import", where,
            hint="write the data import inline (type, name, path, source) or point at its YAML file")
        return
    shown = _shown_path(document, reference)
    if not referenced.exists:
        yield Finding(f"data import file '{reference}' does not exist (resolved to {shown})",
                      where, hint="the path is relative to the schedule file's folder")
        return
    if referenced.path.is_dir() or referenced.document is None:
        what = "a folder" if referenced.path.is_dir() else "not readable YAML"
        yield Finding(f"data import file '{reference}' is {what} (resolved to {shown})",
                      where, hint="name the data import's YAML file")
        return
    for problem in shape_problems(referenced.data, "schedule", "dataImport", "a data import"):
        yield Finding(f"data import file '{reference}': {problem}", where,
                      hint="a data import has name, path (where the data lands) and source "
                           "(type, connection and a query or path)")


@check("AML649", "monitor-signals-unchecked", Severity.INFO,
       "The settings of a monitor's signals are not checked (only their type).",
       bad=MONITOR + "  monitoring_signals:\n    drift:\n      type: data_drift\n"
                     "      features:\n        top_n_feature_importance: 10\n",
       good=MONITOR, kinds=KINDS)
def monitor_signals_unchecked(document: Document) -> Iterator[Finding]:
    """
    A model monitor (`create_monitor`) is checked for its shape: `compute` (serverless Spark,
    `instance_type` and `runtime_version`), `monitoring_target` (`ml_task`,
    `endpoint_deployment_id`, `model_id`), `alert_notification`, and the `type` of each
    monitoring signal (`data_drift`, `data_quality`, `prediction_drift`,
    `feature_attribution_drift`, `model_performance`, `custom`, `generation_safety_quality`,
    `generation_token_statistics`). A signal's own settings (`reference_data`,
    `production_data`, `features`, `metric_thresholds`...) have a shape per signal type and
    per service version that amllab does not model; this info (shown with `-v`) names the
    signals left to `az ml schedule create` to check.
    """
    monitor = _mapping(document.data).get("create_monitor")
    signals = _mapping(monitor).get("monitoring_signals") if isinstance(monitor, dict) else None
    if not isinstance(signals, dict):
        return
    names = [str(name) for name, signal in signals.items() if isinstance(signal, dict) and len(signal) > 1]
    if not names:
        return
    shown = ", ".join(f"'{name}'" for name in names)
    yield Finding(
        f"the settings of monitoring {'signal' if len(names) == 1 else 'signals'} {shown} are not "
        "checked by amllab beyond their type", ("create_monitor", "monitoring_signals"), key=True,
        hint="`az ml schedule create` validates them against the service's schema")


__all__ = ["parse_datetime"]
