"""AML6xx planted defects (schedules): each takes a valid schedule fixture and breaks its
trigger or its create_job in one known way."""

from __future__ import annotations

from .base import get, planter

SCHEDULE = ("schedule",)


def _trigger(data: dict, kind: str) -> dict | None:
    trigger = data.get("trigger")
    if isinstance(trigger, dict) and trigger.get("type") == kind:
        return trigger
    return None


def _pattern(data: dict) -> dict | None:
    trigger = _trigger(data, "recurrence")
    pattern = get(trigger, "schedule")
    return pattern if isinstance(pattern, dict) else None


def _local_job(data: dict) -> str | None:
    create_job = data.get("create_job")
    if isinstance(create_job, str) and not create_job.startswith("azureml:"):
        return create_job
    job = get(create_job, "job")
    return job if isinstance(job, str) and not job.startswith("azureml:") else None


def _overrides(data: dict) -> dict:
    """create_job as a pipeline mapping with overrides (turning a path into that form)."""
    create_job = data.get("create_job")
    if isinstance(create_job, str):
        create_job = data["create_job"] = {"type": "pipeline", "job": create_job}
    return create_job


# ----------------------------------------------------------------------------- cron
@planter("AML601", "a cron expression written in words", SCHEDULE)
def cron_in_words(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    trigger["expression"] = "every day at 2"
    return data


@planter("AML601", "a cron expression with a seconds field", SCHEDULE)
def cron_seconds_field(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    trigger["expression"] = "0 " + str(trigger["expression"])
    return data


@planter("AML602", "a cron hour out of range", SCHEDULE)
def cron_hour_out_of_range(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    fields = str(trigger["expression"]).split()
    fields[1] = "24"
    trigger["expression"] = " ".join(fields)
    return data


@planter("AML602", "Sunday written as day of week 7", SCHEDULE)
def cron_sunday_seven(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    fields = str(trigger["expression"]).split()
    fields[4] = "7"
    trigger["expression"] = " ".join(fields)
    return data


@planter("AML603", "a cron expression that sets the ignored DAYS field", SCHEDULE)
def cron_days_field(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    fields = str(trigger["expression"]).split()
    fields[2] = "1"
    trigger["expression"] = " ".join(fields)
    return data


@planter("AML604", "a backwards day-of-week range", SCHEDULE)
def cron_backwards_range(data: dict) -> dict | None:
    trigger = _trigger(data, "cron")
    if trigger is None:
        return None
    fields = str(trigger["expression"]).split()
    fields[4] = "FRI-MON"
    trigger["expression"] = " ".join(fields)
    return data


# ----------------------------------------------------------------------------- recurrence
@planter("AML610", "a recurrence interval of 0", SCHEDULE)
def zero_interval(data: dict) -> dict | None:
    trigger = _trigger(data, "recurrence")
    if trigger is None:
        return None
    trigger["interval"] = 0
    return data


@planter("AML611", "midnight written as hour 24", SCHEDULE)
def hour_24(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    pattern["hours"] = [24]
    return data


@planter("AML611", "a minute of 60", SCHEDULE)
def minute_60(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    pattern["minutes"] = 60
    return data


@planter("AML612", "week days on a daily recurrence", SCHEDULE)
def week_days_daily(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    data["trigger"]["frequency"] = "day"
    pattern["week_days"] = ["monday", "friday"]
    return data


@planter("AML613", "month days on a weekly recurrence", SCHEDULE)
def month_days_weekly(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    data["trigger"]["frequency"] = "week"
    pattern["month_days"] = [1, 15]
    return data


@planter("AML614", "a pattern on an hourly recurrence", SCHEDULE)
def pattern_hourly(data: dict) -> dict | None:
    trigger = _trigger(data, "recurrence")
    if trigger is None:
        return None
    trigger["frequency"] = "hour"
    trigger["schedule"] = {"hours": [8, 12], "minutes": [0]}
    return data


@planter("AML615", "a day of month 32", SCHEDULE)
def month_day_32(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    data["trigger"]["frequency"] = "month"
    pattern.pop("week_days", None)
    pattern["month_days"] = [32]
    return data


@planter("AML616", "a monthly run on day 31", SCHEDULE)
def month_day_31(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    data["trigger"]["frequency"] = "month"
    pattern.pop("week_days", None)
    pattern["month_days"] = [31]
    return data


@planter("AML617", "an hour listed twice", SCHEDULE)
def repeated_hour(data: dict) -> dict | None:
    pattern = _pattern(data)
    if pattern is None:
        return None
    hours = pattern["hours"] if isinstance(pattern.get("hours"), list) else [pattern.get("hours")]
    pattern["hours"] = hours + hours[:1]
    return data


# ----------------------------------------------------------------------------- time zone, times
@planter("AML620", "a misspelt time zone", SCHEDULE)
def misspelt_time_zone(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict) or not isinstance(trigger.get("time_zone"), str):
        return None
    trigger["time_zone"] = trigger["time_zone"].replace("Standard", "Standrd").replace("UTC", "UTZ")
    return data


@planter("AML620", "a time-zone abbreviation", SCHEDULE)
def abbreviated_time_zone(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict):
        return None
    trigger["time_zone"] = "PST"
    return data


@planter("AML621", "an IANA time-zone name", SCHEDULE)
def iana_time_zone(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict):
        return None
    trigger["time_zone"] = "Europe/Berlin"
    return data


@planter("AML630", "a start time that is not ISO 8601", SCHEDULE)
def start_time_words(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict):
        return None
    trigger["start_time"] = "next monday"
    return data


@planter("AML631", "an end time before the start time", SCHEDULE)
def end_before_start(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict):
        return None
    trigger["start_time"] = "2025-06-01T00:00:00"
    trigger["end_time"] = "2025-05-01T00:00:00"
    return data


@planter("AML632", "a start time with an offset and a different time_zone", SCHEDULE)
def offset_and_zone(data: dict) -> dict | None:
    trigger = data.get("trigger")
    if not isinstance(trigger, dict):
        return None
    trigger["start_time"] = "2025-06-01T00:00:00+09:00"
    trigger["time_zone"] = "Pacific Standard Time"
    return data


# ----------------------------------------------------------------------------- create_job
@planter("AML640", "create_job names a job file that does not exist", SCHEDULE)
def missing_job_file(data: dict) -> dict | None:
    job = _local_job(data)
    if job is None:
        return None
    missing = job.replace(".yml", "_missing.yml")
    if isinstance(data["create_job"], dict):
        data["create_job"]["job"] = missing
    else:
        data["create_job"] = missing
    return data


@planter("AML641", "create_job names a job file with errors", SCHEDULE)
def job_file_with_errors(data: dict) -> dict | None:
    # A golden case of this family: a pipeline job with an undeclared parent input.
    broken = "../../../golden/AML641/ref_broken_pipeline.yml"
    if isinstance(data.get("create_job"), dict):
        data["create_job"] = {"type": "pipeline", "job": broken}
    else:
        data["create_job"] = broken
    return data


@planter("AML642", "create_job names a component file", SCHEDULE)
def component_file(data: dict) -> dict | None:
    data["create_job"] = "./components/train.yml"
    return data


@planter("AML643", "create_job overrides a command job", SCHEDULE)
def command_overrides(data: dict) -> dict | None:
    data["create_job"] = {"type": "command", "job": "azureml:churn-train-job",
                          "environment_variables": {"LOG_LEVEL": "debug"}}
    return data


@planter("AML644", "create_job overrides a workspace job without type", SCHEDULE)
def remote_without_type(data: dict) -> dict | None:
    data["create_job"] = {"job": "azureml:nightly-retrain-pipeline",
                          "settings": {"continue_on_step_failure": True}}
    return data


@planter("AML645", "the trigger time in a tag", SCHEDULE)
def trigger_time_in_tag(data: dict) -> dict | None:
    create_job = _overrides(data)
    if not isinstance(create_job, dict):
        return None
    create_job["tags"] = {"triggered_at": "${{creation_context.trigger_time}}"}
    return data


@planter("AML645", "the trigger time bound to an integer input", SCHEDULE)
def trigger_time_in_integer(data: dict) -> dict | None:
    if _local_job(data) != "./jobs/pipeline.yml":
        return None  # the fixtures' pipeline.yml has the integer input `epochs`
    create_job = _overrides(data)
    create_job["inputs"] = {"epochs": "${{creation_context.trigger_time}}"}
    return data


@planter("AML646", "the job name in the experiment name", SCHEDULE)
def name_in_experiment(data: dict) -> dict | None:
    create_job = _overrides(data)
    if not isinstance(create_job, dict):
        return None
    create_job["experiment_name"] = "retrain-${{name}}"
    return data


@planter("AML647", "create_job overrides a misspelt input", SCHEDULE)
def misspelt_override(data: dict) -> dict | None:
    if _local_job(data) is None:
        return None
    create_job = _overrides(data)
    create_job.setdefault("inputs", {})["run_lable"] = "${{creation_context.trigger_time}}"
    return data
