"""The loopback MLflow server of the jobs that bring their own MLflow, when something happens to
it: killed while a job logs through it (started again on its address, or the job fails at once
naming it), its watcher killed (nothing of it stays), and another user of the machine knocking
(turned away: only the jobs it serves hold its token)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from amlrun import aml_run, command_lines, lab, write_job  # noqa: F401
from runner import jobs, status
from runner.mlflow_server import LoopbackServer
from runner.workspace import Workspace

OLD_MLFLOW = "mlflow-skinny==2.18.0"
STEPS = 30

# Logs one metric every half second, with the MLflow client of the job's own environment.
LOGGER = f"""\
import sys, time, mlflow
print("client", mlflow.__version__, flush=True)
with mlflow.start_run():
    for step in range({STEPS}):
        mlflow.log_metric("step", step, step=step)
        print("logged", step, flush=True)
        time.sleep(0.5)
    if len(sys.argv) > 1:
        time.sleep(float(sys.argv[1]))
"""


def _job(folder: Path, name: str, arguments: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conda.yml").write_text(f"dependencies:\n  - python=3.11\n  - pip:\n      - {OLD_MLFLOW}\n")
    return write_job(folder, name, f"""\
        command: python main.py {arguments}
        code: src
        environment:
          image: python:3.11-slim
          conda_file: conda.yml
        """, script=LOGGER)


def _submit(folder: Path, spec: Path, env: dict[str, str] | None = None) -> str:
    import json

    result = aml_run("job", "create", "--file", str(spec), "-o", "json", cwd=folder, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["name"]


def _logged(workspace: Workspace, name: str, step: int, timeout: float = 300) -> None:
    """Wait until the job's script says it logged ``step``."""
    log = workspace.run_dir(name) / "user_logs" / "std_log.txt"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and f"logged {step}\n" in log.read_text():
            return
        assert status.read(workspace.run_dir(name))["status"] not in status.TERMINAL, \
            (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text() + (log.read_text() if log.exists() else "")
        time.sleep(0.1)
    raise AssertionError(f"{name} never logged step {step}")


def _group(pgid: int) -> dict[str, int]:
    """The live processes of a server's group by their part: watcher, keeper, cli, uvicorn."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[2]) != pgid or stat[0] in ("Z", "X"):
            continue
        role = ("keeper" if b"--keeper" in argv else "uvicorn" if b"uvicorn" in argv
                else "watcher" if b"runner.mlflow_server" in argv else "cli" if b"mlflow\0server" in argv else "other")
        found[role] = int(entry)
    return found


def _watcher_of(workspace: Workspace) -> int:
    """The watcher of the (one) loopback server over this workspace's store."""
    needle = str(workspace.folder / "mlflow.db").encode()
    for pid, argv in command_lines():
        if needle in argv and b"runner.mlflow_server" in argv and b"--keeper" not in argv:
            return pid
    raise AssertionError("no loopback server over the workspace's store")


def _kill_the_server(watcher: int) -> None:
    """SIGKILL the server (`mlflow server` and uvicorn's worker), not its watcher."""
    group = _group(watcher)
    assert {"watcher", "cli", "uvicorn"} <= group.keys(), group
    for role in ("cli", "uvicorn"):
        os.kill(group[role], signal.SIGKILL)


def _system_log(workspace: Workspace, name: str) -> str:
    return (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text()


def test_a_killed_tracking_server_is_started_again_and_the_job_keeps_every_metric(lab: Path) -> None:
    workspace = Workspace.locate(lab / ".amllab")
    name = _submit(lab, _job(lab / "restarted", "job"))
    _logged(workspace, name, 2)
    _kill_the_server(_watcher_of(workspace))
    record = jobs.wait(workspace, name, timeout=300)
    log = _system_log(workspace, name)
    assert record["status"] == "Completed", log
    # The job's client retried what it logged while the server was away: nothing is missing.
    from mlflow import MlflowClient

    history = MlflowClient(workspace.tracking_uri).get_metric_history(record["mlflow"]["run_id"], "step")
    assert sorted(int(metric.step) for metric in history) == list(range(STEPS)), history
    # What happened is in the job's system log, as the watcher said it.
    assert "the server exited (killed by SIGKILL); starting it again on http://127.0.0.1:" in log, log
    assert "the server answers again on http://127.0.0.1:" in log, log


def test_a_tracking_server_that_is_not_started_again_fails_the_job_at_once_naming_it(lab: Path) -> None:
    workspace = Workspace.locate(lab / ".amllab")
    # No restart allowed: the watcher gives up at once. Without the lifeline, the job would
    # sleep its 600 s and then retry its client's calls for minutes.
    name = _submit(lab, _job(lab / "not-restarted", "job", "600"), env={"AMLLAB_MLFLOW_SERVER_RESTARTS": "0"})
    _logged(workspace, name, 2)
    _kill_the_server(_watcher_of(workspace))
    deadline = time.monotonic() + 30  # the bound asked of it: a liveness check, not a timing
    while time.monotonic() < deadline and status.read(workspace.run_dir(name))["status"] not in status.TERMINAL:
        time.sleep(0.2)
    record = jobs.wait(workspace, name, timeout=60)
    log = _system_log(workspace, name)
    assert record["status"] == "Failed", log
    assert record["error"]["code"] == "TrackingServerLost", record["error"]
    assert "the loopback MLflow tracking server http://127.0.0.1:" in record["error"]["message"]
    assert "is not restarted" in record["error"]["message"], record["error"]
    assert "is not restarted: 0 restart(s)" in log, log


@pytest.mark.parametrize("killed", [("watcher",), ("watcher", "cli")], ids=["watcher", "watcher-and-server"])
def test_nothing_of_a_server_outlives_its_watcher(tmp_path: Path, killed: tuple[str, ...]) -> None:
    server = LoopbackServer(f"sqlite:///{tmp_path / 'mlflow.db'}", tmp_path / "mlruns", tmp_path / "server.log")
    server.start(lambda _: None)
    assert server.process is not None
    group = _group(server.process.pid)
    assert {"watcher", "cli", "uvicorn"} <= group.keys(), group
    for role in killed:
        os.kill(group[role], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _group(server.process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group(server.process.pid), (killed, _group(server.process.pid))
    server.process.wait()


def _as_nobody_over_http(url: str, request: str) -> str:
    """The status line another user (nobody) gets for ``request`` (a raw HTTP/1.0 request line
    and headers), sent through bash's /dev/tcp: nothing of root's is needed to knock."""
    host, port = url.removeprefix("http://").split(":")
    script = (f'exec 3<>/dev/tcp/{host}/{port} && printf "%b" "$REQUEST" >&3 && head -n 1 <&3')
    result = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "bash", "-c", script],
                            env={"REQUEST": request, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                            timeout=60, cwd="/")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_another_user_can_neither_read_nor_write_the_store_through_the_server(tmp_path: Path) -> None:
    import json
    import urllib.request

    server = LoopbackServer(f"sqlite:///{tmp_path / 'mlflow.db'}", tmp_path / "mlruns", tmp_path / "server.log")
    endpoint = server.start(lambda _: None)
    try:
        host = endpoint.url.removeprefix("http://")
        listing = f"GET /api/2.0/mlflow/experiments/search?max_results=5 HTTP/1.0\\r\\nHost: {host}\\r\\n\\r\\n"
        body = '{"name": "intruder"}'
        creating = (f"POST /api/2.0/mlflow/experiments/create HTTP/1.0\\r\\nHost: {host}\\r\\n"
                    f"Content-Type: application/json\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n{body}")
        assert _as_nobody_over_http(endpoint.url, listing).split()[1] == "401"
        assert _as_nobody_over_http(endpoint.url, creating).split()[1] == "401"
        health = f"GET /health HTTP/1.0\\r\\nHost: {host}\\r\\n\\r\\n"
        assert _as_nobody_over_http(endpoint.url, health).split()[1] == "200"  # up, and nothing more
        # The jobs it serves hold the token, and nothing was created behind their back.
        asked = urllib.request.Request(f"{endpoint.url}/api/2.0/mlflow/experiments/search?max_results=50",
                                       headers={"Authorization": f"Bearer {endpoint.token}"})
        with urllib.request.urlopen(asked, timeout=30) as answer:
            names = [experiment["name"] for experiment in json.load(answer)["experiments"]]
        assert "intruder" not in names and "Default" in names
    finally:
        server.stop()


def test_run_historys_properties_call_sets_the_runs_tags_and_needs_the_token(tmp_path: Path) -> None:
    # What mldesigner's executor sends for a python-function component's primitive outputs:
    # PATCH <tracking host, its mlflow path turned into history/v1.0>/experimentids/E/runs/R.
    import json
    import urllib.error
    import urllib.request

    server = LoopbackServer(f"sqlite:///{tmp_path / 'mlflow.db'}", tmp_path / "mlruns", tmp_path / "server.log")
    endpoint = server.start(lambda _: None)
    token = {"Authorization": f"Bearer {endpoint.token}", "Content-Type": "application/json"}

    def call(method: str, path: str, document: dict | None, headers: dict) -> tuple[int, dict]:
        data = json.dumps(document).encode() if document is not None else None
        asked = urllib.request.Request(endpoint.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(asked, timeout=30) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    try:
        status, created = call("POST", "/api/2.0/mlflow/runs/create", {"experiment_id": "0"}, token)
        assert status == 200, created
        run_id = created["run"]["info"]["run_id"]
        properties = {"azureml.pipeline.control": json.dumps({"output": "/outputs/model"})}
        for path in (f"/experimentids/0/runs/{run_id}",
                     f"/history/v1.0/subscriptions/s/resourceGroups/g/workspaces/w/experimentids/0/runs/{run_id}"):
            assert call("PATCH", path, {"runId": run_id, "properties": properties}, {})[0] == 401
            status, said = call("PATCH", path, {"runId": run_id, "properties": properties}, token)
            assert (status, said) == (200, {"runId": run_id, "properties": properties})
        status, shown = call("GET", f"/api/2.0/mlflow/runs/get?run_id={run_id}", None, token)
        tags = {tag["key"]: tag["value"] for tag in shown["run"]["data"]["tags"]}
        assert tags["azureml.pipeline.control"] == properties["azureml.pipeline.control"]
        # A run the store does not have is MLflow's own answer, and a body that is not one is a 400.
        status, said = call("PATCH", "/experimentids/0/runs/0123456789abcdef", {"properties": {"a": "b"}}, token)
        assert status == 404 and said["error_code"] == "RESOURCE_DOES_NOT_EXIST", said
        assert call("PATCH", f"/experimentids/0/runs/{run_id}", {"properties": ["a"]}, token)[0] == 400
    finally:
        server.stop()
