"""AML2xx planted defects (expressions)."""

from __future__ import annotations

import re

from .base import get, planter

COMMANDS = ("commandJob", "commandComponent")


def _command_holder(data: dict) -> dict | None:
    """The mapping that holds the command: the job/component itself, or a sweep's trial."""
    if isinstance(data.get("command"), str):
        return data
    trial = data.get("trial")
    if isinstance(trial, dict) and isinstance(trial.get("command"), str):
        return trial
    return None


@planter("AML202", "a command references an input under a misspelt name", COMMANDS + ("sweepJob",))
def misspelt_input(data: dict) -> dict | None:
    holder = _command_holder(data)
    if holder is None or "${{inputs." not in holder["command"]:
        return None
    holder["command"] = re.sub(r"\$\{\{inputs\.(\w+)\}\}", r"${{inputs.\1_typo}}", holder["command"], count=1)
    return data


@planter("AML203", "a command writes to an output that is not declared", COMMANDS)
def undeclared_output(data: dict) -> dict | None:
    holder = _command_holder(data)
    if holder is None:
        return None
    holder["command"] += " --extra-out ${{outputs.never_declared}}"
    return data


@planter("AML204", "a trial command uses a search-space entry that does not exist", ("sweepJob",))
def misspelt_search_space(data: dict) -> dict | None:
    holder = _command_holder(data)
    if holder is None or "${{search_space." not in holder["command"]:
        return None
    holder["command"] = holder["command"].replace("${{search_space.", "${{search_space.x", 1)
    return data


@planter("AML201", "an expression is left unclosed", COMMANDS + ("sweepJob",))
def unclosed(data: dict) -> dict | None:
    holder = _command_holder(data)
    if holder is None:
        return None
    holder["command"] += " --broken ${{inputs.oops"
    return data


@planter("AML206", "a command uses a pipeline binding", ("pipelineJob",))
def parent_in_command(data: dict) -> dict | None:
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict) and isinstance(node.get("command"), str):
            node["command"] += " --x ${{parent.inputs.anything}}"
            return data
    return None
