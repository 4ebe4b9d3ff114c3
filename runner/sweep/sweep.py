"""A sweep job: plan it at submission, run its trials in the supervisor.

The sweep's supervisor is the service's hyperparameter-tuning controller. It samples a
configuration whenever fewer than ``max_concurrent_trials`` trials are active, runs each trial
as a command job through :class:`runner.command.JobRun` (the same prepare, execute and
finalize as any command job, in ``runs/<sweep>/trials/<sweep>_<n>/``, each its own MLflow child
run of the sweep's run with its hyperparameters logged as params), reads every running trial's
primary metric back from MLflow, and applies the early-termination policy to each new interval.
Its system log reads like the service's ``hyperdrive.txt``: [GENERATOR], [SCHEDULER] and
[CONTROLLER] lines.

Rules it follows, with where they come from:

* A trial is active (counts against ``max_concurrent_trials``) from the moment it is scheduled
  until its command exits; its finalizing overlaps the next trial. Registered computes still
  bound how many run at once (each trial holds one instance), as the docs say concurrency is
  "gated on the resources available in the specified compute target".
* ``max_total_trials`` is an upper bound: a sampler never repeats a configuration, so a finite
  search space can end the sweep earlier (HyperDrive: "there may be fewer runs when the sample
  space is smaller than this value").
* ``timeout`` cancels the sweep with all its trials; ``trial_timeout`` cancels one trial (the
  how-to page's words). The SDK raises both to at least 60 s (SPEC §4.6), and so does the
  runner; ``AMLLAB_MIN_SWEEP_TIMEOUT`` lowers that floor for labs and tests that want to watch a
  timeout happen in seconds.
* Interval N of a trial is its N-th logged value of the primary metric. A trial stopped by the
  policy at interval N counts in later evaluations with its first N values: what it logs while
  it is being stopped comes after the decision. The policies themselves are in
  :mod:`runner.sweep.policies`.
* The best trial is the one whose best primary-metric value is best, among all trials, failed
  and canceled ones included (``get_best_run_by_primary_metric`` defaults to
  ``include_failed=True, include_canceled=True``); ties go to the earlier trial.
* A failed trial does not stop the sweep. The sweep ends Completed unless every trial failed
  (then Failed), or it was canceled or ran out of time (Canceled).
"""

from __future__ import annotations

import math
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from validator.spec import JobOutput, Spec

from .. import command, contract, expectations as lab_expectations, inputs, process, status
from ..errors import RunnerError
from ..tracking import StoreWatch
from ..plans import Plan, SweepPlan
from ..command import JobRun
from ..contract import TRIALS, Cancel, Executor, Submission, Walk, register
from ..workspace import Workspace
from . import policies, sampling

SNAPSHOT = "snapshot"
# How often the running trials' metrics are read back: often with a policy to apply, seldom
# when only the live table and `job show` want them. With a policy and a local SQLite store the
# controller also looks at the store every WATCH_TICK and reads as soon as a trial logged
# something (tracking.StoreWatch), so a decision follows the value that makes it within a few
# milliseconds, not within a period (at 50 ms per interval, a 0.2 s period let a trial log 3 to 7
# more intervals before the controller even saw the one it was to be stopped at). A store that
# cannot be watched (a tracking server) is read every POLL_UNWATCHED.
POLL_WITH_POLICY = 0.2
POLL_UNWATCHED = 0.05
POLL_WITHOUT_POLICY = 1.0
WATCH_TICK = 0.01
SDK_MIN_TIMEOUT = 60
# Once the sweep ends, a trial's thread that is still in a step that cannot be interrupted (a
# slow download) is given this long before the trial is recorded as ended without it.
TRIAL_JOIN_GRACE = 30.0


def trial_name(sweep: str, index: int) -> str:
    return f"{sweep}_{index}"


# -- planning (in `aml-run job create`) ----------------------------------------------------------

