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


ACTIONS = {
    "create_job": "create_job: azureml:nightly-pipeline\n",
    "import_data": ("import_data:\n  type: mltable\n  name: orders\n  path: azureml://datastores/blob/paths/o/${{name}}\n"
                    "  source:\n    type: database\n    query: select 1\n    connection: azureml:sql\n"),
    "create_monitor": ("create_monitor:\n  compute:\n    instance_type: standard_e4s_v3\n"
                       "    runtime_version: \"3.4\"\n"),
}
TRIGGER = 'name: nightly\ntrigger:\n  type: cron\n  expression: "{expression}"\n'


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_action_is_a_schedule_with_its_trigger_checked(action: str) -> None:
    report = lint_text(TRIGGER.format(expression="0 2 * * *") + ACTIONS[action], "schedule.yml")
    assert report.kind == "schedule" and report.diagnostics == []
    report = lint_text(TRIGGER.format(expression="0 25 * * *") + ACTIONS[action], "schedule.yml")
    assert [d.code for d in report.diagnostics] == ["AML602"]


@pytest.mark.parametrize("first,second", [("create_job", "import_data"), ("create_job", "create_monitor"),
                                          ("import_data", "create_monitor")])
def test_two_actions_are_refused(first: str, second: str) -> None:
    report = lint_text(TRIGGER.format(expression="0 2 * * *") + ACTIONS[first] + ACTIONS[second], "schedule.yml")
    assert [d.code for d in report.diagnostics] == ["AML107"]
    assert f"'{first}' and '{second}' cannot both be set" in report.diagnostics[0].message


def test_no_action_is_refused() -> None:
    report = lint_text(TRIGGER.format(expression="0 2 * * *"), "schedule.yml")
    assert [d.code for d in report.diagnostics] == ["AML107"]


@pytest.mark.parametrize("body,code", [
    ("import_data:\n  name: x\n  path: azureml://datastores/blob/paths/x\n  source:\n    type: database\n", "AML102"),
    ("import_data:\n  name: x\n  path: p\n  sorce: {}\n  source: {connection: azureml:c}\n", "AML101"),
    ("create_monitor:\n  compute:\n    instance_type: standard_e4s_v3\n    runtime_version: 3.4\n", "AML103"),
    ("create_monitor:\n  compute: {instance_type: a, runtime_version: '3.4'}\n"
     "  monitoring_signals:\n    drift: {type: data_drfit}\n", "AML104"),
    ("create_monitor:\n  compute: {instance_type: a, runtime_version: '3.4'}\n"
     "  monitoring_target: {ml_task: question_answering}\n", "AML104"),
])
def test_action_bodies_are_checked_for_shape(body: str, code: str) -> None:
    report = lint_text(TRIGGER.format(expression="0 2 * * *") + body, "schedule.yml")
    assert code in {d.code for d in report.diagnostics}, report.diagnostics


def test_monitor_schedule_schema_url_is_a_schedule() -> None:
    text = ("$schema: https://azuremlschemas.azureedge.net/latest/monitorSchedule.schema.json\n"
            + TRIGGER.format(expression="0 2 * * *") + ACTIONS["create_monitor"])
    assert lint_text(text, "monitor.yml").kind == "schedule"
