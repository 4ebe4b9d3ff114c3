"""Distributed jobs of type tensorflow and mpi, run for real: the labs in
scenarios/distributed-tensorflow and scenarios/distributed-mpi, through the runner's API and
the `aml-run` command line, with real processes, Open MPI's real mpirun and torch's gloo."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from amlrun import aml_run, lab, nothing_ran  # noqa: F401
from conftest import ROOT
from runner import contract, jobs, process, scenarios
from runner.workspace import Workspace

TF_LAB = ROOT / "scenarios" / "distributed-tensorflow"
MPI_LAB = ROOT / "scenarios" / "distributed-mpi"

def run(lab_folder: Path, spec: Path, *overrides: str) -> tuple[dict, Path]:
    """Submit ``spec`` and wait for it; a lab's spec after its setup, as a learner runs it (the
    setup registers the compute the spec names)."""
    workspace = Workspace.locate(lab_folder / ".amllab")
    if (spec.parent / "scenario.yml").is_file():
        scenarios.setup(spec.parent, workspace, io.StringIO())
    name = jobs.submit(spec, workspace, overrides=overrides)
    jobs.wait(workspace, name, timeout=120)
    shown = jobs.show(workspace, name)
    return shown, Path(shown["run_dir"])


def assert_nothing_left(run_dir: Path) -> None:
    left = process.processes_marked(contract.MARKER, str(run_dir))
    assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left if Path(f"/proc/{pid}").exists()]


def tf_configs(shown: dict) -> dict[tuple[str, int], dict]:
    found = {}
    for path in Path(shown["outputs"]["default"]).glob("tf_config_*.json"):
        config = json.loads(path.read_text())
        found[(config["task"]["type"], config["task"]["index"])] = config
    return found


# -- tensorflow -----------------------------------------------------------------------------

@pytest.mark.lab
def test_tensorflow_tasks_get_the_services_tf_config_and_the_ps_is_stopped(lab: Path) -> None:  # noqa: F811
    shown, run_dir = run(lab, TF_LAB / "job.yml")
    assert scenarios.check(TF_LAB, shown) == []  # what the lab promises (test_scenarios leaves it to us)
    assert shown["status"] == "Completed", (shown.get("error"), (run_dir / contract.SYSTEM_LOG).read_text()[-2000:])
    configs = tf_configs(shown)
    assert set(configs) == {("worker", 0), ("worker", 1), ("ps", 0)}
    clusters = [config["cluster"] for config in configs.values()]
    assert all(cluster == clusters[0] for cluster in clusters)  # one cluster, seen the same by all
    cluster = clusters[0]
    assert set(cluster) == {"worker", "ps"} and len(cluster["worker"]) == 2 and len(cluster["ps"]) == 1
    addresses = cluster["worker"] + cluster["ps"]
    assert len(set(addresses)) == 3 and all(a.rpartition(":")[2].isdigit() for a in addresses)
    assert {config["environment"] for config in configs.values()} == {"cloud"}
    # Only the chief (worker 0) logs, and it reached the parameter server at its address.
    assert shown["metrics"] == {"cluster_tasks": 3.0, "ps_acks": 1.0}
    # The parameter server served both workers and never ends by itself: the job stopped it.
    ps_log = next(path for path in (run_dir / "logs").glob("rank_*.txt") if "ps 0 serving" in path.read_text())
    served = ps_log.read_text()
    assert f"serving at {cluster['ps'][0]}" in served
    assert "worker 0 checked in" in served and "worker 1 checked in" in served
    assert_nothing_left(run_dir)


def test_tensorflow_worker_count_defaults_to_the_nodes_and_no_parameter_servers(lab: Path) -> None:  # noqa: F811
    folder = lab / "tf-defaults"
    shutil.copytree(TF_LAB / "src", folder / "src")
    spec = folder / "job.yml"
    # No worker_count, no parameter_server_count, 3 nodes (and no compute: serverless, unbounded).
    spec.write_text((TF_LAB / "job.yml").read_text()
                    .replace("  worker_count: 2\n  parameter_server_count: 1\n", "")
                    .replace("instance_count: 2", "instance_count: 3")
                    .replace("compute: azureml:cpu-cluster\n", ""))
    assert "parameter_server_count" not in spec.read_text()
    shown, run_dir = run(lab, spec)
    assert shown["status"] == "Completed", shown.get("error")
    configs = tf_configs(shown)
    assert set(configs) == {("worker", 0), ("worker", 1), ("worker", 2)}
    assert all(set(config["cluster"]) == {"worker"} for config in configs.values())  # no "ps" key at all
    assert shown["metrics"] == {"cluster_tasks": 3.0, "ps_acks": 0.0}
    assert_nothing_left(run_dir)


# -- mpi ------------------------------------------------------------------------------------

@pytest.mark.lab
def test_mpi_ranks_come_from_open_mpi_and_all_reduce_over_every_rank(lab: Path) -> None:  # noqa: F811
    shown, run_dir = run(lab, MPI_LAB / "job.yml")
    assert scenarios.check(MPI_LAB, shown) == []  # what the lab promises (test_scenarios leaves it to us)
    assert shown["status"] == "Completed", (shown.get("error"), (run_dir / contract.SYSTEM_LOG).read_text()[-2000:])
    outputs = Path(shown["outputs"]["default"])
    records = [json.loads(path.read_text()) for path in sorted(outputs.glob("mpi_rank_*.json"))]
    assert len(records) == 4
    assert sorted(int(r["env"]["OMPI_COMM_WORLD_RANK"]) for r in records) == [0, 1, 2, 3]
    assert {r["env"]["OMPI_COMM_WORLD_SIZE"] for r in records} == {"4"}
    # One machine: every rank is local to it.
    assert sorted(int(r["env"]["OMPI_COMM_WORLD_LOCAL_RANK"]) for r in records) == [0, 1, 2, 3]
    assert {r["env"]["OMPI_COMM_WORLD_LOCAL_SIZE"] for r in records} == {"4"}
    masters = {r["env"]["AZ_BATCH_MASTER_NODE"] for r in records}
    assert len(masters) == 1 and masters.pop().startswith("127.0.0.1:")
    assert {r["env"]["AZ_BATCHAI_MPI_MASTER_NODE"] for r in records} == {"127.0.0.1"}
    assert {r["env"]["AZ_BATCH_HOST_LIST"] for r in records} == {"127.0.0.1,127.0.0.1"}
    # Each rank filled only its own slot: the reduced vector has all four, on every rank.
    assert all(r["reduced"] == [1.0, 2.0, 3.0, 4.0] and r["ranks_sum"] == 10.0 for r in records)
    # Data parallel: every rank ends with the same model, close to y = 3x + 2.
    assert len({(r["w"], r["b"]) for r in records}) == 1
    assert abs(records[0]["w"] - 3) < 0.1 and abs(records[0]["b"] - 2) < 0.1
    assert shown["metrics"]["world_size"] == 4.0 and shown["metrics"]["ranks_sum"] == 10.0
    assert shown["metrics"]["loss"] < 0.01
    assert sorted(p.name for p in (run_dir / "logs").glob("rank_*.txt")) == [f"rank_{k}.txt" for k in range(4)]
    assert_nothing_left(run_dir)


def test_a_failing_mpi_rank_fails_the_job_naming_it_and_stops_the_others(lab: Path) -> None:  # noqa: F811
    shown, run_dir = run(lab, MPI_LAB / "job.yml", "environment_variables.FAIL_RANK=2")
    assert shown["status"] == "Failed"
    error = shown["error"]
    assert error["code"] == "UserError" and error.get("rank") == "2", error
    assert error["message"].startswith("rank 2 exited with code 3"), error
    assert "FAIL_RANK=2" in error["message"]  # the end of the failing rank's log
    assert (run_dir / "logs" / "rank_2.exit").read_text().strip() == "3"
    # The others were waiting for rank 2 in init_process_group: mpirun stopped them.
    assert not list(Path(shown["outputs"]["default"]).glob("mpi_rank_*.json"))
    assert_nothing_left(run_dir)


def test_mpi_without_mpirun_fails_with_one_line_naming_openmpi_bin(tmp_path: Path) -> None:
    # aml-run's environment is the supervisor's: a PATH with bash and this venv, no mpirun.
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "bash").symlink_to(shutil.which("bash"))
    path = os.pathsep.join([str(Path(sys.executable).parent), str(tools)])
    setup = aml_run("compute", "create", "--name", "cpu-cluster", "--max-instances", "2", cwd=tmp_path,
                    env={"AMLLAB_WORKSPACE": str(tmp_path / ".amllab")})
    assert setup.returncode == 0, setup.stderr
    result = aml_run("job", "create", "--file", str(MPI_LAB / "job.yml"), "--stream", cwd=tmp_path,
                     env={"PATH": path, "AMLLAB_WORKSPACE": str(tmp_path / ".amllab")}, timeout=120)
    # Refused at submission, before anything runs, with one line that names the package.
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "mpirun" in line and "openmpi-bin" in line, line
    assert nothing_ran(tmp_path)