def plan_sweep(spec: Spec, workspace: Workspace, name: str, run_dir: Path) -> SweepPlan:
    """Resolve the sweep and its trial template; raise before anything runs if it cannot."""
    job = spec.sweep_job()
    try:
        space = sampling.parse_space(job.search_space)
        seed = job.seed if job.seed is not None else secrets.randbelow(2**31)
        sampling.make_sampler(job.sampling_algorithm, space, seed=seed, rule=job.rule,
                              logbase=job.logbase, goal=job.goal)
        policy = policies.policy_from_spec(job.early_termination)
    except ValueError as error:  # SearchSpaceError too: a spec lint let through, told in one line
        raise RunnerError(f"{spec.path}: {error}") from None
    if not job.primary_metric:
        raise RunnerError(f"{spec.path}: objective.primary_metric is empty: name the metric the script logs")
    trial = command.plan_command(job.trial, spec, workspace, name, run_dir,
                                 references=[f"search_space.{key}" for key in space.names])
    floor = _timeout_floor()
    limits = {
        "max_total_trials": job.max_total_trials,
        # Unset, every trial may run at once (the docs' default).
        "max_concurrent_trials": job.max_concurrent_trials or job.max_total_trials,
        "timeout": _floored(job.timeout, floor),
        "trial_timeout": _floored(job.trial_timeout, floor),
    }
    trial.timeout = limits["trial_timeout"]
    return SweepPlan(
        name=name, display_name=trial.display_name, experiment_name=trial.experiment_name,
        description=trial.description, tags=trial.tags, spec=trial.spec, overrides=trial.overrides,
        command=trial.command, code=trial.code, environment=trial.environment, compute=trial.compute,
        inputs=trial.inputs, outputs=trial.outputs, workspace=trial.workspace, tracking_uri=trial.tracking_uri,
        trial=trial,
        search_space=job.search_space,
        space_size=space.size,
        sampling={"algorithm": job.sampling_algorithm, "rule": job.rule, "seed": seed,
                  "seed_given": job.seed is not None, "logbase": job.logbase},
        objective={"goal": job.goal, "primary_metric": job.primary_metric},
        limits=limits,
        limits_as_written={"timeout": job.timeout, "trial_timeout": job.trial_timeout},
        early_termination=policy.to_json() if policy else None,
        # Each trial plans its outputs in its own folder (the name `${{name}}` of an output
        # path is the trial's); a named output is registered once, from the best trial.
        trial_outputs={key: {"type": value.type, "mode": value.mode, "path": value.path}
                       for key, value in job.trial.outputs.items()},
    )


def _timeout_floor() -> int:
    raw = os.environ.get("AMLLAB_MIN_SWEEP_TIMEOUT")
    try:
        return max(1, int(raw)) if raw else SDK_MIN_TIMEOUT
    except ValueError:
        raise RunnerError(f"AMLLAB_MIN_SWEEP_TIMEOUT={raw!r} is not a whole number of seconds") from None


def _floored(value: int | None, floor: int) -> int | None:
    if not value or value <= 0:
        return None
    return max(value, floor)


# -- a trial --------------------------------------------------------------------------------------

