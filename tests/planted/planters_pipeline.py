"""AML501-AML518 planted defects (pipelines: step names, bindings, the step graph, the
components steps run, compute)."""

from __future__ import annotations

import copy
import re
from typing import Any, Iterator

from .base import planter

PIPELINES = ("pipelineJob", "pipelineComponent")
BINDING = re.compile(r"^\$\{\{parent\.(inputs|outputs)\.(\w+)\}\}$")
STEP_BINDING = re.compile(r"^\$\{\{parent\.jobs\.(\w+)\.outputs\.(\w+)\}\}$")
# A pipeline job with a job-only `settings:` block, reachable from both fixture folders.
A_JOB_FILE = "../pipelineJob/inline_command_nodes.yml"
# A component file with errors of its own (a golden-test file of AML516).
A_BROKEN_COMPONENT = "../../../golden/AML516/components/prep_broken.yml"


def _steps(data: dict) -> Iterator[tuple[str, dict]]:
    jobs = data.get("jobs")
    if isinstance(jobs, dict):
        for name, node in jobs.items():
            if isinstance(node, dict):
                yield name, node


def _definition_key(node: dict) -> str:
    return "trial" if node.get("type") == "sweep" else "component"


def _local_file(node: dict) -> str | None:
    """The step's component (or trial) when it is a local file, readable offline."""
    value = node.get(_definition_key(node))
    if isinstance(value, str) and not value.startswith(("azureml:", "http")):
        return value
    return None


def _readable(node: dict) -> bool:
    """The step's ports can be known offline: a local component, an inline one, or an inline step."""
    value = node.get(_definition_key(node))
    return _local_file(node) is not None or isinstance(value, dict) or (value is None and "command" in node)


