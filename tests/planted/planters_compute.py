"""AML4xx planted defects (compute, resources, distribution, queue settings, limits)."""

from __future__ import annotations

from pathlib import Path

from validator import pycode
from validator.loader import Document
from validator.rules.compute import _writes_outputs_by_command

from .base import VALID, planter

JOBS = ("commandJob", "sweepJob")
PIPELINES = ("pipelineJob", "pipelineComponent")
ALL = ("commandJob", "sweepJob", "commandComponent") + PIPELINES


def _is_sweep(data: dict) -> bool:
    return data.get("type") == "sweep" or isinstance(data.get("trial"), dict)


def _is_pipeline(data: dict) -> bool:
    return data.get("type") == "pipeline" or "jobs" in data


def _step(data: dict) -> dict | None:
    """The first command step of a pipeline (None when there is none)."""
    jobs = data.get("jobs")
    if not isinstance(jobs, dict):
        return None
    for node in jobs.values():
        if isinstance(node, dict) and node.get("type") in (None, "command"):
            return node
    return None


def _runner(data: dict) -> dict | None:
    """The mapping whose resources and distribution describe the run: a command job or
    component itself, a sweep's trial, a pipeline's first command step."""
    if _is_pipeline(data):
        return _step(data)
    if _is_sweep(data):
        trial = data.get("trial")
        return trial if isinstance(trial, dict) else None
    return data


def _resources(holder: dict) -> dict:
    block = holder.get("resources")
    if not isinstance(block, dict):
        block = holder["resources"] = {}
    return block


@planter("AML401", "a job asks for zero nodes", ALL)
def zero_nodes(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    _resources(holder)["instance_count"] = 0
    return data


@planter("AML402", "elastic training whose maximum is below its start count", ALL)
def max_below_count(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    resources = _resources(holder)
    resources["instance_count"] = 3
    resources["max_instance_count"] = 2
    return data


@planter("AML403", "shared memory written as '16GB'", ALL)
def shm_with_gb(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    _resources(holder)["shm_size"] = "16GB"
    return data


@planter("AML404", "a pytorch distribution with zero processes per node", ALL)
def zero_processes(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    holder["distribution"] = {"type": "pytorch", "process_count_per_instance": 0}
    return data


@planter("AML405", "an mpi distribution without process_count_per_instance", ALL)
def mpi_without_count(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    holder["distribution"] = {"type": "mpi"}
    _resources(holder)["instance_count"] = 2
    return data


@planter("AML406", "a tensorflow distribution with no worker", ALL)
def no_workers(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    holder["distribution"] = {"type": "tensorflow", "worker_count": 0}
    return data


@planter("AML407", "a pytorch distribution on one node with one process", ALL)
def single_process(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    holder["distribution"] = {"type": "pytorch", "process_count_per_instance": 1}
    _resources(holder)["instance_count"] = 1
    if _is_sweep(data) and isinstance(data.get("resources"), dict):
        data["resources"].pop("instance_count", None)
    return data


@planter("AML408", "four processes per node on a one-GPU serverless VM", ALL)
def more_processes_than_gpus(data: dict) -> dict | None:
    holder = _runner(data)
    if holder is None:
        return None
    holder["distribution"] = {"type": "pytorch", "process_count_per_instance": 4}
    _resources(holder)["instance_type"] = "Standard_NC6s_v3"
    if _is_pipeline(data):
        holder["compute"] = "azureml:serverless"
    else:
        data.pop("compute", None)
        if _is_sweep(data) and isinstance(data.get("resources"), dict):
            data["resources"].pop("instance_type", None)
    return data


@planter("AML409", "a pipeline step on local compute", PIPELINES)
def local_step(data: dict) -> dict | None:
    step = _step(data)
    if step is None:
        return None
    step["compute"] = "local"
    return data


@planter("AML410", "a local job asking for two nodes", ("commandJob",))
def local_two_nodes(data: dict) -> dict | None:
    data["compute"] = "local"
    _resources(data)["instance_count"] = 2
    return data


@planter("AML411", "default_compute without the azureml: prefix", ("pipelineJob",))
def plain_default_compute(data: dict) -> dict | None:
    settings = data.get("settings")
    if not isinstance(settings, dict):
        settings = data["settings"] = {}
    settings["default_compute"] = "cpu-cluster"
    return data


@planter("AML412", "a compute named without the azureml: prefix", JOBS + PIPELINES)
def plain_compute(data: dict) -> dict | None:
    holder = _step(data) if _is_pipeline(data) else data
    if holder is None:
        return None
    holder["compute"] = "gpu-cluster"
    return data


@planter("AML413", "a job whose compute line was deleted", JOBS)
def no_compute(data: dict) -> dict | None:
    data.pop("compute", None)
    return data


@planter("AML414", "spot tier requested on a named cluster", JOBS + PIPELINES)
def tier_on_cluster(data: dict) -> dict | None:
    holder = _step(data) if _is_pipeline(data) else data
    if holder is None:
        return None
    holder["compute"] = "azureml:gpu-cluster"
    holder["queue_settings"] = {"job_tier": "spot"}
    return data


@planter("AML415", "a command job with a zero timeout", ("commandJob",) + PIPELINES)
def zero_timeout(data: dict) -> dict | None:
    holder = _step(data) if _is_pipeline(data) else data
    if holder is None:
        return None
    holder["limits"] = {"timeout": 0}
    return data


@planter("AML416", "spot capacity for a script that never saves to ./outputs", JOBS)
def spot_without_checkpoints(data: dict) -> dict | None:
    sweep = _is_sweep(data)
    runner = data.get("trial") if sweep else data
    if not isinstance(runner, dict) or _writes_outputs_by_command(runner.get("command")):
        return None
    folder = VALID / ("sweepJob" if sweep else "commandJob")
    script = pycode.find_entry_script(Document(path=str(folder / "x.yml"), text="", base_dir=folder), runner)
    if script is None or pycode.mentions_outputs_folder(Path(script)) is not False:
        return None
    data["queue_settings"] = {"job_tier": "spot"}
    return data
