"""Distributed PyTorch jobs for real: torch's elastic launcher, one agent per simulated node,
real gradient synchronisation, two launchers as two machines, a crashing rank, preemption.

Every job here runs real processes (torch, gloo on loopback, MLflow's SQLite store); the
DDP lab runs once per module and several tests read what it left."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amlrun import aml_run, nothing_ran, write_job
from conftest import BIN, ROOT
from runner import contract, distributed, jobs, process
from runner.workspace import Workspace

DDP_LAB = ROOT / "scenarios" / "distributed-pytorch"
RESUME_LAB = ROOT / "scenarios" / "checkpoint-resume"


def left_running(run_dir: Path) -> list[int]:
    """Processes that still carry the job's marker: every process a job starts inherits it."""
    return [pid for pid in process.processes_marked(contract.MARKER, str(run_dir)) if process.pid_alive(pid)]


def reference_training(script: Path, folder: Path, *arguments: str) -> Path:
    """The same script as one plain process (no launcher variables): what the distributed run
    must equal. Its MLflow calls go to a store of its own."""
    folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "WORLD_SIZE", "RANK"))}
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{folder / 'reference.db'}"
    result = subprocess.run([sys.executable, str(script), *arguments], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return folder / "outputs"


def max_difference(left: Path, right: Path) -> float:
    import torch

    a, b = torch.load(left), torch.load(right)
    assert a.keys() == b.keys()
    return max((a[key] - b[key]).abs().max().item() for key in a)


@pytest.fixture(scope="module")
def ddp(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The DDP lab as a learner runs it (its setup, then the job at 2 nodes x 2 processes)."""
    from runner import scenarios

    folder = tmp_path_factory.mktemp("ddp")
    lab = folder / "distributed-pytorch"
    shutil.copytree(DDP_LAB, lab, ignore=shutil.ignore_patterns(".amllab"))
    workspace = Workspace.locate(folder / ".amllab")
    shown = scenarios.run(lab, workspace)
    return {"folder": folder, "lab": lab, "workspace": workspace, "shown": shown,
            "problems": scenarios.check(lab, shown), "run_dir": Path(shown["run_dir"])}


@pytest.mark.lab
def test_ddp_2x2_ends_with_the_weights_of_one_process_on_the_same_global_batches(ddp: dict) -> None:
    assert ddp["problems"] == [], ddp["shown"]
    outputs = Path(ddp["shown"]["outputs"]["default"])
    reference = reference_training(ddp["lab"] / "src" / "train.py", ddp["folder"] / "single",
                                   "--epochs", "4", "--global-batch", "64", "--lr", "0.2")
    assert max_difference(outputs / "model.pt", reference / "model.pt") < 1e-6
    # Not a test that cannot fail: without DDP's averaging, the four ranks' models drift apart
    # from the single-process one by far more than that (the script's docstring has the maths).


@pytest.mark.lab
def test_every_worker_gets_the_services_variables_and_metrics_come_from_rank_0_only(ddp: dict) -> None:
    from mlflow import MlflowClient

    ranks_dir = Path(ddp["shown"]["outputs"]["default"]) / "ranks"
    seen = [json.loads(path.read_text()) for path in sorted(ranks_dir.glob("rank_*.json"))]
    assert sorted(int(env["RANK"]) for env in seen) == [0, 1, 2, 3]
    assert {env["WORLD_SIZE"] for env in seen} == {"4"}
    by_node: dict[str, list[int]] = {}
    for env in seen:
        by_node.setdefault(env["NODE_RANK"], []).append(int(env["LOCAL_RANK"]))
        # As on Azure ML: a node's ranks follow each other, RANK = NODE_RANK x per-node + LOCAL_RANK.
        assert int(env["RANK"]) == int(env["NODE_RANK"]) * 2 + int(env["LOCAL_RANK"])
        assert env["AZUREML_PROCESS_NAME"] == f"rank_{env['RANK']}"
        assert env["OMP_NUM_THREADS"] == str(max(1, (os.cpu_count() or 1) // 4))
    assert {node: sorted(local) for node, local in by_node.items()} == {"0": [0, 1], "1": [0, 1]}
    assert len({(env["MASTER_ADDR"], env["MASTER_PORT"]) for env in seen}) == 1
    run_id = ddp["shown"]["mlflow"]["run_id"]
    assert {env["MLFLOW_RUN_ID"] for env in seen} == {run_id}

    client = MlflowClient(tracking_uri=ddp["shown"]["mlflow"]["tracking_uri"])
    runs = client.search_runs([ddp["shown"]["mlflow"]["experiment_id"]])
    assert [run.info.run_id for run in runs] == [run_id]  # one run for the whole job
    history = client.get_metric_history(run_id, "loss")
    assert sorted(metric.step for metric in history) == [0, 1, 2, 3]  # one value a step: rank 0's


@pytest.mark.lab
def test_one_log_per_rank_and_the_stream_prefixes_all_but_rank_0(ddp: dict) -> None:
    run_dir = ddp["run_dir"]
    assert sorted(path.name for path in (run_dir / "logs").glob("rank_*.txt")) == [f"rank_{k}.txt" for k in range(4)]
    assert sorted(ddp["shown"]["rank_logs"]) == sorted(str(path) for path in (run_dir / "logs").glob("rank_*.txt"))
    assert ddp["shown"]["distribution"] == "pytorch: 2 node(s) x 2 process(es) = 4 ranks"
    assert left_running(run_dir) == []
    # A second look at the job with `job stream`, as a user would: rank 0 plain, the rest marked.
    for rank in range(4):
        (run_dir / "logs" / f"rank_{rank}.txt").write_text(f"hello from {rank}\n")
    result = aml_run("job", "stream", ddp["shown"]["name"], "--workspace", str(ddp["workspace"].folder),
                     cwd=ddp["folder"])
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert "hello from 0" in lines
    assert {"[rank 1] hello from 1", "[rank 2] hello from 2", "[rank 3] hello from 3"} <= set(lines)


def test_two_launchers_on_loopback_run_one_job_as_two_machines(tmp_path: Path) -> None:
    """Each 'machine' has its own folder and workspace and runs `aml-run job create --nodes 2
    --node-rank K --rdzv-endpoint HOST:PORT`; node 0's agent hosts the rendezvous."""
    port = distributed.free_port()
    machines = []
    for node in (0, 1):
        machine = tmp_path / f"machine{node}"
        shutil.copytree(DDP_LAB / "src", machine / "src")
        spec = write_job(machine, "job", """\
            code: ./src
            command: python train.py --epochs 1 --global-batch 32
            resources: {instance_count: 2}
            distribution: {type: pytorch, process_count_per_instance: 2}
            """)
        machines.append(subprocess.Popen(
            [str(BIN / "aml-run"), "job", "create", "--file", str(spec), "--stream", "--nodes", "2",
             "--node-rank", str(node), "--rdzv-endpoint", f"127.0.0.1:{port}", "--workspace", str(machine / ".amllab")],
            cwd=machine, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [launcher.communicate(timeout=300) for launcher in machines]
    for launcher, (out, err) in zip(machines, outputs):
        assert launcher.returncode == 0, out[-3000:] + err
    for node in (0, 1):
        ranks = sorted((tmp_path / f"machine{node}" / ".amllab" / "runs").glob("*/wd/outputs/ranks/rank_*.json"))
        seen = [json.loads(path.read_text()) for path in ranks]
        assert sorted(int(env["RANK"]) for env in seen) == [2 * node, 2 * node + 1]
        assert {(env["NODE_RANK"], env["WORLD_SIZE"], env["MASTER_ADDR"], env["MASTER_PORT"]) for env in seen} == \
            {(str(node), "4", "127.0.0.1", str(port))}
    assert "machine is node 1, rendezvous at 127.0.0.1" in outputs[1][0]


CRASHING = """\
import os, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 3:
    raise RuntimeError("rank 3 ran out of data")
tensor = torch.ones(1)
dist.all_reduce(tensor)  # the others wait here for rank 3, which never comes
time.sleep(600)
print("finished", flush=True)
"""


def test_a_crashing_rank_fails_the_job_fast_with_its_error_and_leaves_no_process(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", """\
        code: ./src
        command: python main.py
        resources: {instance_count: 2}
        distribution: {type: pytorch, process_count_per_instance: 2}
        """, script=CRASHING)
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    # The others would sleep for 10 minutes: the job ends long before, because rank 3 failed.
    final = jobs.wait(workspace, name, timeout=120)
    assert final["status"] == "Failed"
    assert final["error"]["rank"] == "3"
    assert "rank 3 exited with code 1" in final["error"]["message"]
    assert "rank 3 ran out of data" in final["error"]["message"]  # the tail of its log
    run_dir = workspace.run_dir(name)
    assert left_running(run_dir) == []
    for pgid in final["pgids"]:
        assert not process.group_alive(pgid)
    assert not any("finished" in (run_dir / "logs" / f"rank_{k}.txt").read_text() for k in range(4))


@pytest.mark.lab
def test_checkpoints_carry_a_spot_job_through_two_preemptions(tmp_path: Path) -> None:
    """The checkpoint-resume lab: its node is taken twice; it still ends with exactly the
    weights of an uninterrupted run, having run fewer than 1.5x the epochs of one."""
    from runner import scenarios

    lab = tmp_path / "checkpoint-resume"
    shutil.copytree(RESUME_LAB, lab, ignore=shutil.ignore_patterns(".amllab"))
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = scenarios.run(lab, workspace)
    assert scenarios.check(lab, shown) == [], Path(shown["system_log_path"]).read_text()[-3000:]
    states = [entry["status"] for entry in shown["history"]]
    assert states.count("Running") == 3 and states.count("Queued") == 3
    outputs = Path(shown["outputs"]["default"])
    reference = reference_training(lab / "src" / "train.py", tmp_path / "uninterrupted",
                                   "--epochs", "12", "--epoch-seconds", "0")
    assert max_difference(outputs / "model.pt", reference / "model.pt") < 1e-9
    started = (outputs / "epochs.log").read_text().split()
    clean = (reference / "epochs.log").read_text().split()
    assert len(clean) == 12 and len(started) < 1.5 * len(clean)
    assert left_running(Path(shown["run_dir"])) == []


def test_preemption_and_machine_shares_are_refused_where_they_make_no_sense(tmp_path: Path) -> None:
    plain = write_job(tmp_path, "plain", "command: echo hi\n")
    result = aml_run("job", "create", "--file", str(plain), "--preempt-after", "5", cwd=tmp_path)
    assert result.returncode == 2 and "queue_settings: {job_tier: spot}" in result.stderr
    result = aml_run("job", "create", "--file", str(plain), "--nodes", "2", cwd=tmp_path)
    assert result.returncode == 2 and "needs all three" in result.stderr
    two = write_job(tmp_path, "two", "command: echo hi\nresources: {instance_count: 2}\n"
                    "distribution: {type: pytorch}\n")
    result = aml_run("job", "create", "--file", str(two), "--nodes", "3", "--node-rank", "0",
                     "--rdzv-endpoint", "127.0.0.1:29500", cwd=tmp_path)
    assert result.returncode == 2 and "--set resources.instance_count=3" in result.stderr
    result = aml_run("job", "create", "--file", str(two), "--preempt-after", "0", cwd=tmp_path)
    assert result.returncode == 2 and "greater than 0" in result.stderr
    assert nothing_ran(tmp_path)


def test_a_multi_node_job_holds_one_compute_instance_per_node(tmp_path: Path) -> None:
    """All or none: a 2-node job on a 3-instance compute takes two slots, and a second 2-node
    job waits rather than starting on the one that is left."""
    from runner.contract import acquire_slot, release

    workspace = Workspace.locate(tmp_path / ".amllab")
    workspace.ensure()
    compute = {"name": "cpu-cluster", "max_instances": 3}
    log = contract.Log(tmp_path / "run")
    first = acquire_slot(workspace, compute, contract.Cancel(), log, count=2)
    assert first is not None and len(first) == 2
    waiting = contract.Cancel()
    started = time.monotonic()

    def cancel_soon() -> None:
        time.sleep(0.5)
        waiting.request()

    import threading

    threading.Thread(target=cancel_soon).start()
    assert acquire_slot(workspace, compute, waiting, log, count=2) is None
    assert time.monotonic() - started >= 0.5  # it waited until canceled
    assert "waiting for 2 free instances" in log.path.read_text()
    release(first)
    again = acquire_slot(workspace, compute, contract.Cancel(), log, count=2)
    assert again is not None and len(again) == 2
    release(again)


def started_ranks(run_dir: Path, count: int, timeout: float = 120) -> None:
    """Wait until ``count`` ranks have written their first line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = list((run_dir / "logs").glob("rank_*.txt"))
        if len(logs) == count and all(log.read_text().strip() for log in logs):
            return
        time.sleep(0.1)
    raise AssertionError(f"{count} ranks did not start in {timeout:g} s")


SLEEPER = """\
    command: echo "rank $RANK up"; sleep 600
    resources: {instance_count: 2}
    distribution: {type: pytorch, process_count_per_instance: 2}
    """


def test_canceling_a_distributed_job_stops_every_node(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", SLEEPER)
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    run_dir = workspace.run_dir(name)
    started_ranks(run_dir, 4)
    result = aml_run("job", "cancel", name, "--workspace", str(workspace.folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    final = jobs.wait(workspace, name, timeout=60)
    assert final["status"] == "Canceled"
    assert left_running(run_dir) == []
    # A stopped rank has no exit status: nothing claims it ended well, or failed.
    assert list((run_dir / "logs").glob("rank_*.exit")) == []


def test_a_killed_supervisor_of_a_distributed_job_is_noticed_and_every_rank_stopped(tmp_path: Path) -> None:
    """SIGKILL leaves torch's workers without their agent; the next look at the job finds them
    by the job's marker variable, which every rank inherits, and stops them."""
    spec = write_job(tmp_path, "job", SLEEPER)
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    run_dir = workspace.run_dir(name)
    started_ranks(run_dir, 4)
    from runner import status

    os.kill(status.read(run_dir)["supervisor"]["pid"], 9)
    time.sleep(0.3)
    shown = jobs.show(workspace, name)
    assert shown["status"] == "Failed" and shown["error"]["code"] == "RunnerDied"
    assert left_running(run_dir) == []


def test_a_sweep_tunes_a_distributed_trial(tmp_path: Path) -> None:
    """Each trial of the sweep is a 1 x 2 pytorch job: the score is the all-reduced sum of
    both ranks' learning rate, so 2 x lr proves that both ranks of every trial took part."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "trial.py").write_text(
        "import argparse, torch, torch.distributed as dist\n"
        "parser = argparse.ArgumentParser(); parser.add_argument('--lr', type=float)\n"
        "lr = parser.parse_args().lr\n"
        "dist.init_process_group('gloo')\n"
        "total = torch.tensor([lr]); dist.all_reduce(total)\n"
        "if dist.get_rank() == 0:\n"
        "    import mlflow; mlflow.log_metric('score', total.item())\n"
        "dist.barrier()\n"
        "dist.destroy_process_group()\n"
        "import os; os._exit(0)  # gloo can abort at interpreter exit: see the labs' train.py\n")
    spec = tmp_path / "sweep.yml"
    spec.write_text("""\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  code: ./src
  command: python trial.py --lr ${{search_space.lr}}
  environment: {image: python:3.11-slim}
  resources: {instance_count: 1}
  distribution: {type: pytorch, process_count_per_instance: 2}
sampling_algorithm: grid
search_space:
  lr: {type: choice, values: [0.1, 0.2]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 2, max_concurrent_trials: 1}
""")
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    final = jobs.wait(workspace, name, timeout=240)
    assert final["status"] == "Completed", final.get("error")
    shown = jobs.show(workspace, name)
    scores = {row["params"]["lr"]: row["metrics"]["score"] for row in shown["trials"]}
    assert scores == pytest.approx({0.1: 0.2, 0.2: 0.4})
    assert shown["best_trial"]["params"] == {"lr": 0.2}
    for row in shown["trials"]:
        trial_dir = workspace.run_dir(row["name"])
        assert sorted(p.name for p in (trial_dir / "logs").glob("rank_*.txt")) == ["rank_0.txt", "rank_1.txt"]
        assert left_running(trial_dir) == []
