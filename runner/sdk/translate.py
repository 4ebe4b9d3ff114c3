"""azure-ai-ml (SDK v2) objects as the CLI YAML ``az ml job create`` and ``az ml schedule create``
take: a command job (``command(...)``), a sweep (``.sweep(...)``), a pipeline (``@dsl.pipeline``),
a component (``load_component``, ``CommandComponent``, a ``@dsl.pipeline`` function) and a
``JobSchedule``, each written as the files a learner would have written by hand.

Faithful to what the service receives, not to the SDK's own ``dump()``: the SDK submits the REST
body its ``_to_rest_object()`` builds (``ml_client.jobs.create_or_update`` sends
``to_rest_job_object(job)``), while ``dump()`` is not CLI YAML and ``load_job`` refuses what it
writes. Where they part:

* a ``command(...)`` node dumps ``component:`` and no ``command``: here it is the command job it
  becomes on submission (``Command._to_job()``);
* a sweep's ``trial`` dumps the whole anonymous component (``inputs``, ``is_deterministic``,
  ``name``, ``type``, ``version``); the service receives its command with every searched
  ``${{inputs.x}}`` bound to ``${{search_space.x}}``, and the unswept values as the sweep's
  inputs;
* a local input path dumps as ``azureml:./data/`` and a remote one as ``azureml:https://...``;
  the REST body has the path (here made absolute) or the URI;
* a literal ``False`` dumps as ``0``; the REST body holds ``"False"``. Literals are written as
  the YAML scalar that loads back to the REST body's string;
* a ``JobSchedule`` dumps its job inline (``create_job:`` a whole pipeline); the CLI takes a job
  file: the job is written beside the schedule;
* a nested pipeline component is written to a file of its own, and so is every component a
  pipeline uses (once, whatever number of steps share it).

:func:`service_body` is that REST body as plain JSON, canonical enough to compare two objects;
:func:`check` loads the written YAML with azure-ai-ml's own ``load_job``/``load_schedule`` and
lists where its body differs from the original's (nothing, when the translation is faithful).

Private azure-ai-ml names used here (no public API gives the REST body or the mode names):
``to_rest_job_object``, the REST encoder ``SdkJSONEncoder``, the ``INPUT/OUTPUT_MOUNT_MAPPING_FROM_REST``
tables, ``Command._to_job``/``Sweep._to_job``/``Pipeline`` nodes' ``_to_rest_object``,
``Component._to_dict``/``_to_rest_object``, ``JobSchedule._to_rest_object``. They are pinned by
tests/runner/test_sdk_translate.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from azure.ai.ml import load_component, load_job
from azure.ai.ml._restclient.arm_ml_service._utils.model_base import SdkJSONEncoder
from azure.ai.ml.entities import (
    CommandComponent,
    CommandJob,
    Component,
    Environment,
    Job,
    JobSchedule,
    PipelineComponent,
    PipelineJob,
)
from azure.ai.ml.sweep import SweepJob
from azure.ai.ml.entities._builders import BaseNode, Command, Pipeline, Sweep
from azure.ai.ml.entities._job._input_output_helpers import (
    INPUT_MOUNT_MAPPING_FROM_REST,
    OUTPUT_MOUNT_MAPPING_FROM_REST,
)
from azure.ai.ml.entities._job.to_rest_functions import to_rest_job_object
from azure.ai.ml.entities._load_functions import load_schedule

from validator.paths import write_text_atomic

from ..errors import RunnerError

ANONYMOUS = "azureml_anonymous"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# An ARM id of a registered asset: .../components/<name>/versions/<version>
_ARM_ASSET = re.compile(r"/(components|environments|data|models)/([^/]+)/versions/([^/]+)$", re.IGNORECASE)
# The schema the CLI's docs put at the top of each kind of file.
SCHEMAS = {
    "command": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
    "sweep": "https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json",
    "pipeline": "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
    "commandComponent": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
    "pipelineComponent": "https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json",
    "schedule": "https://azuremlschemas.azureedge.net/latest/schedule.schema.json",
}
Note = Callable[[str], None]


class TranslationError(RunnerError):
    """An SDK object this translation does not turn into CLI YAML (a job type aml-run does not
    run, a step of such a type), said in one line."""


@dataclass
class Written:
    """What a translation wrote: the main file (job, schedule or component) and every file it
    references that the translation wrote too."""

    main: Path
    files: list[Path] = field(default_factory=list)
    kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)


# -- small helpers ---------------------------------------------------------------------------------

def plain(value: Any) -> Any:
    """OrderedDicts, tuples and str-enums as the dicts, lists and strings YAML writes."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def literal(text: Any) -> Any:
    """A literal as the REST body holds it (a string), written as the YAML scalar that loads back
    to that same string: ``"5"`` -> 5, ``"False"`` -> false, ``"0.1"`` -> 0.1; anything else stays
    a string (``"1e-3"``, ``"007"``, ``"false"``)."""
    if not isinstance(text, str):
        return text
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(loaded, (bool, int, float)) and str(loaded) == text:
        return loaded
    return text