def _replace_in_strings(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replace_in_strings(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_in_strings(v, old, new) for v in value]
    return value


def _port_bindings(data: dict, section: str) -> Iterator[tuple[str, dict, str, str]]:
    """(step, node, port, binding text) for string values in the steps' `section`."""
    for name, node in _steps(data):
        ports = node.get(section)
        if isinstance(ports, dict):
            for port, value in ports.items():
                if isinstance(value, str):
                    yield name, node, port, value


@planter("AML501", "a step is renamed with a hyphen and a capital letter", PIPELINES)
def bad_step_name(data: dict) -> dict | None:
    for name, _node in _steps(data):
        jobs = data["jobs"]
        bad = name.replace("_", "-").capitalize() + "-Step"
        data["jobs"] = {(bad if k == name else k): v for k, v in jobs.items()}
        return _replace_in_strings(data, f"parent.jobs.{name}.", f"parent.jobs.{bad}.")
    return None


@planter("AML502", "a binding names a step that does not exist", PIPELINES)
def unknown_step(data: dict) -> dict | None:
    for _name, node, port, value in _port_bindings(data, "inputs"):
        match = STEP_BINDING.match(value)
        if match:
            node["inputs"][port] = value.replace(f".jobs.{match.group(1)}.", f".jobs.{match.group(1)}_old.")
            return data
    return None


@planter("AML503", "a binding names an output the producing step does not have", PIPELINES)
def unknown_step_port(data: dict) -> dict | None:
    steps = dict(_steps(data))
    for _name, node, port, value in _port_bindings(data, "inputs"):
        match = STEP_BINDING.match(value)
        if match and match.group(1) in steps and _readable(steps[match.group(1)]):
            node["inputs"][port] = value.replace(f".outputs.{match.group(2)}", f".outputs.{match.group(2)}_v2")
            return data
    return None


@planter("AML504", "a step's compute is bound to a pipeline input that is not declared", PIPELINES)
def undeclared_pipeline_input(data: dict) -> dict | None:
    for _name, node in _steps(data):
        node["compute"] = "${{parent.inputs.never_declared_compute}}"
        return data
    return None


@planter("AML505", "a step output is promoted to a misspelt pipeline output", PIPELINES)
def undeclared_pipeline_output(data: dict) -> dict | None:
    for _name, node, port, value in _port_bindings(data, "outputs"):
        match = BINDING.match(value)
        if match and match.group(1) == "outputs":
            node["outputs"][port] = "${{parent.outputs." + match.group(2) + "_typo}}"
            return data
    return None


@planter("AML506", "a step output is bound to a pipeline input", PIPELINES)
def output_bound_to_input(data: dict) -> dict | None:
    inputs = data.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        return None
    first_input = next(iter(inputs))
    for _name, node, port, value in _port_bindings(data, "outputs"):
        node["outputs"][port] = "${{parent.inputs." + str(first_input) + "}}"
        return data
    return None


@planter("AML507", "a step input uses the legacy `${{inputs.x}}` binding", PIPELINES)
def legacy_binding(data: dict) -> dict | None:
    for _name, node, port, value in _port_bindings(data, "inputs"):
        match = BINDING.match(value)
        if match and match.group(1) == "inputs":
            node["inputs"][port] = "${{inputs." + match.group(2) + "}}"
            return data
    return None


@planter("AML508", "a step is duplicated, so two steps promote to the same pipeline output", PIPELINES)
def shared_pipeline_output(data: dict) -> dict | None:
    for name, node, _port, value in _port_bindings(data, "outputs"):
        if BINDING.match(value):
            data["jobs"][f"{name}_copy"] = copy.deepcopy(node)
            return data
    return None


@planter("AML509", "two steps read each other's outputs", PIPELINES)
def two_step_cycle(data: dict) -> dict | None:
    steps = dict(_steps(data))
    for consumer, node, _port, value in _port_bindings(data, "inputs"):
        match = STEP_BINDING.match(value)
        if not match or match.group(1) not in steps:
            continue
        producer = steps[match.group(1)]
        inputs = producer.setdefault("inputs", {})
        if not isinstance(inputs, dict):
            return None
        key = next(iter(inputs), "feedback")
        inputs[key] = "${{parent.jobs." + consumer + ".outputs.anything}}"
        return data
    return None


@planter("AML509", "a step reads its own output", PIPELINES)
def self_reference(data: dict) -> dict | None:
    for name, node in _steps(data):
        inputs = node.get("inputs")
        if isinstance(inputs, dict) and inputs:
            inputs[next(iter(inputs))] = "${{parent.jobs." + name + ".outputs.result}}"
            return data
    return None


@planter("AML510", "a step's input fed by another step is removed", PIPELINES)
def missing_required_input(data: dict) -> dict | None:
    for _name, node, port, value in _port_bindings(data, "inputs"):
        if _local_file(node) and STEP_BINDING.match(value):
            del node["inputs"][port]
            return data
    return None


@planter("AML511", "a step sets an input its component does not declare", PIPELINES)
def undeclared_component_input(data: dict) -> dict | None:
    for _name, node in _steps(data):
        if _local_file(node) is None and not isinstance(node.get("component"), dict):
            continue
        inputs = node.setdefault("inputs", {})
        if isinstance(inputs, dict):
            inputs["learning_rte"] = 0.01
            return data
    return None


@planter("AML512", "a data pipeline input bound to a step is marked optional", PIPELINES)
def optional_to_required(data: dict) -> dict | None:
    inputs = data.get("inputs")
    if not isinstance(inputs, dict):
        return None
    for _name, node, _port, value in _port_bindings(data, "inputs"):
        match = BINDING.match(value)
        if not (_local_file(node) and match and match.group(1) == "inputs"):
            continue
        declared = inputs.get(match.group(2))
        if (isinstance(declared, dict) and str(declared.get("type", "uri_folder")).startswith("uri_")
                and declared.get("optional") is not True):
            declared["optional"] = True
            return data
    return None


@planter("AML513", "a command step is given `type: pipeline`", PIPELINES)
def step_type_mismatch(data: dict) -> dict | None:
    for _name, node in _steps(data):
        if node.get("type", "command") == "command" and _local_file(node):
            node["type"] = "pipeline"
            return data
    return None


@planter("AML514", "a step points at a pipeline job file instead of a component", PIPELINES)
def job_as_component(data: dict) -> dict | None:
    for _name, node in _steps(data):
        if _local_file(node) and node.get("type", "command") in ("command", "pipeline"):
            node["component"] = A_JOB_FILE
            node["type"] = "pipeline"
            return data
    return None


@planter("AML515", "a step's component path is misspelt", PIPELINES)
def missing_component_file(data: dict) -> dict | None:
    for _name, node in _steps(data):
        local = _local_file(node)
        if local:
            node[_definition_key(node)] = local.replace(".yml", "_missing.yml")
            return data
    return None


@planter("AML516", "a step points at a component file that has errors", PIPELINES)
def broken_component(data: dict) -> dict | None:
    for _name, node in _steps(data):
        if node.get("type", "command") == "command" and (_local_file(node) or "component" in node):
            node["component"] = A_BROKEN_COMPONENT
            return data
    return None


@planter("AML517", "every compute is removed from a pipeline job", ("pipelineJob",))
def no_compute(data: dict) -> dict | None:
    data.pop("compute", None)
    settings = data.get("settings")
    if isinstance(settings, dict):
        settings.pop("default_compute", None)
        if not settings:
            del data["settings"]
    for _name, node in _steps(data):
        node.pop("compute", None)
    return data


@planter("AML518", "a binding says `parent.input` instead of `parent.inputs`", PIPELINES)
def malformed_binding(data: dict) -> dict | None:
    for _name, node, port, value in _port_bindings(data, "inputs"):
        if value.startswith("${{parent.inputs."):
            node["inputs"][port] = value.replace("${{parent.inputs.", "${{parent.input.", 1)
            return data
    return None



@planter("AML519", "a step gives a typed component input a literal of another type", PIPELINES)
def literal_of_wrong_type(data: dict) -> dict | None:
    """Add a step whose inline component declares an integer input, and pass it a word."""
    jobs = data.get("jobs")
    if not isinstance(jobs, dict):
        return None
    jobs["zz_planted"] = {
        "type": "command",
        "inputs": {"epochs": "many"},
        "component": {
            "inputs": {"epochs": {"type": "integer", "default": 10}},
            "environment": "azureml:sklearn-train:2",
            "command": "python -c 'print(1)' --epochs ${{inputs.epochs}}",
        },
    }
    return data
