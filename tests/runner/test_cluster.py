"""A Ray cluster compute for real: two Ray nodes started with `ray start` on this machine's
loopback (a head and a worker, as on two machines), a real supervisor, real trials, steps and
torch ranks on the nodes, real MLflow through a real `mlflow server`."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time
from pathlib import Path

import pytest

from amlrun import aml_run, finish, pid_gone, show, submit, wait_for
from runner import status
from runner.cluster import LoopbackCluster
from runner.workspace import Workspace

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install 'amllab[cluster]')")
# One cluster for the module: its tests run in one worker.
pytestmark = pytest.mark.xdist_group("ray-cluster")


@pytest.fixture(scope="module")
def cluster() -> dict:
    """A head and a worker node, each with 2 CPUs (so a node can hold two jobs)."""
    with LoopbackCluster(nodes=2, cpus=2) as started:
        yield {"address": started.address, "temp": started.temp, "handle": started}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, cluster: dict) -> Path:
    """One workspace for the module: its MLflow server for the nodes stays up between tests."""
    folder = tmp_path_factory.mktemp("cluster-lab")
    (folder / ".amllab").mkdir()
    created = aml_run("compute", "create", "--name", "ray-cluster", "--type", "ray", "--address", cluster["address"],
                      "--max-instances", "2", cwd=folder)
    assert created.returncode == 0, created.stderr
    return folder




def write(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def processes_of(job: str) -> list[int]:
    """Live processes of a job or its children, wherever they run on this machine (each has
    AZUREML_RUN_ID=<its job's name>)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(item.startswith(f"AZUREML_RUN_ID={job}".encode()) for item in environ) and not pid_gone(int(entry)):
            found.append(int(entry))
    return found


# The trial logs through MLflow's REST API with the variables aml-run gives it (the tracking
# server the nodes reach, its token, and the trial's run): what mlflow.log_metric sends, without
# importing MLflow in every trial of a suite that runs on two cores.
CURVE = """\
import argparse, json, os, time, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--copy")
args = parser.parse_args()
os.makedirs("outputs", exist_ok=True)
with open("outputs/node.txt", "w") as out:
    out.write(os.environ["AMLLAB_NODE_ID"])
for step in range(1, 7):
    metric = {"run_id": os.environ["MLFLOW_RUN_ID"], "key": "score", "value": round(args.quality * step / 6, 4),
              "timestamp": int(time.time() * 1000), "step": step}
    urllib.request.urlopen(urllib.request.Request(
        os.environ["MLFLOW_TRACKING_URI"] + "/api/2.0/mlflow/runs/log-metric", json.dumps(metric).encode(),
        {"Content-Type": "application/json",
         "Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"]})).close()
    print("interval", step, flush=True)
    time.sleep(0.3)
"""

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  code: ./src
  command: python curve.py --quality ${{search_space.quality}} --copy ${{search_space.copy}}
  environment:
    image: python:3.11-slim
compute: azureml:ray-cluster
sampling_algorithm: grid
search_space:
  quality: {type: choice, values: [1.0, 0.3, 0.9, 0.2]}
  copy: {type: choice, values: [a, b]}
objective: {goal: maximize, primary_metric: score}  # amllab: ignore[AML701] (logged through the REST API)
limits: {max_total_trials: 8, max_concurrent_trials: 2}
early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1, delay_evaluation: 2}
"""


def test_a_sweeps_trials_run_on_both_nodes_and_a_bandit_cancel_stops_the_remote_trial(lab: Path) -> None:
    write(lab, "src/curve.py", CURVE)
    name = submit(lab, write(lab, "sweep.yml", SWEEP))
    shown = finish(lab, name)
    assert shown["status"] == "Completed", shown.get("error")
    rows = shown["trials"]
    assert len(rows) == 8
    workspace = Workspace(lab / ".amllab")
    # Each trial says where it ran, and so does the trial itself, from its node's variables.
    written = {row["name"]: (workspace.run_dir(row["name"]) / "wd" / "outputs" / "node.txt").read_text() for row in rows}
    assert len(set(written.values())) == 2, written
    for row in rows:
        assert written[row["name"]][:8] in row["node"]
    # Quality 1.0 runs first, two at a time; every other trial falls below the bandit's threshold
    # (slack factor 0.1) at interval 2, and its process on the node is stopped there.
    statuses = {int(row["name"].rsplit("_", 1)[1]): row["status"] for row in rows}
    assert statuses[0] == statuses[1] == "Completed"
    canceled = [row for row in rows if row["status"] == "Canceled"]
    assert canceled and all(row["stopped_by"]["policy"] == "bandit" for row in canceled)
    for row in canceled:
        log = (workspace.run_dir(row["name"]) / "user_logs" / "std_log.txt").read_text()
        assert "interval 2" in log and "interval 6" not in log, log  # stopped mid-run, and its log came back
    assert shown["best_trial"]["metric"] == pytest.approx(1.0)
    assert not processes_of(name)
    # Nothing of the trials is left on the nodes either: each node's copy of a run folder is gone.
    assert not [path for path in _scratch().glob(f"{name}_*")]


def _scratch() -> Path:
    from runner.cluster_node import scratch_root

    return scratch_root()


STEP = """\
type: command
code: ./steps
command: python meet.py ${{outputs.stamp}} ${{inputs.me}} ${{inputs.peer}}
environment: {image: python:3.11-slim}
compute: azureml:ray-cluster
inputs: {me: %s, peer: %s}
outputs:
  stamp: {type: uri_folder}
