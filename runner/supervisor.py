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
from typing import IO, Any, Callable

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


class Walk:
    """What every job's walk through its states shares: its run folder, plan, log, cancel
    flag and MLflow handle, state changes, and the rule that every way a step can fail ends
    as an :class:`~runner.command.Outcome` (never a traceback that leaves the job hanging)."""

    def __init__(self, run_dir: Path, cancel: command.Cancel | None = None) -> None:
        self.run_dir = run_dir
        self.plan = status.read(run_dir, command.PLAN)
        self.workspace = Workspace(Path(self.plan["workspace"]))
        self.log = command.Log(run_dir)
        self.cancel = cancel or command.Cancel()
        self.tracking = self.workspace.tracking(self.plan["tracking_uri"])

    def keep(self) -> frozenset[int]:
        """Processes of the supervisor's own that a sweep of strays must leave alone: the
        tracking agent, when this supervisor started it."""
        return frozenset({self.tracking.agent_pid} if self.tracking.agent_pid else set())

    def enter(self, state: str, **fields: Any) -> None:
        if status.transition(self.run_dir, state, **fields):
            self.log(f"state: {state}")

    def guarded(self, steps: Callable[[], command.Outcome]) -> command.Outcome:
        try:
            return steps()
        except RunnerError as error:
            self.log(f"error: {error}")
            return command.Outcome("Failed", None, {"code": "PreparationError", "message": str(error)})
        except OSError as error:
            self.log(f"error: {error}")
            return command.Outcome("Failed", None, {"code": "SystemError", "message": str(error)})
        except Exception as error:  # a bug of ours: the job still ends, with the traceback kept
            self.log("internal error:\n" + traceback.format_exc())
            return command.Outcome("Failed", None, {"code": "InternalError",
                                                    "message": f"{type(error).__name__}: {error} (see {self.log.path})"})

    def until_finalizing(self) -> command.Outcome:
        raise NotImplementedError

    def finalize(self, outcome: command.Outcome) -> None:
        raise NotImplementedError


class JobRun(Walk):
    """One command job's walk: a job of its own (``alone``: its supervisor runs nothing else),
    or one trial of a sweep, several of which share the sweep's supervisor. A trial differs in
    three ways: its strays are found by its marker rather than as the supervisor's orphans, a
    cancel never interrupts it mid-step from a signal handler (the sweep's loop asks it to
    stop), and its timeout (the sweep's ``trial_timeout``) cancels it, as the service does."""

    def __init__(self, run_dir: Path, *, alone: bool = True, cancel: command.Cancel | None = None) -> None:
        super().__init__(run_dir, cancel)
        self.alone = alone
        self.slot: IO | None = None

    def until_finalizing(self) -> command.Outcome:
        """Queued, Preparing and Running; every way they can end becomes an Outcome."""
        run_dir, plan, log, cancel = self.run_dir, self.plan, self.log, self.cancel

        def steps() -> command.Outcome:
            cancel.interruptible = self.alone
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
            return command.execute(run_dir, rendered, env, plan.get("timeout"), cancel, log,
                                   on_start=lambda pgid: status.update(run_dir, pgid=pgid), keep=self.keep(),
                                   alone=self.alone, timeout_status="Failed" if self.alone else "Canceled")

        return self.guarded(steps)

    def finalize(self, outcome: command.Outcome, **extra: Any) -> None:
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
        self.enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error, **fields, **extra)
        if self.slot is not None:
            self.slot.close()


def _canceled_before_running() -> command.Outcome:
    return command.Outcome("Canceled", None, {"code": "Canceled", "message": "the job was canceled before it ran"})


def supervise(run_dir: Path) -> int:
    job: Walk
    if status.read(run_dir, command.PLAN)["type"] == "sweep":
        from .sweep.sweep import SweepRun

        job = SweepRun(run_dir)
    else:
        job = JobRun(run_dir)
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
