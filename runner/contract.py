"""The run contract every executor shares: the run folder's layout, how a job's walk through
its states ends (an :class:`Outcome`), its log, its cancel flag, the compute's instances it holds,
and :class:`Walk`, the base of each job type's supervisor-side run. It imports no executor.

A run folder (``<workspace>/runs/<job>/``) mirrors what the service keeps for a job:

    job.yml                  the spec as submitted
    plan.json                everything resolved at submission (runner.plans)
    status.json              state, timestamps, error, metrics (runner/status.py)
    wd/                      snapshot of `code`; the command's working directory
    wd/outputs/, wd/logs/    the default outputs the service uploads (logged to MLflow at the end)
    env/                     the job's own venv over its environment's shared build (runner/envbuild.py)
    inputs/<name>            materialised inputs
    outputs/<name>/          one folder per declared output
    user_logs/std_log.txt    the command's stdout and stderr
    system_logs/amllab.log   what the runner did and decided
    trials/<job>_<n>/        a sweep's trials, each a run folder of its own
    steps/<step>/            a pipeline's steps, each a run folder of its own
"""

from __future__ import annotations

import fcntl
import threading
import time
import traceback
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Callable, Mapping

from . import diskspace, expectations as lab_expectations, status
from .errors import RunnerError
from .plans import Plan
from .workspace import Workspace

PLAN = "plan.json"
# Every process of a job inherits this variable (its run folder): how the job's processes are
# found once its supervisor is gone.
MARKER = "AMLLAB_RUN_DIR"
USER_LOG = Path("user_logs") / "std_log.txt"
SYSTEM_LOG = Path("system_logs") / "amllab.log"
# The folders of a run that hold its children's run folders.
TRIALS = "trials"
STEPS = "steps"


@dataclass
class Outcome:
    status: str                # Completed | Failed | Canceled
    exit_code: int | None = None
    error: dict[str, str] | None = None


class Log:
    """The runner's own log of a run (system_logs/amllab.log), one timestamped line per event.
    On a full disk a line waits in memory and is written with the next one that finds room
    (runner/diskspace.py): the log never ends the job."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / SYSTEM_LOG
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.waiting: list[str] = []

    def __call__(self, message: str) -> None:
        stamp = status.now()
        # Every line carries the stamp, so a reader can always tell the message from it.
        self.waiting.extend(f"{stamp} {line}\n" for line in message.splitlines() or [""])
        try:
            with open(self.path, "a", encoding="utf-8") as out:
                out.writelines(self.waiting)
        except OSError as error:
            if not diskspace.is_full(error):
                raise
            diskspace.notice(self.path, "writing the job's system log")
            return
        self.waiting.clear()


class CanceledWhilePreparing(BaseException):
    """Raised from the signal handler while the job is not yet Running, so that a cancel does
    not wait for a slow step (a download, an MLflow server) to finish. A BaseException, so
    that no ``except Exception`` on the way swallows it."""


class Cancel:
    """Set by a signal handler (job cancel, Ctrl-C). While ``interruptible`` (before Running)
    the handler also interrupts what is in progress; while Running the executor polls it."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reason = "canceled"
        self.interruptible = False

    def request(self, reason: str = "canceled") -> None:
        self.reason = reason
        self.event.set()
        if self.interruptible:
            self.interruptible = False
            raise CanceledWhilePreparing()

    @property
    def requested(self) -> bool:
        return self.event.is_set()


SLOT_POLL = 0.2


