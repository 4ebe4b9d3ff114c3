"""A job's status file (``runs/<name>/status.json``): its state, when it entered each state,
what went wrong, and what ``job show`` reports. It is the single source of truth that the
supervisor writes and every other command reads.

States follow the service: NotStarted → Queued → Preparing → Running → Finalizing →
Completed | Failed | Canceled. Every write takes the file's lock, reads, changes and renames a
complete new file into place, so a reader never sees half a file and two writers (the
supervisor and ``job cancel``) never lose each other's changes.
"""

from __future__ import annotations

import fcntl
import json
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from validator.paths import write_text_atomic

from . import diskspace

STATES = ("NotStarted", "Queued", "Preparing", "Running", "Finalizing", "Completed", "Failed", "Canceled")
TERMINAL = frozenset({"Completed", "Failed", "Canceled"})
FILE = "status.json"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def write_json_atomic(path: Path, payload: Any) -> None:
    """``payload`` as JSON, renamed into place (never half a file)."""
    write_text_atomic(path, json.dumps(payload, indent=2, default=str) + "\n")


def read(run_dir: Path, file: str = FILE) -> dict[str, Any]:
    """One of the run folder's JSON files; a damaged one is a one-line error, not a traceback."""
    from .errors import RunnerError

    path = run_dir / file
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except ValueError as error:
        raise RunnerError(f"{path} is damaged ({error}); it is written only by aml-run, so it was "
                          "edited or truncated by something else") from None


@contextmanager
def locked(run_dir: Path, final: bool = False) -> Iterator[dict[str, Any]]:
    """Read-modify-write the status under the run's lock; changes to the yielded dict are saved.
    ``final``: the job's last state, which must land: on a full disk the job's reserve is given
    back and the write tried again (runner/diskspace.py)."""
    with open(run_dir / (FILE + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            current = read(run_dir)
        except FileNotFoundError:
            current = {}
        yield current
        try:
            write_json_atomic(run_dir / FILE, current)
        except OSError as error:
            if not (final and diskspace.is_full(error) and diskspace.release_for(run_dir)):
                raise
            write_json_atomic(run_dir / FILE, current)


def create(run_dir: Path, fields: dict[str, Any]) -> None:
    record = {**fields, "status": "NotStarted", "history": [{"status": "NotStarted", "time": now()}]}
    write_json_atomic(run_dir / FILE, record)


def transition(run_dir: Path, state: str, *, when: Callable[[dict[str, Any]], bool] | None = None,
               **fields: Any) -> bool:
    """Move to ``state`` (recording when) and merge ``fields``. A job that already ended stays
    ended: returns False and changes nothing, so a late writer cannot resurrect it. ``when``:
    a further condition on the record, checked under the same lock as the change."""
    assert state in STATES, state
    with locked(run_dir, final=state in TERMINAL) as record:
        if record.get("status") in TERMINAL or (when is not None and not when(record)):
            return False
        stamp = now()
        record["status"] = state
        record.setdefault("history", []).append({"status": state, "time": stamp})
        if state == "Running":
            record["start_time"] = stamp
        if state in TERMINAL:
            record["end_time"] = stamp
        record.update(fields)
    return True


def update(run_dir: Path, **fields: Any) -> None:
    with locked(run_dir) as record:
        record.update(fields)


def claim(run_dir: Path, supervisor: dict[str, Any]) -> bool:
    """The supervisor records itself before it does anything. False when the job already ended
    (``job create`` was interrupted and the job was recorded as not started): the supervisor
    must then run nothing. Under the lock, so it and whoever ends the job agree on who won."""
    with locked(run_dir) as record:
        if record.get("status") in TERMINAL:
            return False
        record["supervisor"] = supervisor
    return True
