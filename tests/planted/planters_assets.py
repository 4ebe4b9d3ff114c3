"""AML8xx planted defects (asset references and local paths)."""

from __future__ import annotations

import re
from typing import Iterator

from .base import get, planter

RUNNABLE = ("commandJob", "sweepJob", "commandComponent", "pipelineJob", "pipelineComponent")
_SCRIPT = re.compile(r"\bpython3?\s+([\w./-]+)\.py\b")


def _runnables(data: dict) -> Iterator[dict]:
    """The job, its trial, a component, and each step with its inline component or trial."""
    candidates = [data, data.get("trial")]
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict):
            candidates += [node, node.get("component"), node.get("trial")]
    yield from (c for c in candidates if isinstance(c, dict))


def _steps(data: dict) -> Iterator[dict]:
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict):
            yield node


def _is_component(data: dict) -> bool:
    return "Component" in str(data.get("$schema", "")) or ("name" in data and "version" in data)


def _retarget(data: dict, environment: str, component: str) -> dict | None:
    for holder in _runnables(data):
        if isinstance(holder.get("environment"), str):
            holder["environment"] = environment
            return data
    for node in _steps(data):
        for key in ("component", "trial"):
            if isinstance(node.get(key), str):
                node[key] = component
                return data
    return None


@planter("AML801", "an environment or component reference is malformed", RUNNABLE)
def broken_reference(data: dict) -> dict | None:
    # A registry URI that stops after the name is valid (the default version, AML802's warning);
    # a misspelt '/version/' segment is not.
    return _retarget(data, "azureml://registries/azureml/environments/sklearn-1.5/version/3",
                     "azureml:train_model:")


@planter("AML802", "an environment or component is referenced without a version", RUNNABLE)
def unpinned_reference(data: dict) -> dict | None:
    return _retarget(data, "azureml:sklearn-train-env", "azureml:train_model")


@planter("AML803", "the code folder (or an include) points at a missing path", RUNNABLE)
def missing_path(data: dict) -> dict | None:
    for holder in _runnables(data):
        if isinstance(holder.get("code"), str) and not holder["code"].startswith("azureml:"):
            holder["code"] = "./no_such_folder"
            return data
    if _is_component(data) and data.get("type", "command") == "command":
        data["additional_includes"] = ["./no_such_folder"]
        return data
    return None


@planter("AML806", "a local data input points at data that is not there (yet)", RUNNABLE)
def missing_data(data: dict) -> dict | None:
    inputs = data.get("inputs")
    if not isinstance(inputs, dict) or _is_component(data):
        return None
    for value in inputs.values():
        if isinstance(value, dict) and isinstance(value.get("path"), str) \
                and value["path"].startswith(("./", "file:")):
            value["path"] = "./no_such_folder/data.csv"
            return data
    inputs["planted_data"] = {"type": "uri_file", "path": "./no_such_folder/data.csv"}
    return data


@planter("AML804", "the command starts a script that is not in the code folder", RUNNABLE)
def renamed_script(data: dict) -> dict | None:
    for holder in _runnables(data):
        command = holder.get("command")
        code = holder.get("code")
        if isinstance(command, str) and isinstance(code, str) and not code.startswith("azureml:") \
                and _SCRIPT.search(command) and not command.lstrip().startswith("cd "):
            holder["command"] = _SCRIPT.sub(r"python \1_renamed.py", command, count=1)
            return data
    return None
