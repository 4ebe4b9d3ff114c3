"""A pipeline job: plan it at submission, run its steps in the supervisor, reuse what has not changed.

The order of the steps comes from the data wiring alone: a step that binds
``${{parent.jobs.prep.outputs.clean}}`` waits for ``prep`` (the edges are the linter's own,
``validator.rules.pipeline.step_edges``, and ``validator.graph`` orders them). A step starts as
soon as every step it reads from has completed, so independent steps run side by side, as many
as their computes have free instances. Each step is a command job of its own
(``runs/<pipeline>/steps/<step>/``, named ``<pipeline>--<step>``) run by
:class:`runner.command.JobRun`: the same prepare, execute and finalize as any command job,
each its own MLflow child run of the pipeline's run.

What this release runs: command steps, inline (``command:`` in the step) or from a component:
a local file (``component: ./prep.yml``), a registered one (``azureml:prep_data:1``,
``azureml:prep_data@latest``, ``azureml:prep_data``; ``aml-run component create``) or an inline
mapping; and sweep steps (``type: sweep``, ``trial:`` a command component whose inputs the
search space names), run as a sweep job whose outputs are its best trial's; and
pipeline-component steps (``type: pipeline``), run as a pipeline of their own. Parallel and spark
steps are refused at submission with a message saying so. Bindings: ``${{parent.inputs.x}}``, ``${{parent.jobs.J.outputs.O}}``,
``${{parent.outputs.x}}`` on a step output (the pipeline output is that step output), literal
values and component defaults.

Step failure (``settings.continue_on_step_failure``; the pipeline reference says it defaults
to true): true, the steps that depend on a failed one are not run (Canceled, "an upstream step
failed") and the independent branches finish; false, the first failure cancels every step that
has not finished. The pipeline ends Failed when a step failed, Completed when all completed.

Step reuse (the service's rules, from "Debug pipeline reuse issues"): a step is reused when its
component ``is_deterministic`` (the default), the pipeline's ``settings.force_rerun`` is false,
and nothing that decides its result changed: the command as written, the environment and
compute resources as resolved, the content of the code folder (file by file), the content of
every input (data and upstream outputs alike) and every literal value, and the outputs'
settings. Those make a content-addressed key (:mod:`runner.step_cache`); a reused step gets the
original's outputs, logs and metrics, ``reused: true`` and ``reused_from``. ``job show
PIPELINE --node STEP --why`` prints the decision, field by field.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any, Mapping

from validator.values import sdk_number
from validator.spec import Spec, command_job_from

from . import command, contract, expectations as lab_expectations, process, status, step_cache
from .command import JobRun
from .contract import STEPS, Cancel, Executor, Submission, Walk, register
from .errors import NotFound, RunnerError
from .plans import CommandPlan, PipelinePlan, Plan
from .sweep.sweep import SweepRun, plan_sweep
from .workspace import Workspace, check_name
SEPARATOR = "--"
POLL = 0.2
# Every job's artifacts (what the service uploads from ./outputs and ./logs, and the user logs)
# are an output of its own: `default` in the SDK, and `artifacts` in Microsoft's
# hello-pipeline-default-artifacts example. A consumer that binds either reads the producer's
# artifact folder: `${{inputs.x}}/outputs/...`, `${{inputs.x}}/logs/...`.
RESERVED_OUTPUTS = ("artifacts", "default")
ARTIFACTS = "artifacts"


def step_job_name(pipeline: str, step: str) -> str:
    return f"{pipeline}{SEPARATOR}{step}"


# -- planning (in `aml-run job create`) ----------------------------------------------------------

def plan_pipeline(spec: Spec, workspace: Workspace, name: str, run_dir: Path) -> PipelinePlan:
    """Resolve every step's definition and the wiring; raise before anything runs if a step
    cannot run here. Steps are planned as command jobs only when they start (their inputs are
    upstream outputs that do not exist yet)."""
    from validator import graph, loader
    from validator.rules.pipeline import RUN_SETTINGS, analyse, step_edges

    data = spec.data
    settings = data.get("settings") if isinstance(data.get("settings"), dict) else {}
    document, _ = loader.parse(str(spec.path), spec.text or spec.path.read_text(), spec.base_dir)
    pipeline = analyse(document)
    # Each step's bindings as the linter reads them (legacy `${{inputs.x}}` normalised to
    # `parent.inputs.x`): port -> the binding's parts, for the inputs and outputs it binds.
    wiring: dict[str, dict[str, dict[str, list[str]]]] = {}
    for binding in pipeline.bindings:
        if binding.whole and binding.section in ("inputs", "outputs", *RUN_SETTINGS):
            wiring.setdefault(binding.step, {}).setdefault(binding.section, {})[binding.port] = list(binding.parts)
    steps: dict[str, Any] = {}
    for step_name, node in (data.get("jobs") or {}).items():
        check_name("step", str(step_name))  # it names the step's folder, whatever lint was told to skip
        # A step's own input paths are written in the pipeline file, so they are relative to it
        # (not to its component's folder, which only its component's own paths are relative to).
        steps[step_name] = {**_plan_step(spec, workspace, step_name, node), "wiring": wiring.get(step_name, {}),
                            "pipeline_dir": str(spec.base_dir.resolve())}
    edges = step_edges(pipeline)
    order = graph.topological_order(list(steps), edges)  # the linter already refused cycles
    pipeline_inputs = {}
    for key, value in (data.get("inputs") or {}).items():
        pipeline_inputs[key] = _pipeline_input(key, value, spec, workspace)
    experiment = data.get("experiment_name") or Path.cwd().name or "Default"
    compute = _bound_compute(settings.get("default_compute") or data.get("compute"), pipeline_inputs,
                             f"{spec.path}: settings.default_compute")
    return PipelinePlan(
        name=name,
        display_name=data.get("display_name") or name,
        experiment_name=str(experiment),
        description=data.get("description"),
        tags={str(k): str(v) for k, v in (data.get("tags") or {}).items()},
        spec=str(spec.path),
        overrides=list(spec.overrides),
        environment={"label": "per step"},
        compute=command.plan_compute(compute, {}, workspace) if compute else
        {"name": None, "kind": "serverless", "max_instances": None, "note": "steps without compute run serverless here"},
        inputs=pipeline_inputs,
        outputs=_pipeline_outputs(data, run_dir, wiring, workspace, name),
        steps=steps,
        order=order,
        edges=[list(edge) for edge in edges],
        settings={"default_compute": settings.get("default_compute"),
                  "continue_on_step_failure": settings.get("continue_on_step_failure", True) is not False,
                  "force_rerun": settings.get("force_rerun") is True},
        workspace=str(workspace.folder),
        tracking_uri=workspace.tracking_uri,
    )


def _pipeline_outputs(data: dict[str, Any], run_dir: Path, wiring: dict[str, dict[str, dict[str, list[str]]]],
                      workspace: Workspace, name: str) -> dict[str, Any]:
    """A pipeline output is the step output bound to it with `${{parent.outputs.x}}`, written
    with the pipeline output's settings: its `type`, `mode` and `path` (and `name`/`version`)
    are what the step's output gets, as the service binds them
    (https://learn.microsoft.com/azure/machine-learning/how-to-read-write-data-v2). `${{name}}`
    in its path is the pipeline job's name, `${{output_name}}` the pipeline output's."""
    from validator.spec import JobOutput

    from . import inputs

    bound = {parts[2]: (step_name, port)
             for step_name, sections in wiring.items()
             for port, parts in sections.get("outputs", {}).items() if parts[1:2] == ["outputs"] and len(parts) == 3}
    outputs = {}
    for key, value in (data.get("outputs") or {}).items():
        declared = value if isinstance(value, dict) else {}
        settings = {k: declared[k] for k in ("type", "mode", "path", "name", "version") if declared.get(k) is not None}
        kind = str(settings.get("type") or "uri_folder")
        step, port = bound.get(str(key), (None, None))
        if isinstance(settings.get("path"), str):
            settings["path"] = inputs.expand_output_path(settings["path"], name, str(key))
        if isinstance(settings.get("path"), str) and inputs.is_datastore_like(settings["path"]):
            planned = inputs.plan_output(JobOutput(str(key), kind, None, settings["path"]), run_dir, workspace, name)
            path = Path(planned["path"])
        else:
            settings.pop("path", None)  # only a datastore path means a place here
            path = run_dir / STEPS / step / "outputs" / port if step else run_dir / "outputs" / str(key)
            if kind == "uri_file" and step:
                path = path / port  # where the step's uri_file output is (inputs.plan_output)
        outputs[str(key)] = {"type": kind, "mode": str(settings.get("mode") or "rw_mount"), "path": str(path),
                             "step": step, "port": port, "asset_name": None, "asset_version": None,
                             "settings": settings}
    return outputs


def _pipeline_input(key: str, value: Any, spec: Spec, workspace: Workspace) -> dict[str, Any]:
    from validator.spec import job_input

    from . import inputs

    return inputs.plan_input(job_input(key, value), spec.base_dir, workspace)


def _plan_step(spec: Spec, workspace: Workspace, step_name: str, node: dict[str, Any]) -> dict[str, Any]:
    step_type = str(node.get("type") or "command")
    where = f"{spec.path}: step '{step_name}'"
    if step_type not in ("command", "sweep", "pipeline"):
        raise RunnerError(f"{where} is a {step_type} step; this version of aml-run runs command, sweep and "
                          "pipeline-component steps")
    component = node.get("trial" if step_type == "sweep" else "component")
    if step_type == "sweep" and component is None:
        raise RunnerError(f"{where}: a sweep step needs `trial:`, the command component each trial runs")
    base = spec.base_dir
    source = "inline"
    component_file: Path | None = None
    if component is None:
        definition = {k: v for k, v in node.items() if k not in ("type",)}
    elif isinstance(component, dict):
        definition, source = dict(component), "inline component"
    else:
        reference = str(component).strip()
        if reference.startswith("azureml://"):
            raise RunnerError(f"{where}: component {reference} lives in an Azure ML registry, which a local "
                              "workspace cannot reach; register a local copy with `aml-run component create`")
        if reference.startswith("azureml:"):
            component_name, version, entry = workspace.lookup("component", reference)
            path = Path(str(entry.get("path") or ""))
            source = f"azureml:{component_name}:{version}"
        else:
            path = (base / (reference[5:] if reference.startswith("file:") else reference)).resolve()
            source = str(path)
        if not path.is_file():
            raise NotFound(f"{where}: component file {path} does not exist")
        from validator.spec import load_asset

        definition = load_asset(path)
        base, component_file = path.parent, path
    wanted = "pipeline" if step_type == "pipeline" else "command"
    if str(definition.get("type") or "command") != wanted:
        raise RunnerError(f"{where}: component {source} is a {definition.get('type') or 'command'} component, "
                          f"and a {step_type} step runs a {wanted} component")
    if step_type == "pipeline":
        # Checked now, so that a nested step that cannot run is refused at submission too.
        nested = Spec(base / "component.yml" if component_file is None else component_file, "pipelineJob", definition)
        for inner, inner_node in (definition.get("jobs") or {}).items():
            _plan_step(nested, workspace, f"{step_name}.{inner}", inner_node)
    elif not definition.get("command"):
        raise RunnerError(f"{where} has no command (neither the step nor its component gives one)")
    return {"node": node, "definition": definition, "base_dir": str(base), "source": source, "kind": step_type,
            "path": str(component_file) if component_file else None,
            "is_deterministic": definition.get("is_deterministic", True) is not False}


# -- a step's command job, built when it starts ---------------------------------------------------

def step_job_data(plan: PipelinePlan, step_name: str, upstream_outputs: dict[str, dict[str, Any]]
                  ) -> dict[str, Any]:
    """The command job a step runs, with every binding replaced by its value: pipeline inputs
    by theirs, upstream outputs by their folders, unset inputs by the component's defaults."""
    step = plan.steps[step_name]
    node, definition = step["node"], step["definition"]
    declared = definition.get("inputs") if step["source"] != "inline" else None
    job: dict[str, Any] = {"command": definition.get("command")}
    for key in ("code", "environment", "resources", "distribution", "environment_variables"):
        if node.get(key) is not None and step["source"] != "inline":
            job[key] = node[key]
        elif definition.get(key) is not None:
            job[key] = definition[key]
    for key in ("resources", "distribution"):
        if isinstance(job.get(key), dict):
            job[key] = _bound_settings(job[key], step["wiring"].get(key, {}), plan, f"step '{step_name}': {key}")
    if isinstance(job.get("code"), str):
        code = job["code"][5:] if job["code"].startswith("file:") else job["code"]
        job["code"] = str((Path(step["base_dir"]) / code).resolve())
    environment = job.get("environment")
    if isinstance(environment, dict) and isinstance(environment.get("conda_file"), str):
        # An inline environment's conda file is beside the component that names it.
        conda = environment["conda_file"]
        conda = conda[5:] if conda.startswith("file:") else conda
        job["environment"] = {**environment, "conda_file": str((Path(step["base_dir"]) / conda).resolve())}
    compute = _bound_compute(node.get("compute") or plan.settings["default_compute"], plan.inputs,
                             f"step '{step_name}'")
    if compute:
        job["compute"] = compute
    values: dict[str, Any] = {}
    written = node.get("inputs") or {}
    for key, spec in (declared or {}).items():
        if key not in written:
            # The component's default; an optional input left out has no value, and a
            # `$[[...]]` block that uses it drops out of the command.
            values[key] = spec.get("default") if isinstance(spec, dict) else None
    bound = step["wiring"].get("inputs", {})
    for key, value in written.items():
        resolved = _bind_input(value, bound.get(key), plan, upstream_outputs,
                               Path(step.get("pipeline_dir") or step["base_dir"]))
        if resolved is not None:
            values[key] = resolved
    job["inputs"] = values
    outputs = {}
    for key, value in (node.get("outputs") or definition.get("outputs") or {}).items():
        if key in RESERVED_OUTPUTS and not _mentions_output(job.get("command"), key):
            continue  # the step's artifacts, which every step has (step_outputs)
        entry = dict(value) if isinstance(value, dict) else {}
        if isinstance(value, str):
            # `${{parent.outputs.x}}`: the pipeline's output is this step's output, with its settings.
            parts = step["wiring"].get("outputs", {}).get(key)
            pipeline_output = plan.outputs.get(parts[2]) if parts and parts[1:2] == ["outputs"] else None
            entry = dict((pipeline_output or {}).get("settings") or {})
        if declared is not None and isinstance((definition.get("outputs") or {}).get(key), dict):
            entry.setdefault("type", definition["outputs"][key].get("type", "uri_folder"))
        # A step output's own `path` (a datastore path) is where it is written, as in the service.
        outputs[key] = {k: v for k, v in entry.items() if k in ("type", "mode", "path", "name", "version")}
    for key, value in (definition.get("outputs") or {}).items():
        if key not in outputs and step["source"] != "inline":
            outputs[key] = {"type": (value or {}).get("type", "uri_folder")} if isinstance(value, dict) else {}
    job["outputs"] = outputs
    return job


def _mentions_output(command: Any, key: str) -> bool:
    return isinstance(command, str) and re.search(r"\$\{\{\s*outputs\.%s\s*\}\}" % re.escape(key), command) is not None


def sweep_step_data(plan: PipelinePlan, step_name: str, upstream_outputs: dict[str, dict[str, Any]]
                    ) -> dict[str, Any]:
    """The sweep job a sweep step runs. Its search space names inputs of the trial's component:
    the component's `${{inputs.lr}}` becomes the trial's `${{search_space.lr}}`, and the other
    inputs are the sweep's, bound as for any step."""
    job = step_job_data(plan, step_name, upstream_outputs)
    node = plan.steps[step_name]["node"]
    space = node.get("search_space") or {}
    command = _INPUT_REFERENCE.sub(lambda m: "${{search_space.%s}}" % m[1] if m[1] in space else m[0], job["command"])
    trial = {key: job[key] for key in ("code", "environment", "resources", "distribution", "environment_variables")
             if key in job}
    trial["command"] = command
    data: dict[str, Any] = {"type": "sweep", "trial": trial,
                            "inputs": {k: v for k, v in job["inputs"].items() if k not in space},
                            "outputs": job["outputs"], "search_space": space}
    for key in ("objective", "limits", "sampling_algorithm", "early_termination"):
        if node.get(key) is not None:
            data[key] = node[key]
    if isinstance(data.get("limits"), dict):
        data["limits"] = _bound_settings(data["limits"], plan.steps[step_name]["wiring"].get("limits", {}),
                                         plan, f"step '{step_name}': limits")
    if job.get("compute"):
        data["compute"] = job["compute"]
    return data


def nested_pipeline_data(plan: PipelinePlan, step_name: str, upstream_outputs: dict[str, dict[str, Any]]
                         ) -> dict[str, Any]:
    """The pipeline job a pipeline-component step runs: the component's own steps, its inputs
    bound as for any step (its declared defaults filling the gaps), its outputs, and the
    settings of the pipeline around it."""
    step = plan.steps[step_name]
    definition = step["definition"]
    job = step_job_data(plan, step_name, upstream_outputs)
    data = {key: definition[key] for key in ("jobs", "outputs", "display_name", "description") if key in definition}
    inputs = {}
    for key, value in job["inputs"].items():
        declared = (definition.get("inputs") or {}).get(key)
        if isinstance(value, dict) or value is None:
            inputs[key] = value
        else:
            kind = declared.get("type") if isinstance(declared, dict) else None
            inputs[key] = {"type": kind, "value": value} if kind in ("integer", "number", "string", "boolean") else value
    data["type"] = "pipeline"
    data["inputs"] = inputs
    data["settings"] = {"default_compute": plan.settings["default_compute"] or job.get("compute"),
                        "continue_on_step_failure": plan.settings["continue_on_step_failure"],
                        "force_rerun": plan.settings["force_rerun"]}
    data["settings"] = {k: v for k, v in data["settings"].items() if v is not None}
    return data


_INPUT_REFERENCE = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_]+)\s*\}\}")
# A pipeline input may be a member of a parameter group: `${{parent.inputs.training.lr}}`.
_PARENT_INPUT = re.compile(r"^\s*\$\{\{\s*(?:parent\.)?inputs\.([A-Za-z0-9_.]+)\s*\}\}\s*$")