def is_local(path: str) -> bool:
    return not _SCHEME.match(path) and not path.startswith("${{")


def absolute(path: str, base: str | os.PathLike[str]) -> str:
    """A local path made absolute against ``base`` (where the SDK reads it from), keeping a
    trailing slash; anything with a scheme (``https:``, ``azureml:``...) as it is."""
    if not is_local(path):
        return path
    local = path[len("file:"):] if path.startswith("file:") else path
    resolved = os.path.normpath(os.path.join(os.fspath(base), os.path.expanduser(local)))
    return resolved + ("/" if local.endswith("/") and not resolved.endswith("/") else "")


def _mode(value: Any, table: Mapping[Any, Any]) -> str | None:
    if value is None:
        return None
    for rest, yaml_name in table.items():
        if str(rest) == str(value) or getattr(rest, "value", None) == value:
            return str(getattr(yaml_name, "value", yaml_name))
    return str(value)


def _pick(rest: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if rest.get(name) is not None:
            return rest[name]
    return None


def rest_input(rest: Mapping[str, Any], base: str) -> Any:
    """One input of a REST body (a job's camelCase or a node's snake_case) as YAML."""
    kind = _pick(rest, "jobInputType", "job_input_type")
    if kind == "literal" or (kind is None and "value" in rest):
        value = literal(rest.get("value"))
        mode = _mode(_pick(rest, "mode"), INPUT_MOUNT_MAPPING_FROM_REST)
        return {"path": value, "mode": mode} if mode else value
    written: dict[str, Any] = {"type": str(kind), **_where(rest, base, INPUT_MOUNT_MAPPING_FROM_REST)}
    for rest_name, yaml_name in (("pathOnCompute", "path_on_compute"), ("path_on_compute", "path_on_compute"),
                                 ("description", "description")):
        if rest.get(rest_name) is not None:
            written[yaml_name] = rest[rest_name]
    return written


def rest_output(rest: Mapping[str, Any], base: str) -> Any:
    """One output of a REST body as YAML: a binding (``${{parent.outputs.x}}``) or a mapping."""
    if _pick(rest, "type") == "literal" or ("value" in rest and not _pick(rest, "jobOutputType", "job_output_type")):
        mode = _mode(_pick(rest, "mode"), OUTPUT_MOUNT_MAPPING_FROM_REST)
        return {"path": rest.get("value"), "mode": mode} if mode else rest.get("value")
    written: dict[str, Any] = {}
    kind = _pick(rest, "jobOutputType", "job_output_type")
    if kind is not None:
        written["type"] = str(kind)
    written.update(_where(rest, base, OUTPUT_MOUNT_MAPPING_FROM_REST))
    for rest_names, yaml_name in ((("assetName", "name"), "name"), (("assetVersion", "version"), "version"),
                                  (("description",), "description"),
                                  (("pathOnCompute", "path_on_compute"), "path_on_compute")):
        value = _pick(rest, *rest_names)
        if value is not None:
            written[yaml_name] = value
    return written


def _where(rest: Mapping[str, Any], base: str, modes: Mapping[Any, Any]) -> dict[str, Any]:
    """An input's or output's ``path`` (its REST ``uri``, made absolute) and ``mode``, those it has."""
    written: dict[str, Any] = {}
    uri = _pick(rest, "uri")
    if uri is not None:
        written["path"] = absolute(str(uri), base)
    mode = _mode(_pick(rest, "mode"), modes)
    if mode:
        written["mode"] = mode
    return written


def _compute(value: Any) -> Any:
    """A compute as the CLI writes it: ``azureml:<name>``; a binding or a full id as it is."""
    if isinstance(value, str) and value and not value.startswith(("azureml:", "${{", "/")) and value not in (
            "local", "serverless"):
        return f"azureml:{value}"
    return value


_POLICY_TYPES = {"Bandit": "bandit", "MedianStopping": "median_stopping",
                 "TruncationSelection": "truncation_selection"}


def early_termination(rest: Mapping[str, Any]) -> dict[str, Any]:
    """An early-termination policy from its REST body (camelCase on a job, snake_case on a node),
    only the settings the body holds: the dump adds ``slack_amount: 0`` to a bandit given a
    slack factor, which the service would read as a second, conflicting setting."""
    written: dict[str, Any] = {}
    kind = _pick(rest, "policyType", "policy_type")
    written["type"] = _POLICY_TYPES.get(str(kind), str(kind).lower())
    for rest_names, yaml_name in ((("slackFactor", "slack_factor"), "slack_factor"),
                                  (("slackAmount", "slack_amount"), "slack_amount"),
                                  (("evaluationInterval", "evaluation_interval"), "evaluation_interval"),
                                  (("delayEvaluation", "delay_evaluation"), "delay_evaluation"),
                                  (("truncationPercentage", "truncation_percentage"), "truncation_percentage")):
        value = _pick(rest, *rest_names)
        if value is not None:
            written[yaml_name] = value
    return written


def search_space(space: Mapping[str, Any], dumped: Mapping[str, Any], note: Note) -> dict[str, Any]:
    """A search space from its dump, a choice's values from the entity itself: the dump writes
    ``Choice([True, False])`` as ``[1, 0]``. CLI YAML takes no boolean in a choice (azure-ai-ml's
    loader refuses one), so a boolean is written as the text the command receives, ``"True"``,
    and said."""
    written = {}
    for name, distribution in space.items():
        entry = dict(dumped.get(name) or plain(distribution._to_dict()))
        values = getattr(distribution, "values", None)
        if entry.get("type") == "choice" and isinstance(values, (list, tuple)) and not any(
                hasattr(value, "_to_dict") or isinstance(value, Mapping) for value in values):
            entry["values"] = [str(value) if isinstance(value, bool) else value for value in values]
            if any(isinstance(value, bool) for value in values):
                note(f"search_space.{name}: Choice({list(values)}) written as {entry['values']}: CLI YAML takes no "
                     "boolean in a choice; the trial's command receives the same text")
        written[name] = entry
    return written


def _pruned(data: Mapping[str, Any]) -> dict[str, Any]:
    """A dump without its empty keys (``tags: {}``, ``properties: {}``): the service reads an
    empty value and no value alike."""
    return {key: value for key, value in data.items() if value not in (None, {}, [])}


def _rest_json(value: Any) -> Any:
    """A REST model as plain JSON, the entities it may still hold (an unresolved component or
    environment) as they are encoded for :func:`service_body`."""
    return _encode(value, os.getcwd())


def _base(entity: Any) -> str:
    return os.fspath(getattr(entity, "base_path", None) or os.getcwd())


def _reference(kind: str, value: Any) -> str | None:
    """``azureml:name:version`` for a registered asset's id (an ARM id, or already a reference)."""
    if not isinstance(value, str):
        return None
    found = _ARM_ASSET.search(value)
    if found:
        return f"azureml:{found.group(2)}:{found.group(3)}"
    if value.startswith("azureml:"):
        return value
    return None


def _safe_name(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "component"
    return cleaned[:80]


# -- the writer ------------------------------------------------------------------------------------

class Writer:
    """Writes one job (or schedule, or component) and what it references into ``folder``:
    ``job.yml`` (or ``schedule.yml``), ``components/<name>.yml`` once per component object,
    ``environments/<name>.yml`` for an inline environment's conda file."""

    def __init__(self, folder: Path, note: Note | None = None) -> None:
        self.folder = folder
        self.note = note or (lambda _message: None)
        self.files: list[Path] = []
        self._components: dict[int, str] = {}
        self._by_content: dict[str, str] = {}
        self._names: set[str] = set()

    # files

    def _write(self, relative: str, data: Mapping[str, Any], header: str = "") -> Path:
        path = self.folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, header + yaml.safe_dump(plain(data), sort_keys=False, allow_unicode=True, width=100))
        if path not in self.files:
            self.files.append(path)
        return path

    def _unique(self, stem: str) -> str:
        stem = _safe_name(stem)
        candidate, n = stem, 1
        while candidate in self._names:
            n += 1
            candidate = f"{stem}_{n}"
        self._names.add(candidate)
        return candidate

    # environments and code

    def environment(self, value: Any, base: str) -> Any:
        """An environment as a job or component names it: a reference as it is (``azureml:``
        added to a bare registered name), an inline Environment as a mapping whose conda file
        is written beside."""
        if value is None:
            return None
        if isinstance(value, Environment):
            if value.id:
                return _reference("environments", value.id) or f"azureml:{value.name}:{value.version}"
            dumped = plain(value._to_dict())
            written: dict[str, Any] = {}
            for key in ("image", "description", "os_type", "inference_config"):
                if dumped.get(key) is not None:
                    written[key] = dumped[key]
            if isinstance(dumped.get("conda_file"), Mapping):
                digest = hashlib.sha256(json.dumps(dumped["conda_file"], sort_keys=True).encode()).hexdigest()[:12]
                path = self._write(f"environments/conda-{digest}.yml", dumped["conda_file"])
                written["conda_file"] = str(path)
            elif isinstance(dumped.get("conda_file"), str):
                written["conda_file"] = absolute(dumped["conda_file"], base)
            build = getattr(value, "build", None)
            if build is not None:
                written["build"] = {"path": absolute(str(build.path), base)}
                if getattr(build, "dockerfile_path", None):
                    written["build"]["dockerfile_path"] = build.dockerfile_path
            return written
        text = str(value)
        if text.startswith(("azureml:", "azureml://")) or "/" in text:
            return _reference("environments", text) or text
        return f"azureml:{text}"

    def code(self, value: Any, base: str) -> Any:
        if value is None:
            return None
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else str(value)
        return _reference("code", text) or absolute(text, base)

    # components

    def component(self, component: Any) -> str:
        """A pipeline step's component: ``azureml:name:version`` when it is registered (it has an
        id), else a file of its own under components/ (written once per component object)."""
        if isinstance(component, str):
            # A component named by reference (a loaded YAML's ``azureml:name:version`` arrives
            # as ``name:version``): a registered one.
            return _reference("components", component) or f"azureml:{component}"
        if getattr(component, "id", None):
            return _reference("components", component.id) or f"azureml:{component.name}:{component.version}"
        known = self._components.get(id(component))
        if known is not None:
            return known
        name = component.name if component.name and component.name != ANONYMOUS else (
            component.display_name or "component")
        if isinstance(component, PipelineComponent):
            data = self.pipeline_component(component, Path("components"))
            kind = "pipelineComponent"
        elif isinstance(component, CommandComponent):
            data = self.command_component(component)
            kind = "commandComponent"
        else:
            raise TranslationError(f"a {type(component).__name__} ({getattr(component, 'type', '?')} component) "
                                   "is not a command or pipeline component; aml-run runs those")
        data = {"$schema": SCHEMAS[kind], **data}
        # A @dsl.pipeline function called twice builds two equal component objects: one file.
        content = json.dumps(plain(data), sort_keys=True, default=str)
        relative = self._by_content.get(content)
        if relative is None:
            relative = f"components/{self._unique(name)}.yml"
            self._by_content[content] = relative
            self._write(relative, data)
        self._components[id(component)] = relative
        return relative

    def command_component(self, component: CommandComponent) -> dict[str, Any]:
        dumped = plain(component._to_dict())
        base = _base(component)
        data: dict[str, Any] = {}
        for key, value in dumped.items():
            if key in ("$schema", "_source"):
                continue
            if key in ("name", "version") and (component.name in (None, ANONYMOUS)):
                continue  # anonymous: the service names it by its content
            data[key] = value
        data["type"] = "command"
        if "code" in data:
            data["code"] = self.code(component.code, base)
        if component.environment is not None:
            data["environment"] = self.environment(component.environment, base)
        if "inputs" in data:
            data["inputs"] = {key: _component_port(port) for key, port in data["inputs"].items()}
        return data

    def pipeline_component(self, component: PipelineComponent, here: Path) -> dict[str, Any]:
        dumped = plain(component._to_dict())
        data: dict[str, Any] = {}
        for key in ("name", "version", "display_name", "description", "tags", "is_deterministic"):
            if dumped.get(key) is not None and not (key in ("name", "version") and component.name in (None, ANONYMOUS)):
                data[key] = dumped[key]
        data["type"] = "pipeline"
        if dumped.get("inputs"):
            data["inputs"] = {key: _component_port(port) for key, port in dumped["inputs"].items()}
        if dumped.get("outputs"):
            data["outputs"] = dumped["outputs"]
        data["jobs"] = {name: self.node(node, relative_to=here) for name, node in component.jobs.items()}
        return data

    # nodes

    def node(self, node: Any, relative_to: Path = Path(".")) -> dict[str, Any]:
        """A pipeline step, from the node's dump (its settings) with its inputs and outputs from
        the node's REST body and its component written to a file."""
        if not isinstance(node, (Command, Sweep, Pipeline)):
            kind = getattr(node, "type", type(node).__name__)
            raise TranslationError(f"pipeline step {getattr(node, 'name', '?')!r} is a {kind} step; aml-run runs "
                                   "command, sweep and pipeline steps")
        rest = _rest_json(node._to_rest_object())
        dumped = plain(node._to_dict())
        base = _base(node)
        data: dict[str, Any] = {}
        # What the node itself says (its name, display name, tags, compute) is in its REST body;
        # its run settings (resources, distribution, limits, search space...) dump as CLI YAML.
        for key, value in dumped.items():
            if key in ("component", "trial", "inputs", "outputs", "_source", "name", "display_name", "tags",
                       "properties", "comment", "compute", "early_termination"):
                continue
            data[key] = value
        for rest_key, yaml_key in (("display_name", "display_name"), ("tags", "tags"), ("properties", "properties"),
                                   ("comment", "comment"), ("computeId", "compute")):
            value = rest.get(rest_key)
            if value not in (None, {}, ""):
                data[yaml_key] = _compute(value) if yaml_key == "compute" else value
        if rest.get("early_termination"):
            data["early_termination"] = early_termination(rest["early_termination"])
        if isinstance(node, Sweep) and node.search_space:
            data["search_space"] = search_space(node.search_space, data.get("search_space") or {}, self.note)
        reference = self.component(node.trial if isinstance(node, Sweep) else node._component)
        if not reference.startswith("azureml:"):
            reference = os.path.relpath(self.folder / reference, self.folder / relative_to)
            reference = reference if reference.startswith(".") else f"./{reference}"
        data["trial" if isinstance(node, Sweep) else "component"] = reference
        inputs = {key: rest_input(value, base) for key, value in (rest.get("inputs") or {}).items()}
        outputs = {key: rest_output(value, base) for key, value in (rest.get("outputs") or {}).items()}
        if inputs:
            data["inputs"] = inputs
        if outputs:
            data["outputs"] = outputs
        if isinstance(node, Command) and node.environment is not None and "environment" in dumped:
            data["environment"] = self.environment(node.environment, base)
        return _pruned(data)

    # jobs

    def job(self, job: Any, name: str | None = None, experiment_name: str | None = None) -> dict[str, Any]:
        """The CLI YAML of a job object, as its REST body says the service receives it."""
        if isinstance(job, Command):
            job = job._to_job()
        elif isinstance(job, Sweep):
            job = job._to_job()
        elif isinstance(job, Pipeline):
            job = job._to_job()
        if isinstance(job, CommandJob):
            data = self.command_job(job)
        elif isinstance(job, SweepJob):
            data = self.sweep_job(job)
        elif isinstance(job, PipelineJob):
            data = self.pipeline_job(job)
        else:
            raise TranslationError(f"a {type(job).__name__} ({getattr(job, 'type', '?')} job) is not a job aml-run "
                                   "runs: it runs command, sweep and pipeline jobs")
        rest = to_rest_job_object(job)
        # What generate_defaults fills in on submission, written out: the experiment is the
        # current folder's name unless the job or the call names one.
        data["experiment_name"] = experiment_name or job.experiment_name or rest.properties.experiment_name
        if name:
            data["name"] = name
        return data

    def _io(self, job: Job, data: dict[str, Any]) -> None:
        rest = _rest_json(to_rest_job_object(job).properties)
        base = _base(job)
        data.pop("inputs", None)
        data.pop("outputs", None)
        inputs = {key: rest_input(value, base) for key, value in (rest.get("inputs") or {}).items()}
        outputs = {key: rest_output(value, base) for key, value in (rest.get("outputs") or {}).items()}
        if inputs:
            data["inputs"] = inputs
        if outputs:
            data["outputs"] = outputs

    def command_job(self, job: CommandJob) -> dict[str, Any]:
        dumped = plain(job._to_dict())
        base = _base(job)
        data = {key: value for key, value in dumped.items()
                if key not in ("parameters", "status", "creation_context", "id", "name", "experiment_name")}
        data["type"] = "command"
        if job.code is not None:
            data["code"] = self.code(job.code, base)
        if job.environment is not None:
            data["environment"] = self.environment(job.environment, base)
        self._io(job, data)
        return {"$schema": SCHEMAS["command"], **_pruned(data)}

    def sweep_job(self, job: SweepJob) -> dict[str, Any]:
        dumped = plain(job._to_dict())
        base = _base(job)
        data = {key: value for key, value in dumped.items()
                if key not in ("trial", "status", "creation_context", "id", "name", "experiment_name")}
        data["type"] = "sweep"
        trial = job.trial
        rest_trial = _rest_json(to_rest_job_object(job).properties).get("trial") or {}
        if not isinstance(trial, CommandComponent):
            raise TranslationError("a sweep's trial must be a command; this one is a "
                                   f"{type(trial).__name__}")
        written: dict[str, Any] = {"command": rest_trial.get("command", trial.command)}
        if trial.code is not None:
            written["code"] = self.code(trial.code, _base(trial))
        if trial.environment is not None:
            written["environment"] = self.environment(trial.environment, _base(trial))
        trial_dump = plain(trial._to_dict())
        for key in ("environment_variables", "distribution", "resources"):
            if trial_dump.get(key):
                written[key] = trial_dump[key]
        data["trial"] = written
        if job.search_space:
            data["search_space"] = search_space(job.search_space, data.get("search_space") or {}, self.note)
        rest = _rest_json(to_rest_job_object(job).properties)
        if rest.get("earlyTermination"):
            data["early_termination"] = early_termination(rest["earlyTermination"])
        else:
            data.pop("early_termination", None)
        self._io(job, data)
        return {"$schema": SCHEMAS["sweep"], **_pruned(data)}

    def pipeline_job(self, job: PipelineJob) -> dict[str, Any]:
        dumped = plain(job._to_dict())
        data = {key: value for key, value in dumped.items()
                if key not in ("jobs", "status", "creation_context", "id", "name", "experiment_name", "component")}
        data["type"] = "pipeline"
        data["jobs"] = {name: self.node(node) for name, node in job.jobs.items()}
        if isinstance(job.component, str) or getattr(job.component, "id", None):
            data["component"] = self.component(job.component)
        self._io(job, data)
        return {"$schema": SCHEMAS["pipeline"], **_pruned(data)}


def _component_port(port: Any) -> Any:
    """A component input as the dump gives it, its default typed (the dump writes every default
    as a string, ``'False'``; the REST body holds the same string whichever the YAML gives)."""
    if not isinstance(port, Mapping):
        return port
    written = dict(port)
    if "default" in written and isinstance(written["default"], str):
        kind = written.get("type")
        value = literal(written["default"])
        if (kind == "boolean" and isinstance(value, bool)) or (kind == "integer" and type(value) is int) or (
                kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool)):
            written["default"] = value
    return written


