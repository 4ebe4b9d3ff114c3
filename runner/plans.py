"""Typed plans: what `job create` resolves for a job, written to its run folder's ``plan.json``
and read back by its supervisor (another process) and by every command that reports on it.

Every plan carries ``version`` (the shape's) and ``type`` (its executor's). A plan serialises
itself (:meth:`Plan.to_json`) and is read back by its class (:meth:`Plan.from_json`), which
refuses a plan of another version, or with fields it does not know, in one clear message rather
than letting a reader fail on a missing key later. Nested parts that are records of their own
(a planned input, the environment, the compute, a pipeline step's definition) stay mappings:
they are data the plan carries, documented where they are made (runner.inputs, runner.command,
runner.pipeline).

    Plan            the fields every job has (`job show` reads these for any type)
    ├── CommandPlan a command job, a sweep's trial, a pipeline's command step
    ├── SweepPlan   a sweep: its trial template (a CommandPlan), search space, limits, policy
    └── PipelinePlan a pipeline: its steps' definitions, their order and edges, settings
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import RunnerError

PLAN_VERSION = 1


@dataclass(kw_only=True)
class Plan:
    name: str
    type: ClassVar[str] = ""
    display_name: str
    experiment_name: str
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    spec: str
    overrides: list[str] = field(default_factory=list)
    command: str | None = None
    code: str | None = None
    environment: dict[str, Any]
    compute: dict[str, Any]
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    workspace: str
    tracking_uri: str
    # A child job's: its parent's name, and for a pipeline's step the step's name.
    parent: str | None = None
    step: str | None = None
    version: int = PLAN_VERSION

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["type"] = self.type
        for key, value in data.items():
            if isinstance(value, Plan):
                data[key] = value.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "plan.json") -> Plan:
        """The plan ``data`` holds, as ``cls`` (or the subclass its ``type`` names)."""
        if not isinstance(data, dict):
            raise RunnerError(f"{where} is not a plan (a JSON object)")
        kind = data.get("type")
        target = next((c for c in _CLASSES if c.type == kind), None)
        if target is None or not issubclass(target, cls):
            raise RunnerError(f"{where} plans a job of type {kind!r}, not a {cls.type or 'known'} job")
        version = data.get("version", PLAN_VERSION)  # plans written before versions were v1
        if version != PLAN_VERSION:
            raise RunnerError(f"{where} was written by another version of aml-run (plan version {version}, "
                              f"this one reads {PLAN_VERSION}): create the job again")
        known = {f.name for f in dataclasses.fields(target)}
        unknown = sorted(set(data) - known - {"type"})
        if unknown:
            raise RunnerError(f"{where} holds fields this aml-run does not know ({', '.join(unknown)}): "
                              "it was written by another version; create the job again")
        values = {key: value for key, value in data.items() if key != "type"}
        for f in dataclasses.fields(target):
            hint = target.nested.get(f.name)
            if hint is not None and isinstance(values.get(f.name), dict):
                values[f.name] = hint.from_json(values[f.name], f"{where} ({f.name})")
        try:
            return target(**values)
        except TypeError as error:
            raise RunnerError(f"{where} is not a whole plan ({error}): create the job again") from None

    # Fields that hold a plan of their own, by class (read back as that class).
    nested: ClassVar[dict[str, type[Plan]]] = {}

    def copy(self, **changes: Any) -> Plan:
        """A deep copy with ``changes``: a trial's plan from its sweep's template."""
        import copy

        duplicate = copy.deepcopy(self)
        for key, value in changes.items():
            setattr(duplicate, key, value)
        return duplicate


@dataclass(kw_only=True)
class CommandPlan(Plan):
    type: ClassVar[str] = "command"
    environment_variables: dict[str, str] = field(default_factory=dict)
    timeout: int | None = None
    # How the job's processes are laid out over nodes (runner.distributed), or None.
    distribution: dict[str, Any] | None = None
    job_tier: str | None = None
    # Seconds of running after which a spot job's node is taken (--preempt-after).
    preempt_after: list[float] = field(default_factory=list)
    # A sweep trial's hyperparameters.
    params: dict[str, Any] = field(default_factory=dict)
    # MLflow tags and params the run starts with (a child's parent run, a trial's parameters).
    mlflow_tags: dict[str, str] = field(default_factory=dict)
    mlflow_params: dict[str, str] | None = None
    # Values of references the command uses that are known before it runs (search_space.x).
    known_values: dict[str, str] = field(default_factory=dict)
    # The prefix under which inputs, outputs and parameters also reach the command's environment.
    values_prefix: str | None = None
    # What the spec asks for that this machine does not do (image, build, services, identity),
    # one line each, said once at Preparing.
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class SweepPlan(Plan):
    type: ClassVar[str] = "sweep"
    nested: ClassVar[dict[str, type[Plan]]] = {"trial": CommandPlan}
    trial: CommandPlan
    search_space: dict[str, Any]
    space_size: int | None = None
    sampling: dict[str, Any]
    objective: dict[str, Any]
    limits: dict[str, Any]
    limits_as_written: dict[str, Any] = field(default_factory=dict)
    early_termination: dict[str, Any] | None = None
    trial_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(kw_only=True)
class PipelinePlan(Plan):
    type: ClassVar[str] = "pipeline"
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    edges: list[list[str]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


# The plan classes from_json knows, found by their ``type``. A job type of its own adds its
# class with :func:`register_plan` (its executor's module does).
_CLASSES: list[type[Plan]] = [CommandPlan, SweepPlan, PipelinePlan]


def register_plan(cls: type[Plan]) -> type[Plan]:
    if cls not in _CLASSES:
        _CLASSES.append(cls)
    return cls
