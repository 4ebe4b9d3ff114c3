"""runner.schedules and `aml-run schedule` / `aml-run scheduler`: the runner's layer over
validator.triggers (whose own rules tests/validator/test_triggers.py pins).

Time is driven by a fake clock (its sleep moves it forward), never by sleeping. The rules
tests count submissions through a recording stand-in for jobs.submit; the end-to-end test
submits tiny real command jobs and waits for every one of them."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from croniter import croniter
from dateutil import rrule
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from amlrun import aml_run
from runner import jobs, schedules
from runner.workspace import Workspace
from validator.triggers import fire_times

UTC = timezone.utc
T0 = datetime(2027, 1, 4, 12, 0, 30, tzinfo=UTC)  # a Monday


# -- helpers ------------------------------------------------------------------------------------

def write_schedule(folder: Path, name: str, trigger: dict[str, Any], create_job: Any = "./job.yml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    job = folder / "job.yml"
    if not job.exists():
        job.write_text("$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json\n"
                       "command: echo hi\nenvironment:\n  image: python:3.11-slim\n")
    body = {"$schema": "https://azuremlschemas.azureedge.net/latest/schedule.schema.json", "name": name,
            "trigger": trigger, "create_job": create_job}
    path = folder / f"{name}.yml"
    path.write_text(json.dumps(body, indent=2))  # JSON is YAML
    return path


class Clock:
    """A fake clock: ``sleep`` moves it forward by what was asked."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += timedelta(seconds=seconds)