# -- the public entry points -----------------------------------------------------------------------

def write_job(job: Any, folder: Path, name: str | None = None, experiment_name: str | None = None,
              note: Note | None = None) -> Written:
    """Write ``job`` as ``folder/job.yml`` (and its components, environments) and return what was
    written."""
    writer = Writer(folder, note)
    data = writer.job(job, name=name, experiment_name=experiment_name)
    main = writer._write("job.yml", data, header=_HEADER)
    return Written(main, writer.files, str(data.get("type")), data)


def write_component(component: Any, folder: Path, note: Note | None = None) -> Written:
    """Write a component (a loaded or built one, or a ``@dsl.pipeline`` function) as
    ``folder/component.yml``, with the components it uses beside it."""
    component = as_component(component)
    writer = Writer(folder, note)
    if isinstance(component, PipelineComponent):
        writer._names.add("component")
        data = {"$schema": SCHEMAS["pipelineComponent"], **writer.pipeline_component(component, Path("."))}
    elif isinstance(component, CommandComponent):
        data = {"$schema": SCHEMAS["commandComponent"], **writer.command_component(component)}
    else:
        raise TranslationError(f"a {type(component).__name__} is not a command or pipeline component")
    main = writer._write("component.yml", data, header=_HEADER)
    return Written(main, writer.files, "component", data)


