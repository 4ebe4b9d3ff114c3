"""Schedules in a workspace (``az ml schedule create|list|show|enable|disable|trigger|delete``)
and the scheduler that fires them (``aml-run scheduler``).

    .amllab/schedules/<name>.json     one schedule: the spec as submitted, the job it creates,
                                      enabled or not, when it last fired, the jobs it created
    .amllab/schedules/<name>.json.lock

When a trigger fires is :func:`validator.triggers.fire_times`' answer (the one reading of the
service's cron and recurrence rules, shared with the linter and the quiz); this module only
turns its wall-clock times into instants (the trigger's ``time_zone``, Windows names mapped to
IANA zones by the same table) and decides which of them are due.

Firing rules (docs/runner.md's "Schedules" section says the same):

* a schedule counts from its creation (or from ``enable``, after a ``disable``): times before
  that never fire; without ``start_time`` the trigger starts at its creation, so a recurrence
  without a pattern fires at once (the docs: "the first job runs immediately");
* every pass of the scheduler fires one job per due time, and records the last fired time
  (under the schedule's lock, atomically, *before* submitting), so a restart never fires a time
  twice; a submission that fails is recorded in the history and not retried;
* the first pass after the scheduler starts fires the times missed while it was down ONCE (the
  latest of them), as the service does not replay a backlog;
* a wall-clock time that does not exist (the hour skipped when DST starts) fires at the same
  instant as the time one gap later, and only once; a time that occurs twice (the hour repeated
  when DST ends) fires once, at its first occurrence.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TextIO

from validator.errors import AmllabError, UsageError
from validator.names import name_problem

from . import status
from .errors import NotFound, RunnerError
from .workspace import Workspace

FOLDER = "schedules"
# Wall-clock arithmetic around a DST change can put a due instant up to the size of the shift
# (at most 2 h anywhere) away from the naive time fire_times works in: look this far either side.
_DST_MARGIN = timedelta(hours=3)
_TICK = timedelta(microseconds=1)

Submit = Callable[..., str]


# -- storage ------------------------------------------------------------------------------------

def _folder(workspace: Workspace) -> Path:
    return workspace.folder / FOLDER


def _path(workspace: Workspace, name: str) -> Path:
    # Schedule names become file names: the service's naming rule keeps them inside schedules/.
    problem = name_problem("schedule", name)
    if problem is not None:
        raise UsageError(problem)
    return _folder(workspace) / f"{name}.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except ValueError as error:
        raise RunnerError(f"{path} is damaged ({error}); it is written only by aml-run") from None


def names(workspace: Workspace) -> list[str]:
    folder = _folder(workspace)
    if not folder.is_dir():
        return []
    return sorted(p.name[:-len(".json")] for p in folder.glob("*.json") if not p.name.startswith("."))


@contextmanager
def _locked(workspace: Workspace, name: str, must_exist: bool = True) -> Iterator[dict[str, Any]]:
    """Read-modify-write one schedule under its lock: the CLI and a running scheduler never lose
    each other's changes (a disable during a pass, a trigger while the scheduler fires)."""
    path = _path(workspace, name)
    if must_exist and not path.is_file():
        raise _not_found(workspace, name)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if must_exist and not path.is_file():  # deleted while we waited for the lock
            raise _not_found(workspace, name)
        record = _read(path) if path.is_file() else {}
        yield record
        if record:
            status.write_json_atomic(path, record)


def _save(workspace: Workspace, record: dict[str, Any]) -> None:
    """A write inside :func:`_locked` that must land before what follows (the claim of a fire
    time before its job is submitted)."""
    status.write_json_atomic(_path(workspace, record["name"]), record)


def _not_found(workspace: Workspace, name: str) -> NotFound:
    known = names(workspace)
    return NotFound(f"no schedule named '{name}' in {workspace.folder}"
                    + (f" (schedules: {', '.join(known)})" if known else
                       " (register one with `aml-run schedule create --file schedule.yml`)"))


# -- time ---------------------------------------------------------------------------------------

def zone(name: str | None) -> Any:
    """The tzinfo of a trigger's ``time_zone`` (default UTC), Windows names through the same
    table fire_times reads start_time with, so both agree on every name."""
    from validator.triggers import TriggerError, zone_info

    try:
        return zone_info(name or "UTC")
    except TriggerError as error:
        raise RunnerError(str(error)) from None


