"""Jobs that bring their own MLflow: a pin in the environment or a `pip install` in the command
gets another MLflow client than aml-run's, which must not open the workspace's SQLite store
(another MLflow's schema); such a job logs through a real loopback `mlflow server` instead, as
it logs over HTTP to the workspace's tracking server on the service."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from amlrun import aml_run, command_lines, lab, submit, wait_for, write_job  # noqa: F401
from runner import jobs, mlflow_server
from runner.workspace import Workspace

OLD_MLFLOW = "mlflow-skinny==2.18.0"

# Logs a param, a metric and an artifact with whatever MLflow the job has, into the job's run.
TRAIN = """\
import mlflow, pathlib
print("client", mlflow.__version__, mlflow.get_tracking_uri())
with mlflow.start_run():
    mlflow.log_param("alpha", "0.5")
    mlflow.log_metric("accuracy", 0.75)
    pathlib.Path("note.txt").write_text("hello")
    mlflow.log_artifact("note.txt")
"""


def _conda_file(folder: Path, *pip: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conda.yml").write_text("dependencies:\n  - python=3.11\n  - pip:\n"
                                      + "".join(f"      - {p}\n" for p in pip))


def _user_log(workspace: Workspace, name: str) -> str:
    path = workspace.run_dir(name) / "user_logs" / "std_log.txt"
    return path.read_text() if path.exists() else ""


def _system_log(workspace: Workspace, name: str) -> str:
    return (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text()


def test_a_job_whose_environment_pins_mlflow_2_logs_through_a_loopback_server(lab: Path) -> None:
    folder = lab / "own-mlflow-env"
    _conda_file(folder, OLD_MLFLOW)
    spec = write_job(folder, "job", """\
        command: python main.py
        code: src
        environment:
          image: python:3.11-slim
          conda_file: conda.yml
        """, script=TRAIN)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    record = jobs.wait(workspace, name, timeout=300)
    log, user = _system_log(workspace, name), _user_log(workspace, name)
    assert record["status"] == "Completed", log + user
    client = [line.split() for line in user.splitlines() if line.startswith("client ")]
    assert client and client[0][1] == "2.18.0" and client[0][2].startswith("http://127.0.0.1:"), user
    assert "logs through a loopback MLflow server" in log and "mlflow-skinny 2.18.0" in log, log
    shown = json.loads(aml_run("job", "show", "--name", name, "-o", "json", cwd=lab).stdout)
    assert shown["metrics"]["accuracy"] == 0.75
    # The params and the artifact are in the job's run, in the workspace's own store and folder.
    from mlflow import MlflowClient

    run = MlflowClient(workspace.tracking_uri).get_run(record["mlflow"]["run_id"])
    assert run.data.params["alpha"] == "0.5"
    artifacts = Path(run.info.artifact_uri.removeprefix("file://"))
    assert (artifacts / "note.txt").read_text() == "hello"
    assert str(artifacts).startswith(str(workspace.folder / "mlruns"))


def test_a_pip_install_of_mlflow_in_the_command_logs_through_a_loopback_server(lab: Path) -> None:
    folder = lab / "own-mlflow-pip"
    spec = write_job(folder, "job", f"""\
        command: pip install --quiet '{OLD_MLFLOW}' && python main.py
        code: src
        """, script=TRAIN)
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    record = jobs.wait(workspace, name, timeout=300)
    log, user = _system_log(workspace, name), _user_log(workspace, name)
    assert record["status"] == "Completed", log + user
    assert "client 2.18.0 http://127.0.0.1:" in user, user
    assert "its command installs mlflow-skinny==2.18.0" in log, log
    assert record["metrics"]["accuracy"] == 0.75


def test_a_sweeps_trials_share_one_server_and_the_controller_reads_their_metrics(lab: Path) -> None:
    folder = lab / "own-mlflow-sweep"
    _conda_file(folder, OLD_MLFLOW)
    (folder / "src").mkdir(exist_ok=True)
    (folder / "src" / "main.py").write_text(
        "import sys, mlflow\n"
        "assert mlflow.__version__ == '2.18.0', mlflow.__version__\n"
        "for step in range(3):\n"
        "    mlflow.log_metric('score', float(sys.argv[1]) * (step + 1), step=step)\n")
    (folder / "sweep.yml").write_text("""\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  code: src
  command: python main.py ${{search_space.x}}
  environment:
    image: python:3.11-slim
    conda_file: conda.yml