"""
# Each step says it started (a file: the loopback cluster's nodes share this machine's file
# system) and waits for the other's word: both are running at once however long each took to
# start on a loaded machine, and `met` says so.
MEET = """\
import json, os, sys, time
out, me, peer = sys.argv[1:]
start = time.time()
open(me, "w").close()
deadline = time.monotonic() + 90
while not os.path.exists(peer) and time.monotonic() < deadline:
    time.sleep(0.05)
met = os.path.exists(peer)
time.sleep(0.3)
with open(os.path.join(out, "span.json"), "w") as span:
    json.dump({"node": os.environ["AMLLAB_NODE_ID"], "start": start, "end": time.time(), "met": met}, span)
"""


def test_a_pipelines_independent_steps_run_at_once_on_two_nodes_and_a_second_run_reuses_both(lab: Path) -> None:
    write(lab, "steps/meet.py", MEET)
    left, right = lab / "meet" / "left", lab / "meet" / "right"
    left.parent.mkdir()
    steps = {"left": STEP % (left, right), "right": STEP % (right, left)}
    spec = write(lab, "pipeline.yml", "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
                 "type: pipeline\njobs:\n" + "".join(f"  {step}:\n" + textwrap.indent(body, "    ")
                                                     for step, body in steps.items()))
    first = finish(lab, submit(lab, spec))
    assert first["status"] == "Completed", first.get("error")
    spans = {step: json.loads((Path(first["jobs"][step]["outputs"]["stamp"]) / "span.json").read_text())
             for step in steps}
    assert spans["left"]["met"] and spans["right"]["met"]
    assert spans["left"]["node"] != spans["right"]["node"]
    assert spans["left"]["start"] < spans["right"]["end"] and spans["right"]["start"] < spans["left"]["end"]
    second = finish(lab, submit(lab, spec))
    assert second["status"] == "Completed", second.get("error")
    assert {step: node["reused"] for step, node in second["jobs"].items()} == {"left": True, "right": True}


DDP = """\
import json, os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
total = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(total)
os.makedirs("outputs", exist_ok=True)
with open(f"outputs/rank_{dist.get_rank()}.json", "w") as out:
    json.dump({"node": os.environ["AMLLAB_NODE_ID"], "node_rank": os.environ["NODE_RANK"],
               "world": dist.get_world_size(), "sum": total.item()}, out)
dist.destroy_process_group()
"""

PYTORCH_JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: python ddp.py
code: ./ddp
environment: {image: python:3.11-slim}
compute: azureml:ray-cluster
resources: {instance_count: 2}
distribution: {type: pytorch, process_count_per_instance: 1}
"""