class Recorder:
    """Stands in for jobs.submit: records what the scheduler would have submitted."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def __call__(self, file: Path, workspace: Workspace, name: str, overrides: list[str], warn: Any = None) -> str:
        if self.fail:
            from runner.errors import RunnerError

            raise RunnerError("no such compute\nsecond line")
        self.calls.append({"file": file, "name": name, "overrides": overrides})
        return name

    def times(self) -> list[str]:
        return [next(o for o in c["overrides"] if o.startswith("tags.trigger_time="))[19:-1] for c in self.calls]


def run_until(workspace: Workspace, clock: Clock, end: datetime, submit: Any) -> list[dict[str, Any]]:
    # poll large: the loop wakes at each fire time anyway, and each pass costs file reads.
    return schedules.run_scheduler(workspace, clock=clock, sleep=clock.sleep, stop=lambda: clock.now >= end,
                                   poll=3600, submit=submit)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / ".amllab")


def create(workspace: Workspace, tmp_path: Path, name: str, trigger: dict[str, Any],
           now: datetime = T0, **extra: Any) -> dict[str, Any]:
    return schedules.create(workspace, write_schedule(tmp_path / "specs", name, trigger, **extra), now=now)


def next_times(workspace: Workspace, name: str, count: int, now: datetime) -> list[tuple[str, str]]:
    return [(row["time"], row["utc"]) for row in schedules.show(workspace, name, next=count, now=now)["next_fire_times"]]


# -- next fire times, in the zone and in UTC ----------------------------------------------------

NOW = datetime(2027, 1, 4, 12, 0, tzinfo=UTC)

PINNED = [
    ("every 15 minutes", {"type": "recurrence", "frequency": "minute", "interval": 15,
                          "start_time": "2027-01-04T11:50:00"},
     ["2027-01-04T12:05:00+00:00", "2027-01-04T12:20:00+00:00", "2027-01-04T12:35:00+00:00"]),
    ("every 5 hours", {"type": "recurrence", "frequency": "hour", "interval": 5, "start_time": "2027-01-04T01:10:00"},
     ["2027-01-04T16:10:00+00:00", "2027-01-04T21:10:00+00:00", "2027-01-05T02:10:00+00:00"]),
    ("every 3 days at hours x minutes", {"type": "recurrence", "frequency": "day", "interval": 3,
                                         "schedule": {"hours": [8, 20], "minutes": [0, 45]},
                                         "start_time": "2027-01-03T00:00:00"},
     ["2027-01-06T08:00:00+00:00", "2027-01-06T08:45:00+00:00", "2027-01-06T20:00:00+00:00",
      "2027-01-06T20:45:00+00:00", "2027-01-09T08:00:00+00:00"]),
    ("every 2 weeks on week_days", {"type": "recurrence", "frequency": "week", "interval": 2,
                                    "schedule": {"hours": 7, "minutes": 30, "week_days": ["tuesday", "Friday"]},
                                    "start_time": "2026-12-28T00:00:00"},
     ["2027-01-12T07:30:00+00:00", "2027-01-15T07:30:00+00:00", "2027-01-26T07:30:00+00:00"]),
    ("monthly on month_days", {"type": "recurrence", "frequency": "month", "interval": 1,
                               "schedule": {"hours": 6, "minutes": 0, "month_days": [1, 15, 30]},
                               "start_time": "2027-01-01T00:00:00"},
     ["2027-01-15T06:00:00+00:00", "2027-01-30T06:00:00+00:00", "2027-02-01T06:00:00+00:00",
      "2027-02-15T06:00:00+00:00", "2027-03-01T06:00:00+00:00"]),
    ("every 2 months, plain", {"type": "recurrence", "frequency": "month", "interval": 2,
                               "start_time": "2026-12-20T09:00:00"},
     ["2027-02-20T09:00:00+00:00", "2027-04-20T09:00:00+00:00"]),
    ("cron with names and ranges", {"type": "cron", "expression": "0 9-17/4 * * MON-wed"},
     ["2027-01-04T13:00:00+00:00", "2027-01-04T17:00:00+00:00", "2027-01-05T09:00:00+00:00"]),
    ("cron with a day list", {"type": "cron", "expression": "15 10 * * sat,SUN"},
     ["2027-01-09T10:15:00+00:00", "2027-01-10T10:15:00+00:00", "2027-01-16T10:15:00+00:00"]),
    ("start_time in the future", {"type": "cron", "expression": "0 * * * *", "start_time": "2027-02-01T10:30:00"},
     ["2027-02-01T11:00:00+00:00", "2027-02-01T12:00:00+00:00"]),
    ("end_time passed", {"type": "cron", "expression": "0 * * * *", "end_time": "2027-01-03T00:00:00"}, []),
]


@pytest.mark.parametrize("title, trigger, expected", PINNED, ids=[p[0] for p in PINNED])
def test_next_fire_times_are_pinned(workspace: Workspace, tmp_path: Path, title: str, trigger: dict,
                                    expected: list[str]) -> None:
    create(workspace, tmp_path, "s", trigger, now=NOW - timedelta(days=30))
    count = len(expected) or 3
    assert next_times(workspace, "s", count, NOW) == [(t, t.replace("+00:00", "Z")) for t in expected]


def test_next_fire_times_across_a_dst_change_in_the_zone_and_in_utc(workspace: Workspace, tmp_path: Path) -> None:
    """Pacific Standard Time (a Windows name) starts DST on 2027-03-14: 09:00 stays 09:00 there,
    and moves from 17:00 to 16:00 UTC."""
    create(workspace, tmp_path, "la", {"type": "recurrence", "frequency": "day", "interval": 1,
                                       "schedule": {"hours": 9, "minutes": 0},
                                       "time_zone": "Pacific Standard Time"}, now=datetime(2027, 3, 1, tzinfo=UTC))
    assert next_times(workspace, "la", 3, datetime(2027, 3, 12, 18, tzinfo=UTC)) == [
        ("2027-03-13T09:00:00-08:00", "2027-03-13T17:00:00Z"),
        ("2027-03-14T09:00:00-07:00", "2027-03-14T16:00:00Z"),
        ("2027-03-15T09:00:00-07:00", "2027-03-15T16:00:00Z")]


def test_a_wall_time_that_dst_skips_fires_one_gap_later_and_once(workspace: Workspace, tmp_path: Path) -> None:
    """weekly-retrain's 02:30 on Sunday 2027-03-28 does not exist in Amsterdam (02:00 -> 03:00)."""
    create(workspace, tmp_path, "wr", {"type": "recurrence", "frequency": "week", "interval": 1,
                                       "schedule": {"hours": 2, "minutes": 30, "week_days": "sunday"},
                                       "start_time": "2027-01-03T00:00:00", "time_zone": "W. Europe Standard Time"})
    assert next_times(workspace, "wr", 3, datetime(2027, 3, 20, tzinfo=UTC)) == [
        ("2027-03-21T02:30:00+01:00", "2027-03-21T01:30:00Z"),
        ("2027-03-28T03:30:00+02:00", "2027-03-28T01:30:00Z"),
        ("2027-04-04T02:30:00+02:00", "2027-04-04T00:30:00Z")]
    # Every half hour through the skipped hour: 02:00 and 02:30 land on 03:00 and 03:30, once each.
    create(workspace, tmp_path, "half", {"type": "cron", "expression": "*/30 1-3 * * *",
                                         "time_zone": "W. Europe Standard Time"})
    assert next_times(workspace, "half", 5, datetime(2027, 3, 27, 23, 59, tzinfo=UTC)) == [
        ("2027-03-28T01:00:00+01:00", "2027-03-28T00:00:00Z"), ("2027-03-28T01:30:00+01:00", "2027-03-28T00:30:00Z"),
        ("2027-03-28T03:00:00+02:00", "2027-03-28T01:00:00Z"), ("2027-03-28T03:30:00+02:00", "2027-03-28T01:30:00Z"),
        ("2027-03-29T01:00:00+02:00", "2027-03-28T23:00:00Z")]


