"""Support modules of the schedule rules: the time-zone list (and its fallback when no
time-zone database is installed) and the datetime reader that mirrors the SDK's."""

from __future__ import annotations

import datetime as dt

import pytest

from validator import timezones
from validator.engine import lint_text
from validator.rules.schedule import parse_datetime


def test_documented_time_zones() -> None:
    assert len(timezones.WINDOWS_TIME_ZONES) == 131 == len(set(timezones.WINDOWS_TIME_ZONES))
    for name in ("UTC", "Pacific Standard Time", "UTC-11", "W. Europe Standard Time", "UTC+12"):
        assert timezones.is_documented(name)
    assert not set(timezones.WINDOWS_TIME_ZONES) & set(timezones.OTHER_WINDOWS_TIME_ZONES)
    assert set(timezones.IANA_TO_WINDOWS.values()) <= set(timezones.WINDOWS_TIME_ZONES)
    assert timezones.windows_spelling(" pacific  standard time") == "Pacific Standard Time"
    assert timezones.windows_for_iana("America/Los_Angeles") == "Pacific Standard Time"


def test_iana_names_without_a_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timezones, "iana_names", lambda: frozenset())
    assert timezones.looks_like_iana("America/Argentina/Buenos_Aires")
    assert timezones.looks_like_iana("Etc/GMT+5") and timezones.looks_like_iana("UTC")
    assert not timezones.looks_like_iana("Pacific Standrd Time")
    assert not timezones.looks_like_iana("Mars/Olympus_Mons")


@pytest.mark.parametrize("text,expected", [
    ("2025-01-31T09:00:00", dt.datetime(2025, 1, 31, 9)),
    ("2025-01-31 09:00", dt.datetime(2025, 1, 31, 9)),
    ("2025-1-5T9:05:07.25", dt.datetime(2025, 1, 5, 9, 5, 7, 250000)),
    ("2025-01-31T09:00:00Z", dt.datetime(2025, 1, 31, 9, tzinfo=dt.UTC)),
    ("2025-01-31T09:00:00-0430", dt.datetime(2025, 1, 31, 9, tzinfo=dt.timezone(-dt.timedelta(hours=4, minutes=30)))),
    ("2025-01-31", None), ("tomorrow", None), ("2025-02-30T00:00:00", None), ("2025-01-31T24:00:00", None),
    ("20250131T090000", None), ("2025-01-31t09:00:00", None), (" 2025-01-31T09:00:00", None),
])
def test_parse_datetime_follows_the_sdk(text: str, expected: dt.datetime | None) -> None:
    assert parse_datetime(text) == expected


SCHEDULE = """\
name: nightly
trigger:
  type: cron
  expression: "{expression}"
  time_zone: {zone}
create_job: azureml:nightly-pipeline
"""


@pytest.mark.parametrize("zone,code", [
    ("UTC", None), ('"Tokyo Standard Time"', None), ("Europe/Paris", "AML621"), ("utc", "AML621"),
    ('"Omsk Standard Time"', "AML621"), ("CEST", "AML620"), ('"GMT+2"', "AML620"), ("Nowhere/Special", "AML620"),
])
def test_time_zone_verdicts(zone: str, code: str | None) -> None:
    report = lint_text(SCHEDULE.format(expression="0 2 * * *", zone=zone), "s.yml")
    assert [d.code for d in report.diagnostics] == ([code] if code else [])


@pytest.mark.parametrize("expression,codes", [
    ("0 2 * * *", []), ("0 2 */1 1-12 *", []), ("0 2 1 * *", ["AML603"]), ("0 2 * 13 *", ["AML602"]),
    ("0 2 * * 5-1", ["AML604"]), ("every hour", ["AML601"]),
])
def test_cron_verdicts(expression: str, codes: list[str]) -> None:
    report = lint_text(SCHEDULE.format(expression=expression, zone="UTC"), "s.yml")
    assert [d.code for d in report.diagnostics] == codes