def _utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("the scheduler's clock must give aware datetimes (UTC)")
    return value.astimezone(timezone.utc)


def _instant(wall: datetime, tz: Any) -> datetime:
    # fold=0: a repeated wall time is its first occurrence, a skipped one the instant one gap later.
    return wall.replace(tzinfo=tz).astimezone(timezone.utc)


def _fires_between(record: Mapping[str, Any], lower: datetime, upper: datetime,
                   count: int | None = None) -> list[datetime]:
    """The fire instants (UTC) ``lower < t <= upper`` (``upper`` None: the next ``count``)."""
    from validator.triggers import TriggerError, fire_times

    trigger = record["trigger"]
    tz = zone(trigger.get("time_zone"))
    after = lower.astimezone(tz).replace(tzinfo=None) - _DST_MARGIN
    wanted = count or 1
    asked = wanted + 8
    while True:
        try:
            if upper is None:
                walls = fire_times(trigger, after, count=asked)
            else:
                walls = fire_times(trigger, after, count=None,
                                   before=upper.astimezone(tz).replace(tzinfo=None) + _DST_MARGIN)
        except TriggerError as error:
            raise RunnerError(f"schedule {record['name']}: {error}") from None
        found: list[datetime] = []
        for wall in walls:
            instant = _instant(wall, tz)
            if instant <= lower or (upper is not None and instant > upper):
                continue
            if found and instant <= found[-1]:
                continue  # a skipped wall time that lands on a real one: one fire
            found.append(instant)
        if upper is not None:
            return found
        # The margin before `lower` may have eaten the answer (a trigger every minute has 180
        # fires in it): ask for more until enough are past `lower` or the trigger has no more.
        if len(found) >= wanted or len(walls) < asked:
            return found[:wanted]
        asked *= 4


def _since(record: Mapping[str, Any]) -> datetime:
    """Fires strictly after this instant count: the last fire, else the creation or the last
    enable (inclusive, hence one microsecond before)."""
    since = datetime.fromisoformat(record["since"]) - _TICK
    last = record.get("last_fired")
    return max(since, datetime.fromisoformat(last)) if last else since


def due(record: Mapping[str, Any], now: datetime) -> list[datetime]:
    """The fire instants of an enabled schedule that are due at ``now`` and not fired yet."""
    if not record.get("enabled"):
        return []
    return _fires_between(record, _since(record), _as_utc(now))


def next_fires(record: Mapping[str, Any], count: int, now: datetime | None = None) -> list[dict[str, str]]:
    """The next ``count`` fire times after ``now``, in the schedule's zone and in UTC."""
    if count <= 0:
        return []
    now = _as_utc(now or _utc_now())
    tz = zone(record["trigger"].get("time_zone"))
    lower = max(now, _since(record))
    return [{"time": t.astimezone(tz).isoformat(), "utc": t.isoformat().replace("+00:00", "Z")}
            for t in _fires_between(record, lower, None, count)]


# -- create_job ---------------------------------------------------------------------------------

def _create_job(data: Mapping[str, Any], schedule_file: Path) -> dict[str, Any]:
    """The job a schedule creates: its file, resolved against the schedule file's folder (as
    the SDK does), and the overrides of the object form (SPEC: `job:` plus keys deep-merged into
    the job file). An inline job is refused by lint, as the service refuses it."""
    value = data.get("create_job")
    overrides: dict[str, Any] = {}
    if isinstance(value, Mapping):
        overrides = {k: copy.deepcopy(v) for k, v in value.items() if k not in ("job", "type")}
        declared = value.get("type")
        value = value.get("job")
    else:
        declared = None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{schedule_file}: create_job names no job file")
    reference = value.strip()
    if reference.startswith("azureml:"):
        raise RunnerError(f"{schedule_file}: create_job '{reference}' is a job in the service's workspace; "
                          "aml-run schedules a local job file: write `create_job: ./job.yml`")
    path = (schedule_file.resolve().parent / reference.removeprefix("file:")).resolve()
    return {"reference": reference, "path": str(path), "type": declared, "overrides": overrides}


