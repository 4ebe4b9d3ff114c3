"""validator.triggers: when a schedule fires (the quiz's next_fires answers rest on it)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.triggers import TriggerError, fire_times


def fmt(times: list[datetime]) -> list[str]:
    return [t.strftime("%a %Y-%m-%d %H:%M") for t in times]


def test_cron_weekday_and_time() -> None:
    trigger = {"type": "cron", "expression": "30 9 * * 1-5"}  # 09:30 on weekdays
    # 2027-01-01 is a Friday.
    assert fmt(fire_times(trigger, datetime(2027, 1, 1, 9, 30), count=2)) == [
        "Mon 2027-01-04 09:30", "Tue 2027-01-05 09:30"]


def test_cron_ignores_days_and_months_fields() -> None:
    """Azure ML treats the DAYS and MONTHS fields as '*' (SPEC §7.2): '0 6 15 7 *' fires daily."""
    trigger = {"type": "cron", "expression": "0 6 15 7 *"}
    assert fmt(fire_times(trigger, datetime(2027, 3, 1), count=2)) == ["Mon 2027-03-01 06:00", "Tue 2027-03-02 06:00"]


def test_cron_sunday_is_zero_and_names_work() -> None:
    after = datetime(2027, 1, 1)
    assert fire_times({"type": "cron", "expression": "0 0 * * 0"}, after) == \
        fire_times({"type": "cron", "expression": "0 0 * * SUN"}, after) == [datetime(2027, 1, 3)]


def test_cron_respects_start_and_end() -> None:
    trigger = {"type": "cron", "expression": "0 * * * *", "start_time": "2027-01-01T10:30:00",
               "end_time": "2027-01-01T13:00:00"}
    assert fire_times(trigger, datetime(2027, 1, 1), count=None, before=datetime(2027, 1, 2)) == [
        datetime(2027, 1, 1, h) for h in (11, 12, 13)]


def test_recurrence_without_schedule_steps_from_start_time() -> None:
    trigger = {"type": "recurrence", "frequency": "hour", "interval": 4, "start_time": "2027-01-01T01:15:00"}
    assert fire_times(trigger, datetime(2027, 1, 1, 6), count=2) == [datetime(2027, 1, 1, 9, 15),
                                                                     datetime(2027, 1, 1, 13, 15)]


def test_weekly_recurrence_with_schedule() -> None:
    trigger = {"type": "recurrence", "frequency": "week", "interval": 1,
               "schedule": {"hours": [10], "minutes": [0], "week_days": ["Monday", "thursday"]},
               "start_time": "2027-01-01T00:00:00"}
    assert fmt(fire_times(trigger, datetime(2027, 1, 4, 10, 0), count=3)) == [
        "Thu 2027-01-07 10:00", "Mon 2027-01-11 10:00", "Thu 2027-01-14 10:00"]


def test_every_other_week_counts_from_start_weeks() -> None:
    trigger = {"type": "recurrence", "frequency": "week", "interval": 2,
               "schedule": {"hours": 8, "minutes": 0, "week_days": "monday"}, "start_time": "2027-01-04T00:00:00"}
    assert fmt(fire_times(trigger, datetime(2027, 1, 4), count=3)) == [
        "Mon 2027-01-04 08:00", "Mon 2027-01-18 08:00", "Mon 2027-02-01 08:00"]


def test_monthly_on_the_31st_skips_short_months() -> None:
    trigger = {"type": "recurrence", "frequency": "month", "interval": 1,
               "schedule": {"hours": 0, "minutes": 0, "month_days": [31]}, "start_time": "2027-01-01T00:00:00"}
    assert [t.month for t in fire_times(trigger, datetime(2027, 1, 1), count=4)] == [1, 3, 5, 7]
    plain = {"type": "recurrence", "frequency": "month", "interval": 1, "start_time": "2027-01-31T06:00:00"}
    assert [t.month for t in fire_times(plain, datetime(2027, 1, 1), count=3)] == [1, 3, 5]


def test_start_time_with_an_offset_is_read_in_the_trigger_zone() -> None:
    trigger = {"type": "recurrence", "frequency": "day", "interval": 1, "time_zone": "Pacific Standard Time",
               "start_time": "2027-01-01T17:00:00Z"}  # 09:00 in Los Angeles (UTC-8 in January)
    assert fire_times(trigger, datetime(2027, 1, 1), count=1) == [datetime(2027, 1, 1, 9, 0)]


def test_bad_triggers_say_what_is_wrong() -> None:
    with pytest.raises(TriggerError, match="cron expression"):
        fire_times({"type": "cron", "expression": "every hour"}, datetime(2027, 1, 1))
    with pytest.raises(TriggerError, match="frequency"):
        fire_times({"type": "recurrence", "frequency": "fortnight", "interval": 1}, datetime(2027, 1, 1))


_FIELD = st.one_of(st.just("*"), st.integers(0, 59).map(str))


@settings(max_examples=60, deadline=None)
@given(minute=st.integers(0, 59), hour=st.one_of(st.just("*"), st.integers(0, 23).map(str)),
       dow=st.one_of(st.just("*"), st.integers(0, 6).map(str)),
       after=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1)))
def test_cron_fires_are_increasing_and_match_every_field(minute: int, hour: str, dow: str, after: datetime) -> None:
    trigger = {"type": "cron", "expression": f"{minute} {hour} * * {dow}"}
    fires = fire_times(trigger, after, count=5)
    assert len(fires) == 5
    assert all(a < b for a, b in zip([after, *fires], fires))
    for moment in fires:
        assert moment.minute == minute and moment.second == 0
        assert hour == "*" or moment.hour == int(hour)
        assert dow == "*" or moment.isoweekday() % 7 == int(dow)
    # Nothing was skipped: no matching minute lies between `after` and the first fire.
    probe = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while probe < fires[0]:
        assert not (probe.minute == minute and (hour == "*" or probe.hour == int(hour))
                    and (dow == "*" or probe.isoweekday() % 7 == int(dow)))
        probe += timedelta(minutes=1)