def test_without_start_time_a_recurrence_starts_at_creation(workspace: Workspace, tmp_path: Path) -> None:
    shown = create(workspace, tmp_path, "now", {"type": "recurrence", "frequency": "hour", "interval": 6})
    assert shown["start_time"] == "2027-01-04T12:00:30"
    assert schedules.due(schedules._read(schedules._path(workspace, "now")), T0) == [T0]  # fires at once


# -- the scheduler, with a fake clock -----------------------------------------------------------

EVERY_10 = {"type": "cron", "expression": "*/10 * * * *"}


def test_one_job_per_due_time(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "ten", EVERY_10)
    clock, submit = Clock(T0), Recorder()
    fired = run_until(workspace, clock, T0 + timedelta(minutes=35), submit)
    assert submit.times() == ["2027-01-04T12:10:00Z", "2027-01-04T12:20:00Z", "2027-01-04T12:30:00Z"]
    assert [f["job"] for f in fired] == [c["name"] for c in submit.calls]
    shown = schedules.show(workspace, "ten")
    assert shown["last_fired"] == "2027-01-04T12:30:00+00:00" and shown["jobs"] == [c["name"] for c in submit.calls]
    overrides = submit.calls[0]["overrides"]
    assert 'display_name="ten-20270104T121000Z"' in overrides and 'experiment_name="ten"' in overrides


def test_a_restart_does_not_fire_a_time_twice(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "ten", EVERY_10)
    clock, submit = Clock(T0), Recorder()
    run_until(workspace, clock, T0 + timedelta(minutes=21), submit)
    assert len(submit.calls) == 2
    # Stopped at 12:21:30; started again at once, and again later: 12:20 is not fired again.
    run_until(workspace, Clock(T0 + timedelta(minutes=21)), T0 + timedelta(minutes=26), submit)
    assert len(submit.calls) == 2
    run_until(workspace, Clock(T0 + timedelta(minutes=26)), T0 + timedelta(minutes=36), submit)
    assert submit.times()[2:] == ["2027-01-04T12:30:00Z"]


