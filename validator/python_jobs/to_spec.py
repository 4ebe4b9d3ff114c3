"""A job the SDK would build, as the CLI YAML spec `az ml` takes for the same job: the data the
YAML rules read, with where each value is written in the Python source.

The mapping follows what azure-ai-ml sends to the service for the object, written as the CLI
YAML reference writes it (https://learn.microsoft.com/azure/machine-learning/reference-yaml-job-command,
...-job-sweep, ...-job-pipeline, ...-schedule):

- ``command(...)``: its keywords by their YAML names; ``instance_count``, ``instance_type``,
  ``shm_size``, ``docker_args``, ``locations`` and ``set_resources(...)`` under ``resources``;
  ``timeout`` and ``set_limits(...)`` under ``limits``; ``job_tier``/``priority`` under
  ``queue_settings``; an asset or compute named without ``azureml:`` gets it, as the SDK resolves
  a bare name to the workspace's asset;
- ``command(...).sweep(...)``: the command as the trial, each input given a search space object
  (``Uniform``, ``Choice``...) under ``search_space`` and referred to as ``${{search_space.x}}``,
  the others as the sweep's inputs; ``goal`` lower-cased, ``sampling_algorithm`` ``random``
  where not given (the SDK's default);
- a ``@dsl.pipeline`` function called: its parameters as the pipeline's inputs, each component
  call a step named after its variable, ``load_component(source=...)`` as ``component:`` with
  that path, a step's ``.outputs.x`` as ``${{parent.jobs.step.outputs.x}}``, what the function
  returns as the pipeline's outputs;
- ``JobSchedule(...)``: its trigger as ``trigger``; the job object it creates is checked as a job
  of its own, and left out of the schedule's spec.

A value known only when the code runs is left out, and remembered (:attr:`Spec.unknown`), so
that a finding about its absence is not reported.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..loader import Position
from .signatures import KEYWORDS
from .values import Entries, Items, Keyword, Known, Reference, Sdk, Span, Unknown, Value

KINDS = {"command": "commandJob", "sweep": "sweepJob", "pipeline": "pipelineJob", "JobSchedule": "schedule"}
SEARCH_SPACE = {"Choice": "choice", "Uniform": "uniform", "LogUniform": "loguniform", "Normal": "normal",
                "LogNormal": "lognormal", "QUniform": "quniform", "QLogUniform": "qloguniform", "QNormal": "qnormal",
                "QLogNormal": "qlognormal", "Randint": "randint"}
POLICIES = {"MedianStoppingPolicy": "median_stopping", "BanditPolicy": "bandit",
            "TruncationSelectionPolicy": "truncation_selection"}
DISTRIBUTIONS = {"MpiDistribution": "mpi", "PyTorchDistribution": "pytorch", "TensorFlowDistribution": "tensorflow"}
RESOURCE_KEYWORDS = ("instance_count", "instance_type", "locations", "docker_args", "shm_size")
# command() keywords written as they are in a command job's YAML.
COMMAND_KEYS = ("name", "display_name", "description", "experiment_name", "tags", "properties", "command", "code",
                "environment_variables")
MISSING = object()
# Keywords an SDK object uses that have no place in the YAML spec.
NOT_IN_YAML = frozenset({"intellectual_property"})


class Spec(NamedTuple):
    kind: str
    data: dict[str, Any]
    positions: dict[tuple, Position]
    # Where a value is known only when the code runs: its pointer and why.
    unknown: list[tuple[tuple, Unknown]]
    # Where a value is left out because it is checked as a spec of its own (a schedule's job).
    elsewhere: frozenset[tuple] = frozenset()


class Builder:
    """Builds one spec's data and positions."""

    def __init__(self, root: Span) -> None:
        self.positions: dict[tuple, Position] = {(): _position(root, root)}
        self.unknown: list[tuple[tuple, Unknown]] = []
        self.elsewhere: set[tuple] = set()

    def put(self, container: dict, where: tuple, key: str, value: Value | None, key_span: Span | None = None) -> Any:
        """``container[key]`` (``container`` is the data at ``where``) set to ``value``'s data,
        with its position; nothing for an absent or unknown value."""
        if value is None:
            return MISSING
        data = self.data(value, where + (key,))
        if data is MISSING:
            return MISSING
        container[key] = data
        self.positions[where + (key,)] = _position(key_span or value.span, value.span)
        return data

    def data(self, value: Value, where: tuple) -> Any:
        if isinstance(value, Known):
            return value.value
        if isinstance(value, Unknown):
            self.unknown.append((where, value))
            return MISSING
        if isinstance(value, Reference):
            return value.text
        if isinstance(value, Items):
            items = []
            for index, item in enumerate(value.items):
                data = self.data(item, where + (index,))
                if data is MISSING:
                    return MISSING  # a list with a hole is not the list the code builds
                self.positions[where + (index,)] = _position(item.span, item.span)
                items.append(data)
            return items
        if isinstance(value, Entries):
            mapping: dict[str, Any] = {}
            for key, item in value.entries:
                if not isinstance(key, Known):
                    self.unknown.append((where, Unknown(key.span, "a key known only when the code runs")))
                    continue
                self.put(mapping, where, str(key.value), item, key.span)
            return mapping
        if isinstance(value, Sdk):
            return self.object(value, where)
        self.unknown.append((where, Unknown(value.span, "an object the linter does not follow")))
        return MISSING

    def object(self, value: Sdk, where: tuple) -> Any:
        """An SDK object as its YAML mapping: an input or output, a search space, a policy, a
        distribution, resources, queue settings, a trigger."""
        mapping: dict[str, Any] = {}
        what = value.what
        if what in SEARCH_SPACE:
            mapping["type"] = SEARCH_SPACE[what]
        elif what in POLICIES:
            mapping["type"] = POLICIES[what]
        elif what in DISTRIBUTIONS:
            mapping["type"] = DISTRIBUTIONS[what]
        elif what == "CronTrigger":
            mapping["type"] = "cron"
        elif what == "RecurrenceTrigger":
            mapping["type"] = "recurrence"
        elif what not in ("Input", "Output", "JobResourceConfiguration", "QueueSettings", "RecurrencePattern"):
            self.unknown.append((where, Unknown(value.span, f"a {what} object")))
            return MISSING
        if "type" in mapping:
            self.positions[where + ("type",)] = _position(value.span, value.span)
        used = KEYWORDS.get(what)
        for name, keyword in value.keywords.items():
            if "." in name or (used is not None and name not in used) or name in NOT_IN_YAML:
                continue  # a keyword the SDK drops (AML901 says so) is not in what it sends
            if what == "Input" and name == "type" and isinstance(keyword.value, Known) \
                    and keyword.value.value in ("string", "str"):
                self.put(mapping, where, name, Known(keyword.value.span, "string"), keyword.span)
                continue
            self.put(mapping, where, name, keyword.value, keyword.span)
        if what in ("Input", "Output") and "type" not in mapping:
            mapping["type"] = "uri_folder"  # the SDK's default
            self.positions[where + ("type",)] = _position(value.span, value.span)
        return mapping

    def nested(self, data: dict, where: tuple, path: str, keyword: Keyword) -> None:
        """``keyword`` set at a dotted ``path`` (``resources.instance_count``) under ``data``."""
        parts = path.split(".")
        container = data
        for depth, part in enumerate(parts[:-1]):
            child = container.get(part)
            if not isinstance(child, dict):
                child = container[part] = {}
                self.positions.setdefault(where + tuple(parts[:depth + 1]), _position(keyword.span, keyword.span))
            container = child
        self.put(container, where + tuple(parts[:-1]), parts[-1], keyword.value, keyword.span)


