"""AML2xx planted defects (inputs and outputs: names, use, values, modes, paths)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .base import VALID, get, planter

JOBS = ("commandJob", "sweepJob", "pipelineJob")


def _section(holder: dict, key: str) -> dict | None:
    """holder[key] as a mapping, creating it when absent; None when it is something else."""
    value = holder.setdefault(key, {})
    return value if isinstance(value, dict) else None


def _command_holder(data: dict) -> dict | None:
    if isinstance(data.get("command"), str):
        return data
    trial = data.get("trial")
    if isinstance(trial, dict) and isinstance(trial.get("command"), str):
        return trial
    return None


def _inline_step(data: dict) -> dict | None:
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict) and isinstance(node.get("command"), str) and "component" not in node:
            return node
    return None


def _port_owner(data: dict) -> dict | None:
    """The mapping whose inputs/outputs a command uses: the job itself, or an inline step."""
    if data.get("type") == "pipeline":
        return _inline_step(data)
    return data


@planter("AML207", "an input is named with a hyphen", JOBS)
def hyphenated_input(data: dict) -> dict | None:
    inputs = _section(data, "inputs")
    if inputs is None:
        return None
    inputs["learning-rate"] = 0.01
    return data


@planter("AML208", "a second input repeats a name in other case", JOBS)
def case_twin(data: dict) -> dict | None:
    inputs = data.get("inputs")
    if not isinstance(inputs, dict):
        return None
    for name, value in list(inputs.items()):
        if isinstance(name, str) and name.upper() != name:
            inputs[name.upper()] = value
            return data
    return None


@planter("AML209", "an input is declared but the command never uses it", JOBS)
def unused_input(data: dict) -> dict | None:
    owner = _port_owner(data)
    inputs = _section(owner, "inputs") if owner is not None else None
    if inputs is None:
        return None
    inputs["decision_threshold"] = 0.5
    return data


@planter("AML210", "an output is declared but the command never refers to it", JOBS)
def unused_output(data: dict) -> dict | None:
    owner = _port_owner(data)
    outputs = _section(owner, "outputs") if owner is not None else None
    if outputs is None:
        return None
    outputs["extra_report"] = {"type": "uri_folder"}
    return data


@planter("AML211", "a pipeline input is bound by no step", ("pipelineJob",))
def unbound_pipeline_input(data: dict) -> dict | None:
    if "jobs" not in data or "component" in data:
        return None
    inputs = _section(data, "inputs")
    if inputs is None:
        return None
    inputs["forgotten_max_rows"] = 5000
    return data


@planter("AML212", "a literal input's flag is wrapped in an optional block", JOBS)
def optional_block(data: dict) -> dict | None:
    owner = _port_owner(data)
    holder = _command_holder(owner) if owner is not None else None
    inputs = get(data, "inputs") if data.get("type") == "sweep" else get(owner, "inputs")
    if holder is None or not isinstance(inputs, dict):
        return None
    for name in re.findall(r"\$\{\{inputs\.(\w+)\}\}", holder["command"]):
        value = inputs.get(name)
        literal = value is not None and not isinstance(value, (dict, list))
        if literal and not (isinstance(value, str) and "${{" in value):
            holder["command"] += f" $[[--again ${{{{inputs.{name}}}}}]]"
            return data
    return None


@planter("AML213", "an environment variable is written as a bare YAML boolean", JOBS)
def boolean_environment_variable(data: dict) -> dict | None:
    if data.get("type") == "pipeline":
        holder = next((n for n in (get(data, "jobs") or {}).values() if isinstance(n, dict)), None)
    else:
        holder = _command_holder(data)
    variables = _section(holder, "environment_variables") if holder is not None else None
    if variables is None:
        return None
    variables["PLANTED_ENABLE_CACHE"] = True
    return data


@planter("AML214", "an output uses the undocumented mode `mount`", JOBS + ("commandComponent",))
def mount_output(data: dict) -> dict | None:
    outputs = _section(data, "outputs")
    if outputs is None:
        return None
    outputs["planted_output"] = {"type": "uri_folder", "mode": "mount"}
    return data


@planter("AML215", "a component output has the input mode `download`", ("commandComponent",))
def download_output(data: dict) -> dict | None:
    outputs = data.get("outputs")
    if not isinstance(outputs, dict):
        return None
    for port in outputs.values():
        if isinstance(port, dict) and port.get("type") in ("uri_folder", "uri_file", "mlflow_model",
                                                           "custom_model", "mltable"):
            port["mode"] = "download"
            return data
    return None


@planter("AML216", "an output sets a version without a name", JOBS)
def version_without_name(data: dict) -> dict | None:
    outputs = _section(data, "outputs")
    if outputs is None:
        return None
    outputs["versioned_output"] = {"type": "uri_folder", "version": "2"}
    return data


@planter("AML217", "an output path uses an input expression", JOBS)
def input_in_output_path(data: dict) -> dict | None:
    outputs = _section(data, "outputs")
    if outputs is None:
        return None
    outputs["routed_output"] = {
        "type": "uri_folder",
        "path": "azureml://datastores/workspaceblobstore/paths/${{inputs.region}}/",
    }
    return data


def _data_inputs(data: dict) -> list[dict]:
    holders = [data] + [n for n in (get(data, "jobs") or {}).values() if isinstance(n, dict)]
    return [port for holder in holders for port in (get(holder, "inputs") or {}).values()
            if isinstance(port, dict) and isinstance(port.get("path"), str) and "${{" not in port["path"]]


@planter("AML218", "a data input is read from Amazon S3", JOBS)
def s3_input(data: dict) -> dict | None:
    ports = _data_inputs(data)
    if not ports:
        return None
    ports[0]["path"] = "s3://planted-bucket/exports/train/"
    return data


@planter("AML219", "a uri_file input's path ends with a slash", JOBS)
def uri_file_folder_path(data: dict) -> dict | None:
    for port in _data_inputs(data):
        if port.get("type") == "uri_file" and "://" in port["path"]:
            port["path"] = port["path"].rstrip("/") + "/"
            return data
    inputs = _section(data, "inputs")
    if inputs is None:
        return None
    inputs["labels_file"] = {"type": "uri_file",
                             "path": "azureml://datastores/workspaceblobstore/paths/labels/"}
    return data


def _local_kind(path: str, folder: Path) -> str | None:
    if re.match(r"^[A-Za-z][\w+.-]+://", path) or path.startswith("azureml:"):
        return None
    target = folder / (path[len("file:"):] if path.startswith("file:") else path)
    return "folder" if target.is_dir() else "file" if target.is_file() else None


@planter("AML220", "a local uri_file input's type is flipped to uri_folder (or back)", JOBS)
def flipped_local_type(data: dict) -> dict | None:
    # Valid fixtures keep their data next to them, in <kind>/data/.
    for folder in (VALID / kind for kind in JOBS):
        for port in _data_inputs(data):
            kind = _local_kind(port["path"], folder)
            wanted: Any = {"file": "uri_folder", "folder": "uri_file"}.get(kind or "")
            if wanted and port.get("type", "uri_folder") != wanted:
                port["type"] = wanted
                return data
    return None
