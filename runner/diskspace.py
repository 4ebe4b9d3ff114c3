"""A full disk: a job that meets one ends Failed, saying so, instead of a supervisor that dies
without a word.

When the disk that holds the workspace fills up (the job's own outputs, a big input, another
program), every write of the supervisor fails with ENOSPC: its log lines, its status changes,
the copy of ./outputs into the MLflow run. Three things keep the job's end on record:

- a *reserve*: a file of :data:`RESERVE_BYTES` the supervisor allocates in its run folder as
  the job starts (:func:`hold`). The job's final state is the one write that must land: when it
  finds the disk full, the reserve is deleted and the write tried again (:func:`release_for`).
  A supervisor that died without ending its job leaves its reserve behind, so whoever ends the
  job later (``job show`` finding the supervisor gone) finds room the same way;
- what could not be written meanwhile is not fatal: a log line waits in memory for room
  (runner/contract.py's Log), a state between the first and the last is skipped, and the first
  such failure is remembered (:func:`notice`);
- a job that would end Completed after the runner lost a write ends Failed (``DiskFull``),
  naming the folder and what could not be written; a failed one says it too
  (:func:`final_state`).
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Any

RESERVE = ".disk-reserve"
# Room for the last writes of a job: its final status (a few KB, more for a big sweep or
# pipeline) and the log lines that waited for room.
RESERVE_BYTES = 256 * 1024
# How many folders up from a run folder a reserve is looked for (a pipeline step's trial:
# runs/PIPELINE/steps/STEP/trials/TRIAL holds none; its supervisor's is in runs/PIPELINE).
_LEVELS = 5
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})

_noticed: dict[str, str] = {}
_lock = threading.Lock()


def is_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or this user's quota on it) is full."""
    return isinstance(error, OSError) and error.errno in _FULL_ERRNOS


def says_full(text: str) -> bool:
    """Whether a message (another process's: MLflow's, SQLite's) says the disk is full."""
    lowered = text.lower()
    return "no space left on device" in lowered or "database or disk is full" in lowered \
        or "disk quota exceeded" in lowered


def hold(run_dir: Path) -> None:
    """Allocate the reserve in ``run_dir`` (its blocks really taken: ``posix_fallocate``, or
    zeros where the file system cannot); raises OSError when there is no room even for it."""
    path = run_dir / RESERVE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            os.posix_fallocate(descriptor, 0, RESERVE_BYTES)
        except OSError as error:
            if is_full(error):
                raise
            os.write(descriptor, bytes(RESERVE_BYTES))  # a file system without fallocate
        os.fsync(descriptor)
    except OSError:
        os.close(descriptor)
        path.unlink(missing_ok=True)
        raise
    os.close(descriptor)


def release(run_dir: Path) -> None:
    """Give the reserve back (the job ended, and its last state is written)."""
    (run_dir / RESERVE).unlink(missing_ok=True)


def release_for(path: Path) -> bool:
    """Delete the reserve nearest to ``path`` (its folder, or one of the folders above it that
    belong to the same job); whether there was one to delete."""
    folder = path if path.is_dir() else path.parent
    for candidate in [folder, *folder.parents][:_LEVELS]:
        try:
            (candidate / RESERVE).unlink()
            return True
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return False


def notice(where: Path | str, doing: str) -> None:
    """Remember that the disk was found full while ``doing`` (the first time only: it says
    where the job's record began to be incomplete)."""
    with _lock:
        if not _noticed:
            _noticed.update(where=str(where), doing=doing, mount=_mount_of(Path(where)))


def noticed() -> dict[str, str] | None:
    with _lock:
        return dict(_noticed) or None


def message() -> str:
    found = noticed() or {}
    mount = f" (the file system mounted on {found['mount']})" if found.get("mount") else ""
    return (f"no space left on device: {found.get('doing', 'a write failed')} failed in "
            f"{found.get('where', '?')}{mount}; what the job logged or wrote after that may be missing. "
            "Free space there and run the job again")


def final_state(state: str, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The state a job ends in, given what it would end in without a full disk: Completed
    becomes Failed (DiskFull); a failure's message says the disk was full too."""
    if noticed() is None:
        return state, fields
    if state == "Completed":
        return "Failed", {**fields, "error": {"code": "DiskFull", "message": message()}}
    if state == "Failed" and fields.get("error") and fields["error"].get("code") != "DiskFull":
        error = dict(fields["error"])
        error["message"] = f"{error.get('message', '')}; meanwhile {message()}"
        return state, {**fields, "error": error}
    return state, fields


def _mount_of(path: Path) -> str:
    """The mount point of the file system ``path`` lies on."""
    try:
        path = path.resolve()
        while not os.path.ismount(path) and path != path.parent:
            path = path.parent
        return str(path)
    except OSError:
        return ""
