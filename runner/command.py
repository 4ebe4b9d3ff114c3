"""The command-job executor: plan at submission, run in the supervisor.

A run folder (``<workspace>/runs/<job>/``) mirrors what the service keeps for a job:

    job.yml                  the spec as submitted
    plan.json                everything resolved: inputs, outputs, environment, compute, command
    status.json              state, timestamps, error, metrics (runner/status.py)
    wd/                      snapshot of `code`; the command's working directory
    wd/outputs/, wd/logs/    the default outputs the service uploads (logged to MLflow at the end)
    env/                     the job's own venv over its environment's shared build (runner/envbuild.py)
    inputs/<name>            materialised inputs (hard links for ro_mount, read-only copies for download)
    outputs/<name>/          one folder per declared output
    user_logs/std_log.txt    the command's stdout and stderr
    system_logs/amllab.log   what the runner did and decided

Sweeps, distributed jobs and pipelines reuse :func:`plan_command` and :func:`execute`; they do
not re-implement inputs, environments, MLflow or process handling.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Protocol

from validator.spec import CommandJob, Spec

from . import distributed, environments, inputs, mlflow_server, process, status
from .contract import (MARKER, USER_LOG, Cancel, Executor, Log, Outcome, Submission, Walk, acquire_slot,
                       canceled_before_running, register, release)
from .errors import NotFound, RunnerError
from .interpreter import host_variables, interpreter_variables, planned_interpreter, prepare_environment
from .plans import CommandPlan, Plan
from .substitute import RenderError, render_command
from .tracking import Tracking, is_local_store
from .workspace import Workspace, check_name



# -- planning (in `aml-run job create`) ----------------------------------------------------------

def plan_command(job: CommandJob, spec: Spec, workspace: Workspace, name: str,
                 run_dir: Path, references: Iterable[str] = (),
                 multi_node: distributed.MultiNode | None = None) -> CommandPlan:
    """Resolve everything a command job needs; raise before anything runs if it cannot.
    ``references`` are further names the command may use (a sweep trial's ``search_space.x``),
    whose values come later. ``multi_node``: this machine runs one node of a job that spans
    machines."""
    _refuse_what_this_release_cannot_run(spec)
    layout = distributed.plan_distribution(job.distribution, job.resources, spec.path, multi_node)
    _check_environment_variables(job.environment_variables, spec)
    planned_inputs = {key: inputs.plan_input(value, spec.base_dir, workspace) for key, value in job.inputs.items()}
    planned_outputs = {key: inputs.plan_output(value, run_dir, workspace, name) for key, value in job.outputs.items()}
    environment = plan_environment(job.environment, spec.base_dir, workspace)
    compute = plan_compute(job.compute, job.resources, workspace)
    if job.code is not None and not job.code.exists():
        raise NotFound(f"{spec.path}: code {job.code} does not exist")
    # Render once with stand-in values: an input the command uses but that has no value fails
    # here, at submission, rather than at Preparing.
    stand_ins = {f"inputs.{key}": (None if value["type"] == "literal" and value.get("value") is None else "x")
                 for key, value in planned_inputs.items()}
    stand_ins.update({f"outputs.{key}": "x" for key in planned_outputs})
    stand_ins.update({reference: "x" for reference in references})
    render(job.command, stand_ins, spec.path)
    return CommandPlan(
        name=name,
        display_name=job.display_name or name,
        # The service's default is the name of the folder the job was submitted from.
        experiment_name=job.experiment_name or Path.cwd().name or "Default",
        description=job.description,
        tags=job.tags,
        spec=str(spec.path),
        overrides=list(spec.overrides),
        command=job.command,
        code=str(job.code) if job.code else None,
        environment=environment,
        compute=compute,
        inputs=planned_inputs,
        outputs=planned_outputs,
        environment_variables=job.environment_variables,
        timeout=job.timeout if job.timeout and job.timeout > 0 else None,
        distribution=layout,
        job_tier=str(job.queue_settings.get("job_tier") or "").lower() or None,
        workspace=str(workspace.folder),
        tracking_uri=workspace.tracking_uri,
        notes=local_notes(job.environment, spec.data, workspace),
    )


def local_notes(environment: Any, data: dict[str, Any], workspace: Workspace) -> list[str]:
    """One line for each thing the spec asks of the service's compute that this machine does not
    do, so that nothing is ignored without a word: the environment's image (not pulled) or build
    context (not built), the job's services (not started) and identity (not used)."""
    notes = []
    image = build = None
    if isinstance(environment, dict):
        image, build = environment.get("image"), environment.get("build")
    elif isinstance(environment, str) and environment.startswith("azureml:") and not environment.startswith("azureml://"):
        try:
            image = workspace.lookup("environment", environment)[2].get("image")
        except (RunnerError, NotFound):
            pass  # planning the environment reports an unknown one
    if image:
        notes.append(f"image {image}: recorded, not pulled; the job runs in a local environment")
    if isinstance(build, dict) and build.get("path"):
        notes.append(f"build context {build['path']}: not built; the job runs in a local environment")
    services = data.get("services")
    if isinstance(services, dict) and services:
        kinds = ", ".join(f"{name} ({spec.get('type', '?') if isinstance(spec, dict) else '?'})"
                          for name, spec in services.items())
        notes.append(f"services {kinds}: not started here; follow the job with aml-run job stream, "
                     "and open its run folder for its files")
    identity = data.get("identity")
    if isinstance(identity, dict) and identity.get("type"):
        notes.append(f"identity {identity['type']}: not used here; the job's processes run as the local user "
                     "with this machine's credentials")
    return notes


def _refuse_what_this_release_cannot_run(spec: Spec) -> None:
    code = spec.data.get("code")
    if isinstance(code, str) and (code.startswith("azureml:") or "://" in code):
        raise RunnerError(f"{spec.path}: code {code} is registered or remote; a local workspace runs "
                          "code from a local folder (clone or download it, and point `code` at it)")


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_environment_variables(variables: dict[str, str], spec: Spec) -> None:
    for key, value in variables.items():
        if not _ENV_NAME.fullmatch(key):
            raise RunnerError(f"{spec.path}: environment variable name {key!r} is not valid: use "
                              "letters, digits and '_', not starting with a digit")
        if "\0" in value:
            raise RunnerError(f"{spec.path}: environment variable {key} holds a NUL character, "
                              "which no process can receive")


def plan_environment(value: Any, spec_dir: Path, workspace: Workspace) -> dict[str, Any]:
    """What Preparing makes of the job's environment. ``build``: a virtual environment is
    made for its requirements (runner/envbuild.py); without it, ``python`` (a registered
    ``--python``) runs the job as it is."""
    from validator.spec import load_asset
    from validator.workspace import is_curated_environment, parse_reference

    found = environments.CondaDependencies((), None, ())
    label = "the job's environment (no conda file)"
    note = None
    extra: dict[str, str] = {}
    python = None
    if isinstance(value, str) and value.startswith("azureml:") and not value.startswith("azureml://"):
        parsed = parse_reference(value)
        curated = parsed is not None and is_curated_environment(parsed[0])
        if curated and not workspace.registry().has("environments", parsed[0]):
            packages = environments.curated_requirements(parsed[0])
            found = environments.CondaDependencies(packages, None, ())
            label = f"{parsed[0]} (curated)"
            note = (f"{parsed[0]} is a curated environment ({environments.CURATED_DOCS}); {_here(packages)}"
                    f" (register the name locally to change that: aml-run environment create --name {parsed[0]} "
                    "--version 1 --conda-file FILE)")
        else:
            name, version, entry = workspace.lookup("environment", value)
            label = f"{name}:{version}"
            found = environments.CondaDependencies(tuple(entry.get("pip") or ()), entry.get("python_version"),
                                                   tuple(entry.get("conda_only") or ()))
            if entry.get("python"):
                python, extra = environments.python_from(str(entry["python"]), workspace.folder)
    elif isinstance(value, dict):
        label = "the inline environment"
        conda = value.get("conda_file")
        if isinstance(conda, str):
            conda_path = spec_dir / conda
            if not conda_path.is_file():
                raise NotFound(f"environment conda_file {conda_path} does not exist")
            found = environments.conda_dependencies(load_asset(conda_path), conda_path.resolve().parent)
        elif isinstance(conda, dict):
            found = environments.conda_dependencies(conda, spec_dir)
    elif isinstance(value, str):
        name = value.rstrip("/").split("/environments/", 1)[-1].split("/", 1)[0]
        packages = environments.curated_requirements(name) if "/registries/azureml/" in value else ()
        found = environments.CondaDependencies(packages, None, ())
        label = value
        note = f"{value} is a registry environment; {_here(packages)}"
    return {"label": label, "python": python or sys.executable, "env": extra, "requirements": list(found.pip),
            "python_version": found.python_pin, "conda_only": list(found.conda_only), "build": python is None,
            "note": note}


def _here(packages: tuple[str, ...]) -> str:
    """What a curated or registry environment is on this machine."""
    return "here it is the base interpreter" + (f" with {', '.join(packages)}" if packages else "")


def plan_compute(value: Any, resources: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    if value in (None, "", "serverless", "azureml:serverless"):
        return {"name": None, "kind": "serverless", "max_instances": None,
                "note": "no compute given: serverless, which runs on this machine"}
    if value == "local":
        return {"name": None, "kind": "local", "max_instances": None, "note": "compute: local"}
    text = str(value)
    if not text.startswith("azureml:"):
        text = "azureml:" + text.rsplit("/", 1)[-1]  # an ARM id or a bare name: the last segment
    name, _, entry = workspace.lookup("compute", text)
    check_name("compute", name)  # a hand-edited registry too: the name becomes computes/<name>/
    count = resources.get("instance_count") if isinstance(resources, dict) else None
    maximum = entry.get("max_instances")
    if isinstance(count, int) and isinstance(maximum, int) and count > maximum:
        raise RunnerError(f"resources.instance_count is {count} but compute '{name}' has at most "
                          f"{maximum} instances; lower it or `aml-run compute create --name {name} "
                          f"--max-instances {count}`")
    kind = str(entry.get("type") or "cpu")
    if kind == "ray":
        from . import cluster

        if not cluster.available():
            raise RunnerError(f"compute '{name}' is a Ray cluster: {cluster.NEEDS_RAY}")
        address = str(entry.get("address") or "")
        return {"name": name, "kind": kind, "max_instances": maximum, "address": address,
                "note": f"compute {name}: the Ray cluster at {address}"}
    return {"name": name, "kind": kind, "max_instances": maximum,
            "note": f"compute {name}: runs on this machine"}


# -- executing (in the supervisor) ---------------------------------------------------------------

def prepare(run_dir: Path, plan: CommandPlan, log: Log, tracking: Tracking,
            exclude: tuple[Path, ...] = (), cluster_tracking: "mlflow_server.Endpoint | None" = None
            ) -> tuple[dict[str, str | None], dict[str, str]]:
    """Preparing: snapshot, inputs, outputs, environment check, the MLflow run. Returns the
    substitution values and the job's environment variables. ``cluster_tracking``: the job
    runs on a cluster's node, which builds its environment itself and logs to MLflow through
    this server; the variables are then those of the job's paths here (runner/cluster.py moves
    them to the node's)."""
    from .snapshot import take_snapshot

    wd = run_dir / "wd"
    if plan.code:
        report = take_snapshot(Path(plan.code), wd, exclude=exclude)
        log(f"snapshot of {plan.code}: {report.files} files, {report.bytes} bytes"
            + (f", {report.ignored} ignored by {report.ignore_file}" if report.ignored else ""))
        for warning in report.warnings:
            log(f"warning: {warning}")
    else:
        wd.mkdir(parents=True, exist_ok=True)
    for default in ("outputs", "logs"):
        (wd / default).mkdir(exist_ok=True)
    values: dict[str, str | None] = {}
    workspace = Workspace(Path(plan.workspace))
    for name, planned in plan.inputs.items():
        values[f"inputs.{name}"] = inputs.materialise_input(name, planned, run_dir, workspace.cache)
        if planned["type"] != "literal":
            log(f"input {name}: {planned['origin']} {planned.get('source')} ({planned['mode']})")
    for name, planned in plan.outputs.items():
        values[f"outputs.{name}"] = inputs.prepare_output(planned)
    values.update(plan.known_values or {})
    if cluster_tracking:
        interpreter, extra = planned_interpreter(plan.environment, run_dir)
    else:
        interpreter, extra = prepare_environment(plan.environment, log, run_dir)
    if plan.environment.get("build") and not plan.environment.get("requirements"):
        # Nothing was asked for: the job has the base's packages. Say now what its script
        # imports that the base lacks, rather than after a ModuleNotFoundError.
        lacking = environments.missing_imports(plan.command, wd)
        if lacking:
            log(f"warning: environment {plan.environment['label']} has no conda file, and the script imports "
                f"what this interpreter lacks: {', '.join(lacking)}; add a conda file with them "
                "(environment: conda_file:) or the job may fail with ModuleNotFoundError")
    for note in plan.notes:
        log(note)
    log(plan.compute["note"])
    tracking.check_reachable()
    # A sweep's trial also carries its parent run (mlflow.parentRunId) and its hyperparameters.
    run = tracking.start_run(plan.experiment_name, plan.display_name,
                             {"mlflow.runName": plan.display_name, "amllab.job": plan.name,
                              "amllab.type": plan.type, **plan.tags,
                              **plan.mlflow_tags},
                             plan.mlflow_params)
    status.update(run_dir, mlflow={"tracking_uri": plan.tracking_uri, "run_id": run["run_id"],
                                   "experiment_id": run["experiment_id"]})
    log(f"MLflow run {run['run_id']} in experiment '{plan.experiment_name}' ({plan.tracking_uri})")
    env = job_environment(plan, interpreter, extra, run, run_dir)
    server = cluster_tracking or loopback_tracking(plan, extra, log, tracking, wd)
    if server:
        server.point(env)
    # The spec's own environment_variables keep the last word, as they do over AZUREML_*.
    env.update({key: value for key, value in binding_variables(plan, values).items()
                if key not in (plan.environment_variables or {})})
    prefix = plan.values_prefix
    if prefix:
        # A sweep trial also sees its inputs, outputs and hyperparameters as AZUREML_SWEEP_<name>.
        env.update({prefix + key.split(".", 1)[1]: value for key, value in values.items() if value is not None})
    return values, env


def loopback_tracking(plan: CommandPlan, extra: dict[str, str], log: Log, tracking: Tracking,
                      workdir: Path | None = None) -> "mlflow_server.Endpoint | None":
    """A loopback MLflow server (its URL and token) when the job brings its own MLflow client, which
    must not open the workspace's SQLite store (runner/mlflow_server.py); None otherwise: the
    job logs to the store directly, the faster way. A job whose spec sets MLFLOW_TRACKING_URI
    keeps it, and a workspace whose store already is a server needs none."""
    from . import envbuild

    if not is_local_store(plan.tracking_uri) or "MLFLOW_TRACKING_URI" in (plan.environment_variables or {}):
        return None
    built = {}
    if extra.get("AMLLAB_ENV_BIN"):  # the shared build the job's venv is layered over
        built = mlflow_server.clients_in(envbuild.site_packages(Path(extra["AMLLAB_ENV_BIN"]).parent))
    command, requirements = plan.command or "", plan.environment.get("requirements") or ()
    installs_a_file = re.search(r"(^|\s)(-r|--requirement)", command) is not None
    if not built and not installs_a_file and "mlflow" not in " ".join([command, *requirements]).lower():
        return None  # most jobs: not a word of MLflow to weigh
    base = mlflow_server.base_version()
    reason = mlflow_server.own_mlflow(command, requirements, base, built, workdir)
    if reason is None:
        return None
    endpoint = mlflow_server.tracking_uri_for(plan.tracking_uri, tracking.artifact_root or
                                              Path(plan.workspace) / "mlruns", Path(plan.workspace) / "logs", log)
    log(f"MLflow: the job logs through a loopback MLflow server ({endpoint.url}) rather than to the store "
        f"directly: {reason}, and another MLflow's client cannot open a store of aml-run's MLflow {base}; over "
        "HTTP any client version works, as with the workspace's tracking server on the service")
    return endpoint


def binding_variables(plan: CommandPlan, values: dict[str, str | None]) -> dict[str, str]:
    """``AZURE_ML_INPUT_<name>`` for each data input and ``AZURE_ML_OUTPUT_<name>`` for each
    output, holding its path, as the service sets them: Microsoft's REST example runs
    ``python main.py --iris-csv $AZURE_ML_INPUT_iris``. Public job scripts also read the
    upper-cased name (``$AZURE_ML_OUTPUT_CHECKPOINTS`` for an output ``checkpoints``), so that
    form is set too. Literal inputs have no such variable in any public example."""
    env: dict[str, str] = {}
    data = [("INPUT", name) for name, planned in plan.inputs.items() if planned.get("type") != "literal"]
    data += [("OUTPUT", name) for name in plan.outputs]
    for kind, name in data:
        value = values.get(f"{kind.lower()}s.{name}")
        if value is None:  # an optional input left out
            continue
        for variant in (name, name.upper()):
            env.setdefault(f"AZURE_ML_{kind}_{variant}", value)
    return env


def job_environment(plan: CommandPlan, interpreter: environments.Interpreter,
                    extra: dict[str, str], run: dict[str, str], run_dir: Path) -> dict[str, str]:
    # Of this machine's environment, only what runs a process here (runner/interpreter.py).
    env = host_variables(tracking_server=not is_local_store(plan.tracking_uri))
    env.update(interpreter_variables(interpreter, extra, os.environ.get("PATH")))
    # Logs should reach std_log.txt as they are written, as they do in the service's log view.
    env.setdefault("PYTHONUNBUFFERED", "1")
    workspace = Path(plan.workspace)
    env.update({
        "MLFLOW_TRACKING_URI": plan.tracking_uri,
        "MLFLOW_RUN_ID": run["run_id"],
        "MLFLOW_EXPERIMENT_ID": run["experiment_id"],
        "AZUREML_RUN_ID": plan.name,
        MARKER: str(run_dir),
        "AZUREML_ARM_SUBSCRIPTION": "00000000-0000-0000-0000-000000000000",
        "AZUREML_ARM_RESOURCEGROUP": "amllab-local",
        "AZUREML_ARM_WORKSPACE_NAME": workspace.parent.name or "amllab",
        "AZUREML_ARM_PROJECT_NAME": plan.experiment_name,
    })
    env.update(plan.environment_variables or {})
    return env


def render(command: str, values: dict[str, str | None], where: Path | None = None) -> str:
    try:
        return render_command(command, values)
    except RenderError as error:
        raise RunnerError(f"{where}: command: {error}" if where else f"command: {error}") from None


def single(run_dir: Path, command: str, env: dict[str, str]) -> list[distributed.Launch]:
    """The one process of a job that is not distributed: ``bash -c command``."""
    return [distributed.Launch(["bash", "-c", command], env, run_dir / USER_LOG, "the command", ranked=False)]


class Host(Protocol):
    """Where a job's processes run: this machine (:class:`LocalHost`) or a cluster's nodes
    (runner/cluster.py). :func:`execute` starts, watches and stops them through it alone."""

    def start(self, launch: distributed.Launch, cwd: Path) -> None:
        """Start ``launch`` and set its ``process`` (poll, wait, returncode, as a Popen's)."""

    def record(self, run_dir: Path, launches: list[distributed.Launch]) -> None:
        """Write where the started processes are to the job's status."""

    def stop(self, launches: list[distributed.Launch], grace: float) -> None:
        """Stop whatever of ``launches`` still runs (SIGTERM, ``grace`` seconds, SIGKILL)."""

    def end(self, run_dir: Path, keep: frozenset[int], alone: bool) -> int:
        """After the processes ended: stop what they left running; returns how many there were."""

    def lost(self) -> str | None:
        """Why the processes' machine was lost while they ran, or None."""

    def lay_out(self, layout: dict[str, Any]) -> dict[str, Any]:
        """A distributed job's layout as this host runs it (a cluster's node 0 holds the
        rendezvous)."""


class LocalHost:
    """A job's processes on this machine, each the leader of its own process group."""

    def start(self, launch: distributed.Launch, cwd: Path) -> None:
        launch.process = process.spawn(launch.argv, cwd=cwd, env=launch.env, log=launch.log)
        launch.pgid = launch.process.pid

    def record(self, run_dir: Path, launches: list[distributed.Launch]) -> None:
        pgids = [launch.pgid for launch in launches]
        status.update(run_dir, pgid=pgids[0], pgids=pgids)

    def stop(self, launches: list[distributed.Launch], grace: float) -> None:
        process.stop_groups([launch.pgid for launch in launches], grace=grace,
                            reap=[launch.process for launch in launches])

    def end(self, run_dir: Path, keep: frozenset[int], alone: bool) -> int:
        return process.stop_descendants(keep=keep) if alone else process.stop_marked(MARKER, str(run_dir))

    def lost(self) -> str | None:
        return None

    def lay_out(self, layout: dict[str, Any]) -> dict[str, Any]:
        return layout


def execute(run_dir: Path, launches: list[distributed.Launch], timeout: float | None,
            cancel: Cancel, log: Log, on_start: Callable[[list[distributed.Launch]], None] | None = None,
            keep: frozenset[int] = frozenset(), alone: bool = True,
            timeout_status: str = "Failed", preempt_after: float | None = None,
            host: "Host | None" = None, lifeline: Callable[[], dict[str, str] | None] | None = None) -> Outcome:
    """Running: start the job's processes (:func:`single`, or a distributed job's launchers)
    in the snapshot, each in its own process group; stop all of them on timeout, cancel,
    preemption or the first one that fails; never leave a process behind. ``keep`` are
    processes of the supervisor's own (the tracking agent it started) that the final sweep must
    leave alone. ``alone``: this is the supervisor's only job, so every process re-parented to
    it is this job's; otherwise (a sweep's trials) the job's strays are found by its marker. A
    timeout ends the job as ``timeout_status``: a command job's limits.timeout fails it, a
    sweep's trial_timeout cancels the trial. ``preempt_after``: seconds after which the job's
    node is taken (a simulated spot eviction); the outcome is then ``Preempted``. ``host``: where
    the processes run, this machine unless a cluster's (runner/cluster.py). ``lifeline``: what
    the job needs while it runs besides its processes (the loopback MLflow server it logs
    through, :func:`runner.mlflow_server.lifeline`): its error once that is gone fails the job."""
    host = host or LocalHost()
    (run_dir / USER_LOG).parent.mkdir(parents=True, exist_ok=True)
    for launch in launches:
        launch.log.parent.mkdir(parents=True, exist_ok=True)
        host.start(launch, run_dir / "wd")
    if on_start:
        on_start(launches)
    started = time.monotonic()
    deadline = started + timeout if timeout else None
    eviction = started + preempt_after if preempt_after is not None else None
    reason = None
    cut: dict[str, str] | None = None
    failed: distributed.Launch | None = None
    first = launches[0].process
    while True:
        try:
            first.wait(timeout=0.05)
        except subprocess.TimeoutExpired:  # still running
            pass
        failed = next((launch for launch in launches
                       if launch.process.poll() is not None and launch.process.returncode != 0), None)
        if failed is not None or all(launch.process.returncode == 0 for launch in launches if launch.required):
            break
        if cancel.requested:
            reason = cancel.reason
        elif deadline is not None and time.monotonic() > deadline:
            reason = "timeout"
        elif eviction is not None and time.monotonic() > eviction:
            reason = "preempted"
        elif lifeline is not None:
            cut = lifeline()
            reason = "lost what it depends on" if cut else None
        if reason:
            log(f"stopping the job's processes ({reason})")
            break
    if failed is not None and len(launches) > 1:
        log(f"{failed.role} failed (exit code {failed.process.returncode}): stopping the others")
    # Whatever is still running (every process on cancel; the other nodes when one failed; the
    # parameter servers once the workers are done) goes, and so does anything left in a group.
    host.stop(launches, grace=5.0 if reason else 1.0)
    codes = [launch.process.wait() for launch in launches]
    strays = host.end(run_dir, keep, alone)
    if strays:
        log(f"stopped {strays} process(es) the command left running")
    code = failed.process.returncode if failed is not None else codes[0]
    lost = host.lost()
    if cut:
        return Outcome("Failed", code, cut)
    if lost and reason is None:
        return Outcome("Failed", code, {"code": "NodeLost", "message": lost})
    if reason == "timeout":
        if timeout_status == "Canceled":
            return Outcome("Canceled", code, {"code": "TrialTimeout", "message":
                                              f"the trial ran past limits.trial_timeout ({timeout:g} s) and was "
                                              "canceled"})
        return Outcome("Failed", code, {"code": "JobTimeout", "message":
                                        f"the job ran past limits.timeout ({timeout:g} s) and was stopped"})
    if reason == "preempted":
        return Outcome("Preempted", code, {"code": "Preempted", "message":
                                           f"the low-priority node was taken after {preempt_after:g} s"})
    if reason:
        return Outcome("Canceled", code, {"code": "Canceled", "message": f"the job was {reason}"})
    if failed is not None:
        if failed.ranked:
            return Outcome("Failed", code, distributed.failure(run_dir, failed, code))
        signal_name = ""
        if code < 0:
            signal_name = f" (killed by {signal.Signals(-code).name})"
        tail = distributed.log_tail(failed.log)
        said = f"; end of {failed.log}:\n{tail}" if tail else f"; see {failed.log}"
        if code == 127:
            said += ("\nexit code 127: the shell found no such program. On the service the "
                     "environment's image provides the job's programs; here the command runs on this "
                     "machine, which lacks it: install it here, or run the job where the image is")
        return Outcome("Failed", code, {"code": "UserError",
                                        "message": f"the command exited with code {code}{signal_name}{said}"})
    return Outcome("Completed", 0)


def finalize(run_dir: Path, plan: CommandPlan, outcome: Outcome, tracking: Tracking, log: Log,
             workspace: Workspace) -> dict[str, Any]:
    """Finalizing: final MLflow status, ./outputs and ./logs as artifacts, metrics read back,
    named outputs registered. Returns fields for the status file."""
    record = status.read(run_dir)
    fields: dict[str, Any] = {}
    run_id = (record.get("mlflow") or {}).get("run_id")
    if run_id:
        for folder in ("outputs", "logs"):
            try:
                count = tracking.log_artifacts(run_id, run_dir / "wd" / folder, folder)
                if count:
                    log(f"logged {count} file(s) of ./{folder} to the MLflow run")
            except RunnerError as error:
                log(f"warning: could not log ./{folder}: {error}")
        for folder in ("user_logs", distributed.RANK_LOGS):  # a distributed job's rank logs too
            try:
                tracking.log_artifacts(run_id, run_dir / folder, "user_logs")
            except RunnerError as error:
                log(f"warning: could not log {folder}: {error}")
        mlflow_status = {"Completed": "FINISHED", "Failed": "FAILED", "Canceled": "KILLED"}[outcome.status]
        tracking.end_run(run_id, mlflow_status)
        fields["metrics"] = tracking.metrics(run_id)
    if outcome.status == "Completed":
        registered = {}
        for name, planned in plan.outputs.items():
            if planned.get("asset_name"):
                version = workspace.register("data", planned["asset_name"], planned.get("asset_version"),
                                             {"type": planned["type"], "path": planned["path"],
                                              "description": f"output {name} of job {plan.name}"})
                registered[name] = f"{planned['asset_name']}:{version}"
                log(f"registered output {name} as data asset {registered[name]}")
        if registered:
            fields["registered_outputs"] = registered
    return fields


def copy_spec(spec_path: Path, run_dir: Path) -> None:
    shutil.copy2(spec_path, run_dir / "job.yml")


# -- the supervisor's walk ---------------------------------------------------------------------

class JobRun(Walk):
    """One command job's walk: a job of its own (``alone``: its supervisor runs nothing else),
    or one trial of a sweep, several of which share the sweep's supervisor. A trial differs in
    three ways: its strays are found by its marker rather than as the supervisor's orphans, a
    cancel never interrupts it mid-step from a signal handler (the sweep's loop asks it to
    stop), and its timeout (the sweep's ``trial_timeout``) cancels it, as the service does."""

    def __init__(self, run_dir: Path, *, alone: bool = True, cancel: Cancel | None = None) -> None:
        super().__init__(run_dir, cancel)
        self.alone = alone
        self.slot: list[IO] | None = None

    def until_finalizing(self) -> Outcome:
        """Queued, Preparing and Running; every way they can end becomes an Outcome."""
        run_dir, plan, log, cancel = self.run_dir, self.plan, self.log, self.cancel

        def steps() -> Outcome:
            cancel.interruptible = self.alone
            self.enter("Queued")
            self.slot = acquire_slot(self.workspace, plan.compute, cancel, log, self.nodes())
            if cancel.requested:
                return canceled_before_running()
            self.enter("Preparing")
            server = None
            if self.on_cluster:
                from . import cluster

                server = cluster.tracking_server(plan, log, self.tracking)
            values, env = prepare(run_dir, plan, log, self.tracking, exclude=(self.workspace.folder,),
                                  cluster_tracking=server)
            status.update(run_dir, inputs={key.split(".", 1)[1]: value for key, value in values.items()
                                           if key.startswith("inputs.")})
            rendered = render(plan.command or "", values)
            log(f"command: {rendered}")
            cancel.interruptible = False
            if cancel.requested:
                return canceled_before_running()
            return self.run(rendered, env)

        return self.guarded(steps)

    def nodes(self) -> int:
        """How many of the compute's instances the job holds while it runs: one per node of this
        machine's share."""
        layout = self.plan.distribution
        return len(layout["local_nodes"]) if layout else 1

    @property
    def on_cluster(self) -> bool:
        return self.plan.compute.get("kind") == "ray"

    def place(self, env: dict[str, str]) -> Host | None:
        """Where the job's processes run this time: this machine, or nodes of its cluster
        compute, chosen, given the job's files and its environment built (None: canceled
        meanwhile)."""
        if not self.on_cluster:
            return LocalHost()
        from . import cluster

        return cluster.ClusterHost.place(self.run_dir, self.plan, env, self.log, self.cancel, self.nodes())

    def launches(self, rendered: str, env: dict[str, str], host: Host) -> list[distributed.Launch]:
        layout = self.plan.distribution
        if not layout:
            return single(self.run_dir, rendered, env)
        layout = host.lay_out(layout)
        # The job environment's interpreter, as prepared (its virtual environment when built).
        python = str(Path(env["VIRTUAL_ENV"]) / "bin" / "python") if env.get("VIRTUAL_ENV") \
            else self.plan.environment["python"]
        # A cluster's node builds the environment itself, and looks for torch there.
        if layout["type"] == "pytorch" and isinstance(host, LocalHost) and not distributed.torch_available(python):
            raise RunnerError(f"distribution type pytorch starts torch's elastic launcher with {python}, "
                              "which cannot import torch: install torch there (pip install torch)")
        if layout["type"] == "mpi":
            distributed.mpirun()  # a missing Open MPI fails now, naming the package
        self.log(f"distributed: {distributed.describe(layout)}")
        return distributed.launches(layout, rendered, env, self.run_dir, python)

    def run(self, rendered: str, env: dict[str, str]) -> Outcome:
        """Running, and for a spot job whose node is taken (``--preempt-after``), back to Queued
        and Running again with the same working folder and ./outputs, as the service re-queues
        a preempted low-priority job: a script that checkpoints to ./outputs resumes."""
        evictions = list(self.plan.preempt_after or [])
        attempt = 0
        while True:
            host = self.place(env)
            if host is None:
                return canceled_before_running()
            launches = self.launches(rendered, env, host)
            self.enter("Running")
            outcome = execute(
                self.run_dir, launches, self.plan.timeout, self.cancel, self.log,
                on_start=lambda started: host.record(self.run_dir, started), keep=self.keep(),
                alone=self.alone, timeout_status="Failed" if self.alone else "Canceled",
                preempt_after=evictions[attempt] if attempt < len(evictions) else None, host=host,
                lifeline=mlflow_server.lifeline(env.get("MLFLOW_TRACKING_URI"), self.log))
            node_lost = (outcome.error or {}).get("code") == "NodeLost"
            if outcome.status != "Preempted" and not (node_lost and self.plan.job_tier == "spot"):
                return outcome
            attempt += 1
            # A spot job's node that goes away (node_lost) is what an eviction is: the service
            # re-queues it; only the simulated evictions have a number planned.
            planned = "" if node_lost else f" of {len(evictions)}"
            self.log(f"preempted: {outcome.error['message']}; the job goes back to the queue "
                     f"(preemption {attempt}{planned}), ./outputs is kept")
            status.update(self.run_dir, preemptions=attempt)
            release(self.slot)
            self.enter("Queued")
            self.slot = acquire_slot(self.workspace, self.plan.compute, self.cancel, self.log, self.nodes())
            if self.cancel.requested:
                return canceled_before_running()

    def finalize(self, outcome: Outcome, **extra: Any) -> None:
        self.enter("Finalizing")
        fields: dict[str, Any] = {}
        try:
            fields = finalize(self.run_dir, self.plan, outcome, self.tracking, self.log, self.workspace)
        except Exception as error:
            self.log(f"warning: finalizing failed: {type(error).__name__}: {error}")
        if outcome.error:
            self.log(f"{outcome.error['code']}: {outcome.error['message']}")
        written = self.run_dir / "wd" / "outputs"
        if outcome.status != "Completed" and written.is_dir() and any(written.iterdir()):
            self.log("the outputs written so far are kept, and are partial (job show: outputs_complete false)")
        self.enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error, **fields, **extra)
        release(self.slot)


class CommandExecutor(Executor):
    """Command jobs (a distributed job is a command job with a ``distribution``)."""

    type = "command"
    spec_kind = "commandJob"
    takes_node_options = True

    def plan(self, spec: Spec, workspace: Workspace, name: str, run_dir: Path, submission: Submission) -> CommandPlan:
        plan = plan_command(spec.command_job(), spec, workspace, name, run_dir, multi_node=submission.multi_node)
        if submission.preempt_after:
            if plan.job_tier != "spot":
                raise RunnerError(f"{spec.path}: --preempt-after takes away a low-priority node, and this job "
                                  "does not run on one; ask for it with `queue_settings: {job_tier: spot}` "
                                  "(--set queue_settings.job_tier=spot)")
            if any(seconds <= 0 for seconds in submission.preempt_after):
                raise RunnerError("--preempt-after takes seconds greater than 0")
            plan.preempt_after = list(submission.preempt_after)
        return plan

    def walk(self, run_dir: Path, cancel: Cancel | None = None, alone: bool = True) -> JobRun:
        return JobRun(run_dir, alone=alone, cancel=cancel)

    def show(self, workspace: Workspace, run_dir: Path, plan: Plan, record: dict[str, Any],
             read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        assert isinstance(plan, CommandPlan)
        shown: dict[str, Any] = {}
        if plan.distribution:
            shown.update(distribution=distributed.describe(plan.distribution),
                         rank_logs=sorted(str(path) for path in (run_dir / distributed.RANK_LOGS).glob("rank_*.txt")))
        if plan.job_tier:
            shown.update(job_tier=plan.job_tier, preemptions=record.get("preemptions", 0))
        if record.get("cluster"):
            # Where each of the job's nodes ran on its Ray cluster compute.
            shown["cluster_nodes"] = [{"node_id": node["node_id"], "ip": node["ip"], "hostname": node["hostname"]}
                                      for node in record["cluster"].get("nodes", [])]
        if plan.parent:
            shown.update({"parent_job_name": plan.parent, "params": plan.params or {},
                          "stopped_by": record.get("stopped_by")})
        return shown


EXECUTOR = register(CommandExecutor())