def test_times_missed_while_down_fire_once(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "ten", EVERY_10)
    clock, submit = Clock(T0 + timedelta(hours=1, minutes=5)), Recorder()  # 13:05: 6 times missed
    fired = run_until(workspace, clock, T0 + timedelta(hours=1, minutes=25), submit)
    assert submit.times() == ["2027-01-04T13:00:00Z", "2027-01-04T13:10:00Z", "2027-01-04T13:20:00Z"]
    assert fired[0]["missed"] == 5 and "missed" not in fired[1]
    # --once is one such pass.
    submit = Recorder()
    schedules.run_scheduler(workspace, clock=Clock(T0 + timedelta(hours=3)), sleep=pytest.fail, once=True,
                            submit=submit)
    assert submit.times() == ["2027-01-04T15:00:00Z"]


def test_disabled_does_not_fire_and_enable_owes_nothing(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "ten", EVERY_10)
    schedules.disable(workspace, "ten")
    clock, submit = Clock(T0), Recorder()
    run_until(workspace, clock, T0 + timedelta(minutes=45), submit)
    assert submit.calls == [] and schedules.list_schedules(workspace, now=T0)[0]["is_enabled"] is False
    clock = Clock(T0 + timedelta(minutes=45))
    schedules.enable(workspace, "ten", now=clock.now)  # 12:10 ... 12:40 passed while disabled
    run_until(workspace, clock, T0 + timedelta(minutes=65), submit)
    assert submit.times() == ["2027-01-04T12:50:00Z", "2027-01-04T13:00:00Z"]


def test_start_time_and_end_time_bound_the_firing(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "window", {**EVERY_10, "start_time": "2027-01-04T12:15:00",
                                           "end_time": "2027-01-04T12:40:00"})
    clock, submit = Clock(T0), Recorder()
    run_until(workspace, clock, T0 + timedelta(hours=5), submit)
    assert submit.times() == ["2027-01-04T12:20:00Z", "2027-01-04T12:30:00Z", "2027-01-04T12:40:00Z"]
    assert schedules.next_due(workspace, clock.now) is None  # end_time passed: nothing to wait for


def test_a_failed_submission_is_recorded_and_not_retried(workspace: Workspace, tmp_path: Path) -> None:
    create(workspace, tmp_path, "ten", EVERY_10)
    clock, failing = Clock(T0), Recorder(fail=True)
    fired = run_until(workspace, clock, T0 + timedelta(minutes=15), failing)
    assert fired == [{"schedule": "ten", "time": "2027-01-04T12:10:00+00:00", "by": "scheduler",
                      "error": "no such compute"}]
    assert schedules.show(workspace, "ten")["last_fired"] == "2027-01-04T12:10:00+00:00"


def test_object_form_overrides_are_deep_merged_and_trigger_time_substituted(workspace: Workspace,
                                                                            tmp_path: Path) -> None:
    create(workspace, tmp_path, "obj", EVERY_10,
           create_job={"job": "./job.yml", "experiment_name": "nightly",
                       "tags": {"team": "ml"}, "inputs": {"when": "${{creation_context.trigger_time}}"}})
    submit = Recorder()
    schedules.trigger(workspace, "obj", now=T0, submit=submit)
    overrides = submit.calls[0]["overrides"]
    assert overrides[:3] == ['experiment_name="nightly"', 'tags.team="ml"', 'inputs.when="2027-01-04T12:00:30Z"']
    assert not any(o.startswith("experiment_name=\"obj\"") for o in overrides)


# -- real jobs ------------------------------------------------------------------------------------