def test_a_two_node_pytorch_job_puts_one_node_on_each_ray_node(lab: Path) -> None:
    write(lab, "ddp/ddp.py", DDP)
    name = submit(lab, write(lab, "ddp.yml", PYTORCH_JOB))
    shown = finish(lab, name)
    assert shown["status"] == "Completed", shown.get("error")
    outputs = Workspace(lab / ".amllab").run_dir(name) / "wd" / "outputs"
    ranks = [json.loads((outputs / f"rank_{rank}.json").read_text()) for rank in (0, 1)]
    assert [rank["node_rank"] for rank in ranks] == ["0", "1"]
    assert ranks[0]["node"] != ranks[1]["node"]
    assert all(rank["world"] == 2 and rank["sum"] == 3.0 for rank in ranks)  # the two met in one group
    assert [node["node_id"] for node in shown["cluster_nodes"]] == [rank["node"] for rank in ranks]


SLOW_SWEEP = SWEEP.replace("python curve.py", "sleep 600 && python curve.py")


def test_killing_the_supervisor_of_a_remote_sweep_leaves_no_process_on_either_node(lab: Path) -> None:
    write(lab, "src/curve.py", CURVE)
    name = submit(lab, write(lab, "slow.yml", SLOW_SWEEP))
    workspace = Workspace(lab / ".amllab")
    # Both running trials' commands started on their nodes (they sleep there).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(processes_of(name)) < 4:  # bash and sleep, per trial
        time.sleep(0.2)
    running = processes_of(name)
    assert len(running) >= 4, status.read(workspace.run_dir(name))
    supervisor = status.read(workspace.run_dir(name))["supervisor"]["pid"]
    os.kill(supervisor, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (processes_of(name) or not all(pid_gone(pid) for pid in running)):
        time.sleep(0.2)
    assert not processes_of(name), [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in processes_of(name)]
    # The nodes' copies of the trials' run folders go too (each guard deletes its copy last). (The
    # workspace's MLflow server for the nodes stays for the next job, until unused:
    # tests/runner/test_own_mlflow.py.)
    while time.monotonic() < deadline and list(_scratch().glob(f"{name}_*")):
        time.sleep(0.2)
    assert not list(_scratch().glob(f"{name}_*"))
    # A reader finds the supervisor gone and ends the sweep.
    assert show(lab, name)["status"] == "Failed"


WAITER = """\
import os, sys, time
started = time.monotonic()
while not os.path.exists(sys.argv[1]) and time.monotonic() - started < 120:
    time.sleep(0.1)
with open("outputs/node.txt", "w") as out:
    out.write(os.environ["AMLLAB_NODE_ID"])
"""
WAITING_JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: python wait.py ${{inputs.go}}
code: ./waiter
inputs: {go: %s}
environment: {image: python:3.11-slim}
compute: azureml:ray-cluster
"""


def test_a_local_jobs_supervisor_and_the_cli_never_import_ray() -> None:
    """Ray is an extra: a supervisor imports it only for a job whose compute is a cluster."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import runner.supervisor, runner.cli, runner.jobs, runner.cluster\n"
            "print('ray' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_cancel_stops_a_job_on_its_node(lab: Path) -> None:
    write(lab, "waiter/wait.py", WAITER)
    never = lab / "never-created"
    name = submit(lab, write(lab, "cancel.yml", WAITING_JOB % never))
    workspace = Workspace(lab / ".amllab")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not processes_of(name):  # its python on the node
        time.sleep(0.2)
    assert processes_of(name), status.read(workspace.run_dir(name))
    canceled = aml_run("job", "cancel", name, cwd=lab)
    assert canceled.returncode == 0, canceled.stderr
    shown = finish(lab, name)
    # Canceled by its supervisor (which brings the logs back and closes the MLflow run), not
    # ended by `job cancel` for a supervisor that died.
    assert shown["status"] == "Canceled", shown.get("error")
    assert "state: Finalizing" in (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text()
    assert not processes_of(name)
    assert not list(_scratch().glob(f"{name}-*"))


# Last in the module: it takes the worker node away from the module's cluster.
# A driver of its own (the suite's worker never joins the cluster): an agent asked twice for
# the same launch starts one process, and a launch on an agent that is gone loses its node.
START_TWICE = """\
import json, subprocess, sys, time, types
from pathlib import Path
import ray
from runner import cluster, distributed
from runner.cluster_node import NodeAgent

cluster.connect(sys.argv[1])
run_dir = Path(sys.argv[2])
(run_dir / "wd").mkdir(parents=True)
actor = NodeAgent.remote()
where = ray.get(actor.open.remote("twice"))
ray.get(actor.receive.remote(cluster._bundle(run_dir)))
sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
log = str(Path(where["folder"]) / "user_logs" / "std_log.txt")
first = ray.get(actor.start.remote("launch0", sleeper, {"PATH": "/usr/bin:/bin"}, log))
again = ray.get(actor.start.remote("launch0", sleeper, {"PATH": "/usr/bin:/bin"}, log))
guards = sorted(path.name for path in (Path(where["folder"]) / ".guards").glob("*.pid"))
ray.kill(actor)
plan = types.SimpleNamespace(environment_variables={}, compute={"address": sys.argv[1]})
host = cluster.ClusterHost(run_dir, plan, print, [cluster.Agent(actor, where, run_dir, {})], None)
launch = distributed.Launch(argv=sleeper, env={}, log=run_dir / "user_logs" / "std_log.txt", role="command")
host.start(launch, run_dir / "wd")
print(json.dumps({"first": first, "again": again, "guards": guards, "code": launch.process.returncode,
                  "lost": host.lost(), "node": where["node_id"]}))
"""


def test_a_start_asked_twice_starts_once_and_a_start_on_a_gone_agent_loses_its_node(cluster: dict,
                                                                                   tmp_path: Path) -> None:
    import subprocess
    import sys

    driver = subprocess.run([sys.executable, "-c", START_TWICE, cluster["address"], str(tmp_path / "run")],
                            cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=240)
    assert driver.returncode == 0, driver.stderr[-3000:]
    said = json.loads(driver.stdout.strip().splitlines()[-1])
    assert said["first"] == said["again"] and said["guards"] == ["launch0.pid"], said
    assert said["code"] == -9, said
    assert said["lost"] and said["node"][:8] in said["lost"], said
    # The guard outlives its agent only to stop the process: nothing of the launch stays.
    deadline = time.monotonic() + 30
    while not pid_gone(said["first"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_gone(said["first"])


def test_a_node_lost_mid_job_fails_it_naming_the_node_and_a_spot_job_is_requeued(lab: Path, cluster: dict) -> None:
    workspace = Workspace(lab / ".amllab")
    write(lab, "waiter/wait.py", WAITER)
    go = lab / "go"  # both jobs run until it exists (a node has this machine's file system here)
    plain = submit(lab, write(lab, "plain.yml", WAITING_JOB % go))
    spot = submit(lab, write(lab, "spot.yml", WAITING_JOB % go + "queue_settings: {job_tier: spot}\n"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(status.read(workspace.run_dir(job)).get("status") == "Running"
                                                  for job in (plain, spot)):
        time.sleep(0.2)
    records = {job: status.read(workspace.run_dir(job)) for job in (plain, spot)}
    assert all(record["status"] == "Running" for record in records.values()), [
        (workspace.run_dir(job) / "system_logs" / "amllab.log").read_text()[-3000:] for job in records]
    nodes = {job: record["cluster"]["nodes"][0]["node_id"] for job, record in records.items()}
    assert nodes[plain] != nodes[spot], "the two jobs should have been spread over the two nodes"
    worker = next(node for node in nodes.values() if not cluster["handle"].is_head(node))
    cluster["handle"].kill_node(worker)
    lost, survived = (plain, spot) if nodes[plain] == worker else (spot, plain)
    if lost == plain:
        # The job fails, and its error names the node it lost.
        shown = finish(lab, plain, timeout=180)
        assert shown["status"] == "Failed" and shown["error"]["code"] == "NodeLost", shown["error"]
        assert worker[:8] in shown["error"]["message"]
        go.touch()
        assert finish(lab, spot)["status"] == "Completed"
    else:
        # A spot job whose node goes away is preempted: re-queued, it runs again on the node left.
        wait_for(workspace, spot, "Queued", timeout=120)
        go.touch()
        shown = finish(lab, spot, timeout=180)
        assert shown["status"] == "Completed", shown.get("error")
        assert shown["preemptions"] == 1
        ran_on = (workspace.run_dir(spot) / "wd" / "outputs" / "node.txt").read_text()
        assert ran_on == nodes[plain] != worker
        assert finish(lab, plain)["status"] == "Completed"
    assert not processes_of(lost) and not processes_of(survived)