class Trial:
    """One trial: its run folder, its thread, and what the controller knows of it."""

    def __init__(self, sweep: "SweepRun", index: int, suggestion: sampling.Suggestion) -> None:
        self.sweep = sweep
        self.index = index
        self.number = suggestion.number
        self.params = suggestion.params
        self.name = trial_name(sweep.plan.name, index)
        self.run_dir = sweep.run_dir / TRIALS / self.name
        self.cancel = contract.Cancel()
        self.exited = threading.Event()     # its command is over: it no longer counts as active
        self.done = threading.Event()       # its final state is recorded
        self.history: list[float] = []      # primary-metric values, as read back from MLflow
        self.evaluated = 0                  # intervals the policy has looked at
        self.stopped_by: dict[str, Any] | None = None
        # The policy decided to stop it, but its command had already ended on its own (exit 0)
        # when the cancel came: it is Completed, and this keeps what the policy decided.
        self.would_have_stopped: dict[str, Any] | None = None
        # Orders the policy's decision and the command's end: one of them comes first, and the
        # trial's record, its row and the policy's later histories all agree on which.
        self.lock = threading.Lock()
        self.unusable = False               # it logged NaN or infinity: out of the policy's reach
        self.read_final = False             # its last values are read and the sampler told
        self.outcome: contract.Outcome | None = None
        self.final_row: dict[str, Any] | None = None
        self._run_id: str | None = None
        self.thread: threading.Thread | None = None

    # -- its run folder ----------------------------------------------------------------------

    def create(self) -> None:
        sweep = self.sweep
        template = sweep.plan.trial
        texts = {key: sampling.format_value(value) for key, value in self.params.items()}
        outputs = {key: inputs.plan_output(JobOutput(key, value["type"], value["mode"], value["path"]),
                                           self.run_dir, sweep.workspace, self.name)
                   for key, value in sweep.plan.trial_outputs.items()}
        plan = template.copy(
            name=self.name,
            display_name=self.name,
            code=str(sweep.run_dir / SNAPSHOT) if template.code else None,
            outputs=outputs,
            parent=sweep.plan.name,
            params=self.params,
            mlflow_tags={"mlflow.parentRunId": sweep.parent_run_id or "", "amllab.parent": sweep.plan.name},
            mlflow_params=texts,
            known_values={f"search_space.{key}": text for key, text in texts.items()},
            # "inputs, outputs, and parameters are accessible as environment variables using the
            # prefix AZUREML_SWEEP_" (SweepJob's docstring).
            values_prefix="AZUREML_SWEEP_",
        )
        self.run_dir.mkdir(parents=True)
        contract.write_plan(self.run_dir, plan)
        status.create(self.run_dir, {"name": self.name, "type": "command", "parent": sweep.plan.name,
                                     "creation_time": status.now(), "params": self.params,
                                     "supervisor": sweep.supervisor})

    def start(self) -> None:
        self.thread = threading.Thread(target=self._walk, name=self.name, daemon=True)
        self.thread.start()

    def _walk(self) -> None:
        run = JobRun(self.run_dir, alone=False, cancel=self.cancel)
        outcome = contract.Outcome("Failed", None, {"code": "InternalError", "message": "the trial's walk stopped"})
        try:
            outcome = run.until_finalizing()
        finally:
            with self.lock:
                self.outcome = outcome
                if self.stopped_by is not None and outcome.status != "Canceled":
                    # The command ended on its own before the cancel reached it: it ran to its
                    # end, and every value it logged counts.
                    self.would_have_stopped, self.stopped_by = self.stopped_by, None
                self.exited.set()
            self.sweep.wake.set()
        extra: dict[str, Any] = {}
        if self.would_have_stopped is not None:
            self.sweep.log(f"[CONTROLLER] trial {self.name} ended ({outcome.status}) before the policy's cancel "
                           f"reached it; the {self.would_have_stopped['policy']} policy would have stopped it at "
                           f"interval {self.would_have_stopped['interval']}")
            extra["would_have_stopped"] = self.would_have_stopped
        if self.stopped_by is not None:
            extra["stopped_by"] = self.stopped_by
        try:
            run.finalize(outcome, **extra)
        finally:
            self.done.set()
            self.sweep.wake.set()

    # -- what the controller reads --------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        return status.read(self.run_dir)

    @property
    def run_id(self) -> str | None:
        """Its MLflow run, once Preparing has created it (read from its status until then)."""
        if self._run_id is None:
            self._run_id = (self.record().get("mlflow") or {}).get("run_id")
        return self._run_id

    def policy_history(self) -> list[float]:
        """The values the policy compares: all of them, or those up to the stopping interval."""
        if self.stopped_by is not None:
            return self.history[: self.stopped_by["interval"]]
        return self.history

    def request_stop(self, reason: str, stop: policies.Stop | None = None) -> bool:
        """Ask the trial's walk to stop; False when it was already asked or its command ended.
        A policy's decision that comes after the command exited on its own (it logged its
        last value and quit, and its walk has not noticed yet) cancels nothing: it is kept as
        ``would_have_stopped`` and the trial ends as its command did."""
        with self.lock:
            if self.cancel.requested or self.would_have_stopped is not None:
                return False
            decision = None
            if stop is not None:
                decision = {"policy": stop.policy, "interval": stop.interval, "reason": stop.reason,
                            "numbers": stop.numbers}
                if self.exited.is_set() or not self._command_running():
                    self.would_have_stopped = decision
                    return False
            if self.exited.is_set():
                return False
            self.stopped_by = decision
            self.cancel.request(reason)
            return True

    def _command_running(self) -> bool:
        """Whether the trial's command (each node's process) is still running: False once all
        have exited, even before the walk reaps them. Before it started, True."""
        record = self.record()
        if record.get("cluster"):  # on a cluster's node: the supervisor's last word from the node
            return not record.get("command_ended")
        pgids = record.get("pgids")
        return not pgids or any(process.pid_alive(pgid) for pgid in pgids)


# -- the sweep's walk (in the supervisor) ---------------------------------------------------------