def _position(key: Span, value: Span) -> Position:
    return Position(key.line, key.column, key.end, value.line, value.column, value.end)


def _asset(value: Value | None, *, compute: bool = False) -> Value | None:
    """An environment or compute named as the SDK allows, as the YAML writes it: a bare name gets
    ``azureml:`` (``serverless`` and ``local`` for a compute, and paths and ids, stay as they are)."""
    if not isinstance(value, Known) or not isinstance(value.value, str):
        return value
    text = value.value
    if text.startswith(("azureml:", "/subscriptions/", "./", "../", "/", "file:", "http:", "https:")) or \
            (compute and text.lower() in ("serverless", "local")) or not text:
        return value
    return Known(value.span, f"azureml:{text}")


def build(job: Sdk, extra: dict[str, Keyword] | None = None) -> Spec:
    """The spec of a submitted job (``extra``: what the submitting call overrides)."""
    builder = Builder(job.span)
    data: dict[str, Any] = {}
    if job.what == "command":
        _command_job(builder, job, data, ())
    elif job.what == "sweep":
        _sweep_job(builder, job, data)
    elif job.what == "pipeline":
        _pipeline_job(builder, job, data)
    elif job.what == "JobSchedule":
        _schedule(builder, job, data)
    return Spec(KINDS[job.what], data, builder.positions, builder.unknown, frozenset(builder.elsewhere))


