"""AML530-AML546 planted defects (component definitions).

Each planter works on every component a fixture defines: the file itself for a command or
pipeline component, and inline `component:` / `trial:` mappings of pipeline steps."""

from __future__ import annotations

import re
from typing import Iterator

from .base import get, planter

COMPONENTS = ("commandComponent", "pipelineComponent")
DEFINITIONS = COMPONENTS + ("pipelineJob",)
PARAMETERS = ("integer", "number", "string", "boolean")


def _components(data: dict) -> Iterator[dict]:
    """The component mappings of a fixture: itself when it is a component, and inline steps."""
    if "component.schema" in str(data.get("$schema", "")).lower():
        yield data
    for node in (get(data, "jobs") or {}).values():
        for key in ("component", "trial"):
            inline = get(node, key)
            if isinstance(inline, dict):
                yield inline


def _command_components(data: dict) -> Iterator[dict]:
    for component in _components(data):
        if isinstance(component.get("command"), str):
            yield component


def _inputs(component: dict) -> dict:
    inputs = component.get("inputs")
    if not isinstance(inputs, dict):
        inputs = component["inputs"] = {}
    return inputs


def _typed(component: dict, *types: str) -> tuple[str, dict] | None:
    for name, port in _inputs(component).items():
        if isinstance(port, dict) and port.get("type") in types:
            return name, port
    return None


def _referenced_outside_blocks(command: str) -> list[str]:
    """Input names referenced in ``command`` outside any `$[[ ]]` block."""
    outside = re.sub(r"\$\[\[.*?\]\]", "", command, flags=re.S)
    return re.findall(r"\$\{\{\s*inputs\.(\w+)\s*\}\}", outside)


def _rename_input(component: dict, old: str, new: str) -> None:
    inputs = _inputs(component)
    component["inputs"] = {(new if k == old else k): v for k, v in inputs.items()}
    if isinstance(component.get("command"), str):
        component["command"] = re.sub(r"\$\{\{\s*inputs\." + re.escape(old) + r"\s*\}\}",
                                      "${{inputs." + new + "}}", component["command"])


@planter("AML530", "a component name written as a title (capitals and hyphens)", COMPONENTS)
def title_case_name(data: dict) -> dict | None:
    if not isinstance(data.get("name"), str):
        return None
    data["name"] = "-".join(part.capitalize() for part in data["name"].split("_"))
    if data["name"].islower():
        data["name"] = data["name"].upper()
    return data


@planter("AML531", "a component version written as an unquoted decimal number", COMPONENTS)
def float_version(data: dict) -> dict | None:
    if not isinstance(data.get("name"), str):
        return None
    data["version"] = 1.1
    return data


@planter("AML532", "a boolean or numeric default that is not of the input's type", DEFINITIONS)
def wrong_type_default(data: dict) -> dict | None:
    for component in _components(data):
        found = _typed(component, "boolean", "integer", "number")
        if found:
            found[1]["default"] = "maybe"
            for key in ("min", "max"):
                found[1].pop(key, None)
        else:
            _inputs(component)["use_cache"] = {"type": "boolean", "default": "maybe"}
        return data
    return None


@planter("AML533", "an input whose min is greater than its max", DEFINITIONS)
def min_above_max(data: dict) -> dict | None:
    for component in _components(data):
        found = _typed(component, "integer", "number")
        if found:
            port = found[1]
        else:
            port = _inputs(component)["batch_size"] = {"type": "integer"}
        port.pop("default", None)
        port["min"], port["max"] = 100, 10
        return data
    return None


@planter("AML534", "an input default outside its min/max", DEFINITIONS)
def default_out_of_range(data: dict) -> dict | None:
    for component in _components(data):
        found = _typed(component, "integer", "number")
        if found:
            port = found[1]
        else:
            port = _inputs(component)["batch_size"] = {"type": "integer"}
        port["min"], port["max"], port["default"] = 0, 1, 5
        return data
    return None


@planter("AML535", "a string default missing from its enum", DEFINITIONS)
def default_not_in_enum(data: dict) -> dict | None:
    for component in _components(data):
        found = _typed(component, "string")
        if found:
            port = found[1]
        else:
            port = _inputs(component)["solver"] = {"type": "string"}
        port["enum"], port["default"] = ["sgd", "adam"], "lbfgs"
        return data
    return None