class SweepRun(Walk):
    """The sweep job's walk: Queued, Preparing (the code snapshot every trial shares, the
    parent MLflow run, the sampler), Running (the controller loop), Finalizing (the best
    trial), and its final state."""

    def __init__(self, run_dir: Path, cancel: contract.Cancel | None = None, alone: bool = True) -> None:
        """``alone``: the supervisor runs nothing else (not a pipeline's sweep step), so every
        process re-parented to it is this sweep's."""
        super().__init__(run_dir, cancel)
        self.alone = alone
        plan = self.plan
        self.goal = plan.objective["goal"]
        self.metric = plan.objective["primary_metric"]
        self.limits = plan.limits
        self.policy = policies.policy_from_json(plan.early_termination) if plan.early_termination else None
        self.trials: list[Trial] = []
        self.wake = threading.Event()
        self.parent_run_id: str | None = None
        self.sampler: sampling.Sampler | None = None
        self.exhausted = False
        self.timed_out = False
        self.supervisor = {"pid": os.getpid(), "start_ticks": process.start_ticks(os.getpid())}
        self._summary_written: Any = None
        self._last_read = 0.0
        self._last_chores = 0.0
        watch = StoreWatch(plan.tracking_uri)
        self.watch = watch if self.policy is not None and watch.watchable else None

    # -- Queued, Preparing ------------------------------------------------------------------

    def until_finalizing(self) -> contract.Outcome:
        def steps() -> contract.Outcome:
            self.cancel.interruptible = self.alone
            self.enter("Queued")
            self.enter("Preparing")
            self._prepare()
            self.cancel.interruptible = False
            if self.cancel.requested:
                return contract.Outcome("Canceled", None, {"code": "Canceled",
                                                          "message": "the sweep was canceled before it ran"})
            self.enter("Running")
            return self._control()

        return self.guarded(steps)

    def _prepare(self) -> None:
        from ..snapshot import take_snapshot

        plan, log = self.plan, self.log
        if plan.code:
            # One snapshot for every trial, taken now, as the service snapshots at submission.
            report = take_snapshot(Path(plan.code), self.run_dir / SNAPSHOT, exclude=(self.workspace.folder,))
            log(f"snapshot of {plan.code}: {report.files} files, {report.bytes} bytes"
                + (f", {report.ignored} ignored by {report.ignore_file}" if report.ignored else ""))
            for warning in report.warnings:
                log(f"warning: {warning}")
        self.tracking.check_reachable()
        run = self.tracking.start_run(plan.experiment_name, plan.display_name,
                                      {"mlflow.runName": plan.display_name, "amllab.job": plan.name,
                                       "amllab.type": "sweep", **plan.tags})
        self.parent_run_id = run["run_id"]
        status.update(self.run_dir, mlflow={"tracking_uri": plan.tracking_uri, "run_id": run["run_id"],
                                            "experiment_id": run["experiment_id"]})
        log(f"MLflow run {run['run_id']} in experiment '{plan.experiment_name}' ({plan.tracking_uri}); "
            "each trial is a child run of it")
        space = sampling.parse_space(plan.search_space)
        settings = plan.sampling
        self.sampler = sampling.make_sampler(settings["algorithm"], space, seed=settings["seed"],
                                             rule=settings["rule"], logbase=settings["logbase"], goal=self.goal)
        described = settings["algorithm"] + (" (sobol)" if settings["rule"] == "sobol" else "")
        if settings["algorithm"] != "grid":
            described += f", seed {settings['seed']}" + ("" if settings["seed_given"] else " (chosen by aml-run)")
        size = "infinite" if space.size is None else f"{space.size} configuration(s)"
        limits = self.limits
        log(f"sampling: {described}; search space: {size}; objective: {self.goal} {self.metric}")
        log(f"limits: max_total_trials {limits['max_total_trials']}, max_concurrent_trials "
            f"{limits['max_concurrent_trials']}, timeout {limits['timeout'] or 'none'}, trial_timeout "
            f"{limits['trial_timeout'] or 'none'}" + self._floor_note())
        log(f"early termination: {self.policy.describe() if self.policy else 'none (every trial runs to its end)'}")
        log(plan.compute["note"])

    def _floor_note(self) -> str:
        written = self.plan.limits_as_written or {}
        raised = [f"{key} {written[key]} -> {self.limits[key]}" for key in ("timeout", "trial_timeout")
                  if written.get(key) and self.limits.get(key) != written[key] and written[key] > 0]
        return f" (raised to the SDK's minimum: {', '.join(raised)})" if raised else ""

    # -- Running: the controller ---------------------------------------------------------------

    def _control(self) -> contract.Outcome:
        timeout = self.limits.get("timeout")
        deadline = time.monotonic() + timeout if timeout else None
        woken = True
        try:
            while True:
                # Cleared before looking, so a trial that ends while we look wakes the next round.
                self.wake.clear()
                if self.cancel.requested:
                    self._stop_all("canceled (the sweep was canceled)")
                    break
                if deadline is not None and time.monotonic() > deadline:
                    self.timed_out = True
                    self.log(f"[CONTROLLER] the sweep reached its timeout ({timeout} s): canceling it and its trials")
                    self._stop_all(f"canceled (the sweep ran past limits.timeout, {timeout} s)")
                    break
                # Chores (cancel requests, new trials, the table) when a trial started or ended
                # and at least every period; the metrics whenever the store changed.
                now = time.monotonic()
                chores = woken or now - self._last_chores >= self._period() * 0.9
                if chores:
                    self._last_chores = now
                    self._honour_cancel_requests()
                decided = self._read_metrics()
                if chores or decided:
                    self._launch()
                    self._write_summary()
                if not self._active() and (self.exhausted or len(self.trials) >= self.limits["max_total_trials"]):
                    break
                woken = self.wake.wait(WATCH_TICK if self.watch is not None and self._active() else self._period())
        finally:
            self._wait_for_trials()
            self._read_metrics(final=True)
            strays = process.stop_descendants(keep=self.keep()) if self.alone else \
                process.stop_marked(contract.MARKER, str(self.run_dir))
            if strays:
                self.log(f"stopped {strays} process(es) the trials left running")
            self._write_summary()
        return self._outcome()

    def _active(self) -> list[Trial]:
        return [trial for trial in self.trials if not trial.exited.is_set()]

    def _launch(self) -> None:
        stopping = self.cancel.requested or self.timed_out
        wanted = min(self.limits["max_concurrent_trials"] - len(self._active()),
                     self.limits["max_total_trials"] - len(self.trials))
        if stopping or self.exhausted or wanted <= 0:
            return
        assert self.sampler is not None
        self.log(f"[GENERATOR] trying to sample {wanted} trial(s) from the search space")
        for _ in range(wanted):
            suggestion = self.sampler.ask()
            if suggestion is None:
                self.exhausted = True
                self.log(f"[GENERATOR] the search space is exhausted after {len(self.trials)} distinct "
                         "configuration(s): no more trials will be generated")
                return
            trial = Trial(self, len(self.trials), suggestion)
            trial.create()
            self.trials.append(trial)
            shown = ", ".join(f"{key}={sampling.format_value(value)}" for key, value in suggestion.params.items())
            self.log(f"[SCHEDULER] scheduling trial {trial.name}: {shown}")
            trial.start()
        if len(self.trials) >= self.limits["max_total_trials"]:
            self.log(f"[GENERATOR] max_total_trials ({self.limits['max_total_trials']}) reached: all trials generated")

    def _honour_cancel_requests(self) -> None:
        """`aml-run job cancel <trial>` marks the trial's status; the controller stops it."""
        for trial in self._active():
            if not trial.cancel.requested and trial.record().get("cancel_requested"):
                self.log(f"[CONTROLLER] trial {trial.name} canceled by request")
                trial.request_stop("canceled")

    def _period(self) -> float:
        if self.policy is None:
            return POLL_WITHOUT_POLICY
        return POLL_WITH_POLICY if self.watch is not None else POLL_UNWATCHED

    def _read_metrics(self, final: bool = False) -> bool:
        """Read every live trial's primary-metric values back from MLflow and, with a policy,
        evaluate each interval that is new since the last read, trial by trial in order. Reads
        when the store changed, a trial ended, or a period passed; True when the policy stopped
        a trial."""
        now = time.monotonic()
        untold = any(trial.exited.is_set() and not trial.read_final for trial in self.trials)
        changed = self.watch is not None and self.watch.changed()
        if not final and not untold and not changed and now - self._last_read < self._period() * 0.9:
            return False
        self._last_read = now
        # Running trials, and ended ones once more for the values they logged last.
        ids, ending = {}, []
        for trial in self.trials:
            if trial.read_final:
                continue
            if trial.exited.is_set():
                ending.append(trial)  # its command is over: what it logged is final
            run_id = trial.run_id
            if run_id:
                ids[run_id] = trial
        if not ids:
            self._tell(ending)
            return False
        try:
            values = self.watch.metric_values(list(ids), self.metric) if self.watch is not None else None
            if values is None:
                values = self.tracking.metric_values(list(ids), self.metric)
        except RunnerError as error:
            self.log(f"warning: could not read {self.metric} back from MLflow: {error}")
            return False
        for run_id, trial in ids.items():
            trial.history = [float(v) for v in values.get(run_id, [])]
            if not trial.unusable and not all(math.isfinite(v) for v in trial.history):
                trial.unusable = True
                self.log(f"[CONTROLLER] trial {trial.name} logged a {self.metric} that is not a finite number "
                         f"(interval {next(i for i, v in enumerate(trial.history, 1) if not math.isfinite(v))}): "
                         "the policy cannot compare it, so it leaves this trial out from now on")
        decided = self._apply_policy() if self.policy is not None and not final else False
        self._tell(ending)
        return decided

    def _tell(self, ended: list[Trial]) -> None:
        """Tell the sampler how each ended trial did (Bayesian sampling learns from it): its
        best primary-metric value, or nothing for a failed trial."""
        assert self.sampler is not None
        for trial in ended:
            trial.read_final = True
            failed = trial.outcome is None or trial.outcome.status == "Failed"
            self.sampler.tell(trial.number, None if failed or trial.unusable else best_of(trial.history, self.goal))

    def _apply_policy(self) -> bool:
        """Evaluate every new interval, in order, trial by trial; True when a trial was stopped.
        A trial whose command completed is evaluated on what it logged last too, as the service
        evaluates every interval: the decision cannot cancel it any more, and is kept as
        ``would_have_stopped``."""
        assert self.policy is not None
        decided = False
        histories = {trial.name: trial.policy_history() for trial in self.trials
                     if trial.history and not trial.unusable}
        finished = frozenset(trial.name for trial in self.trials
                             if trial.outcome is not None and trial.outcome.status == "Completed")
        for trial in self.trials:
            if trial.cancel.requested or trial.unusable or trial.would_have_stopped:
                continue
            if trial.exited.is_set() and (trial.outcome is None or trial.outcome.status != "Completed"):
                continue
            for interval in range(trial.evaluated + 1, len(trial.history) + 1):
                trial.evaluated = interval
                stop = self.policy.check(histories, trial.name, interval, goal=self.goal, metric=self.metric,
                                         finished=finished)
                if stop is not None:
                    if trial.request_stop(f"canceled by the {stop.policy} policy at interval {stop.interval}: "
                                          f"{stop.reason}", stop):
                        decided = True
                        self.log(f"[CONTROLLER] canceling trial {trial.name}: {stop.reason}")
                    else:
                        self.log(f"[CONTROLLER] not canceling trial {trial.name}: its command had already ended "
                                 f"when the {stop.policy} policy decided ({stop.reason})")
                    histories[trial.name] = trial.policy_history()
                    break
        return decided

    def _stop_all(self, reason: str) -> None:
        for trial in self.trials:
            if not trial.exited.is_set():
                trial.request_stop(reason)

    def _wait_for_trials(self) -> None:
        deadline = time.monotonic() + TRIAL_JOIN_GRACE
        for trial in self.trials:
            if trial.thread is not None:
                trial.thread.join(max(0.0, deadline - time.monotonic()))
            if not trial.done.is_set():
                # Stuck in a step no signal interrupts: record its end without it.
                status.transition(trial.run_dir, "Canceled", error={
                    "code": "Canceled", "message": "the trial did not stop within "
                    f"{TRIAL_JOIN_GRACE:g} s of the sweep's end and was abandoned"})
                self.log(f"[CONTROLLER] trial {trial.name} did not stop in time; recorded as Canceled")

    # -- what it found ------------------------------------------------------------------------

    def _outcome(self) -> contract.Outcome:
        states = [trial.record().get("status") for trial in self.trials]
        if self.cancel.requested:
            return contract.Outcome("Canceled", None, {"code": "Canceled", "message": "the sweep was canceled"})
        if self.timed_out:
            return contract.Outcome("Canceled", None, {"code": "SweepTimeout", "message":
                                                      f"the sweep ran past limits.timeout ({self.limits['timeout']} s); "
                                                      "it and its running trials were canceled"})
        if states and all(state == "Failed" for state in states):
            first = self.trials[0]
            said = ((first.outcome.error or {}).get("message") if first.outcome else None) or \
                f"see its log: {first.run_dir / contract.USER_LOG}"
            return contract.Outcome("Failed", None, {"code": "AllTrialsFailed", "message":
                                                    f"every trial failed; {first.name}: {said}"})
        return contract.Outcome("Completed", 0)

    def summary(self) -> dict[str, Any]:
        """The trials table and the best trial, as ``job show`` reports them."""
        rows = []
        for trial in self.trials:
            if trial.final_row is not None:
                rows.append(trial.final_row)
                continue
            record = trial.record()
            with trial.lock:  # its decision and its end, as one
                stopped, would_have = trial.stopped_by, trial.would_have_stopped
            rows.append({
                "name": trial.name,
                "status": record.get("status"),
                "params": trial.params,
                "metrics": record.get("metrics") or ({self.metric: trial.history[-1]} if trial.history else {}),
                "intervals": len(trial.history),
                "metric": best_of(trial.history, self.goal),
                "stopped_by": stopped,
                # What it logged after the interval the policy stopped it at, while the cancel
                # was on its way: drawn apart by `job plot`, shown as +N in the live table.
                "logged_after_stop": max(0, len(trial.history) - stopped["interval"]) if stopped else None,
                "would_have_stopped": would_have,
                "error": record.get("error"),
                "start_time": record.get("start_time"),
                "end_time": record.get("end_time"),
            })
            if trial.done.is_set() and trial.read_final:
                trial.final_row = rows[-1]  # it will not change again: no more reads of its files
                if would_have and not record.get("would_have_stopped"):
                    # Decided on its last values after its walk had written its end.
                    status.update(trial.run_dir, would_have_stopped=would_have)
        return {"trials": rows, "best_trial": best_trial(rows, self.goal)}

    def _write_summary(self) -> None:
        summary = self.summary()
        if summary != self._summary_written:
            status.update(self.run_dir, **summary)
            self._summary_written = summary

    def finalize(self, outcome: contract.Outcome) -> None:
        self.enter("Finalizing")
        summary = self.summary()
        best = summary["best_trial"]
        fields: dict[str, Any] = dict(summary)
        if best is not None:
            self.log(f"[CONTROLLER] best trial: {best['name']} with {self.metric} {best['metric']:.6g} "
                     f"({', '.join(f'{k}={sampling.format_value(v)}' for k, v in best['params'].items())})")
        else:
            self.log(f"[CONTROLLER] no trial logged {self.metric}: there is no best trial")
        counts: dict[str, int] = {}
        for row in summary["trials"]:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        self.log("[CONTROLLER] trials: " + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"))
        try:
            if self.parent_run_id:
                if best is not None:
                    # The properties the service sets on a sweep's run.
                    self.tracking.set_tags(self.parent_run_id, {"best_child_run_id": best["name"],
                                                                "score": repr(best["metric"])})
                mlflow_status = {"Completed": "FINISHED", "Failed": "FAILED", "Canceled": "KILLED"}[outcome.status]
                self.tracking.end_run(self.parent_run_id, mlflow_status)
            if outcome.status == "Completed" and best is not None:
                fields["registered_outputs"] = self._register_best_outputs(best["name"])
        except Exception as error:
            self.log(f"warning: finalizing failed: {type(error).__name__}: {error}")
        if outcome.error:
            self.log(f"{outcome.error['code']}: {outcome.error['message']}")
        self.enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error, **fields)

    def _register_best_outputs(self, best: str) -> dict[str, str]:
        """A sweep output with ``name:`` is registered once, from the best trial (the sweep's
        outputs are its best trial's: ``az ml job download --output-name`` fetches those)."""
        registered = {}
        trial_plan = contract.read_plan(self.run_dir / TRIALS / best)
        for key, planned in self.plan.outputs.items():
            if planned.get("asset_name"):
                produced = trial_plan.outputs[key]
                version = self.workspace.register("data", planned["asset_name"], planned.get("asset_version"),
                                                  {"type": planned["type"], "path": produced["path"],
                                                   "description": f"output {key} of sweep {self.plan.name} "
                                                                  f"(best trial {best})"})
                registered[key] = f"{planned['asset_name']}:{version}"
                self.log(f"registered output {key} of the best trial as data asset {registered[key]}")
        return registered