def _flatten(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    # A deep merge is a `--set` per leaf: mappings merge key by key, anything else replaces.
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _flatten(item, (*prefix, str(key)))
    else:
        yield ".".join(prefix), value


# The macro expressions a schedule's create_job may use, and what each becomes when it fires
# (https://learn.microsoft.com/azure/machine-learning/how-to-schedule-pipeline-job#use-supported-expressions-in-schedules):
# ${{name}}, the name of the job it creates, and ${{creation_context.trigger_time}}, its
# trigger time. The page lists them for output paths and string inputs; Microsoft's own
# cron-with-settings example passes ${{name}} as an input, so both are replaced in any value.
_SCHEDULE_MACROS = re.compile(r"\$\{\{\s*(name|creation_context\.trigger_time)\s*\}\}")


def _substitute_macros(value: Any, job_name: str, stamp: str) -> Any:
    if isinstance(value, str):
        return _SCHEDULE_MACROS.sub(lambda m: job_name if m.group(1) == "name" else stamp, value)
    return value


def _overrides(record: Mapping[str, Any], job_file: Path, fire: datetime, job_name: str) -> list[str]:
    import yaml

    stamp = fire.isoformat().replace("+00:00", "Z")
    pairs = [f"{key}={json.dumps(_substitute_macros(value, job_name, stamp), default=str)}"
             for key, value in _flatten(record["create_job"]["overrides"]) if key]
    given = set(k for k in record["create_job"]["overrides"])
    try:
        job = yaml.safe_load(job_file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        job = {}  # submit reports the file's problem in its own words
    # The service names a triggered job's display name `<schedule>-YYYYMMDDThhmmssZ` and its
    # experiment after the schedule unless the job or the overrides name one.
    pairs.append(f"display_name={json.dumps(record['name'] + fire.strftime('-%Y%m%dT%H%M%SZ'))}")
    if "experiment_name" not in given and not (isinstance(job, dict) and job.get("experiment_name")):
        pairs.append(f"experiment_name={json.dumps(record['name'])}")
    pairs.append(f"tags.schedule_name={json.dumps(record['name'])}")
    pairs.append(f"tags.trigger_time={json.dumps(stamp)}")
    return pairs


def _submit_job(workspace: Workspace, record: Mapping[str, Any], fire: datetime, warn: TextIO | None,
                submit: Submit | None) -> str:
    from . import jobs

    job_file = Path(record["create_job"]["path"])
    submitter = submit or jobs.submit
    name = workspace.new_job_name()
    return submitter(job_file, workspace, name, _overrides(record, job_file, fire, name), warn=warn)


# -- the verbs ----------------------------------------------------------------------------------

def create(workspace: Workspace, file: str | Path, warn: TextIO | None = None,
           now: datetime | None = None) -> dict[str, Any]:
    """Lint ``file`` (SpecError on errors, as ``jobs.submit``) and register the schedule,
    enabled. Creating a name that exists updates it, as ``az ml schedule create`` does: the new
    spec replaces the old, the history stays."""
    from validator.spec import load_spec

    spec = load_spec(file, workspace=workspace.folder)
    if spec.kind != "schedule":
        raise UsageError(f"{file}: this is a {spec.kind}, not a schedule (submit jobs with `aml-run job create`)")
    if warn is not None:
        warn.write(spec.render_findings(color=warn.isatty() and not os.environ.get("NO_COLOR")))
    data = spec.data
    if "create_job" not in data:
        raise RunnerError(f"{file}: aml-run runs schedules that create jobs (`create_job`); this one "
                          f"{'imports data' if 'import_data' in data else 'creates a monitor'}")
    name = str(data.get("name"))
    _path(workspace, name)
    create_job = _create_job(data, spec.path)
    moment = _as_utc(now or _utc_now())
    trigger = dict(data["trigger"])
    for key in ("start_time", "end_time"):  # YAML may have read them as datetimes
        if isinstance(trigger.get(key), datetime):
            trigger[key] = trigger[key].isoformat()
    if not trigger.get("start_time"):
        # "start_time: the schedule's creation time": pinned now, so every later pass agrees.
        trigger["start_time"] = moment.astimezone(zone(trigger.get("time_zone"))).replace(tzinfo=None).isoformat()
    workspace.ensure()
    _folder(workspace).mkdir(exist_ok=True)
    with _locked(workspace, name, must_exist=False) as record:
        history = record.get("history", [])
        last = record.get("last_fired")
        record.clear()
        record.update({
            "name": name,
            "display_name": data.get("display_name"),
            "description": data.get("description"),
            "tags": data.get("tags") or {},
            "source": str(spec.path),
            "spec": json.loads(json.dumps(data, default=str)),  # as submitted
            "trigger": trigger,                                 # what fires: start_time pinned
            "time_zone": trigger.get("time_zone") or "UTC",
            "create_job": create_job,
            "enabled": True,
            "creation_time": record.get("creation_time") or moment.isoformat(),
            "last_modified_time": moment.isoformat(),
            "since": moment.isoformat(),
            "last_fired": last,
            "history": history,
        })
        created = dict(record)
    return _shown(created)


def _shown(record: Mapping[str, Any]) -> dict[str, Any]:
    trigger = record["trigger"]
    if str(trigger.get("type", "")).lower() == "cron":
        summary = f"cron {trigger.get('expression')}"
    else:
        interval = trigger.get("interval", 1)
        unit = str(trigger.get("frequency", "")).lower()
        summary = f"every {unit}" if str(interval) == "1" else f"every {interval} {unit}s"
        pattern = trigger.get("schedule") or {}
        if pattern:
            def items(key: str) -> list[Any]:
                value = pattern.get(key)
                return [] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]

            summary += " at " + ", ".join(f"{int(h):02d}:{int(m):02d}" for h in items("hours")
                                          for m in items("minutes"))
            for key in ("week_days", "month_days"):
                if items(key):
                    summary += f" on {key.replace('_', ' ')} " + ", ".join(str(d) for d in items(key))
    return {
        "name": record["name"],
        "display_name": record.get("display_name"),
        "description": record.get("description"),
        "is_enabled": record.get("enabled", False),
        "trigger": summary,
        "time_zone": record.get("time_zone", "UTC"),
        "start_time": trigger.get("start_time"),
        "end_time": trigger.get("end_time"),
        "create_job": record["create_job"]["path"],
        "creation_time": record.get("creation_time"),
        "last_fired": record.get("last_fired"),
        "jobs": [entry["job"] for entry in record.get("history", []) if entry.get("job")],
        "history": record.get("history", []),
        "tags": record.get("tags") or {},
        "spec": record.get("spec"),
    }


def list_schedules(workspace: Workspace, now: datetime | None = None) -> list[dict[str, Any]]:
    """One row per schedule, with its next fire time (``az ml schedule list``)."""
    rows = []
    for name in names(workspace):
        try:
            record = _read(_path(workspace, name))
            upcoming = next_fires(record, 1, now) if record.get("enabled") else []
        except (OSError, AmllabError) as error:
            rows.append({"name": name, "is_enabled": None, "trigger": f"damaged: {error}"})
            continue
        shown = _shown(record)
        rows.append({"name": name, "is_enabled": shown["is_enabled"], "trigger": shown["trigger"],
                     "time_zone": shown["time_zone"], "next_fire": upcoming[0]["time"] if upcoming else None,
                     "last_fired": shown["last_fired"], "jobs": len(shown["jobs"])})
    return rows


def show(workspace: Workspace, name: str, next: int = 0, now: datetime | None = None) -> dict[str, Any]:
    """The schedule, and with ``next`` its next fire times in its zone and in UTC."""
    path = _path(workspace, name)
    if not path.is_file():
        raise _not_found(workspace, name)
    record = _read(path)
    shown = _shown(record)
    if next:
        shown["next_fire_times"] = next_fires(record, next, now)
    return shown


def enable(workspace: Workspace, name: str, now: datetime | None = None) -> dict[str, Any]:
    with _locked(workspace, name) as record:
        if not record.get("enabled"):
            # Times that passed while it was disabled are not owed: count from now.
            record["since"] = _as_utc(now or _utc_now()).isoformat()
            record["enabled"] = True
        shown = _shown(record)
    return shown


def disable(workspace: Workspace, name: str) -> dict[str, Any]:
    with _locked(workspace, name) as record:
        record["enabled"] = False
        shown = _shown(record)
    return shown


def trigger(workspace: Workspace, name: str, warn: TextIO | None = None, now: datetime | None = None,
            submit: Submit | None = None) -> str:
    """Run the schedule's job now (``az ml schedule trigger``), enabled or not; the job is in
    the schedule's history. A manual run does not move the schedule's own next fire."""
    moment = _as_utc(now or _utc_now())
    with _locked(workspace, name) as record:
        job = _submit_job(workspace, record, moment, warn, submit)
        record.setdefault("history", []).append({"time": moment.isoformat(), "job": job, "by": "trigger"})
    return job


def delete(workspace: Workspace, name: str) -> dict[str, Any]:
    """Remove the schedule; the jobs it created stay (as in the service)."""
    path = _path(workspace, name)
    with _locked(workspace, name) as record:
        shown = _shown(record)
        path.unlink()
        record.clear()  # nothing to write back
    path.with_name(path.name + ".lock").unlink(missing_ok=True)
    shutil.rmtree(_folder(workspace) / name, ignore_errors=True)
    return {"name": name, "deleted": True, "jobs_kept": shown["jobs"]}


# -- the scheduler ------------------------------------------------------------------------------

def tick(workspace: Workspace, now: datetime, *, catch_up: bool = False, out: TextIO | None = None,
         submit: Submit | None = None) -> list[dict[str, Any]]:
    """One pass: fire every enabled schedule's due times, one job each. ``catch_up`` (the first
    pass after a start): several due times are the ones missed while no scheduler ran, and fire
    once, as the latest of them. Returns what fired (``schedule``, ``time``, ``job`` or ``error``)."""
    now = _as_utc(now)
    fired: list[dict[str, Any]] = []
    for name in names(workspace):
        try:
            with _locked(workspace, name) as record:
                times = due(record, now)
                missed = 0
                if catch_up and len(times) > 1:
                    missed, times = len(times) - 1, times[-1:]
                for moment in times:
                    # Claim the time first: a crash after this line loses one job rather than
                    # running it twice when the scheduler comes back.
                    record["last_fired"] = moment.isoformat()
                    _save(workspace, record)
                    entry: dict[str, Any] = {"time": moment.isoformat(), "by": "scheduler"}
                    if missed:
                        entry["missed"] = missed
                    try:
                        entry["job"] = _submit_job(workspace, record, moment, out, submit)
                    except (AmllabError, OSError) as error:
                        entry["error"] = str(error).splitlines()[0] if str(error) else type(error).__name__
                    record.setdefault("history", []).append(entry)
                    _save(workspace, record)
                    fired.append({"schedule": name, **entry})
                    if out is not None:
                        what = f"job {entry['job']}" if "job" in entry else f"not submitted: {entry['error']}"
                        extra = f" (once for {missed + 1} times missed while no scheduler ran)" if missed else ""
                        out.write(f"[aml-run scheduler] {now.isoformat()} {name} fired for {entry['time']}"
                                  f"{extra}: {what}\n")
                        out.flush()
        except NotFound:
            continue  # deleted during the pass
        except (AmllabError, OSError) as error:
            if out is not None:
                out.write(f"[aml-run scheduler] {name}: {error}\n")
    return fired


def next_due(workspace: Workspace, now: datetime) -> datetime | None:
    """The earliest future fire of any enabled schedule (the scheduler sleeps until then)."""
    soonest = None
    for name in names(workspace):
        try:
            record = _read(_path(workspace, name))
            if not record.get("enabled"):
                continue
            found = _fires_between(record, max(_as_utc(now), _since(record)), None, 1)
        except (OSError, AmllabError):
            continue
        if found and (soonest is None or found[0] < soonest):
            soonest = found[0]
    return soonest


def run_scheduler(workspace: Workspace, clock: Callable[[], datetime] = _utc_now,
                  sleep: Callable[[float], None] = time.sleep, stop: Callable[[], bool] = lambda: False,
                  out: TextIO | None = None, poll: float = 10.0, once: bool = False,
                  submit: Submit | None = None) -> list[dict[str, Any]]:
    """The foreground scheduler: pass, sleep until the next fire (at most ``poll`` seconds, so
    new, enabled and disabled schedules are noticed), pass again, until ``stop()``. Tests give a
    fake ``clock`` (aware UTC datetimes) and a ``sleep`` that advances it."""
    fired: list[dict[str, Any]] = []
    first = True
    while not stop():
        now = clock()
        fired += tick(workspace, now, catch_up=first, out=out, submit=submit)
        first = False
        if once:
            break
        soonest = next_due(workspace, now)
        wait = poll if soonest is None else (soonest - _as_utc(now)).total_seconds()
        sleep(min(poll, max(wait, 0.05)))
    return fired


__all__ = ["create", "delete", "disable", "due", "enable", "list_schedules", "names", "next_due",
           "next_fires", "run_scheduler", "show", "tick", "trigger", "zone"]