@planter("AML536", "a data input with a default", DEFINITIONS)
def data_input_default(data: dict) -> dict | None:
    for component in _components(data):
        found = _typed(component, "uri_folder", "uri_file", "mltable", "mlflow_model", "custom_model")
        if found:
            found[1]["default"] = "azureml:reference-data:1"
            return data
    return None


@planter("AML537", "a required input made optional but left outside $[[ ]]", DEFINITIONS)
def optional_outside_block(data: dict) -> dict | None:
    for component in _command_components(data):
        for name in _referenced_outside_blocks(component["command"]):
            port = _inputs(component).get(name)
            if isinstance(port, dict):
                port["optional"] = True
                port.pop("default", None)
                return data
    return None


@planter("AML538", "an optional parameter with a default left outside $[[ ]]", DEFINITIONS)
def optional_default_outside_block(data: dict) -> dict | None:
    for component in _command_components(data):
        for name in _referenced_outside_blocks(component["command"]):
            port = _inputs(component).get(name)
            if isinstance(port, dict) and port.get("type") in PARAMETERS and "default" in port:
                port["optional"] = True
                return data
    return None


@planter("AML539", "a required input moved into an optional block", DEFINITIONS)
def required_in_block(data: dict) -> dict | None:
    for component in _command_components(data):
        required = [n for n in _referenced_outside_blocks(component["command"])
                    if isinstance(_inputs(component).get(n), dict)
                    and _inputs(component)[n].get("optional") is not True]
        if not required:
            continue
        _inputs(component)["extra_note"] = {"type": "string", "optional": True}
        component["command"] += (f" $[[--note ${{{{inputs.extra_note}}}} "
                                 f"--again ${{{{inputs.{required[0]}}}}}]]")
        return data
    return None


@planter("AML540", "an optional block around a required input only", DEFINITIONS)
def block_without_optional(data: dict) -> dict | None:
    for component in _command_components(data):
        for name in _referenced_outside_blocks(component["command"]):
            port = _inputs(component).get(name)
            if isinstance(port, dict) and port.get("optional") is not True:
                component["command"] += f" $[[--again ${{{{inputs.{name}}}}}]]"
                return data
    return None


@planter("AML541", "an input name with a hyphen", DEFINITIONS)
def hyphen_input_name(data: dict) -> dict | None:
    for component in _components(data):
        for name in list(_inputs(component)):
            new = name.replace("_", "-") if "_" in name else name + "-in"
            _rename_input(component, name, new)
            return data
    return None


@planter("AML542", "an output with the same name as an input", DEFINITIONS)
def output_shares_input_name(data: dict) -> dict | None:
    for component in _components(data):
        for name in _inputs(component):
            outputs = component.get("outputs")
            if not isinstance(outputs, dict):
                outputs = component["outputs"] = {}
            outputs[name.upper()] = {"type": "uri_folder"}
            return data
    return None


@planter("AML543", "an input named 'path'", ("commandComponent", "pipelineJob"))
def reserved_name(data: dict) -> dict | None:
    for component in _command_components(data):
        for name in list(_inputs(component)):
            if "path" not in _inputs(component):
                _rename_input(component, name, "path")
                return data
    return None


@planter("AML544", "a command continued with a backslash", DEFINITIONS)
def backslash_continuation(data: dict) -> dict | None:
    for component in _command_components(data):
        command = component["command"]
        component["command"] = command.replace(" ", " \\\n  ", 1) if " " in command else command + " \\\n  --verbose"
        return data
    return None


@planter("AML545", "a declared input that the command never uses", DEFINITIONS)
def unused_input(data: dict) -> dict | None:
    for component in _command_components(data):
        _inputs(component)["unused_threshold"] = {"type": "number", "default": 0.5}
        return data
    return None


@planter("AML546", "an early-available output that is a data output", DEFINITIONS)
def early_available_data_output(data: dict) -> dict | None:
    for component in _components(data):
        outputs = component.get("outputs")
        if not isinstance(outputs, dict):
            outputs = component["outputs"] = {}
        outputs["best_model"] = {"type": "uri_folder", "early_available": True}
        return data
    return None