def write_schedule(schedule: JobSchedule, folder: Path, note: Note | None = None) -> Written:
    """Write a JobSchedule as ``folder/schedule.yml``, its job as ``folder/job.yml`` (the CLI's
    ``create_job`` names a job file)."""
    writer = Writer(folder, note)
    create_job = schedule.create_job
    if isinstance(create_job, str):
        raise TranslationError(f"schedule {schedule.name}: create_job {create_job!r} is a job in the service's "
                               "workspace; aml-run schedules a job it has the definition of")
    job_data = writer.job(create_job)
    # The service gives a scheduled job no experiment of its own choosing: the schedule's
    # REST body has none, and aml-run names it after the schedule, as the service does.
    job_data.pop("experiment_name", None)
    job_data.pop("name", None)
    writer._write("job.yml", job_data, header=_HEADER)
    dumped = plain(schedule._to_dict())
    data: dict[str, Any] = {"$schema": SCHEMAS["schedule"]}
    for key in ("name", "display_name", "description", "tags", "properties"):
        if dumped.get(key):
            data[key] = dumped[key]
    data["trigger"] = _trigger(dumped.get("trigger") or {})
    data["create_job"] = "./job.yml"
    if schedule.is_enabled is False:
        data["is_enabled"] = False
    main = writer._write("schedule.yml", data, header=_HEADER)
    return Written(main, writer.files, "schedule", data)