def test_scheduler_and_trigger_submit_real_jobs_that_outlive_the_schedule(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / ".amllab")
    schedules.create(workspace, write_schedule(tmp_path, "tiny", {"type": "cron", "expression": "*/5 * * * *"}),
                     now=T0)
    clock = Clock(T0)
    fired = schedules.run_scheduler(workspace, clock=clock, sleep=clock.sleep,
                                    stop=lambda: clock.now >= T0 + timedelta(minutes=11), poll=3600)
    again = schedules.run_scheduler(workspace, clock=Clock(T0 + timedelta(minutes=11)), sleep=pytest.fail,
                                    once=True)
    manual = schedules.trigger(workspace, "tiny")
    names = [f["job"] for f in fired] + [manual]
    assert len(names) == 3 and again == []
    ended = [jobs.wait(workspace, name, timeout=120) for name in names]
    assert [e["status"] for e in ended] == ["Completed"] * 3
    first = jobs.show(workspace, names[0])
    assert first["display_name"] == "tiny-20270104T120500Z" and first["tags"]["schedule_name"] == "tiny"
    assert schedules.delete(workspace, "tiny")["jobs_kept"] == names
    assert set(names) <= set(workspace.job_names())
    assert schedules.list_schedules(workspace) == []


# -- the command line ---------------------------------------------------------------------------

def test_cli_schedule_verbs(tmp_path: Path, repo_root: Path) -> None:
    env = {"AMLLAB_WORKSPACE": str(tmp_path / ".amllab")}
    lab = repo_root / "scenarios" / "weekly-retrain" / "schedule.yml"
    created = aml_run("schedule", "create", "--file", str(lab), "-o", "json", cwd=tmp_path, env=env)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["create_job"] == str(repo_root / "scenarios" / "pipeline" / "pipeline.yml")
    shown = aml_run("schedule", "show", "weekly-retrain", "--next", "5", "-o", "json", cwd=tmp_path, env=env)
    rows = json.loads(shown.stdout)["next_fire_times"]
    assert len(rows) == 5
    for row in rows:
        local, utc = datetime.fromisoformat(row["time"]), datetime.fromisoformat(row["utc"].replace("Z", "+00:00"))
        assert local == utc and local.weekday() == 6 and (local.hour, local.minute) in ((2, 30), (3, 30))
    table = aml_run("schedule", "show", "weekly-retrain", "--next", "2", cwd=tmp_path, env=env).stdout
    assert "Next Fire" in table and "W. Europe Standard Time" in table
    assert "every week at 02:30 on week days sunday" in aml_run("schedule", "list", cwd=tmp_path, env=env).stdout
    disabled = aml_run("schedule", "disable", "weekly-retrain", "-o", "yaml", cwd=tmp_path, env=env)
    assert "is_enabled: false" in disabled.stdout
    refused = aml_run("schedule", "show", "nope", cwd=tmp_path, env=env)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    # The pipeline's components are not registered in this workspace: refused as `job create` would.
    refused = aml_run("schedule", "trigger", "weekly-retrain", cwd=tmp_path, env=env)
    assert refused.returncode == 1 and "not submitted" in refused.stderr and "Traceback" not in refused.stderr
    bad = write_schedule(tmp_path / "bad", "bad", {"type": "cron", "expression": "0 25 * * *"})
    refused = aml_run("schedule", "create", "--file", str(bad), cwd=tmp_path, env=env)
    assert refused.returncode == 1 and "AML6" in refused.stderr and "Traceback" not in refused.stderr
    once = aml_run("scheduler", "--once", cwd=tmp_path, env=env)
    assert once.returncode == 0 and "watching" in once.stdout
    deleted = aml_run("schedule", "delete", "weekly-retrain", "-o", "json", cwd=tmp_path, env=env)
    assert json.loads(deleted.stdout)["deleted"] is True


# -- croniter and dateutil.rrule as independent oracles -------------------------------------------