def _type(builder: Builder, data: dict, where: tuple, kind: str, span: Span) -> None:
    data["type"] = kind
    builder.positions[where + ("type",)] = _position(span, span)


def _inputs(job: Sdk) -> dict[str, Keyword]:
    """A command's inputs: those of ``inputs={...}``, then those it was called with."""
    found: dict[str, Keyword] = {}
    given = job.get("inputs")
    if isinstance(given, Entries):
        for key, value in given.entries:
            if isinstance(key, Known):
                found[str(key.value)] = Keyword(key.span, value)
    found.update(job.bound)
    return found


def _command_job(builder: Builder, job: Sdk, data: dict, where: tuple, *, step: bool = False) -> None:
    _type(builder, data, where, "command", job.span)
    for key in COMMAND_KEYS:
        keyword = job.keywords.get(key)
        if keyword is not None:
            builder.put(data, where, key, keyword.value, keyword.span)
    for key in ("environment", "compute"):
        keyword = job.keywords.get(key)
        if keyword is not None:
            builder.put(data, where, key, _asset(keyword.value, compute=key == "compute"), keyword.span)
    inputs = _inputs(job)
    if isinstance(job.get("inputs"), Unknown):
        builder.unknown.append((where + ("inputs",), job.get("inputs")))
    if inputs:
        mapping: dict[str, Any] = {}
        data["inputs"] = mapping
        builder.positions[where + ("inputs",)] = _position(job.keywords["inputs"].span if "inputs" in job.keywords
                                                           else job.span, job.span)
        for name, keyword in inputs.items():
            if step and isinstance(keyword.value, Sdk) and keyword.value.what == "Input" \
                    and "path" not in keyword.value.keywords:
                continue  # a declaration of the component's, not a value of this step
            builder.put(mapping, where + ("inputs",), name, keyword.value, keyword.span)
    outputs = job.keywords.get("outputs")
    if outputs is not None:
        builder.put(data, where, "outputs", outputs.value, outputs.span)
    distribution = job.keywords.get("distribution")
    if distribution is not None:
        builder.put(data, where, "distribution", distribution.value, distribution.span)
    for key in RESOURCE_KEYWORDS:
        if key in job.keywords:
            builder.nested(data, where, f"resources.{key}", job.keywords[key])
    if "resources" in job.keywords:
        builder.put(data, where, "resources", job.keywords["resources"].value, job.keywords["resources"].span)
    if "timeout" in job.keywords:
        builder.nested(data, where, "limits.timeout", job.keywords["timeout"])
    for key in ("job_tier", "priority"):
        if key in job.keywords:
            builder.nested(data, where, f"queue_settings.{key}", job.keywords[key])
    if "queue_settings" in job.keywords:
        builder.put(data, where, "queue_settings", job.keywords["queue_settings"].value,
                    job.keywords["queue_settings"].span)
    for path, keyword in job.keywords.items():  # set_resources(...), set_limits(...), job.x.y = ...
        if "." in path and path.split(".")[0] in ("resources", "limits", "queue_settings", "outputs", "inputs",
                                                   "distribution"):
            builder.nested(data, where, path, keyword)


