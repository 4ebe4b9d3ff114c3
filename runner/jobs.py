"""Jobs in a workspace: submit, show, list, stream, cancel, download. The CLI is a thin layer
over these functions, and so is anything else that runs a scenario (the quiz, the tests)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from validator.spec import Spec, load_spec

from . import executors  # noqa: F401 (registers every job type's executor)
from . import command, contract, diskspace, process, status
from .distributed import RANK_LOGS, MultiNode
from .errors import NotFound, RunnerError
from .plans import Plan
from .workspace import Workspace, check_job_name

CANCEL_WAIT = 30.0


def submit(file: str | Path, workspace: Workspace, name: str | None = None,
           overrides: Iterable[str] = (), warn: TextIO | None = None,
           multi_node: MultiNode | None = None, preempt_after: Sequence[float] = (),
           ignore: Sequence[str] = (), strict: bool = False) -> str:
    """Lint, resolve and start the job in ``file``; return its name once it is running on its
    own. Raises SpecError (lint errors), RunnerError (an unknown asset, a missing input). Lint
    warnings, which do not stop a job, are written to ``warn``. ``multi_node``: run this
    machine's node of a job that spans machines; ``preempt_after``: take a spot job's node
    after these many seconds of each run (one entry per preemption); ``ignore``: lint codes
    (or prefixes) not to check, as ``aml-lint --ignore``; ``strict``: refuse the spec on any lint
    error, also those azure-ai-ml sends on to the service (which are otherwise submitted, with
    the findings written to ``warn``)."""
    _require_run_extra()
    # The workspace may not exist yet (it is created once the job is accepted): lint then sees
    # an empty registry, and names every reference to register.
    spec = load_spec(file, overrides, workspace=workspace.folder, ignore=ignore, strict=strict)
    if warn is not None:
        warn.write(spec.render_findings(color=warn.isatty() and not os.environ.get("NO_COLOR")))
    return submit_spec(spec, workspace, name, multi_node, preempt_after)


def _require_run_extra() -> None:
    """The linter installs alone; running needs MLflow. Say so before anything starts."""
    from importlib.util import find_spec

    missing = [name for name in ("mlflow", "pathspec") if find_spec(name) is None]
    if missing:
        raise RunnerError(f"aml-run needs {' and '.join(missing)}, which the lint-only install leaves "
                          "out: pip install 'amllab[run]'")


def submit_spec(spec: Spec, workspace: Workspace, name: str | None = None,
                multi_node: MultiNode | None = None, preempt_after: Sequence[float] = ()) -> str:
    if spec.kind in ("commandComponent", "pipelineComponent"):
        raise RunnerError(f"{spec.path} is a component, not a job: register it with `aml-run "
                          f"component create --file {spec.path}` and use it from a pipeline job")
    executor = contract.executor_for_spec(spec.kind)
    if executor is None:
        kinds = ", ".join(e.type for e in contract.executors())
        raise RunnerError(f"{spec.path} is a {spec.kind}; aml-run runs {kinds} jobs")
    given = spec.data.get("name")
    name = check_job_name(name or (str(given) if given is not None else None) or workspace.new_job_name())
    run_dir = workspace.run_dir(name)
    submission = contract.Submission(multi_node, tuple(preempt_after))
    if submission.asks_for_nodes and not executor.takes_node_options:
        raise RunnerError(f"{spec.path}: --nodes/--node-rank and --preempt-after apply to command jobs, "
                          f"not to a {executor.type}")
    plan = executor.plan(spec, workspace, name, run_dir, submission)
    workspace.ensure()
    if _taken(run_dir):
        raise _name_taken(name, workspace)
    # Built under a name no job can have and renamed into place once complete: a `job create`
    # killed while it writes leaves no half-made job, only a staging folder the next one removes.
    staging = _staging_folder(workspace, name)
    try:
        staging.mkdir(parents=True)
        contract.write_plan(staging, plan)
        command.copy_spec(spec.path, staging)
        status.create(staging, {"name": name, "type": plan.type, "creation_time": status.now(),
                                "creator": _this_process()})
        fault_point("publish")
        try:
            os.rename(staging, run_dir)
        except OSError as error:
            if _taken(run_dir):  # another `job create` of the same name got there first
                raise _name_taken(name, workspace) from None
            raise RunnerError(f"cannot create the run folder {run_dir}: {error.strerror}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # nothing ran: leave no trace of the attempt
        raise
    try:
        fault_point("supervisor")
        start_supervisor(run_dir)
    except BaseException as error:
        # Visible now, so it is ended rather than removed: Ctrl-C cancels it, a failure fails it.
        _abandon(workspace, name, run_dir, error)
        raise
    return name


# Where `job create` builds a run folder before renaming it into place: inside runs/, under a
# name no job can have (job names start with a letter or digit), so it is never listed.
STAGING = ".creating"
SUPERVISOR = "runner.supervisor"
# Fault injection for tests of crash safety (see fault_point).
FAULT_PAUSE = "AMLLAB_FAULT_PAUSE"
INTERRUPTED = {"code": "CreateInterrupted",
               "message": "job create was interrupted before the job started; nothing ran: create the job again"}


def fault_point(point: str) -> None:
    """A fault-injection point: with ``AMLLAB_FAULT_PAUSE=<point>`` in its environment, ``job
    create`` says on stderr that it has reached ``point`` and waits there until it is signalled,
    so a test can kill it at exactly that moment. Points: ``publish`` (the run folder is built
    but not yet visible), ``supervisor`` (visible, its supervisor not started), ``record`` (the
    supervisor started, not yet recorded). Unset, this does nothing."""
    if os.environ.get(FAULT_PAUSE) != point:
        return
    sys.stderr.write(f"aml-run: paused at fault point '{point}' ({FAULT_PAUSE})\n")
    sys.stderr.flush()
    while True:
        time.sleep(60)


def _this_process() -> dict[str, Any]:
    return {"pid": os.getpid(), "start_ticks": process.start_ticks(os.getpid())}


def _taken(run_dir: Path) -> bool:
    # An empty folder is no job (an older aml-run left one when killed early): it may be replaced.
    return run_dir.is_dir() and any(run_dir.iterdir())


def _name_taken(name: str, workspace: Workspace) -> RunnerError:
    return RunnerError(f"a job named '{name}' already exists in {workspace.folder}; job names are "
                       "unique in a workspace (drop `name:` or pass another --name)")


def _staging_folder(workspace: Workspace, name: str) -> Path:
    """A fresh staging folder for ``name``, named after this process; on the way, those of
    `job create` processes that died are removed."""
    folder = workspace.runs / STAGING
    if folder.is_dir():
        for left in folder.iterdir():
            _, pid, ticks = (left.name.split(".") + ["", ""])[:3]
            if not (pid.isdigit() and ticks.isdigit() and process.same_process(int(pid), int(ticks))):
                shutil.rmtree(left, ignore_errors=True)
    me = _this_process()
    return folder / f"{name}.{me['pid']}.{me['start_ticks']}"


def _abandon(workspace: Workspace, name: str, run_dir: Path, error: BaseException) -> None:
    """`job create` stopped after the job became visible: no job runs. Still without a
    supervisor, it is ended here (one that starts later finds it ended and runs nothing);
    with one, it is canceled as any job is."""
    interrupted = isinstance(error, KeyboardInterrupt)
    state = "Canceled" if interrupted else "Failed"
    reason = INTERRUPTED if interrupted else {
        "code": "CreateFailed", "message": f"job create failed before the job started: {error}"}
    if status.transition(run_dir, state, when=lambda record: not record.get("supervisor"), error=reason):
        contract.Log(run_dir)(f"state: {state} ({reason['message']})")
    elif status.read(run_dir).get("status") not in status.TERMINAL:
        cancel(workspace, name)


def start_supervisor(run_dir: Path) -> None:
    log = run_dir / "system_logs" / "supervisor.txt"
    log.parent.mkdir(parents=True, exist_ok=True)
    pid = process.spawn_detached(process.python_module(SUPERVISOR, str(run_dir)),
                                 cwd=run_dir, log=log)
    fault_point("record")
    status.update(run_dir, supervisor={"pid": pid, "start_ticks": process.start_ticks(pid)})


# -- reading ------------------------------------------------------------------------------------

def record(workspace: Workspace, name: str) -> dict[str, Any]:
    """The job's status, after noticing a supervisor that died without saying so, or a `job
    create` that died before it started one. Every command that reports a state reads it
    through here, so none reports a dead job as still going."""
    return current_record(workspace, workspace.find_run(name))


def current_record(workspace: Workspace, run_dir: Path) -> dict[str, Any]:
    """:func:`record` for the job in ``run_dir`` (a sweep's trial, a pipeline's step too)."""
    current = status.read(run_dir)
    if current.get("status") in status.TERMINAL:
        return current
    supervisor = current.get("supervisor") or {}
    pid = supervisor.get("pid")
    if pid:
        if process.same_process(pid, supervisor.get("start_ticks")):
            return current
        current = status.read(run_dir)  # it may have finished between the two reads
        if current.get("status") in status.TERMINAL:
            return current
        parent_dir = run_dir.parent.parent
        if current.get("parent") and (parent_dir / status.FILE).is_file():
            # A trial or a step shares its parent's supervisor: the parent is ended, and ends
            # its children with it, so this child gets the same state whichever is looked at first.
            current_record(workspace, parent_dir)
        if status.read(run_dir).get("status") not in status.TERMINAL:
            died = {"code": "RunnerDied", "message": "the aml-run supervisor of this job stopped unexpectedly; "
                    f"see {run_dir / 'system_logs'}"}
            try:
                _end_without_supervisor(workspace, run_dir, "Failed", died)
            except OSError as error:
                if not diskspace.is_full(error):
                    raise
                # A reader on a full disk still reads: the end is shown, and recorded by the
                # next look that finds room.
                return {**status.read(run_dir), "status": "Failed", "error": {
                    **died, "message": died["message"] + "; this end is not recorded yet: no space left on device"}}
        return status.read(run_dir)
    creator = current.get("creator") or {}
    if creator.get("pid") and not process.same_process(creator["pid"], creator.get("start_ticks")) \
            and not process.module_processes(SUPERVISOR, str(run_dir)):
        # No supervisor, not even one just started that has yet to record itself. Checked again
        # under the lock the supervisor records itself under: if it did, it runs the job.
        if status.transition(run_dir, "Failed", when=lambda record: not record.get("supervisor"),
                             error=INTERRUPTED):
            contract.Log(run_dir)(f"state: Failed ({INTERRUPTED['message']})")
        return current_record(workspace, run_dir)
    return current


# A child that had not started when its parent ended: the service cancels a pipeline's steps
# that never ran, whatever ended the pipeline. Queued is waiting for an instance: nothing ran.
NEVER_STARTED = frozenset({"NotStarted", "Queued"})


def _end_without_supervisor(workspace: Workspace, run_dir: Path, state: str, error: dict[str, str]) -> None:
    """Do what the supervisor would have done at the end: stop every process of the job (its
    group, and whatever left it, found by the job's marker variable), close the MLflow run, and
    record the final state. Its trials or steps end with it: canceled with a canceled job, and
    with a failed one failed if they had started (their runtime is gone, as the service fails a
    job whose node disappears), canceled if they had not."""
    current = status.read(run_dir)
    if current.get("pgid"):
        process.stop_groups(current.get("pgids") or [current["pgid"]], grace=1.0)
    process.stop_marked(contract.MARKER, str(run_dir), grace=1.0)
    mlflow = current.get("mlflow") or {}
    if mlflow.get("run_id"):
        try:
            workspace.tracking(mlflow["tracking_uri"]).end_run(
                mlflow["run_id"], "KILLED" if state == "Canceled" else "FAILED")
        except RunnerError:
            pass  # the state below is what matters; MLflow keeps RUNNING, as for a lost node
    if status.transition(run_dir, state, error=error):
        contract.Log(run_dir)(f"state: {state} ({error['message']})")
    executor = contract.executor_of(run_dir) if (run_dir / contract.PLAN).is_file() else None
    if executor is None:
        return
    executor.parent_ended(run_dir)
    for child_dir in executor.children(run_dir):
        child = status.read(child_dir)
        if child.get("status") in status.TERMINAL:
            continue
        if state == "Failed" and child.get("status") in NEVER_STARTED:
            _end_without_supervisor(workspace, child_dir, "Canceled", {
                "code": "NotRun", "message": f"it never started: its parent job ended first ({error['message']})"})
        else:
            _end_without_supervisor(workspace, child_dir, state, error)


def show(workspace: Workspace, name: str) -> dict[str, Any]:
    """What ``job show`` prints (the shape is documented in docs/json.md)."""
    current = record(workspace, name)
    run_dir = workspace.run_dir(name)
    if current.get("step") and not (run_dir / contract.PLAN).is_file():
        return _unplanned_step(run_dir, name, current)
    plan = contract.read_plan(run_dir)
    executor = contract.executor_for(plan.type)
    mlflow = current.get("mlflow") or {}
    metrics = current.get("metrics")
    if metrics is None and mlflow.get("run_id"):
        try:
            metrics = workspace.tracking(mlflow["tracking_uri"]).metrics(mlflow["run_id"])
        except RunnerError:
            metrics = None
    planned_inputs = {key: value.get("value") if value["type"] == "literal" else value.get("source")
                      for key, value in plan.inputs.items()}
    source = executor.outputs_run(run_dir, plan, current)
    shown = {
        "name": name,
        "type": plan.type,
        "status": current.get("status"),
        "display_name": plan.display_name,
        "experiment_name": plan.experiment_name,
        "description": plan.description,
        "tags": plan.tags or {},
        "command": plan.command,
        "compute": plan.compute["name"] or plan.compute["kind"],
        "environment": plan.environment["label"],
        "creation_time": current.get("creation_time"),
        "start_time": current.get("start_time"),
        "end_time": current.get("end_time"),
        "duration_s": contract.duration(current.get("start_time"), current.get("end_time")),
        "inputs": current.get("inputs", planned_inputs),
        "outputs": _outputs(*source) if source else {},
        "metrics": metrics or {},
        "mlflow": {"tracking_uri": mlflow.get("tracking_uri", plan.tracking_uri),
                   "run_id": mlflow.get("run_id"), "experiment_id": mlflow.get("experiment_id")},
        "log_path": str(run_dir / executor.log_file),
        "system_log_path": str(run_dir / contract.SYSTEM_LOG),
        "run_dir": str(run_dir),
        "exit_code": current.get("exit_code"),
        "error": current.get("error"),
        "registered_outputs": current.get("registered_outputs") or {},
        # What a Failed or Canceled job left in its outputs is kept, and marked as partial.
        "outputs_complete": current.get("status") == "Completed" if current.get("status") in status.TERMINAL else None,
        "history": current.get("history", []),
    }
    shown.update(executor.show(workspace, run_dir, plan, current, lambda child: current_record(workspace, child)))
    return shown


def _unplanned_step(run_dir: Path, name: str, current: dict[str, Any]) -> dict[str, Any]:
    """A step that ended before it had a plan (it failed while Preparing, or never started):
    what its status records, its error first of all, in the shape of any job's."""
    parent = contract.read_plan(run_dir.parent.parent)
    return {
        "name": name, "type": current.get("type"), "status": current.get("status"),
        "display_name": current["step"], "experiment_name": parent.experiment_name, "description": None,
        "tags": {}, "command": None, "compute": None, "environment": None,
        "creation_time": current.get("creation_time"), "start_time": current.get("start_time"),
        "end_time": current.get("end_time"),
        "duration_s": contract.duration(current.get("start_time"), current.get("end_time")),
        "inputs": {}, "outputs": {}, "metrics": {},
        "mlflow": {"tracking_uri": parent.tracking_uri, "run_id": None, "experiment_id": None},
        "log_path": None, "system_log_path": None, "run_dir": str(run_dir),
        "exit_code": current.get("exit_code"), "error": current.get("error"), "registered_outputs": {},
        "outputs_complete": False if current.get("status") in status.TERMINAL else None,
        "history": current.get("history", []),
    }


def _outputs(run_dir: Path, plan: Plan) -> dict[str, str]:
    outputs = {"default": str(run_dir / "wd" / "outputs"), "logs": str(run_dir / "wd" / "logs")}
    outputs.update({key: value["path"] for key, value in plan.outputs.items()})
    return outputs


def list_jobs(workspace: Workspace, parent: str | None = None) -> list[dict[str, Any]]:
    """The workspace's jobs, or with ``parent`` its child jobs (``az ml job list
    --parent-job-name``): a sweep's trials, a pipeline's steps (those that have started,
    reused ones included)."""
    rows = []
    names = workspace.job_names()
    if parent is not None:
        parent_dir = workspace.find_run(parent)
        parent_plan = contract.read_plan(parent_dir)
        names = contract.executor_for(parent_plan.type).child_job_names(parent, parent_dir, parent_plan)
    for name in names:
        try:
            current = record(workspace, name)
            run_dir = workspace.run_dir(name)
            if current.get("step") and not (run_dir / contract.PLAN).is_file():
                # A step that never started (skipped, or its pipeline ended first) has no plan.
                kind, display_name = current.get("type"), current["step"]
                experiment_name = contract.read_plan(run_dir.parent.parent).experiment_name
            else:
                plan = contract.read_plan(run_dir)
                kind, display_name, experiment_name = plan.type, plan.display_name, plan.experiment_name
        except (OSError, RunnerError) as error:
            # One damaged run folder must not hide the others.
            rows.append({"name": name, "type": None, "status": "Damaged", "experiment_name": None,
                         "display_name": str(error), "creation_time": None, "duration_s": None})
            continue
        rows.append({"name": name, "type": kind, "status": current.get("status"),
                     "experiment_name": experiment_name, "display_name": display_name,
                     "creation_time": current.get("creation_time"),
                     "duration_s": contract.duration(current.get("start_time"), current.get("end_time"))})
    return sorted(rows, key=lambda row: row["creation_time"] or "")


# -- acting -------------------------------------------------------------------------------------

def cancel(workspace: Workspace, name: str, wait: float = CANCEL_WAIT) -> dict[str, Any]:
    """Stop the job and every process it started; returns its record once Canceled."""
    current = record(workspace, name)
    run_dir = workspace.run_dir(name)
    if current.get("status") in status.TERMINAL:
        return current
    supervisor = current.get("supervisor") or {}
    pid = supervisor.get("pid")
    # A sweep's trial shares its sweep's supervisor: signalling it would cancel the whole sweep,
    # so the trial is marked and the sweep's controller stops it.
    trial = bool(current.get("parent"))
    if pid and process.same_process(pid, supervisor.get("start_ticks")):
        if trial:
            status.update(run_dir, cancel_requested=True)
        else:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            current = status.read(run_dir)
            if current.get("status") in status.TERMINAL:
                return current
            if not process.same_process(pid, supervisor.get("start_ticks")):
                break  # it died before it could record Canceled (e.g. signalled while starting)
            time.sleep(0.05)
        else:
            if not trial:
                os.kill(pid, signal.SIGKILL)  # a supervisor that cannot stop is stopped
    _end_without_supervisor(workspace, run_dir, "Canceled", {"code": "Canceled", "message": "the job was canceled"})
    return status.read(run_dir)


def exit_code(state: str | None) -> int:
    return 0 if state == "Completed" else 1


def stream(workspace: Workspace, name: str, out: TextIO, poll: float = 0.05,
           cancel_on_interrupt: bool = True, announce_detach: bool = True) -> int:
    """Print the job's log as it grows, and its state changes, until it ends. Ctrl-C cancels
    the job and still waits for it to end (``job create --stream``), or, without
    ``cancel_on_interrupt``, stops following and leaves it running (``job stream``, as az does;
    ``announce_detach`` says so). Returns 0 for Completed, 1 otherwise, 130 when it stopped
    following."""
    run_dir = workspace.find_run(name)
    out.write(f"RunId: {name}\nRun folder: {run_dir}\n\n")
    out.flush()
    system = _Tail(run_dir / contract.SYSTEM_LOG)
    user = _UserOutput(run_dir)

    def step() -> bool:
        current = record(workspace, name)
        # Once the command has exited, its last line may lack a newline: show it now.
        exited = current.get("status") in ("Finalizing", *status.TERMINAL)
        _write_in_order(out, system.lines(), user.lines(final=exited))
        out.flush()
        if current.get("status") not in status.TERMINAL:
            return False
        # The last lines written before the end.
        _write_in_order(out, system.lines(final=True), user.lines(final=True))
        return True

    if watch(workspace, name, out, step, poll, cancel_on_interrupt, announce_detach=announce_detach) == 130:
        return 130
    final = status.read(run_dir)
    out.write(f"\nExecution Summary\n=================\nRunId: {name}\nStatus: {final.get('status')}\n")
    if final.get("error"):
        out.write(f"Error: {final['error'].get('message')}\n")
    out.flush()
    return exit_code(final.get("status"))


def follow(workspace: Workspace, name: str, out: TextIO, cancel_on_interrupt: bool = True,
           live: bool = False) -> int:
    """``job create --stream`` and ``job stream``: a job whose executor has a live view (a sweep's
    trials table) shows it when ``live`` (a terminal); otherwise its log is streamed, and such a
    job's table is printed once at the end."""
    view = contract.executor_of(workspace.find_run(name)).console()
    if view is not None and live:
        return _follow_live(workspace, name, out, view, cancel_on_interrupt)
    code = stream(workspace, name, out, cancel_on_interrupt=cancel_on_interrupt)
    if view is not None and code != 130:
        out.write("\n")
        view.summary_table(show(workspace, name), out)
    return code


LIVE_REFRESH = 0.25


def _follow_live(workspace: Workspace, name: str, out: TextIO, view: Any, cancel_on_interrupt: bool) -> int:
    """The live view until the job ends; Ctrl-C cancels it (``job create --stream``) or stops
    following (``job stream``). Returns 0 for Completed, 1 otherwise, 130 detached."""
    from rich.console import Console
    from rich.live import Live

    console = Console(file=out)
    latest = {"shown": show(workspace, name)}
    with Live(view.render(latest["shown"]), console=console, refresh_per_second=4, transient=False) as live:
        def step() -> bool:
            latest["shown"] = show(workspace, name)
            live.update(view.render(latest["shown"]))
            return latest["shown"]["status"] in status.TERMINAL

        if watch(workspace, name, out, step, LIVE_REFRESH, cancel_on_interrupt, on_detach=live.stop) == 130:
            return 130
    view.summary_lines(out, latest["shown"])
    return exit_code(latest["shown"]["status"])


def watch(workspace: Workspace, name: str, out: TextIO, step: Callable[[], bool], poll: float,
          cancel_on_interrupt: bool, on_detach: Callable[[], None] | None = None,
          announce_detach: bool = True) -> int | None:
    """Call ``step`` every ``poll`` seconds until it says the job has ended. Ctrl-C cancels
    the job and goes on until it has ended, or, without ``cancel_on_interrupt``, stops
    following (after ``on_detach``: a live table stops drawing) and returns 130."""
    interrupted = False
    while True:
        try:
            if step():
                return None
            time.sleep(poll)
        except KeyboardInterrupt:
            if not cancel_on_interrupt:
                if on_detach is not None:
                    on_detach()
                if announce_detach:
                    out.write(f"\n[aml-run] stopped following {name}; it goes on running "
                              f"(aml-run job stream {name} to follow it again)\n")
                return 130
            if interrupted:
                raise
            interrupted = True
            out.write("\n[aml-run] Ctrl-C: canceling the job...\n")
            out.flush()
            cancel(workspace, name)


def _write_in_order(out: TextIO, system: list[str], user: list[str]) -> None:
    """The command's output only happens while Running, so within one poll the runner's lines up
    to "state: Running" come before it and the rest (Finalizing...) after it."""
    split = next((i + 1 for i, line in enumerate(system) if line.rstrip().endswith("state: Running")), 0)
    for line in system[:split]:
        out.write(f"[aml-run] {line.split(' ', 1)[-1]}")
    out.writelines(user)
    for line in system[split:]:
        out.write(f"[aml-run] {line.split(' ', 1)[-1]}")


class _UserOutput:
    """What the job printed: std_log.txt, and for a distributed job every rank's log, rank 0's
    lines as they are and the others' prefixed with their rank (as `[rank 3] ...`)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.tails = {-1: _Tail(run_dir / contract.USER_LOG)}

    def lines(self, final: bool = False) -> list[str]:
        for path in (self.run_dir / RANK_LOGS).glob("rank_*.txt"):
            rank = path.stem.split("_", 1)[1]
            if rank.isdigit() and int(rank) not in self.tails:
                self.tails[int(rank)] = _Tail(path)
        found = []
        for rank in sorted(self.tails):
            prefix = f"[rank {rank}] " if rank > 0 else ""
            found.extend(prefix + line for line in self.tails[rank].lines(final))
        return found


class _Tail:
    """Complete lines appended to a file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def lines(self, final: bool = False) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self.partial + chunk
        *complete, self.partial = data.split(b"\n")
        found = [line.decode("utf-8", "replace") + "\n" for line in complete]
        if final and self.partial:
            found.append(self.partial.decode("utf-8", "replace") + "\n")
            self.partial = b""
        return found


def wait(workspace: Workspace, name: str, timeout: float | None = None, poll: float = 0.05) -> dict[str, Any]:
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        current = record(workspace, name)
        if current.get("status") in status.TERMINAL:
            return current
        if deadline is not None and time.monotonic() > deadline:
            raise RunnerError(f"job {name} did not end within {timeout:g} s (status {current.get('status')})")
        time.sleep(poll)


def download(workspace: Workspace, name: str, download_path: Path, output_name: str | None = None,
             everything: bool = False) -> list[Path]:
    """Copy a job's files out, laid out as ``az ml job download`` does: the default artifacts
    (./outputs, ./logs and the logs) under ``artifacts/``, a named output under
    ``named-outputs/<name>/``. A sweep's are its best trial's, with the sweep's own log under
    ``artifacts/sweep_logs/`` (the how-to page: "download all default and named outputs of the
    best trial job and logs of the sweep job")."""
    run_dir = workspace.find_run(name)
    plan = contract.read_plan(run_dir)
    executor = contract.executor_for(plan.type)
    written = []
    if output_name in (None, "default") or everything:
        executor.download_extras(run_dir, download_path / "artifacts")
    source = executor.outputs_run(run_dir, plan, status.read(run_dir))
    if source is None:
        if output_name not in (None, "default") or everything:
            raise NotFound(executor.no_outputs(name, plan))
        return [download_path / "artifacts"]
    run_dir, plan = source
    if output_name is not None and output_name not in plan.outputs and output_name != "default":
        available = ", ".join(["default", *plan.outputs])
        raise NotFound(f"job {name} has no output '{output_name}'; its outputs are: {available}")
    if output_name in (None, "default") or everything:
        target = download_path / "artifacts"
        for source, relative in ((run_dir / "wd" / "outputs", "outputs"), (run_dir / "wd" / "logs", "logs"),
                                 (run_dir / "user_logs", "user_logs"), (run_dir / RANK_LOGS, "user_logs"),
                                 (run_dir / "system_logs", "system_logs")):
            if source.exists():
                shutil.copytree(source, target / relative, dirs_exist_ok=True)
        written.append(target)
    for key, planned in plan.outputs.items():
        if everything or key == output_name:
            source = Path(planned["path"])
            target = download_path / "named-outputs" / key
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            elif source.is_file():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / source.name)
            else:
                continue
            written.append(target)
    return written
