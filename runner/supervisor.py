"""The process that watches one job: ``python -m runner.supervisor RUN_DIR``.

``job create`` starts it in a session of its own, so the job survives the terminal that
submitted it. It walks the job through Queued (waiting for a free instance of its compute),
Preparing, Running and Finalizing, and writes the final state. SIGTERM or SIGINT (what ``job
cancel`` sends) cancels: the job's whole process group is stopped and the state is Canceled.
It is a child subreaper, so processes that escape the job's group are still stopped.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from . import executors  # noqa: F401 (registers every job type's executor)
from . import contract, diskspace, mlflow_server, process, status
from .contract import canceled_before_running, executor_of


def supervise(run_dir: Path) -> int:
    job = executor_of(run_dir).walk(run_dir)
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
        diskspace.hold(run_dir)
    except OSError as error:
        if not diskspace.is_full(error):
            raise
        diskspace.notice(run_dir, "setting aside room for the job's last state")
        job.enter("Failed", error={"code": "DiskFull", "message": diskspace.message()})
        return 0
    try:
        try:
            outcome = job.until_finalizing()
        except contract.CanceledWhilePreparing:
            # Raised by the signal handler wherever preparation was, even inside an except above.
            job.log("canceled while preparing")
            outcome = canceled_before_running()
        finally:
            job.cancel.interruptible = False
        try:
            job.finalize(outcome)
        finally:
            mlflow_server.stop_all()
    except Exception as error:
        _end_after(run_dir, job, error)
        raise
    diskspace.release(run_dir)
    return 0


def _end_after(run_dir: Path, job: contract.Walk, error: Exception) -> None:
    """The supervisor cannot go on (a write that found the disk full even for the job's last
    state, or a bug of ours): the job still ends, Failed with the cause, if it can be written."""
    if diskspace.is_full(error):
        diskspace.notice(getattr(error, "filename", None) or run_dir, "a write of the supervisor")
        failure = {"code": "DiskFull", "message": diskspace.message()}
    else:
        failure = {"code": "RunnerError", "message": f"the supervisor failed: {type(error).__name__}: {error} "
                                                     f"(see {run_dir / 'system_logs'})"}
    try:
        job.enter("Failed", error=failure)
    except OSError:
        pass  # the traceback below, on the supervisor's standard error, is all that is left


def main(argv: list[str]) -> int:
    return supervise(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
