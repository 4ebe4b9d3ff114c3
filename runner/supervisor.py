"""The process that watches one job: ``python -m runner.supervisor RUN_DIR``.

``job create`` starts it in a session of its own, so the job survives the terminal that
submitted it. It walks the job through Queued (waiting for a free instance of its compute),
Preparing, Running and Finalizing, and writes the final state. SIGTERM or SIGINT (what ``job
cancel`` sends) cancels: the job's whole process group is stopped and the state is Canceled.
It is a child subreaper, so processes that escape the job's group are still stopped.
"""

from __future__ import annotations

import fcntl
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import IO, Any

from . import command, process, status
from .errors import RunnerError
from .tracking import Tracking
from .workspace import Workspace

SLOT_POLL = 0.2


def acquire_slot(workspace: Workspace, compute: dict[str, Any], cancel: command.Cancel,
                 log: command.Log) -> IO | None:
    """Hold one of the compute's ``max_instances`` slots (an flock: released by the kernel
    even if this process dies). None when the compute is unbounded or the job was canceled."""
    maximum = compute.get("max_instances")
    if not compute.get("name") or not isinstance(maximum, int) or maximum <= 0:
        return None
    folder = workspace.folder / "computes" / compute["name"]
    folder.mkdir(parents=True, exist_ok=True)
    told = False
    while not cancel.requested:
        for index in range(maximum):
            handle = open(folder / f"slot-{index}.lock", "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                handle.close()
        if not told:
            log(f"waiting for a free instance of compute {compute['name']} ({maximum} in use)")
            told = True
        time.sleep(SLOT_POLL)
    return None


def supervise(run_dir: Path) -> int:
    plan = status.read(run_dir, command.PLAN)
    workspace = Workspace(Path(plan["workspace"]))
    log = command.Log(run_dir)
    cancel = command.Cancel()
    signal.signal(signal.SIGTERM, lambda *_: cancel.request("canceled"))
    signal.signal(signal.SIGINT, lambda *_: cancel.request("canceled"))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    process.become_subreaper()
    tracking = Tracking(workspace.folder, plan["tracking_uri"], workspace.artifact_root)
    outcome: command.Outcome | None = None
    slot = None
    def enter(state: str, **fields: Any) -> None:
        if status.transition(run_dir, state, **fields):
            log(f"state: {state}")

    try:
        enter("Queued")
        slot = acquire_slot(workspace, plan["compute"], cancel, log)
        if not cancel.requested:
            enter("Preparing")
            values, env = command.prepare(run_dir, plan, log, tracking, exclude=(workspace.folder,))
            resolved = {key.split(".", 1)[1]: value for key, value in values.items() if key.startswith("inputs.")}
            status.update(run_dir, inputs=resolved)
            rendered = command.render(plan, values)
            log(f"command: {rendered}")
        if cancel.requested:
            outcome = command.Outcome("Canceled", None, {"code": "Canceled", "message": "the job was canceled before it ran"})
        else:
            enter("Running")
            keep = frozenset({tracking.agent_pid} if tracking.agent_pid else set())
            outcome = command.execute(run_dir, rendered, env, plan.get("timeout"), cancel, log,
                                      on_start=lambda pgid: status.update(run_dir, pgid=pgid), keep=keep)
    except RunnerError as error:
        log(f"error: {error}")
        outcome = command.Outcome("Failed", None, {"code": "PreparationError", "message": str(error)})
    except OSError as error:
        log(f"error: {error}")
        outcome = command.Outcome("Failed", None, {"code": "SystemError", "message": str(error)})
    except Exception as error:  # a bug of ours: the job still ends, with the traceback kept
        log("internal error:\n" + traceback.format_exc())
        outcome = command.Outcome("Failed", None, {"code": "InternalError",
                                                   "message": f"{type(error).__name__}: {error} (see {log.path})"})
    enter("Finalizing")
    fields: dict[str, Any] = {}
    try:
        fields = command.finalize(run_dir, plan, outcome, tracking, log, workspace)
    except Exception as error:
        log(f"warning: finalizing failed: {type(error).__name__}: {error}")
    if outcome.error:
        log(f"{outcome.error['code']}: {outcome.error['message']}")
    enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error, **fields)
    if slot is not None:
        slot.close()
    return 0


def main(argv: list[str]) -> int:
    return supervise(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