def _trigger(trigger: Mapping[str, Any]) -> dict[str, Any]:
    written = dict(trigger)
    for key in ("start_time", "end_time"):
        value = written.get(key)
        if isinstance(value, datetime):
            written[key] = value.isoformat()
        elif value is not None:
            try:
                written[key] = datetime.fromisoformat(str(value)).isoformat()
            except ValueError:
                written[key] = str(value)
    return written


def as_component(component: Any) -> Any:
    """A component function (``@dsl.pipeline``, mldesigner's ``@command_component``) as the
    component azure-ai-ml registers for it (its own ``_refine_component``); a component object as
    it is."""
    if is_component_function(component):
        from azure.ai.ml.operations._component_operations import _refine_component

        return _refine_component(component)
    return component


def is_component_function(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and bool(
        getattr(value, "_is_dsl_func", False) or getattr(value, "_is_mldesigner_component", False))


_HEADER = "# Written by aml-run from the SDK object the notebook or script submitted: the CLI YAML of what\n" \
          "# azure-ai-ml would send the service (https://learn.microsoft.com/azure/machine-learning/reference-yaml-overview).\n"


# -- the oracle: what the service would receive ----------------------------------------------------

_DROP_KEYS = {"_source", "client_component_hash", "$schema", "schema"}


def service_body(entity: Any) -> dict[str, Any]:
    """What azure-ai-ml would send the service for ``entity`` (a job, node, component or
    schedule), as plain JSON made canonical so that two objects that mean the same compare equal:
    local paths absolute (against the entity's own folder), ``azureml:`` prefixes and ARM ids of
    registered assets as ``name:version``, times as ISO 8601, and what names or records rather
    than runs dropped: a job's generated name (and the display name generated from it), the name
    and version of an unregistered component (the service registers a pipeline's components
    anonymously, named by a hash of their content), the ``_source`` a client records, and empty
    values."""
    if isinstance(entity, JobSchedule):
        body = _encode(entity._to_rest_object(), _base(entity)).get("properties", {})
        action = body.get("action") or {}
        if not isinstance(entity.create_job, str):
            # The job as any job's body (the schedule's envelope writes its components as YAML
            # text, relative to folders it no longer says); a scheduled job has no experiment.
            job = service_body(entity.create_job)
            job.pop("experimentName", None)
            action = {**action, "jobDefinition": job}
        return _canonical({**body, "action": action}, _base(entity))
    if isinstance(entity, Component) or is_component_function(entity):
        component = as_component(entity)
        return _canonical(_component_spec(component, anonymous=False), _base(component))
    body = _encode(to_rest_job_object(entity), _base(entity))
    properties = body.get("properties", {})
    if not getattr(entity, "display_name", None):
        properties.pop("displayName", None)  # generated on submission: the job's generated name
    return _canonical(properties, _base(entity))


def _component_spec(component: Any, anonymous: bool = True) -> dict[str, Any]:
    rest = component._to_rest_object()
    spec = dict(_encode(rest.properties.component_spec, _base(component)))
    if spec.get("code") and isinstance(spec["code"], str):
        spec["code"] = absolute(spec["code"], _base(component))
    if anonymous or spec.get("name") in (None, ANONYMOUS):
        spec.pop("name", None)
        spec.pop("version", None)
    return spec


def _encode(value: Any, base: str) -> Any:
    class Encoder(SdkJSONEncoder):
        def default(self, o: Any) -> Any:  # noqa: D401 - the JSONEncoder hook
            if isinstance(o, Component):
                if getattr(o, "id", None):
                    return _reference("components", o.id)
                return {"component": _canonical(_component_spec(o), _base(o))}
            if isinstance(o, Environment):
                if o.id:
                    return _reference("environments", o.id)
                return {"environment": _canonical(plain(o._to_dict()), _base(o))}
            if callable(getattr(o, "_data_binding", None)):
                return o._data_binding()  # a binding left in a node's attribute: ${{parent.inputs.x}}
            return super().default(o)

    return json.loads(json.dumps(value, cls=Encoder, exclude_readonly=True))


_PATH_KEYS = {"codeId", "code", "uri", "conda_file", "path"}
_REFERENCE_KEYS = {"computeId", "compute", "environmentId", "environment", "componentId", "component",
                   "default_compute", "defaultCompute"}
_TIME_KEYS = {"startTime", "endTime", "start_time", "end_time"}


def _canonical(value: Any, base: str, key: str = "") -> Any:
    if isinstance(value, Mapping):
        if key == "earlyTermination" and value.get("slackAmount") == 0 and value.get("slackFactor") is not None:
            # The CLI's loader always sends slackAmount 0 beside a slack factor: 0 is unset.
            value = {name: item for name, item in value.items() if name != "slackAmount"}
        if key == "trial" and isinstance(value.get("properties"), Mapping) and "componentSpec" in value["properties"]:
            # A sweep step's trial, sent as a component version: registered anonymously.
            spec = dict(value["properties"]["componentSpec"])
            spec.pop("name", None)
            spec.pop("version", None)
            return {"component": _canonical(spec, base)}
        if key == "trial" and set(value) == {"componentId"}:
            return _canonical(value["componentId"], base, "componentId")
        result = {}
        for name, item in value.items():
            if name in _DROP_KEYS:
                continue
            canonical = _canonical(item, base, name)
            if canonical in (None, {}, []):
                continue
            result[name] = canonical
        return result
    if isinstance(value, list):
        return [_canonical(item, base, key) for item in value]
    if isinstance(value, str):
        if key in _TIME_KEYS:
            try:
                return datetime.fromisoformat(value).isoformat()
            except ValueError:
                return value
        if key in _PATH_KEYS and is_local(value) and value and not value.startswith("azureml:"):
            return absolute(value, base).rstrip("/")
        if key in _REFERENCE_KEYS or key in _PATH_KEYS:
            found = _ARM_ASSET.search(value)
            if found:
                return f"{found.group(2)}:{found.group(3)}"
            if value.startswith("azureml:") and not value.startswith("azureml://"):
                return value[len("azureml:"):]
    return value


def differences(left: Any, right: Any, where: str = "") -> list[str]:
    """Where two service bodies differ, one line each (``path: left != right``); ``true`` and
    ``1`` differ (the dump's bug is to write one for the other)."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        found = []
        for key in sorted(set(left) | set(right)):
            found += differences(left.get(key), right.get(key), f"{where}.{key}" if where else str(key))
        return found
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        found = []
        for index, (a, b) in enumerate(zip(left, right)):
            found += differences(a, b, f"{where}[{index}]")
        return found
    if left != right or isinstance(left, bool) != isinstance(right, bool):
        return [f"{where}: {json.dumps(left, default=str)[:200]} != {json.dumps(right, default=str)[:200]}"]
    return []


def check(original: Any, written: Written) -> list[str]:
    """Load what was written with azure-ai-ml's own loader and compare its service body with the
    original's: the differences, none when the translation is faithful."""
    if written.kind == "schedule":
        loaded: Any = load_schedule(written.main)
    elif written.kind == "component":
        loaded = load_component(written.main)
    else:
        loaded = load_job(written.main)
    return differences(service_body(original), service_body(loaded))