def best_of(values: list[float], goal: str) -> float | None:
    """A trial's best value of the primary metric (NaN and infinities are no one's best)."""
    finite = [value for value in values if math.isfinite(value)]
    if not finite:
        return None
    return max(finite) if goal == "maximize" else min(finite)


def best_trial(rows: list[dict[str, Any]], goal: str) -> dict[str, Any] | None:
    """The trial with the best best-value of the primary metric; the earlier one on a tie."""
    best = None
    for row in rows:
        value = row.get("metric")
        if value is None:
            continue
        if best is None or (value > best["metric"] if goal == "maximize" else value < best["metric"]):
            best = {"name": row["name"], "params": row["params"], "metric": value}
    return best


def trial_dirs(run_dir: Path) -> list[Path]:
    """A sweep's trials' run folders, in the order they were scheduled (named <sweep>_<n>)."""
    folder = run_dir / TRIALS
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if (p / status.FILE).is_file()),
                  key=lambda p: int(p.name.rpartition("_")[2]))


class SweepExecutor(Executor):
    """Sweep jobs: a controller samples trials, each a command job of its own."""

    type = "sweep"
    spec_kind = "sweepJob"
    # The sweep's own log is its controller's (its trials have their std_log.txt each).
    log_file = contract.SYSTEM_LOG

    def plan(self, spec: Spec, workspace: Workspace, name: str, run_dir: Path, submission: Submission) -> SweepPlan:
        return plan_sweep(spec, workspace, name, run_dir)

    def walk(self, run_dir: Path, cancel: Cancel | None = None, alone: bool = True) -> SweepRun:
        return SweepRun(run_dir, cancel=cancel, alone=alone)

    def children(self, run_dir: Path) -> list[Path]:
        return trial_dirs(run_dir)

    def outputs_run(self, run_dir: Path, plan: Plan, record: dict[str, Any]) -> tuple[Path, Plan] | None:
        # A sweep's outputs are its best trial's (what `az ml job download` fetches).
        best = record.get("best_trial")
        if not best:
            return None
        best_dir = run_dir / TRIALS / best["name"]
        return best_dir, contract.read_plan(best_dir)

    def no_outputs(self, name: str, plan: Plan) -> str:
        assert isinstance(plan, SweepPlan)
        return (f"sweep {name} has no best trial (no trial logged {plan.objective['primary_metric']}), "
                "so it has no outputs to download")

    def output_origin(self, run_dir: Path, plan: Plan, record: dict[str, Any], port: str) -> str:
        if record.get("best_trial"):
            return f"output {port} of {record['best_trial']['name']}"
        return super().output_origin(run_dir, plan, record, port)

    def show(self, workspace: Workspace, run_dir: Path, plan: Plan, record: dict[str, Any],
             read: Any) -> dict[str, Any]:
        assert isinstance(plan, SweepPlan)
        best = record.get("best_trial")
        return {
            "trials": trial_rows(run_dir, record, read),
            "best_trial": best,
            "sampling_algorithm": plan.sampling,
            "search_space": plan.search_space,
            "objective": plan.objective,
            "limits": plan.limits,
            "early_termination": plan.early_termination,
            # The properties the service reports on a sweep.
            "properties": {"space_size": plan.space_size,
                           "best_child_run_id": best["name"] if best else None,
                           "score": best["metric"] if best else None},
        }

    def download_extras(self, run_dir: Path, target: Path) -> None:
        # The how-to page: "download all default and named outputs of the best trial job and
        # logs of the sweep job".
        import shutil

        shutil.copytree(run_dir / "system_logs", target / "sweep_logs", dirs_exist_ok=True)

    def summary(self, shown: dict[str, Any]) -> str:
        best = shown.get("best_trial")
        stopped = sum(1 for row in shown["trials"] if row.get("stopped_by"))
        return (f"sweep {shown['name']}: {shown['status']}, {len(shown['trials'])} trials, {stopped} canceled "
                f"by the policy, " + (f"best {best['name']} ({best['metric']:.4g}, {best['params']})"
                                      if best else "no best trial"))

    def expectations(self, expect: Mapping[str, Any], shown: dict[str, Any]) -> list[str]:
        """A lab's ``trials``, ``canceled_by_policy`` and ``best_trial``; its ``metrics`` are the
        best trial's."""
        problems = []
        trials = shown["trials"]
        if "trials" in expect and len(trials) != expect["trials"]:
            problems.append(f"the sweep ran {len(trials)} trials, expected {expect['trials']}")
        stopped = sum(1 for row in trials if row.get("stopped_by"))
        problems += lab_expectations.bounds("trials canceled by the policy", stopped, expect.get("canceled_by_policy"))
        wanted = expect.get("best_trial") or {}
        best = shown.get("best_trial")
        if wanted and best is None:
            problems.append("the sweep has no best trial (no trial logged its primary metric)")
        elif wanted:
            problems += lab_expectations.bounds("the best trial's metric", best["metric"], wanted.get("metric"))
            for key, value in (wanted.get("params") or {}).items():
                if best["params"].get(key) != value:
                    problems.append(f"the best trial has {key}={best['params'].get(key)!r}, expected {value!r}")
        best_metrics = next((row["metrics"] for row in trials if best and row["name"] == best["name"]), {})
        return problems + lab_expectations.metrics(expect.get("metrics"), best_metrics)

    def console(self) -> Any:
        from . import view

        return view