sampling_algorithm: grid
search_space:
  x: {type: choice, values: [1, 2, 3]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 3, max_concurrent_trials: 2}
early_termination: {type: median_stopping, evaluation_interval: 1, delay_evaluation: 5}
""")
    name = submit(lab, folder / "sweep.yml")
    workspace = Workspace.locate(lab / ".amllab")
    record = jobs.wait(workspace, name, timeout=300)
    trials = [row["name"] for row in jobs.list_jobs(workspace, parent=name)]
    logs = [_system_log(workspace, trial) for trial in trials]
    assert record["status"] == "Completed", _system_log(workspace, name) + "".join(logs)
    urls = {re.search(r"loopback MLflow server \((http://127.0.0.1:\d+)\)", log).group(1) for log in logs}
    assert len(trials) == 3 and len(urls) == 1, logs
    assert sum(log.count("MLflow server http://") for log in logs) == 1  # started once, for the first trial
    shown = jobs.show(workspace, name)
    assert shown["best_trial"]["params"] == {"x": 3} and shown["best_trial"]["metric"] == 9.0, shown


def _servers_over(workspace: Workspace) -> list[int]:
    """The loopback servers' processes (watcher, mlflow server, uvicorn) over this workspace's store."""
    needle = str(workspace.folder / "mlflow.db").encode()
    return [pid for pid, argv in command_lines()
            if needle in argv and (b"mlflow_server" in argv or b"uvicorn" in argv or b"mlflow\0server" in argv)]


def test_a_killed_supervisor_leaves_no_server_behind(tmp_path: Path) -> None:
    (tmp_path / ".amllab").mkdir()
    folder = tmp_path / "killed"
    _conda_file(folder, OLD_MLFLOW)
    spec = write_job(folder, "job", """\
        command: python -c "import time; print('up', flush=True); time.sleep(600)"
        environment:
          image: python:3.11-slim
          conda_file: conda.yml
        """)
    name = submit(tmp_path, spec)
    workspace = Workspace.locate(tmp_path / ".amllab")
    running = wait_for(workspace, name, "Running", timeout=300)
    servers = _servers_over(workspace)
    assert len(servers) >= 2, servers  # the watcher and the server (uvicorn's worker may be its own)
    os.kill(running["supervisor"]["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 15
    while _servers_over(workspace) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _servers_over(workspace)
    # The next look at the job finds its supervisor gone and ends it (its command too).
    assert jobs.wait(workspace, name, timeout=60)["status"] == "Failed"


# -- the decision ------------------------------------------------------------------------------

BASE = "3.17.2"


@pytest.mark.parametrize("command, named", [
    ("pip install 'mlflow<2.19' -q && python train.py", "mlflow<2.19"),
    ("pip3 install mlflow-skinny==2.18.0", "mlflow-skinny==2.18.0"),
    ("python -m pip install --upgrade azureml-mlflow", "azureml-mlflow"),
    ("python3.11 -m pip install -q numpy \"MLflow[extras]>=2\"", "MLflow[extras]>=2"),
    ("uv pip install mlflow_skinny==2.9", "mlflow_skinny==2.9"),
    ("cd src; /usr/bin/pip install -i https://example.org/simple mlflow\npython x.py", "mlflow"),
    ("echo go && (pip install mlflow==2.16 || true)", "mlflow==2.16"),
])
def test_a_command_installing_mlflow_brings_its_own(command: str, named: str) -> None:
    assert mlflow_server.own_mlflow(command, (), BASE) == f"its command installs {named}"


@pytest.mark.parametrize("command", [
    "python train.py --mlflow-uri x",
    "pip install numpy scikit-learn && python train.py",
    "pip install -r mlflow.txt",             # a requirements file named like it, not the package
    "pip install --index-url mlflow numpy",  # an option's value
    "pip download mlflow==2.18 && pip show mlflow",
    "echo 'pip install mlflow'",             # quoted text, not a command
    "python -c \"import mlflow; mlflow.log_metric('x', 1)\"",
])
def test_a_command_that_installs_no_mlflow_uses_the_store(command: str) -> None:
    assert mlflow_server.own_mlflow(command, (), BASE) is None


@pytest.mark.parametrize("requirements, reason", [
    (["mlflow-skinny==2.18.0"], "its environment asks for mlflow-skinny==2.18.0"),
    (["numpy", "mlflow<3"], "its environment asks for mlflow<3"),
    (["mlflow @ https://example.org/mlflow-2.9-py3-none-any.whl"],
     "its environment asks for mlflow @ https://example.org/mlflow-2.9-py3-none-any.whl"),
    (["mlflow", "azureml-mlflow"], None),          # the base meets both: aml-run's MLflow
    (["mlflow>=3.0", "mlflow-skinny~=3.17"], None),
    (["numpy==1.26.*"], None),
])
def test_an_environment_asking_for_another_mlflow_brings_its_own(requirements: list[str], reason: str | None) -> None:
    assert mlflow_server.own_mlflow("python train.py", requirements, BASE) == reason


def test_a_requirements_file_the_command_installs_is_read_from_the_folder_it_runs_in(tmp_path: Path) -> None:
    # pytorch/iris: `pip install -r requirements.txt && python main.py`, the file naming
    # `mlflow` and `azureml-mlflow` (which brings an older mlflow-skinny).
    (tmp_path / "requirements.txt").write_text("# tracking\nnumpy\nmlflow\nazureml-mlflow  # the client\n"
                                               "-r requirements.txt\n")
    (tmp_path / "plain.txt").write_text("numpy\n")
    for command in ("pip install -r requirements.txt && python main.py", "pip install --requirement=requirements.txt",
                    "pip install -rrequirements.txt"):
        assert mlflow_server.own_mlflow(command, (), BASE, None, tmp_path) == "its command installs mlflow", command
        assert mlflow_server.pip_installs(command, tmp_path) == ["mlflow", "azureml-mlflow"]
    assert mlflow_server.own_mlflow("pip install -r plain.txt", (), BASE, None, tmp_path) is None
    assert mlflow_server.own_mlflow("pip install -r missing.txt", (), BASE, None, tmp_path) is None


def test_what_the_built_environment_holds_decides_over_what_it_asked_for() -> None:
    # azureml-mlflow resolved to an older mlflow-skinny in the build: that is what the job imports.
    assert mlflow_server.own_mlflow("python train.py", ["azureml-mlflow"], BASE, {"mlflow-skinny": "2.18.0"}) \
        == "its environment installs mlflow-skinny 2.18.0"
    assert mlflow_server.own_mlflow("python train.py", ["azureml-mlflow"], BASE, {}) is None


def test_the_clients_a_build_holds_are_read_from_its_dist_info_folders(tmp_path: Path) -> None:
    for folder in ("mlflow_skinny-2.18.0.dist-info", "mlflow_export-1.0.dist-info", "numpy-1.26.4.dist-info",
                   "mlflow"):
        (tmp_path / folder).mkdir()
    assert mlflow_server.clients_in(tmp_path) == {"mlflow-skinny": "2.18.0"}
    assert mlflow_server.clients_in(tmp_path / "absent") == {}


def test_a_shared_server_runs_while_a_process_uses_it_and_stops_once_unused(tmp_path: Path) -> None:
    """The workspace's server for a cluster's nodes outlives the supervisor that started it, for
    the next one, and stops once no process has held a lock on its users file for the idle time.
    The watcher is the real one; the "server" is a `sleep`, so no MLflow starts here."""
    import fcntl
    import subprocess

    from runner import process

    users = tmp_path / "server.users"
    user = open(users, "a")
    fcntl.flock(user, fcntl.LOCK_SH)  # a supervisor using the server
    watcher = subprocess.Popen(process.python_module("runner.mlflow_server", "--shared", str(users), "0.5",
                                                     "sleep", "300"), start_new_session=True)
    time.sleep(2.0)
    assert watcher.poll() is None  # used: it stays, however long
    user.close()  # the last user is gone (exited, or killed: the kernel drops the lock)
    deadline = time.monotonic() + 20
    while watcher.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert watcher.poll() is not None
    # The server (its group) went with it; a zombie may wait a moment for init to reap it.
    while process.group_alive(watcher.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process.group_alive(watcher.pid)