def acquire_slot(workspace: Workspace, compute: dict[str, Any], cancel: Cancel,
                 log: Log, count: int = 1) -> list[IO] | None:
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
    as an :class:`Outcome` (never a traceback that leaves the job hanging)."""

    def __init__(self, run_dir: Path, cancel: Cancel | None = None) -> None:
        self.run_dir = run_dir
        self.plan = read_plan(run_dir)
        self.workspace = Workspace(Path(self.plan.workspace))
        self.log = Log(run_dir)
        self.cancel = cancel or Cancel()
        self.tracking = self.workspace.tracking(self.plan.tracking_uri)

    def keep(self) -> frozenset[int]:
        """Processes of the supervisor's own that a sweep of strays must leave alone: the
        tracking agent, when this supervisor started it, and its loopback MLflow servers."""
        from . import mlflow_server

        return frozenset({self.tracking.agent_pid} if self.tracking.agent_pid else set()) | mlflow_server.pids()

    def enter(self, state: str, **fields: Any) -> None:
        """Record the job's new state. Its last one tells a full disk met on the way
        (runner/diskspace.py); a state between the first and the last that finds the disk full
        is skipped, not fatal."""
        if state in status.TERMINAL:
            state, fields = diskspace.final_state(state, fields)
        try:
            entered = status.transition(self.run_dir, state, **fields)
        except OSError as error:
            if state in status.TERMINAL or not diskspace.is_full(error):
                raise
            diskspace.notice(self.run_dir / status.FILE, f"recording the state {state}")
            self.log(f"state: {state} (not recorded: no space left on device)")
            return
        if entered:
            self.log(f"state: {state}")

    def guarded(self, steps: Callable[[], Outcome]) -> Outcome:
        try:
            return steps()
        except RunnerError as error:
            self.log(f"error: {error}")
            return Outcome("Failed", None, {"code": "PreparationError", "message": str(error)})
        except OSError as error:
            self.log(f"error: {error}")
            return Outcome("Failed", None, {"code": "SystemError", "message": str(error)})
        except Exception as error:  # a bug of ours: the job still ends, with the traceback kept
            self.log("internal error:\n" + traceback.format_exc())
            return Outcome("Failed", None, {"code": "InternalError",
                                            "message": f"{type(error).__name__}: {error} (see {self.log.path})"})

    def until_finalizing(self) -> Outcome:
        raise NotImplementedError

    def finalize(self, outcome: Outcome) -> None:
        raise NotImplementedError


def read_plan(run_dir: Path) -> Plan:
    """The job's plan, as its type's class (a damaged or foreign one: one RunnerError)."""
    return Plan.from_json(status.read(run_dir, PLAN), str(run_dir / PLAN))


def write_plan(run_dir: Path, plan: Plan) -> None:
    status.write_json_atomic(run_dir / PLAN, plan.to_json())


def canceled_before_running() -> Outcome:
    return Outcome("Canceled", None, {"code": "Canceled", "message": "the job was canceled before it ran"})


def duration(start: str | None, end: str | None) -> float | None:
    """Seconds from ``start`` to ``end`` (to now while it runs); None before it started."""
    if not start:
        return None
    finish = datetime.fromisoformat(end) if end else datetime.now(datetime.fromisoformat(start).tzinfo)
    return round((finish - datetime.fromisoformat(start)).total_seconds(), 3)


# -- executors ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Submission:
    """What `job create` asks beyond the spec: run one node of a job across machines
    (``multi_node``, a :class:`runner.distributed.MultiNode`), take a spot job's node after
    these many seconds (``preempt_after``). Only an executor that ``takes_node_options`` runs
    with them."""

    multi_node: Any = None
    preempt_after: tuple[float, ...] = ()

    @property
    def asks_for_nodes(self) -> bool:
        return self.multi_node is not None or bool(self.preempt_after)


class Executor:
    """One job type: how `job create` plans it, how its supervisor walks it, and what `job show`,
    `job list -p`, `job download` and the end of a job without its supervisor need to know of
    it. jobs.py, supervisor.py and cli.py ask these questions of the executor the plan's type
    names (:func:`executor_for`); none of them branches on a type.

    A subclass sets ``type`` (the plan's), ``spec_kind`` (what `load_spec` calls the YAML it
    runs), overrides :meth:`plan` and :meth:`walk`, and the rest where it differs from a job
    with no children whose outputs are its own. It registers itself with :func:`register`; the
    module is listed in ``runner/executors.py``."""

    type = ""
    spec_kind = ""
    # Whether --nodes/--node-rank/--rdzv-endpoint and --preempt-after mean anything to it.
    takes_node_options = False
    # The job's own log (`job show`'s log_path), relative to its run folder.
    log_file: Path = USER_LOG

    def plan(self, spec: Any, workspace: Workspace, name: str, run_dir: Path, submission: Submission) -> Plan:
        """Everything the job needs, resolved; raise (RunnerError, NotFound) before anything runs."""
        raise NotImplementedError

    def walk(self, run_dir: Path, cancel: Cancel | None = None, alone: bool = True) -> Walk:
        """The supervisor's walk of the job in ``run_dir``; ``alone``: the supervisor runs nothing
        else (not a pipeline's step)."""
        raise NotImplementedError

    def children(self, run_dir: Path) -> list[Path]:
        """The run folders of the job's children (a sweep's trials, a pipeline's steps) that have
        a status, in their order."""
        return []

    def child_job_names(self, name: str, run_dir: Path, plan: Plan) -> list[str]:
        """The job names `job list --parent-job-name` shows."""
        return [child.name for child in self.children(run_dir)]

    def parent_ended(self, run_dir: Path) -> None:
        """The job is being ended without its supervisor: give every child that never started a
        status, so that it ends too (and says why)."""

    def outputs_run(self, run_dir: Path, plan: Plan, record: dict[str, Any]) -> tuple[Path, Plan] | None:
        """The run whose outputs are the job's (its own; a sweep's best trial), or None when it has
        none yet."""
        return run_dir, plan

    def no_outputs(self, name: str, plan: Plan) -> str:
        """Why `job download` of a named output finds none (:meth:`outputs_run` gave None)."""
        return f"job {name} has no outputs yet"

    def output_origin(self, run_dir: Path, plan: Plan, record: dict[str, Any], port: str) -> str:
        """Which job produced output ``port`` (a reused step's came from the original)."""
        return f"output {port} of {record.get('reused_from') or record.get('name')}"

    def show(self, workspace: Workspace, run_dir: Path, plan: Plan, record: dict[str, Any],
             read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """`job show`'s fields of this type (``read``: a child's current record)."""
        return {}

    def download_extras(self, run_dir: Path, target: Path) -> None:
        """What `job download` of the default artifacts adds beyond the outputs' run's."""

    def summary(self, shown: dict[str, Any]) -> str:
        """One line on what the job did (a lab's report)."""
        metrics = lab_expectations.metrics_text(shown.get("metrics") or {})
        return f"{shown['type']} job {shown['name']}: {shown['status']}" + (f", {metrics}" if metrics else "")

    def expectations(self, expect: Mapping[str, Any], shown: dict[str, Any]) -> list[str]:
        """What differs from a lab's expectations of this type (its metrics; a sweep's trials,
        a pipeline's steps); the checks every job shares are the lab's own."""
        return lab_expectations.metrics(expect.get("metrics"), shown.get("metrics") or {})

    def console(self) -> Any:
        """A live view of the running job for a terminal (``render(shown)``,
        ``summary_table(shown, out)``, ``summary_lines(shown, out)``), or None: its log is shown."""
        return None


_EXECUTORS: dict[str, Executor] = {}


def register(executor: Executor) -> Executor:
    """Make ``executor`` the one for plans of its type (its module calls this when imported)."""
    _EXECUTORS[executor.type] = executor
    return executor


def executor_for(job_type: str) -> Executor:
    try:
        return _EXECUTORS[job_type]
    except KeyError:
        raise RunnerError(f"no executor runs jobs of type {job_type!r} (known: {', '.join(sorted(_EXECUTORS))})"
                          ) from None


def executor_for_spec(kind: str) -> Executor | None:
    """The executor that runs a spec of this kind ('commandJob'...), or None."""
    return next((executor for executor in _EXECUTORS.values() if executor.spec_kind == kind), None)


def executor_of(run_dir: Path) -> Executor:
    """The executor of the job in ``run_dir``, by its plan's type."""
    return executor_for(read_plan(run_dir).type)


def executors() -> list[Executor]:
    return list(_EXECUTORS.values())