_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _item(low: int, high: int, names: tuple[str, ...] | None = None) -> st.SearchStrategy[str]:
    def value(n: int) -> st.SearchStrategy[str]:
        return st.sampled_from([str(n), names[n].upper(), names[n]]) if names else st.just(str(n))

    single = st.integers(low, high).flatmap(value)
    # Ranges are written low-high: NCrontab swaps a backwards range, croniter wraps it around.
    # (and croniter reads a one-value range such as 5-5 as the whole field: left out too).
    ranged = st.tuples(st.integers(low, high - 1), st.integers(1, high - low)).map(
        lambda t: (t[0], min(high, t[0] + t[1]))).flatmap(
        lambda ab: st.tuples(value(ab[0]), value(ab[1])).map(lambda t: f"{t[0]}-{t[1]}"))
    stepped = st.tuples(st.sampled_from(["*", f"{low}-{high}"]), st.integers(1, high - low)).map(
        lambda t: f"{t[0]}/{t[1]}")
    return st.one_of(single, ranged, stepped)


def _field(low: int, high: int, names: tuple[str, ...] | None = None) -> st.SearchStrategy[str]:
    return st.one_of(st.just("*"), st.lists(_item(low, high, names), min_size=1, max_size=3).map(",".join))


@settings(max_examples=80, deadline=None)
@given(minute=_field(0, 59), hour=_field(0, 23), dom=_field(1, 31), month=_field(1, 12),
       dow=_field(0, 6, _DAY_NAMES),
       after=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1)))
def test_cron_agrees_with_croniter_once_days_and_months_are_stars(minute: str, hour: str, dom: str, month: str,
                                                                  dow: str, after: datetime) -> None:
    """Azure ML ignores DAYS and MONTHS; croniter honours them (and ORs DAYS with DAYS-OF-WEEK):
    the service's expression fires exactly as croniter's with those two fields made '*'."""
    ours = fire_times({"type": "cron", "expression": f"{minute} {hour} {dom} {month} {dow}"}, after, count=6)
    oracle = croniter(f"{minute} {hour} * * {dow}", after)
    assert ours == [oracle.get_next(datetime) for _ in range(6)]


_FREQ = {"minute": rrule.MINUTELY, "hour": rrule.HOURLY, "day": rrule.DAILY, "week": rrule.WEEKLY,
         "month": rrule.MONTHLY}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@settings(max_examples=80, deadline=None)
@given(frequency=st.sampled_from(sorted(_FREQ)), interval=st.integers(1, 5),
       start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1)).map(
           lambda d: d.replace(second=0, microsecond=0)))
def test_plain_recurrence_agrees_with_rrule(frequency: str, interval: int, start: datetime) -> None:
    trigger = {"type": "recurrence", "frequency": frequency, "interval": interval, "start_time": start.isoformat()}
    oracle = rrule.rrule(_FREQ[frequency], interval=interval, dtstart=start, count=6)
    assert fire_times(trigger, start - timedelta(minutes=1), count=6) == list(oracle)


@settings(max_examples=80, deadline=None)
@given(frequency=st.sampled_from(["day", "week", "month"]), interval=st.integers(1, 4),
       hours=st.lists(st.integers(0, 23), min_size=1, max_size=3, unique=True),
       minutes=st.lists(st.integers(0, 59), min_size=1, max_size=3, unique=True),
       week_days=st.lists(st.sampled_from(_WEEKDAYS), max_size=3, unique=True),
       month_days=st.lists(st.integers(1, 31), max_size=3, unique=True),
       start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1)).map(
           lambda d: d.replace(second=0, microsecond=0)))
def test_recurrence_pattern_agrees_with_rrule(frequency: str, interval: int, hours: list[int], minutes: list[int],
                                              week_days: list[str], month_days: list[int], start: datetime) -> None:
    """Weeks count from Monday (rrule's wkst=MO). For a month with both week_days and
    month_days the two disagree (Azure ML: either; rrule: both), so that case is left out."""
    pattern: dict[str, Any] = {"hours": hours, "minutes": minutes}
    extra: dict[str, Any] = {}
    if frequency == "week" and week_days:
        pattern["week_days"] = week_days
        extra["byweekday"] = [_WEEKDAYS.index(d) for d in week_days]
    if frequency == "month":
        assume(not (week_days and month_days))
        if week_days:
            pattern["week_days"] = week_days
            extra["byweekday"] = [_WEEKDAYS.index(d) for d in week_days]
        if month_days:
            pattern["month_days"] = month_days
            extra["bymonthday"] = month_days
    trigger = {"type": "recurrence", "frequency": frequency, "interval": interval, "schedule": pattern,
               "start_time": start.isoformat()}
    oracle = rrule.rrule(_FREQ[frequency], interval=interval, dtstart=start, wkst=rrule.MO, byhour=hours,
                         byminute=minutes, bysecond=0, count=8, **extra)
    assert fire_times(trigger, start - timedelta(minutes=1), count=8) == list(oracle)