def trial_rows(run_dir: Path, record: dict[str, Any], read: Any) -> list[dict[str, Any]]:
    """A sweep's trials table: the controller's rows (params, metrics, the policy's decision),
    each with its trial's state as ``read`` (the current record) gives it, the one `job list
    --parent-job-name` shows, so the two agree even when the controller died before it could
    write its last table; a trial created after that table has a row too."""
    tabled = {row["name"]: row for row in record.get("trials") or []}
    rows = []
    for trial_dir in trial_dirs(run_dir):
        own = read(trial_dir)
        row = tabled.get(trial_dir.name) or {
            "name": trial_dir.name, "status": None, "params": own.get("params") or {}, "metrics": own.get("metrics") or {},
            "intervals": 0, "metric": None, "stopped_by": own.get("stopped_by"),
            "would_have_stopped": own.get("would_have_stopped")}
        rows.append({**row, "status": own.get("status"), "error": own.get("error"),
                     "start_time": own.get("start_time"), "end_time": own.get("end_time")})
        nodes = (own.get("cluster") or {}).get("nodes")
        if nodes:  # on a Ray cluster compute: the node the trial ran on
            rows[-1]["node"] = f"{nodes[0]['ip']} (Ray node {nodes[0]['node_id'][:8]})"
    return rows


EXECUTOR = register(SweepExecutor())
