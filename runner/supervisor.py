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


class _Job:
    """One job's walk through its states, for :func:`supervise`."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.plan = status.read(run_dir, command.PLAN)
        self.workspace = Workspace(Path(self.plan["workspace"]))
        self.log = command.Log(run_dir)
        self.cancel = command.Cancel()
        self.tracking = self.workspace.tracking(self.plan["tracking_uri"])
        self.slot: IO | None = None

    def enter(self, state: str, **fields: Any) -> None:
        if status.transition(self.run_dir, state, **fields):
            self.log(f"state: {state}")

    def until_finalizing(self) -> command.Outcome:
        """Queued, Preparing and Running; every way they can end becomes an Outcome."""
        run_dir, plan, log, cancel = self.run_dir, self.plan, self.log, self.cancel
        try:
            cancel.interruptible = True
            self.enter("Queued")
            self.slot = acquire_slot(self.workspace, plan["compute"], cancel, log)
            if cancel.requested:
                return _canceled_before_running()
            self.enter("Preparing")
            values, env = command.prepare(run_dir, plan, log, self.tracking, exclude=(self.workspace.folder,))
            status.update(run_dir, inputs={key.split(".", 1)[1]: value for key, value in values.items()
                                           if key.startswith("inputs.")})
            rendered = command.render(plan, values)
            log(f"command: {rendered}")
            cancel.interruptible = False
            if cancel.requested:
                return _canceled_before_running()
            self.enter("Running")
            keep = frozenset({self.tracking.agent_pid} if self.tracking.agent_pid else set())
            return command.execute(run_dir, rendered, env, plan.get("timeout"), cancel, log,
                                   on_start=lambda pgid: status.update(run_dir, pgid=pgid), keep=keep)
        except RunnerError as error:
            log(f"error: {error}")
            return command.Outcome("Failed", None, {"code": "PreparationError", "message": str(error)})
        except OSError as error:
            log(f"error: {error}")
            return command.Outcome("Failed", None, {"code": "SystemError", "message": str(error)})
        except Exception as error:  # a bug of ours: the job still ends, with the traceback kept
            log("internal error:\n" + traceback.format_exc())
            return command.Outcome("Failed", None, {"code": "InternalError",
                                                    "message": f"{type(error).__name__}: {error} (see {log.path})"})

    def finalize(self, outcome: command.Outcome) -> None:
        self.enter("Finalizing")
        fields: dict[str, Any] = {}
        try:
            fields = command.finalize(self.run_dir, self.plan, outcome, self.tracking, self.log, self.workspace)
        except Exception as error:
            self.log(f"warning: finalizing failed: {type(error).__name__}: {error}")
        if outcome.error:
            self.log(f"{outcome.error['code']}: {outcome.error['message']}")
        written = self.run_dir / "wd" / "outputs"
        if outcome.status != "Completed" and written.is_dir() and any(written.iterdir()):
            self.log("the outputs written so far are kept, and are partial (job show: outputs_complete false)")
        self.enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error, **fields)
        if self.slot is not None:
            self.slot.close()


def _canceled_before_running() -> command.Outcome:
    return command.Outcome("Canceled", None, {"code": "Canceled", "message": "the job was canceled before it ran"})


def supervise(run_dir: Path) -> int:
    job = _Job(run_dir)
    signal.signal(signal.SIGTERM, lambda *_: job.cancel.request("canceled"))
    signal.signal(signal.SIGINT, lambda *_: job.cancel.request("canceled"))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    process.become_subreaper()
    try:
        outcome = job.until_finalizing()
    except command.CanceledWhilePreparing:
        # Raised by the signal handler wherever preparation was, even inside an except above.
        job.log("canceled while preparing")
        outcome = _canceled_before_running()
    finally:
        job.cancel.interruptible = False
    job.finalize(outcome)
    return 0


def main(argv: list[str]) -> int:
    return supervise(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