def _sweep_job(builder: Builder, sweep: Sdk, data: dict) -> None:
    trial: Sdk = sweep.parts["trial"]
    _type(builder, data, (), "sweep", sweep.span)
    space: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    if isinstance(trial.get("inputs"), Unknown):
        builder.unknown.append((("inputs",), trial.get("inputs")))
    for name, keyword in _inputs(trial).items():
        value = keyword.value
        if isinstance(value, Sdk) and value.what in SEARCH_SPACE:
            builder.put(space, ("search_space",), name, value, keyword.span)
        else:
            builder.put(inputs, ("inputs",), name, value, keyword.span)
    if "search_space" in sweep.keywords:
        builder.put(data, (), "search_space", sweep.keywords["search_space"].value, sweep.keywords["search_space"].span)
    elif space:
        data["search_space"] = space
        builder.positions[("search_space",)] = builder.positions[("search_space", next(iter(space)))]
    if inputs:
        data["inputs"] = inputs
        builder.positions[("inputs",)] = builder.positions[("inputs", next(iter(inputs)))]
    trial_data: dict[str, Any] = {}
    data["trial"] = trial_data
    builder.positions[("trial",)] = _position(trial.span, trial.span)
    for key in ("code", "environment_variables"):
        if key in trial.keywords:
            builder.put(trial_data, ("trial",), key, trial.keywords[key].value, trial.keywords[key].span)
    if "environment" in trial.keywords:
        builder.put(trial_data, ("trial",), "environment", _asset(trial.keywords["environment"].value),
                    trial.keywords["environment"].span)
    if "command" in trial.keywords:
        command = trial.keywords["command"].value
        if isinstance(command, Known) and isinstance(command.value, str) and space:
            # A swept input is the search space's in the trial's command, as the CLI YAML writes it.
            names = "|".join(re.escape(name) for name in space)
            command = Known(command.span, re.sub(r"\$\{\{\s*inputs\.(" + names + r")\s*\}\}", r"${{search_space.\1}}",
                                                 command.value))
        builder.put(trial_data, ("trial",), "command", command, trial.keywords["command"].span)
    if "distribution" in trial.keywords:
        builder.put(trial_data, ("trial",), "distribution", trial.keywords["distribution"].value,
                    trial.keywords["distribution"].span)
    for key in RESOURCE_KEYWORDS:
        if key in trial.keywords:
            builder.nested(trial_data, ("trial",), f"resources.{key}", trial.keywords[key])
    for key in ("display_name", "experiment_name", "description", "tags", "name"):
        keyword = sweep.keywords.get(key) or trial.keywords.get(key)
        if keyword is not None:
            builder.put(data, (), key, keyword.value, keyword.span)
    if "compute" not in sweep.keywords and "compute" in trial.keywords:
        builder.put(data, (), "compute", _asset(trial.keywords["compute"].value, compute=True),
                    trial.keywords["compute"].span)
    _sweep_settings(builder, sweep, data, (), trial_data)


def _sweep_settings(builder: Builder, sweep: Sdk, data: dict, where: tuple, trial_data: dict | None = None) -> None:
    """What ``.sweep(...)``, ``set_limits(...)`` and later assignments set on a sweep, a job of
    its own or a pipeline's step (``where``)."""
    compute = sweep.keywords.get("compute")
    if compute is not None:
        builder.put(data, where, "compute", _asset(compute.value, compute=True), compute.span)
    algorithm = sweep.keywords.get("sampling_algorithm")
    if algorithm is not None:
        builder.put(data, where, "sampling_algorithm", algorithm.value, algorithm.span)
    else:
        data["sampling_algorithm"] = "random"  # the SDK's default
    objective: dict[str, Any] = {}
    for key in ("primary_metric", "goal"):
        keyword = sweep.keywords.get(key)
        if keyword is None:
            continue
        value = keyword.value
        if key == "goal" and isinstance(value, Known) and isinstance(value.value, str):
            value = Known(value.span, value.value.lower())
        builder.put(objective, where + ("objective",), key, value, keyword.span)
    if objective:
        data["objective"] = objective
        builder.positions[where + ("objective",)] = builder.positions[where + ("objective", next(iter(objective)))]
    for key in ("max_concurrent_trials", "max_total_trials", "timeout", "trial_timeout"):
        if key in sweep.keywords:
            builder.nested(data, where, f"limits.{key}", sweep.keywords[key])
    policy = sweep.keywords.get("early_termination_policy") or sweep.keywords.get("early_termination")
    if policy is not None:
        builder.put(data, where, "early_termination", policy.value, policy.span)
    for key in ("job_tier", "priority"):
        if key in sweep.keywords:
            builder.nested(data, where, f"queue_settings.{key}", sweep.keywords[key])
    for path, keyword in sweep.keywords.items():
        if "." in path and path.split(".")[0] in ("limits", "resources", "queue_settings"):
            if path.startswith("resources.") and trial_data is not None:
                builder.nested(trial_data, ("trial",), path, keyword)
            else:
                builder.nested(data, where, path, keyword)