def pipeline_input(parts: list[str]) -> str:
    """The pipeline input a `parent.inputs...` binding names: a parameter group's member is one
    input with a dotted name (`training.lr`), as the SDK's `@dsl.group` writes it in YAML."""
    return ".".join(parts[2:])


def _bound_compute(value: Any, inputs: dict[str, Any], where: str) -> Any:
    """A compute written as `${{parent.inputs.x}}` (a pipeline component that takes its compute
    as an input, as Microsoft's pipeline-component examples do) is that input's value."""
    match = _PARENT_INPUT.match(value) if isinstance(value, str) else None
    if match is None:
        return value
    planned = inputs.get(match[1])
    if planned is None or planned["type"] != "literal" or not planned.get("value"):
        raise RunnerError(f"{where}: compute is bound to '{value.strip()}', which is no pipeline input with a "
                          "value; declare it under the pipeline's `inputs:` with a compute's name "
                          "(`compute_name: cpu-cluster`), or pass one to the pipeline component")
    return planned["value"]
def _bound_settings(settings: dict[str, Any], bound: dict[str, list[str]], plan: PipelinePlan,
                    where: str) -> dict[str, Any]:
    """A step's run settings (resources, distribution, a sweep step's limits) with each value that
    ``bound`` (the step's wiring for that section: key -> the binding's parts) binds to a pipeline
    input replaced by that input's value, as the service resolves it
    (`instance_count: ${{parent.inputs.nodes}}`). A pipeline input's value is planned as its text
    (what a command substitutes); here it fills a number, so a numeric text becomes the number."""
    out = dict(settings)
    for key, parts in bound.items():
        if key not in out or parts[1] != "inputs":
            continue
        planned = plan.inputs.get(pipeline_input(parts))
        if planned is None or planned["type"] != "literal" or planned.get("value") is None:
            raise RunnerError(f"{where}.{key} is bound to '{str(out[key]).strip()}', which is no pipeline input "
                              "with a value; declare it under the pipeline's `inputs:` with a number")
        number = sdk_number(planned["value"])
        # Not a number: kept as written, so the check of that setting names it.
        out[key] = planned["value"] if number is None else int(number) if number.is_integer() else number
    return out