def test_where_croniter_and_rrule_read_it_otherwise() -> None:
    """The differences the oracle tests step around, pinned so a change is noticed."""
    after = datetime(2027, 1, 1)
    # DAYS and MONTHS: ignored by Azure ML, honoured (and ORed with DAYS-OF-WEEK) by croniter.
    assert fire_times({"type": "cron", "expression": "0 6 15 * 1"}, after, count=3)[2] == datetime(2027, 1, 18, 6)
    assert [croniter("0 6 15 * 1", after).get_next(datetime) for _ in range(1)] == [datetime(2027, 1, 4, 6)]
    assert croniter("0 6 15 * 1", datetime(2027, 1, 11, 7)).get_next(datetime) == datetime(2027, 1, 15, 6)
    # A backwards range: NCrontab swaps the ends (Mon-Fri), croniter wraps around the week.
    ours = fire_times({"type": "cron", "expression": "0 0 * * FRI-MON"}, after, count=2)
    assert ours == [datetime(2027, 1, 4), datetime(2027, 1, 5)]
    assert croniter("0 0 * * FRI-MON", after).get_next(datetime) == datetime(2027, 1, 2)
    # A month with both month_days and week_days: Azure ML fires on either, rrule on both.
    trigger = {"type": "recurrence", "frequency": "month", "interval": 1, "start_time": "2027-01-01T00:00:00",
               "schedule": {"hours": 0, "minutes": 0, "month_days": [13], "week_days": ["monday"]}}
    assert fire_times(trigger, after, count=1) == [datetime(2027, 1, 4)]
    assert rrule.rrule(rrule.MONTHLY, dtstart=after, bymonthday=[13], byweekday=[0], count=1)[0] == \
        datetime(2027, 9, 13)


def test_the_scenario_shows_how_to_list_next_fires(repo_root: Path) -> None:
    text = (repo_root / "scenarios" / "weekly-retrain" / "scenario.yml").read_text()
    assert "aml-run schedule show weekly-retrain --next 5" in " ".join(textwrap.dedent(text).split())


def test_a_schedules_job_gets_its_own_name_and_trigger_time_for_the_macros(tmp_path: Path) -> None:
    # The two expressions the service resolves in create_job (how-to-schedule-pipeline-job):
    # ${{name}} is the created job's name, ${{creation_context.trigger_time}} its trigger time.
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "job.yml").write_text(textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
        command: echo "run=${{inputs.run}} when=${{inputs.when}}" > outputs/seen.txt
        inputs:
          run: placeholder
          when: placeholder
        environment:
          image: python:3.11-slim
        """))
    workspace = Workspace(tmp_path / ".amllab")
    schedules.create(workspace, write_schedule(folder, "macros", EVERY_10, create_job={
        "job": "./job.yml", "inputs": {"run": "${{name}}", "when": "at-${{ creation_context.trigger_time }}"}}),
        now=T0)
    name = schedules.trigger(workspace, "macros", now=T0)
    assert jobs.wait(workspace, name, timeout=120)["status"] == "Completed"
    seen = (workspace.run_dir(name) / "wd" / "outputs" / "seen.txt").read_text()
    assert seen == f"run={name} when=at-2027-01-04T12:00:30Z\n"