def _pipeline_job(builder: Builder, pipeline: Sdk, data: dict) -> None:
    _type(builder, data, (), "pipeline", pipeline.span)
    for key in ("display_name", "description", "experiment_name", "tags"):
        keyword = pipeline.keywords.get(key)
        if keyword is not None:
            builder.put(data, (), key, keyword.value, keyword.span)
    if "compute" in pipeline.keywords:
        builder.put(data, (), "compute", _asset(pipeline.keywords["compute"].value, compute=True),
                    pipeline.keywords["compute"].span)
    settings: dict[str, Any] = {}
    for key, yaml_key in (("default_compute", "default_compute"), ("default_compute_target", "default_compute"),
                          ("default_datastore", "default_datastore"),
                          ("continue_on_step_failure", "continue_on_step_failure"), ("force_rerun", "force_rerun")):
        for name in (key, f"settings.{key}"):
            keyword = pipeline.keywords.get(name)
            if keyword is not None:
                value = _asset(keyword.value, compute=True) if "compute" in key else keyword.value
                builder.put(settings, ("settings",), yaml_key, value, keyword.span)
    if settings:
        data["settings"] = settings
        builder.positions[("settings",)] = builder.positions[("settings", next(iter(settings)))]
    inputs: dict[str, Any] = {}
    for name, keyword in pipeline.parts["inputs"].items():
        if isinstance(keyword.value, Known) and keyword.value.value is None:
            continue
        builder.put(inputs, ("inputs",), name, keyword.value, keyword.span)
    if inputs:
        data["inputs"] = inputs
        builder.positions[("inputs",)] = builder.positions[("inputs", next(iter(inputs)))]
    outputs: dict[str, Any] = {}
    bound_outputs: dict[str, str] = {}  # "parent.jobs.s.outputs.o" -> the pipeline output it is
    for name, keyword in pipeline.parts["outputs"].items():
        outputs[name] = None
        builder.positions[("outputs", name)] = _position(keyword.span, keyword.value.span)
        if isinstance(keyword.value, Reference):
            bound_outputs[keyword.value.expression] = name
    if outputs:
        data["outputs"] = outputs
        builder.positions[("outputs",)] = builder.positions[("outputs", next(iter(outputs)))]
    jobs: dict[str, Any] = {}
    data["jobs"] = jobs
    builder.positions[("jobs",)] = _position(pipeline.span, pipeline.span)
    for name, step in pipeline.parts["steps"].items():
        if step.what == "unknown-step":
            why = step.parts["value"].why if isinstance(step.parts["value"], Unknown) else f"a {step.parts['value'].what}"
            builder.unknown.append((("jobs",), Unknown(step.span, f"a step made by a call the linter cannot follow: {why}")))
            continue
        jobs[name] = _step(builder, step, ("jobs", name), bound_outputs)


