"""The process that watches one job: ``python -m runner.supervisor RUN_DIR``.

``job create`` starts it in a session of its own, so the job survives the terminal that
submitted it. It walks the job through Queued (waiting for a free instance of its compute),
Preparing, Running and Finalizing, and writes the final state. SIGTERM or SIGINT (what ``job
cancel`` sends) cancels: the job's whole process group is stopped and the state is Canceled.
It is a child subreaper, so processes that escape the job's group are still stopped.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import IO, Any, Callable

from . import command, distributed, process, status
from .errors import RunnerError
from .workspace import Workspace

SLOT_POLL = 0.2


def acquire_slot(workspace: Workspace, compute: dict[str, Any], cancel: command.Cancel,
                 log: command.Log, count: int = 1) -> list[IO] | None:
    """Hold ``count`` of the compute's ``max_instances`` slots (a multi-node job holds one per
    node; each an flock, released by the kernel even if this process dies). All or none: a job
    never sits on some nodes while it waits for the rest. None when the compute is unbounded or
    the job was canceled."""
    maximum = compute.get("max_instances")
    if not compute.get("name") or not isinstance(maximum, int) or maximum <= 0:
        return None
    folder = workspace.folder / "computes" / compute["name"]
    folder.mkdir(parents=True, exist_ok=True)
    told = False
    while not cancel.requested:
        held: list[IO] = []
        for index in range(maximum):
            handle = open(folder / f"slot-{index}.lock", "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(handle)
                if len(held) == count:
                    return held
            except BlockingIOError:
                handle.close()
        for handle in held:
            handle.close()
        if not told:
            needed = f"{count} free instances" if count > 1 else "a free instance"
            log(f"waiting for {needed} of compute {compute['name']} ({maximum} in all)")
            told = True
        time.sleep(SLOT_POLL)
    return None


def release(slots: list[IO] | None) -> None:
    for handle in slots or []:
        handle.close()


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
        self.slot: list[IO] | None = None

    def until_finalizing(self) -> command.Outcome:
        """Queued, Preparing and Running; every way they can end becomes an Outcome."""
        run_dir, plan, log, cancel = self.run_dir, self.plan, self.log, self.cancel

        def steps() -> command.Outcome:
            cancel.interruptible = self.alone
            self.enter("Queued")
            self.slot = acquire_slot(self.workspace, plan["compute"], cancel, log, self.nodes())
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
            return self.run(rendered, env)

        return self.guarded(steps)

    def nodes(self) -> int:
        """How many of the compute's instances the job holds while it runs: one per node of this
        machine's share."""
        layout = self.plan.get("distribution")
        return len(layout["local_nodes"]) if layout else 1

    def launches(self, rendered: str, env: dict[str, str]) -> list[distributed.Launch]:
        layout = self.plan.get("distribution")
        if not layout:
            return command.single(self.run_dir, rendered, env)
        python = self.plan["environment"]["python"]
        if layout["type"] == "pytorch" and not distributed.torch_available(python):
            raise RunnerError(f"distribution type pytorch starts torch's elastic launcher with {python}, "
                              "which cannot import torch: install torch there (pip install torch)")
        if layout["type"] == "mpi":
            distributed.mpirun()  # a missing Open MPI fails now, naming the package
        self.log(f"distributed: {distributed.describe(layout)}")
        return distributed.launches(self.plan, rendered, env, self.run_dir, python)

    def run(self, rendered: str, env: dict[str, str]) -> command.Outcome:
        """Running, and for a spot job whose node is taken (``--preempt-after``), back to Queued
        and Running again with the same working folder and ./outputs, as the service re-queues
        a preempted low-priority job: a script that checkpoints to ./outputs resumes."""
        evictions = list(self.plan.get("preempt_after") or [])
        attempt = 0
        while True:
            launches = self.launches(rendered, env)
            self.enter("Running")
            outcome = command.execute(
                self.run_dir, launches, self.plan.get("timeout"), self.cancel, self.log,
                on_start=lambda pgids: status.update(self.run_dir, pgid=pgids[0], pgids=pgids), keep=self.keep(),
                alone=self.alone, timeout_status="Failed" if self.alone else "Canceled",
                preempt_after=evictions[attempt] if attempt < len(evictions) else None)
            if outcome.status != "Preempted":
                return outcome
            attempt += 1
            self.log(f"preempted: {outcome.error['message']}; the job goes back to the queue "
                     f"(preemption {attempt} of {len(evictions)}), ./outputs is kept")
            status.update(self.run_dir, preemptions=attempt)
            release(self.slot)
            self.enter("Queued")
            self.slot = acquire_slot(self.workspace, self.plan["compute"], self.cancel, self.log, self.nodes())
            if self.cancel.requested:
                return _canceled_before_running()

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
        release(self.slot)


def _canceled_before_running() -> command.Outcome:
    return command.Outcome("Canceled", None, {"code": "Canceled", "message": "the job was canceled before it ran"})


def supervise(run_dir: Path) -> int:
    job: Walk
    kind = status.read(run_dir, command.PLAN)["type"]
    if kind == "sweep":
        from .sweep.sweep import SweepRun

        job = SweepRun(run_dir)
    elif kind == "pipeline":
        from .pipeline import PipelineRun

        job = PipelineRun(run_dir)
    else:
        job = JobRun(run_dir)
    signal.signal(signal.SIGTERM, lambda *_: job.cancel.request("canceled"))
    signal.signal(signal.SIGINT, lambda *_: job.cancel.request("canceled"))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # `job create` records this process too, but may die before it can: recording itself
    # first, under the status lock, settles the race with a reader that finds the creator
    # gone and ends the job as never started.
    if not status.claim(run_dir, {"pid": os.getpid(), "start_ticks": process.start_ticks(os.getpid())}):
        job.log("not started: the job had already ended (job create was interrupted before it "
                "recorded this supervisor)")
        return 0
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
