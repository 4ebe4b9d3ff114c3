"""AML7xx planted defects (the training script): the planters change only the spec, so they
rename the primary metric, pass a flag the script does not define, or swap the script for an
inline `python -c` program with the defect."""

from __future__ import annotations

import re
from typing import Iterator

from .base import get, planter

SWEEPS = ("sweepJob", "pipelineJob", "pipelineComponent")
COMMANDS = ("commandJob", "sweepJob", "commandComponent", "pipelineJob", "pipelineComponent")
_SCRIPT = re.compile(r"\bpython3?\s+([\w./-]+\.py)")


def _objectives(data: dict) -> Iterator[dict]:
    """Objectives of the sweep (job) or of its sweep steps."""
    if isinstance(data.get("objective"), dict):
        yield data["objective"]
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict) and node.get("type") == "sweep" and isinstance(node.get("objective"), dict):
            yield node["objective"]


def _holders(data: dict) -> Iterator[dict]:
    """Mappings with a command and local code: the job, the trial, a component, inline steps."""
    candidates = [data, data.get("trial")]
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict):
            candidates += [node, node.get("component"), node.get("trial")]
    for holder in candidates:
        if isinstance(holder, dict) and isinstance(holder.get("command"), str) \
                and isinstance(holder.get("code"), str) and not holder["code"].startswith("azureml:"):
            yield holder


@planter("AML701", "the primary metric is renamed to a name the script never logs", SWEEPS)
def renamed_primary_metric(data: dict) -> dict | None:
    for objective in _objectives(data):
        if isinstance(objective.get("primary_metric"), str):
            objective["primary_metric"] = "best_" + objective["primary_metric"]
            return data
    return None


def _sweep_trial(data: dict) -> dict | None:
    trial = data.get("trial")
    if isinstance(trial, dict) and isinstance(trial.get("command"), str) and _SCRIPT.search(trial["command"]):
        return trial
    return None


@planter("AML702", "the trial script is replaced by one that only calls mlflow.autolog()", ("sweepJob",))
def autolog_only(data: dict) -> dict | None:
    trial = _sweep_trial(data)
    if trial is None:
        return None
    trial["command"] = _SCRIPT.sub('python -c "import mlflow; mlflow.autolog()"', trial["command"], count=1)
    return data


@planter("AML703", "the trial logs the primary metric once while a policy is set", ("sweepJob",))
def logged_once(data: dict) -> dict | None:
    trial = _sweep_trial(data)
    metric = get(data, "objective", "primary_metric")
    if trial is None or not isinstance(metric, str):
        return None
    code = f"import mlflow; mlflow.log_metric('{metric}', 0.5)"
    trial["command"] = _SCRIPT.sub(lambda _: f'python -c "{code}"', trial["command"], count=1)
    if not isinstance(data.get("early_termination"), dict):
        data["early_termination"] = {"type": "median_stopping", "evaluation_interval": 1, "delay_evaluation": 5}
    return data


@planter("AML704", "the command passes a flag that the script's parser does not define", COMMANDS)
def unknown_flag(data: dict) -> dict | None:
    for holder in _holders(data):
        if _SCRIPT.search(holder["command"]):
            holder["command"] = _SCRIPT.sub(r"\g<0> --no-such-option 1", holder["command"], count=1)
            return data
    return None