def _step(builder: Builder, step: Sdk, where: tuple, bound_outputs: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    builder.positions[where] = _position(step.span, step.span)
    if step.what == "sweep":
        _sweep_step(builder, step, data, where)
        _bind_outputs(builder, step, data, where, bound_outputs)
        return data
    component = step.parts["component"]
    if component.what == "command":
        inline = Sdk(component.span, "command", dict(component.keywords), bound={**component.bound, **step.bound})
        _command_job(builder, inline, data, where, step=True)
    else:  # load_component(source=...)
        source = component.get("source")
        if isinstance(component.parts.get("type"), str):  # read from the component's file
            data["type"] = component.parts["type"]
            builder.positions[where + ("type",)] = _position(step.span, step.span)
        if source is not None:
            builder.put(data, where, "component", source, source.span)
        if step.bound:
            inputs: dict[str, Any] = {}
            data["inputs"] = inputs
            builder.positions[where + ("inputs",)] = _position(step.span, step.span)
            for name, keyword in step.bound.items():
                builder.put(inputs, where + ("inputs",), name, keyword.value, keyword.span)
    for path, keyword in step.keywords.items():
        if path == "name":
            continue  # the step's name (the key of jobs)
        if path == "compute":
            builder.put(data, where, "compute", _asset(keyword.value, compute=True), keyword.span)
        elif path.split(".")[0] in ("outputs", "inputs", "resources", "limits", "environment_variables",
                                    "queue_settings", "distribution"):
            if path.startswith("inputs.") and path.count(".") == 2:
                _bound_input_setting(builder, data, where, path, keyword)
            else:
                builder.nested(data, where, path, keyword)
        elif path in ("display_name", "description", "tags", "environment_variables"):
            builder.put(data, where, path, keyword.value, keyword.span)
    _bind_outputs(builder, step, data, where, bound_outputs)
    return data


def _bind_outputs(builder: Builder, step: Sdk, data: dict, where: tuple, bound_outputs: dict[str, str]) -> None:
    """A step's outputs that the pipeline returns, bound to the pipeline's outputs."""
    name = step.parts.get("name")
    for expression, output in bound_outputs.items():
        prefix = f"parent.jobs.{name}.outputs."
        if expression.startswith(prefix):
            port = expression[len(prefix):]
            outputs = data.setdefault("outputs", {})
            builder.positions.setdefault(where + ("outputs",), _position(step.span, step.span))
            binding = "${{parent.outputs." + output + "}}"
            if isinstance(outputs.get(port), dict):
                outputs[port].setdefault("path", binding)
            else:
                outputs[port] = binding
            builder.positions.setdefault(where + ("outputs", port), _position(step.span, step.span))


def _sweep_step(builder: Builder, sweep: Sdk, data: dict, where: tuple) -> None:
    """A pipeline's sweep step: its trial the component's file, the step's inputs given a search
    space object its ``search_space``, the others its inputs."""
    _type(builder, data, where, "sweep", sweep.span)
    trial = sweep.parts["trial"]
    source = trial.get("source")
    if source is not None:
        builder.put(data, where, "trial", source, source.span)
    space: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    for name, keyword in sweep.bound.items():
        if isinstance(keyword.value, Sdk) and keyword.value.what in SEARCH_SPACE:
            builder.put(space, where + ("search_space",), name, keyword.value, keyword.span)
        else:
            builder.put(inputs, where + ("inputs",), name, keyword.value, keyword.span)
    for key, mapping in (("inputs", inputs), ("search_space", space)):
        if mapping:
            data[key] = mapping
            builder.positions[where + (key,)] = builder.positions[where + (key, next(iter(mapping)))]
    _sweep_settings(builder, sweep, data, where)


def _bound_input_setting(builder: Builder, data: dict, where: tuple, path: str, keyword: Keyword) -> None:
    """``step.inputs.x.mode = "download"``: the input's binding becomes ``{path: binding, mode: ...}``."""
    _, port, setting = path.split(".")
    inputs = data.setdefault("inputs", {})
    current = inputs.get(port)
    if not isinstance(current, dict):
        inputs[port] = {"path": current} if current is not None else {}
    builder.put(inputs[port], where + ("inputs", port), setting, keyword.value, keyword.span)


def _schedule(builder: Builder, schedule: Sdk, data: dict) -> None:
    for key in ("name", "display_name", "description", "tags", "properties"):
        keyword = schedule.keywords.get(key)
        if keyword is not None:
            builder.put(data, (), key, keyword.value, keyword.span)
    trigger = schedule.keywords.get("trigger")
    if trigger is not None:
        builder.put(data, (), "trigger", trigger.value, trigger.span)
    job = schedule.keywords.get("create_job")
    if job is not None:
        if isinstance(job.value, Sdk) and job.value.what in KINDS:
            # The job object is checked as a job of its own (the caller lints it): the schedule's
            # spec leaves it out, as the YAML would name a file or a registered job.
            builder.elsewhere.add(("create_job",))
        else:
            builder.put(data, (), "create_job", job.value, job.span)