PRIMITIVE_OUTPUTS = ("string", "integer", "number", "boolean")


def primitive_output_value(step: str, port: str, path: Path) -> str:
    """The value a step gave its primitive output (``type: string`` and the like, what an
    mldesigner ``@command_component`` returns): the text of the output's path, or of ``output``
    inside it when the step got a folder, as mldesigner's executor writes it
    (https://pypi.org/project/mldesigner/; Microsoft's example:
    https://github.com/Azure/azureml-examples/tree/main/sdk/python/jobs/pipelines/1b_pipeline_with_python_function_components).
    The service hands the next step the value itself, not a path."""
    for candidate in (path, path / "output"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").strip()
    raise RunnerError(f"step '{step}' wrote no value for its {port!r} output (expected in {path} or "
                      f"{path / 'output'}): a primitive output's value is the text its command writes there")


def _bind_input(value: Any, parts: list[str] | None, plan: PipelinePlan, upstream: dict[str, dict[str, Any]],
                base: Path) -> Any:
    """An input's value for the step: ``parts`` is its binding (None for a value as written)."""
    if parts is not None:
        if parts[1] == "inputs":
            planned = plan.inputs.get(pipeline_input(parts))
            if planned is None:
                return None
            if planned["type"] == "literal":
                return planned.get("value")
            return {"type": planned["type"], "path": planned.get("source") or planned.get("uri"),
                    "mode": planned.get("mode")}
        if parts[1] == "jobs":
            producer = upstream[parts[2]][parts[4]]
            if producer["type"] in PRIMITIVE_OUTPUTS:
                return primitive_output_value(parts[2], parts[4], Path(producer["path"]))
            return {"type": producer["type"], "path": producer["path"]}
    if isinstance(value, dict) and value.get("path") and "://" not in str(value["path"]) \
            and not str(value["path"]).startswith("azureml:"):
        return {**value, "path": str((base / str(value["path"])).resolve())}
    return value


# -- the pipeline's walk (in the supervisor) ------------------------------------------------------

class Step:
    """One step: its run folder, its thread, its outcome."""

    def __init__(self, pipeline: "PipelineRun", name: str) -> None:
        self.pipeline = pipeline
        self.name = name
        self.job_name = step_job_name(pipeline.plan.name, name)
        self.run_dir = pipeline.run_dir / STEPS / name
        self.cancel = contract.Cancel()
        self.done = threading.Event()
        self.status = "NotStarted"
        self.error: dict[str, Any] | None = None
        self.thread: threading.Thread | None = None

    def outputs(self) -> dict[str, dict[str, Any]]:
        return step_outputs(self.run_dir)

    def start(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.status = "Running"
        self.thread = threading.Thread(target=self._walk, args=(upstream,), name=self.name, daemon=True)
        self.thread.start()

    def _walk(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> None:
        outcome = contract.Outcome("Failed", None, {"code": "InternalError", "message": "the step's walk stopped"})
        try:
            outcome = self._run(upstream)
        except RunnerError as error:
            outcome = contract.Outcome("Failed", None, {"code": "PreparationError", "message": str(error)})
            self._end_unstarted(outcome)
        except Exception as error:  # a bug of ours: the step still ends, and says what happened
            outcome = contract.Outcome("Failed", None, {"code": "InternalError",
                                                       "message": f"{type(error).__name__}: {error}"})
            self._end_unstarted(outcome)
        finally:
            if outcome.status == "Failed" and outcome.error:
                # The stream and the Execution Summary show why, not only that, a step failed.
                self.pipeline.log(f"step {self.name} failed: {outcome.error.get('message')}")
                self.error = outcome.error
            self.status = outcome.status
            self.done.set()
            self.pipeline.wake.set()

    def _run(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> contract.Outcome:
        pipeline = self.pipeline
        if pipeline.plan.steps[self.name].get("kind") == "sweep":
            return self._run_sweep(upstream)
        if pipeline.plan.steps[self.name].get("kind") == "pipeline":
            return self._run_nested(upstream)
        plan = self.create(upstream)
        decision = step_cache.decide(pipeline.workspace, self.identity(), plan, pipeline.plan.steps[self.name],
                                     force_rerun=pipeline.plan.settings["force_rerun"],
                                     origins=self.origins())
        status.update(self.run_dir, reuse=decision.record())
        if decision.hit is not None:
            pipeline.log(f"step {self.name}: reused from {decision.hit['job']} ({decision.summary()})")
            fields = step_cache.restore(pipeline.workspace, decision.hit, plan, self.run_dir)
            self._collect_artifacts()
            status.transition(self.run_dir, "Completed", reused=True, reused_from=decision.hit["job"],
                              exit_code=0, **fields)
            return contract.Outcome("Completed", 0)
        pipeline.log(f"step {self.name}: runs ({decision.summary()})")
        run = JobRun(self.run_dir, alone=False, cancel=self.cancel)
        outcome = run.until_finalizing()
        self._collect_artifacts()  # before the step is seen to end: its consumers read them
        run.finalize(outcome)
        if outcome.status == "Completed" and decision.storable:
            self._store(decision, plan)
        return outcome

    def _collect_artifacts(self) -> None:
        try:
            collect_artifacts(self.run_dir)
        except OSError as error:  # a consumer of the artifacts then says what it misses
            self.pipeline.log(f"step {self.name}: warning: could not collect its artifacts: {error}")

    def _store(self, decision: step_cache.Decision, plan: CommandPlan) -> None:
        """Keep the completed step for reuse. A step the cache cannot hold (a link out of its
        output folder, a full disk) stays Completed with its outputs as written: it is only not
        reusable, and its reuse record, `--why` and the pipeline's log say why."""
        try:
            step_cache.store(self.pipeline.workspace, decision, plan, self.run_dir, self.job_name)
        except (step_cache.NotStorable, OSError) as error:
            reason = f"not stored for reuse: {error}"
            status.update(self.run_dir, reuse={**decision.record(), "reasons": [*decision.reasons, reason],
                                               "stored": False})
            self.pipeline.log(f"step {self.name}: completed, {reason}")

    def _run_sweep(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> contract.Outcome:
        """A sweep step: a sweep job of its own (its trials in the step's folder), whose outputs
        are its best trial's. Sweep steps always run here; their reuse is not modelled."""
        pipeline = self.pipeline
        data = sweep_step_data(pipeline.plan, self.name, upstream)
        spec = Spec(Path(pipeline.plan.spec), "sweepJob", data)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        plan = plan_sweep(spec, pipeline.workspace, self.job_name, self.run_dir)
        self._record_walk(plan, "a sweep step always runs here (aml-run does not reuse sweep steps)")
        pipeline.log(f"step {self.name}: a sweep, {plan.limits['max_total_trials']} trial(s) at most")
        run = SweepRun(self.run_dir, cancel=self.cancel, alone=False)
        outcome = run.until_finalizing()
        if outcome.status == "Completed" and run.summary()["best_trial"] is None:
            # A sweep step's outputs are its best trial's: without one there is nothing to hand
            # on, and a consumer would read an empty folder instead of a model.
            outcome = contract.Outcome("Failed", 1, {
                "code": "NoBestTrial",
                "message": f"no trial logged the primary metric '{run.metric}', so this sweep step has no best "
                           "trial and no outputs to hand on (a sweep step's outputs are its best trial's: "
                           "https://learn.microsoft.com/azure/machine-learning/how-to-use-sweep-in-pipeline); "
                           f"log it in the trial with mlflow.log_metric('{run.metric}', value)"})
        run.finalize(outcome)
        return outcome

    def _record_walk(self, plan: Plan, reason: str) -> None:
        """A sweep or pipeline-component step's own plan and status, as a child of the pipeline
        (its MLflow run too: the parent run id goes in as a tag)."""
        pipeline = self.pipeline
        plan.display_name = self.name
        plan.experiment_name = pipeline.plan.experiment_name
        plan.parent = pipeline.plan.name
        plan.step = self.name
        plan.tags = {**plan.tags, "mlflow.parentRunId": pipeline.parent_run_id or ""}
        contract.write_plan(self.run_dir, plan)
        status.create(self.run_dir, {"name": self.job_name, "type": plan.type, "parent": pipeline.plan.name,
                                     "step": self.name, "creation_time": status.now(),
                                     "supervisor": pipeline.supervisor})
        status.update(self.run_dir, reuse={"key": "", "decision": "ran", "reasons": [reason]})

    def _run_nested(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> contract.Outcome:
        """A pipeline-component step: a pipeline of its own in the step's folder (its steps are
        named ``<pipeline>--<step>--<inner step>``, and each is reused or run on its own merits)."""
        import yaml

        pipeline = self.pipeline
        step = pipeline.plan.steps[self.name]
        data = nested_pipeline_data(pipeline.plan, self.name, upstream)
        # Relative paths in the component are the component file's (an inline one: the pipeline's).
        source = Path(step["path"]) if step.get("path") else Path(step["base_dir"]) / "component.yml"
        text = yaml.safe_dump(data, sort_keys=False)
        spec = Spec(source, "pipelineJob", data, text=text)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        plan = plan_pipeline(spec, pipeline.workspace, self.job_name, self.run_dir)
        self._record_walk(plan, "a pipeline-component step runs its own steps, each of which is reused or run "
                                f"on its own merits (aml-run job show {self.job_name} --node <step> --why)")
        nested = PipelineRun(self.run_dir, cancel=self.cancel, alone=False)
        outcome = nested.until_finalizing()
        nested.finalize(outcome)
        return outcome

    def origins(self) -> dict[str, str]:
        """Inputs bound to an upstream step's output count by the job that produced it, as in the
        service, where a step that ran again writes a new output (its consumers run again too)
        and a reused one hands on the original's."""
        bound = self.pipeline.plan.steps[self.name]["wiring"].get("inputs", {})
        return {key: output_origin(self.pipeline.steps[parts[2]].run_dir, parts[4])
                for key, parts in bound.items() if len(parts) == 5 and parts[1] == "jobs"}

    def identity(self) -> str:
        """What a step is across runs, for `--why` to compare with: the pipeline file and the step."""
        return f"{self.pipeline.plan.spec}::{self.name}"

    def create(self, upstream: dict[str, dict[str, dict[str, Any]]]) -> CommandPlan:
        pipeline = self.pipeline
        job_data = step_job_data(pipeline.plan, self.name, upstream)
        step = pipeline.plan.steps[self.name]
        spec = Spec(Path(pipeline.plan.spec), "commandJob", job_data)
        job = command_job_from(job_data, Path(step["base_dir"]))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        plan = command.plan_command(job, spec, pipeline.workspace, self.job_name, self.run_dir)
        plan.display_name = self.name
        plan.experiment_name = pipeline.plan.experiment_name
        plan.parent = pipeline.plan.name
        plan.step = self.name
        plan.mlflow_tags = {"mlflow.parentRunId": pipeline.parent_run_id or "", "amllab.parent": pipeline.plan.name}
        contract.write_plan(self.run_dir, plan)
        status.create(self.run_dir, {"name": self.job_name, "type": "command", "parent": pipeline.plan.name,
                                     "step": self.name, "creation_time": status.now(),
                                     "supervisor": pipeline.supervisor})
        return plan

    def _end_unstarted(self, outcome: contract.Outcome) -> None:
        _record_unstarted(self.pipeline.run_dir, self.pipeline.plan.name, self.name)
        status.transition(self.run_dir, outcome.status, error=outcome.error)

    def skip(self, reason: str) -> None:
        """A step that will never start: Canceled, with why."""
        self.status = "Canceled"
        self._end_unstarted(contract.Outcome("Canceled", None, {"code": "NotRun", "message": reason}))
        self.done.set()


class PipelineRun(Walk):
    """The pipeline's walk: Queued, Preparing (its MLflow run), Running (start each step once
    what it reads from has completed), Finalizing, and its final state."""

    def __init__(self, run_dir: Path, cancel: contract.Cancel | None = None, alone: bool = True) -> None:
        """``alone``: the supervisor runs nothing else (not a pipeline-component step)."""
        super().__init__(run_dir, cancel)
        self.alone = alone
        self.steps = {name: Step(self, name) for name in self.plan.order}
        self.producers: dict[str, set[str]] = {name: set() for name in self.steps}
        for producer, consumer in self.plan.edges:
            self.producers[consumer].add(producer)
        self.wake = threading.Event()
        self.parent_run_id: str | None = None
        self.supervisor = {"pid": os.getpid(), "start_ticks": process.start_ticks(os.getpid())}

    def until_finalizing(self) -> contract.Outcome:
        def steps() -> contract.Outcome:
            self.cancel.interruptible = self.alone
            self.enter("Queued")
            self.enter("Preparing")
            self.tracking.check_reachable()
            run = self.tracking.start_run(self.plan.experiment_name, self.plan.display_name,
                                          {"mlflow.runName": self.plan.display_name, "amllab.job": self.plan.name,
                                           "amllab.type": "pipeline", **self.plan.tags})
            self.parent_run_id = run["run_id"]
            status.update(self.run_dir, mlflow={"tracking_uri": self.plan.tracking_uri, "run_id": run["run_id"],
                                                "experiment_id": run["experiment_id"]})
            self.log(f"MLflow run {run['run_id']} in experiment '{self.plan.experiment_name}'; each step is a "
                     "child run of it")
            self.log(f"steps in dependency order: {', '.join(self.plan.order)}; "
                     f"continue_on_step_failure {self.plan.settings['continue_on_step_failure']}, "
                     f"force_rerun {self.plan.settings['force_rerun']}")
            self.cancel.interruptible = False
            if self.cancel.requested:
                return contract.Outcome("Canceled", None, {"code": "Canceled", "message": "the pipeline was canceled"})
            self.enter("Running")
            return self._control()

        return self.guarded(steps)

    def _control(self) -> contract.Outcome:
        keep_going = self.plan.settings["continue_on_step_failure"]
        stopping = False
        while True:
            self.wake.clear()
            if self.cancel.requested and not stopping:
                stopping = True
                self._stop_all("the pipeline was canceled")
            for step in self.steps.values():
                if step.status == "Running" and not step.cancel.requested and \
                        (step.run_dir / status.FILE).is_file() and status.read(step.run_dir).get("cancel_requested"):
                    self.log(f"step {step.name} canceled by request")
                    step.cancel.request("canceled")
                if step.status != "NotStarted":
                    continue
                producers = [self.steps[name] for name in self.producers[step.name]]
                if stopping:
                    step.skip("the pipeline was canceled" if self.cancel.requested else
                              "an earlier step failed (continue_on_step_failure is false)")
                elif any(p.status in ("Failed", "Canceled") for p in producers):
                    failed = next(p.name for p in producers if p.status in ("Failed", "Canceled"))
                    step.skip(f"upstream step '{failed}' did not complete")
                    self.log(f"step {step.name}: not run (upstream step {failed} did not complete)")
                elif all(p.status == "Completed" for p in producers):
                    upstream = {p.name: p.outputs() for p in producers}
                    self.log(f"step {step.name}: starting")
                    step.start(upstream)
            failed = [s for s in self.steps.values() if s.done.is_set() and s.status == "Failed"]
            if failed and not keep_going and not stopping:
                stopping = True
                self.log(f"step {failed[0].name} failed and continue_on_step_failure is false: canceling the rest")
                self._stop_all(f"step {failed[0].name} failed")
                continue
            if all(step.done.is_set() for step in self.steps.values()):
                break
            self.wake.wait(POLL)
        return self._outcome()

    def _stop_all(self, reason: str) -> None:
        for step in self.steps.values():
            if step.status == "Running" and not step.done.is_set():
                step.cancel.request(reason)

    def _outcome(self) -> contract.Outcome:
        states = {name: step.status for name, step in self.steps.items()}
        failed = [name for name, state in states.items() if state == "Failed"]
        if self.cancel.requested:
            return contract.Outcome("Canceled", None, {"code": "Canceled", "message": "the pipeline was canceled"})
        if failed:
            first = (self.steps[failed[0]].error or {}).get("message")
            return contract.Outcome("Failed", 1, {"code": "StepFailed",
                                                 "message": f"step(s) {', '.join(failed)} failed; see aml-run job show "
                                                            f"{self.plan.name} --node {failed[0]}"
                                                            + (f"\nstep {failed[0]}: {first}" if first else "")})
        return contract.Outcome("Completed", 0)

    def finalize(self, outcome: contract.Outcome) -> None:
        self.enter("Finalizing")
        if self.parent_run_id:
            try:
                self.tracking.end_run(self.parent_run_id,
                                      {"Completed": "FINISHED", "Failed": "FAILED", "Canceled": "KILLED"}[outcome.status])
            except RunnerError as error:
                self.log(f"warning: could not close the MLflow run: {error}")
        reused = sum(1 for step in self.steps.values() if status.read(step.run_dir).get("reused"))
        self.log(f"{len(self.steps)} step(s): {reused} reused, "
                 f"{sum(1 for s in self.steps.values() if s.status == 'Completed') - reused} ran and completed")
        if outcome.error:
            self.log(f"{outcome.error['code']}: {outcome.error['message']}")
        self.enter(outcome.status, exit_code=outcome.exit_code, error=outcome.error)


def _record_unstarted(run_dir: Path, pipeline: str, step: str) -> None:
    """A status for a step that has none yet (it never started), so that it can end, and say why."""
    step_dir = run_dir / STEPS / step
    step_dir.mkdir(parents=True, exist_ok=True)
    if not (step_dir / status.FILE).exists():
        status.create(step_dir, {"name": step_job_name(pipeline, step), "type": "command", "parent": pipeline,
                                 "step": step, "creation_time": status.now()})


def record_unstarted_steps(run_dir: Path) -> None:
    """A status for every step of the pipeline in ``run_dir`` that never started: when the
    pipeline ends without its supervisor, these end Canceled, as the steps it skips itself do."""
    plan = contract.read_plan(run_dir)
    assert isinstance(plan, PipelinePlan)
    for step in plan.order:
        _record_unstarted(run_dir, plan.name, step)


def output_origin(step_dir: Path, port: str) -> str:
    """Which job produced a step's output: a reused step's came from the original; a
    pipeline-component step's from the inner step bound to it; a sweep's from its best trial."""
    plan, record = contract.read_plan(step_dir), status.read(step_dir)
    return contract.executor_for(plan.type).output_origin(step_dir, plan, record, port)


def step_outputs(step_dir: Path, artifacts: bool = True) -> dict[str, dict[str, Any]]:
    """A step's outputs as planned: a sweep step's are its best trial's (before there is one,
    its own folders); a pipeline-component step's are the inner step outputs bound to them.
    A command step also has its artifacts (``default``, ``artifacts``)."""
    plan = contract.read_plan(step_dir)
    source = contract.executor_for(plan.type).outputs_run(step_dir, plan, status.read(step_dir))
    if source is None:
        outputs = {key: {**value, "path": str(step_dir / "outputs" / key)} for key, value in plan.outputs.items()}
    else:
        outputs = dict(source[1].outputs)
    if plan.type == "command" and artifacts:
        for key in RESERVED_OUTPUTS:
            outputs.setdefault(key, {"type": "uri_folder", "mode": "rw_mount", "path": str(step_dir / ARTIFACTS),
                                     "asset_name": None, "asset_version": None})
    return outputs


def collect_artifacts(step_dir: Path) -> None:
    """The step's artifact folder, laid out as the service keeps a job's artifacts: ``outputs/``
    and ``logs/`` (the command's ./outputs and ./logs) and ``user_logs/``. Hard links, nothing
    copied; built aside and renamed in, so a consumer never sees half of it."""
    import shutil

    from .inputs import link_tree

    target = step_dir / ARTIFACTS
    partial = step_dir / f".{ARTIFACTS}.{os.getpid()}.part"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    for name, source in (("outputs", step_dir / "wd" / "outputs"), ("logs", step_dir / "wd" / "logs"),
                         ("user_logs", step_dir / "user_logs")):
        if source.is_dir():
            link_tree(source, partial / name)
        else:
            (partial / name).mkdir()
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)


def nodes(workspace: Workspace, run_dir: Path, plan: PipelinePlan) -> dict[str, Any]:
    """`job show`'s `jobs`: node name -> status, reused, reused_from, outputs, metrics, duration."""
    shown = {}
    for name in plan.order:
        step_dir = run_dir / STEPS / name
        record = status.read(step_dir) if (step_dir / status.FILE).is_file() else {"status": "NotStarted"}
        # The declared outputs (`job show` of the step has `default` and `logs` as any job's).
        outputs = step_outputs(step_dir, artifacts=False) if (step_dir / contract.PLAN).is_file() else {}
        metrics = record.get("metrics") or {}
        if record.get("best_trial"):  # a sweep step: its best trial's
            metrics = next((row.get("metrics") or {} for row in record.get("trials") or []
                            if row.get("name") == record["best_trial"]["name"]), {})
        shown[name] = {
            "name": step_job_name(plan.name, name),
            "status": record.get("status"),
            "reused": bool(record.get("reused")),
            "reused_from": record.get("reused_from"),
            "outputs": {key: value["path"] for key, value in outputs.items()},
            "metrics": metrics,
            "duration": contract.duration(record.get("start_time"), record.get("end_time")),
            "error": record.get("error"),
        }
    return shown


def node_job_name(workspace: Workspace, pipeline: str, step: str) -> str:
    """The job of step ``step`` of ``pipeline``; an unknown step names the ones there are."""
    plan = contract.read_plan(workspace.find_run(pipeline))
    if not isinstance(plan, PipelinePlan):
        raise NotFound(f"job {pipeline} is a {plan.type} job, not a pipeline: it has no steps")
    if step not in plan.order:
        raise NotFound(f"pipeline {pipeline} has no step '{step}'; its steps: {', '.join(plan.order)}")
    return step_job_name(pipeline, step)


def why(workspace: Workspace, run_dir: Path, step: str) -> str:
    """Why a step ran or was reused, field by field (`job show P --node STEP --why`)."""
    step_dir = run_dir / STEPS / step
    if not (step_dir / status.FILE).is_file():
        raise NotFound(f"step '{step}' has not started (or the pipeline has no such step)")
    record = status.read(step_dir)
    decision = record.get("reuse")
    if not decision:
        return f"{step}: {record.get('status')}; no reuse decision was made (it never reached its start)\n"
    lines = [f"{step}: {'reused from ' + str(record.get('reused_from')) if record.get('reused') else 'ran'}"
             f" ({record.get('status')})"]
    lines += [f"  - {reason}" for reason in decision["reasons"]]
    lines.append(f"  key {decision['key'][:16]}")
    return "\n".join(lines) + "\n"


class PipelineExecutor(Executor):
    """Pipeline jobs: steps (command, sweep, pipeline-component), run in the order their
    bindings imply, each reused or run on its own merits."""

    type = "pipeline"
    spec_kind = "pipelineJob"
    log_file = contract.SYSTEM_LOG

    def plan(self, spec: Spec, workspace: Workspace, name: str, run_dir: Path, submission: Submission) -> PipelinePlan:
        return plan_pipeline(spec, workspace, name, run_dir)

    def walk(self, run_dir: Path, cancel: Cancel | None = None, alone: bool = True) -> PipelineRun:
        return PipelineRun(run_dir, cancel=cancel, alone=alone)

    def children(self, run_dir: Path) -> list[Path]:
        return sorted(p for p in (run_dir / STEPS).glob("*") if (p / status.FILE).is_file())

    def child_job_names(self, name: str, run_dir: Path, plan: Plan) -> list[str]:
        assert isinstance(plan, PipelinePlan)
        # Its steps in the pipeline's order, those that have started (reused ones included).
        return [step_job_name(name, step) for step in plan.order if (run_dir / STEPS / step / status.FILE).is_file()]

    def parent_ended(self, run_dir: Path) -> None:
        record_unstarted_steps(run_dir)  # so that they too end, and show why

    def output_origin(self, run_dir: Path, plan: Plan, record: dict[str, Any], port: str) -> str:
        bound = plan.outputs.get(port) or {}
        if bound.get("step"):
            return output_origin(run_dir / STEPS / bound["step"], bound["port"])
        return super().output_origin(run_dir, plan, record, port)

    def show(self, workspace: Workspace, run_dir: Path, plan: Plan, record: dict[str, Any],
             read: Any) -> dict[str, Any]:
        assert isinstance(plan, PipelinePlan)
        return {"jobs": nodes(workspace, run_dir, plan)}

    def summary(self, shown: dict[str, Any]) -> str:
        steps = ", ".join(f"{step} {'reused' if node['reused'] else node['status']}"
                          + (f" ({lab_expectations.metrics_text(node['metrics'])})" if node["metrics"] else "")
                          for step, node in shown["jobs"].items())
        return f"pipeline {shown['name']}: {shown['status']}, steps: {steps}"

    def expectations(self, expect: Mapping[str, Any], shown: dict[str, Any]) -> list[str]:
        """A lab's ``reused`` and ``ran`` step lists and each step's ``status`` and ``metrics``."""
        problems = []
        steps = shown.get("jobs") or {}
        reused = sorted(step for step, node in steps.items() if node["reused"])
        ran = sorted(step for step, node in steps.items() if not node["reused"])
        for key, actual in (("reused", reused), ("ran", ran)):
            if key in expect and sorted(expect[key]) != actual:
                problems.append(f"steps {key}: {actual}, expected {sorted(expect[key])}")
        for step, wanted in (expect.get("steps") or {}).items():
            node = steps.get(step)
            if node is None:
                problems.append(f"the pipeline has no step {step!r} (steps: {sorted(steps)})")
                continue
            if "status" in wanted and node["status"] != wanted["status"]:
                problems.append(f"step {step} is {node['status']}, expected {wanted['status']}")
            problems += [f"step {step}: {problem}"
                         for problem in lab_expectations.metrics(wanted.get("metrics"), node["metrics"])]
        return problems + super().expectations(expect, shown)


EXECUTOR = register(PipelineExecutor())
